//! `flash`: a CompactFlash / SD-like card. The card maps data in allocation units of a few
//! MiB and keeps only a few of them open for writing; a write to a unit that is not open opens
//! it and closes the least recently used one, copying that unit's unwritten rest into a fresh
//! unit and erasing the old one. Sequential writes fill units and only pay the erase; scattered
//! 4 KiB writes pay a whole unit copy each, so they run far below sequential writes, while
//! reads cost a fraction of a millisecond anywhere. With `in_order` (the CompactFlash presets
//! of [`super::cards`]) an open unit also takes writes only in ascending order, as cheap cards
//! do: a write behind the unit's last one makes the card merge the unit (copy and erase) first,
//! so random 4 KiB writes within a few open units still run far below sequential ones.

use super::model::PROBE_RANDOM_IO;
use super::model::{
    DeviceModel, Expectations, ModelDescriptor, ModelError, ReqKind, Request, Response,
};
use crate::params::{Kind, ParamSpec, Params};
use serde_json::{json, Value as Json};

/// Open units the model supports at most.
const MAX_OPEN: usize = 16;

/// Parameters of `flash`.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new("size", Kind::Size, "4GiB", "logical capacity"),
    ParamSpec::new(
        "au",
        Kind::Size,
        "4MiB",
        "allocation unit (mapping and erase granule)",
    ),
    ParamSpec::new(
        "open_units",
        Kind::Count,
        "2",
        "units open for writing at once (1-16)",
    ),
    ParamSpec::new(
        "access",
        Kind::Duration,
        "0.3ms",
        "command and page access time per request",
    ),
    ParamSpec::new("read_rate", Kind::Float, "40", "read transfer rate").in_unit("MB/s"),
    ParamSpec::new(
        "write_rate",
        Kind::Float,
        "20",
        "page program rate of writes",
    )
    .in_unit("MB/s"),
    ParamSpec::new(
        "copy_rate",
        Kind::Float,
        "80",
        "internal copy rate when a unit is closed",
    )
    .in_unit("MB/s"),
    ParamSpec::new("erase", Kind::Duration, "2ms", "erase time of one unit"),
    IN_ORDER,
    REORDER,
];

/// Whether an open unit takes writes in ascending order only (shared with the presets).
pub const IN_ORDER: ParamSpec = ParamSpec::new(
    "in_order",
    Kind::Bool,
    "false",
    "an open unit takes writes in ascending order only; one further behind its last write than `reorder` merges the unit (copy and erase) first",
);

/// How far behind an open unit's last write a write may land without a merge.
pub const REORDER: ParamSpec = ParamSpec::new(
    "reorder",
    Kind::Size,
    "128KiB",
    "with in_order: how far behind an open unit's furthest write a write may land without a merge (the card's write buffer)",
);

/// The `flash` model.
pub static MODEL: ModelDescriptor = ModelDescriptor {
    name: "flash",
    summary: "CompactFlash/SD card: allocation units, few open units, unit copy and erase on scattered writes",
    params: &[PARAMS],
    build: |v| Ok(Box::new(Flash::new(&FlashParams::from_values(v))?)),
    expect: |v, seq_io| expect(&FlashParams::from_values(v), seq_io),
    presets: super::cards::CARDS,
    preset_key: "card",
};

/// Parameters of a flash card, in base units (bytes, seconds, bytes per second).
#[derive(Debug, Clone, PartialEq)]
pub struct FlashParams {
    pub capacity: u64,
    pub au: u64,
    pub open_units: u64,
    pub access: f64,
    pub read_rate: f64,
    pub write_rate: f64,
    pub copy_rate: f64,
    pub erase: f64,
    pub in_order: bool,
    pub reorder: u64,
}

impl FlashParams {
    /// Reads the parameters of [`PARAMS`] from resolved values.
    pub fn from_values(v: &Params) -> Self {
        FlashParams {
            capacity: v.u64("size"),
            au: v.u64("au"),
            open_units: v.u64("open_units"),
            access: v.f64("access"),
            read_rate: v.f64("read_rate") * 1e6,
            write_rate: v.f64("write_rate") * 1e6,
            copy_rate: v.f64("copy_rate") * 1e6,
            erase: v.f64("erase"),
            in_order: v.bool("in_order"),
            reorder: v.u64("reorder"),
        }
    }

    fn check(&self) -> Result<(), ModelError> {
        if self.capacity == 0 {
            return Err(ModelError::new("size", "must be greater than 0"));
        }
        if self.au == 0 || self.au > self.capacity {
            return Err(ModelError::new(
                "au",
                "must be greater than 0 and at most size",
            ));
        }
        if !(1..=MAX_OPEN as u64).contains(&self.open_units) {
            return Err(ModelError::new("open_units", "must be between 1 and 16"));
        }
        for (name, x) in [
            ("read_rate", self.read_rate),
            ("write_rate", self.write_rate),
            ("copy_rate", self.copy_rate),
        ] {
            if !(x > 0.0 && x.is_finite()) {
                return Err(ModelError::new(name, "must be greater than 0"));
            }
        }
        for (name, x) in [("access", self.access), ("erase", self.erase)] {
            if !(x >= 0.0 && x.is_finite()) {
                return Err(ModelError::new(name, "must be 0 or more"));
            }
        }
        Ok(())
    }
}

