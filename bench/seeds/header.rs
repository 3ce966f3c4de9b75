//! The lines that open a seed's generated block: which run the tables come from (the study,
//! its options and hash, when, on what kernel), each workload's parameters, the devices each
//! stack ran on, and the trials that did not run with their reasons.

use super::summary::Summary;
use serde_json::Value as Json;

/// `2026-11-29` of `2026-11-29T03:24:04Z`.
pub fn day(utc: &str) -> &str {
    utc.get(..10).unwrap_or(utc)
}

/// `03:24` of `2026-11-29T03:24:04Z`.
fn minute(utc: &str) -> &str {
    utc.get(11..16).unwrap_or(utc)
}

/// The opening lines of a seed's block.
pub fn text(s: &Summary) -> String {
    let mut out = String::new();
    if s.quick {
        out.push_str(&format!(
            "**Placeholder: a quick run** (`--quick`, {}). The full study's results replace it.\n\n",
            day(&s.created_utc)
        ));
    }
    let mut command = format!("iotrial study {}", s.study);
    if s.quick {
        command.push_str(" --quick");
    }
    for o in &s.options {
        command.push(' ');
        command.push_str(o);
    }
    let counts: Vec<usize> = s
        .workloads
        .iter()
        .flat_map(|w| &w.stacks)
        .map(|st| st.repeats.len())
        .collect();
    let (lo, hi) = (
        counts.iter().min().copied().unwrap_or(0),
        counts.iter().max().copied().unwrap_or(0),
    );
    let repeats = if lo == hi {
        format!("{lo}")
    } else {
        format!("{lo} to {hi}")
    };
    let hash = s.study_hash.get(..16).unwrap_or(&s.study_hash);
    out.push_str(&format!(
        "From `{command}` (study hash `{hash}`): {repeats} repeats per stack, run round-robin, {} {} to {} UTC, on Linux {} with {} CPUs, iotrial {}.",
        day(&s.created_utc),
        minute(&s.created_utc),
        if day(&s.updated_utc) == day(&s.created_utc) {
            minute(&s.updated_utc).to_string()
        } else {
            format!("{} {}", day(&s.updated_utc), minute(&s.updated_utc))
        },
        s.kernel,
        s.cpus,
        s.iotrial_version
    ));
    for w in &s.workloads {
        let params: Vec<String> = w
            .params
            .iter()
            .map(|(k, v)| format!("{k} {}", param_text(k, v)))
            .collect();
        if !params.is_empty() {
            out.push_str(&format!(
                " Workload `{}`: {}.",
                w.workload,
                params.join(", ")
            ));
        }
    }
    out.push_str(&format!(" Devices: {}.", devices(s)));
    if !s.not_run.is_empty() {
        out.push_str(&format!(" Not run: {}.", not_run(s)));
    }
    for (stack, note) in notes(s) {
        out.push_str(&format!(" ⚠ {stack}: {note}."));
    }
    out.push('\n');
    out
}

/// What the study's tables say of a stack's figures (not ranked: why; above raw; other
/// hardware), each once.
fn notes(s: &Summary) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for st in s.workloads.iter().flat_map(|w| &w.stacks) {
        let unranked = st.impossible.iter().map(|i| format!("not ranked, {i}"));
        for n in unranked.chain(st.notes.iter().cloned()) {
            let n = n.trim_end_matches('.').to_string();
            if !out.iter().any(|(a, b)| *a == st.stack && *b == n) {
                out.push((st.stack.clone(), n));
            }
        }
    }
    out
}

/// A parameter in base units as a reader writes it: sizes in binary units, times in seconds.
/// `64`, `1.50`: whole numbers without decimals, others as every table writes them.
fn whole(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        iotrial::present::num(x)
    }
}

pub fn param_text(key: &str, v: &Json) -> String {
    let Some(x) = v.as_f64() else {
        return match v {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        };
    };
    let sized = ["size", "bytes", "limit", "record"]
        .iter()
        .any(|k| key.contains(k));
    if sized && x >= 1024.0 {
        let units = ["KiB", "MiB", "GiB", "TiB"];
        let mut y = x / 1024.0;
        let mut i = 0;
        while y >= 1024.0 && i + 1 < units.len() {
            y /= 1024.0;
            i += 1;
        }
        return format!("{} {}", whole(y), units[i]);
    }
    let timed = ["duration", "period", "window", "interval"]
        .iter()
        .any(|k| key.contains(k));
    if timed {
        return format!("{} s", whole(x));
    }
    whole(x)
}

/// The devices the stacks ran on: `` `SPEC` at scale S: stack, stack ``, one group per device.
fn devices(s: &Summary) -> String {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for st in s.workloads.iter().flat_map(|w| &w.stacks) {
        let key = format!("`{}` at time scale {}", st.devices, whole(st.time_scale));
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) if v.contains(&st.stack) => {}
            Some((_, v)) => v.push(st.stack.clone()),
            None => groups.push((key, vec![st.stack.clone()])),
        }
    }
    if groups.len() == 1 {
        return format!("{} (every stack)", groups[0].0);
    }
    groups
        .iter()
        .map(|(k, v)| format!("{k} ({})", v.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Trials not run, grouped by reason: `zfs-mirrors, zfs-mirrors-ssdlog (skipped: ...)`.
fn not_run(s: &Summary) -> String {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for n in &s.not_run {
        let why = if n.reason.is_empty() {
            n.status.clone()
        } else {
            format!("{}: {}", n.status, n.reason)
        };
        match groups.iter_mut().find(|(k, _)| *k == why) {
            Some((_, v)) if v.contains(&n.stack) => {}
            Some((_, v)) => v.push(n.stack.clone()),
            None => groups.push((why, vec![n.stack.clone()])),
        }
    }
    groups
        .iter()
        .map(|(why, v)| format!("{} ({why})", v.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}
