//! One trial in a guest, from the host: check the host, get the image, attach the stack's
//! devices, start the host's monitors, start QEMU (in the ledger), wait for the guest to boot,
//! ask it for the trial, measure QEMU's CPU while the trial runs, receive the trial's files, and
//! describe the virtual machine for the stack as built. The guest is killed on every way out.

use super::channel::{self, Channel, Msg, Received, Request};
use super::qemu::{self, Machine};
use super::{cpu, host, image, modules, VmError};
use crate::engine::cpus::CpuSet;
use crate::stack::actions::Actions;
use crate::stack::blockdevs::{kernel_name, DeviceRole, StackDevice, StackDevices};
use crate::stack::build::dirty;
use crate::stack::build::provision::{self, Attached, BuildOptions};
use crate::stack::ledger::Ledger;
use crate::stack::powercut::{HostSwitch, PowerSwitch};
use crate::stack::release::resource::Resource;
use crate::stack::spec::vm_key::{Aio, Cache, VmSettings};
use crate::stack::{DeviceSpec, StackError, StackSpec};
use crate::timeline::{Outside, Span, Timeline};
use serde_json::{json, Value as Json};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the host asks of a guest.
pub struct GuestTrial<'a> {
    /// The workload's name in the study, its kind and its resolved parameters.
    pub workload: &'a str,
    pub kind: &'a str,
    pub params: Vec<(String, String)>,
    pub stack: &'a StackSpec,
    pub devices: &'a [DeviceSpec],
    pub build: &'a BuildOptions,
    pub settings: &'a VmSettings,
    /// The monitors the guest runs on its side.
    pub monitor: &'a crate::monitor::Settings,
    /// Where the host's own monitors write while the guest runs (the devices passed to it,
    /// every host thread, QEMU's included), when they run.
    pub host_monitor_dir: Option<&'a Path>,
    /// Which repeat of the workload this is.
    pub repeat: usize,
    /// The workload cuts the power of its devices: the host's device servers do it when the
    /// guest asks.
    pub cuts_power: bool,
    /// The host CPUs QEMU runs on, given what the servers of the stack's emulated devices
    /// report (each stats object with `device` where it serves one of the guest's disks);
    /// None: every CPU.
    pub host_cpus: &'a dyn Fn(Vec<Json>) -> Option<Vec<usize>>,
}

