//! The report's part about where each trial ran, from result.json's `fingerprint`: a table of
//! every trial's host, kernel, CPU, memory and device hardware, and the verdict table's
//! warning where stacks ranked against each other ran on differing hardware (a kernel, a CPU,
//! or, across machines, device models or firmware), whose comparison may measure the
//! machines rather than the stacks.

use crate::present::chart::{Block, Section, Table};
use crate::present::verdict::VerdictTable;
use crate::result::fingerprint::Fingerprint;
use crate::result::StackTrials;

/// Hex digits of a machine id or boot id shown.
const ID_SHOWN: usize = 8;

fn short(id: Option<&str>) -> String {
    id.map_or("-".into(), |s| s.chars().take(ID_SHOWN).collect())
}

/// Marks the rows of `table` (one per entry of `stacks`, in order) whose trials ran on
/// hardware that differs from the first ranked stack's first trial's.
pub fn flag(table: &mut VerdictTable, stacks: &[StackTrials<'_>]) {
    let reference = stacks.iter().filter(|s| !s.baseline).find_map(|s| {
        s.trials
            .iter()
            .find_map(|t| t.result.fingerprint.as_ref().map(|f| (s.stack, f)))
    });
    let Some((ref_stack, ref_fp)) = reference else {
        return;
    };
    for (row, s) in table.rows.iter_mut().zip(stacks) {
        if s.baseline {
            continue;
        }
        let mut diffs: Vec<String> = Vec::new();
        let mut hosts: Vec<String> = Vec::new();
        for fp in s
            .trials
            .iter()
            .filter_map(|t| t.result.fingerprint.as_ref())
        {
            let d = ref_fp.differences(fp);
            if d.is_empty() {
                continue;
            }
            if !hosts.contains(&fp.host.hostname) {
                hosts.push(fp.host.hostname.clone());
            }
            for x in d {
                if !diffs.contains(&x) {
                    diffs.push(x);
                }
            }
        }
        if !diffs.is_empty() {
            row.hardware = Some(format!(
                "on {} against {ref_stack} on {}: {}",
                hosts.join(", "),
                ref_fp.host.hostname,
                diffs.join("; ")
            ));
        }
    }
}

/// The host's CPUs, and those the workload's threads ran on when they were kept off some.
fn cpu_cell(f: &Fingerprint, workload_cpus: Option<&[usize]>) -> String {
    let host = format!("{} x {}", f.host.cpu_model, f.host.cpus);
    match workload_cpus {
        Some(c) => {
            let list: Vec<String> = c.iter().map(usize::to_string).collect();
            format!("{host}, workload on CPU {}", list.join(","))
        }
        None => host,
    }
}

/// The row of one trial.
fn row(stack: &str, repeat: u32, f: &Fingerprint, workload_cpus: Option<&[usize]>) -> Vec<String> {
    let devices = f.device_hardware();
    vec![
        format!("{stack} r{repeat}"),
        f.host.hostname.clone(),
        short(f.host.machine_id.as_deref()),
        short(f.host.boot_id.as_deref()),
        f.host.kernel.clone(),
        cpu_cell(f, workload_cpus),
        format!("{:.1}", f.host.memory_bytes as f64 / (1u64 << 30) as f64),
        if devices.is_empty() {
            "-".into()
        } else {
            devices.join(", ")
        },
    ]
}

/// "Where each trial ran": one row per trial with a fingerprint; None when none has one.
pub fn section(stacks: &[StackTrials<'_>]) -> Option<Section> {
    let rows: Vec<Vec<String>> = stacks
        .iter()
        .flat_map(|s| {
            s.trials.iter().filter_map(|t| {
                t.result.fingerprint.as_ref().map(|f| {
                    row(
                        s.stack,
                        t.repeat,
                        f,
                        t.result.target.workload_cpus.as_deref(),
                    )
                })
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let hosts = {
        let mut h: Vec<&String> = rows.iter().map(|r| &r[1]).collect();
        h.sort();
        h.dedup();
        h.len()
    };
    Some(Section {
        title: "Where each trial ran".into(),
        intro: Some(format!(
            "From each trial's fingerprint in result.json ({hosts} host{}): the machine, its kernel and CPU (and the CPUs the workload's threads ran on where they kept off the emulated devices' timer), and the hardware of the stack's devices (none for loop and other virtual devices without a disk of their own).",
            if hosts == 1 { "" } else { "s" }
        )),
        blocks: vec![Block::Table(Table {
            caption: "Host of each trial".into(),
            headings: [
                "trial",
                "host",
                "machine-id",
                "boot",
                "kernel",
                "CPU",
                "memory (GiB)",
                "devices",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        })],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_cell_names_the_workloads_cpus_when_they_were_kept_apart() {
        let mut f = Fingerprint::default();
        f.host.cpu_model = "Xeon".into();
        f.host.cpus = 4;
        assert_eq!(cpu_cell(&f, None), "Xeon x 4");
        assert_eq!(cpu_cell(&f, Some(&[0, 2])), "Xeon x 4, workload on CPU 0,2");
    }
}
