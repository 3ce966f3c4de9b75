//! Issue 16, the VM layer: trials in a QEMU guest on devices served by the host, MD RAID10
//! built by the guest's kernel, native and guest side by side in a study, the guest killed and
//! everything released on SIGINT, and clear errors for a guest that cannot start or boot.
//! Guests run with 512 MiB and one small dvr trial; the tests skip (fail under CI) without
//! root, FUSE, QEMU, busybox or the guest kernel that scripts/install-deps.sh provides.
//! One guest boots at a time: without hardware virtualization QEMU emulates the guest's CPUs
//! (TCG), and two guests of two CPUs each on a loaded 2-core host starved the guest's RCU
//! threads past its boot deadline. Guests that must boot get [`VM`]'s long deadline, a guard
//! against a hang, never a timing assertion.

mod common;

use common::*;
use serde_json::Value as Json;
use std::path::Path;

/// A small dvr trial: 24 samples per stream of 256 KiB in 16 MiB regions.
fn small() -> Vec<&'static str> {
    "--set samples=24 --set region_size=16MiB --set io_size=256KiB"
        .split(' ')
        .collect()
}

const HDD: &str = "emu:hdd,size=2GiB,scale=10";

/// The guests' settings: 512 MiB, and 10 minutes to boot (a hang guard).
const VM: &str = "--vm=memory=512MiB,boot_timeout=600s";

/// Held while a test's guest runs: one guest at a time.
static ONE_GUEST: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `iotrial run dvr` with `args` and [`small`], its results in `out`; result.json.
fn run_json(work: &Path, out: &Path, args: &[&str]) -> Json {
    let mut a = vec!["run", "dvr", "--json", "--out"];
    let out = out.display().to_string();
    a.push(&out);
    a.extend(args);
    a.extend(small());
    let (code, stdout, stderr) = exit_of(work, &a);
    assert_eq!(code, Some(0), "{a:?}: {stderr}");
    serde_json::from_str(&stdout).unwrap()
}

/// Runs iotrial with `args`: its exit code, stdout and stderr.
fn exit_of(work: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = iotrial(work).args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

/// A test's work and results directories, when the host can run guests with `tools`, and
/// the turn of its guest (the lock is taken whether an earlier test panicked or not).
fn guest_dirs(
    test: &str,
    tools: &[&'static str],
) -> Option<(
    tempfile::TempDir,
    tempfile::TempDir,
    std::sync::MutexGuard<'static, ()>,
)> {
    ready_for_guests(test, tools).then(|| {
        let turn = ONE_GUEST.lock().unwrap_or_else(|e| e.into_inner());
        (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            turn,
        )
    })
}

/// QEMU processes whose command line names a path under `work`.
fn guests_under(work: &Path) -> Vec<String> {
    let w = work.display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("qemu-system") && c.contains(&w))
        .collect()
}

/// Every thread (its name and the CPUs it may run on) of the processes whose command line
/// names a path under `work` and holds `program`.
fn threads_under(work: &Path, program: &str) -> Vec<(String, Vec<usize>)> {
    let w = work.display().to_string();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(c) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let c = String::from_utf8_lossy(&c).replace('\0', " ");
        if !(c.contains(program) && c.contains(&w)) {
            continue;
        }
        for t in std::fs::read_dir(e.path().join("task"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let Ok(status) = std::fs::read_to_string(t.path().join("status")) else {
                continue;
            };
            let field = |k: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(k))
                    .map(|v| v.trim().to_string())
                    .unwrap_or_default()
            };
            out.push((field("Name:"), cpu_list(&field("Cpus_allowed_list:"))));
        }
    }
    out
}

/// The CPUs of a kernel CPU list (`0-2,5`).
fn cpu_list(text: &str) -> Vec<usize> {
    let n = |s: &str| s.parse::<usize>().unwrap();
    text.split(',')
        .filter(|p| !p.is_empty())
        .flat_map(|p| match p.split_once('-') {
            Some((a, b)) => (n(a)..=n(b)).collect::<Vec<_>>(),
            None => vec![n(p)],
        })
        .collect()
}