/// What came back: the trial's files (in `dir`, which the ledger removes), the virtual
/// machine as it ran, and its host CPU.
pub struct GuestRun {
    pub dir: PathBuf,
    /// The files received, relative to `dir`.
    pub files: Vec<PathBuf>,
    /// `stack.vm` of result.json.
    pub vm: Json,
    /// The host devices passed to the guest, described.
    pub host_devices: Vec<Json>,
    /// QEMU's CPU while the trial ran in the guest, percent of one host core.
    pub host_cpu_pct: f64,
    pub warnings: Vec<String>,
    /// What the host's monitors recorded (phases `boot` and `trial` on the host's timeline).
    pub host_monitor: Option<crate::monitor::Recorded>,
    /// The host CPUs QEMU ran on ([`GuestTrial::host_cpus`]); None: every CPU.
    pub host_cpus: Option<Vec<usize>>,
}

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// Runs `t` in a guest. Resources go into `ledger`; the caller releases it.
pub fn run(t: &GuestTrial, ledger: &mut Ledger, stop: &AtomicBool) -> Result<GuestRun, VmError> {
    let qemu_path = host::qemu()?;
    let (accel, accel_warning) = host::accel(t.settings.accel)?;
    let kernel = host::kernel(t.settings)?;
    let exe =
        crate::stack::server::client::server_exe().map_err(|e| VmError::Missing(e.to_string()))?;
    let image = image::ensure(&kernel, &exe)?;
    let mut actions = Actions::new(false);
    let attached = provision::attach_only(t.stack, t.devices, t.build, ledger, &mut actions, stop)?;
    let host_dirty = limit_host_dirty(t, &attached, ledger, &mut actions)?;
    let work = work_dir(ledger)?;
    let request = request(t, &attached);
    let host_cpus = (t.host_cpus)(ledger.server_stats_of(&served(&attached)));
    let machine = Machine {
        qemu: qemu_path,
        accel,
        cpus: t.settings.cpus.unwrap_or_else(host::host_cpus),
        memory: t.settings.memory.unwrap_or_else(|| host::host_memory() / 2),
        kernel: kernel.image.clone(),
        initramfs: image.initramfs.clone(),
        console: work.join("console.log"),
        socket: work.join("ctl.sock"),
        cache: t.settings.cache,
        aio: aio_name(t.settings.aio),
        disks: attached.iter().map(|a| a.path.clone()).collect(),
        modules: request.modules.clone(),
        host_cpus: host_cpus.as_deref().and_then(CpuSet::of),
    };
    let timeline = Arc::new(Timeline::start());
    let monitors = t.host_monitor_dir.map(|dir| {
        let devices = watched(&attached);
        let watch = crate::monitor::Watch {
            settings: t.monitor,
            devices: &devices,
            timeline: &timeline,
            dir,
        };
        crate::monitor::start(&watch, ledger)
    });
    let boundary = |closes: Span| {
        if let Some(m) = &monitors {
            m.boundary(closes);
        }
    };
    boundary(Span::Outside(Outside::Before));
    timeline.begin("boot", "vm");
    let mut guest = Guest::start(&machine, ledger, t.settings.boot_timeout(accel), stop)?;
    let (hello, boot_s) = guest.boot()?;
    boundary(Span::Phase("boot".into()));
    timeline.begin("trial", "vm");
    guest.send(&Msg::Run(Box::new(request)))?;
    let switch = match t.cuts_power {
        true => {
            let mps = attached.iter().filter_map(|a| a.emulated.clone()).collect();
            Some(HostSwitch::new(ledger, mps).map_err(|e| VmError::Stack(StackError::Invalid(e)))?)
        }
        false => None,
    };
    let out = guest.collect(
        &work.join("trial"),
        switch.as_ref().map(|s| s as &dyn PowerSwitch),
    )?;
    drop(switch);
    boundary(Span::Phase("trial".into()));
    timeline.end();
    guest.finish();
    let host_monitor = monitors.map(|m| m.stop(ledger));
    let mut warnings: Vec<String> = accel_warning.into_iter().collect();
    warnings.extend(host_dirty.1);
    if !image.missing_tools.is_empty() {
        warnings.push(format!(
            "the guest image lacks {} (not installed on the host)",
            image.missing_tools.join(", ")
        ));
    }
    let vm = json!({
        "qemu_command": machine.command_line(),
        "qemu_version": qemu::version(&machine.qemu),
        "accel": accel.name(),
        "cpus": machine.cpus,
        "memory_bytes": machine.memory,
        "cache": t.settings.cache.name(),
        "aio": machine.aio,
        "guest_kernel": hello.0,
        "kernel_image": kernel.image,
        "initramfs": {"path": image.initramfs, "hash": image.hash, "built_now": image.built},
        "boot_s": boot_s,
        "trial_begins_s": out.begins_s,
        "guest_uptime_at_boot_s": hello.1,
        "guest_disks": hello.2,
        "guest_diskstats": out.diskstats,
        "host_dirty_limit": host_dirty.0,
        "host_cpu": out.cpu_detail,
    });
    Ok(GuestRun {
        dir: work.join("trial"),
        files: out.files,
        vm,
        host_devices: attached.iter().map(|a| a.described.clone()).collect(),
        host_cpu_pct: out.cpu_pct,
        host_monitor,
        warnings,
        host_cpus,
    })
}

/// The host's emulated devices passed to the guest, each with the FUSE mount point its server
/// serves: what [`Ledger::server_stats_of`] names the servers' devices by.
fn served(attached: &[Attached]) -> Vec<StackDevice> {
    attached
        .iter()
        .filter(|a| a.emulated.is_some())
        .map(|a| StackDevice {
            name: kernel_name(&a.path),
            path: a.path.clone(),
            role: DeviceRole::Data,
            emulated: a.emulated.clone(),
        })
        .collect()
}

