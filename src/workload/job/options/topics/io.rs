//! fio's options of where and how much a job does its I/O: block sizes (`bsrange`,
//! `bssplit`, `blockalign`, `blocksize_unaligned`), how offsets are drawn (`norandommap`,
//! `randrepeat`, `random_generator`, `random_distribution`, `rw_sequencer`), and how long a job
//! lasts (`io_size`, `loops`, `number_ios`, `startdelay`).

use crate::workload::job::options::values::{bytes, int, seconds, Arg};
use crate::workload::job::options::{honoured, Opt};
use crate::workload::job::spec::{BlockSizes, Distribution, JobSpec, Sequencer};

/// `min-max` (`4k-4k`), fio's `bsrange`.
fn range(v: &str) -> Result<BlockSizes, String> {
    let (a, b) = v
        .split_once('-')
        .or_else(|| v.split_once(':'))
        .ok_or_else(|| format!("'{v}' is not a range such as 4k-16k"))?;
    let (mut min, mut max) = (bytes(a)?, bytes(b)?);
    if min > max {
        std::mem::swap(&mut min, &mut max);
    }
    if min == 0 {
        return Err("a block size must be greater than 0".into());
    }
    Ok(BlockSizes::Range { min, max })
}

/// `size/percent:size/percent...`, blank percentages sharing what is left (fio's `bssplit`).
fn split(v: &str) -> Result<BlockSizes, String> {
    let mut out: Vec<(u64, Option<u32>)> = Vec::new();
    for part in v.split(':').filter(|p| !p.trim().is_empty()) {
        let (size, pct) = part.split_once('/').unwrap_or((part, ""));
        let b = bytes(size)?;
        if b == 0 {
            return Err("a block size must be greater than 0".into());
        }
        let p = match pct.trim() {
            "" => None,
            p => Some(int(p)? as u32),
        };
        out.push((b, p));
    }
    if out.is_empty() || out.len() > 64 {
        return Err(format!(
            "'{v}' must give 1 to 64 sizes as size/percent:size/percent"
        ));
    }
    let given: u32 = out.iter().filter_map(|x| x.1).sum();
    if given > 100 {
        return Err(format!(
            "the percentages of '{v}' add up to {given}, more than 100"
        ));
    }
    let blank = out.iter().filter(|x| x.1.is_none()).count() as u32;
    let mut left = 100 - given;
    let mut split: Vec<(u64, u32)> = Vec::with_capacity(out.len());
    let mut blanks_seen = 0;
    for (b, p) in out {
        let p = match p {
            Some(p) => p,
            None => {
                blanks_seen += 1;
                // The last blank takes what the even shares leave.
                let share = if blanks_seen == blank {
                    left
                } else {
                    (100 - given) / blank
                };
                left -= share;
                share
            }
        };
        split.push((b, p));
    }
    if blank == 0 && given != 100 {
        return Err(format!(
            "the percentages of '{v}' add up to {given}; they must add up to 100"
        ));
    }
    Ok(BlockSizes::Split(split))
}

/// `[center]` after a distribution's parameter.
fn center(parts: &[&str], default: f64) -> Result<f64, String> {
    match parts.get(2) {
        None => Ok(default),
        Some(c) => c
            .parse::<f64>()
            .ok()
            .filter(|c| (0.0..=1.0).contains(c))
            .ok_or_else(|| format!("the center '{c}' must be between 0 and 1")),
    }
}

