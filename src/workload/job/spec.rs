//! One fio job, typed: what a job section of a fio job file (its `[global]` options above it,
//! then its own) asks for, in fio's terms and units (bytes, seconds, percentages). The option
//! table ([`super::options`]) fills it; the plan (`super::plan`) turns it into streams.

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

/// How random offsets are spread (fio's `random_distribution`).
#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    /// Uniform over the file (with the random map: each block once per pass).
    Random,
    /// Zipf with exponent theta, the hot spot at `center` (0..1) of the file.
    Zipf { theta: f64, center: f64 },
    /// Pareto with shape h.
    Pareto { h: f64, center: f64 },
    /// Normal with a standard deviation of `sigma` % of the file (fio's `normal`, `gauss`).
    Normal { sigma: f64, center: f64 },
    /// (share of the accesses %, share of the file %) per zone, in file order.
    Zoned(Vec<(u32, f64)>),
    /// (share of the accesses %, bytes) per zone, in file order.
    ZonedAbs(Vec<(u32, u64)>),
    /// These block indices in turn; with `stride`, the base moves on by the list's length
    /// after each round.
    Sequence { blocks: Vec<u64>, stride: bool },
}

/// How fio lays out a job's files before it starts (`fallocate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallocate {
    None,
    /// fallocate(2) of the whole file (fio's default, `native`, `1`).
    Native,
    /// posix_fallocate(3).
    Posix,
    /// fallocate with FALLOC_FL_KEEP_SIZE: allocated, the size unchanged.
    Keep,
    /// ftruncate to the size, nothing allocated.
    Truncate,
}

/// Which of its files a job's next I/O goes to (fio's `file_service_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileService {
    /// In turn, this many I/Os each.
    RoundRobin(u64),
    /// One file until it is done, then the next.
    Sequential,
    /// A file at random for each I/O.
    Random,
}

/// fio's `verify`, as a job asks for it.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifySpec {
    pub checksum: crate::verify::Checksum,
    /// Bytes each header covers (`verify_interval`); 0: the smallest write block size.
    pub interval: u64,
    /// The data's pattern (`verify_pattern`).
    pub pattern: Option<Vec<u8>>,
    /// Read what was written back and check it (`do_verify`, on by default).
    pub check: bool,
    /// Check after every this many writes (`verify_backlog`); 0: after each pass.
    pub backlog: u64,
    /// End the job at the first mismatch (`verify_fatal`).
    pub fatal: bool,
    /// Set by iotrial, not by the job: its writes are sealed for the scan after a power cut
    /// ([`super::cut`]), and no verify report is made.
    pub implied: bool,
    /// Write which blocks each write completed to a state file when the job ends
    /// (`verify_state_save`), and read it to check only those (`verify_state_load`).
    pub state_save: bool,
    pub state_load: bool,
    /// fio's `experimental_verify` (iotrial checks the same blocks either way).
    pub experimental: bool,
}

/// How a log's window of `log_avg_msec` is summed up (`log_window_value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogWindow {
    /// The window's mean.
    #[default]
    Avg,
    /// Its largest value.
    Max,
    /// Both: the mean, then the largest.
    Both,
}

/// fio's log files a job asks for (`write_lat_log`, `write_bw_log`, `write_iops_log`), each by
/// its name (empty: the job's).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LogSpec {
    pub lat: Option<String>,
    pub bw: Option<String>,
    pub iops: Option<String>,
    /// Averaged over windows of this many ms (`log_avg_msec`); 0: a line per I/O.
    pub avg_msec: u64,
    /// Each line holds the I/O's offset (`log_offset`).
    pub offset: bool,
    /// A file per job clone (`per_job_logs`, on by default).
    pub per_job: bool,
    /// What a window's line holds (`log_window_value`, `log_max_value`).
    pub window: LogWindow,
    /// Each line also holds the I/O's issue time (`log_issue_time`).
    pub issue_time: bool,
}

/// fio's replay of an iolog (`read_iolog` and the `replay_` options).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplaySpec {
    /// The logs, each with the path it was read from: clone k replays log k (modulo).
    pub logs: Vec<(String, std::sync::Arc<crate::trace::Trace>)>,
    /// How the replay runs (`replay_no_stall`, `replay_time_scale`, `replay_align`,
    /// `replay_scale`, `replay_skip`).
    pub options: crate::trace::replay::ReplayOptions,
    /// Every I/O goes to this one file (`replay_redirect`).
    pub redirect: Option<String>,
}

