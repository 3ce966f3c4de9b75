//! Tiny device models with fixed delays for tests of the emulated-device server.

use iotrial::emu::model::{DeviceModel, ReqKind, Request, Response};
use serde_json::{json, Value as Json};

/// A model that serves each request `delay_ns` after it arrives, one at a time (`serial`) or
/// all in parallel, and fails reads and writes that touch `[fail.0, fail.1)` with EIO.
pub struct FixedModel {
    pub capacity: u64,
    pub delay_ns: u64,
    pub serial: bool,
    pub fail: (u64, u64),
    busy_until: u64,
    counts: [u64; 4],
}

impl FixedModel {
    pub fn new(capacity: u64, delay_ns: u64, serial: bool) -> Self {
        FixedModel {
            capacity,
            delay_ns,
            serial,
            fail: (0, 0),
            busy_until: 0,
            counts: [0; 4],
        }
    }
}

impl DeviceModel for FixedModel {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn service(&mut self, now_ns: u64, req: Request) -> Response {
        let k = match req.kind {
            ReqKind::Read => 0,
            ReqKind::Write => 1,
            ReqKind::Flush => 2,
            ReqKind::Discard => 3,
        };
        self.counts[k] += 1;
        let start = if self.serial {
            now_ns.max(self.busy_until)
        } else {
            now_ns
        };
        let done_ns = start + self.delay_ns;
        self.busy_until = done_ns;
        let hit = req.offset < self.fail.1 && req.offset + req.len > self.fail.0;
        let data = matches!(req.kind, ReqKind::Read | ReqKind::Write);
        Response {
            done_ns,
            errno: if hit && data { 5 } else { 0 },
        }
    }
    fn stats(&self) -> Json {
        json!({"read": self.counts[0], "write": self.counts[1],
               "flush": self.counts[2], "discard": self.counts[3]})
    }
}
