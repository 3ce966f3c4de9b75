//! What a failure means is decided by its type, never by its message (issue 9): through the
//! real binary, bad input exits 2 before anything runs (in a study, when the file is read, with
//! file:line:col), a trial that fails makes the study exit 1, and a trial this host cannot run
//! is skipped with the reason. None of these needs root.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn iotrial(work: &Path) -> Command {
    let mut c = Command::cargo_bin("iotrial").unwrap();
    c.env("IOTRIAL_LEDGER_DIR", work.join("ledger"))
        .env("TMPDIR", work);
    c
}

/// A study of one small dvr workload on `stacks` (TOML `[[stacks]]` tables), written to
/// `work/study.toml`.
fn study(work: &Path, stacks: &str) -> PathBuf {
    let text = format!(
        "name = \"errors\"\nrepeats = 1\n\n[[workloads]]\nkind = \"dvr\"\nset = {{ samples = 8, region_size = \"1MiB\", io_size = \"4KiB\", window = \"10ms\" }}\n\n{stacks}"
    );
    let path = work.join("study.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs the study at `path`; returns (exit status, stdout, stderr).
fn run_study(work: &Path, path: &Path) -> (i32, String, String) {
    let o = iotrial(work)
        .arg("study")
        .arg(path)
        .arg("--out")
        .arg(work.join("out"))
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The manifest of the one results directory under `work/out`.
fn manifest(work: &Path) -> Value {
    let root = std::fs::read_dir(work.join("out"))
        .unwrap()
        .flatten()
        .find(|e| e.path().join("manifest.json").exists())
        .expect("a results directory")
        .path();
    let text = std::fs::read_to_string(root.join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// (status, reason) of trial `id` in `m`.
fn status<'a>(m: &'a Value, id: &str) -> (&'a str, &'a str) {
    let t = m["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no trial {id} in {m}"));
    (
        t["status"].as_str().unwrap(),
        t["reason"].as_str().unwrap_or(""),
    )
}

#[test]
fn issue_9_an_unknown_scheduler_fails_when_the_study_is_read() {
    let work = tempfile::tempdir().unwrap();
    let path = study(
        work.path(),
        "[[stacks]]\nname = \"a\"\ndevices = [\"image:size=1GiB\"]\nfs = \"ext4\"\nscheduler = \"cfq-nonexistent\"\n",
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("cfq-nonexistent"))
        .unwrap()
        + 1;
    let (code, out, err) = run_study(work.path(), &path);
    assert_eq!(code, 2, "{out}\n{err}");
    let place = format!("{}:{line}:13: stacks[0].scheduler:", path.display());
    assert!(err.contains(&place), "expected '{place}' in: {err}");
    assert!(
        err.contains("unknown scheduler 'cfq-nonexistent'") && err.contains("mq-deadline"),
        "{err}"
    );
    assert!(!work.path().join("out").exists(), "nothing was run");
}

#[test]
fn other_stack_keys_are_checked_when_the_study_is_read() {
    let work = tempfile::tempdir().unwrap();
    let image = "[[stacks]]\nname = \"a\"\ndevices = [\"image:size=1GiB\"]\n";
    for (key_line, at, needle) in [
        (
            "fs = \"ext4\"\nmount = \"noatime,,commit=1\"",
            ":12:9: stacks[0].mount:",
            "is not a mount option",
        ),
        (
            "fs = \"reiserfs\"",
            ":11:6: stacks[0].fs:",
            "unknown filesystem 'reiserfs'",
        ),
        (
            "fs = \"ext4\"\ntunables = { read_expire = \"500\" }",
            ":12:12: stacks[0].tunables:",
            "tunables need a scheduler",
        ),
        (
            "layout = \"regions\"\nmkfs = [\"-q\"]",
            ":12:8: stacks[0].mkfs:",
            "does not apply",
        ),
    ] {
        let path = study(work.path(), &format!("{image}{key_line}\n"));
        let (code, _, err) = run_study(work.path(), &path);
        assert_eq!(code, 2, "{key_line}: {err}");
        assert!(
            err.contains(at) && err.contains(needle),
            "{key_line}: {err}"
        );
    }
    let emu = "[[stacks]]\nname = \"a\"\ndevices = [\"emu:hdd,rpm=fast\"]\nfs = \"ext4\"\n";
    let (code, _, err) = run_study(work.path(), &study(work.path(), emu));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(":10:12: stacks[0].devices[0]:") && err.contains("parameter rpm"),
        "{err}"
    );
    assert!(!work.path().join("out").exists(), "nothing was run");
}

#[test]
fn a_study_with_a_failing_trial_exits_1() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let file = work.path().join("not-a-directory");
    std::fs::write(&file, "").unwrap();
    let stacks = format!(
        "[[stacks]]\nname = \"good\"\ndevices = [\"dir:{}\"]\n\n[[stacks]]\nname = \"bad\"\ndevices = [\"dir:{}\"]\n",
        data.display(),
        file.display()
    );
    let path = study(work.path(), &stacks);
    let (code, out, err) = run_study(work.path(), &path);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains("bad/dvr/r1: failed: "), "{out}");
    assert!(err.contains("1 trial(s) failed"), "{err}");
    let m = manifest(work.path());
    assert_eq!(status(&m, "good/dvr/r1").0, "done");
    let (s, reason) = status(&m, "bad/dvr/r1");
    assert_eq!(s, "failed");
    assert!(reason.contains("is not a directory"), "{reason}");
}

#[test]
fn a_trial_the_host_cannot_run_is_skipped_with_the_reason() {
    // md: is the host's limit either way: this kernel lacks MD, or iotrial cannot build md:
    // stacks yet.
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let stacks = format!(
        "[[stacks]]\nname = \"dir\"\ndevices = [\"dir:{}\"]\n\n[[stacks]]\nname = \"raid\"\ndevices = [\"md:raid10\"]\nfs = \"xfs\"\n",
        data.display()
    );
    let path = study(work.path(), &stacks);
    let (code, out, err) = run_study(work.path(), &path);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("raid/dvr/r1: skipped: 'md:raid10': "), "{out}");
    let m = manifest(work.path());
    assert_eq!(status(&m, "dir/dvr/r1").0, "done");
    let (s, reason) = status(&m, "raid/dvr/r1");
    assert_eq!(s, "skipped");
    assert!(reason.contains("md:"), "{reason}");
}

#[test]
fn bad_input_to_run_and_probe_exits_2_before_anything_is_built() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let image = ["run", "dvr", "--target", "image:size=1GiB"];
    let cases: [Vec<&str>; 6] = [
        [
            &image[..],
            &["--fs", "ext4", "--scheduler", "cfq-nonexistent"],
        ]
        .concat(),
        [&image[..], &["--fs", "ext4", "--mount", "noatime, sync"]].concat(),
        [&image[..], &["--tunable", "read_expire=5"]].concat(),
        vec!["run", "dvr", "--target", "emu:flash,open_units=99"],
        vec!["device", "probe", "emu:hdd,rpm=fast"],
        vec!["device", "probe", "dir:/tmp"],
    ];
    for args in cases {
        let mut cmd = iotrial(work.path());
        cmd.args(&args);
        if args[0] == "run" {
            cmd.arg("--out").arg(&out);
        }
        let o = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
    }
    assert!(!out.exists(), "no results written");
}
