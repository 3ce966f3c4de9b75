//! The core of fio's job options: what a job does (`rw`, `rwmixread`, `bs`), where
//! (`size`, `offset`, `offset_increment`), how many and how deep (`numjobs`, `iodepth`,
//! `ioengine`, `direct`), for how long (`runtime`, `time_based`, `ramp_time`), how fast
//! (`rate`, `rate_iops`), and what is reported (`name`, `description`, `percentile_list`);
//! `kb_base` (1024 only) and `offset_align`.

use crate::workload::job::options::values::{bytes, int, Arg};
use crate::workload::job::options::{engines, honoured, Opt};
use crate::workload::job::spec::{BlockSizes, JobSpec, Rw, RwKind};

fn rw(j: &mut JobSpec, a: &Arg) -> Result<(), String> {
    let v = a.need()?;
    let (word, modifier) = match v.split_once(':') {
        Some((w, m)) => (w.trim(), Some(m.trim())),
        None => (v, None),
    };
    let (kind, random) = match word {
        "read" => (RwKind::Read, false),
        "write" => (RwKind::Write, false),
        "trim" => (RwKind::Trim, false),
        "randread" => (RwKind::Read, true),
        "randwrite" => (RwKind::Write, true),
        "randtrim" => (RwKind::Trim, true),
        "rw" | "readwrite" => (RwKind::Mixed, false),
        "randrw" => (RwKind::Mixed, true),
        "trimwrite" => (RwKind::TrimWrite, false),
        "randtrimwrite" => (RwKind::TrimWrite, true),
        o => {
            return Err(format!(
                "{}={o}: expected read, write, trim, randread, randwrite, randtrim, rw (readwrite), randrw, trimwrite or randtrimwrite",
                a.key
            ))
        }
    };
    let modifier = match modifier {
        None | Some("") => 0,
        Some(m) => {
            let (neg, m) = match m.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, m.strip_prefix('+').unwrap_or(m)),
            };
            let n = bytes(m).map_err(|e| format!("{}={v}: the offset modifier: {e}", a.key))?;
            if neg {
                -(n as i64)
            } else {
                n as i64
            }
        }
    };
    j.rw = Rw {
        kind,
        random,
        modifier,
    };
    Ok(())
}

fn percent(a: &Arg) -> Result<u32, String> {
    let p = a.int()?;
    if p > 100 {
        return Err(format!("{}={p}: a percentage, 0 to 100", a.key));
    }
    Ok(p as u32)
}

fn block_size(v: &str) -> Result<BlockSizes, String> {
    let b = bytes(v)?;
    if b == 0 {
        return Err("a block size must be greater than 0".into());
    }
    Ok(BlockSizes::Fixed(b))
}

fn percentile_list(j: &mut JobSpec, a: &Arg) -> Result<(), String> {
    let v = a.need()?;
    let mut out = Vec::new();
    for p in v.split(':').filter(|s| !s.trim().is_empty()) {
        let x: f64 = p
            .trim()
            .parse()
            .ok()
            .filter(|x| *x > 0.0 && *x <= 100.0)
            .ok_or_else(|| format!("{}: '{p}' is not a percentile in (0, 100]", a.key))?;
        out.push(x);
    }
    if out.is_empty() || out.len() > 20 {
        return Err(format!(
            "{}: give 1 to 20 percentiles separated by ':' (99.5:99.9)",
            a.key
        ));
    }
    j.percentiles = out;
    Ok(())
}