/// With `cache=writeback` QEMU writes the guest's disks through the host's page cache, which
/// would absorb a buffered workload's writes behind the guest's own dirty limit (a guest's
/// MD RAID10 then "settles" above what its drives can take). The workload's `dirty_limit`
/// is therefore also the most the host may hold dirty for the guest's disks together: each
/// host device gets its share, as a strict limit, restored by the ledger. Returns what was
/// done and the warnings.
fn limit_host_dirty(
    t: &GuestTrial,
    attached: &[Attached],
    ledger: &mut Ledger,
    actions: &mut Actions,
) -> Result<(Option<Json>, Vec<String>), VmError> {
    let bytes = t
        .params
        .iter()
        .find(|(k, _)| k == "dirty_limit")
        .and_then(|(_, v)| crate::units::parse_size(v).ok())
        .unwrap_or(0);
    if t.settings.cache != Cache::Writeback || bytes == 0 || attached.is_empty() {
        return Ok((None, Vec::new()));
    }
    let paths: Vec<PathBuf> = attached.iter().map(|a| a.path.clone()).collect();
    let share = (bytes / paths.len() as u64).max(1 << 20);
    let stack = dirty::Stack {
        zfs: false,
        mounted: None,
        volume: &paths,
    };
    let mut warnings = Vec::new();
    let done = dirty::cap(&stack, share, ledger, actions, &mut warnings)?;
    Ok((done, warnings))
}

fn aio_name(a: Aio) -> &'static str {
    a.name()
}

/// The host's devices passed to the guest, for the host's monitors: each a data device (the
/// last the log device when the stack has one), with the disk holding its image.
fn watched(attached: &[Attached]) -> StackDevices {
    let mut devices = StackDevices::default();
    for a in attached {
        devices.add(StackDevice {
            name: kernel_name(&a.path),
            path: a.path.clone(),
            role: DeviceRole::Data,
            emulated: None,
        });
    }
    devices
}

/// The request for the guest: the stack with the guest's disks in place of the host's.
fn request(t: &GuestTrial, attached: &[Attached]) -> Request {
    let mut stack = t.stack.clone();
    stack.vm = Default::default();
    let mut mods: Vec<String> = Vec::new();
    if let Some(fs) = &stack.fs {
        mods.extend(modules::for_fs(fs).iter().map(|m| m.to_string()));
    }
    if let Ok(Some(md)) = stack.md_spec() {
        mods.extend(md.modules().iter().map(|m| m.to_string()));
    }
    Request {
        workload: t.workload.to_string(),
        kind: t.kind.to_string(),
        params: t.params.clone(),
        stack,
        disks: (0..attached.len()).map(qemu::serial).collect(),
        logdev: t.stack.logdev.is_some(),
        time_scale: t.devices[0].time_scale(),
        modules: mods,
        monitor: t.monitor.clone(),
        repeat: t.repeat,
    }
}

/// A fresh directory for the guest's socket, console and files, in the ledger first. Unix
/// socket paths are short, so it is under /tmp when the temporary directory's path is long.
fn work_dir(ledger: &mut Ledger) -> Result<PathBuf, VmError> {
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let name = format!("iotrial-guest-{}-{n}", std::process::id());
    let mut dir = std::env::temp_dir().join(&name);
    if dir.as_os_str().len() > 80 {
        dir = Path::new("/tmp").join(&name);
    }
    ledger
        .record(Resource::TempDir { path: dir.clone() })
        .map_err(|e| VmError::io("write the ledger", e))?;
    std::fs::create_dir_all(dir.join("trial"))
        .map_err(|e| VmError::io(format!("create {}", dir.display()), e))?;
    Ok(dir)
}

/// What the guest sent for the trial.
struct Collected {
    /// Seconds from starting QEMU to the trial's beginning in the guest.
    begins_s: f64,
    files: Vec<PathBuf>,
    diskstats: Json,
    cpu_pct: f64,
    cpu_detail: Json,
}

