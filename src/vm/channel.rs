//! The host <-> guest channel over a virtio serial port (a Unix socket on the host, a
//! character device in the guest): one JSON message per line, a file's bytes right after the
//! message that announces them. The host asks for one trial; the guest says it booted, when
//! the trial begins and ends, sends the trial's files back, and says it is done or why not.

use crate::cause::Cause;
use crate::stack::StackSpec;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::PathBuf;

/// The port's name, as the guest sees it in /sys/class/virtio-ports/*/name.
pub const PORT: &str = "iotrial";

/// The trial the host asks the guest to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The workload's name in the study.
    pub workload: String,
    /// Its kind.
    pub kind: String,
    /// Its parameters, resolved.
    pub params: Vec<(String, String)>,
    /// The stack to build in the guest (its devices and log device are the guest's disks).
    pub stack: StackSpec,
    /// The serial numbers of the guest's disks, data devices first, then the log device.
    pub disks: Vec<String>,
    /// Whether the last disk is the stack's log device.
    pub logdev: bool,
    /// The time scale of the devices behind the disks (emulated on the host).
    pub time_scale: f64,
    /// Kernel modules the stack needs, loaded before it is built.
    pub modules: Vec<String>,
    /// The monitors the guest runs (their files come back as the guest's).
    #[serde(default)]
    pub monitor: crate::monitor::Settings,
    /// Which repeat of the workload this is (a power cut at a random point draws from it).
    #[serde(default)]
    pub repeat: usize,
}

/// What a guest asks of the host about its disks' power (a power-cut trial): the host's
/// device servers do it ([`crate::stack::powercut::PowerSwitch`]), times as durations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "snake_case")]
pub enum PowerAsk {
    Arm {
        in_ns: Option<u64>,
        after_writes: Option<u64>,
    },
    Went,
    Cut {
        in_flight: crate::engine::InFlight,
        seed: u64,
    },
    Revive {
        #[serde(default)]
        fast: bool,
    },
}

/// The host's answer to a [`PowerAsk`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum PowerAnswer {
    Done,
    Went {
        ago_ns: Option<u64>,
    },
    Cut {
        done: crate::stack::powercut::CutDone,
    },
    Failed {
        message: String,
    },
}

/// One of the guest's disks as it sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuestDisk {
    pub name: String,
    pub serial: String,
    pub size_bytes: u64,
    pub rotational: Option<bool>,
    pub logical_block_size: Option<u64>,
    pub scheduler: Option<String>,
}

/// A message on the channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "msg", rename_all = "snake_case")]
pub enum Msg {
    /// The guest booted: its kernel, its uptime, its disks, the modules it loaded.
    Hello {
        kernel: String,
        uptime_s: f64,
        disks: Vec<GuestDisk>,
    },
    /// Host -> guest: run this trial.
    Run(Box<Request>),
    /// The trial begins (the stack is about to be built).
    Begin,
    /// The trial ended (its files follow).
    Ended,
    /// A file of the trial's directory; `len` bytes follow the line.
    File { name: String, len: u64 },
    /// Every file was sent; the guest's disk statistics over the trial (/proc/diskstats
    /// differences per disk).
    Done { diskstats: Json },
    /// The trial failed in the guest.
    Failed { cause: Cause, message: String },
    /// Guest -> host: do this to the disks' power.
    Power(PowerAsk),
    /// Host -> guest: what it did.
    Powered(PowerAnswer),
}

/// A message received, with the bytes of a file.
#[derive(Debug)]
pub struct Received {
    pub msg: Msg,
    pub data: Vec<u8>,
}

/// One end of the channel.
pub struct Channel {
    reader: BufReader<Box<dyn Read + Send>>,
    writer: Box<dyn Write + Send>,
}

impl Channel {
    pub fn new(reader: Box<dyn Read + Send>, writer: Box<dyn Write + Send>) -> Channel {
        Channel {
            reader: BufReader::new(reader),
            writer,
        }
    }

    /// Sends `msg`.
    pub fn send(&mut self, msg: &Msg) -> io::Result<()> {
        let mut line = serde_json::to_vec(msg).map_err(io::Error::other)?;
        line.push(b'\n');
        self.writer.write_all(&line)?;
        self.writer.flush()
    }

    /// Sends a file's bytes as `name`.
    pub fn send_file(&mut self, name: &str, data: &[u8]) -> io::Result<()> {
        self.send(&Msg::File {
            name: name.to_string(),
            len: data.len() as u64,
        })?;
        self.writer.write_all(data)?;
        self.writer.flush()
    }

    /// The next message; None at the end of the stream.
    pub fn recv(&mut self) -> io::Result<Option<Received>> {
        let mut line = String::new();
        loop {
            line.clear();
            if self.reader.read_line(&mut line)? == 0 {
                return Ok(None);
            }
            if !line.trim().is_empty() {
                break;
            }
        }
        let msg: Msg = serde_json::from_str(line.trim()).map_err(|e| {
            io::Error::new(io::ErrorKind::InvalidData, format!("{e}: {}", line.trim()))
        })?;
        let mut data = Vec::new();
        if let Msg::File { len, .. } = &msg {
            data.resize(*len as usize, 0);
            self.reader.read_exact(&mut data)?;
        }
        Ok(Some(Received { msg, data }))
    }
}

/// Where a received file goes under the trial's directory: the guest's monitor files are
/// named as the guest's (`monitor/guest-diskstats.csv`); a name that would leave the
/// directory is refused.
pub fn host_name(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(name);
    if p.is_absolute()
        || p.components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return None;
    }
    match name.strip_prefix("monitor/") {
        Some(rest) => Some(PathBuf::from(format!("monitor/guest-{rest}"))),
        None => Some(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_files_cross_in_order() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut tx = Channel::new(Box::new(a.try_clone().unwrap()), Box::new(a));
        let mut rx = Channel::new(Box::new(b.try_clone().unwrap()), Box::new(b));
        tx.send(&Msg::Begin).unwrap();
        tx.send_file("samples.csv", b"a,b\n1,2\n").unwrap();
        tx.send(&Msg::Failed {
            cause: Cause::Host,
            message: "no xfs".into(),
        })
        .unwrap();
        drop(tx);
        assert_eq!(rx.recv().unwrap().unwrap().msg, Msg::Begin);
        let f = rx.recv().unwrap().unwrap();
        assert_eq!(f.data, b"a,b\n1,2\n");
        let Msg::Failed { cause, .. } = rx.recv().unwrap().unwrap().msg else {
            panic!("not failed")
        };
        assert_eq!(cause, Cause::Host);
        assert!(rx.recv().unwrap().is_none());
    }

    #[test]
    fn guest_files_land_inside_the_trial_directory() {
        assert_eq!(host_name("samples.csv"), Some(PathBuf::from("samples.csv")));
        assert_eq!(
            host_name("monitor/diskstats.csv"),
            Some(PathBuf::from("monitor/guest-diskstats.csv"))
        );
        assert_eq!(host_name("../x"), None);
        assert_eq!(host_name("/etc/passwd"), None);
    }
}