/// The core options.
pub static OPTIONS: &[Opt] = &[
    opt!(["name"], |j, a| j.name = a.need()?.to_string()),
    opt!(["description"], |j, a| j.description =
        a.value.unwrap_or("").trim().to_string()),
    honoured(&["rw", "readwrite"], rw),
    opt!(["rwmixread"], |j, a| j.rwmixread = percent(a)?),
    opt!(["rwmixwrite"], |j, a| j.rwmixread = 100 - percent(a)?),
    opt!(["bs", "blocksize"], |j, a| j.bs =
        a.dirs(&j.bs, block_size)?),
    opt!(["size"], |j, a| j.size = a.amount()?).default_differs(
        "256 MiB per clone (fio takes the size of an existing file or device, and refuses a job that would create a file without one)",
    ),
    opt!(["kb_base"], |_j, a| {
        if a.int()? != 1024 {
            return Err(format!(
                "{}={}: iotrial reads every size suffix as a power of 1024 (fio's default, kb_base=1024); write the sizes in bytes or with 1024-based suffixes",
                a.key,
                a.need()?
            ));
        }
    })
    .differs("only 1024, fio's default: kb_base=1000 is refused"),
    opt!(["offset_align"], |j, a| j.offset_align = a.bytes()?),
    opt!(["offset"], |j, a| j.offset = a.amount()?),
    opt!(["offset_increment"], |j, a| j.offset_increment =
        a.amount()?),
    opt!(["numjobs"], |j, a| j.numjobs = a.int()?),
    opt!(["iodepth"], |j, a| j.iodepth = a.int()?),
    opt!(["ioengine"], |j, a| j.ioengine = engines::parse(a.need()?)?).differs(
        "iotrial runs psync, sync, vsync, pvsync, pvsync2, libaio, io_uring, posixaio, mmap, null, falloc, ftruncate and the six file engines; the others are refused with why",
    ),
    opt!(["direct"], |j, a| j.direct = a.flag()?),
    opt!(["buffered"], |j, a| j.direct = !a.flag()?),
    opt!(["runtime", "timeout"], |j, a| j.runtime = a.seconds(1.0)?),
    opt!(["time_based"], |j, a| j.time_based = a.flag()?),
    opt!(["ramp_time"], |j, a| j.ramp_time = a.seconds(1.0)?),
    opt!(["rate"], |j, a| j.rate = a.dirs(&j.rate, bytes)?),
    opt!(["rate_iops"], |j, a| j.rate_iops =
        a.dirs(&j.rate_iops, int)?),
    opt!(["rate_process"], |j, a| j.rate_poisson =
        a.choice(&["linear", "poisson"])? == "poisson"),
    opt!(["fsync"], |j, a| j.fsync = a.int()?),
    opt!(["randseed"], |j, a| j.randseed = a.int()?).differs(
        "iotrial draws with its own generator: a seed gives the same offsets in every iotrial run, not fio's offsets",
    ),
    honoured(&["percentile_list"], percentile_list),
    opt!(["hipri"], |j, a| j.hipri = a.flag()?).differs(
        "pvsync2's RWF_HIPRI; io_uring's polled I/O is refused (the stack's loop and FUSE devices have no poll queues)",
    ),
    opt!(["iodepth_batch_submit", "iodepth_batch"], |j, a| j
        .batch_submit =
        a.int()?),
    opt!(
        ["iodepth_batch_complete_min", "iodepth_batch_complete"],
        |j, a| j.batch_complete_min = a.int()?
    ),
    opt!(["iodepth_low"], |j, a| j.iodepth_low = a.int()?),
    opt!(["stonewall", "wait_for_previous"], |j, a| j.stonewall =
        a.flag()?),
    opt!(["new_group"], |j, a| j.new_group = a.flag()?),
    opt!(["wait_for"], |j, a| j.wait_for =
        Some(a.need()?.to_string())),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::job::options::apply;

    fn job(opts: &[(&str, Option<&str>)]) -> Result<JobSpec, String> {
        let mut j = JobSpec::new("j");
        for (k, v) in opts {
            apply(&mut j, k, *v)?;
        }
        Ok(j)
    }

    #[test]
    fn rw_with_its_modifier() {
        let j = job(&[("rw", Some("read:-8k"))]).unwrap();
        assert_eq!(
            (j.rw.kind, j.rw.random, j.rw.modifier),
            (RwKind::Read, false, -8192)
        );
        let j = job(&[("readwrite", Some("randread:8"))]).unwrap();
        assert_eq!((j.rw.random, j.rw.modifier), (true, 8));
        assert!(job(&[("rw", Some("sideways"))])
            .unwrap_err()
            .contains("randrw"));
    }

    #[test]
    fn mixes_sizes_and_percentiles() {
        let j = job(&[
            ("rwmixread", Some("60")),
            ("rwmixwrite", Some("40")),
            ("bs", Some("4K")),
            ("percentile_list", Some("99.5:99.9")),
            ("buffered", Some("0")),
        ])
        .unwrap();
        assert_eq!(j.rwmixread, 60);
        assert_eq!(j.fixed_bs(), Some(4096));
        assert_eq!(j.percentiles, [99.5, 99.9]);
        assert!(j.direct);
        assert!(job(&[("rwmixread", Some("101"))]).is_err());
        assert!(job(&[("bs", Some("0"))]).is_err());
        assert!(job(&[("percentile_list", Some("0"))]).is_err());
    }
}
