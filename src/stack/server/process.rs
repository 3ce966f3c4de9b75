//! The device server process of a run (`iotrial device serve --for-ledger LEDGER`): serves
//! the run's emulated devices on command, and when the run is gone (end of file on its stdin,
//! whatever ended the run) releases everything the run's ledger still lists, in the ledger's
//! order, stopping its own devices when their turn comes. It ignores SIGINT, SIGTERM and
//! SIGHUP: the run stops it in order, and it must outlive the run to serve the I/O the run
//! left in flight.

use super::protocol::{BackgroundReply, Command, PowerReply, Reply};
use crate::cause::HasCause;
use crate::emu::cut::{Circuit, InFlight};
use crate::emu::{resolve_mountpoint, EmuError, EmuServer, ModelSpec, ReplyTimer};
use crate::stack::release::cleanup;
use crate::stack::release::resource::{Released, Resource};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Gives each device of the process a reply timer of its own, not one they share (for
/// comparisons).
pub const TIMER_PER_DEVICE_ENV: &str = "IOTRIAL_EMU_TIMER_PER_DEVICE";

/// One device this process serves: its mount point, its model spec and its server.
struct Served {
    mountpoint: PathBuf,
    spec: String,
    server: EmuServer,
}

/// The devices this process serves, by mount point, and the reply timer they share (started
/// with the first of them).
#[derive(Default)]
struct Devices(Vec<Served>, Option<Arc<ReplyTimer>>);

impl Devices {
    fn position(&self, mountpoint: &Path) -> Option<usize> {
        let want = resolve_mountpoint(mountpoint);
        self.0
            .iter()
            .position(|d| d.mountpoint == mountpoint || d.server.mountpoint() == want)
    }

    /// The device at `mountpoint`, or the reply saying it is not served here.
    fn served(&self, mountpoint: &Path) -> Result<&Served, Box<Reply>> {
        match self.position(mountpoint) {
            Some(i) => Ok(&self.0[i]),
            None => Err(Box::new(Reply::failed(format!(
                "{} is not served here",
                mountpoint.display()
            )))),
        }
    }

    /// The timer the process's devices share, started the first time one is served.
    fn timer(&mut self) -> std::io::Result<Arc<ReplyTimer>> {
        if std::env::var_os(TIMER_PER_DEVICE_ENV).is_some() {
            return ReplyTimer::start();
        }
        if let Some(t) = &self.1 {
            return Ok(Arc::clone(t));
        }
        let t = ReplyTimer::start()?;
        self.1 = Some(Arc::clone(&t));
        Ok(t)
    }

    fn start(&mut self, spec: &str, backing: &Path, mountpoint: &Path, journal: bool) -> Reply {
        if self.position(mountpoint).is_some() {
            return Reply::failed(format!("{} is served already", mountpoint.display()));
        }
        let started = ModelSpec::parse(spec)
            .map_err(|e| (format!("emu:{spec}: {e}"), e.why()))
            .and_then(|m| {
                let scale = m.settings.scale;
                let model = m
                    .build()
                    .map_err(|e| (format!("emu:{spec}: {e}"), e.why()))?;
                let timer = self.timer().map_err(|e| {
                    let e = EmuError::Thread {
                        name: "emu-timer",
                        source: e,
                    };
                    (format!("emu:{spec}: {e}"), e.why())
                })?;
                let server = EmuServer::start_on(&timer, model, backing, mountpoint, scale)
                    .map_err(|e| (format!("emu:{spec}: {e}"), e.why()))?;
                server.set_stale(m.settings.stale);
                Ok(server)
            });
        match started {
            Ok(server) => {
                let file = server.device_file();
                if journal {
                    server.plan_cut();
                }
                self.0.push(Served {
                    mountpoint: mountpoint.to_path_buf(),
                    spec: spec.to_string(),
                    server,
                });
                Reply {
                    device_file: Some(file),
                    ..Default::default()
                }
            }
            Err((message, cause)) => Reply::failed_by(message, cause),
        }
    }

    fn stats(&self, mountpoint: &Path) -> Reply {
        match self.position(mountpoint) {
            Some(i) => Reply {
                stats: Some(self.0[i].server.stats()),
                ..Default::default()
            },
            None => Reply::failed(format!("{} is not served here", mountpoint.display())),
        }
    }

    /// Stops the device at `mountpoint`; None when it is not one of ours.
    fn stop(&mut self, mountpoint: &Path) -> Option<Result<(), String>> {
        let i = self.position(mountpoint)?;
        let d = self.0.remove(i);
        Some(d.server.stop().map_err(|e| e.to_string()))
    }

    fn background(&self, mountpoint: &Path, fast_forward_ns: u64) -> Reply {
        match self.position(mountpoint) {
            Some(i) => Reply {
                background: Some(BackgroundReply::of(
                    self.0[i].server.background(fast_forward_ns),
                )),
                ..Default::default()
            },
            None => Reply::failed(format!("{} is not served here", mountpoint.display())),
        }
    }

    fn log_start(&self, mountpoint: &Path, origin_mono_ns: u64) -> Reply {
        match self.position(mountpoint) {
            Some(i) => {
                self.0[i].server.start_log(origin_mono_ns);
                Reply::default()
            }
            None => Reply::failed(format!("{} is not served here", mountpoint.display())),
        }
    }

    fn log_stop(&self, mountpoint: &Path, path: &Path, lateness: &Path) -> Reply {
        match self
            .position(mountpoint)
            .map(|i| self.0[i].server.stop_log(path, lateness))
        {
            Some(Ok(counts)) => Reply {
                logged: Some(counts),
                ..Default::default()
            },
            Some(Err(e)) => Reply::failed(e.to_string()),
            None => Reply::failed(format!("{} is not served here", mountpoint.display())),
        }
    }

    /// One circuit over the devices at `mountpoints`, each of them planning its cut.
    fn wire(&self, mountpoints: &[PathBuf], at: Option<u64>, after: Option<u64>) -> Reply {
        let devices: Result<Vec<&Served>, Box<Reply>> =
            mountpoints.iter().map(|m| self.served(m)).collect();
        let devices = match devices {
            Ok(d) => d,
            Err(r) => return *r,
        };
        let members = devices.iter().map(|d| d.server.member()).collect();
        let circuit = std::sync::Arc::new(Circuit::new(members, at, after));
        for d in devices {
            d.server.plan_cut();
            d.server.wire(std::sync::Arc::clone(&circuit));
        }
        Reply::default()
    }

    fn power(&self, mountpoint: &Path) -> Reply {
        match self.served(mountpoint) {
            Ok(d) => Reply {
                power: Some(PowerReply {
                    off_mono_ns: d.server.off_at_mono(),
                    writes: d.server.circuit().map_or(0, |c| c.writes()),
                }),
                ..Default::default()
            },
            Err(r) => *r,
        }
    }

    fn cut(&self, mountpoint: &Path, in_flight: InFlight, seed: u64, at: Option<u64>) -> Reply {
        let d = match self.served(mountpoint) {
            Ok(d) => d,
            Err(r) => return *r,
        };
        if d.server.off_at_mono().is_none() {
            let Some(circuit) = d.server.circuit() else {
                return Reply::failed(format!(
                    "{} is on no circuit: wire it before cutting it",
                    mountpoint.display()
                ));
            };
            let now = crate::emu::mono_now_ns();
            circuit.cut(at.map_or(now, |a| a.min(now)));
        }
        match d.server.cut(in_flight, seed) {
            Ok(report) => Reply {
                cut: Some(report),
                ..Default::default()
            },
            Err(e) => Reply::failed(e.to_string()),
        }
    }

    fn revive(&self, mountpoint: &Path, fast: bool) -> Reply {
        let d = match self.served(mountpoint) {
            Ok(d) => d,
            Err(r) => return *r,
        };
        let model = ModelSpec::parse(&d.spec).and_then(|m| match fast {
            true => Ok(Box::new(crate::emu::null::Null::new(m.settings.capacity))
                as Box<dyn crate::emu::DeviceModel>),
            false => m.build(),
        });
        match model {
            Ok(m) => {
                d.server.revive(m);
                Reply::default()
            }
            Err(e) => Reply::failed(format!("emu:{}: {e}", d.spec)),
        }
    }

    fn handle(&mut self, cmd: Command) -> Reply {
        match cmd {
            Command::Start {
                spec,
                backing,
                mountpoint,
                journal,
            } => self.start(&spec, &backing, &mountpoint, journal),
            Command::Wire {
                mountpoints,
                at_mono_ns,
                after_writes,
            } => self.wire(&mountpoints, at_mono_ns, after_writes),
            Command::Power { mountpoint } => self.power(&mountpoint),
            Command::Cut {
                mountpoint,
                in_flight,
                seed,
                at_mono_ns,
            } => self.cut(&mountpoint, in_flight, seed, at_mono_ns),
            Command::Revive { mountpoint, fast } => self.revive(&mountpoint, fast),
            Command::Stats { mountpoint } => self.stats(&mountpoint),
            Command::Background {
                mountpoint,
                fast_forward_ns,
            } => self.background(&mountpoint, fast_forward_ns),
            Command::LogStart {
                mountpoint,
                origin_mono_ns,
            } => self.log_start(&mountpoint, origin_mono_ns),
            Command::LogStop {
                mountpoint,
                path,
                lateness,
            } => self.log_stop(&mountpoint, &path, &lateness),
            Command::Stop { mountpoint } => match self.stop(&mountpoint) {
                Some(Ok(())) => Reply::default(),
                Some(Err(e)) => Reply::failed(e),
                None => Reply::failed(format!("{} is not served here", mountpoint.display())),
            },
        }
    }
}

/// Writes a diagnostic line; the run's stderr may be gone, which is no reason to stop.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "iotrial device server: {line}");
}

