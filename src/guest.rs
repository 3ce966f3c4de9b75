//! iotrial's guest agent: the first process of a VM trial's guest (`iotrial guest`, run by the
//! initramfs's /init). It mounts /proc, /sys, /dev and /tmp, loads the virtio modules, says
//! hello to the host over the virtio serial port, and runs the one trial the host asks for on
//! the guest's disks (the stack's devices on the host) with the same code a native trial runs;
//! then it sends the trial's files back and powers the guest off.

use crate::cause::{Cause, HasCause};
use crate::stack::build::provision::BuildOptions;
use crate::stack::ledger::Ledger;
use crate::stack::DeviceSpec;
use crate::trial::{self, Setup};
use crate::vm::channel::{Channel, GuestDisk, Msg, Request, PORT};
use crate::vm::image::MODULE_LIST;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs the guest agent; never returns (it powers the guest off).
pub fn main() -> ! {
    // The guest runs nothing but its trial: its own dirty limits may stand for the stack's.
    crate::stack::build::dirty::allow_whole_machine();
    if let Err(e) = mount_basics() {
        eprintln!("iotrial guest: {e}");
    }
    let modules = Arc::new(ModuleList::read());
    // The stack's modules load while the virtio ones do and the guest says hello.
    let early = {
        let m = Arc::clone(&modules);
        std::thread::spawn(move || {
            for name in cmdline_modules() {
                if let Err(e) = m.load(&name) {
                    eprintln!("iotrial guest: load {name}: {e}");
                }
            }
        })
    };
    for m in crate::vm::modules::BOOT {
        if let Err(e) = modules.load(m) {
            eprintln!("iotrial guest: load {m}: {e}");
        }
    }
    match port().and_then(|p| serve(&p, &modules, early)) {
        Ok(()) => {}
        Err(e) => eprintln!("iotrial guest: {e}"),
    }
    rustix::fs::sync();
    let _ = rustix::system::reboot(rustix::system::RebootCommand::PowerOff);
    // The kernel powers the machine off; nothing after this runs.
    std::process::exit(0)
}

/// The modules the host named on the kernel command line.
fn cmdline_modules() -> Vec<String> {
    let line = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    let key = format!("{}=", crate::vm::qemu::MODULES_ARG);
    line.split_whitespace()
        .filter_map(|a| a.strip_prefix(&key))
        .flat_map(|v| v.split(',').map(String::from).collect::<Vec<_>>())
        .collect()
}

/// Mounts what the guest's tools need and sets their PATH.
fn mount_basics() -> Result<(), String> {
    use rustix::mount::{mount, MountFlags};
    for (src, target, fs) in [
        ("proc", "/proc", "proc"),
        ("sysfs", "/sys", "sysfs"),
        ("devtmpfs", "/dev", "devtmpfs"),
        ("tmpfs", "/tmp", "tmpfs"),
        ("tmpfs", "/run", "tmpfs"),
    ] {
        let _ = std::fs::create_dir_all(target);
        mount(src, target, fs, MountFlags::empty(), None)
            .map_err(|e| format!("mount {target}: {e}"))?;
    }
    std::env::set_var("PATH", "/sbin:/bin");
    std::env::set_var("TMPDIR", "/tmp");
    std::env::set_var("IOTRIAL_EXE", "/bin/iotrial");
    Ok(())
}

/// The image's kernel modules, by name, with their dependencies.
struct ModuleList {
    entries: BTreeMap<String, (PathBuf, Vec<String>)>,
}

