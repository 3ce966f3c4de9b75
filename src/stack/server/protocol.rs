//! The command pipe between a run and its device server process: one JSON object per line
//! each way. The run writes a [`Command`] on the server's stdin and reads one [`Reply`] from its
//! stdout; the server's first line is a [`Reply`] with its pid. End of file on the server's
//! stdin means the run is gone.

use crate::cause::Cause;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::path::PathBuf;

/// What a run asks of its device server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum Command {
    /// Serve the model `spec` (`hdd,size=8GiB,scale=10`) as `<mountpoint>/disk`, its data in
    /// the sparse image `backing`.
    Start {
        spec: String,
        backing: PathBuf,
        mountpoint: PathBuf,
        /// Plan a power cut from the first request on ([`crate::emu::EmuServer::plan_cut`]).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        journal: bool,
    },
    /// The model's statistics and the server's counters of the device at `mountpoint`.
    Stats { mountpoint: PathBuf },
    /// Whether the model of the device at `mountpoint` has background work pending (SMR
    /// cleaning, write-back destaging), doing what is due by now; with `fast_forward_ns`, moving
    /// the model's clock over that work first (see [`crate::emu::EmuServer::background`]).
    Background {
        mountpoint: PathBuf,
        #[serde(default, skip_serializing_if = "is_zero")]
        fast_forward_ns: u64,
    },
    /// Stop serving the device at `mountpoint` (unmount it, join its threads).
    Stop { mountpoint: PathBuf },
    /// Log every request the device at `mountpoint` receives, times in seconds from the
    /// CLOCK_MONOTONIC instant `origin_mono_ns`.
    LogStart {
        mountpoint: PathBuf,
        origin_mono_ns: u64,
    },
    /// Stop logging and write the log as CSV to `path`, the replies' lateness per second to
    /// `lateness`.
    LogStop {
        mountpoint: PathBuf,
        path: PathBuf,
        lateness: PathBuf,
    },
    /// Put the devices at `mountpoints` on one circuit that cuts their power at the
    /// CLOCK_MONOTONIC instant `at_mono_ns` or as the `after_writes`-th write reaches any of
    /// them.
    Wire {
        mountpoints: Vec<PathBuf>,
        #[serde(default)]
        at_mono_ns: Option<u64>,
        #[serde(default)]
        after_writes: Option<u64>,
    },
    /// Whether the power of the device at `mountpoint` is off, and the writes its circuit
    /// counted.
    Power { mountpoint: PathBuf },
    /// Cut the power of the device at `mountpoint` and its circuit now (or at `at_mono_ns`,
    /// when that is earlier and no request came since), unless it is off already, and take
    /// back what the device loses.
    Cut {
        mountpoint: PathBuf,
        in_flight: crate::emu::cut::InFlight,
        seed: u64,
        #[serde(default)]
        at_mono_ns: Option<u64>,
    },
    /// Power the device at `mountpoint` up again over its image, with a fresh model; `fast`:
    /// with no modeled delay at all (the `null` model), while a scan reads it.
    Revive {
        mountpoint: PathBuf,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        fast: bool,
    },
}

/// A device's power as its server saw it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerReply {
    /// When it went off (CLOCK_MONOTONIC ns); absent while on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_mono_ns: Option<u64>,
    /// Writes its circuit counted toward a cut after N writes.
    #[serde(default)]
    pub writes: u64,
}

/// The server's answer to one command (or its greeting).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// Why the command failed; absent when it succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whose fault the failure is (the host, the input, the run), as the server's error says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
    /// The device file of a started device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<Json>,
    /// The model's background work (`background`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<BackgroundReply>,
    /// The server's pid (greeting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Requests a stopped log wrote, and those it dropped when full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logged: Option<(u64, u64)>,
    /// The device's power (`power`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<PowerReply>,
    /// What a cut did (`cut`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<crate::emu::journal::CutReport>,
}

/// A model's background work as the server saw it: the model's clock at the query and what
/// [`crate::emu::model::Background`] said, times in model nanoseconds since the device started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackgroundReply {
    pub now_ns: u64,
    pub pending: bool,
    pub idle_at_ns: u64,
    #[serde(default)]
    pub host_done_ns: u64,
    #[serde(default)]
    pub worked_ns: u64,
}

impl BackgroundReply {
    /// What [`crate::emu::EmuServer::background`] returned.
    pub fn of((now_ns, b): (u64, crate::emu::model::Background)) -> Self {
        BackgroundReply {
            now_ns,
            pending: b.pending,
            idle_at_ns: b.idle_at_ns,
            host_done_ns: b.host_done_ns,
            worked_ns: b.worked_ns,
        }
    }
}

impl Reply {
    /// A failure the run itself caused or met.
    pub fn failed(message: impl Into<String>) -> Reply {
        Reply::failed_by(message, Cause::Run)
    }

    /// A failure of the given cause.
    pub fn failed_by(message: impl Into<String>, cause: Cause) -> Reply {
        Reply {
            error: Some(message.into()),
            cause: Some(cause),
            ..Default::default()
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_one_json_line() {
        let c = Command::Start {
            spec: "hdd,size=1GiB".into(),
            backing: "/tmp/a.img".into(),
            mountpoint: "/tmp/a".into(),
            journal: false,
        };
        let line = serde_json::to_string(&c).unwrap();
        assert!(!line.contains('\n'));
        assert!(!line.contains("journal"), "{line}");
        assert!(line.contains("\"cmd\":\"start\""), "{line}");
        assert_eq!(serde_json::from_str::<Command>(&line).unwrap(), c);
        let c = Command::Background {
            mountpoint: "/tmp/a".into(),
            fast_forward_ns: 0,
        };
        let line = serde_json::to_string(&c).unwrap();
        assert_eq!(line, r#"{"cmd":"background","mountpoint":"/tmp/a"}"#);
        let c = Command::Background {
            mountpoint: "/tmp/a".into(),
            fast_forward_ns: 7,
        };
        let line = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<Command>(&line).unwrap(), c);
        let b = Reply {
            background: Some(BackgroundReply {
                now_ns: 5,
                pending: true,
                idle_at_ns: 9,
                host_done_ns: 4,
                worked_ns: 2,
            }),
            ..Default::default()
        };
        let line = serde_json::to_string(&b).unwrap();
        assert_eq!(serde_json::from_str::<Reply>(&line).unwrap(), b);
        let r = serde_json::to_string(&Reply::failed_by("no", Cause::Host)).unwrap();
        assert_eq!(r, r#"{"error":"no","cause":"host"}"#);
    }
}