/// Serves the run whose ledger file is `ledger` until its command pipe closes, then releases
/// what the ledger still lists. Returns whether everything was released.
pub fn serve_for_ledger(ledger: &Path) -> bool {
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        // Registering any handler replaces the default action (terminate) for that signal.
        let _ = signal_hook::flag::register(sig, std::sync::Arc::default());
    }
    let mut devices = Devices::default();
    let mut out = std::io::stdout().lock();
    let hello = Reply {
        pid: Some(std::process::id()),
        ..Default::default()
    };
    let _ = writeln!(
        out,
        "{}",
        serde_json::to_string(&hello).expect("serializes")
    );
    let _ = out.flush();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let reply = match serde_json::from_str::<Command>(&line) {
            Ok(cmd) => devices.handle(cmd),
            Err(e) => Reply::failed(format!("unreadable command {line:?}: {e}")),
        };
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string(&reply).expect("serializes")
        );
        let _ = out.flush();
    }
    release_after_run(ledger, &mut devices)
}

/// The run is gone: releases its ledger, stopping our own devices in their place in it.
fn release_after_run(ledger: &Path, devices: &mut Devices) -> bool {
    let mut own =
        |r: &Resource| -> Option<Result<Released, String>> {
            let Resource::Fuse { mountpoint } = r else {
                return None;
            };
            let stopped = devices.stop(mountpoint)?;
            Some(stopped.map(|()| {
                Released::Done(format!("stopped emulated device {}", mountpoint.display()))
            }))
        };
    let rep = cleanup::release_file(ledger, false, &mut own);
    let released = rep.released.iter().any(|r| matches!(r, Released::Done(_)));
    if released {
        say(&format!(
            "the run of {} ended without releasing its resources; released them:",
            ledger.display()
        ));
        for r in &rep.released {
            say(&format!("  {r}"));
        }
    }
    for e in &rep.errors {
        say(&format!("left for `iotrial cleanup`: {e}"));
    }
    // Devices the ledger did not list (the run died between starting one and recording it).
    for d in devices.0.drain(..) {
        if let Err(e) = d.server.stop() {
            say(&format!("stop {}: {e}", d.mountpoint.display()));
        }
    }
    rep.errors.is_empty()
}
