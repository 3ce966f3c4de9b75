//! The run's side of its device server process: spawns it (in its own process group, so a
//! Ctrl-C at the terminal reaches the run, which then stops the server in order), sends it
//! commands, and holds its emulated devices for the ledger as [`RemoteDevice`]s.

use super::protocol::{Command, PowerReply, Reply};
use super::DeviceServer;
use crate::cause::{Cause, HasCause};
use crate::emu::cut::InFlight;
use crate::emu::journal::CutReport;
use serde_json::{json, Value as Json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::{Arc, Mutex};

/// The device server process could not be started, stopped answering, or could not do what
/// it was asked.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ServerError {
    #[error("cannot find the iotrial binary to run the device server ({0}); set IOTRIAL_EXE to its path")]
    NoBinary(String),
    #[error("start the device server {exe}: {message}")]
    Spawn { exe: PathBuf, message: String },
    #[error("the device server process stopped answering ({0})")]
    Gone(String),
    /// The server could not do what was asked; `cause` says whose fault that is.
    #[error("{message}")]
    Failed { message: String, cause: Cause },
}

impl HasCause for ServerError {
    fn why(&self) -> Cause {
        match self {
            ServerError::NoBinary(_) | ServerError::Spawn { .. } => Cause::Host,
            ServerError::Gone(_) => Cause::Run,
            ServerError::Failed { cause, .. } => *cause,
        }
    }
}

impl Reply {
    /// The reply's failure as an error, if it is one.
    fn into_result(self) -> Result<Reply, ServerError> {
        match self.error {
            Some(message) => Err(ServerError::Failed {
                message,
                cause: self.cause.unwrap_or(Cause::Run),
            }),
            None => Ok(self),
        }
    }
}

/// The binary that runs device servers: `$IOTRIAL_EXE`, else this program when it is iotrial.
pub fn server_exe() -> Result<PathBuf, ServerError> {
    if let Some(p) = std::env::var_os("IOTRIAL_EXE") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| ServerError::NoBinary(e.to_string()))?;
    match exe.file_name().and_then(|n| n.to_str()) {
        Some("iotrial") => Ok(exe),
        _ => Err(ServerError::NoBinary(format!(
            "this program is {}",
            exe.display()
        ))),
    }
}

/// A running device server process and its command pipe.
pub struct ServerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    pid: u32,
}

impl ServerProcess {
    /// Starts the device server of the run whose ledger file is `ledger`, and waits for its
    /// greeting.
    pub fn spawn(ledger: &Path) -> Result<ServerProcess, ServerError> {
        let exe = server_exe()?;
        let mut child = std::process::Command::new(&exe)
            .args(["device", "serve", "--for-ledger"])
            .arg(ledger)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0)
            .spawn()
            .map_err(|e| ServerError::Spawn {
                exe: exe.clone(),
                message: e.to_string(),
            })?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut p = ServerProcess {
            pid: child.id(),
            child,
            stdin,
            stdout,
        };
        let hello = p.read_reply()?;
        if let Some(pid) = hello.pid {
            p.pid = pid;
        }
        Ok(p)
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    fn read_reply(&mut self) -> Result<Reply, ServerError> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(0) => Err(ServerError::Gone("it exited".into())),
            Ok(_) => serde_json::from_str(&line)
                .map_err(|e| ServerError::Gone(format!("unreadable reply {line:?}: {e}"))),
            Err(e) => Err(ServerError::Gone(e.to_string())),
        }
    }

    /// Sends `cmd` and returns the server's reply.
    pub fn call(&mut self, cmd: &Command) -> Result<Reply, ServerError> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| ServerError::Gone("its pipe is closed".into()))?;
        let mut line = serde_json::to_string(cmd).expect("commands serialize");
        line.push('\n');
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(|e| ServerError::Gone(e.to_string()))?;
        self.read_reply()
    }

    /// Closes the command pipe (the server then releases what the ledger still lists, which
    /// is nothing after a clean run, and exits) and reaps the server.
    pub fn finish(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

fn lock(p: &Mutex<ServerProcess>) -> std::sync::MutexGuard<'_, ServerProcess> {
    p.lock().unwrap_or_else(|e| e.into_inner())
}

/// An emulated device served by the run's device server process.
pub struct RemoteDevice {
    process: Arc<Mutex<ServerProcess>>,
    mountpoint: PathBuf,
}

