//! Native and guest side by side: for every stack that ran in a guest (its result.json has
//! `stack.vm`), the kind's headline figure beside that of its native twin (the stack of the
//! same name without `-vm`, as `vm = [false, true]` names them), their ratio (seed 001's
//! 308/311), the host CPU the guest's QEMU used, and where each layer of the stack ran.

use super::chart::{Block, Section, Table};
use super::{num, KindReport};
use crate::result::{ResultError, StackTrials, Trial};
use serde_json::Value as Json;

/// The section, when any stack ran in a guest.
pub fn section(
    kind: &dyn KindReport,
    stacks: &[StackTrials<'_>],
) -> Result<Option<Section>, ResultError> {
    let Some(headline) = kind.columns().first() else {
        return Ok(None);
    };
    let mut rows = Vec::new();
    for g in stacks.iter().filter(|s| in_guest(s.trials[0])) {
        let twin = native_name(g.stack).and_then(|n| {
            stacks
                .iter()
                .find(|s| s.stack == n && !in_guest(s.trials[0]))
        });
        let guest_value = mean_headline(kind, g)?;
        let native_value = match twin {
            Some(t) => mean_headline(kind, t)?,
            None => None,
        };
        let ratio = match (guest_value, native_value) {
            (Some(v), Some(n)) if n != 0.0 => num(v / n),
            _ => "-".into(),
        };
        let cpu: Vec<f64> = g
            .trials
            .iter()
            .filter_map(|t| t.result.host_cpu_pct())
            .collect();
        rows.push(vec![
            twin.map_or("-".into(), |t| t.stack.to_string()),
            g.stack.to_string(),
            native_value.map_or("-".into(), num),
            guest_value.map_or("-".into(), num),
            ratio,
            if cpu.is_empty() {
                "-".into()
            } else {
                num(cpu.iter().sum::<f64>() / cpu.len() as f64)
            },
            layers(&g.trials[0].result.stack),
        ]);
    }
    if rows.is_empty() {
        return Ok(None);
    }
    let unit = format!("{} ({})", headline.label, headline.unit);
    Ok(Some(Section {
        title: "Native and in a guest".into(),
        intro: Some(format!(
            "The headline figure, {unit}, of each stack run in a KVM guest beside the same stack run natively, the ratio guest / native, and the host CPU the guest's QEMU process used while the trial ran (percent of one core)."
        )),
        blocks: vec![Block::Table(Table {
            caption: format!("{unit}: native and in a guest"),
            headings: [
                "native stack",
                "guest stack",
                "native",
                "guest",
                "guest / native",
                "host CPU %",
                "where each layer ran",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        })],
    }))
}

/// Whether a trial ran in a guest.
pub fn in_guest(t: &Trial) -> bool {
    t.result.stack.get("vm").is_some_and(Json::is_object)
}

/// `xfs-vm` -> `xfs`, `xfs-vm2` -> `xfs`.
fn native_name(guest: &str) -> Option<&str> {
    let (base, suffix) = guest.rsplit_once("-vm")?;
    suffix.chars().all(|c| c.is_ascii_digit()).then_some(base)
}

/// The mean of the headline figure over the stack's repeats.
fn mean_headline(kind: &dyn KindReport, s: &StackTrials<'_>) -> Result<Option<f64>, ResultError> {
    let mut values = Vec::new();
    for t in &s.trials {
        if let Some(Some(v)) = kind.figures(t)?.values.first() {
            values.push(*v);
        }
    }
    Ok((!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64))
}

/// `host: emu:hdd x4; guest: md raid10, xfs, mq-deadline` from the stack as built.
fn layers(stack: &Json) -> String {
    let host: Vec<String> = stack["host_devices"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["spec"].as_str().map(String::from))
        .collect();
    let mut guest = Vec::new();
    if let Some(level) = stack["md"]["level"].as_str() {
        guest.push(format!("md {level}"));
    }
    match stack["fs"].as_str() {
        Some(fs) => guest.push(fs.to_string()),
        None => guest.push(format!(
            "{} (raw)",
            stack["layout"].as_str().unwrap_or("regions")
        )),
    }
    if let Some(s) = stack["scheduler_requested"].as_str() {
        guest.push(s.to_string());
    }
    format!("host: {}; guest: {}", count_same(&host), guest.join(", "))
}

/// `a, a, b` -> `a x2, b`.
fn count_same(items: &[String]) -> String {
    let mut out: Vec<(String, usize)> = Vec::new();
    for i in items {
        match out.iter_mut().find(|(x, _)| x == i) {
            Some((_, n)) => *n += 1,
            None => out.push((i.clone(), 1)),
        }
    }
    out.iter()
        .map(|(x, n)| {
            if *n > 1 {
                format!("{x} x{n}")
            } else {
                x.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::kind::example::{verdict, TestKind};
    use serde_json::json;

    fn trial(stack: &str, mbit: f64, vm: bool) -> Trial {
        let mut result = crate::result::example::doc("test", verdict(mbit, 1.0, true));
        if vm {
            result.stack = json!({
                "vm": {"accel": "kvm"}, "fs": "xfs", "md": {"level": "raid10"},
                "host_devices": [{"spec": "emu:hdd"}, {"spec": "emu:hdd"}],
            });
            result.verdict["host_cpu_pct"] = json!(130.0);
        }
        Trial {
            stack: stack.into(),
            workload: "w".into(),
            repeat: 1,
            dir: "/x".into(),
            result,
        }
    }

    #[test]
    fn guest_rows_pair_with_their_native_twin() {
        let (n, g, lone) = (
            trial("xfs", 311.0, false),
            trial("xfs-vm", 308.0, true),
            trial("raid-vm", 280.0, true),
        );
        let stacks: Vec<StackTrials> = [(&n, "xfs"), (&g, "xfs-vm"), (&lone, "raid-vm")]
            .iter()
            .map(|(t, s)| StackTrials {
                stack: s,
                baseline: false,
                trials: vec![t],
            })
            .collect();
        let sec = section(&TestKind, &stacks).unwrap().unwrap();
        let Block::Table(t) = &sec.blocks[0] else {
            panic!("no table")
        };
        assert_eq!(t.rows.len(), 2);
        assert_eq!(
            t.rows[0][..6],
            ["xfs", "xfs-vm", "311", "308", "0.990", "130"].map(String::from)
        );
        assert_eq!(t.rows[0][6], "host: emu:hdd x2; guest: md raid10, xfs");
        assert_eq!(t.rows[1][0], "-");
        assert_eq!(t.rows[1][4], "-");
        let native_only = [StackTrials {
            stack: "xfs",
            baseline: false,
            trials: vec![&n],
        }];
        assert!(section(&TestKind, &native_only).unwrap().is_none());
        assert_eq!(native_name("a-vm2"), Some("a"));
        assert_eq!(native_name("a-vmx"), None);
    }
}
