//! `null`: a device that completes every request the moment it arrives, so a trial on it
//! measures the emulator's own cost (FUSE, loop device, image I/O) and nothing else.

use super::model::{DeviceModel, Expectations, ModelDescriptor, ReqKind, Request, Response};
use crate::params::{Kind, ParamSpec};
use serde_json::{json, Value as Json};

/// Parameters of `null`.
pub const PARAMS: &[ParamSpec] = &[ParamSpec::new(
    "size",
    Kind::Size,
    "16GiB",
    "logical capacity",
)];

/// The `null` model.
pub static MODEL: ModelDescriptor = ModelDescriptor {
    name: "null",
    summary: "no delay at all: measures the emulator's own cost",
    params: &[PARAMS],
    build: |v| Ok(Box::new(Null::new(v.u64("size")))),
    expect: |_, _| Ok(expect()),
    presets: &[],
    preset_key: "drive",
};

/// The no-delay model.
#[derive(Debug, Clone, Default)]
pub struct Null {
    capacity: u64,
    requests: u64,
    bytes: u64,
}

impl Null {
    pub fn new(capacity: u64) -> Self {
        Null {
            capacity,
            ..Null::default()
        }
    }
}

impl DeviceModel for Null {
    fn name(&self) -> &'static str {
        "null"
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn service(&mut self, now_ns: u64, req: Request) -> Response {
        self.requests += 1;
        if matches!(req.kind, ReqKind::Read | ReqKind::Write) {
            self.bytes += req.len;
        }
        Response {
            done_ns: now_ns,
            errno: 0,
        }
    }

    fn stats(&self) -> Json {
        json!({ "requests": self.requests, "bytes": self.bytes })
    }
}

/// The probe's expectations: no time at all (infinite rates).
pub fn expect() -> Expectations {
    Expectations {
        random_read_ms: 0.0,
        seq_read_outer_mbs: f64::INFINITY,
        seq_read_inner_mbs: f64::INFINITY,
        random_write_iops: f64::INFINITY,
        seq_write_mbs: f64::INFINITY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_at_arrival() {
        let mut m = Null::new(1 << 30);
        let r = m.service(
            123,
            Request {
                kind: ReqKind::Write,
                offset: 0,
                len: 4096,
            },
        );
        assert_eq!(r.done_ns, 123);
        assert_eq!(m.stats()["bytes"], 4096);
    }
}
