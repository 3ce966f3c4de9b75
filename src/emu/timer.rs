//! The timer queue that delays replies: request threads push a reply with the real time it is
//! due, and one thread sends each reply when its time comes. Request threads never sleep, so
//! many requests can be in flight; the model's own timeline decides the due times, so late
//! timer wake-ups do not accumulate into the model.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::num::NonZeroU64;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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
    /// Items pushed before this one fire at once, whatever their due time.
    hurry_below: u64,
}

struct Inner<T> {
    state: Mutex<State<T>>,
    wake: Condvar,
    clock: Clock,
    /// Whether the timer thread runs in the real-time class.
    realtime: std::sync::atomic::AtomicBool,
}

/// A binary heap of pending items keyed by due time, served by one thread that hands each
/// item, with its due time, to the handler given at start.
pub struct TimerQueue<T> {
    inner: Arc<Inner<T>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// Queues items on a [`TimerQueue`]; the handler gets one to queue more from the timer thread.
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
        drop(st);
        if earliest {
            self.inner.wake.notify_one();
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
    /// Starts the timer thread. `clock` is the timeline due times are given on; `fire` is
    /// called on the timer thread with each item, its due time, and a pusher to queue more.
    pub fn start<F>(clock: Clock, fire: F) -> std::io::Result<Self>
    where
        F: FnMut(u64, T, &Pusher<T>) + Send + 'static,
    {
        let inner = Arc::new(Inner {
            state: Mutex::new(State {
                heap: BinaryHeap::with_capacity(1024),
                seq: 0,
                shutdown: false,
                hurry_below: 0,
            }),
            wake: Condvar::new(),
            clock,
            realtime: std::sync::atomic::AtomicBool::new(false),
        });
        let thread_inner = Arc::clone(&inner);
        let thread = std::thread::Builder::new()
            .name("emu-timer".into())
            .spawn(move || run(&thread_inner, fire))?;
        Ok(TimerQueue {
            inner,
            thread: Mutex::new(Some(thread)),
        })
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

    /// Whether the timer thread got the real-time class (it asks for it when it starts).
    pub fn realtime(&self) -> bool {
        self.inner
            .realtime
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Fires every item queued so far at once (with its own due time), as a device whose
    /// power went answers every request it still held.
    pub fn hurry(&self) {
        let mut st = lock(&self.inner.state);
        st.hurry_below = st.seq;
        drop(st);
        self.inner.wake.notify_one();
    }

    /// Items queued and not yet fired.
    pub fn pending(&self) -> usize {
        lock(&self.inner.state).heap.len()
    }

    /// Fires every pending item now and joins the thread. Returns false if the thread
    /// panicked. Items pushed afterwards are dropped.
    pub fn shutdown(&self) -> bool {
        lock(&self.inner.state).shutdown = true;
        self.inner.wake.notify_one();
        let thread = lock(&self.thread).take();
        match thread {
            Some(t) => t.join().is_ok(),
            None => true,
        }
    }
}

impl<T> Drop for TimerQueue<T> {
    fn drop(&mut self) {
        lock(&self.inner.state).shutdown = true;
        self.inner.wake.notify_one();
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The FIFO priority of the device server's request threads: above every ordinary thread.
const WORKER_PRIORITY: i32 = 1;

/// The FIFO priority of the timer thread: above the request threads, so a reply falling due
/// takes a CPU from a request thread at once instead of waiting for it to block (in the same
/// FIFO priority a running thread keeps its CPU until it does).
const TIMER_PRIORITY: i32 = 2;
const _: () = assert!(TIMER_PRIORITY > WORKER_PRIORITY);

/// Puts the calling thread in the real-time FIFO class at `priority`, when permitted (root,
/// or CAP_SYS_NICE): a reply then goes out when it is due instead of waiting for a CPU behind
/// the host's ordinary threads. Returns whether it did.
fn go_real_time(priority: i32) -> bool {
    if std::env::var_os("IOTRIAL_EMU_NO_REALTIME").is_some() {
        return false;
    }
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: sched_setscheduler on the calling thread (pid 0) with a valid parameter block.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

/// Runs `f` with the calling thread in the real-time FIFO class when permitted, so the threads
/// `f` starts inherit it (the device server's FUSE workers: a request then reaches the model,
/// and a model lock one of them holds is released, without waiting behind the host's ordinary
/// threads); the calling thread's own class is restored after.
pub(crate) fn spawning_real_time<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: sched_getscheduler / sched_getparam on the calling thread, into a valid block.
    let (policy, param) = unsafe {
        let mut p = std::mem::zeroed::<libc::sched_param>();
        (libc::sched_getscheduler(0), {
            libc::sched_getparam(0, &mut p);
            p
        })
    };
    let raised = go_real_time(WORKER_PRIORITY);
    let r = f();
    if raised && policy >= 0 {
        // SAFETY: restores the class and parameters read above on the calling thread.
        unsafe { libc::sched_setscheduler(0, policy, &param) };
    }
    r
}

fn run<T, F: FnMut(u64, T, &Pusher<T>)>(inner: &Arc<Inner<T>>, mut fire: F) {
    let pusher = Pusher {
        inner: Arc::clone(inner),
    };
    // Default timer slack (50 us) would delay every wake-up; ask for 1 ns.
    let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1));
    inner.realtime.store(
        go_real_time(TIMER_PRIORITY),
        std::sync::atomic::Ordering::Relaxed,
    );
    let mut early = Early::new();
    let mut st = lock(&inner.state);
    loop {
        let now = inner.clock.now_ns();
        if st.hurry_below > 0 {
            let below = std::mem::take(&mut st.hurry_below);
            let (now_due, later): (Vec<Entry<T>>, Vec<Entry<T>>) = std::mem::take(&mut st.heap)
                .into_iter()
                .partition(|e| e.seq < below);
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
            Some(e) if e.due_ns <= now || st.shutdown => {
                let Some(e) = st.heap.pop() else { continue };
                drop(st);
                fire(e.due_ns, e.item, &pusher);
                st = lock(&inner.state);
            }
            Some(e) if e.due_ns - now <= early.ns() => {
                drop(st);
                std::hint::spin_loop();
                st = lock(&inner.state);
            }
            Some(e) => {
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
            None if st.shutdown => return,
            None => st = inner.wake.wait(st).unwrap_or_else(|e| e.into_inner()),
        }
    }
}

#[cfg(test)]
mod tests {
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

    /// The calling thread's scheduling class and priority.
    fn class() -> (i32, i32) {
        // SAFETY: sched_getscheduler / sched_getparam on the calling thread, into a valid block.
        unsafe {
            let mut p = std::mem::zeroed::<libc::sched_param>();
            libc::sched_getparam(0, &mut p);
            (libc::sched_getscheduler(0), p.sched_priority)
        }
    }

    #[test]
    fn the_timer_ranks_above_the_request_threads_when_real_time_is_allowed() {
        let clock = Clock::new();
        let (tx, rx) = mpsc::channel();
        let q = TimerQueue::start(clock, move |_, (), _: &Pusher<()>| {
            let _ = tx.send(class());
        })
        .unwrap();
        q.push(clock.now_ns(), ());
        let timer = rx.recv().unwrap();
        let worker = spawning_real_time(|| std::thread::spawn(class).join().unwrap());
        if q.realtime() {
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
        q.hurry();
        q.push(clock.now_ns() + hour, 3);
        let got: Vec<u32> = (0..2).map(|_| rx.recv().unwrap().0).collect();
        assert_eq!(got, [2, 1], "in due order");
        assert_eq!(q.pending(), 1);
        assert!(q.shutdown());
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
