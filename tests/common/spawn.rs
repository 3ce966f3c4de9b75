//! The real binary, run with its ledger and temporary files under a test's own directory, in
//! the foreground or the background; and waiting on what it writes.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Parameters that keep a dvr trial running until it is interrupted.
pub const ENDLESS: &[&str] = &[
    "--set",
    "samples=1000000",
    "--set",
    "region_size=16MiB",
    "--set",
    "io_size=64KiB",
];

/// The real binary, its ledger and temporary files under `work`.
pub fn iotrial(work: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("iotrial").unwrap();
    c.env("IOTRIAL_LEDGER_DIR", work.join("ledger"))
        .env("TMPDIR", work);
    c
}

/// Starts the real binary with `args` in the background, its ledger and temporary files under
/// `work`, its output discarded.
pub fn spawn_iotrial(work: &Path, args: &[&str]) -> std::process::Child {
    spawn_with_stderr(work, args, std::process::Stdio::null())
}

/// As [`spawn_iotrial`], with its standard error written to `log` (for a test to show when the
/// run ends otherwise than it expects).
#[allow(dead_code)]
pub fn spawn_iotrial_logged(work: &Path, args: &[&str], log: &Path) -> std::process::Child {
    let file = std::fs::File::create(log).unwrap();
    spawn_with_stderr(work, args, file.into())
}

fn spawn_with_stderr(
    work: &Path,
    args: &[&str],
    stderr: std::process::Stdio,
) -> std::process::Child {
    Command::new(assert_cmd::cargo::cargo_bin("iotrial"))
        .env("IOTRIAL_LEDGER_DIR", work.join("ledger"))
        .env("TMPDIR", work)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// Polls `cond` every 20 ms for up to `secs` seconds; panics naming `what` if it never holds.
/// The bound is a deadlock guard, not a timing assertion: give it generous room.
pub fn wait_until(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !cond() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out after {secs} s waiting: {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Every file under `dir`, recursively.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() && !p.is_symlink() {
                v.extend(walk(&p));
            }
            v.push(p);
        }
    }
    v
}

/// Every file under `dir` on `dir`'s own filesystem: it does not descend into what is mounted
/// below `dir`, so a test polling a trial's directory never holds the trial's mount busy while
/// the trial unmounts it.
pub fn walk_this_fs(dir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    fn go(dir: &Path, dev: u64, v: &mut Vec<PathBuf>) {
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd.flatten() {
                let p = e.path();
                match std::fs::symlink_metadata(&p) {
                    Ok(m) if m.is_dir() && m.dev() == dev => go(&p, dev, v),
                    _ => {}
                }
                v.push(p);
            }
        }
    }
    let mut v = Vec::new();
    if let Ok(m) = std::fs::metadata(dir) {
        go(dir, m.dev(), &mut v);
    }
    v
}

/// The stream files (`NN-<stream>.dat`) a trial made under `dir`: they exist from the
/// trial's layout until the trial ends, so a test that sees them knows the trial is running.
pub fn stream_files_under(dir: &Path) -> Vec<PathBuf> {
    walk(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "dat"))
        .collect()
}

/// Sends `sig` to `child`.
pub fn signal(child: &std::process::Child, sig: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, sig).unwrap();
}

/// Waits up to `secs` for `child` to exit; its status.
pub fn reaped(child: &mut std::process::Child, secs: u64) -> std::process::ExitStatus {
    let mut status = None;
    wait_until("the process exits", secs, || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    status.unwrap()
}

/// Starts an endless dvr trial on the stack `stack_args` describes (`--target ... --fs ...`),
/// its files under `work`, and waits until the trial's ten stream files exist (the trial is
/// then filling them or running).
pub fn start_endless_trial(work: &Path, stack_args: &[&str]) -> std::process::Child {
    let out = work.join("out").display().to_string();
    let mut args = vec!["run", "dvr", "--out", &out];
    args.extend(stack_args);
    args.extend(ENDLESS);
    let child = spawn_iotrial(work, &args);
    wait_until("the trial's stream files exist", 120, || {
        stream_files_under(work).len() == 10
    });
    child
}

/// The one entry of directory `dir` (a results directory under `--out`).
pub fn only_entry(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .next()
        .expect("an entry")
        .unwrap()
        .path()
}

/// Runs `iotrial study STUDY --out OUT` (ledger and temporary files under `work`), expecting
/// success; its standard output.
pub fn study_succeeds(work: &Path, study: &Path, out: &Path) -> String {
    let a = iotrial(work)
        .arg("study")
        .arg(study)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

/// A study file's `[[stacks]]` tables, one per name in `names`, each on the directory `data`
/// (stacks that need no root).
pub fn dir_stacks(data: &Path, names: &[&str]) -> String {
    names
        .iter()
        .map(|n| {
            format!(
                "[[stacks]]\nname = \"{n}\"\ndevices = [\"dir:{}\"]\n",
                data.display()
            )
        })
        .collect()
}

/// `iotrial study NAME --quick --dry-run` under `work`: its output and the stacks it lists, in
/// order.
pub fn dry_run_stacks(work: &Path, study: &str) -> (String, Vec<String>) {
    let a = iotrial(work)
        .args(["study", study, "--quick", "--dry-run"])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let stacks = out
        .lines()
        .filter_map(|l| l.strip_prefix("# stack "))
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect();
    (out, stacks)
}

/// `iotrial device serve SPEC --json` running in the background (the binary at `bin`): its
/// first line (the device and the model's expectations) read, its statistics line read when
/// it is stopped.
pub struct Served {
    pub child: std::process::Child,
    out: std::io::BufReader<std::process::ChildStdout>,
    /// The first line: `device`, `expectations`, ...
    pub ready: serde_json::Value,
    stopped: bool,
}

impl Served {
    /// Starts the server and reads its first line.
    pub fn start(bin: &str, spec: &str) -> Served {
        Served::start_env(bin, spec, &[])
    }

    /// [`Served::start`] with `env` set for the server (`TMPDIR`: where it keeps its image).
    pub fn start_env(bin: &str, spec: &str, env: &[(&str, &str)]) -> Served {
        use std::io::BufRead;
        let mut child = Command::new(bin)
            .args(["device", "serve", spec, "--json"])
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("device serve starts");
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let ready = serde_json::from_str(&line).expect("device line");
        Served {
            child,
            out,
            ready,
            stopped: false,
        }
    }

    /// The loop device it serves on.
    pub fn device(&self) -> String {
        self.ready["device"].as_str().unwrap().to_string()
    }

    /// Stops it with SIGINT; its statistics line.
    pub fn stop(mut self) -> serde_json::Value {
        use std::io::BufRead;
        self.stopped = true;
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
        assert!(self.child.wait().unwrap().success());
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        serde_json::from_str(&line).expect("statistics line")
    }
}

/// A server a failing test did not stop is stopped (it serves until told, and would outlive
/// the test).
impl Drop for Served {
    fn drop(&mut self) {
        if !self.stopped {
            if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
                let _ = self.child.wait();
            }
        }
    }
}
