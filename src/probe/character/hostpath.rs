//! The emulator's own cost per request on this host: a twin runs on the emulator, which adds
//! its own path (the loop device, FUSE, the server) to every request on top of the modeled
//! time. What characterize measures already holds the path to the device it times, so the
//! twin's fixed costs (a disk's command overhead, a card's access time) and its transfer
//! rates over the interface are taken net of the emulator's path, measured here on a device
//! whose modeled time is known exactly (a flash card with a 0.5 ms access and a transfer too
//! fast to count), served beside it: its reads take that long plus the path, reply timer
//! included. Served by the emulator, the twin then answers as the device did on this host.

use super::stats::median;
use super::{CharError, Progress};
use crate::probe::script::{Runner, Step};
use crate::probe::{probe_built, released_after};
use crate::stack::ledger::Ledger;
use crate::stack::provision::BuildOptions;
use crate::stack::DeviceSpec;
use std::sync::atomic::AtomicBool;

/// A request's cost on the emulator's own path, in the device's time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostPath {
    /// Seconds per request.
    pub fixed: f64,
    /// Seconds per byte transferred.
    pub per_byte: f64,
}

impl HostPath {
    /// None: for a model characterized on its own timeline.
    pub const NONE: HostPath = HostPath {
        fixed: 0.0,
        per_byte: 0.0,
    };

    /// The path of a request of `len` bytes, seconds.
    pub fn at(&self, len: u64) -> f64 {
        self.fixed + self.per_byte * len as f64
    }
}

/// The reference device, and its modeled read time (access; the transfer counts for less
/// than a nanosecond per KiB).
const REFERENCE: &str = "emu:flash,size=1GiB,access=0.5ms,read_rate=100000";
const REFERENCE_ACCESS: f64 = 0.5e-3;

/// Times 4 KiB and 256 KiB reads on the reference device served by the emulator (medians of
/// 200 each), less their modeled time, in the time of a device served at `scale`.
pub fn measure(
    ledger: &mut Ledger,
    stop: &AtomicBool,
    scale: f64,
    say: &mut Progress,
) -> Result<HostPath, CharError> {
    let reference = DeviceSpec::parse(REFERENCE).map_err(crate::stack::StackError::from)?;
    let big = 256u64 << 10;
    let (wall, _) = released_after(ledger, |l| {
        probe_built(&reference, &BuildOptions::default(), l, stop, |dev, _| {
            let mut run = Runner::new(dev, 1.0, false, stop);
            let mut steps = Vec::new();
            for i in 0..200u64 {
                steps.push(Step::read(i * (1 << 20), 4096));
                steps.push(Step::read(i * (1 << 20) + big, big));
            }
            let t = run.run(&steps)?;
            let small: Vec<f64> = t.iter().step_by(2).map(|t| t.latency).collect();
            let large: Vec<f64> = t.iter().skip(1).step_by(2).map(|t| t.latency).collect();
            let model = |len: u64| REFERENCE_ACCESS + len as f64 / 100e9;
            Ok((median(&small) - model(4096), median(&large) - model(big)))
        })
    })?;
    let per_byte = ((wall.1 - wall.0) / (big - 4096) as f64).max(0.0);
    let path = HostPath {
        fixed: (wall.0 - per_byte * 4096.0).max(0.0) * scale,
        per_byte: per_byte * scale,
    };
    say(&format!(
        "the emulator's own path on this host: {:.1} µs per request, {:.0} µs per MiB (reads of a device whose modeled time is known)",
        wall.0 * 1e6,
        per_byte * (1 << 20) as f64 * 1e6
    ));
    Ok(path)
}
