//! fio's options of where and how a job's threads run: the CPUs they may use (`cpus_allowed`,
//! `cpumask`, `numa_cpu_nodes`: a set this host must have, or the job is refused), how its
//! clones share them (`cpus_allowed_policy`: all of them each, or one each in turn), and their
//! nice value (`nice`).

use crate::workload::job::options::values::Arg;
use crate::workload::job::options::{honoured, Opt};
use crate::workload::job::spec::JobSpec;
use std::collections::BTreeSet;

/// A CPU list as fio writes it: `0-3,6,8-9`.
pub fn cpu_list(v: &str) -> Result<BTreeSet<usize>, String> {
    let mut out = BTreeSet::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let n = |x: &str| {
            x.trim()
                .parse::<usize>()
                .map_err(|_| format!("'{part}' is not a CPU number or a range such as 0-3"))
        };
        let (a, b) = (n(a)?, n(b)?);
        if a > b {
            return Err(format!("'{part}' is a range that ends before it starts"));
        }
        if b >= 4096 {
            return Err(format!("'{part}' names a CPU above 4095"));
        }
        out.extend(a..=b);
    }
    if out.is_empty() {
        return Err(format!("'{v}' names no CPU"));
    }
    Ok(out)
}

/// A set of numbers as a list with ranges (`0-3,6`).
pub fn list_text(set: &BTreeSet<usize>) -> String {
    let mut parts = Vec::new();
    let mut it = set.iter().copied().peekable();
    while let Some(a) = it.next() {
        let mut b = a;
        while it.peek() == Some(&(b + 1)) {
            b = it.next().expect("peeked");
        }
        parts.push(if a == b {
            a.to_string()
        } else {
            format!("{a}-{b}")
        });
    }
    parts.join(",")
}

/// Sets the job's CPUs to `want`, which must all be CPUs this process may run on.
fn set_cpus(j: &mut JobSpec, a: &Arg, want: BTreeSet<usize>) -> Result<(), String> {
    let host: BTreeSet<usize> = crate::engine::cpus::allowed_cpus().into_iter().collect();
    let missing: BTreeSet<usize> = want.difference(&host).copied().collect();
    if !host.is_empty() && !missing.is_empty() {
        return Err(format!(
            "{}={}: CPU{} {} {} not on this host (iotrial may run on CPUs {})",
            a.key,
            a.value.unwrap_or("").trim(),
            if missing.len() > 1 { "s" } else { "" },
            list_text(&missing),
            if missing.len() > 1 { "are" } else { "is" },
            list_text(&host)
        ));
    }
    j.cpus = Some(want.into_iter().collect());
    Ok(())
}

/// The host's NUMA nodes and their CPUs (`/sys/devices/system/node`); one node of every CPU
/// on a kernel without NUMA.
fn numa_nodes() -> Vec<(usize, BTreeSet<usize>)> {
    let mut out = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/sys/devices/system/node") {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let Some(n) = name.strip_prefix("node").and_then(|n| n.parse().ok()) else {
                continue;
            };
            let cpus = std::fs::read_to_string(e.path().join("cpulist")).unwrap_or_default();
            out.push((n, cpu_list(cpus.trim()).unwrap_or_default()));
        }
    }
    if out.is_empty() {
        out.push((0, crate::engine::cpus::allowed_cpus().into_iter().collect()));
    }
    out.sort();
    out
}

fn numa_cpu_nodes(j: &mut JobSpec, a: &Arg) -> Result<(), String> {
    let v = a.need()?;
    let nodes = numa_nodes();
    let want: BTreeSet<usize> = if v == "all" {
        nodes.iter().map(|n| n.0).collect()
    } else {
        cpu_list(v).map_err(|e| format!("{}: {e}", a.key))?
    };
    let mut cpus = BTreeSet::new();
    for n in &want {
        match nodes.iter().find(|x| x.0 == *n) {
            Some((_, c)) => cpus.extend(c.iter().copied()),
            None => {
                let have: BTreeSet<usize> = nodes.iter().map(|n| n.0).collect();
                return Err(format!(
                    "{}={v}: NUMA node {n} is not on this host (it has node{} {})",
                    a.key,
                    if have.len() > 1 { "s" } else { "" },
                    list_text(&have)
                ));
            }
        }
    }
    set_cpus(j, a, cpus)
}

fn cpumask(j: &mut JobSpec, a: &Arg) -> Result<(), String> {
    let mask = a.int()?;
    let want: BTreeSet<usize> = (0..64).filter(|c| mask & (1 << c) != 0).collect();
    if want.is_empty() {
        return Err(format!("{}=0 names no CPU", a.key));
    }
    set_cpus(j, a, want)
}

fn nice(j: &mut JobSpec, a: &Arg) -> Result<(), String> {
    let v = a.need()?;
    let n: i32 = v
        .parse()
        .ok()
        .filter(|n| (-20..=19).contains(n))
        .ok_or_else(|| format!("{}={v}: a nice value from -20 to 19", a.key))?;
    j.nice = Some(n);
    Ok(())
}

/// The options of this module.
pub static OPTIONS: &[Opt] = &[
    opt!(["cpus_allowed"], |j, a| {
        let want = cpu_list(a.need()?).map_err(|e| format!("{}: {e}", a.key))?;
        set_cpus(j, a, want)?
    }),
    honoured(&["cpumask"], cpumask),
    opt!(["cpus_allowed_policy"], |j, a| j.cpus_split =
        a.choice(&["shared", "split"])? == "split"),
    honoured(&["numa_cpu_nodes"], numa_cpu_nodes),
    honoured(&["nice"], nice),
];

/// The CPUs clone `clone` of `j` runs on, if the job names any: all of them, or with
/// `cpus_allowed_policy=split` one each in turn.
pub fn cpus_of(j: &JobSpec, clone: u64) -> Option<Vec<usize>> {
    let cpus = j.cpus.as_ref().filter(|c| !c.is_empty())?;
    Some(if j.cpus_split {
        vec![cpus[clone as usize % cpus.len()]]
    } else {
        cpus.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::job::options::apply;

    #[test]
    fn cpu_lists_read_and_print_as_fio_writes_them() {
        let s = cpu_list("0-3, 6,8-9").unwrap();
        assert_eq!(list_text(&s), "0-3,6,8-9");
        assert!(cpu_list("3-1").is_err());
        assert!(cpu_list("x").is_err());
        assert!(cpu_list("").is_err());
    }

    #[test]
    fn a_set_the_host_lacks_is_refused_saying_which() {
        let host = crate::engine::cpus::allowed_cpus();
        let &last = host.last().unwrap();
        let mut j = JobSpec::new("j");
        apply(&mut j, "cpus_allowed", Some(&last.to_string())).unwrap();
        apply(&mut j, "cpus_allowed_policy", Some("split")).unwrap();
        assert_eq!(cpus_of(&j, 3), Some(vec![last]));
        let beyond = format!("0-{}", last + 2);
        let e = apply(&mut j, "cpus_allowed", Some(&beyond)).unwrap_err();
        assert!(
            e.contains(&format!("{}-{}", last + 1, last + 2)) && e.contains("not on this host"),
            "{e}"
        );
        let e = apply(&mut j, "numa_cpu_nodes", Some("0-7")).unwrap_err();
        assert!(e.contains("NUMA node"), "{e}");
        apply(&mut j, "numa_cpu_nodes", Some("0")).unwrap();
        assert!(j.cpus.as_ref().is_some_and(|c| !c.is_empty()));
        assert!(apply(&mut j, "nice", Some("40")).is_err());
    }
}
