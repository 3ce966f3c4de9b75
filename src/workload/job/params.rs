//! job's parameters: fio's core options under fio's names, with fio's meaning and units
//! (sizes in bytes, `rate` in bytes per second, times in seconds), and the job groups of a fio
//! job file ([`groups`]): each group is the top-level parameters (fio's `[global]`) with its
//! section's options over them.

use crate::params::{Kind, ParamError, ParamSpec, Params};

/// fio's `rw` values iotrial runs.
pub const RW: &[&str] = &[
    "read",
    "write",
    "randread",
    "randwrite",
    "rw",
    "readwrite",
    "randrw",
];

/// fio's `ioengine` values iotrial runs.
pub const IOENGINES: &[&str] = &["psync", "io_uring"];

/// The parameter holding the job groups of a job file.
pub const GROUPS: &str = "groups";

pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("name", Kind::Text, "job", "the job's name (fio's section name); its streams are NAME.0, NAME.1, ..."),
    ParamSpec::new("rw", Kind::Choice(RW), "read", "I/O pattern: read, write, randread, randwrite, rw (= readwrite), randrw"),
    ParamSpec::new("rwmixread", Kind::Count, "50", "rw and randrw: the share of reads").in_unit("%"),
    ParamSpec::new("bs", Kind::FioSize, "4k", "bytes per I/O"),
    ParamSpec::new("size", Kind::FioSize, "256m", "bytes of file (or raw region) each job does its I/O in; without time_based a job stops once it has moved this much"),
    ParamSpec::new("offset", Kind::FioSize, "0", "where in its file or region a job's I/O starts"),
    ParamSpec::new("offset_increment", Kind::FioSize, "0", "job k's I/O starts at offset + k x offset_increment"),
    ParamSpec::new("numjobs", Kind::Count, "1", "parallel jobs (streams) of this description"),
    ParamSpec::new("iodepth", Kind::Count, "1", "I/Os in flight per job (above 1 needs ioengine=io_uring)"),
    ParamSpec::new("ioengine", Kind::Choice(IOENGINES), "psync", "psync (pread/pwrite, one at a time) or io_uring (iodepth in flight, registered buffers and file)"),
    ParamSpec::new("direct", Kind::Bool, "false", "O_DIRECT I/O (fio's default: buffered)"),
    ParamSpec::new("runtime", Kind::Duration, "0", "stop after this long (0: when each job has moved size bytes)"),
    ParamSpec::new("time_based", Kind::Bool, "false", "run for the whole runtime, starting over at the end of the file or region"),
    ParamSpec::new("ramp_time", Kind::Duration, "0", "run this long before the figures start counting"),
    ParamSpec::new("rate", Kind::FioSize, "0", "bytes per second per job, paced at fixed intervals, latency also counted from the intended issue time (0: as fast as possible)").in_unit("bytes/s"),
    ParamSpec::new("rate_iops", Kind::Count, "0", "I/Os per second per job, paced the same way (0: as fast as possible)"),
    ParamSpec::new("fsync", Kind::Count, "0", "fsync the file after every N writes (0: never)"),
    ParamSpec::new("randseed", Kind::Count, "137", "seed of the random offsets (the same seed gives every stack the same offsets)"),
    ParamSpec::new(GROUPS, Kind::Text, "", "job groups run at once, from a fio job file: NAME:key=value,key=value;NAME:... each over the parameters above (empty: one group, the parameters above)"),
];

/// The parameters every group of a plan must agree on: one phase runs them all.
pub const PHASE_WIDE: &[&str] = &["runtime", "time_based", "ramp_time", "direct", "randseed"];

/// One job group: its name and its parameters, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub name: String,
    pub params: Params,
}

/// The job groups of `p`: the groups of its `groups` parameter, each resolved over the
/// top-level parameters, or the top-level parameters as the one group.
pub fn groups(p: &Params) -> Result<Vec<Group>, ParamError> {
    let text = p.text(GROUPS);
    let text = text.trim();
    if text.is_empty() {
        return Ok(vec![Group {
            name: p.text("name"),
            params: p.clone(),
        }]);
    }
    let base: Vec<(String, String)> = p
        .assignments()
        .into_iter()
        .filter(|(k, _)| k != GROUPS)
        .collect();
    let mut out = Vec::new();
    for part in text.split(';').filter(|s| !s.trim().is_empty()) {
        let (name, opts) = part.split_once(':').unwrap_or((part, ""));
        let name = name.trim();
        if name.is_empty() || out.iter().any(|g: &Group| g.name == name) {
            return Err(ParamError::invalid(
                GROUPS,
                format!("group '{part}' needs a name of its own before ':'"),
            ));
        }
        let mut over = base.clone();
        over.push(("name".into(), name.to_string()));
        for kv in opts.split(',').filter(|s| !s.trim().is_empty()) {
            let (k, v) = crate::params::split_assignment(kv)?;
            if k == GROUPS {
                return Err(ParamError::invalid(GROUPS, "a group cannot hold groups"));
            }
            over.push((k, v));
        }
        let params = Params::resolve("job", PARAMS, &over)?;
        out.push(Group {
            name: name.to_string(),
            params,
        });
    }
    for key in PHASE_WIDE {
        let first = out[0].params.to_json()[key].clone();
        if let Some(g) = out.iter().find(|g| g.params.to_json()[key] != first) {
            return Err(ParamError::invalid(
                key,
                format!(
                    "group {} has another {key} than group {}; every group runs in one phase, so they must agree",
                    g.name, out[0].name
                ),
            ));
        }
    }
    Ok(out)
}
