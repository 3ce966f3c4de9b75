//! `iotrial device serve`, with the real binary, as root: it prints a loop device that another
//! program (fio) uses; Ctrl-C ends it, prints the model's statistics and leaves nothing behind,
//! also when a program still holds the device, and when the process that started it dies; bad
//! specs are refused with exit status 2.

mod common;

use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};

/// Starts `device serve SPEC --json` with its ledger and files under `work`; returns the
/// process and the first line it printed (the device).
fn serve(work: &Path, spec: &str) -> (Child, Value, BufReader<std::process::ChildStdout>) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iotrial"))
        .env("IOTRIAL_LEDGER_DIR", work.join("ledger"))
        .env("TMPDIR", work)
        .args(["device", "serve", spec, "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let ready: Value = serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("device serve printed {line:?}: {e}"));
    (child, ready, out)
}

/// Sends SIGINT, waits for the exit, and returns the statistics line.
fn stop(mut child: Child, mut out: BufReader<std::process::ChildStdout>) -> Value {
    signal(&child, rustix::process::Signal::INT);
    let status = reaped(&mut child, 60);
    assert!(status.success(), "device serve exited with {status}");
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("statistics {line:?}: {e}"))
}

#[test]
fn fio_runs_on_a_served_hdd_and_ctrl_c_leaves_nothing() {
    if !ready_to_emulate(
        "fio_runs_on_a_served_hdd_and_ctrl_c_leaves_nothing",
        &["losetup", "fio"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let (child, ready, out) = serve(work.path(), "emu:hdd,size=8GiB,scale=10");
    let dev = ready["device"].as_str().unwrap().to_string();
    assert!(dev.starts_with("/dev/loop"), "{ready}");
    assert_eq!(ready["capacity_bytes"], 8u64 << 30);
    // Its image is in TMPDIR, and it says whether that is in memory.
    assert!(
        ready["image"]
            .as_str()
            .unwrap()
            .starts_with(work.path().to_str().unwrap()),
        "{ready}"
    );
    let tmpfs = rustix::fs::statfs(work.path()).unwrap().f_type as u64 == 0x0102_1994;
    assert_eq!(ready["image_in_memory"], tmpfs, "{ready}");
    assert!(ready["expectations"]["random_read_ms"].as_f64().unwrap() > 1.0);
    // Block requests no larger than the server takes at once, as a stack's emulated devices:
    // each reaches the model whole.
    let name = dev.trim_start_matches("/dev/");
    let max_kb = std::fs::read_to_string(format!("/sys/block/{name}/queue/max_sectors_kb"))
        .unwrap()
        .trim()
        .parse::<u64>()
        .unwrap();
    assert!(max_kb <= 1024, "max_sectors_kb {max_kb}");
    let fio = std::process::Command::new(which("fio").unwrap())
        .args([
            "--name=randread",
            "--rw=randread",
            "--bs=4k",
            "--iodepth=1",
            "--ioengine=psync",
            "--direct=1",
            "--number_ios=100",
            "--output-format=json",
        ])
        .arg(format!("--filename={dev}"))
        .output()
        .unwrap();
    assert!(
        fio.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let report: Value = serde_json::from_slice(&fio.stdout).unwrap();
    let ios = report["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert_eq!(ios, 100, "{}", report["jobs"][0]["read"]);
    let stats = stop(child, out);
    let reads = stats["server"]["requests"]["read"].as_u64().unwrap();
    assert!(reads >= 100, "the server saw fio's reads: {stats}");
    assert_eq!(stats["model"], "hdd");
    assert!(stats["model_stats"].is_object(), "{stats}");
    assert_cleaned_up(work.path(), &[]);
}

#[test]
fn stopping_while_a_program_holds_the_device_still_leaves_nothing() {
    if !ready_to_emulate(
        "stopping_while_a_program_holds_the_device_still_leaves_nothing",
        &["losetup"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let (child, ready, out) = serve(work.path(), "emu:null,size=1GiB");
    let dev = ready["device"].as_str().unwrap().to_string();
    let loops = loop_backings_under(work.path());
    assert_eq!(loops.len(), 1);
    let held = std::fs::File::open(&dev).unwrap();
    let stats = stop(child, out);
    assert_eq!(stats["model"], "null");
    // Serving ended under the open device: its I/O now fails instead of hanging.
    use std::os::unix::fs::FileExt;
    let mut buf = [0u8; 4096];
    assert!(held.read_exact_at(&mut buf, 1 << 20).is_err());
    drop(held);
    wait_until("the loop device detaches once closed", 30, || {
        leftovers(work.path(), &loops).is_empty()
    });
}

/// Regression: a `device serve` whose parent was killed served on forever, holding its loop
/// device, FUSE mount and image.
#[test]
fn a_served_device_is_released_when_the_process_that_started_it_dies() {
    if !ready_to_emulate(
        "a_served_device_is_released_when_the_process_that_started_it_dies",
        &["losetup", "sh"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let outs = tempfile::tempdir().unwrap();
    let out = outs.path().join("serve.out");
    // The parent: a shell that starts device serve in the background and waits for it.
    let mut parent = std::process::Command::new("sh")
        .args([
            "-c",
            r#""$0" device serve "$1" --json > "$2" & echo $! > "$2.pid"; wait"#,
        ])
        .arg(assert_cmd::cargo::cargo_bin("iotrial"))
        .args(["emu:hdd,size=2GiB,scale=10"])
        .arg(&out)
        .env("IOTRIAL_LEDGER_DIR", work.path().join("ledger"))
        .env("TMPDIR", work.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The server's stderr (and its guard's) is this pipe: it ends when they have all exited.
    let stderr = parent.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut text);
        let _ = tx.send(text);
    });
    let lines = || {
        std::fs::read_to_string(&out)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    wait_until("device serve prints its device", 120, || {
        !lines().is_empty()
    });
    let pid: i32 = std::fs::read_to_string(outs.path().join("serve.out.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Whatever the assertions below say, the server is stopped.
    struct Stop(i32);
    impl Drop for Stop {
        fn drop(&mut self) {
            if let Some(pid) = rustix::process::Pid::from_raw(self.0) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
            }
        }
    }
    let _stop = Stop(pid);
    let ready: Value = serde_json::from_str(&lines()[0]).unwrap();
    assert!(ready["device"].as_str().unwrap().starts_with("/dev/loop"));
    assert_eq!(loop_backings_under(work.path()).len(), 1);
    signal(&parent, rustix::process::Signal::KILL);
    reaped(&mut parent, 60);
    let said = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("device serve and its guard exit once their parent is gone");
    assert!(
        said.contains("the process that started device serve is gone"),
        "{said}"
    );
    let lines = lines();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let stats: Value = serde_json::from_str(&lines[1]).unwrap();
    assert_eq!(stats["server"]["stopped_by"], "parent gone", "{stats}");
    let left = leftovers(work.path(), &[]);
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn device_serve_refuses_what_it_cannot_serve() {
    let work = tempfile::tempdir().unwrap();
    for (spec, needle) in [
        ("image:size=1GiB", "emulated device"),
        ("emu:hdd,size=0", "size"),
        ("emu:tape", "tape"),
    ] {
        let a = iotrial(work.path())
            .args(["device", "serve", spec])
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
        assert!(err.contains(needle), "{spec}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
}