impl ModuleList {
    fn read() -> ModuleList {
        let list: Vec<Json> = std::fs::read(Path::new("/").join(MODULE_LIST))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let entries = list
            .iter()
            .filter_map(|m| {
                let name = m["name"].as_str()?.to_string();
                let file = PathBuf::from(m["file"].as_str()?);
                let deps = m["depends"]
                    .as_array()
                    .map(|d| {
                        d.iter()
                            .filter_map(|x| x.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
                Some((name, (file, deps)))
            })
            .collect();
        ModuleList { entries }
    }

    /// Loads module `name` after its dependencies; one built into the kernel (not in the
    /// list) or already loaded is fine.
    fn load(&self, name: &str) -> Result<(), String> {
        let name = crate::vm::modules::canonical(name);
        let Some((file, deps)) = self.entries.get(&name) else {
            return Ok(());
        };
        for d in deps {
            self.load(d)?;
        }
        if Path::new("/sys/module")
            .join(&name)
            .join("initstate")
            .exists()
        {
            return Ok(());
        }
        let f = std::fs::File::open(file).map_err(|e| format!("{}: {e}", file.display()))?;
        match rustix::system::finit_module(&f, c"", 0) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => Ok(()),
            Err(e) => Err(format!("{}: {e}", file.display())),
        }
    }
}

/// The control port's device (/dev/vportNpM named `iotrial`), waiting for devtmpfs to make it.
fn port() -> Result<PathBuf, String> {
    for _ in 0..500 {
        for e in std::fs::read_dir("/sys/class/virtio-ports")
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = std::fs::read_to_string(e.path().join("name")).unwrap_or_default();
            let dev = Path::new("/dev").join(e.file_name());
            if name.trim() == PORT && dev.exists() {
                return Ok(dev);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Err(format!("no virtio serial port named {PORT}"))
}

/// Says hello, runs the requested trial, sends its files back.
fn serve(
    port: &Path,
    modules: &ModuleList,
    early: std::thread::JoinHandle<()>,
) -> Result<(), String> {
    // A port opens once; its reader and writer share the descriptor.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(port)
        .map_err(|e| format!("{}: {e}", port.display()))?;
    let w = f.try_clone().map_err(|e| e.to_string())?;
    let mut ch = Channel::new(Box::new(f), Box::new(w));
    let hello = Msg::Hello {
        kernel: release(),
        uptime_s: uptime(),
        disks: disks(),
    };
    ch.send(&hello).map_err(|e| e.to_string())?;
    let req = match ch.recv().map_err(|e| e.to_string())? {
        Some(r) => match r.msg {
            Msg::Run(req) => req,
            other => return Err(format!("expected a trial, got {other:?}")),
        },
        None => return Err("the host closed the channel".into()),
    };
    let _ = early.join();
    let reply = match run(&req, modules, &mut ch) {
        Ok(stats) => Msg::Done { diskstats: stats },
        Err((cause, message)) => Msg::Failed { cause, message },
    };
    ch.send(&reply).map_err(|e| e.to_string())
}

type Failure = (Cause, String);

fn fail<E: HasCause + std::fmt::Display>(e: E) -> Failure {
    (e.why(), e.to_string())
}

/// Runs the trial of `req` and sends its files; the guest's disk statistics over it.
fn run(req: &Request, modules: &ModuleList, ch: &mut Channel) -> Result<Json, Failure> {
    for m in &req.modules {
        modules
            .load(m)
            .map_err(|e| (Cause::Host, format!("load module {m}: {e}")))?;
    }
    let by_serial = disks();
    let mut paths = Vec::new();
    for s in &req.disks {
        let d = by_serial
            .iter()
            .find(|d| &d.serial == s)
            .ok_or_else(|| (Cause::Run, format!("no disk with serial {s} in the guest")))?;
        paths.push(PathBuf::from("/dev").join(&d.name));
    }
    let mut stack = req.stack.clone();
    let mut data = paths.clone();
    if req.logdev {
        let log = data.pop().expect("a log disk");
        stack.logdev = Some(format!("block:{}", log.display()));
    }
    let devices: Vec<DeviceSpec> = data.iter().map(|p| DeviceSpec::Block(p.clone())).collect();
    stack.devices = devices.iter().map(|d| d.to_string()).collect();
    let w = crate::workload::find(&req.kind).map_err(|e| (Cause::Input, e.to_string()))?;
    let params = w
        .resolve(&req.params)
        .map_err(|e| (Cause::Input, e.to_string()))?;
    let mut ledger = Ledger::new().map_err(|e| (Cause::Run, format!("ledger: {e}")))?;
    let stop = Arc::new(AtomicBool::new(false));
    let before = diskstats();
    let send = |ch: &mut Channel, m: &Msg| ch.send(m).map_err(|e| (Cause::Run, e.to_string()));
    send(ch, &Msg::Begin)?;
    // On the guest's console (the host keeps it): the trial has begun.
    eprintln!(
        "iotrial guest: trial {} on {} begins",
        req.workload, stack.name
    );
    let out = {
        // The trial's questions about its disks' power go to the host over the channel.
        let switch = crate::vm::power::GuestSwitch::new(ch);
        let setup = Setup {
            workload: &req.workload,
            stack: &stack,
            devices: &devices,
            build: BuildOptions {
                dry_run: false,
                wipe: paths.clone(),
                time_scale: Some(req.time_scale),
                for_guest: false,
                plan_cut: false,
            },
            monitor: &req.monitor,
            repeat: req.repeat.max(1),
            switch: Some(&switch),
            // The guest's disks are served on the host, which keeps the workload (the guest)
            // where it runs.
            cpus: crate::trial::cpus::Policy::All,
        };
        trial::run(w, &params, &setup, &mut ledger, &stop, false)
    };
    send(ch, &Msg::Ended)?;
    let stats = delta(&before, &diskstats());
    let out = out.map_err(fail)?;
    let dir = PathBuf::from("/tmp/trial");
    std::fs::create_dir_all(&dir).map_err(|e| (Cause::Run, e.to_string()))?;
    trial::write(&dir, &out).map_err(|e| (Cause::Run, e.to_string()))?;
    send_dir(ch, &dir, &dir)?;
    Ok(stats)
}

/// Sends every file under `dir`, named relative to `root`.
fn send_dir(ch: &mut Channel, root: &Path, dir: &Path) -> Result<(), Failure> {
    let io = |e: std::io::Error| (Cause::Run, e.to_string());
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            send_dir(ch, root, &p)?;
            continue;
        }
        let name = p.strip_prefix(root).unwrap_or(&p).display().to_string();
        let data = std::fs::read(&p).map_err(io)?;
        ch.send_file(&name, &data).map_err(io)?;
    }
    Ok(())
}

fn release() -> String {
    rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned()
}

fn uptime() -> f64 {
    std::fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|t| t.split_whitespace().next().and_then(|s| s.parse().ok()))
        .unwrap_or(0.0)
}

/// The guest's virtio disks as it sees them.
fn disks() -> Vec<GuestDisk> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/sys/block")
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("vd") {
            continue;
        }
        let read = |a: &str| crate::stack::sys::read_sysfs(&e.path().join(a));
        let sched = read("queue/scheduler").and_then(|s| {
            s.split_whitespace()
                .find(|w| w.starts_with('['))
                .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        });
        out.push(GuestDisk {
            serial: read("serial").unwrap_or_default(),
            size_bytes: read("size")
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0)
                * 512,
            rotational: read("queue/rotational").map(|r| r == "1"),
            logical_block_size: read("queue/logical_block_size").and_then(|s| s.parse().ok()),
            scheduler: sched,
            name,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// /proc/diskstats of the guest's disks and arrays: name -> the first 11 counters.
fn diskstats() -> BTreeMap<String, Vec<u64>> {
    let text = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = f.get(2)?.to_string();
            (name.starts_with("vd") || name.starts_with("md")).then(|| {
                let n = f[3..]
                    .iter()
                    .take(11)
                    .filter_map(|x| x.parse().ok())
                    .collect();
                (name, n)
            })
        })
        .collect()
}

/// What each disk did between two readings, in iostat's terms.
fn delta(a: &BTreeMap<String, Vec<u64>>, b: &BTreeMap<String, Vec<u64>>) -> Json {
    let mut out = serde_json::Map::new();
    for (name, after) in b {
        let before = a.get(name);
        let d = |i: usize| {
            after.get(i).copied().unwrap_or(0)
                - before
                    .and_then(|v| v.get(i))
                    .copied()
                    .unwrap_or(0)
                    .min(after.get(i).copied().unwrap_or(0))
        };
        out.insert(
            name.clone(),
            json!({
                "reads": d(0), "read_bytes": d(2) * 512, "writes": d(4), "write_bytes": d(6) * 512,
                "read_ms": d(3), "write_ms": d(7), "io_ms": d(9),
            }),
        );
    }
    Json::Object(out)
}
