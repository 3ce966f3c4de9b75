//! job's parameters: fio's core options under fio's names, with fio's meaning and units
//! (sizes in bytes, `rate` in bytes per second, times in seconds), and the jobs of a fio job
//! file ([`jobs`]): the `groups` parameter holds the file's sections as fio job-file text,
//! each job its `[global]` options, then its own, over the top-level parameters; the
//! `options` parameter holds fio options applied to every job after its own (`--set` on a job
//! file, or any fio option `--set` on `iotrial run job`).

use super::jobfile::{self, Assign};
use super::options;
use super::spec::{Amount, BlockSizes, JobSpec, PerDir};
use crate::params::{Kind, ParamError, ParamSpec, Params};

/// fio's `rw` values the top-level parameter takes.
pub const RW: &[&str] = &[
    "read",
    "write",
    "randread",
    "randwrite",
    "rw",
    "readwrite",
    "randrw",
];

/// The parameter holding the jobs of a job file.
pub const GROUPS: &str = "groups";
/// The parameter holding fio options applied to every job after its own.
pub const OPTIONS: &str = "options";
/// The parameter asking for fio's json+ output beside result.json.
pub const FIO_JSON: &str = "fio_json";

pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("name", Kind::Text, "job", "the job's name (fio's section name); its streams are NAME.0, NAME.1, ..."),
    ParamSpec::new("rw", Kind::Choice(RW), "read", "I/O pattern: read, write, randread, randwrite, rw (= readwrite), randrw"),
    ParamSpec::new("rwmixread", Kind::Count, "50", "rw and randrw: the share of reads").in_unit("%"),
    ParamSpec::new("bs", Kind::FioSize, "4k", "bytes per I/O"),
    ParamSpec::new("size", Kind::FioSize, "256m", "bytes of file (or raw region) each job does its I/O in; without time_based a job stops once it has moved this much"),
    ParamSpec::new("offset", Kind::FioSize, "0", "where in its file or region a job's I/O starts"),
    ParamSpec::new("offset_increment", Kind::FioSize, "0", "job k's I/O starts at offset + k x offset_increment"),
    ParamSpec::new("numjobs", Kind::Count, "1", "parallel jobs (streams) of this description"),
    ParamSpec::new("iodepth", Kind::Count, "1", "I/Os in flight per job (with an asynchronous engine: libaio, io_uring, posixaio)"),
    ParamSpec::new("ioengine", Kind::Choice(ENGINES), "psync", "how a job issues its I/O, as fio's engine of the name: psync (pread/pwrite), sync, vsync, pvsync, pvsync2, libaio (the kernel's native AIO), io_uring (registered buffers and files), posixaio, mmap, null (no I/O: the engine's own cost), falloc, ftruncate"),
    ParamSpec::new("direct", Kind::Bool, "false", "O_DIRECT I/O (fio's default: buffered)"),
    ParamSpec::new("runtime", Kind::Duration, "0", "stop after this long (0: when each job has moved size bytes)"),
    ParamSpec::new("time_based", Kind::Bool, "false", "run for the whole runtime, starting over at the end of the file or region"),
    ParamSpec::new("ramp_time", Kind::Duration, "0", "run this long before the figures start counting"),
    ParamSpec::new("rate", Kind::FioSize, "0", "bytes per second per job, paced at fixed intervals, latency also counted from the intended issue time (0: as fast as possible)").in_unit("bytes/s"),
    ParamSpec::new("rate_iops", Kind::Count, "0", "I/Os per second per job, paced the same way (0: as fast as possible)"),
    ParamSpec::new("fsync", Kind::Count, "0", "fsync the file after every N writes (0: never)"),
    ParamSpec::new("randseed", Kind::Count, "137", "seed of the random offsets (the same seed gives every stack the same offsets)"),
    ParamSpec::new(FIO_JSON, Kind::Bool, "false", "also write fio's json+ output of the trial, fio.json, beside result.json (`iotrial run --fio-json`): fio_jsonplus_clat2csv and fio-plot read it"),
    ParamSpec::new(GROUPS, Kind::Text, "", "the jobs of a fio job file, as job-file text ([name] lines and key=value lines; `[global]` sections apply to the jobs after them), each over the parameters above (empty: one job, the parameters above)"),
    ParamSpec::new(OPTIONS, Kind::Text, "", "fio options applied to every job after its own, `key=value` separated by ';' (what `--set` gives a job file, and any fio option `--set` on this workload)"),
];

/// The engines the top-level `ioengine` parameter takes.
pub const ENGINES: &[&str] = &[
    "psync",
    "sync",
    "vsync",
    "pvsync",
    "pvsync2",
    "libaio",
    "io_uring",
    "posixaio",
    "mmap",
    "null",
    "falloc",
    "ftruncate",
];