#[test]
fn a_trial_in_a_guest_has_a_verdict_stack_vm_and_host_cpu() {
    let Some((work, out, _turn)) = guest_dirs(
        "a_trial_in_a_guest_has_a_verdict_stack_vm_and_host_cpu",
        &["mkfs.xfs"],
    ) else {
        return;
    };
    let doc = run_json(
        work.path(),
        out.path(),
        &["--target", "image:size=1GiB", "--fs", "xfs", VM],
    );
    assert!(doc["verdict"]["record_mbit_guaranteed"].as_f64().unwrap() > 0.0);
    assert!(
        doc["verdict"]["host_cpu_pct"].as_f64().unwrap() > 0.0,
        "{}",
        doc["verdict"]
    );
    let vm = &doc["stack"]["vm"];
    let cmd = vm["qemu_command"].as_str().unwrap();
    assert!(cmd.starts_with("qemu-system-x86_64 "), "{cmd}");
    assert!(
        cmd.contains("virtio-blk-pci,drive=disk0,serial=iotrial0"),
        "{cmd}"
    );
    assert!(cmd.contains("cache=writeback"), "{cmd}");
    assert_eq!(vm["cache"], "writeback");
    assert!(
        vm["guest_kernel"].as_str().unwrap().contains("cloud-amd64"),
        "{vm}"
    );
    assert_eq!(vm["guest_disks"][0]["serial"], "iotrial0");
    assert_eq!(vm["guest_disks"][0]["size_bytes"], 1u64 << 30);
    assert!(
        vm["guest_diskstats"]["vda"]["writes"].as_u64().unwrap() > 0,
        "{vm}"
    );
    // The host's monitors watched the loop device passed to the guest and QEMU's threads,
    // through the guest's boot and its trial; the guest's own monitors are the guest's.
    let host = &doc["monitor"];
    assert!(
        host["devices"][0]["totals"]["written_kB"].as_f64().unwrap() > 0.0,
        "{host}"
    );
    let phases: Vec<&str> = host["threads"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["phase"].as_str())
        .collect();
    assert_eq!(phases, ["boot", "trial"], "{host}");
    let guest = &vm["guest_monitor"];
    assert!(guest["devices"].is_array(), "{vm}");
    // The guest built the filesystem on its own disk; the host passed its loop device.
    assert!(doc["stack"]["mkfs"]["command"]
        .as_str()
        .unwrap()
        .ends_with("/dev/vda"));
    assert_eq!(doc["stack"]["host_devices"][0]["spec"], "image:size=1GiB");
    let trial = walk(out.path())
        .into_iter()
        .find(|p| p.ends_with("r1/samples.csv"))
        .expect("samples.csv in the results");
    assert!(std::fs::read_to_string(trial).unwrap().lines().count() > 24);
    assert!(guests_under(work.path()).is_empty());
    assert_cleaned_up(work.path(), &[]);
}

#[test]
fn md_raid10_in_a_guest_over_four_emulated_hdds() {
    let Some((work, out, _turn)) = guest_dirs(
        "md_raid10_in_a_guest_over_four_emulated_hdds",
        // mdadm goes into the guest's image from the host or from the cache directory
        // (scripts/install-deps.sh extracts it there); the host itself needs none.
        &["mkfs.xfs"],
    ) else {
        return;
    };
    let mut args = Vec::new();
    for _ in 0..4 {
        args.extend(["--target", HDD]);
    }
    args.extend(["--md", "raid10", "--fs", "xfs", VM]);
    let doc = run_json(work.path(), out.path(), &args);
    let md = &doc["stack"]["md"];
    assert_eq!(md["level"], "raid10");
    assert_eq!(md["members"].as_array().unwrap().len(), 4);
    assert!(md["mdstat"].as_str().unwrap().contains("raid10"), "{md}");
    let array = md["array"].as_str().unwrap();
    assert!(array.starts_with("/dev/md"), "{md}");
    assert!(doc["stack"]["mkfs"]["command"]
        .as_str()
        .unwrap()
        .ends_with(array));
    // Four emulated drives served on the host, each with its model's statistics.
    assert_eq!(doc["stack"]["emulated"].as_array().unwrap().len(), 4);
    assert_eq!(doc["time_scale"], 10.0);
    assert!(doc["verdict"]["record_mbit_guaranteed"].as_f64().unwrap() > 0.0);
    assert_cleaned_up(work.path(), &[]);
}

