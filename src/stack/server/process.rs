//! The device server process of a run (`iotrial device serve --for-ledger LEDGER`): serves
//! the run's emulated devices on command, and when the run is gone (end of file on its stdin,
//! whatever ended the run) releases everything the run's ledger still lists, in the ledger's
//! order, stopping its own devices when their turn comes. It ignores SIGINT, SIGTERM and
//! SIGHUP: the run stops it in order, and it must outlive the run to serve the I/O the run
//! left in flight.

use super::protocol::{BackgroundReply, Command, Reply};
use crate::cause::HasCause;
use crate::emu::{resolve_mountpoint, EmuServer, ModelSpec};
use crate::stack::cleanup;
use crate::stack::resource::{Released, Resource};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// The devices this process serves, by mount point.
#[derive(Default)]
struct Devices(Vec<(PathBuf, EmuServer)>);

impl Devices {
    fn position(&self, mountpoint: &Path) -> Option<usize> {
        let want = resolve_mountpoint(mountpoint);
        self.0
            .iter()
            .position(|(mp, s)| *mp == mountpoint || s.mountpoint() == want)
    }

    fn start(&mut self, spec: &str, backing: &Path, mountpoint: &Path) -> Reply {
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
                EmuServer::start(model, backing, mountpoint, scale)
                    .map_err(|e| (format!("emu:{spec}: {e}"), e.why()))
            });
        match started {
            Ok(server) => {
                let file = server.device_file();
                self.0.push((mountpoint.to_path_buf(), server));
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
                stats: Some(self.0[i].1.stats()),
                ..Default::default()
            },
            None => Reply::failed(format!("{} is not served here", mountpoint.display())),
        }
    }

    /// Stops the device at `mountpoint`; None when it is not one of ours.
    fn stop(&mut self, mountpoint: &Path) -> Option<Result<(), String>> {
        let i = self.position(mountpoint)?;
        let (_, server) = self.0.remove(i);
        Some(server.stop().map_err(|e| e.to_string()))
    }

    fn background(&self, mountpoint: &Path, fast_forward_ns: u64) -> Reply {
        match self.position(mountpoint) {
            Some(i) => Reply {
                background: Some(BackgroundReply::of(self.0[i].1.background(fast_forward_ns))),
                ..Default::default()
            },
            None => Reply::failed(format!("{} is not served here", mountpoint.display())),
        }
    }

    fn log_start(&self, mountpoint: &Path, origin_mono_ns: u64) -> Reply {
        match self.position(mountpoint) {
            Some(i) => {
                self.0[i].1.start_log(origin_mono_ns);
                Reply::default()
            }
            None => Reply::failed(format!("{} is not served here", mountpoint.display())),
        }
    }

    fn log_stop(&self, mountpoint: &Path, path: &Path) -> Reply {
        match self
            .position(mountpoint)
            .map(|i| self.0[i].1.stop_log(path))
        {
            Some(Ok(counts)) => Reply {
                logged: Some(counts),
                ..Default::default()
            },
            Some(Err(e)) => Reply::failed(e.to_string()),
            None => Reply::failed(format!("{} is not served here", mountpoint.display())),
        }
    }

    fn handle(&mut self, cmd: Command) -> Reply {
        match cmd {
            Command::Start {
                spec,
                backing,
                mountpoint,
            } => self.start(&spec, &backing, &mountpoint),
            Command::Stats { mountpoint } => self.stats(&mountpoint),
            Command::Background {
                mountpoint,
                fast_forward_ns,
            } => self.background(&mountpoint, fast_forward_ns),
            Command::LogStart {
                mountpoint,
                origin_mono_ns,
            } => self.log_start(&mountpoint, origin_mono_ns),
            Command::LogStop { mountpoint, path } => self.log_stop(&mountpoint, &path),
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
    for (mp, server) in devices.0.drain(..) {
        if let Err(e) = server.stop() {
            say(&format!("stop {}: {e}", mp.display()));
        }
    }
    rep.errors.is_empty()
}
