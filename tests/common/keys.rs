//! The keys docs/result-format.md documents, and the keys a result.json has, so tests can
//! check one against the other. Keys under `stack` are documented but, like `stack` itself,
//! not checked (they follow the device and layout); nor is `verdict.host_cpu_pct`, which only
//! trials in a guest write (tests/vm.rs checks it).

use serde_json::Value;
use std::collections::BTreeSet;

/// Key paths documented in docs/result-format.md's key tables (those headed `| key |`) for
/// workload kind `kind`: those of every kind, and those under its `### Kind \`kind\``
/// heading. Every `` `a.b` `` in a row's first cell counts; `a.*` stands for every key under
/// `a`.
pub fn documented(kind: &str) -> BTreeSet<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/result-format.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let mut in_keys = false;
    let mut section: Option<String> = None;
    let mut out = BTreeSet::new();
    for line in doc.lines() {
        if line.starts_with('#') {
            section = line
                .strip_prefix("### Kind `")
                .and_then(|r| r.split_once('`'))
                .map(|(k, _)| k.to_string());
        }
        if !line.starts_with('|') {
            in_keys = false;
        } else if line.starts_with("| key |") {
            in_keys = true;
        } else if in_keys && section.as_deref().is_none_or(|s| s == kind) {
            let cell = line
                .trim_start_matches('|')
                .split(" | ")
                .next()
                .unwrap_or("");
            let keys: Vec<&str> = cell.split('`').skip(1).step_by(2).collect();
            let unchecked = |k: &&str| k.starts_with("stack.") || *k == "verdict.host_cpu_pct";
            if !keys.first().is_some_and(unchecked) {
                out.extend(keys.into_iter().map(String::from));
            }
        }
    }
    out
}

/// Key paths of `doc`: objects by `.`, array elements as `[]`; `stack` is not walked.
pub fn paths(prefix: &str, v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(o) if prefix != "stack" => {
            for (k, x) in o {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.insert(p.clone());
                paths(&p, x, out);
            }
        }
        Value::Array(a) if a.iter().any(Value::is_object) => {
            for x in a {
                paths(&format!("{prefix}[]"), x, out);
            }
        }
        _ => {}
    }
}

/// Whether `key` is documented, by name or under an `a.*` pattern.
pub fn is_documented(key: &str, documented: &BTreeSet<String>) -> bool {
    documented.contains(key)
        || documented.iter().any(|d| {
            d.strip_suffix(".*")
                .is_some_and(|base| key.starts_with(&format!("{base}.")))
        })
}

/// Keys only a power-cut trial writes (its `durability` and its `powercut*` parameters).
pub fn cut_only(key: &str) -> bool {
    key.starts_with("durability") || key.starts_with("params.powercut")
}

/// Keys a document has only in some runs: an emulated device's late seconds (only with an
/// emulated device; their worst second only when a reply was more than 5 ms late, and the
/// host's figures in it only where a monitor's series covers that second), the memory
/// stall (only where the kernel keeps pressure stall information), and the workload's CPUs
/// (only where the trial kept its streams apart from an emulated device's timer;
/// tests/emu_stack.rs checks it is written then), and the host's idle time before a trial
/// (only in a study that pauses between trials; tests/study_run.rs checks it is written then).
pub fn absent_here(doc: &Value, key: &str) -> bool {
    if key == "target.workload_cpus" || key == "trial.idle_before_s" {
        return true;
    }
    let late = doc["monitor"]["late_seconds"].as_array();
    let any = |k: &str| late.is_some_and(|l| l.iter().any(|d| d.get(k).is_some()));
    let worst = key.strip_prefix("monitor.late_seconds[].");
    (key.starts_with("monitor.late_seconds") && late.is_none())
        || worst.is_some_and(|k| k.starts_with("worst_") && !any(k))
        || (key.starts_with("monitor.memory.stall_ms")
            && !std::path::Path::new("/proc/pressure/memory").exists())
}

/// (keys of `doc` not documented, documented keys `doc` lacks); documented keys for which
/// `expected` is false are not required, nor a power cut's in a trial without one.
pub fn compare_keys(doc: &Value, expected: impl Fn(&str) -> bool) -> (Vec<String>, Vec<String>) {
    let cut = doc.get("durability").is_some();
    let expected = |k: &str| expected(k) && (cut || !cut_only(k)) && !absent_here(doc, k);
    let documented = documented(doc["kind"].as_str().unwrap_or_default());
    let mut got = BTreeSet::new();
    paths("", doc, &mut got);
    let undocumented = got
        .iter()
        .filter(|k| !is_documented(k, &documented))
        .cloned()
        .collect();
    let missing = documented
        .iter()
        .filter(|d| expected(d))
        .filter(|d| match d.strip_suffix(".*") {
            Some(base) => !got.iter().any(|k| k.starts_with(&format!("{base}."))),
            None => !got.contains(*d),
        })
        .cloned()
        .collect();
    (undocumented, missing)
}

/// Keys only a run in real time writes (`pacing = realtime`) of a kind (`dvr`, `stream`), so a
/// hammering run's document lacks them.
pub fn realtime_only(kind: &str, key: &str) -> bool {
    let verdict = [
        "record_buffer_peak_pct",
        "overflow_mb",
        "overflow_events",
        "underruns",
        "stall_s",
        "playback_startup_s",
        "playback_buffer_low_pct",
    ];
    key.starts_with("streams[].buffer")
        || key.starts_with("phases[].measured")
        || key.starts_with("verdict.first_failure")
        || verdict.iter().any(|v| key == format!("verdict.{v}"))
        || (kind == "stream" && key == "verdict.meets_target")
}
