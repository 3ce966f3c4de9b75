//! `array`: a striped array of hard disks behind one controller, as a storage array presents a
//! LUN. The logical space is cut into chunks laid round-robin over `drives` identical disks (the
//! `hdd` model, each spanning its share of the capacity over its full stroke); a request touches
//! the disks its chunks fall on, each serving its part at once, and completes with the last.
//! The controller's link to the host carries every transfer at `link_rate` (0: no limit), which
//! is what caps a big array's sequential rate. Parity (RAID 5/6) is not modeled: a write costs
//! the data disks only, as it does behind a controller whose write-back cache gathers full
//! stripes.

use super::hdd::Hdd;
use super::mechanics::{HddParams, PARAMS as DISK_PARAMS};
use super::model::{
    DeviceModel, Expectations, ModelDescriptor, ModelError, ReqKind, Request, Response,
};
use crate::params::{Kind, ParamSpec, Params};
use serde_json::{json, Value as Json};

/// Parameters `array` adds to those of its disks (`size` is the array's).
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "drives",
        Kind::Count,
        "8",
        "data disks the chunks are striped over",
    ),
    ParamSpec::new(
        "chunk",
        Kind::Size,
        "128KiB",
        "bytes of one disk before the stripe moves to the next",
    ),
    ParamSpec::new(
        "link_rate",
        Kind::Float,
        "0",
        "the controller's link to the host, carrying every transfer (0: no limit)",
    )
    .in_unit("MB/s"),
];

/// The `array` model.
pub static MODEL: ModelDescriptor = ModelDescriptor {
    name: "array",
    summary: "striped array of hdd disks behind one controller link (a storage array's LUN)",
    params: &[DISK_PARAMS, PARAMS],
    build: |v| {
        Ok(Box::new(Array::new(
            &HddParams::from_values(v),
            &ArrayParams::from_values(v),
        )?))
    },
    expect: |v, seq_io| {
        expect(
            &HddParams::from_values(v),
            &ArrayParams::from_values(v),
            seq_io,
        )
    },
    presets: super::twins::ARRAYS,
    preset_key: "drive",
};

/// The striping of an array.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArrayParams {
    pub drives: u64,
    pub chunk: u64,
    /// Bytes per second; 0 for no limit.
    pub link_rate: f64,
}

impl ArrayParams {
    /// Reads [`PARAMS`] from resolved values.
    pub fn from_values(v: &Params) -> Self {
        ArrayParams {
            drives: v.u64("drives"),
            chunk: v.u64("chunk"),
            link_rate: v.f64("link_rate") * 1e6,
        }
    }

    fn check(&self, capacity: u64) -> Result<(), ModelError> {
        if self.drives == 0 || self.drives > 1024 {
            return Err(ModelError::new("drives", "must be from 1 to 1024"));
        }
        if self.chunk == 0 || self.chunk % 512 != 0 {
            return Err(ModelError::new("chunk", "must be a multiple of 512 bytes"));
        }
        if capacity / self.drives < self.chunk {
            return Err(ModelError::new(
                "drives",
                "leave each disk less than one chunk of the capacity",
            ));
        }
        if !(self.link_rate >= 0.0 && self.link_rate.is_finite()) {
            return Err(ModelError::new("link_rate", "must be 0 or more"));
        }
        Ok(())
    }
}

/// A striped array of disks.
pub struct Array {
    disks: Vec<Hdd>,
    capacity: u64,
    chunk: u64,
    /// Link rate in bytes per ns (0: no limit), and when the link is free.
    link: f64,
    link_free: u64,
    requests: u64,
    pieces: u64,
}