/// A running guest: its QEMU process, the channel to it, its console.
struct Guest<'a> {
    child: Child,
    pid: u32,
    console: PathBuf,
    rx: Option<Receiver<std::io::Result<Received>>>,
    tx: Option<Channel>,
    listener: UnixListener,
    started: Instant,
    boot_timeout: Duration,
    stop: &'a AtomicBool,
}

impl<'a> Guest<'a> {
    /// Starts QEMU, listening on the control socket first; in the ledger right after.
    fn start(
        m: &Machine,
        ledger: &mut Ledger,
        boot_timeout_s: f64,
        stop: &'a AtomicBool,
    ) -> Result<Guest<'a>, VmError> {
        let listener = UnixListener::bind(&m.socket)
            .map_err(|e| VmError::io(format!("listen on {}", m.socket.display()), e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| VmError::io("set the socket non-blocking", e))?;
        let started = Instant::now();
        let child = m
            .spawn()
            .map_err(|e| VmError::io(format!("start {}", m.qemu.display()), e))?;
        let pid = child.id();
        let g = Guest {
            child,
            pid,
            console: m.console.clone(),
            rx: None,
            tx: None,
            listener,
            started,
            boot_timeout: Duration::from_secs_f64(boot_timeout_s),
            stop,
        };
        // QEMU dies with this process (PR_SET_PDEATHSIG) until the ledger knows it.
        ledger
            .record(Resource::Guest {
                pid,
                marker: m.socket.clone(),
            })
            .map_err(|e| VmError::io("write the ledger", e))?;
        Ok(g)
    }

    /// Waits for QEMU to connect and the guest to say hello: (kernel, uptime, disks) and the
    /// seconds from starting QEMU.
    fn boot(&mut self) -> Result<((String, f64, Json), f64), VmError> {
        let stream = self.accept()?;
        let reader = stream
            .try_clone()
            .map_err(|e| VmError::io("clone the socket", e))?;
        let (send, rx) = mpsc::channel();
        let mut incoming = Channel::new(Box::new(reader), Box::new(std::io::sink()));
        std::thread::spawn(move || loop {
            match incoming.recv() {
                Ok(Some(r)) => {
                    if send.send(Ok(r)).is_err() {
                        return;
                    }
                }
                Ok(None) => return,
                Err(e) => {
                    let _ = send.send(Err(e));
                    return;
                }
            }
        });
        self.rx = Some(rx);
        self.tx = Some(Channel::new(Box::new(std::io::empty()), Box::new(stream)));
        let deadline = self.started + self.boot_timeout;
        match self.next(Some(deadline))?.msg {
            Msg::Hello {
                kernel,
                uptime_s,
                disks,
            } => Ok((
                (kernel, uptime_s, json!(disks)),
                self.started.elapsed().as_secs_f64(),
            )),
            other => Err(self.failed(format!("the guest said {other:?} before hello"))),
        }
    }

