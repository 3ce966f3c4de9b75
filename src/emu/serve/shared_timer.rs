//! One reply timer for every device a server process serves. Each device keeps its own clock,
//! counters and model; its items (replies, model ticks) go on the process's one [`TimerQueue`],
//! tagged with the device they belong to and handed back to it when due, so six drives
//! streaming together wake one lead thread and one standby, not six of each pinned to the same
//! two CPUs and taking turns on them.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use super::rt::Placement;
use super::timer::{Clock, Pusher, TimerQueue};

/// What a device does with one of its items when it fires: the item, its due time on the
/// device's clock, and where to queue more.
pub type Fire<I> = Box<dyn Fn(u64, I, &DevicePusher<I>) + Send + Sync>;

/// What the shared queue holds: one device's item, due on the queue's clock.
pub struct Routed<I> {
    to: Arc<DeviceTimer<I>>,
    item: I,
}

/// One device's side of the shared timer: what its items do when they fire, and how its
/// clock stands to the queue's.
pub struct DeviceTimer<I> {
    fire: Fire<I>,
    /// The device's clock started this long after the queue's (ns): a due time on the
    /// device's clock plus this is the same instant on the queue's.
    offset_ns: u64,
    /// The queue's standby counts (items fired, wake-ups) when the device joined.
    standby_at_join: (u64, u64),
}

/// Queues one device's items on the shared timer, due times on the device's clock.
pub struct DevicePusher<I> {
    pusher: Pusher<Routed<I>>,
    to: Arc<DeviceTimer<I>>,
}

impl<I> Clone for DevicePusher<I> {
    fn clone(&self) -> Self {
        DevicePusher {
            pusher: self.pusher.clone(),
            to: Arc::clone(&self.to),
        }
    }
}

impl<I> DevicePusher<I> {
    /// Queues `item` to fire at `due_ns` on the device's clock.
    pub fn push(&self, due_ns: u64, item: I) {
        let routed = Routed {
            to: Arc::clone(&self.to),
            item,
        };
        self.pusher
            .push(due_ns.saturating_add(self.to.offset_ns), routed)
    }
}

/// The timer a server process's devices share (a device served alone gets one of its own).
pub struct SharedTimer<I> {
    clock: Clock,
    queue: TimerQueue<Routed<I>>,
    /// Devices joined and not yet left.
    devices: AtomicUsize,
}