impl Array {
    /// An array of `a.drives` disks with parameters `p` (whose `size` is the array's).
    pub fn new(p: &HddParams, a: &ArrayParams) -> Result<Array, ModelError> {
        a.check(p.capacity)?;
        let per = p.capacity / a.drives / a.chunk * a.chunk;
        let disk = HddParams {
            capacity: per,
            ..p.clone()
        };
        let disks = (0..a.drives)
            .map(|_| Hdd::new(&disk))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Array {
            disks,
            capacity: per * a.drives,
            chunk: a.chunk,
            link: a.link_rate * 1e-9,
            link_free: 0,
            requests: 0,
            pieces: 0,
        })
    }

    /// The disk and its offset that hold array offset `o`.
    fn place(&self, o: u64) -> (usize, u64) {
        let n = self.disks.len() as u64;
        let c = o / self.chunk;
        ((c % n) as usize, (c / n) * self.chunk + o % self.chunk)
    }
}

impl DeviceModel for Array {
    fn name(&self) -> &'static str {
        "array"
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn service(&mut self, now_ns: u64, req: Request) -> Response {
        self.requests += 1;
        let mut done = now_ns;
        let mut errno = 0;
        match req.kind {
            ReqKind::Read | ReqKind::Write | ReqKind::Discard => {
                let end = (req.offset + req.len).min(self.capacity);
                let mut o = req.offset.min(end);
                // Each disk gets its pieces of the request, contiguous on it, as one request.
                let mut runs: Vec<(usize, u64, u64)> = Vec::new();
                while o < end {
                    let (d, at) = self.place(o);
                    let len = (self.chunk - o % self.chunk).min(end - o);
                    match runs.iter_mut().find(|r| r.0 == d && r.1 + r.2 == at) {
                        Some(r) => r.2 += len,
                        None => runs.push((d, at, len)),
                    }
                    o += len;
                }
                for (d, at, len) in runs {
                    self.pieces += 1;
                    let r = self.disks[d].service(
                        now_ns,
                        Request {
                            kind: req.kind,
                            offset: at,
                            len,
                        },
                    );
                    done = done.max(r.done_ns);
                    if r.errno != 0 {
                        errno = r.errno;
                    }
                }
                if self.link > 0.0 && req.kind != ReqKind::Discard {
                    let start = now_ns.max(self.link_free);
                    self.link_free = start + (req.len as f64 / self.link) as u64;
                    done = done.max(self.link_free);
                }
            }
            ReqKind::Flush => {
                for d in &mut self.disks {
                    done = done.max(d.service(now_ns, req).done_ns);
                }
            }
        }
        Response {
            done_ns: done,
            errno,
        }
    }

    fn background(&mut self, now_ns: u64) -> super::model::Background {
        let mut b = super::model::Background {
            pending: false,
            idle_at_ns: now_ns,
            host_done_ns: 0,
            worked_ns: 0,
        };
        for (i, d) in self.disks.iter_mut().enumerate() {
            let x = d.background(now_ns);
            b.pending |= x.pending;
            b.idle_at_ns = if i == 0 {
                x.idle_at_ns
            } else {
                b.idle_at_ns.max(x.idle_at_ns)
            };
            b.host_done_ns = b.host_done_ns.max(x.host_done_ns);
            b.worked_ns += x.worked_ns;
        }
        b
    }

    fn stats(&self) -> Json {
        json!({
            "drives": self.disks.len(),
            "requests": self.requests,
            "disk_requests": self.pieces,
            "disks": self.disks.iter().map(|d| d.stats()).collect::<Vec<_>>(),
        })
    }
}