impl Default for FlashParams {
    fn default() -> Self {
        FlashParams::from_values(&Params::defaults(PARAMS))
    }
}

/// An open unit: which one, bytes written to it since it was opened, where its last write
/// ended (offset within the unit), last use.
#[derive(Debug, Clone, Copy, Default)]
struct Open {
    unit: u64,
    written: u64,
    next: u64,
    used: u64,
}

/// The flash card model.
#[derive(Debug, Clone)]
pub struct Flash {
    capacity: u64,
    au: u64,
    max_open: usize,
    access_ns: f64,
    read_ns_per_byte: f64,
    write_ns_per_byte: f64,
    copy_ns_per_byte: f64,
    erase_ns: f64,
    in_order: bool,
    reorder: u64,
    open: [Open; MAX_OPEN],
    n_open: usize,
    clock: u64,
    busy_until: u64,
    unit_copies: u64,
    copied_bytes: u64,
    erases: u64,
    reads: u64,
    writes: u64,
}

impl Flash {
    pub fn new(p: &FlashParams) -> Result<Self, ModelError> {
        p.check()?;
        Ok(Flash {
            capacity: p.capacity,
            au: p.au,
            max_open: p.open_units as usize,
            access_ns: p.access * 1e9,
            read_ns_per_byte: 1e9 / p.read_rate,
            write_ns_per_byte: 1e9 / p.write_rate,
            copy_ns_per_byte: 1e9 / p.copy_rate,
            erase_ns: p.erase * 1e9,
            in_order: p.in_order,
            reorder: p.reorder,
            open: [Open::default(); MAX_OPEN],
            n_open: 0,
            clock: 0,
            busy_until: 0,
            unit_copies: 0,
            copied_bytes: 0,
            erases: 0,
            reads: 0,
            writes: 0,
        })
    }

    /// Writes `len` bytes at `at` (offset within the unit) into `unit`; returns the time it
    /// costs beyond programming them.
    fn write_unit(&mut self, unit: u64, at: u64, len: u64) -> f64 {
        self.clock += 1;
        let (au, in_order, clock) = (self.au, self.in_order, self.clock);
        let reorder = self.reorder;
        let open = &mut self.open[..self.n_open];
        if let Some(o) = open.iter_mut().find(|o| o.unit == unit) {
            o.used = clock;
            if in_order && at + reorder < o.next {
                // Out of order: merge the unit into a fresh one, then take the write there.
                *o = Open {
                    unit,
                    written: len,
                    next: at + len,
                    used: clock,
                };
                self.erases += 1;
                self.unit_copies += 1;
                self.copied_bytes += au - len;
                return (au - len) as f64 * self.copy_ns_per_byte + self.erase_ns;
            }
            o.written += len;
            o.next = o.next.max(at + len);
            return 0.0;
        }
        let fresh = Open {
            unit,
            written: len,
            next: at + len,
            used: clock,
        };
        if self.n_open < self.max_open {
            self.open[self.n_open] = fresh;
            self.n_open += 1;
            return 0.0;
        }
        let (i, _) = open
            .iter()
            .enumerate()
            .min_by_key(|(_, o)| o.used)
            .unwrap_or((0, &open[0]));
        let rest = self.au - self.open[i].written.min(self.au);
        self.open[i] = fresh;
        self.erases += 1;
        if rest > 0 {
            self.unit_copies += 1;
            self.copied_bytes += rest;
        }
        rest as f64 * self.copy_ns_per_byte + self.erase_ns
    }
}

impl DeviceModel for Flash {
    fn name(&self) -> &'static str {
        "flash"
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn service(&mut self, now_ns: u64, req: Request) -> Response {
        let s = now_ns.max(self.busy_until);
        let cost = match req.kind {
            ReqKind::Read => {
                self.reads += 1;
                self.access_ns + req.len as f64 * self.read_ns_per_byte
            }
            ReqKind::Write => {
                self.writes += 1;
                let mut cost = self.access_ns + req.len as f64 * self.write_ns_per_byte;
                let (mut o, end) = (req.offset, req.offset + req.len);
                while o < end {
                    let unit = o / self.au;
                    let next = ((unit + 1) * self.au).min(end);
                    cost += self.write_unit(unit, o - unit * self.au, next - o);
                    o = next;
                }
                cost
            }
            ReqKind::Flush | ReqKind::Discard => 0.0,
        };
        self.busy_until = s + cost.round() as u64;
        Response {
            done_ns: self.busy_until,
            errno: 0,
        }
    }

    fn stats(&self) -> Json {
        json!({
            "reads": self.reads,
            "writes": self.writes,
            "unit_copies": self.unit_copies,
            "copied_bytes": self.copied_bytes,
            "unit_erases": self.erases,
            "open_units": self.n_open,
        })
    }
}

