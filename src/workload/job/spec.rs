//! One fio job, typed: what a job section of a fio job file (its `[global]` options above it,
//! then its own) asks for, in fio's terms and units (bytes, seconds, percentages). The option
//! table ([`super::options`]) fills it; the plan ([`super::plan`]) turns it into streams.

/// fio's data directions, in fio's order (read, write, trim).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
    Trim,
}

/// A value per data direction (fio's `bs=4k,8k`: reads 4k, writes and trims 8k).
#[derive(Debug, Clone, PartialEq)]
pub struct PerDir<T> {
    pub read: T,
    pub write: T,
    pub trim: T,
}

impl<T: Clone> PerDir<T> {
    /// The same value for every direction.
    pub fn all(v: T) -> PerDir<T> {
        PerDir {
            read: v.clone(),
            write: v.clone(),
            trim: v,
        }
    }

    pub fn get(&self, d: Dir) -> &T {
        match d {
            Dir::Read => &self.read,
            Dir::Write => &self.write,
            Dir::Trim => &self.trim,
        }
    }
}

/// What a job does: fio's `rw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwKind {
    Read,
    Write,
    Trim,
    /// `rw`/`readwrite`, `randrw`: reads and writes mixed by `rwmixread`.
    Mixed,
    /// `trimwrite`, `randtrimwrite`: each block trimmed, then written.
    TrimWrite,
}

/// fio's `rw=KIND[:MODIFIER]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rw {
    pub kind: RwKind,
    pub random: bool,
    /// The offset modifier: for sequential I/O, bytes added after each I/O (negative: going
    /// backwards, `read:-8k`); for random I/O, how many I/Os go sequentially from each random
    /// offset (`randread:8`). 0: none.
    pub modifier: i64,
}

impl Rw {
    /// fio's word for it (without the modifier).
    pub fn word(&self) -> &'static str {
        match (self.kind, self.random) {
            (RwKind::Read, false) => "read",
            (RwKind::Read, true) => "randread",
            (RwKind::Write, false) => "write",
            (RwKind::Write, true) => "randwrite",
            (RwKind::Trim, false) => "trim",
            (RwKind::Trim, true) => "randtrim",
            (RwKind::Mixed, false) => "rw",
            (RwKind::Mixed, true) => "randrw",
            (RwKind::TrimWrite, false) => "trimwrite",
            (RwKind::TrimWrite, true) => "randtrimwrite",
        }
    }

    /// Whether the job reads (so its file must hold data before it starts).
    pub fn reads(&self) -> bool {
        matches!(self.kind, RwKind::Read | RwKind::Mixed)
    }

    /// Whether the job writes.
    pub fn writes(&self) -> bool {
        matches!(self.kind, RwKind::Write | RwKind::Mixed | RwKind::TrimWrite)
    }
}

/// How a random job's modifier is used (fio's `rw_sequencer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sequencer {
    /// The next N I/Os go on from the random offset.
    Sequential,
    /// The same offset N times.
    Identical,
}

/// Block sizes of one direction: fio's `bs`, `bsrange` or `bssplit`.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockSizes {
    Fixed(u64),
    /// Any multiple of the smallest between min and max (fio's `bsrange`).
    Range {
        min: u64,
        max: u64,
    },
    /// Sizes with their share of the I/Os in % (fio's `bssplit`), summing to 100.
    Split(Vec<(u64, u32)>),
}

impl BlockSizes {
    /// The largest size an I/O can have.
    pub fn max(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { max, .. } => *max,
            BlockSizes::Split(v) => v.iter().map(|x| x.0).max().unwrap_or(0),
        }
    }

    /// The smallest.
    pub fn min(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { min, .. } => *min,
            BlockSizes::Split(v) => v.iter().map(|x| x.0).min().unwrap_or(0),
        }
    }
}

/// A size or offset as fio takes it: bytes, a percentage of the file or device, or zones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Amount {
    Bytes(u64),
    /// Of the file's or device's size (`size=50%`).
    Percent(f64),
    /// Of `zonesize` (`offset=524z`).
    Zones(u64),
}

impl Amount {
    /// In bytes, of a whole of `whole` bytes and zones of `zone` bytes.
    pub fn of(&self, whole: u64, zone: u64) -> u64 {
        match *self {
            Amount::Bytes(b) => b,
            Amount::Percent(p) => (whole as f64 * p / 100.0) as u64,
            Amount::Zones(z) => z * zone,
        }
    }
}

/// fio's `ioengine`s iotrial runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Psync,
    IoUring,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Psync => "psync",
            Engine::IoUring => "io_uring",
        }
    }
}

/// One fio job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// fio's job name: the section's, or its `name=`.
    pub name: String,
    pub description: String,
    pub rw: Rw,
    pub rw_sequencer: Sequencer,
    /// Share of reads in a mixed job, %.
    pub rwmixread: u32,
    pub bs: PerDir<BlockSizes>,
    /// Bytes of file (or raw region) each clone does its I/O in.
    pub size: Amount,
    pub offset: Amount,
    pub offset_increment: Amount,
    pub numjobs: u64,
    pub iodepth: u64,
    pub ioengine: Engine,
    pub direct: bool,
    /// Seconds; 0: none.
    pub runtime: f64,
    pub time_based: bool,
    pub ramp_time: f64,
    /// Bytes per second per direction; 0: unpaced.
    pub rate: PerDir<u64>,
    pub rate_iops: PerDir<u64>,
    /// An fsync after every N writes; 0: never.
    pub fsync: u64,
    pub randseed: u64,
    /// Completion-latency percentiles reported, in % (fio's `percentile_list`).
    pub percentiles: Vec<f64>,
    /// Options accepted without effect on the I/O, with why (`filename: ...`).
    pub notes: Vec<String>,
}

/// fio's default percentiles.
pub const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

impl JobSpec {
    /// A job named `name` with fio's defaults (and iotrial's where fio has none: 256 MiB of
    /// file, the seed 137).
    pub fn new(name: &str) -> JobSpec {
        JobSpec {
            name: name.to_string(),
            description: String::new(),
            rw: Rw {
                kind: RwKind::Read,
                random: false,
                modifier: 0,
            },
            rw_sequencer: Sequencer::Sequential,
            rwmixread: 50,
            bs: PerDir::all(BlockSizes::Fixed(4096)),
            size: Amount::Bytes(256 << 20),
            offset: Amount::Bytes(0),
            offset_increment: Amount::Bytes(0),
            numjobs: 1,
            iodepth: 1,
            ioengine: Engine::Psync,
            direct: false,
            runtime: 0.0,
            time_based: false,
            ramp_time: 0.0,
            rate: PerDir::all(0),
            rate_iops: PerDir::all(0),
            fsync: 0,
            randseed: 137,
            percentiles: FIO_PERCENTILES.to_vec(),
            notes: Vec::new(),
        }
    }

    /// The block size of every I/O when it has one size for reads and writes.
    pub fn fixed_bs(&self) -> Option<u64> {
        match (&self.bs.read, &self.bs.write) {
            (BlockSizes::Fixed(r), BlockSizes::Fixed(w)) if r == w => Some(*r),
            _ => None,
        }
    }
}
