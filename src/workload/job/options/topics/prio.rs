//! fio's I/O priority options: a job's own (`prioclass`, `prio`, `priohint`: ioprio_set of its
//! thread) and per I/O for libaio and io_uring (`cmdprio_percentage`, `cmdprio_class`,
//! `cmdprio`, `cmdprio_hint`, `cmdprio_bssplit` in its three forms); `log_prio` is noted.

use crate::workload::job::options::values::{bytes, int, Arg};
use crate::workload::job::options::Opt;
use crate::workload::job::spec::{PerDir, PrioSplit};

fn small(v: &str, max: u64, what: &str) -> Result<u16, String> {
    let n = int(v)?;
    if n > max {
        return Err(format!("{what} {n} is above {max}"));
    }
    Ok(n as u16)
}

/// One direction's `cmdprio_bssplit`: `bs/pct[/class/level[/hint]]:...`.
fn bssplit(v: &str) -> Result<Vec<PrioSplit>, String> {
    v.split(':')
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let f: Vec<&str> = e.split('/').collect();
            if !matches!(f.len(), 2 | 4 | 5) {
                return Err(format!(
                    "'{e}' is not bs/percent, bs/percent/class/level or bs/percent/class/level/hint"
                ));
            }
            let opt = |k: usize, max, what| f.get(k).map(|x| small(x, max, what)).transpose();
            Ok(PrioSplit {
                bs: bytes(f[0])?,
                pct: small(f[1], 100, "a percentage")? as u32,
                class: opt(2, 3, "a class")?,
                level: opt(3, 7, "a level")?,
                hint: opt(4, 1023, "a hint")?,
            })
        })
        .collect()
}

fn dirs_u16(
    a: &Arg,
    cur: &PerDir<u16>,
    max: u64,
    what: &'static str,
) -> Result<PerDir<u16>, String> {
    a.dirs(cur, |v| small(v, max, what))
}

/// The engines that carry a priority per I/O.
const ASYNC: &[&str] = &["libaio", "io_uring"];

/// The options of this module.
pub static OPTIONS: &[Opt] = &[
    opt!(["prioclass"], |j, a| j.prio.class =
        Some(small(a.need()?, 3, "a class")?)),
    opt!(["prio"], |j, a| j.prio.level =
        Some(small(a.need()?, 7, "a level")?)),
    opt!(["priohint"], |j, a| j.prio.hint =
        Some(small(a.need()?, 1023, "a hint")?))
    .unlisted(),
    opt!(["cmdprio_percentage"], |j, a| j.prio.cmd_pct = a
        .dirs(&j.prio.cmd_pct, |v| small(v, 100, "a percentage")
            .map(u32::from))?)
    .of(ASYNC),
    opt!(["cmdprio_class"], |j, a| j.prio.cmd_class =
        dirs_u16(a, &j.prio.cmd_class, 3, "a class")?)
    .of(ASYNC),
    opt!(["cmdprio"], |j, a| j.prio.cmd_level =
        dirs_u16(a, &j.prio.cmd_level, 7, "a level")?)
    .of(ASYNC),
    opt!(["cmdprio_hint"], |j, a| j.prio.cmd_hint =
        dirs_u16(a, &j.prio.cmd_hint, 1023, "a hint")?)
    .of(ASYNC)
    .unlisted(),
    opt!(["cmdprio_bssplit"], |j, a| j.prio.cmd_bssplit =
        a.dirs(&j.prio.cmd_bssplit, bssplit)?)
    .of(ASYNC),
];

#[cfg(test)]
mod tests {
    use crate::workload::job::options::apply;
    use crate::workload::job::spec::{ioprio, JobSpec};

    #[test]
    fn the_three_forms_of_cmdprio_bssplit() {
        let mut j = JobSpec::new("j");
        apply(
            &mut j,
            "cmdprio_bssplit",
            Some("64k/25/1/1:64k/75/3/2:1024k/0,1024k/0"),
        )
        .unwrap();
        let r = &j.prio.cmd_bssplit.read;
        assert_eq!(
            (r[0].bs, r[0].pct, r[0].class, r[0].level),
            (65536, 25, Some(1), Some(1))
        );
        assert_eq!(j.prio.cmd_bssplit.write[0].pct, 0);
        apply(&mut j, "cmdprio_bssplit", Some("1M/10/2/0/1:2M/90/2/0/0")).unwrap();
        assert_eq!(j.prio.cmd_bssplit.read[0].hint, Some(1));
        assert!(apply(&mut j, "cmdprio_bssplit", Some("1M/10/2")).is_err());
        apply(&mut j, "cmdprio_percentage", Some("20")).unwrap();
        assert_eq!(j.prio.cmd_pct.write, 20);
        assert_eq!(ioprio(1, 0, 0), 1 << 13);
        assert_eq!(ioprio(2, 7, 3), (2 << 13) | (3 << 3) | 7);
    }
}