/// The probe's expectations for a `flash` card: a read costs the access time plus the
/// transfer; a sequential write fills units and pays one erase per unit; a random 4 KiB write
/// misses the open units with probability `1 - open/units` and then pays the copy of a unit's
/// unwritten rest plus an erase (with `in_order`, so do the hits that land behind the reorder window).
pub fn expect(p: &FlashParams, seq_io: u64) -> Result<Expectations, ModelError> {
    p.check()?;
    let io = PROBE_RANDOM_IO as f64;
    let seq = seq_io as f64;
    let units = p.capacity.div_ceil(p.au) as f64;
    let mut miss = (1.0 - p.open_units as f64 / units).max(0.0);
    if p.in_order {
        // A write into an open unit lands further behind its furthest write than the reorder
        // window with probability (1 - w/au)^2 / 2 (both uniform over the unit).
        let w = (p.reorder as f64 / p.au as f64).min(1.0);
        miss += (1.0 - miss) * (1.0 - w).powi(2) / 2.0;
    }
    let close = (p.au as f64 - io).max(0.0) / p.copy_rate + p.erase;
    let read_mbs = seq / (p.access + seq / p.read_rate) * 1e-6;
    Ok(Expectations {
        random_read_ms: (p.access + io / p.read_rate) * 1e3,
        seq_read_outer_mbs: read_mbs,
        seq_read_inner_mbs: read_mbs,
        random_write_iops: 1.0 / (p.access + io / p.write_rate + miss * close),
        seq_write_mbs: seq / (p.access + seq / p.write_rate + p.erase * seq / p.au as f64) * 1e-6,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::SplitMix64;

    fn write(m: &mut Flash, now: u64, offset: u64, len: u64) -> u64 {
        let req = Request {
            kind: ReqKind::Write,
            offset,
            len,
        };
        m.service(now, req).done_ns
    }

    fn seq_write_mbs(p: &FlashParams, io: u64, n: u64) -> f64 {
        let mut m = Flash::new(p).unwrap();
        let mut now = 0;
        for i in 0..n {
            now = write(&mut m, now, i * io, io);
        }
        (n * io) as f64 / now as f64 * 1e3
    }

    fn random_write_iops(p: &FlashParams, n: u64) -> (f64, Json) {
        let mut m = Flash::new(p).unwrap();
        let mut r = SplitMix64::new(5);
        let blocks = p.capacity / 4096;
        let mut now = 0;
        for _ in 0..n {
            now = write(&mut m, now, r.below(blocks) * 4096, 4096);
        }
        (n as f64 / now as f64 * 1e9, m.stats())
    }

    #[test]
    fn random_writes_are_slower_than_sequential_by_the_modeled_factor() {
        let p = FlashParams::default();
        let e = expect(&p, 1 << 20).unwrap();
        let seq = seq_write_mbs(&p, 1 << 20, 400);
        let (iops, stats) = random_write_iops(&p, 5000);
        let rand_mbs = iops * 4096.0 / 1e6;
        assert!((seq / e.seq_write_mbs - 1.0).abs() < 0.01, "{seq} vs {e:?}");
        assert!(
            (iops / e.random_write_iops - 1.0).abs() < 0.01,
            "{iops} vs {e:?}"
        );
        let modeled = e.seq_write_mbs / (e.random_write_iops * 4096.0 / 1e6);
        assert!(
            modeled > 50.0,
            "random writes must run far below sequential: {modeled}"
        );
        assert!(((seq / rand_mbs) / modeled - 1.0).abs() < 0.02);
        assert!(stats["unit_copies"].as_u64().unwrap() > 4900);
    }

    #[test]
    fn more_open_units_absorb_writes_to_few_places() {
        // Four interleaved sequential streams: 2 open units thrash, 4 do not.
        let run = |open_units| {
            let p = FlashParams {
                open_units,
                ..FlashParams::default()
            };
            let mut m = Flash::new(&p).unwrap();
            let mut now = 0;
            for i in 0..256u64 {
                now = write(&mut m, now, (i % 4) * (256 << 20) + (i / 4) * 65536, 65536);
            }
            (now, m.stats()["unit_copies"].as_u64().unwrap())
        };
        let (t2, c2) = run(2);
        let (t4, c4) = run(4);
        assert!(c2 > 200 && c4 == 0, "{c2} {c4}");
        assert!(t2 > 5 * t4);
    }

    #[test]
    fn random_reads_take_a_fraction_of_a_millisecond() {
        let e = expect(&FlashParams::default(), 1 << 20).unwrap();
        assert!(e.random_read_ms > 0.1 && e.random_read_ms < 1.0);
        let mut m = Flash::new(&FlashParams::default()).unwrap();
        let req = Request {
            kind: ReqKind::Read,
            offset: 3 << 30,
            len: 4096,
        };
        let d = m.service(1000, req).done_ns - 1000;
        assert!((d as f64 * 1e-6 - e.random_read_ms).abs() < 1e-3);
    }
}
