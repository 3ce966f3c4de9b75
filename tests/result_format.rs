//! result.json as users read it: a real trial's document has exactly the keys
//! docs/result-format.md documents (so renaming a key fails here, not as a "-" in a table),
//! `iotrial analyze --json` prints the same keys for its part, and a document written before
//! `format_version` existed is migrated when read.

use assert_cmd::Command;
use iotrial::result;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

fn iotrial() -> Command {
    Command::cargo_bin("iotrial").unwrap()
}

/// Key paths documented in docs/result-format.md's tables (`| \`a.b\` | ...`) for workload kind
/// `kind`: those of every kind, and those under its `### Kind \`kind\`` heading. Those under
/// `stack` are documented but, like `stack` itself, not checked.
fn documented(kind: &str) -> BTreeSet<String> {
    let doc = std::fs::read_to_string("docs/result-format.md").unwrap();
    let mut section: Option<String> = None;
    let mut keys = BTreeSet::new();
    for l in doc.lines() {
        if l.starts_with('#') {
            section = l
                .strip_prefix("### Kind `")
                .and_then(|r| r.split_once('`'))
                .map(|(k, _)| k.to_string());
            continue;
        }
        let Some(key) = l
            .strip_prefix("| `")
            .and_then(|r| r.split_once('`'))
            .map(|(k, _)| k.to_string())
        else {
            continue;
        };
        if !key.starts_with("stack.") && section.as_deref().is_none_or(|s| s == kind) {
            keys.insert(key);
        }
    }
    keys
}

/// Asserts that `doc`'s keys are exactly those documented for its kind.
fn assert_documented(doc: &Value) {
    let kind = doc["kind"].as_str().unwrap();
    let mut got = BTreeSet::new();
    paths("", doc, &mut got);
    let documented = documented(kind);
    let undocumented: Vec<_> = got.difference(&documented).collect();
    let missing: Vec<_> = documented.difference(&got).collect();
    assert!(
        undocumented.is_empty() && missing.is_empty(),
        "{kind}: keys not in docs/result-format.md: {undocumented:?}; documented but not written: {missing:?}"
    );
}

/// Key paths of `doc`: objects by `.`, array elements as `[]`; `stack` is not walked (its keys
/// follow the device and layout).
fn paths(prefix: &str, v: &Value, out: &mut BTreeSet<String>) {
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

fn run_json(target: &Path, out: &Path) -> Value {
    let a = iotrial()
        .args(["run", "dvr", "--json", "--target"])
        .arg(format!("dir:{}", target.display()))
        .arg("--out")
        .arg(out)
        .args(["--set", "samples=20", "--set", "region_size=1MiB"])
        .args(["--set", "io_size=64KiB", "--set", "window=20ms"])
        .assert()
        .success();
    serde_json::from_slice(&a.get_output().stdout).unwrap()
}

#[test]
fn a_real_result_has_exactly_the_documented_keys() {
    let (target, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let doc = run_json(target.path(), out.path());
    assert_eq!(doc["format_version"], result::FORMAT_VERSION);
    assert_eq!(
        (&doc["workload"], &doc["kind"]),
        (&"dvr".into(), &"dvr".into())
    );
    assert_documented(&doc);
    let (target, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = iotrial()
        .args(["run", "stream", "--json", "--target"])
        .arg(format!("dir:{}", target.path().display()))
        .arg("--out")
        .arg(out.path())
        .args([
            "--set",
            "writers=2",
            "--set",
            "bytes=4MiB",
            "--set",
            "io_size=64KiB",
        ])
        .args([
            "--set",
            "interval=10ms",
            "--set",
            "settle_window=20ms",
            "--set",
            "raw_mb_s=100",
        ])
        .assert()
        .success();
    let stream: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(stream["kind"], "stream");
    assert_documented(&stream);
}

#[test]
fn analyze_prints_the_analysis_part_with_the_same_keys() {
    let (target, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let doc = run_json(target.path(), out.path());
    let run = std::fs::read_dir(out.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let samples = run.path().join("trials/dir/dvr/r1/samples.csv");
    let a = iotrial()
        .args(["analyze", "dvr", "--json"])
        .arg(&samples)
        .assert()
        .success();
    let re: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let keys: Vec<&str> = re.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    let mut want = vec![
        "format_version",
        "kind",
        "params",
        "warnings",
        "streams",
        "verdict",
    ];
    want.sort();
    assert_eq!(keys, want);
    for k in ["format_version", "kind", "params", "streams", "verdict"] {
        assert_eq!(re[k], doc[k], "{k}");
    }
}

#[test]
fn a_result_without_format_version_is_migrated() {
    let p = Path::new("tests/fixtures/results-0.1.0/trials/a/dvr-buffered/r1/result.json");
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    assert!(raw.get("format_version").is_none() && raw.get("kind").is_none());
    let doc = result::read(p).unwrap();
    assert_eq!(doc.format_version, result::FORMAT_VERSION);
    assert_eq!(doc.kind, "dvr", "format 0's workload was the kind");
    assert_eq!(doc.workload, "dvr");
    assert_eq!(doc.verdict, raw["verdict"]);
    assert_eq!(doc.streams.len(), 4);
}

#[test]
fn unreadable_results_are_refused_with_the_reason() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("result.json");
    for (text, reason) in [
        (r#"{"verdict": {}}"#, "not a result.json written by iotrial"),
        (
            r#"{"workload": "dvr", "verdict": {}}"#,
            "before result.json had a format_version",
        ),
        (r#"{"format_version": 99}"#, "newer iotrial"),
        (r#"{"format_version": 1}"#, "missing field"),
    ] {
        std::fs::write(&p, text).unwrap();
        let e = result::read(&p).unwrap_err().to_string();
        assert!(
            e.contains("result.json") && e.contains(reason),
            "{text}: {e}"
        );
    }
}