/// One entry of `cmdprio_bssplit`: I/Os of `bs` bytes, `pct` % of them with a priority (the
/// entry's class, level and hint, or `cmdprio_class`, `cmdprio`, `cmdprio_hint`).
#[derive(Debug, Clone, PartialEq)]
pub struct PrioSplit {
    pub bs: u64,
    pub pct: u32,
    pub class: Option<u16>,
    pub level: Option<u16>,
    pub hint: Option<u16>,
}

/// fio's I/O priorities of a job: its own (`prioclass`, `prio`, `priohint`) and, for libaio
/// and io_uring, per I/O (`cmdprio_percentage`, `cmdprio_class`, `cmdprio`, `cmdprio_hint`,
/// `cmdprio_bssplit`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PrioSpec {
    pub class: Option<u16>,
    pub level: Option<u16>,
    pub hint: Option<u16>,
    pub cmd_pct: PerDir<u32>,
    pub cmd_class: PerDir<u16>,
    pub cmd_level: PerDir<u16>,
    pub cmd_hint: PerDir<u16>,
    pub cmd_bssplit: PerDir<Vec<PrioSplit>>,
}

impl<T: Default> Default for PerDir<T> {
    fn default() -> Self {
        PerDir {
            read: T::default(),
            write: T::default(),
            trim: T::default(),
        }
    }
}

impl PrioSpec {
    /// Whether any I/O carries a priority of its own.
    pub fn per_io(&self) -> bool {
        self.cmd_pct.read > 0
            || self.cmd_pct.write > 0
            || !self.cmd_bssplit.read.is_empty()
            || !self.cmd_bssplit.write.is_empty()
    }
}

/// The ioprio value of `class`, `level` and `hint` (the kernel's IOPRIO_PRIO_VALUE_HINT).
pub fn ioprio(class: u16, level: u16, hint: u16) -> u16 {
    (class << 13) | ((hint & 0x3ff) << 3) | (level & 7)
}

/// What a job's writes carry (fio's buffer options).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BufferSpec {
    /// All zeros (`zero_buffers`).
    pub zero: bool,
    /// New random bytes for every write (`refill_buffers`).
    pub refill: bool,
    /// Each 512-byte sector stamped with the write (`scramble_buffers`, on by default).
    pub scramble: bool,
    /// The share of each chunk that compresses away, % (`buffer_compress_percentage`), and
    /// the chunk (`buffer_compress_chunk`, 512 bytes; 0: the whole write).
    pub compress_pct: u32,
    pub compress_chunk: u64,
    /// The share of writes repeating earlier content, % (`dedupe_percentage`).
    pub dedupe_pct: u32,
    /// Repeats come from a working set (`dedupe_mode=working_set`) of this share of the file
    /// (`dedupe_working_set_percentage`), shared between jobs with `dedupe_global`.
    pub dedupe_working_set: bool,
    pub dedupe_ws_pct: u32,
    pub dedupe_global: bool,
}

/// fio's `zonemode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZoneMode {
    #[default]
    None,
    /// `zonesize` bytes done in each zone of `zonerange`, then `zoneskip` skipped.
    Strided,
    /// Zones with write pointers, emulated on the stack's file or device as fio emulates them
    /// on one that is not a zoned block device.
    Zbd,
}

/// fio's zone options.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ZoneSpec {
    pub mode: ZoneMode,
    pub size: u64,
    /// `zonerange` (0: `zonesize`).
    pub range: u64,
    pub skip: u64,
    /// Zones a job keeps open at once (`max_open_zones`, `job_max_open_zones`); 0: no limit.
    pub max_open: u64,
    pub reset_threshold: f64,
    pub reset_frequency: f64,
    pub read_beyond_wp: bool,
}

/// What fio's steady-state detection watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SteadyMetric {
    Iops,
    Bw,
    /// Mean completion latency.
    Lat,
}

/// fio's `steadystate`: the job ends once its metric per `interval`, over the last `dur`
/// seconds (after `ramp`), stays within `limit`: its largest deviation from the mean, or with
/// `slope` the slope of its fitted line; `percent`: the limit is a % of the mean.
#[derive(Debug, Clone, PartialEq)]
pub struct Steady {
    pub metric: SteadyMetric,
    pub slope: bool,
    pub limit: f64,
    pub percent: bool,
    pub dur: f64,
    pub ramp: f64,
    pub interval: f64,
}

/// fio's latency target: the deepest queue (up to `iodepth`) at which `percentile` % of a
/// `window`'s I/Os complete within `target` (seconds); `run`: go on at it once found.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyTarget {
    pub target: f64,
    pub window: f64,
    pub percentile: f64,
    pub run: bool,
}