impl<I: Send + 'static> SharedTimer<I> {
    /// Starts the timer's threads, placed for this process ([`Placement::for_this_process`]).
    pub fn start() -> std::io::Result<Arc<SharedTimer<I>>> {
        Self::start_placed(Placement::for_this_process())
    }

    /// Starts the timer's threads with the given placement.
    pub fn start_placed(placement: Placement) -> std::io::Result<Arc<SharedTimer<I>>> {
        Self::start_timed(Clock::new(), placement)
    }

    fn start_timed(clock: Clock, placement: Placement) -> std::io::Result<Arc<SharedTimer<I>>> {
        let fire = |shared_due_ns: u64, r: Routed<I>, pusher: &Pusher<Routed<I>>| {
            let due_ns = shared_due_ns.saturating_sub(r.to.offset_ns);
            let device = DevicePusher {
                pusher: pusher.clone(),
                to: r.to,
            };
            (device.to.fire)(due_ns, r.item, &device)
        };
        let queue = TimerQueue::start_placed(clock, fire, placement)?;
        Ok(Arc::new(SharedTimer {
            clock,
            queue,
            devices: AtomicUsize::new(0),
        }))
    }

    /// Joins a device whose clock is `clock` (started no earlier than this timer), its items
    /// handed to `fire` when due: returns where it queues them.
    pub fn join(&self, clock: &Clock, fire: Fire<I>) -> DevicePusher<I> {
        self.devices.fetch_add(1, Relaxed);
        let to = Arc::new(DeviceTimer {
            offset_ns: clock.started_after(&self.clock),
            standby_at_join: self.queue.standby(),
            fire,
        });
        DevicePusher {
            pusher: self.queue.pusher(),
            to,
        }
    }

    /// Fires every item of the device `of` queued so far at once, as a device whose power
    /// went answers every request it still held; other devices' items stay queued.
    pub fn hurry(&self, of: &DevicePusher<I>) {
        let to = Arc::clone(&of.to);
        self.queue
            .hurry_where(move |r: &Routed<I>| Arc::ptr_eq(&r.to, &to));
    }

    /// The device `of` stops: what it still has queued fires at once. Returns whether the
    /// timer's threads are still running (none panicked).
    pub fn leave(&self, of: &DevicePusher<I>) -> bool {
        self.hurry(of);
        self.devices.fetch_sub(1, Relaxed);
        self.queue.running()
    }

    /// What the standby did while the device `of` was served (items fired, wake-ups), for
    /// every device on the timer then: a process's timer outlives the devices of one trial.
    pub fn standby_of(&self, of: &DevicePusher<I>) -> (u64, u64) {
        let ((fired, wakes), (f0, w0)) = (self.queue.standby(), of.to.standby_at_join);
        (fired.saturating_sub(f0), wakes.saturating_sub(w0))
    }

    /// Devices served on this timer now.
    pub fn devices(&self) -> usize {
        self.devices.load(Relaxed)
    }

    /// The queue itself (its threads' class, placement and standby counts).
    pub fn queue(&self) -> &TimerQueue<Routed<I>> {
        &self.queue
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    #[test]
    fn each_device_gets_its_own_items_on_its_own_clock_and_is_hurried_alone() {
        // The queue's clock started a second before the devices' clocks: a due time left on
        // a device's clock would fire a second early.
        let second_ago = Instant::now().checked_sub(Duration::from_secs(1)).unwrap();
        let timer =
            SharedTimer::<u32>::start_timed(Clock::started(second_ago), Placement::ALONE).unwrap();
        let (tx, rx) = mpsc::channel();
        let device = |name: &'static str| {
            let clock = Clock::new();
            let tx = tx.clone();
            let fire = move |due, item, _: &DevicePusher<u32>| {
                let _ = tx.send((name, item, due, clock.now_ns()));
            };
            (clock, timer.join(&clock, Box::new(fire)))
        };
        let ((ca, a), (cb, b)) = (device("a"), device("b"));
        assert_eq!(timer.devices(), 2);
        let hour = 3_600_000_000_000;
        let due = ca.now_ns() + 2_000_000;
        a.push(due, 1);
        b.push(cb.now_ns() + hour, 2);
        a.push(ca.now_ns() + hour, 3);
        let (name, item, fired_due, at) = rx.recv().unwrap();
        assert_eq!(
            (name, item, fired_due),
            ("a", 1, due),
            "due on a's own clock"
        );
        assert!(at >= due, "fired {} ns early", due - at);
        timer.hurry(&b);
        assert_eq!(rx.recv().unwrap().1, 2, "b's item fires at once");
        assert_eq!(timer.queue().pending(), 1, "a's later item waits");
        assert!(timer.leave(&a));
        assert_eq!(rx.recv().unwrap().1, 3, "a leaving fires what it left");
        assert_eq!(timer.devices(), 1);
    }

    #[test]
    fn a_device_counts_the_standby_from_when_it_joined() {
        let both = Placement {
            lead_cpu: None,
            standby: Some(None),
        };
        let timer = SharedTimer::<u32>::start_placed(both).unwrap();
        let clock = Clock::new();
        let join = || timer.join(&clock, Box::new(|_, _, _: &DevicePusher<u32>| {}));
        let first = join();
        // A standby waiting on an empty queue wakes at the next push (one pushed before it
        // waits does not wake it: push again until one has).
        while timer.queue().standby().1 == 0 {
            first.push(clock.now_ns(), 1);
            std::thread::yield_now();
        }
        let later = join();
        assert!(timer.standby_of(&first).1 >= 1);
        assert_eq!(
            timer.standby_of(&later),
            (0, 0),
            "an earlier device's wake-ups"
        );
    }
}
