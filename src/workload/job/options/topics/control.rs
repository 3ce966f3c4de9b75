//! fio's options that steer a job while it runs: the least rate it must keep (`ratemin`,
//! `rate_iops_min`, `rate_cycle`), pauses (`thinktime`, `thinktime_spin`, `thinktime_blocks`,
//! `thinktime_blocks_type`, `thinktime_iotime`, `rate_ignore_thinktime`), its share of a token
//! flow (`flow`, `flow_id`, `flow_sleep`), the longest an I/O may take (`max_latency`), I/Os
//! that wait for those they overlap (`serialize_overlap`), what errors it goes on after
//! (`continue_on_error`, `ignore_error`), and which jobs end with it (`exitall`, `exit_what`,
//! `exitall_on_error`).

use crate::workload::job::options::values::{bytes, int, seconds, Arg};
use crate::workload::job::options::{honoured, Opt};
use crate::workload::job::spec::{ExitWhat, JobSpec};

/// An errno by its name (`ENOSPC`) or number.
fn errno_of(s: &str) -> Result<i32, String> {
    let t = s.trim();
    if let Ok(n) = t.parse::<i32>() {
        return Ok(n);
    }
    (1..200)
        .find(|&n| crate::engine::samples::sample::errno_name(n) == t)
        .ok_or_else(|| format!("'{t}' is not an errno name (ENOSPC) or number"))
}

fn ignore_error(j: &mut JobSpec, a: &Arg) -> Result<(), String> {
    let v = a.need()?;
    let lists: Vec<&str> = v.split(',').collect();
    let parse = |l: &str| -> Result<Vec<i32>, String> {
        l.split(':')
            .filter(|x| !x.trim().is_empty())
            .map(errno_of)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{}: {e}", a.key))
    };
    if let Some(r) = lists.first() {
        j.ignore_read = parse(r)?;
    }
    if let Some(w) = lists.get(1) {
        j.ignore_write = parse(w)?;
    }
    Ok(())
}

fn continue_on_error(j: &mut JobSpec, a: &Arg) -> Result<(), String> {
    let (r, w) = match a.choice(&["none", "0", "read", "write", "io", "verify", "all", "1"])? {
        "read" => (true, false),
        "write" => (false, true),
        "io" | "all" | "1" => (true, true),
        _ => (false, false),
    };
    j.continue_read = r;
    j.continue_write = w;
    Ok(())
}

/// The options of this module.
pub static OPTIONS: &[Opt] = &[
    opt!(["rate_min", "ratemin"], |j, a| j.ratemin =
        a.dirs(&j.ratemin, bytes)?),
    opt!(["rate_iops_min"], |j, a| j.rate_iops_min =
        a.dirs(&j.rate_iops_min, int)?),
    opt!(["rate_cycle"], |j, a| j.rate_cycle = a.seconds(1e-3)?),
    opt!(["thinktime"], |j, a| j.thinktime = a.seconds(1e-6)?),
    opt!(["thinktime_spin"], |j, a| j.thinktime_spin =
        a.seconds(1e-6)?),
    opt!(["thinktime_blocks"], |j, a| j.thinktime_blocks =
        a.int()?.max(1)),
    opt!(["thinktime_blocks_type"], |_j, a| {
        a.choice(&["complete", "issue"])?;
    })
    .differs(
        "iotrial counts issued I/Os and lets the queue drain before each pause, for either type: at queue depth 1 the pauses fall where fio's do, deeper it pauses after N I/Os have been issued and completed",
    ),
    opt!(["thinktime_iotime"], |j, a| j.thinktime_iotime =
        a.seconds(1.0)?),
    opt!(["rate_ignore_thinktime"], |j, a| j.rate_ignore_thinktime =
        a.flag()?),
    opt!(["max_latency"], |j, a| j.max_latency =
        a.dirs(&j.max_latency, |v| seconds(v, 1e-6))?),
    opt!(["serialize_overlap"], |j, a| j.serialize_overlap =
        a.flag()?),
    opt!(["exitall_on_error"], |j, a| j.exitall_on_error =
        a.flag()?),
    opt!(["flow"], |j, a| {
        let v = a.need()?;
        let w: i64 = v.parse().map_err(|_| format!("flow={v}: a whole number"))?;
        // Older fio took a negative weight; its size is the weight.
        j.flow = w.unsigned_abs();
    }),
    opt!(["flow_id"], |j, a| j.flow_id = a.int()?),
    opt!(["flow_sleep"], |j, a| j.flow_sleep = a.seconds(1e-6)?),
    honoured(&["continue_on_error"], continue_on_error),
    honoured(&["ignore_error"], ignore_error),
    opt!(["exitall"], |j, a| j.exitall = a.flag()?),
    opt!(["exit_what"], |j, a| {
        j.exit_what = match a.choice(&["group", "stonewall", "all"])? {
            "stonewall" => ExitWhat::Stonewall,
            "all" => ExitWhat::All,
            _ => ExitWhat::Group,
        }
    }),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::job::options::apply;

    #[test]
    fn errors_exits_and_flows() {
        let mut j = JobSpec::new("j");
        for (k, v) in [
            ("continue_on_error", "write"),
            ("ignore_error", ",ENOSPC:122"),
            ("exit_what", "stonewall"),
            ("thinktime", "2000"),
            ("flow", "-8"),
            ("ratemin", "1024"),
        ] {
            apply(&mut j, k, Some(v)).unwrap();
        }
        assert_eq!((j.continue_read, j.continue_write), (false, true));
        assert_eq!(
            (j.ignore_read.clone(), j.ignore_write.clone()),
            (vec![], vec![libc::ENOSPC, 122])
        );
        assert_eq!(j.exit_what, ExitWhat::Stonewall);
        assert!((j.thinktime - 0.002).abs() < 1e-12);
        assert_eq!((j.flow, j.ratemin.read), (8, 1024));
        assert!(apply(&mut j, "ignore_error", Some("ENOPE")).is_err());
    }
}