#[test]
fn a_study_puts_native_and_guest_side_by_side_with_their_ratio() {
    let Some((work, out, _turn)) = guest_dirs(
        "a_study_puts_native_and_guest_side_by_side_with_their_ratio",
        &["mkfs.xfs"],
    ) else {
        return;
    };
    let study = out.path().join("s.toml");
    std::fs::write(
        &study,
        format!(
            "name = \"vm\"\ndevice = \"{HDD}\"\n\n[[workloads]]\nkind = \"dvr\"\nset = {{ samples = \"24\", region_size = \"16MiB\", io_size = \"256KiB\" }}\n\n[[stacks]]\nname = \"xfs\"\nfs = \"xfs\"\nvm = [false, {{ memory = \"512MiB\", boot_timeout = \"600s\" }}]\n"
        ),
    )
    .unwrap();
    let (s, o) = (
        study.display().to_string(),
        out.path().display().to_string(),
    );
    let (code, stdout, stderr) = exit_of(work.path(), &["study", &s, "--out", &o]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("native and in a guest"), "{stdout}");
    let row = stdout
        .lines()
        .find(|l| l.contains("xfs-vm") && l.contains("guest: xfs"))
        .unwrap_or_else(|| panic!("no guest row: {stdout}"));
    let cells: Vec<&str> = row
        .split('┆')
        .map(|c| c.trim_matches(|c: char| c == '│' || c.is_whitespace()))
        .collect();
    let (native, guest, ratio): (f64, f64, f64) = (
        cells[2].parse().unwrap(),
        cells[3].parse().unwrap(),
        cells[4].parse().unwrap(),
    );
    assert!(
        (guest / native - ratio).abs() < 0.01 * ratio.max(0.1),
        "{row}"
    );
    let md = walk(out.path())
        .into_iter()
        .find(|p| p.ends_with("report.md"))
        .unwrap();
    assert!(std::fs::read_to_string(md)
        .unwrap()
        .contains("Native and in a guest"));
    assert_cleaned_up(work.path(), &[]);
}

/// Starts an endless dvr trial in a guest on an emulated HDD, its files under `work`, and
/// waits until the guest says on its console (kept under `work`) that the trial began.
fn start_endless_guest_trial(work: &Path, out: &Path, extra: &[&str]) -> std::process::Child {
    let o = out.display().to_string();
    let mut args = vec!["run", "dvr", "--out", &o, "--target", HDD, "--fs", "xfs"];
    args.push(VM);
    args.extend(extra);
    args.extend(ENDLESS);
    let child = spawn_iotrial(work, &args);
    wait_until("the trial begins in the guest", 600, || {
        walk(work).iter().any(|p| {
            p.ends_with("console.log")
                && std::fs::read_to_string(p).is_ok_and(|t| t.contains("iotrial guest: trial"))
        })
    });
    assert!(!guests_under(work).is_empty());
    child
}

#[test]
fn sigint_during_a_guest_trial_leaves_no_qemu_loop_or_mount() {
    let test = "sigint_during_a_guest_trial_leaves_no_qemu_loop_or_mount";
    let Some((work, out, _turn)) = guest_dirs(test, &["mkfs.xfs"]) else {
        return;
    };
    let apart = ["--workload-cpus", "apart"];
    let mut child = start_endless_guest_trial(work.path(), out.path(), &apart);
    let loops = loop_backings_under(work.path());
    assert!(!loops.is_empty());
    // Kept apart, every thread of QEMU runs off the CPU of the device server's reply timer;
    // looked at now, judged once the guest is stopped, so a failure leaves nothing running.
    let placed = qemu_off_the_timer(work.path());
    signal(&child, rustix::process::Signal::INT);
    let status = reaped(&mut child, 60);
    assert_eq!(status.code(), Some(130));
    assert!(guests_under(work.path()).is_empty(), "QEMU left running");
    assert_cleaned_up(work.path(), &loops);
    match placed {
        Ok(()) => {}
        Err(Some(e)) => panic!("{e}"),
        Err(None) => skip(
            test,
            "one CPU: the guest cannot be kept off the timer's (checked only its cleanup)",
        ),
    }
}

/// Whether every QEMU thread of the trial under `work` runs off the CPU of its device
/// server's timer: Err(None) when this host has one CPU, so they cannot.
fn qemu_off_the_timer(work: &Path) -> Result<(), Option<String>> {
    let lead: Vec<usize> = threads_under(work, "device serve")
        .into_iter()
        .filter(|(comm, _)| comm == "emu-timer")
        .flat_map(|(_, cpus)| cpus)
        .collect();
    let qemu = threads_under(work, "qemu-system");
    if lead.is_empty() || qemu.is_empty() {
        return Err(Some(format!("timer on {lead:?}, QEMU's threads {qemu:?}")));
    }
    if iotrial::engine::cpus::allowed_cpus().len() < 2 {
        return Err(None);
    }
    match qemu
        .iter()
        .find(|(_, cpus)| cpus.iter().any(|c| lead.contains(c)))
    {
        Some((comm, cpus)) => Err(Some(format!(
            "QEMU's {comm} on {cpus:?}, the timer on {lead:?}"
        ))),
        None => Ok(()),
    }
}