/// The job the top-level parameters describe, named `name`.
fn base(p: &Params, name: &str) -> JobSpec {
    let mut j = JobSpec::new(name);
    j.rw = match p.text("rw").as_str() {
        "rw" | "readwrite" => mk_rw(super::spec::RwKind::Mixed, false),
        "randrw" => mk_rw(super::spec::RwKind::Mixed, true),
        "write" => mk_rw(super::spec::RwKind::Write, false),
        "randwrite" => mk_rw(super::spec::RwKind::Write, true),
        "randread" => mk_rw(super::spec::RwKind::Read, true),
        _ => mk_rw(super::spec::RwKind::Read, false),
    };
    j.rwmixread = p.u64("rwmixread").min(100) as u32;
    j.bs = PerDir::all(BlockSizes::Fixed(p.u64("bs")));
    j.size = Amount::Bytes(p.u64("size"));
    j.offset = Amount::Bytes(p.u64("offset"));
    j.offset_increment = Amount::Bytes(p.u64("offset_increment"));
    j.numjobs = p.u64("numjobs");
    j.iodepth = p.u64("iodepth");
    j.ioengine = options::engines::parse(&p.text("ioengine")).expect("a top-level engine");
    j.direct = p.bool("direct");
    j.runtime = p.f64("runtime");
    j.time_based = p.bool("time_based");
    j.ramp_time = p.f64("ramp_time");
    j.rate = PerDir::all(p.u64("rate"));
    j.rate_iops = PerDir::all(p.u64("rate_iops"));
    j.fsync = p.u64("fsync");
    j.randseed = p.u64("randseed");
    j
}

fn mk_rw(kind: super::spec::RwKind, random: bool) -> super::spec::Rw {
    super::spec::Rw {
        kind,
        random,
        modifier: 0,
    }
}

/// The `options` parameter as assignments.
pub fn extra_options(p: &Params) -> Vec<Assign> {
    p.text(OPTIONS)
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => Assign::set(k.trim(), v.trim()),
            None => Assign {
                key: kv.to_string(),
                value: None,
                line: 0,
            },
        })
        .collect()
}

/// An option could not be applied: where (`line` 0 for `options`) and why.
fn apply_all(j: &mut JobSpec, opts: &[Assign]) -> Result<(), (usize, String)> {
    for o in opts {
        match options::apply(j, &o.key, o.value.as_deref()) {
            Ok(Some(note)) => {
                if !j.notes.contains(&note) {
                    j.notes.push(note);
                }
            }
            Ok(None) => {}
            Err(e) => return Err((o.line, e)),
        }
    }
    Ok(())
}

/// The jobs of `p`: the job-file sections of its `groups` parameter, each over the top-level
/// parameters, or the top-level parameters as the one job; `options` over each.
pub fn jobs(p: &Params) -> Result<Vec<JobSpec>, ParamError> {
    let extra = extra_options(p);
    let text = p.text(GROUPS);
    let bad = |(line, m): (usize, String)| {
        let key = if line == 0 { OPTIONS } else { GROUPS };
        let at = if line == 0 {
            String::new()
        } else {
            format!("line {line}: ")
        };
        ParamError::invalid(key, format!("{at}{m}"))
    };
    if text.trim().is_empty() {
        let mut j = base(p, &p.text("name"));
        apply_all(&mut j, &extra).map_err(bad)?;
        super::resolve::resolve(&mut j);
        return Ok(vec![j]);
    }
    let sections = jobfile::sections(&text).map_err(|e| bad((e.line, e.message)))?;
    let mut global: Vec<Assign> = Vec::new();
    let mut out = Vec::new();
    for s in sections {
        if s.global {
            global.extend(s.options);
            continue;
        }
        let mut j = base(p, &s.name);
        apply_all(&mut j, &global).map_err(bad)?;
        apply_all(&mut j, &s.options).map_err(bad)?;
        apply_all(&mut j, &extra).map_err(bad)?;
        super::resolve::resolve(&mut j);
        out.push(j);
    }
    if out.is_empty() {
        return Err(ParamError::invalid(
            GROUPS,
            "no job section; add one such as [job1] after [global]",
        ));
    }
    Ok(out)
}

/// Splits overrides of the job workload: those naming its parameters stay, and fio options
/// (any, once a job file's `groups` is given; the others otherwise) go into `options`.
pub fn route(overrides: &[(String, String)]) -> Vec<(String, String)> {
    let mut kept: Vec<(String, String)> = Vec::new();
    let mut extra: Vec<String> = Vec::new();
    let mut after_groups = false;
    for (k, v) in overrides {
        if k == GROUPS {
            after_groups = true;
            kept.push((k.clone(), v.clone()));
            continue;
        }
        if k == FIO_JSON {
            kept.push((k.clone(), v.clone()));
            continue;
        }
        if k == OPTIONS {
            extra.extend(
                v.split(';')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            );
            continue;
        }
        let param = PARAMS.iter().any(|s| s.name == k);
        // Every workload's own keys (a power cut) are iotrial's, never fio options.
        let common = crate::params::COMMON.iter().any(|s| s.name == k);
        let fio = options::find(k).is_some();
        if !common && (after_groups || (!param && fio)) {
            extra.push(format!("{k}={v}"));
        } else {
            kept.push((k.clone(), v.clone()));
        }
    }
    if !extra.is_empty() {
        kept.push((OPTIONS.into(), extra.join(";")));
    }
    kept
}