impl RemoteDevice {
    /// Asks `process` to serve model `spec` (planning a power cut from its first request
    /// when `journal`); returns the device and its device file.
    pub fn start(
        process: Arc<Mutex<ServerProcess>>,
        spec: &str,
        (backing, mountpoint): (&Path, &Path),
        journal: bool,
    ) -> Result<(RemoteDevice, PathBuf), ServerError> {
        let reply = lock(&process)
            .call(&Command::Start {
                spec: spec.to_string(),
                backing: backing.to_path_buf(),
                mountpoint: mountpoint.to_path_buf(),
                journal,
            })?
            .into_result()?;
        let file = reply
            .device_file
            .ok_or_else(|| ServerError::Gone("it named no device file".into()))?;
        let device = RemoteDevice {
            process,
            mountpoint: mountpoint.to_path_buf(),
        };
        Ok((device, file))
    }
}

impl RemoteDevice {
    /// Sends `cmd` and returns the reply, or why it failed.
    fn call(&self, cmd: Command) -> Result<Reply, String> {
        lock(&self.process)
            .call(&cmd)
            .and_then(Reply::into_result)
            .map_err(|e| e.to_string())
    }
}

impl DeviceServer for RemoteDevice {
    fn stats(&self) -> Json {
        let reply = lock(&self.process).call(&Command::Stats {
            mountpoint: self.mountpoint.clone(),
        });
        match reply {
            Ok(Reply {
                stats: Some(s),
                error: None,
                ..
            }) => s,
            Ok(r) => json!({"error": r.error.unwrap_or_else(|| "no statistics".into())}),
            Err(e) => json!({"error": e.to_string()}),
        }
    }

    fn start_log(&self, origin_mono_ns: u64) -> Result<(), String> {
        lock(&self.process)
            .call(&Command::LogStart {
                mountpoint: self.mountpoint.clone(),
                origin_mono_ns,
            })
            .and_then(Reply::into_result)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn stop_log(&self, path: &Path, lateness: &Path) -> Result<(u64, u64), String> {
        let reply = lock(&self.process)
            .call(&Command::LogStop {
                mountpoint: self.mountpoint.clone(),
                path: path.to_path_buf(),
                lateness: lateness.to_path_buf(),
            })
            .and_then(Reply::into_result)
            .map_err(|e| e.to_string())?;
        reply
            .logged
            .ok_or_else(|| "the device server did not say what it logged".to_string())
    }

    fn background(&self, fast_forward_ns: u64) -> Result<super::BackgroundReply, String> {
        let reply = lock(&self.process)
            .call(&Command::Background {
                mountpoint: self.mountpoint.clone(),
                fast_forward_ns,
            })
            .and_then(Reply::into_result)
            .map_err(|e| e.to_string())?;
        reply
            .background
            .ok_or_else(|| "the device server did not say".to_string())
    }

    fn wire(
        &self,
        others: &[PathBuf],
        at_mono_ns: Option<u64>,
        after_writes: Option<u64>,
    ) -> Result<(), String> {
        let mut mountpoints = vec![self.mountpoint.clone()];
        mountpoints.extend(others.iter().cloned());
        self.call(Command::Wire {
            mountpoints,
            at_mono_ns,
            after_writes,
        })
        .map(|_| ())
    }

    fn power(&self) -> Result<PowerReply, String> {
        let mountpoint = self.mountpoint.clone();
        self.call(Command::Power { mountpoint })?
            .power
            .ok_or_else(|| "the device server did not say".to_string())
    }

    fn cut(
        &self,
        in_flight: InFlight,
        seed: u64,
        at_mono_ns: Option<u64>,
    ) -> Result<CutReport, String> {
        self.call(Command::Cut {
            mountpoint: self.mountpoint.clone(),
            in_flight,
            seed,
            at_mono_ns,
        })?
        .cut
        .ok_or_else(|| "the device server did not say what the cut did".to_string())
    }

    fn revive(&self, fast: bool) -> Result<(), String> {
        let mountpoint = self.mountpoint.clone();
        self.call(Command::Revive { mountpoint, fast }).map(|_| ())
    }

    fn stop(self: Box<Self>) -> Result<(), String> {
        lock(&self.process)
            .call(&Command::Stop {
                mountpoint: self.mountpoint.clone(),
            })
            .and_then(Reply::into_result)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}