/// The probe's expectations for an array: a 4 KiB random read or write costs one disk's; a
/// sequential transfer of `seq_io` bytes runs on the disks it spans at once, within the link.
pub fn expect(p: &HddParams, a: &ArrayParams, seq_io: u64) -> Result<Expectations, ModelError> {
    a.check(p.capacity)?;
    let per = p.capacity / a.drives / a.chunk * a.chunk;
    let disk = HddParams {
        capacity: per,
        ..p.clone()
    };
    let one = super::hdd::expect(&disk, seq_io)?;
    let spans = seq_io.div_ceil(a.chunk).clamp(1, a.drives) as f64;
    let cap = |mbs: f64| {
        let x = mbs * spans;
        if a.link_rate > 0.0 {
            x.min(a.link_rate / 1e6)
        } else {
            x
        }
    };
    Ok(Expectations {
        random_read_ms: one.random_read_ms,
        seq_read_outer_mbs: cap(one.seq_read_outer_mbs),
        seq_read_inner_mbs: cap(one.seq_read_inner_mbs),
        random_write_iops: one.random_write_iops * a.drives as f64,
        seq_write_mbs: cap(one.seq_write_mbs),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(drives: u64, link: f64) -> Array {
        let p = HddParams {
            capacity: 64 << 30,
            ..HddParams::default()
        };
        let a = ArrayParams {
            drives,
            chunk: 128 << 10,
            link_rate: link,
        };
        Array::new(&p, &a).unwrap()
    }

    #[test]
    fn chunks_go_round_robin_over_the_disks() {
        let a = array(4, 0.0);
        assert_eq!(a.place(0), (0, 0));
        assert_eq!(a.place(128 << 10), (1, 0));
        assert_eq!(a.place(4 * (128 << 10) + 5), (0, (128 << 10) + 5));
        assert_eq!(a.capacity(), 64 << 30);
    }

    #[test]
    fn a_large_read_runs_on_every_disk_at_once() {
        // 1 MiB over 8 disks of 128 KiB chunks: each disk reads one chunk, so the read costs
        // about one disk's positioning and an eighth of the transfer.
        let mut one = array(1, 0.0);
        let mut eight = array(8, 0.0);
        let req = Request {
            kind: ReqKind::Read,
            offset: 10 << 30,
            len: 1 << 20,
        };
        let t1 = one.service(0, req).done_ns;
        let t8 = eight.service(0, req).done_ns;
        assert!(t8 < t1, "{t8} against {t1}");
        assert_eq!(eight.pieces, 8);
    }

    #[test]
    fn random_reads_from_several_streams_overlap_on_different_disks() {
        // Eight 4 KiB reads on eight different disks arrive together: they finish in about the
        // time of one, where one disk serves them one after another.
        let mut a = array(8, 0.0);
        let mut d = array(1, 0.0);
        let mut worst = (0, 0);
        for i in 0..8u64 {
            let req = Request {
                kind: ReqKind::Read,
                offset: i * (128 << 10) + (i << 30) / 8 * 8,
                len: 4096,
            };
            worst.0 = worst.0.max(a.service(0, req).done_ns);
            worst.1 = worst.1.max(d.service(0, req).done_ns);
        }
        assert!(worst.0 * 3 < worst.1, "{worst:?}");
    }

    #[test]
    fn the_link_caps_a_streaming_read() {
        let mut a = array(16, 100.0e6);
        let mut t = 0;
        for i in 0..64u64 {
            let req = Request {
                kind: ReqKind::Read,
                offset: i << 20,
                len: 1 << 20,
            };
            t = a.service(t, req).done_ns;
        }
        let mbs = 64.0 * (1 << 20) as f64 / (t as f64 * 1e-9) / 1e6;
        assert!(mbs <= 100.0 + 1e-6, "{mbs} MB/s over a 100 MB/s link");
        assert!(mbs > 90.0, "{mbs}");
    }

    #[test]
    fn bad_striping_is_refused_by_name() {
        let p = HddParams::default();
        let bad = |a: ArrayParams| Array::new(&p, &a).err().unwrap().param;
        let ok = ArrayParams {
            drives: 4,
            chunk: 128 << 10,
            link_rate: 0.0,
        };
        assert_eq!(bad(ArrayParams { drives: 0, ..ok }), "drives");
        assert_eq!(bad(ArrayParams { chunk: 1000, ..ok }), "chunk");
        assert_eq!(
            bad(ArrayParams {
                link_rate: -1.0,
                ..ok
            }),
            "link_rate"
        );
    }
}