    /// QEMU's connection to the control socket.
    fn accept(&mut self) -> Result<UnixStream, VmError> {
        let deadline = self.started + self.boot_timeout;
        loop {
            match self.listener.accept() {
                Ok((s, _)) => {
                    s.set_nonblocking(false)
                        .map_err(|e| VmError::io("set the socket blocking", e))?;
                    return Ok(s);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    self.check(Some(deadline))?;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(VmError::io("accept QEMU's connection", e)),
            }
        }
    }

    fn send(&mut self, msg: &Msg) -> Result<(), VmError> {
        let tx = self.tx.as_mut().expect("booted");
        tx.send(msg)
            .map_err(|e| VmError::io("send to the guest", e))
    }

    /// The next message, checking the run's stop flag, QEMU's life and the deadline.
    fn next(&mut self, deadline: Option<Instant>) -> Result<Received, VmError> {
        loop {
            let r = self
                .rx
                .as_ref()
                .expect("booted")
                .recv_timeout(Duration::from_millis(100));
            match r {
                Ok(Ok(m)) => return Ok(m),
                Ok(Err(e)) => return Err(self.failed(format!("the guest's channel broke: {e}"))),
                Err(RecvTimeoutError::Timeout) => self.check(deadline)?,
                Err(RecvTimeoutError::Disconnected) => {
                    let _ = self.wait_exit(Duration::from_secs(5));
                    self.check(None)?;
                    return Err(self.failed("the guest closed its channel".into()));
                }
            }
        }
    }

    /// Fails when the run is stopped, QEMU has exited, or the deadline has passed.
    fn check(&mut self, deadline: Option<Instant>) -> Result<(), VmError> {
        if self.stop.load(Ordering::Relaxed) {
            self.kill();
            return Err(VmError::Interrupted);
        }
        if let Ok(Some(status)) = self.child.try_wait() {
            let mut err = String::new();
            if let Some(mut e) = self.child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            let what = if qemu::panicked(&self.console) {
                "the guest's kernel panicked".to_string()
            } else {
                format!("QEMU exited ({status}): {}", err.trim())
            };
            return Err(self.failed(what));
        }
        if deadline.is_some_and(|d| Instant::now() > d) {
            let secs = self.boot_timeout.as_secs_f64();
            return Err(self.failed(format!(
                "the guest did not boot in {} s",
                crate::units::trim_float(secs)
            )));
        }
        Ok(())
    }

    /// An error with the console's last 20 lines; the guest is killed.
    fn failed(&mut self, message: String) -> VmError {
        self.kill();
        let tail = qemu::console_tail(&self.console, 20);
        VmError::Guest {
            message,
            console: if tail.is_empty() {
                "(none: the guest wrote nothing to its console)".into()
            } else {
                tail
            },
        }
    }

    /// Receives the trial's files into `dir` until the guest is done, measuring QEMU's CPU
    /// from the trial's beginning to its end; the guest's questions about its disks' power go
    /// to `switch`.
    fn collect(
        &mut self,
        dir: &Path,
        switch: Option<&dyn PowerSwitch>,
    ) -> Result<Collected, VmError> {
        let mut files = Vec::new();
        let (mut begin, mut end) = (None, None);
        let mut begins_s = 0.0;
        loop {
            let r = self.next(None)?;
            match r.msg {
                Msg::Begin => {
                    begins_s = self.started.elapsed().as_secs_f64();
                    begin = Some(cpu::snapshot(self.pid));
                }
                Msg::Ended => end = Some(cpu::snapshot(self.pid)),
                Msg::File { name, .. } => {
                    let Some(rel) = channel::host_name(&name) else {
                        return Err(self.failed(format!("the guest sent a file named {name:?}")));
                    };
                    let path = dir.join(&rel);
                    if let Some(p) = path.parent() {
                        std::fs::create_dir_all(p)
                            .map_err(|e| VmError::io(format!("create {}", p.display()), e))?;
                    }
                    std::fs::write(&path, &r.data)
                        .map_err(|e| VmError::io(format!("write {}", path.display()), e))?;
                    files.push(rel);
                }
                Msg::Done { diskstats } => {
                    let (Some(a), Some(b)) = (begin, end) else {
                        return Err(self.failed(
                            "the guest did not mark its trial's beginning and end".into(),
                        ));
                    };
                    let (cpu_pct, cpu_detail) = cpu::between(&a, &b);
                    return Ok(Collected {
                        begins_s,
                        files,
                        diskstats,
                        cpu_pct,
                        cpu_detail,
                    });
                }
                Msg::Failed { cause, message } => {
                    self.kill();
                    return Err(VmError::InGuest { cause, message });
                }
                Msg::Power(ask) => {
                    let a = match switch {
                        Some(s) => super::power::answer(s, ask),
                        None => super::channel::PowerAnswer::Failed {
                            message: "the trial plans no power cut".into(),
                        },
                    };
                    self.send(&Msg::Powered(a))?;
                }
                other => {
                    return Err(self.failed(format!("unexpected message from the guest: {other:?}")))
                }
            }
        }
    }

    /// Lets the guest power off (killing it if it does not).
    fn finish(&mut self) {
        if !self.wait_exit(Duration::from_secs(30)) {
            self.kill();
        }
    }

    fn wait_exit(&mut self, within: Duration) -> bool {
        let until = Instant::now() + within;
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Guest<'_> {
    fn drop(&mut self) {
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            self.kill();
        }
    }
}
