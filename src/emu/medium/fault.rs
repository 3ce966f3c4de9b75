//! Fault injection around any device model: reads and writes that touch a failing byte range,
//! or that lose a (deterministic, seeded) coin toss, complete with EIO. The inner model still
//! times the request, so a failing device keeps its timing and a trial on it finishes.

use super::model::{DeviceModel, ReqKind, Request, RequestId, Response};
use crate::engine::rng::SplitMix64;
use serde_json::Value as Json;

/// errno of an injected fault (EIO).
pub const EIO: i32 = 5;

/// Which requests fail.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FaultParams {
    /// Byte ranges `[start, end)`: a read or write overlapping one fails.
    pub ranges: Vec<(u64, u64)>,
    /// Probability that any read or write fails.
    pub prob: f64,
    /// Seed of the coin tosses.
    pub seed: u64,
}

impl FaultParams {
    /// Whether any fault is configured.
    pub fn is_active(&self) -> bool {
        !self.ranges.is_empty() || self.prob > 0.0
    }
}

/// A model with fault injection.
pub struct Fault {
    inner: Box<dyn DeviceModel>,
    ranges: Vec<(u64, u64)>,
    /// `prob` scaled to the u64 range: fail when a draw is below it.
    threshold: u64,
    rng: SplitMix64,
    range_faults: u64,
    random_faults: u64,
    /// Requests the inner model defers that are to fail when it reports them.
    failing: Vec<RequestId>,
}

impl Fault {
    pub fn new(inner: Box<dyn DeviceModel>, p: &FaultParams) -> Self {
        let threshold = if p.prob >= 1.0 {
            u64::MAX
        } else {
            (p.prob.max(0.0) * u64::MAX as f64) as u64
        };
        Fault {
            inner,
            ranges: p.ranges.clone(),
            threshold,
            rng: SplitMix64::new(p.seed),
            range_faults: 0,
            random_faults: 0,
            failing: Vec::new(),
        }
    }

    /// The errno `req` gets: EIO when it touches a failing range or loses the coin toss.
    fn errno(&mut self, req: Request) -> i32 {
        if !matches!(req.kind, ReqKind::Read | ReqKind::Write) {
            return 0;
        }
        let end = req.offset + req.len.max(1);
        if self.ranges.iter().any(|&(a, b)| req.offset < b && a < end) {
            self.range_faults += 1;
            EIO
        } else if self.threshold > 0 && self.rng.next_u64() < self.threshold {
            self.random_faults += 1;
            EIO
        } else {
            0
        }
    }
}

impl DeviceModel for Fault {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn capacity(&self) -> u64 {
        self.inner.capacity()
    }

    fn service(&mut self, now_ns: u64, req: Request) -> Response {
        let mut r = self.inner.service(now_ns, req);
        let errno = self.errno(req);
        if errno != 0 {
            r.errno = errno;
        }
        r
    }

    fn submit(&mut self, now_ns: u64, id: RequestId, req: Request) -> Option<Response> {
        let r = self.inner.submit(now_ns, id, req);
        let errno = self.errno(req);
        match r {
            Some(mut r) => {
                if errno != 0 {
                    r.errno = errno;
                }
                Some(r)
            }
            None => {
                if errno != 0 {
                    self.failing.push(id);
                }
                None
            }
        }
    }

    fn advance(&mut self, now_ns: u64, done: &mut dyn FnMut(RequestId, Response)) {
        let failing = &mut self.failing;
        self.inner.advance(now_ns, &mut |id, mut r| {
            if let Some(i) = failing.iter().position(|&f| f == id) {
                failing.swap_remove(i);
                r.errno = EIO;
            }
            done(id, r)
        });
    }

    fn next_event_ns(&self) -> Option<u64> {
        self.inner.next_event_ns()
    }

    fn background(&mut self, now_ns: u64) -> super::model::Background {
        self.inner.background(now_ns)
    }

    fn unsettled(&mut self, now_ns: u64) -> Vec<super::model::Unsettled> {
        self.inner.unsettled(now_ns)
    }

    fn stats(&self) -> Json {
        let mut s = self.inner.stats();
        if let Json::Object(m) = &mut s {
            m.insert("faults_in_range".into(), self.range_faults.into());
            m.insert("faults_random".into(), self.random_faults.into());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emu::null::Null;

    fn rw(kind: ReqKind, offset: u64) -> Request {
        Request {
            kind,
            offset,
            len: 4096,
        }
    }

    #[test]
    fn range_faults_hit_exactly_the_overlapping_requests() {
        let p = FaultParams {
            ranges: vec![(1 << 20, (1 << 20) + 8192)],
            ..FaultParams::default()
        };
        let mut m = Fault::new(Box::new(Null::new(1 << 30)), &p);
        let errno = |m: &mut Fault, kind, o| m.service(0, rw(kind, o)).errno;
        assert_eq!(errno(&mut m, ReqKind::Read, (1 << 20) - 4096), 0);
        assert_eq!(errno(&mut m, ReqKind::Read, (1 << 20) - 4095), EIO);
        assert_eq!(errno(&mut m, ReqKind::Write, (1 << 20) + 4096), EIO);
        assert_eq!(errno(&mut m, ReqKind::Read, (1 << 20) + 8192), 0);
        let flush = Request {
            kind: ReqKind::Flush,
            offset: 1 << 20,
            len: 0,
        };
        assert_eq!(m.service(0, flush).errno, 0);
        assert_eq!(m.stats()["faults_in_range"], 2);
    }

    #[test]
    fn random_faults_follow_the_probability_and_the_seed() {
        let count = |prob: f64, seed: u64| {
            let p = FaultParams {
                prob,
                seed,
                ..FaultParams::default()
            };
            let mut m = Fault::new(Box::new(Null::new(1 << 30)), &p);
            (0..100_000)
                .map(|i| m.service(i, rw(ReqKind::Read, 0)).errno)
                .filter(|&e| e == EIO)
                .count()
        };
        let n = count(0.01, 1);
        assert!((900..1100).contains(&n), "{n}");
        assert_eq!(n, count(0.01, 1), "same seed, same faults");
        assert_eq!(count(0.0, 1), 0);
        assert_eq!(count(1.0, 1), 100_000);
    }
}
