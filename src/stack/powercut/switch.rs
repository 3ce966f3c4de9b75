//! What cuts and restores the power of a stack's emulated devices. On the host, the run's
//! device server process does it ([`HostSwitch`]); a stack in a guest asks the host behind its
//! disks over the guest's channel (the VM layer's own switch). Times cross as durations from
//! now, never as instants, so a guest's clock and the host's need not agree.

use crate::emu::journal::CutReport;
use crate::engine::InFlight;
use crate::stack::ledger::Ledger;
use crate::stack::server::DeviceServer;
use std::path::PathBuf;

/// What a cut did: how long ago it came (real ns, when the cut was taken back) and each
/// device's report, in the stack's device order.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CutDone {
    pub ago_ns: u64,
    pub devices: Vec<CutReport>,
}

/// Cuts and restores the power of a stack's emulated devices.
pub trait PowerSwitch {
    /// Puts every device on one circuit that cuts `in_ns` real ns from now, or as the
    /// devices receive their `after_writes`-th write; each device journals its writes.
    fn arm(&self, in_ns: Option<u64>, after_writes: Option<u64>) -> Result<(), String>;
    /// How long ago (real ns) the power went, if it did.
    fn went(&self) -> Result<Option<u64>, String>;
    /// Cuts now unless the power went already (at the armed instant, when that passed), and
    /// takes back from each device's image what it loses.
    fn cut(&self, in_flight: InFlight, seed: u64) -> Result<CutDone, String>;
    /// Powers every device up again over its post-cut image, with a fresh model; `fast`: one
    /// with no modeled delay (the emulator's own cost only), while the scan reads the data.
    fn revive(&self, fast: bool) -> Result<(), String>;
}

/// The stack's emulated devices, served by the run's device server process.
pub struct HostSwitch<'a> {
    ledger: &'a Ledger,
    /// The FUSE mount points of the stack's emulated devices.
    mountpoints: Vec<PathBuf>,
    /// The armed instant (CLOCK_MONOTONIC ns).
    at_mono_ns: std::sync::Mutex<Option<u64>>,
}

impl<'a> HostSwitch<'a> {
    /// The switch of the devices served at `mountpoints`; none is an error.
    pub fn new(ledger: &'a Ledger, mountpoints: Vec<PathBuf>) -> Result<HostSwitch<'a>, String> {
        if mountpoints.is_empty() {
            return Err("the stack has no emulated device to cut".into());
        }
        Ok(HostSwitch {
            ledger,
            mountpoints,
            at_mono_ns: std::sync::Mutex::new(None),
        })
    }

    fn server(&self, i: usize) -> Result<&dyn DeviceServer, String> {
        let mp = &self.mountpoints[i];
        self.ledger
            .device_server(mp)
            .ok_or_else(|| format!("no device server for {}", mp.display()))
    }
}

impl PowerSwitch for HostSwitch<'_> {
    fn arm(&self, in_ns: Option<u64>, after_writes: Option<u64>) -> Result<(), String> {
        let at = in_ns.map(|d| crate::emu::mono_now_ns() + d);
        *self.at_mono_ns.lock().unwrap_or_else(|e| e.into_inner()) = at;
        self.server(0)?
            .wire(&self.mountpoints[1..], at, after_writes)
    }

    fn went(&self) -> Result<Option<u64>, String> {
        let off = self.server(0)?.power()?.off_mono_ns;
        Ok(off.map(|t| crate::emu::mono_now_ns().saturating_sub(t)))
    }

    fn cut(&self, in_flight: InFlight, seed: u64) -> Result<CutDone, String> {
        let at = *self.at_mono_ns.lock().unwrap_or_else(|e| e.into_inner());
        let mut devices = Vec::new();
        for i in 0..self.mountpoints.len() {
            devices.push(self.server(i)?.cut(in_flight, seed, at)?);
        }
        let cut = devices[0].cut_mono_ns;
        Ok(CutDone {
            ago_ns: crate::emu::mono_now_ns().saturating_sub(cut),
            devices,
        })
    }

    fn revive(&self, fast: bool) -> Result<(), String> {
        (0..self.mountpoints.len()).try_for_each(|i| self.server(i)?.revive(fast))
    }
}