#[test]
fn sigkill_during_a_guest_trial_is_released_by_the_device_server() {
    let test = "sigkill_during_a_guest_trial_is_released_by_the_device_server";
    let Some((work, out, _turn)) = guest_dirs(test, &["mkfs.xfs"]) else {
        return;
    };
    let mut child = start_endless_guest_trial(work.path(), out.path(), &[]);
    let loops = loop_backings_under(work.path());
    child.kill().unwrap();
    assert!(!reaped(&mut child, 10).success());
    // QEMU dies with the run (PR_SET_PDEATHSIG); the device server kills it too if not, and
    // releases the emulated device, the loop device and the directories.
    wait_until("the guest and the devices are released", 60, || {
        guests_under(work.path()).is_empty() && leftovers(work.path(), &loops).is_empty()
    });
    let a = iotrial(work.path()).arg("cleanup").assert().success();
    let said = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(said.starts_with("nothing to clean up"), "{said}");
}

#[test]
fn a_guest_that_does_not_boot_in_time_is_an_error_with_its_console() {
    let Some((work, out, _turn)) = guest_dirs(
        "a_guest_that_does_not_boot_in_time_is_an_error_with_its_console",
        &[],
    ) else {
        return;
    };
    let o = out.path().display().to_string();
    let mut args = vec!["run", "dvr", "--out", &o, "--target", "image:size=1GiB"];
    args.push("--vm=memory=512MiB,boot_timeout=50ms");
    args.extend(small());
    let (code, _, stderr) = exit_of(work.path(), &args);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("the guest did not boot in 0.05 s"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the guest's last console lines"),
        "{stderr}"
    );
    assert!(guests_under(work.path()).is_empty());
    assert_cleaned_up(work.path(), &[]);
}

#[test]
fn a_missing_guest_kernel_names_its_package() {
    let test = "a_missing_guest_kernel_names_its_package";
    if !ready(test, &[Need::Tool("qemu-system-x86_64")]) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let kernel = "--vm=kernel=/nonexistent/boot/vmlinuz-0-cloud-amd64";
    let (code, _, stderr) = exit_of(
        work.path(),
        &["run", "dvr", "--target", "image:size=1GiB", kernel],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("linux-image-cloud-amd64"), "{stderr}");
    assert!(stderr.contains("scripts/install-deps.sh"), "{stderr}");
}

#[test]
fn bad_vm_settings_exit_2_naming_the_key() {
    let work = tempfile::tempdir().unwrap();
    let image = ["run", "dvr", "--target", "image:size=1GiB"];
    let (code, _, stderr) = exit_of(work.path(), &[&image[..], &["--vm=aio=native"]].concat());
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--vm: aio=native needs cache=none"),
        "{stderr}"
    );
    let md = ["--md", "raid10", "--fs", "xfs"];
    let (code, _, stderr) = exit_of(work.path(), &[&image[..], &md].concat());
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("md: raid10 needs at least 2 devices; 1 given"),
        "{stderr}"
    );
}

#[test]
fn a_guest_whose_qemu_exits_is_an_error_with_qemus_reason() {
    let test = "a_guest_whose_qemu_exits_is_an_error_with_qemus_reason";
    let Some((work, out, _turn)) = guest_dirs(test, &[]) else {
        return;
    };
    // A "kernel" QEMU cannot boot, with the module tree beside it that iotrial looks for.
    let root = out.path().join("k");
    std::fs::create_dir_all(root.join("boot")).unwrap();
    std::fs::create_dir_all(root.join("lib/modules/0.0-cloud-amd64")).unwrap();
    let kernel = root.join("boot/vmlinuz-0.0-cloud-amd64");
    std::fs::write(&kernel, b"not a kernel").unwrap();
    let vm = format!("{VM},kernel={}", kernel.display());
    let o = out.path().display().to_string();
    let args = [
        "run",
        "dvr",
        "--out",
        &o,
        "--target",
        "image:size=1GiB",
        &vm,
    ];
    let (code, _, stderr) = exit_of(work.path(), &args);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("QEMU exited"), "{stderr}");
    assert!(
        stderr.contains("the guest's last console lines"),
        "{stderr}"
    );
    assert!(guests_under(work.path()).is_empty());
    assert_cleaned_up(work.path(), &[]);
}