/// fio's `random_distribution`.
fn distribution(j: &mut JobSpec, a: &Arg) -> Result<(), String> {
    let v = a.need()?;
    let bad = |m: String| format!("{}={v}: {m}", a.key);
    let (kind, rest) = v.split_once(':').unwrap_or((v, ""));
    let param = |name: &str| -> Result<f64, String> {
        rest.split(':')
            .next()
            .and_then(|x| x.trim().parse::<f64>().ok())
            .filter(|x| x.is_finite())
            .ok_or_else(|| bad(format!("{name} needs its parameter ({name}:1.2)")))
    };
    let parts: Vec<&str> = v.split(':').collect();
    j.distribution = match kind.trim() {
        "random" => Distribution::Random,
        "zipf" => {
            let theta = param("zipf")?;
            if theta == 1.0 || theta <= 0.0 {
                return Err(bad("zipf's theta must be above 0 and not 1".into()));
            }
            Distribution::Zipf {
                theta,
                center: center(&parts, -1.0).map_err(bad)?,
            }
        }
        "pareto" => {
            let h = param("pareto")?;
            if !(0.0..1.0).contains(&h) || h == 0.0 {
                return Err(bad("pareto's h must be between 0 and 1".into()));
            }
            Distribution::Pareto {
                h,
                center: center(&parts, -1.0).map_err(bad)?,
            }
        }
        "normal" | "gauss" => {
            let sigma = param("normal")?;
            if !(0.0..=100.0).contains(&sigma) {
                return Err(bad("normal's deviation is a percentage, 0 to 100".into()));
            }
            Distribution::Normal {
                sigma,
                center: center(&parts, 0.5).map_err(bad)?,
            }
        }
        "zoned" | "zoned_abs" => {
            if rest.contains(',') {
                return Err(bad(
                    "iotrial takes one set of zones for reads, writes and trims".into(),
                ));
            }
            let abs = kind.trim() == "zoned_abs";
            let mut zones_pct = Vec::new();
            let mut zones_abs = Vec::new();
            for z in rest.split(':').filter(|z| !z.trim().is_empty()) {
                let (p, s) = z
                    .split_once('/')
                    .ok_or_else(|| bad(format!("zone '{z}' is not access%/size")))?;
                let p = int(p).map_err(bad)? as u32;
                if abs {
                    zones_abs.push((p, bytes(s).map_err(bad)?));
                } else {
                    let s = match s.trim() {
                        "" => -1.0,
                        s => s
                            .parse::<f64>()
                            .map_err(|_| bad(format!("'{s}' is not a percentage")))?,
                    };
                    zones_pct.push((p, s));
                }
            }
            let access: u32 = zones_pct
                .iter()
                .map(|z| z.0)
                .chain(zones_abs.iter().map(|z| z.0))
                .sum();
            if access != 100 {
                return Err(bad(format!(
                    "the zones' access shares add up to {access}, not 100"
                )));
            }
            if abs {
                Distribution::ZonedAbs(zones_abs)
            } else {
                let given: f64 = zones_pct.iter().filter(|z| z.1 >= 0.0).map(|z| z.1).sum();
                let blank = zones_pct.iter().filter(|z| z.1 < 0.0).count() as f64;
                for z in zones_pct.iter_mut().filter(|z| z.1 < 0.0) {
                    z.1 = (100.0 - given).max(0.0) / blank;
                }
                let total: f64 = zones_pct.iter().map(|z| z.1).sum();
                if (total - 100.0).abs() > 0.01 {
                    return Err(bad(format!("the zones' sizes add up to {total}%, not 100")));
                }
                Distribution::Zoned(zones_pct)
            }
        }
        "sequence" => {
            let blocks: Result<Vec<u64>, String> = rest
                .split(',')
                .filter(|b| !b.trim().is_empty())
                .map(int)
                .collect();
            let blocks = blocks.map_err(bad)?;
            if blocks.is_empty() || blocks.len() > 64 {
                return Err(bad("give 1 to 64 block indices (sequence:2,0,1)".into()));
            }
            let stride = matches!(j.distribution, Distribution::Sequence { stride: true, .. });
            Distribution::Sequence { blocks, stride }
        }
        o => {
            return Err(bad(format!(
                "'{o}' is not random, zipf, pareto, normal, zoned, zoned_abs or sequence"
            )))
        }
    };
    Ok(())
}

/// fio's `startdelay`: a time or a range of times.
fn startdelay(v: &str) -> Result<(f64, f64), String> {
    match v.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (seconds(a, 1.0)?, seconds(b, 1.0)?);
            Ok((a.min(b), a.max(b)))
        }
        None => {
            let s = seconds(v, 1.0)?;
            Ok((s, s))
        }
    }
}

