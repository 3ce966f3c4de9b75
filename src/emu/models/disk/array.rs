//! `array`: a striped array of hard disks behind one controller, as a storage array presents a
//! LUN. The logical space is cut into chunks laid round-robin over `drives` identical disks (the
//! `hdd` model, each spanning its share of the capacity over its full stroke); a request touches
//! the disks its chunks fall on, each serving its part at once, and completes with the last.
//! The controller's link to the host carries every transfer at `link_rate` (0: no limit), which
//! is what caps a big array's sequential rate. Parity (RAID 5/6) is not modeled: a write costs
//! the data disks only, as it does behind a controller whose write-back cache gathers full
//! stripes.
//!
//! For a power cut the array names, write for write, the parts of each write its disks have
//! not made durable (each disk's write-back buffer and the write it is executing), so a cut
//! keeps what some disks made durable and loses what others still held.

use super::hdd::Hdd;
use super::mechanics::{HddParams, PARAMS as DISK_PARAMS};
use super::model::{
    DeviceModel, Expectations, ModelDescriptor, ModelError, ReqKind, Request, RequestId, Response,
    Unsettled,
};
use crate::params::{Kind, ParamSpec, Params};
use serde_json::{json, Value as Json};
use std::collections::HashMap;

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
    /// The request being serviced.
    current: RequestId,
    /// The write pieces a disk may still hold, by the id it was submitted to its disk with
    /// (the count of pieces before it): the array's write and the parts of it the piece
    /// carries (`(from, len)` from the write's start, one per chunk).
    held: HashMap<u64, (RequestId, Vec<(u64, u64)>)>,
    /// Pieces held above which the next request prunes the durable ones.
    prune_above: usize,
}

/// One disk's piece of a request: the disk, its offset and bytes there, and the parts of the
/// request (`(from, len)` from its start) it carries.
type Run = (usize, u64, u64, Vec<(u64, u64)>);

/// Pieces held before the array first prunes the durable ones.
const PRUNE_FIRST: usize = 4096;

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
            current: 0,
            held: HashMap::new(),
            prune_above: PRUNE_FIRST,
        })
    }

    /// The parts of the array's writes its disks have not made durable at `now_ns`, and the
    /// pieces no disk names any more (durable for good) forgotten.
    fn unsettled_parts(&mut self, now_ns: u64) -> Vec<Unsettled> {
        let mut out = Vec::new();
        let mut named: HashMap<u64, (RequestId, Vec<(u64, u64)>)> = HashMap::new();
        for d in &mut self.disks {
            for u in d.unsettled(now_ns) {
                let Some(piece) = self.held.remove(&u.write) else {
                    continue;
                };
                out.extend(piece.1.iter().map(|&part| Unsettled {
                    write: piece.0,
                    on_media: u.on_media,
                    part: Some(part),
                }));
                named.insert(u.write, piece);
            }
        }
        self.held = named;
        self.prune_above = PRUNE_FIRST.max(2 * self.held.len());
        out
    }

    /// The pieces of `[o, end)` on each disk, chunk by chunk, with the parts of a request
    /// starting at `start` each carries (`(from, len)`, one per chunk), in the order of their
    /// first chunk. A write's: its parts say what a power cut takes back.
    fn runs_by_chunk(&self, mut o: u64, end: u64, start: u64) -> Vec<Run> {
        let mut runs: Vec<Run> = Vec::new();
        while o < end {
            let (d, at) = self.place(o);
            let len = (self.chunk - o % self.chunk).min(end - o);
            let part = (o - start, len);
            match runs.iter_mut().find(|r| r.0 == d && r.1 + r.2 == at) {
                Some(r) => {
                    r.2 += len;
                    r.3.push(part);
                }
                None => runs.push((d, at, len, vec![part])),
            }
            o += len;
        }
        runs
    }

    /// The pieces of `[o, end)` on each disk, without parts, in the order of their first
    /// chunk: consecutive rows of stripes lie end to end on a disk, so each disk's piece runs
    /// from its first chunk in the range to its last, found in one step per disk however long
    /// the range (a discard of a whole 72 TB volume at mkfs is 2 GB per request, 16,384
    /// chunks, which the chunk walk took 300 µs to cut up).
    fn runs(&self, o: u64, end: u64) -> Vec<Run> {
        if o >= end {
            return Vec::new();
        }
        let n = self.disks.len() as u64;
        let (first, last) = (o / self.chunk, (end - 1) / self.chunk);
        (0..n.min(last - first + 1))
            .map(|i| {
                let k = first + i;
                let k_last = last - (last - k) % n;
                let from = o.max(k * self.chunk);
                let to = end.min((k_last + 1) * self.chunk);
                let (d, at) = self.place(from);
                let (_, at_last) = self.place(to - 1);
                (d, at, at_last + 1 - at, Vec::new())
            })
            .collect()
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

    fn submit(&mut self, now_ns: u64, id: RequestId, req: Request) -> Option<Response> {
        self.current = id;
        Some(self.service(now_ns, req))
    }

    fn unsettled(&mut self, now_ns: u64) -> Vec<Unsettled> {
        self.unsettled_parts(now_ns)
    }

    fn service(&mut self, now_ns: u64, req: Request) -> Response {
        self.requests += 1;
        if self.held.len() > self.prune_above {
            self.unsettled_parts(now_ns);
        }
        let mut done = now_ns;
        let mut errno = 0;
        match req.kind {
            ReqKind::Read | ReqKind::Write | ReqKind::Discard => {
                let end = (req.offset + req.len).min(self.capacity);
                let o = req.offset.min(end);
                // Each disk gets its pieces of the request, contiguous on it, as one request;
                // a write's with the parts of it (from its start) each carries.
                let runs = if req.kind == ReqKind::Write {
                    self.runs_by_chunk(o, end, req.offset)
                } else {
                    self.runs(o, end)
                };
                for (d, at, len, parts) in runs {
                    let piece = self.pieces;
                    self.pieces += 1;
                    if req.kind == ReqKind::Write {
                        self.held.insert(piece, (self.current, parts));
                    }
                    let r = self.disks[d]
                        .submit(
                            now_ns,
                            piece,
                            Request {
                                kind: req.kind,
                                offset: at,
                                len,
                            },
                        )
                        .expect("a disk knows its completions at once");
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
#[path = "array_tests.rs"]
mod tests;