/// Which jobs end when a job with `exitall` ends (`exit_what`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitWhat {
    /// Its reporting group's.
    Group,
    /// Every job running (the next stonewall segment still starts).
    Stonewall,
    /// Every job, those of later segments too.
    All,
}

/// fio's `ioengine`s iotrial runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Psync,
    Sync,
    Vsync,
    Pvsync,
    Pvsync2,
    Libaio,
    IoUring,
    Posixaio,
    Mmap,
    Null,
    Falloc,
    Ftruncate,
    FileCreate,
    FileStat,
    FileDelete,
    DirCreate,
    DirStat,
    DirDelete,
}

impl Engine {
    /// Every engine, by fio's name.
    pub const ALL: [(&'static str, Engine); 18] = [
        ("psync", Engine::Psync),
        ("sync", Engine::Sync),
        ("vsync", Engine::Vsync),
        ("pvsync", Engine::Pvsync),
        ("pvsync2", Engine::Pvsync2),
        ("libaio", Engine::Libaio),
        ("io_uring", Engine::IoUring),
        ("posixaio", Engine::Posixaio),
        ("mmap", Engine::Mmap),
        ("null", Engine::Null),
        ("falloc", Engine::Falloc),
        ("ftruncate", Engine::Ftruncate),
        ("filecreate", Engine::FileCreate),
        ("filestat", Engine::FileStat),
        ("filedelete", Engine::FileDelete),
        ("dircreate", Engine::DirCreate),
        ("dirstat", Engine::DirStat),
        ("dirdelete", Engine::DirDelete),
    ];

    pub fn name(self) -> &'static str {
        Engine::ALL
            .iter()
            .find(|(_, e)| *e == self)
            .map_or("psync", |(n, _)| n)
    }

    /// Whether it keeps several I/Os in flight (`iodepth` above 1 means something).
    pub fn is_async(self) -> bool {
        matches!(self, Engine::Libaio | Engine::IoUring | Engine::Posixaio)
    }