/// The options of this module.
pub static OPTIONS: &[Opt] = &[
    opt!(["bsrange", "blocksize_range"], |j, a| j.bs =
        a.dirs(&j.bs, range)?),
    opt!(["bssplit"], |j, a| j.bs = a.dirs(&j.bs, split)?),
    opt!(["blockalign", "ba"], |j, a| j.blockalign =
        a.dirs(&j.blockalign, bytes)?),
    opt!(["blocksize_unaligned", "bs_unaligned"], |j, a| j
        .bs_unaligned =
        a.flag()?),
    opt!(["norandommap"], |j, a| j.randommap = !a.flag()?),
    opt!(["randrepeat"], |j, a| j.randrepeat = a.flag()?),
    opt!(["allrandrepeat"], |j, a| j.randrepeat = a.flag()?),
    opt!(["random_generator"], |_j, a| {
        // Every generator gives each block once per pass with the random map; iotrial's own
        // generator stands for them all.
        a.choice(&["tausworthe", "lfsr", "tausworthe64"])?;
    })
    .differs("iotrial's own generator stands for each: with the random map every block once per pass, as fio's"),
    opt!(["percentage_random"], |j, a| j.pct_random = a.dirs(&j.pct_random, |v| {
        let n = int(v)?;
        if n > 100 {
            return Err(format!("{n} is not a percentage"));
        }
        Ok(n as u32)
    })?),
    opt!(["bs_is_seq_rand"], |j, a| j.bs_is_seq_rand = a.flag()?),
    honoured(&["random_distribution"], distribution),
    opt!(["random_sequence_stride"], |j, a| {
        let on = a.flag()?;
        if let Distribution::Sequence { stride, .. } = &mut j.distribution {
            *stride = on;
        } else {
            j.distribution = Distribution::Sequence {
                blocks: vec![0],
                stride: on,
            };
        }
    })
    .unlisted(),
    opt!(["rw_sequencer"], |j, a| {
        j.rw_sequencer = match a.choice(&["sequential", "identical"])? {
            "identical" => Sequencer::Identical,
            _ => Sequencer::Sequential,
        }
    }),
    opt!(["io_size", "io_limit"], |j, a| j.io_size =
        Some(a.amount()?)),
    opt!(["loops"], |j, a| {
        j.loops = a.int()?;
        if j.loops == 0 {
            return Err("loops must be at least 1".into());
        }
    }),
    opt!(["number_ios"], |j, a| j.number_ios = a.int()?),
    opt!(["startdelay"], |j, a| j.startdelay = startdelay(a.need()?)
        .map_err(|e| format!("{}: {e}", a.key))?),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::job::options::apply;

    #[test]
    fn block_size_mixes_as_fio_writes_them() {
        let mut j = JobSpec::new("j");
        apply(
            &mut j,
            "bssplit",
            Some("512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10"),
        )
        .unwrap();
        assert_eq!(j.bs.read.max(), 65536);
        assert_eq!(j.bs.read.min(), 512);
        apply(&mut j, "bssplit", Some("4k/50:1k/:32k/")).unwrap();
        assert_eq!(
            j.bs.write,
            BlockSizes::Split(vec![(4096, 50), (1024, 25), (32768, 25)])
        );
        apply(&mut j, "bssplit", Some("64k/40:1024k/60,1024k/100")).unwrap();
        assert_eq!(j.bs.write, BlockSizes::Split(vec![(1 << 20, 100)]));
        assert!(apply(&mut j, "bssplit", Some("4k/50:8k/60")).is_err());
        apply(&mut j, "bsrange", Some("4k-4k")).unwrap();
        assert_eq!(
            j.bs.read,
            BlockSizes::Range {
                min: 4096,
                max: 4096
            }
        );
    }

    #[test]
    fn distributions_with_their_parameters() {
        let mut j = JobSpec::new("j");
        apply(&mut j, "random_distribution", Some("zipf:0.5")).unwrap();
        assert!(matches!(j.distribution, Distribution::Zipf { theta, .. } if theta == 0.5));
        apply(&mut j, "random_distribution", Some("zoned:50/5:30/15:20/")).unwrap();
        assert_eq!(
            j.distribution,
            Distribution::Zoned(vec![(50, 5.0), (30, 15.0), (20, 80.0)])
        );
        apply(
            &mut j,
            "random_distribution",
            Some("zoned_abs:60/20G:40/100G"),
        )
        .unwrap();
        assert!(matches!(j.distribution, Distribution::ZonedAbs(ref z) if z[1] == (40, 100 << 30)));
        apply(&mut j, "random_distribution", Some("sequence:2,0,1")).unwrap();
        apply(&mut j, "random_sequence_stride", Some("1")).unwrap();
        assert_eq!(
            j.distribution,
            Distribution::Sequence {
                blocks: vec![2, 0, 1],
                stride: true
            }
        );
        assert!(apply(&mut j, "random_distribution", Some("zoned:50/5:30/15")).is_err());
        apply(&mut j, "startdelay", Some("4")).unwrap();
        assert_eq!(j.startdelay, (4.0, 4.0));
        apply(&mut j, "startdelay", Some("1-10s")).unwrap();
        assert_eq!(j.startdelay, (1.0, 10.0));
    }
}
