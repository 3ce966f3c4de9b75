//! How the emulated device's replies are timed. A request goes to the model when it arrives;
//! most models say then when it completes, and its reply is due that long (divided by the time
//! scale) after its arrival. A model that reorders its queue says it later, once no later
//! arrival can change it: such a request is *deferred*, its reply parked here until the model
//! reports its completion, from the next arrival or from a *tick* the timer fires when the
//! model asks to be advanced ([`DeviceModel::next_event_ns`]). Replies not yet due wait on the
//! timer queue, so request threads never sleep.

use std::collections::HashMap;
use std::sync::Arc;

use fuser::{Errno, ReplyData, ReplyEmpty, ReplyWrite};

use super::counters::{BufPool, Counters};
use super::cut::{Circuit, Power};
use super::fault::EIO;
use super::model::{DeviceModel, ReqKind, Request, RequestId, Response};
use super::reqlog::RequestLog;
use super::shared_timer::DevicePusher;
use super::timer::Clock;

/// A reply waiting for its due time.
pub enum Pending {
    Data {
        reply: ReplyData,
        buf: Vec<u8>,
        len: usize,
    },
    Written(ReplyWrite, u32),
    Empty(ReplyEmpty),
}

/// What the timer queue holds: a reply due at its time, or a tick that advances the model.
pub enum Due {
    Reply(Pending, i32),
    Tick,
}

/// Sends replies and accounts for them; used inline and by the timer thread.
#[derive(Clone)]
pub struct Sender {
    pub clock: Clock,
    pub counters: Arc<Counters>,
    pub pool: Arc<BufPool>,
    /// The device's power: a reply due after it went fails.
    pub power: Arc<Power>,
}

impl Sender {
    /// Sends `p` (as error `errno` if non-zero), due at `due_ns`.
    pub fn send(&self, due_ns: u64, p: Pending, errno: i32) {
        let now = self.clock.now_ns();
        let late = now.saturating_sub(due_ns);
        let errno = if self.power.fails_reply(due_ns) {
            EIO
        } else {
            errno
        };
        let err = (errno != 0).then(|| Errno::from_i32(errno));
        // Counted before the reply goes out: whoever the reply wakes sees it counted.
        self.counters.replied(due_ns, late, errno != 0);
        match (p, err) {
            (Pending::Data { reply, buf, len }, None) => {
                reply.data(&buf[..len]);
                self.pool.give(buf);
            }
            (Pending::Data { reply, buf, .. }, Some(e)) => {
                reply.error(e);
                self.pool.give(buf);
            }
            (Pending::Written(reply, n), None) => reply.written(n),
            (Pending::Written(reply, _), Some(e)) => reply.error(e),
            (Pending::Empty(reply), None) => reply.ok(),
            (Pending::Empty(reply), Some(e)) => reply.error(e),
        }
        self.counters.sent(due_ns, self.clock.now_ns() - now);
    }
}

/// Where replies go: sent at once when due, else queued on the timer.
#[derive(Clone)]
pub struct Out {
    pub sender: Sender,
    pub timer: DevicePusher<Due>,
    pub scale: f64,
}

impl Out {
    /// Sends `p` now if due (`timer`: from the timer thread), else queues it on the timer.
    pub fn finish(&self, due_ns: u64, p: Pending, errno: i32, timer: bool) {
        let now = self.sender.clock.now_ns();
        if due_ns <= now {
            self.sender.counters.late_path(timer, due_ns, now - due_ns);
            self.sender.send(due_ns, p, errno);
        } else {
            self.timer.push(due_ns, Due::Reply(p, errno));
        }
    }
}

/// The model time during which at least one request was in service (from its arrival to its
/// completion, as the host sees it): the union of the requests' spans. Time scaling stretches
/// exactly this part of a run; the rest is the host's own time (its CPU, between requests).
/// Spans come in any order (a deferred request's once the model reports it); each is counted
/// once no span starting before it can still come.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outstanding {
    /// Completion of the latest span counted so far, model ns.
    until_ns: u64,
    /// The union's length so far, model ns.
    counted_ns: u64,
    /// Spans not counted yet: a span starting before them may still come.
    held: Vec<(u64, u64)>,
}

impl Outstanding {
    /// A request was in service from `arrive_ns` to `done_ns` (model ns); no span still to
    /// come starts before `frontier_ns`.
    pub fn add(&mut self, arrive_ns: u64, done_ns: u64, frontier_ns: u64) {
        self.held.push((arrive_ns, done_ns));
        if self.held.len() > 1 {
            self.held.sort_unstable_by_key(|s| s.0);
        }
        let n = self.held.iter().take_while(|s| s.0 <= frontier_ns).count();
        for i in 0..n {
            let (a, d) = self.held[i];
            Self::count(&mut self.until_ns, &mut self.counted_ns, a, d);
        }
        self.held.drain(..n);
    }

