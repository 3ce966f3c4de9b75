//! The order the kernel submitted the device's requests in. Several request threads read the
//! FUSE queue, so two requests the kernel sent together (the halves of a write it split) can
//! reach the model second first, where a real device takes them as they were queued. The
//! kernel numbers every request it queues (the FUSE request id, rising by [`ID_STEP`]); a
//! request waits here, briefly, until every request numbered before it has reached the model.
//! A number that never comes (a request answered without reaching this code) is given up
//! after [`WAIT_NS`].

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Between the ids of two requests queued one after the other (the kernel keeps the lowest
/// bit for interrupts).
pub const ID_STEP: u64 = 2;
/// Longest a request waits for one queued before it, ns. The request that was overtaken
/// reaches the model within 1 ms nearly always (0.01-0.9 ms when the halves of split 1 MiB
/// writes were; once in 256, over 2 ms on a host that steals time): what one that never comes
/// costs the request waiting for it, which keeps its own arrival time.
pub const WAIT_NS: u64 = 5_000_000;

#[derive(Debug, Default)]
struct State {
    /// Every request up to this id has reached the model (or was given up).
    last: u64,
    /// Ids past `last + ID_STEP` that have reached the model.
    ahead: Vec<u64>,
    /// Whether an id has been seen (the first sets `last`).
    started: bool,
    /// Threads waiting for their turn.
    waiting: u32,
}

impl State {
    /// The first id seen starts the order just before it.
    fn start(&mut self, id: u64) {
        if !self.started {
            self.started = true;
            self.last = id.saturating_sub(ID_STEP);
        }
    }

    /// Id `id` reached the model (`gave_up`: after giving up on those before it).
    fn mark(&mut self, id: u64, gave_up: bool) {
        if gave_up {
            self.last = self.last.max(id);
        } else if id > self.last {
            self.ahead.push(id);
        }
        while let Some(i) = self.ahead.iter().position(|&a| a == self.last + ID_STEP) {
            self.last += ID_STEP;
            self.ahead.swap_remove(i);
        }
        let last = self.last;
        self.ahead.retain(|&a| a > last);
    }
}

/// The kernel's submission order of one device's requests.
#[derive(Debug, Default)]
pub struct SubmitOrder {
    state: Mutex<State>,
    turned: Condvar,
}

/// How a request's turn came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Came {
    /// Every request before it had reached the model already.
    InOrder,
    /// It waited for one queued before it, which came.
    Waited,
    /// It waited [`WAIT_NS`] for one that did not come, and went ahead of it.
    GaveUp,
}

/// A request's turn: held from its arrival until the model has taken it.
#[derive(Debug)]
pub struct Turn<'a> {
    /// The order it holds a turn in, until it hands it back.
    order: Option<&'a SubmitOrder>,
    id: u64,
    /// When it arrived (the server clock, ns), before any wait.
    pub arrive_ns: u64,
    pub came: Came,
}

impl Turn<'_> {
    /// The model has taken the request: the next one may go.
    pub fn done(mut self) {
        self.release();
    }

    fn release(&mut self) {
        if let Some(order) = self.order.take() {
            order.mark(self.id, self.came == Came::GaveUp);
        }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

impl SubmitOrder {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn mark(&self, id: u64, gave_up: bool) {
        let mut s = self.lock();
        s.start(id);
        s.mark(id, gave_up);
        let wake = s.waiting > 0;
        drop(s);
        if wake {
            self.turned.notify_all();
        }
    }

    /// Request `id`, arrived at `arrive_ns`, waits until those queued before it have reached
    /// the model (or [`WAIT_NS`] has passed); hand the turn back with [`Turn::done`] once the
    /// model has taken it.
    pub fn turn(&self, id: u64, arrive_ns: u64) -> Turn<'_> {
        let mut s = self.lock();
        s.start(id);
        let mut came = Came::InOrder;
        if id > s.last + ID_STEP {
            let deadline = Instant::now() + Duration::from_nanos(WAIT_NS);
            came = Came::Waited;
            s.waiting += 1;
            while id > s.last + ID_STEP {
                let now = Instant::now();
                if now >= deadline {
                    came = Came::GaveUp;
                    break;
                }
                s = self
                    .turned
                    .wait_timeout(s, deadline - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            s.waiting -= 1;
        }
        Turn {
            order: Some(self),
            id,
            arrive_ns,
            came,
        }
    }

    /// Request `id` needs no turn (it does not reach the model) but counts as come.
    pub fn seen(&self, id: u64) {
        self.mark(id, false);
    }
}

#[cfg(test)]
mod tests {
    use super::{Came, SubmitOrder, ID_STEP};
    use std::sync::mpsc;
    use std::sync::Arc;

    #[test]
    fn ids_that_come_in_order_pass_at_once() {
        let o = SubmitOrder::default();
        for id in [10, 12, 14] {
            let t = o.turn(id, 0);
            assert_eq!(t.came, Came::InOrder);
            t.done();
        }
        o.seen(16);
        assert_eq!(o.turn(18, 0).came, Came::InOrder);
    }

    #[test]
    fn a_request_that_overtook_an_earlier_one_waits_for_it() {
        let o = Arc::new(SubmitOrder::default());
        o.turn(100, 0).done();
        let (tx, rx) = mpsc::channel();
        let o2 = Arc::clone(&o);
        // 104 arrives first; 102 was queued before it.
        let late = std::thread::spawn(move || {
            let t = o2.turn(104, 0);
            tx.send(t.came).unwrap();
        });
        // Until 104 waits (or has given up waiting).
        let mut came = None;
        while came.is_none() && o.lock().waiting == 0 {
            came = rx.try_recv().ok();
            std::thread::yield_now();
        }
        let t = o.turn(102, 0);
        assert_eq!(t.came, Came::InOrder);
        t.done();
        late.join().unwrap();
        let came = came.or_else(|| rx.recv().ok()).unwrap();
        assert!(matches!(came, Came::Waited | Came::GaveUp), "{came:?}");
    }

    #[test]
    fn an_id_that_never_comes_is_given_up_and_the_order_goes_on() {
        let o = SubmitOrder::default();
        o.turn(2, 0).done();
        // 4 was answered without reaching the model.
        let t = o.turn(6, 0);
        assert_eq!(t.came, Came::GaveUp);
        t.done();
        assert_eq!(o.turn(8, 0).came, Came::InOrder);
        // The missing one coming late goes at once.
        assert_eq!(o.turn(4, 0).came, Came::InOrder);
    }

    #[test]
    fn ids_marked_ahead_close_the_gap_when_it_fills() {
        let o = SubmitOrder::default();
        o.turn(2, 0).done();
        o.seen(6);
        o.seen(8);
        o.seen(4);
        assert_eq!(o.turn(8 + ID_STEP, 0).came, Came::InOrder);
    }
}