    /// Whether its "I/O" is an operation on a whole file or directory (open with create,
    /// stat, unlink, mkdir, rmdir) rather than block I/O.
    pub fn on_files(self) -> bool {
        matches!(
            self,
            Engine::FileCreate
                | Engine::FileStat
                | Engine::FileDelete
                | Engine::DirCreate
                | Engine::DirStat
                | Engine::DirDelete
        )
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
    /// Intervals between paced I/Os drawn from an exponential distribution
    /// (`rate_process=poisson`) instead of fixed.
    pub rate_poisson: bool,
    /// An fsync after every N writes; 0: never.
    pub fsync: u64,
    pub randseed: u64,
    /// Completion-latency percentiles reported, in % (fio's `percentile_list`).
    pub percentiles: Vec<f64>,
    /// `blockalign` per direction: random offsets are multiples of it (0: the smallest block
    /// size).
    pub blockalign: PerDir<u64>,
    /// Block sizes of a range need not be multiples of the smallest (`blocksize_unaligned`).
    pub bs_unaligned: bool,
    /// Bytes each clone moves before it ends (fio's `io_size`), per pass; `None`: `size`.
    pub io_size: Option<Amount>,
    /// Passes over the job's I/O (`loops`).
    pub loops: u64,
    /// Seconds before the job starts: a fixed delay or a random one in a range.
    pub startdelay: (f64, f64),
    /// The job ends after this many I/Os (`number_ios`); 0: no limit.
    pub number_ios: u64,
    /// The job's files: `filename` (several separated by ':'), shared by every job naming
    /// it; `None`: `nrfiles` files of its own per clone.
    pub filename: Option<String>,
    pub nrfiles: u64,
    /// Each file's size, or a range a size is drawn from per file (`filesize`); `None`:
    /// `size / nrfiles`.
    pub filesize: Option<(u64, u64)>,
    pub file_service: FileService,
    /// fio's random map: each block once per pass (false: `norandommap`).
    pub randommap: bool,
    /// The same offsets in every run (`randrepeat`, the default); false: seeded from the clock.
    pub randrepeat: bool,
    pub distribution: Distribution,
    pub fallocate: Fallocate,
    /// Read every file once before the job starts (`pre_read`).
    pub pre_read: bool,
    /// Write until the filesystem or device is full (`fill_device`, `fill_fs`).
    pub fill_device: bool,
    /// Drop the file's page cache before the job starts and between passes (`invalidate`).
    pub invalidate: bool,
    /// Lay a read job's files out again (and truncate a write job's) before it starts
    /// (fio's `overwrite`: writes to a file laid out first, not appended).
    pub overwrite: bool,
    /// fsync a file laid out before the job starts (`create_fsync`).
    pub create_fsync: bool,
    /// Leave the creating of the job's files to its run, when it opens them
    /// (`create_on_open`): nothing is laid out before.
    pub create_on_open: bool,
    /// Remove the job's files when it ends (`unlink`).
    pub unlink: bool,
    /// An fdatasync after every N writes (`fdatasync`); 0: never.
    pub fdatasync: u64,
    /// fsync every file when the job ends (`end_fsync`) and when it closes it
    /// (`fsync_on_close`).
    pub end_fsync: bool,
    pub fsync_on_close: bool,
    /// O_SYNC (`sync=1`, `sync=sync`) or O_DSYNC (`sync=dsync`) writes.
    pub sync: SyncMode,
    /// posix_fadvise of the access pattern before the job starts (`fadvise_hint`).
    pub fadvise: bool,
    /// RWF_HIPRI polled I/O (`hipri`, pvsync2).
    pub hipri: bool,
    /// Submissions handed to the kernel together (`iodepth_batch_submit`); 0: the engine's
    /// way (each at once for libaio, as fio).
    pub batch_submit: u64,
    /// Completions a wait asks for at least (`iodepth_batch_complete_min`); 0: one.
    pub batch_complete_min: u64,
    /// Once the queue is full, completions are taken until this many are in flight before it
    /// is filled again (`iodepth_low`); 0: keep it full.
    pub iodepth_low: u64,
    /// Waits for every job before it to end (`stonewall`, `wait_for_previous`), and starts a
    /// new reporting group.
    pub stonewall: bool,
    /// Starts a new reporting group (`new_group`).
    pub new_group: bool,
    /// Starts once the job of this name has ended (`wait_for`).
    pub wait_for: Option<String>,
    /// fio's `verify`: `None` for none.
    pub verify: Option<VerifySpec>,
    /// A power cut is planned: the files the job lays out are sealed too ([`super::cut`]).
    pub cut: bool,
    /// fio's log files.
    pub logs: LogSpec,
    /// fio's json+ reports the job's reporting group as one (`group_reporting`).
    pub group_reporting: bool,
    /// The options the job was given, in order, as fio's json+ lists them (`job options`).
    pub options: Vec<(String, String)>,
    /// Writes carry this pattern instead of pseudo-random bytes (`buffer_pattern`).
    pub buffer_pattern: Option<Vec<u8>>,
    /// The least bandwidth (bytes/s) and IOPS per direction the job must keep over each
    /// `rate_cycle` (`ratemin`, `rate_iops_min`); below it, the job ends with an error.
    pub ratemin: PerDir<u64>,
    pub rate_iops_min: PerDir<u64>,
    /// Seconds over which `ratemin` is checked (`rate_cycle`).
    pub rate_cycle: f64,
    /// A pause of this many seconds after every `thinktime_blocks` I/Os (`thinktime`); the
    /// first `thinktime_spin` of it spent spinning.
    pub thinktime: f64,
    pub thinktime_spin: f64,
    pub thinktime_blocks: u64,
    /// fio's token flow: the job keeps its share `flow` / (sum of the flows of its `flow_id`) of
    /// their I/Os, waiting `flow_sleep` seconds when ahead.
    pub flow: u64,
    pub flow_id: u64,
    pub flow_sleep: f64,
    /// Errors the job goes on after (`continue_on_error`): reads', writes', verify mismatches'.
    pub continue_read: bool,
    pub continue_write: bool,
    /// Errnos it ignores per direction (`ignore_error`): reads', writes'.
    pub ignore_read: Vec<i32>,
    pub ignore_write: Vec<i32>,
    /// Its I/O priorities.
    pub prio: PrioSpec,
    /// What its writes carry.
    pub buffers: BufferSpec,
    /// Its zones (`zonemode`).
    pub zones: ZoneSpec,
    /// fio's steady-state detection (`steadystate` with `ss_dur`); `None` without.
    pub steady: Option<Steady>,
    /// fio's latency-target search (`latency_target`); `None` without.
    pub latency: Option<LatencyTarget>,
    /// When it ends, the jobs `exit_what` names end too (`exitall`).
    pub exitall: bool,
    pub exit_what: ExitWhat,
    /// Options accepted without effect on the I/O, with why (`filename: ...`).
    pub notes: Vec<String>,
    /// The CPUs its threads may run on (`cpus_allowed`, `cpumask`, `numa_cpu_nodes`), and
    /// whether each clone takes one of them in turn (`cpus_allowed_policy=split`).
    pub cpus: Option<Vec<usize>>,
    pub cpus_split: bool,
    /// The nice value of its threads (`nice`).
    pub nice: Option<i32>,
    /// The file fio's iolog of its I/O is written to (`write_iolog`), in the trial's directory.
    pub iolog_out: Option<String>,
    /// The iologs it replays instead of generating I/O (`read_iolog`).
    pub replay: ReplaySpec,
    /// An I/O waits for the I/Os in flight it overlaps (`serialize_overlap`).
    pub serialize_overlap: bool,
    /// The job ends with ETIMEDOUT when an I/O of the direction takes longer (`max_latency`),
    /// seconds; 0: no limit.
    pub max_latency: PerDir<f64>,
    /// An error that ends the job ends every job (`exitall_on_error`).
    pub exitall_on_error: bool,
    /// Lay the files out, do no I/O (`create_only`).
    pub create_only: bool,
    /// A pause after each this many seconds of I/O (`thinktime_iotime`); 0: by blocks only.
    pub thinktime_iotime: f64,
    /// After a pause the rate's schedule starts again from then (`rate_ignore_thinktime`),
    /// rather than catching up.
    pub rate_ignore_thinktime: bool,
    /// The kernel's write-lifetime hint set on its files (`write_hint`: RWH_WRITE_LIFE_*).
    pub write_hint: Option<u64>,
    /// A percentage `offset` is aligned up to this (`offset_align`); 0: bs.
    pub offset_align: u64,
    /// The names of its own files (`filename_format`: $jobname, $jobnum, $filenum).
    pub filename_format: Option<String>,
    /// `bs` and the like are per sequential and random I/O, not per direction
    /// (`bs_is_seq_rand`).
    pub bs_is_seq_rand: bool,
    /// Only read back and check what an earlier run of the job wrote (`verify_only`).
    pub verify_only: bool,
    /// The share of a random job's I/Os that are random, per direction; the rest go on from
    /// the last (`percentage_random`).
    pub pct_random: PerDir<u32>,
}

/// Synchronous writes (fio's `sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    None,
    /// O_SYNC.
    Sync,
    /// O_DSYNC.
    Dsync,
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
            rate_poisson: false,
            fsync: 0,
            randseed: 137,
            percentiles: FIO_PERCENTILES.to_vec(),
            blockalign: PerDir::all(0),
            bs_unaligned: false,
            io_size: None,
            loops: 1,
            startdelay: (0.0, 0.0),
            number_ios: 0,
            filename: None,
            nrfiles: 1,
            filesize: None,
            file_service: FileService::RoundRobin(1),
            randommap: true,
            randrepeat: true,
            distribution: Distribution::Random,
            fallocate: Fallocate::Native,
            pre_read: false,
            fill_device: false,
            invalidate: true,
            overwrite: false,
            create_fsync: true,
            create_on_open: false,
            unlink: false,
            fdatasync: 0,
            end_fsync: false,
            fsync_on_close: false,
            sync: SyncMode::None,
            fadvise: true,
            hipri: false,
            batch_submit: 0,
            batch_complete_min: 0,
            iodepth_low: 0,
            stonewall: false,
            new_group: false,
            wait_for: None,
            verify: None,
            cut: false,
            ratemin: PerDir::all(0),
            rate_iops_min: PerDir::all(0),
            rate_cycle: 1.0,
            thinktime: 0.0,
            thinktime_spin: 0.0,
            thinktime_blocks: 1,
            flow: 0,
            flow_id: 0,
            flow_sleep: 0.0,
            continue_read: false,
            continue_write: false,
            ignore_read: Vec::new(),
            ignore_write: Vec::new(),
            exitall: false,
            exit_what: ExitWhat::Group,
            steady: None,
            latency: None,
            zones: ZoneSpec {
                reset_frequency: 1.0,
                ..ZoneSpec::default()
            },
            buffers: BufferSpec {
                scramble: true,
                compress_chunk: 512,
                dedupe_ws_pct: 5,
                ..BufferSpec::default()
            },
            prio: PrioSpec {
                cmd_class: PerDir::all(1),
                ..PrioSpec::default()
            },
            logs: LogSpec {
                per_job: true,
                ..LogSpec::default()
            },
            group_reporting: false,
            options: Vec::new(),
            buffer_pattern: None,
            notes: Vec::new(),
            cpus: None,
            cpus_split: false,
            nice: None,
            iolog_out: None,
            replay: ReplaySpec::default(),
            serialize_overlap: false,
            max_latency: PerDir::all(0.0),
            exitall_on_error: false,
            create_only: false,
            thinktime_iotime: 0.0,
            rate_ignore_thinktime: false,
            write_hint: None,
            offset_align: 0,
            filename_format: None,
            bs_is_seq_rand: false,
            verify_only: false,
            pct_random: PerDir::all(100),
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
