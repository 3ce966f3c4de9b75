//! The timer queue that delays replies: request threads push a reply with the real time it is
//! due, and a lead thread sends each reply when its time comes, with a standby on another CPU
//! for when the host holds the lead's. Request threads never sleep, so
//! many requests can be in flight; the model's own timeline decides the due times, so late
//! timer wake-ups do not accumulate into the model.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::rt::{go_real_time, pin_to, Placement, TIMER_PRIORITY};

/// A monotonic clock in nanoseconds since the server started.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    pub fn new() -> Self {
        Clock {
            start: Instant::now(),
        }
    }

    /// A clock that started at `start`.
    #[cfg(test)]
    pub(crate) fn started(start: Instant) -> Self {
        Clock { start }
    }

    /// How long after `earlier` this clock was created, ns (0 if it was not after).
    pub fn started_after(&self, earlier: &Clock) -> u64 {
        let d = self.start.saturating_duration_since(earlier.start);
        u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
    }

    /// Nanoseconds since the clock was created.
    pub fn now_ns(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

struct Entry<T> {
    due_ns: u64,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.due_ns, self.seq) == (other.due_ns, other.seq)
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Entry<T> {
    /// Reversed, so the max-heap pops the earliest due time (ties in push order).
    fn cmp(&self, other: &Self) -> Ordering {
        (other.due_ns, other.seq).cmp(&(self.due_ns, self.seq))
    }
}

struct State<T> {
    heap: BinaryHeap<Entry<T>>,
    seq: u64,
    shutdown: bool,
    /// Hurries not yet done: the items pushed before each one's sequence number that its
    /// filter picks fire at once, whatever their due time.
    hurries: Vec<Hurry<T>>,
    /// When the standby's timed wait ends (u64::MAX: it waits for a push; 0: it is not
    /// waiting and will look at the heap before it does), so a push wakes it only when it
    /// would otherwise look too late.
    standby_until: u64,
}

/// Items pushed before `below` for which `picks` holds are to fire at once.
struct Hurry<T> {
    below: u64,
    picks: Box<dyn Fn(&T) -> bool + Send>,
}

struct Inner<T> {
    state: Mutex<State<T>>,
    /// Wakes the lead thread.
    wake: Condvar,
    /// Wakes the standby thread.
    wake_standby: Condvar,
    clock: Clock,
    /// Whether the lead thread runs in the real-time class.
    realtime: AtomicBool,
    /// Items the standby fired (the lead had not by their due time plus [`STANDBY_AFTER_NS`]).
    standby_fired: AtomicU64,
    /// Times the standby woke.
    standby_wakes: AtomicU64,
}

/// A binary heap of pending items keyed by due time, served by a lead thread that hands each
/// item, with its due time, to the handler given at start, and (with two CPUs or more) a
/// standby thread pinned to another CPU that fires what the lead leaves: a lead whose CPU the
/// host holds (a kernel worker this kernel will not preempt, a stolen virtual CPU) then delays
/// a reply by [`STANDBY_AFTER_NS`], not by as long as the host holds it.
pub struct TimerQueue<T> {
    inner: Arc<Inner<T>>,
    placement: Placement,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

/// The standby fires an item this long after its due time if the lead has not: past the
/// lead's usual wake-up lateness (tens of µs), well under the 5 ms a reply may be late.
pub const STANDBY_AFTER_NS: u64 = 1_000_000;

/// Queues items on a [`TimerQueue`]; the handler gets one to queue more from a timer thread.
pub struct Pusher<T> {
    inner: Arc<Inner<T>>,
}

impl<T> Clone for Pusher<T> {
    fn clone(&self) -> Self {
        Pusher {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> Pusher<T> {
    /// Queues `item` to fire at `due_ns` on the clock's timeline.
    pub fn push(&self, due_ns: u64, item: T) {
        let mut st = lock(&self.inner.state);
        let seq = st.seq;
        st.seq += 1;
        let earliest = st.heap.peek().is_none_or(|e| due_ns < e.due_ns);
        st.heap.push(Entry { due_ns, seq, item });
        // The standby would wake more than one STANDBY_AFTER_NS later than this item needs.
        let standby = st.standby_until > due_ns.saturating_add(2 * STANDBY_AFTER_NS);
        drop(st);
        if earliest {
            self.inner.wake.notify_one();
        }
        if standby {
            self.inner.wake_standby.notify_one();
        }
    }
}

/// The timer thread wakes this much before a reply is due, at least and at most, and spins
/// the rest of the way: a sleeping thread wakes late by the host's wake-up latency (tens of µs
/// in a VM, more under load), which the thread learns as it goes.
const EARLY_MIN_NS: u64 = 10_000;
const EARLY_MAX_NS: u64 = 250_000;

/// How early to wake: twice the smoothed wake-up overshoot plus a margin, within bounds.
#[derive(Debug, Clone, Copy)]
struct Early {
    /// Smoothed overshoot of timed waits, ns (exponential, weight 1/8).
    overshoot_ns: u64,
}

impl Early {
    fn new() -> Self {
        Early {
            overshoot_ns: 20_000,
        }
    }

    fn ns(&self) -> u64 {
        (2 * self.overshoot_ns + EARLY_MIN_NS).clamp(EARLY_MIN_NS, EARLY_MAX_NS)
    }

    /// A timed wait meant to end at `meant` ended at `woke`.
    fn observe(&mut self, meant: u64, woke: u64) {
        let o = woke.saturating_sub(meant).min(10 * EARLY_MAX_NS);
        self.overshoot_ns = (self.overshoot_ns * 7 + o) / 8;
    }
}

impl<T: Send + 'static> TimerQueue<T> {
    /// Starts the timer's threads, placed for this process ([`Placement::for_this_process`]).
    /// `clock` is the timeline due times are given on; `fire` is called on a timer thread with
    /// each item, its due time, and a pusher to queue more.
    pub fn start<F>(clock: Clock, fire: F) -> std::io::Result<Self>
    where
        F: Fn(u64, T, &Pusher<T>) + Send + Sync + 'static,
    {
        Self::start_placed(clock, fire, Placement::for_this_process())
    }

    /// Starts the timer's threads with the given placement.
    pub fn start_placed<F>(clock: Clock, fire: F, placement: Placement) -> std::io::Result<Self>
    where
        F: Fn(u64, T, &Pusher<T>) + Send + Sync + 'static,
    {
        let inner = Arc::new(Inner {
            state: Mutex::new(State {
                heap: BinaryHeap::with_capacity(1024),
                seq: 0,
                shutdown: false,
                hurries: Vec::new(),
                standby_until: 0,
            }),
            wake: Condvar::new(),
            wake_standby: Condvar::new(),
            clock,
            realtime: AtomicBool::new(false),
            standby_fired: AtomicU64::new(0),
            standby_wakes: AtomicU64::new(0),
        });
        let fire = Arc::new(fire);
        let queue = TimerQueue {
            inner: Arc::clone(&inner),
            placement,
            threads: Mutex::new(Vec::with_capacity(2)),
        };
        let roles = std::iter::once(Role::Lead(placement.lead_cpu))
            .chain(placement.standby.map(Role::Standby));
        // Each thread says when it has its CPU and class: the queue is returned only then, so
        // `realtime()` is settled and no item fires on a thread still in the ordinary class.
        let (placed, settled) = std::sync::mpsc::channel::<()>();
        let mut started = 0;
        for role in roles {
            let (inner, fire, placed) = (Arc::clone(&inner), Arc::clone(&fire), placed.clone());
            let name = match role {
                Role::Lead(_) => "emu-timer",
                Role::Standby(_) => "emu-standby",
            };
            let thread = std::thread::Builder::new()
                .name(name.into())
                .spawn(move || run(&inner, &*fire, role, placed))?;
            lock(&queue.threads).push(thread);
            started += 1;
        }
        drop(placed);
        for _ in 0..started {
            // An error means a thread ended before it said so; `running()` reports that.
            if settled.recv().is_err() {
                break;
            }
        }
        Ok(queue)
    }

    /// Queues `item` to fire at `due_ns` on the clock's timeline.
    pub fn push(&self, due_ns: u64, item: T) {
        self.pusher().push(due_ns, item)
    }

    /// A handle that queues items on this timer.
    pub fn pusher(&self) -> Pusher<T> {
        Pusher {
            inner: Arc::clone(&self.inner),
        }
    }

    /// Whether the lead thread got the real-time class (it asks for it when it starts).
    pub fn realtime(&self) -> bool {
        self.inner.realtime.load(Relaxed)
    }

    /// Where the timer's threads run.
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// Items the standby fired, and times it woke.
    pub fn standby(&self) -> (u64, u64) {
        (
            self.inner.standby_fired.load(Relaxed),
            self.inner.standby_wakes.load(Relaxed),
        )
    }

    /// Fires every item queued so far for which `picks` holds at once (with its own due
    /// time), as a device whose power went answers every request it still held; the others,
    /// and items queued later, fire when due. A timer shared by several devices hurries one
    /// device's replies this way.
    pub fn hurry_where(&self, picks: impl Fn(&T) -> bool + Send + 'static) {
        let mut st = lock(&self.inner.state);
        let below = st.seq;
        st.hurries.push(Hurry {
            below,
            picks: Box::new(picks),
        });
        drop(st);
        self.wake_all();
    }

    /// Whether every timer thread is still running (none has panicked; before shutdown).
    pub fn running(&self) -> bool {
        lock(&self.threads).iter().all(|t| !t.is_finished())
    }

    /// When the standby's timed wait ends (see [`State::standby_until`]).
    #[cfg(test)]
    fn standby_until(&self) -> u64 {
        lock(&self.inner.state).standby_until
    }

    /// Items queued and not yet fired.
    pub fn pending(&self) -> usize {
        lock(&self.inner.state).heap.len()
    }

    /// Fires every pending item now and joins the threads. Returns false if one panicked.
    /// Items pushed afterwards are dropped.
    pub fn shutdown(&self) -> bool {
        lock(&self.inner.state).shutdown = true;
        self.wake_all();
        let threads = std::mem::take(&mut *lock(&self.threads));
        // Every thread is joined, whatever the one before it did.
        let joined: Vec<bool> = threads.into_iter().map(|t| t.join().is_ok()).collect();
        joined.into_iter().all(|ok| ok)
    }

    fn wake_all(&self) {
        self.inner.wake.notify_one();
        self.inner.wake_standby.notify_one();
    }
}

impl<T> Drop for TimerQueue<T> {
    fn drop(&mut self) {
        lock(&self.inner.state).shutdown = true;
        self.inner.wake.notify_one();
        self.inner.wake_standby.notify_one();
        for t in std::mem::take(&mut *lock(&self.threads)) {
            let _ = t.join();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a timer thread does, with the CPU it is pinned to.
#[derive(Debug, Clone, Copy)]
enum Role {
    /// Fires each item when due, waking early and spinning the rest of the way.
    Lead(Option<usize>),
    /// Fires what is still queued [`STANDBY_AFTER_NS`] after its due time; leaves what is
    /// pending at shutdown to the lead.
    Standby(Option<usize>),
}

/// A timer thread: takes its CPU and class, says so on `placed`, then fires items until the
/// queue shuts down.
fn run<T, F: Fn(u64, T, &Pusher<T>)>(
    inner: &Arc<Inner<T>>,
    fire: &F,
    role: Role,
    placed: std::sync::mpsc::Sender<()>,
) {
    let pusher = Pusher {
        inner: Arc::clone(inner),
    };
    // Default timer slack (50 us) would delay every wake-up; ask for 1 ns.
    let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1));
    let (cpu, lead) = match role {
        Role::Lead(cpu) => (cpu, true),
        Role::Standby(cpu) => (cpu, false),
    };
    if let Some(cpu) = cpu {
        pin_to(cpu);
    }
    let realtime = go_real_time(TIMER_PRIORITY);
    if lead {
        inner.realtime.store(realtime, Relaxed);
    }
    let _ = placed.send(());
    drop(placed);
    let after = if lead { 0 } else { STANDBY_AFTER_NS };
    let mut early = Early::new();
    let mut st = lock(&inner.state);
    loop {
        let now = inner.clock.now_ns();
        if !st.hurries.is_empty() {
            let hurries = std::mem::take(&mut st.hurries);
            let (now_due, later): (Vec<Entry<T>>, Vec<Entry<T>>) =
                std::mem::take(&mut st.heap).into_iter().partition(|e| {
                    hurries
                        .iter()
                        .any(|h| e.seq < h.below && (h.picks)(&e.item))
                });
            st.heap = later.into();
            drop(st);
            let mut now_due = now_due;
            now_due.sort_by_key(|e| (e.due_ns, e.seq));
            for e in now_due {
                fire(e.due_ns, e.item, &pusher);
            }
            st = lock(&inner.state);
            continue;
        }
        match st.heap.peek() {
            None | Some(_) if st.shutdown && !lead => return,
            Some(e) if e.due_ns.saturating_add(after) <= now || st.shutdown => {
                let Some(e) = st.heap.pop() else { continue };
                drop(st);
                if !lead {
                    inner.standby_fired.fetch_add(1, Relaxed);
                }
                fire(e.due_ns, e.item, &pusher);
                st = lock(&inner.state);
            }
            Some(e) if lead && e.due_ns - now <= early.ns() => {
                drop(st);
                // In the real-time class a spinning thread keeps its CPU from every thread of
                // its priority until it sleeps: the timers of the other devices a server
                // serves, pinned to the same CPU, would wait out the whole spin. Yielding
                // hands them the CPU and returns at once when none is waiting.
                if realtime {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
                st = lock(&inner.state);
            }
            Some(e) if lead => {
                let meant = e.due_ns - early.ns();
                let (guard, r) = inner
                    .wake
                    .wait_timeout(st, Duration::from_nanos(meant - now))
                    .unwrap_or_else(|e| e.into_inner());
                st = guard;
                if r.timed_out() {
                    early.observe(meant, inner.clock.now_ns());
                }
            }
            Some(e) => {
                let until = e.due_ns.saturating_add(after);
                st.standby_until = until;
                st = inner
                    .wake_standby
                    .wait_timeout(st, Duration::from_nanos(until - now))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                st.standby_until = 0;
                inner.standby_wakes.fetch_add(1, Relaxed);
            }
            None if st.shutdown => return,
            None if lead => st = inner.wake.wait(st).unwrap_or_else(|e| e.into_inner()),
            None => {
                st.standby_until = u64::MAX;
                st = inner
                    .wake_standby
                    .wait(st)
                    .unwrap_or_else(|e| e.into_inner());
                st.standby_until = 0;
                inner.standby_wakes.fetch_add(1, Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::rt::{class, spawning_real_time, WORKER_PRIORITY};
    use super::*;
    use std::sync::mpsc;

    fn queue(clock: Clock) -> (TimerQueue<u32>, mpsc::Receiver<(u32, u64)>) {
        let (tx, rx) = mpsc::channel();
        let q = TimerQueue::start(clock, move |_due, id, _: &Pusher<u32>| {
            let _ = tx.send((id, clock.now_ns()));
        })
        .unwrap();
        (q, rx)
    }

    #[test]
    fn the_timer_ranks_above_the_request_threads_when_real_time_is_allowed() {
        let clock = Clock::new();
        let (tx, rx) = mpsc::channel();
        let q = TimerQueue::start(clock, move |_, (), _: &Pusher<()>| {
            let _ = tx.send(class());
        })
        .unwrap();
        // Settled when `start` returns, before the lead thread has fired anything.
        let realtime = q.realtime();
        q.push(clock.now_ns(), ());
        let timer = rx.recv().unwrap();
        let worker = spawning_real_time(|| std::thread::spawn(class).join().unwrap());
        assert_eq!(q.realtime(), realtime);
        if realtime {
            assert_eq!(timer, (libc::SCHED_FIFO, TIMER_PRIORITY));
            assert_eq!(worker, (libc::SCHED_FIFO, WORKER_PRIORITY));
        } else {
            // Not permitted (no root, no CAP_SYS_NICE) or turned off: ordinary threads.
            assert_ne!(timer.0, libc::SCHED_FIFO);
            assert_ne!(worker.0, libc::SCHED_FIFO);
        }
        // The calling thread keeps its own class.
        assert_ne!(class().0, libc::SCHED_FIFO);
        assert!(q.shutdown());
    }

    /// One item's handler, held until the test lets it go, does not hold the items after it:
    /// the other thread fires them (the standby [`STANDBY_AFTER_NS`] after their due time).
    #[test]
    fn a_held_timer_thread_does_not_hold_the_next_reply() {
        let clock = Clock::new();
        let (tx, rx) = mpsc::channel();
        let (release, held) = mpsc::channel::<()>();
        let held = Mutex::new(held);
        let fire = move |_due, id: u32, _: &Pusher<u32>| {
            let name = std::thread::current().name().map(str::to_owned);
            let _ = tx.send((id, name, class(), clock.now_ns()));
            if id == 1 {
                let _ = lock(&held).recv();
            }
        };
        let both = Placement {
            lead_cpu: None,
            standby: Some(None),
        };
        let q = TimerQueue::start_placed(clock, fire, both).unwrap();
        // Bound after the queue so a failing test drops it first, releasing the held handler.
        let release = release;
        // The standby first waits for an item an hour away; a push due now must wake it.
        let far = clock.now_ns() + 3_600_000_000_000;
        q.push(far, 9);
        while q.standby_until() != far + STANDBY_AFTER_NS {
            std::thread::yield_now();
        }
        q.push(clock.now_ns(), 1);
        let (id, a_thread, a_class, _) = rx.recv().unwrap();
        assert_eq!(id, 1);
        let b_due = clock.now_ns() + 2_000_000;
        q.push(b_due, 2);
        // A guard against a hang, not a duration the test checks.
        let (id, b_thread, b_class, b_at) = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("item 2 fired while item 1 is held");
        assert_eq!(id, 2);
        assert_ne!(a_thread, b_thread);
        assert!(b_at >= b_due);
        if b_thread.as_deref() == Some("emu-standby") {
            assert!(
                b_at >= b_due + STANDBY_AFTER_NS,
                "the standby left it to the lead"
            );
        }
        assert_eq!(q.standby().0, 1, "one of the two items went to the standby");
        assert!(q.standby().1 >= 1);
        if q.realtime() {
            assert_eq!(a_class, (libc::SCHED_FIFO, TIMER_PRIORITY));
            assert_eq!(b_class, a_class);
        }
        release.send(()).unwrap();
        assert!(q.shutdown());
        assert_eq!(
            rx.recv().unwrap().0,
            9,
            "the lead fires what is pending at shutdown"
        );
    }

    #[test]
    fn with_a_lead_and_a_standby_every_item_fires_once_and_never_early() {
        let clock = Clock::new();
        let (tx, rx) = mpsc::channel();
        let fire = move |due, id: u32, _: &Pusher<u32>| {
            let _ = tx.send((id, due, clock.now_ns()));
        };
        let both = Placement {
            lead_cpu: None,
            standby: Some(None),
        };
        let q = TimerQueue::start_placed(clock, fire, both).unwrap();
        let base = clock.now_ns();
        let n = 3_000u32;
        for id in 0..n {
            // Spread over 30 ms, out of order, many sharing a due time.
            let due = base + u64::from(id.wrapping_mul(7_919) % 300) * 100_000;
            q.push(due, id);
        }
        let mut seen = vec![0u32; n as usize];
        for _ in 0..n {
            let (id, due, at) = rx.recv().unwrap();
            assert!(at >= due, "item {id} fired early");
            seen[id as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c == 1));
        assert!(q.shutdown());
        assert!(rx.try_recv().is_err(), "nothing fired twice");
    }

    #[test]
    fn fires_in_due_order_not_push_order() {
        let clock = Clock::new();
        let (q, rx) = queue(clock);
        let base = clock.now_ns();
        for (id, delay_ms) in [(1, 30u64), (2, 10), (3, 20), (4, 10)] {
            q.push(base + delay_ms * 1_000_000, id);
        }
        let got: Vec<(u32, u64)> = (0..4).map(|_| rx.recv().unwrap()).collect();
        let ids: Vec<u32> = got.iter().map(|g| g.0).collect();
        assert_eq!(ids, vec![2, 4, 3, 1]);
        for (id, at) in got {
            let due = base + [0, 30, 10, 20, 10][id as usize] * 1_000_000;
            assert!(at >= due, "item {id} fired early");
            assert!(
                at < due + 20_000_000,
                "item {id} fired {} ns late",
                at - due
            );
        }
        assert!(q.shutdown());
    }

    #[test]
    fn wakes_earlier_when_wake_ups_come_late() {
        let mut e = Early::new();
        let start = e.ns();
        for i in 0..64 {
            e.observe(i * 1_000_000, i * 1_000_000 + 100_000);
        }
        assert!(e.ns() > start && e.ns() <= EARLY_MAX_NS, "{}", e.ns());
        for i in 0..64 {
            e.observe(i * 1_000_000, i * 1_000_000);
        }
        assert!(e.ns() < EARLY_MIN_NS + 1_000, "{}", e.ns());
    }

    #[test]
    fn a_handler_queues_follow_ups() {
        let clock = Clock::new();
        let (tx, rx) = mpsc::channel();
        let q = TimerQueue::start(clock, move |due, n: u32, more: &Pusher<u32>| {
            let _ = tx.send(n);
            if n < 3 {
                more.push(due + 1_000, n + 1);
            }
        })
        .unwrap();
        q.push(clock.now_ns(), 0);
        let got: Vec<u32> = (0..4).map(|_| rx.recv().unwrap()).collect();
        assert_eq!(got, [0, 1, 2, 3]);
    }

    #[test]
    fn hurry_fires_what_is_queued_at_once_and_later_items_when_due() {
        let clock = Clock::new();
        let (q, rx) = queue(clock);
        let hour = 3_600_000_000_000;
        q.push(clock.now_ns() + hour, 1);
        q.push(clock.now_ns() + hour / 2, 2);
        q.hurry_where(|_| true);
        q.push(clock.now_ns() + hour, 3);
        let got: Vec<u32> = (0..2).map(|_| rx.recv().unwrap().0).collect();
        assert_eq!(got, [2, 1], "in due order");
        assert_eq!(q.pending(), 1);
        assert!(q.shutdown());
    }

    #[test]
    fn hurry_where_fires_only_the_items_it_picks() {
        let clock = Clock::new();
        let (q, rx) = queue(clock);
        let hour = 3_600_000_000_000;
        for id in 1..=4 {
            q.push(clock.now_ns() + hour, id);
        }
        q.hurry_where(|id| id % 2 == 0);
        q.hurry_where(|&id| id == 3);
        let mut got: Vec<u32> = (0..3).map(|_| rx.recv().unwrap().0).collect();
        got.sort_unstable();
        assert_eq!(got, [2, 3, 4]);
        assert_eq!(q.pending(), 1, "item 1 waits for its time");
        assert!(q.running());
        assert!(q.shutdown());
        assert_eq!(rx.recv().unwrap().0, 1);
    }

    #[test]
    fn shutdown_fires_pending_items() {
        let clock = Clock::new();
        let (q, rx) = queue(clock);
        q.push(clock.now_ns() + 3_600_000_000_000, 7);
        assert_eq!(q.pending(), 1);
        assert!(q.shutdown());
        assert_eq!(rx.try_recv().unwrap().0, 7);
    }
}