    fn count(until: &mut u64, total: &mut u64, a: u64, d: u64) {
        if d > *until {
            *total += d - a.max(*until);
            *until = d;
        }
    }

    /// The union's length, model ns, the spans held back included.
    pub fn total_ns(&self) -> u64 {
        let (mut until, mut total) = (self.until_ns, self.counted_ns);
        for &(a, d) in &self.held {
            Self::count(&mut until, &mut total, a, d);
        }
        total
    }
}

/// A request the model will report later, and its reply once the FUSE thread parks it.
struct Deferred {
    /// Server clock ns and model ns of its arrival.
    arrive_ns: u64,
    arrive_model_ns: u64,
    kind: ReqKind,
    offset: u64,
    len: u64,
    /// The reply, with the errno the backing image gave.
    parked: Option<(Pending, i32)>,
    /// Reported before it was parked: (due on the server clock, the model's errno).
    resolved: Option<(u64, i32)>,
}

/// How one request's reply is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Begun {
    /// Known at arrival: the model's errno and the due time on the server clock; the
    /// request's id and its completion on the model's timeline.
    Due {
        errno: i32,
        due_ns: u64,
        id: RequestId,
        done_model_ns: u64,
    },
    /// The model reports it later; park its reply with [`ModelState::park`].
    Deferred(RequestId),
}

/// The model and its arrival clock, shared by the FUSE threads, the timer and the server.
pub struct ModelState {
    pub model: Box<dyn DeviceModel>,
    /// Last time given to the model (its timeline never goes backwards).
    pub last_ns: u64,
    /// Last arrival given to the model, on the server clock (arrivals are taken in the
    /// kernel's order, each no earlier than the one before).
    last_arrive_ns: u64,
    /// Model time added to the scaled real time: what fast-forwards over idle background work
    /// skipped ([`crate::emu::EmuServer::background`]).
    pub offset_ns: u64,
    /// Every request received, while a trial's monitors ask for it.
    pub log: Option<RequestLog>,
    /// How long, in model time, the host has had a request in service.
    pub outstanding: Outstanding,
    next_id: RequestId,
    deferred: HashMap<RequestId, Deferred>,
    /// Completions the model reported in the last advance (kept to reuse its memory).
    reported: Vec<(RequestId, Response)>,
    /// Server clock ns of the earliest tick queued and not yet fired.
    tick_ns: Option<u64>,
    /// The device's power, the circuit that cuts it (while a cut is planned), and the
    /// CLOCK_MONOTONIC instant of the server clock's zero.
    pub power: Arc<Power>,
    pub circuit: Option<Arc<Circuit>>,
    pub mono_base_ns: u64,
    /// While a cut is planned: the deferred writes and flushes reported since the cut journal
    /// last asked (id, completion in model ns, reply due on the server clock).
    pub journaling: bool,
    pub resolved: Vec<(RequestId, u64, u64)>,
}

impl ModelState {
    pub fn new(model: Box<dyn DeviceModel>) -> ModelState {
        ModelState {
            model,
            last_ns: 0,
            last_arrive_ns: 0,
            offset_ns: 0,
            log: None,
            outstanding: Outstanding::default(),
            next_id: 0,
            deferred: HashMap::with_capacity(256),
            reported: Vec::with_capacity(64),
            tick_ns: None,
            power: Arc::default(),
            circuit: None,
            mono_base_ns: 0,
            journaling: false,
            resolved: Vec::new(),
        }
    }

    /// Whether the power is off for a request arriving (a write: `write`) at `arrive_ns` on
    /// the server clock: off already, or cut by its circuit now (a deadline passed, or this
    /// write is the one that cuts it, which is still served).
    fn off_for(&self, arrive_ns: u64, write: bool) -> bool {
        if self.power.off_at().is_some_and(|o| arrive_ns >= o) {
            return true;
        }
        self.circuit
            .as_ref()
            .is_some_and(|c| c.arrive(self.mono_base_ns + arrive_ns, write))
    }

    /// Whether the power is off at `now_ns` (server clock), the circuit's deadline checked.
    pub fn powered_off(&self, now_ns: u64) -> bool {
        if let Some(c) = &self.circuit {
            c.expire(self.mono_base_ns + now_ns);
        }
        self.power.off_at().is_some()
    }

    /// The power went: the model is asked nothing more (its state stays that of the cut),
    /// and every deferred request's reply fails, now if parked, else when it is.
    pub fn fail_deferred(&mut self, out: &Out) {
        let ids: Vec<RequestId> = self.deferred.keys().copied().collect();
        for id in ids {
            let Some(d) = self.deferred.get_mut(&id) else {
                continue;
            };
            match d.parked.take() {
                Some((p, _)) => {
                    self.deferred.remove(&id);
                    out.sender.send(0, p, EIO);
                }
                None => d.resolved = Some((d.arrive_ns, EIO)),
            }
        }
    }

    /// Replaces the model by a fresh one (a device powered up again): no request is
    /// deferred, no circuit is wired. Requests the old model still owes fail if its power is
    /// off, else it runs on until it has answered them.
    pub fn replace(&mut self, out: &Out, model: Box<dyn DeviceModel>) {
        if self.power.off_at().is_some() {
            self.fail_deferred(out);
        } else {
            self.drain(out);
        }
        self.deferred.clear();
        self.model = model;
        self.circuit = None;
        self.journaling = false;
        self.resolved.clear();
        self.tick_ns = None;
    }

    /// The model's clock at real time `real_ns` on a device at time scale `scale` (never
    /// before the last time given to the model), remembered as the last.
    pub fn model_time(&mut self, real_ns: u64, scale: f64) -> u64 {
        let t = ((real_ns as f64 * scale) as u64)
            .saturating_add(self.offset_ns)
            .max(self.last_ns);
        self.last_ns = t;
        t
    }

    /// The server clock's time of model time `model_ns` (the inverse of [`Self::model_time`]).
    fn real_time(&self, model_ns: u64, scale: f64) -> u64 {
        (model_ns.saturating_sub(self.offset_ns) as f64 / scale) as u64
    }

    /// No span still to come starts before this: the earliest arrival of a deferred request,
    /// else the model's clock.
    fn frontier(&self) -> u64 {
        self.deferred
            .values()
            .map(|d| d.arrive_model_ns)
            .min()
            .unwrap_or(self.last_ns)
            .min(self.last_ns)
    }

    /// A request was in service over `[arrive_model, done]`: counted, logged, accounted.
    fn record(&mut self, out: &Out, kind: ReqKind, at: (u64, u64, u64, u64), done_ns: u64) {
        let (offset, len, arrive_ns, arrive_model) = at;
        let delay = (done_ns.saturating_sub(arrive_model) as f64 / out.scale) as u64;
        let frontier = self.frontier();
        self.outstanding.add(arrive_model, done_ns, frontier);
        if let Some(log) = &mut self.log {
            log.push(kind, offset, len, arrive_ns, delay);
        }
        out.sender.counters.serviced(kind, arrive_ns + delay, delay);
    }

    /// Hands the model a request that arrived at `arrive_ns` on the server clock (moved up
    /// to the last arrival when it came before it): how its reply is timed, and its arrival.
    pub fn begin(
        &mut self,
        out: &Out,
        kind: ReqKind,
        offset: u64,
        len: u64,
        arrive_ns: u64,
    ) -> (Begun, u64) {
        let arrive_ns = arrive_ns.max(self.last_arrive_ns);
        self.last_arrive_ns = arrive_ns;
        (self.enter(out, kind, offset, len, arrive_ns), arrive_ns)
    }

    fn enter(&mut self, out: &Out, kind: ReqKind, offset: u64, len: u64, arrive_ns: u64) -> Begun {
        let id = self.next_id;
        self.next_id += 1;
        if self.off_for(arrive_ns, kind == ReqKind::Write) {
            self.fail_deferred(out);
            return Begun::Due {
                errno: EIO,
                due_ns: arrive_ns,
                id,
                done_model_ns: 0,
            };
        }
        let now = self.model_time(arrive_ns, out.scale);
        let begun = match self.model.submit(now, id, Request { kind, offset, len }) {
            Some(r) => {
                self.record(out, kind, (offset, len, arrive_ns, now), r.done_ns);
                let delay = (r.done_ns.saturating_sub(now) as f64 / out.scale) as u64;
                Begun::Due {
                    errno: r.errno,
                    due_ns: arrive_ns + delay,
                    id,
                    done_model_ns: r.done_ns,
                }
            }
            None => {
                self.deferred.insert(
                    id,
                    Deferred {
                        arrive_ns,
                        arrive_model_ns: now,
                        kind,
                        offset,
                        len,
                        parked: None,
                        resolved: None,
                    },
                );
                Begun::Deferred(id)
            }
        };
        self.collect(out, now, false);
        begun
    }

    /// Parks the reply of deferred request `id` (with the errno of its backing I/O), or sends
    /// it if the model has reported it meanwhile.
    pub fn park(&mut self, out: &Out, id: RequestId, p: Pending, errno: i32) {
        let Some(d) = self.deferred.get_mut(&id) else {
            // Never deferred (or already answered): cannot happen; fail it rather than hang.
            return out.finish(0, p, EIO, false);
        };
        match d.resolved {
            Some((due, model_errno)) => {
                self.deferred.remove(&id);
                out.finish(due, p, if errno != 0 { errno } else { model_errno }, false);
            }
            None => d.parked = Some((p, errno)),
        }
    }

    /// The timer's tick: advances the model to now and sends or queues what it reports;
    /// once the power is off, fails what is deferred and leaves the model as it was.
    pub fn tick(&mut self, out: &Out) {
        let real = out.sender.clock.now_ns();
        if self.tick_ns.is_some_and(|t| t <= real) {
            self.tick_ns = None;
        }
        if self.powered_off(real) {
            return self.fail_deferred(out);
        }
        let now = self.model_time(real, out.scale);
        self.collect(out, now, true);
    }

    /// Advances the model to `now` (model ns), answers the deferred requests it reports, and
    /// queues a tick for when it next owes one.
    fn collect(&mut self, out: &Out, now: u64, timer: bool) {
        if self.deferred.is_empty() && self.model.next_event_ns().is_none() {
            return;
        }
        let reported = &mut self.reported;
        self.model.advance(now, &mut |id, r| reported.push((id, r)));
        let mut reported = std::mem::take(&mut self.reported);
        for (id, r) in reported.drain(..) {
            let Some(d) = self.deferred.get_mut(&id) else {
                continue;
            };
            let delay = (r.done_ns.saturating_sub(d.arrive_model_ns) as f64 / out.scale) as u64;
            let due = d.arrive_ns + delay;
            let at = (d.offset, d.len, d.arrive_ns, d.arrive_model_ns);
            let kind = d.kind;
            if self.journaling && matches!(kind, ReqKind::Write | ReqKind::Flush) {
                self.resolved.push((id, r.done_ns, due));
            }
            match d.parked.take() {
                Some((p, errno)) => {
                    self.deferred.remove(&id);
                    out.finish(due, p, if errno != 0 { errno } else { r.errno }, timer);
                }
                None => d.resolved = Some((due, r.errno)),
            }
            self.record(out, kind, at, r.done_ns);
        }
        self.reported = reported;
        if let Some(next) = self.model.next_event_ns() {
            let at = self.real_time(next, out.scale);
            if self.tick_ns.is_none_or(|t| at < t) {
                self.tick_ns = Some(at);
                out.timer.push(at, Due::Tick);
            }
        }
    }

    /// The server stops: the model runs on until it has reported every deferred request, and
    /// each parked reply is sent now; one the model never reports fails with EIO, so no
    /// request is left waiting in the kernel.
    pub fn drain(&mut self, out: &Out) {
        let mut guard = 0;
        while !self.deferred.is_empty() && guard < 1_000_000 {
            guard += 1;
            let Some(next) = self.model.next_event_ns() else {
                break;
            };
            self.last_ns = self.last_ns.max(next);
            self.collect(out, self.last_ns, true);
        }
        for (_, d) in self.deferred.drain() {
            if let Some((p, _)) = d.parked {
                out.sender.send(0, p, EIO);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Outstanding;

    #[test]
    fn outstanding_time_is_the_union_of_the_requests_spans() {
        let mut o = Outstanding::default();
        o.add(0, 10, 0);
        // Overlapping: only what reaches past 10 counts.
        o.add(5, 15, 5);
        // Inside a span already counted: nothing.
        o.add(6, 12, 6);
        // After a gap (15..20 idle: the host's own time).
        o.add(20, 30, 20);
        // Acknowledged at once (a drive's write cache): no time in service.
        o.add(40, 40, 40);
        assert_eq!(o.total_ns(), 25);
    }

    #[test]
    fn spans_reported_out_of_order_count_once() {
        let mut o = Outstanding::default();
        // A deferred request arrived at 0 and is still unreported: the frontier stays at 0.
        o.add(5, 8, 0);
        o.add(30, 31, 0);
        assert_eq!(o.total_ns(), 4, "held spans count in the total");
        // It is reported: 0..20, covering 5..8; 30..31 after a gap.
        o.add(0, 20, 30);
        assert_eq!(o.total_ns(), 21);
        o.add(40, 45, 40);
        assert_eq!(o.total_ns(), 26);
    }
}
