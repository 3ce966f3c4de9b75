//! Device servers in their own process. A run's emulated devices are served by a child
//! process (`iotrial device serve --for-ledger`), never by the run's own threads, so a run that
//! is killed cannot leave the kernel waiting on a FUSE server that died with it. That process
//! also guards the run: when the run is gone (its end of the command pipe closes, whatever
//! killed it) it releases everything the run's ledger lists, in the ledger's order. The same
//! command serves one device to any program (`iotrial device serve SPEC`).

pub mod client;
pub mod process;
pub mod protocol;

use crate::emu::cut::InFlight;
use crate::emu::journal::CutReport;
use crate::emu::EmuServer;
pub use protocol::{BackgroundReply, PowerReply};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// A device server the ledger holds until the resource it serves is released: the emulated
/// device of a trial (served by the run's device server process) or one served in this process.
pub trait DeviceServer: Send {
    /// The model's statistics and the server's counters.
    fn stats(&self) -> Json;
    /// Stops serving: unmounts, joins every thread.
    fn stop(self: Box<Self>) -> Result<(), String>;
    /// Starts the device's request log, times in seconds from the CLOCK_MONOTONIC instant
    /// `origin_mono_ns`.
    fn start_log(&self, origin_mono_ns: u64) -> Result<(), String>;
    /// Stops the request log and writes it to `path` as CSV, and the replies' lateness second
    /// by second to `lateness`; (requests written, requests dropped because the log was full).
    fn stop_log(&self, path: &Path, lateness: &Path) -> Result<(u64, u64), String>;
    /// Whether the model has background work pending, doing what is due by now; with
    /// `fast_forward_ns` above 0, first moving the model's clock over that work, by at most that
    /// much model time, when no request is in service ([`EmuServer::background`]).
    fn background(&self, fast_forward_ns: u64) -> Result<BackgroundReply, String>;
    /// Puts this device and the devices at `others` (served by the same process) on one
    /// circuit that cuts their power at the CLOCK_MONOTONIC instant `at_mono_ns`, or as the
    /// `after_writes`-th write reaches any of them; each plans its cut.
    fn wire(
        &self,
        _others: &[PathBuf],
        _at_mono_ns: Option<u64>,
        _after_writes: Option<u64>,
    ) -> Result<(), String> {
        Err(NO_CUTS.into())
    }
    /// Whether the device's power went, and the writes its circuit counted.
    fn power(&self) -> Result<PowerReply, String> {
        Err(NO_CUTS.into())
    }
    /// Cuts the device's circuit now (or at `at_mono_ns` if that is earlier), unless it is
    /// cut, and takes back from the image what the device loses.
    fn cut(
        &self,
        _in_flight: InFlight,
        _seed: u64,
        _at_mono_ns: Option<u64>,
    ) -> Result<CutReport, String> {
        Err(NO_CUTS.into())
    }
    /// Powers the device up again over its image, with a fresh model (`fast`: one with no
    /// modeled delay, for a scan).
    fn revive(&self, _fast: bool) -> Result<(), String> {
        Err(NO_CUTS.into())
    }
}

/// Why a device served in this process cannot be cut: cuts are for the devices of a trial.
const NO_CUTS: &str =
    "power cuts are made by a trial's device server process (iotrial run or study)";

impl DeviceServer for EmuServer {
    fn stats(&self) -> Json {
        EmuServer::stats(self)
    }

    fn stop(self: Box<Self>) -> Result<(), String> {
        EmuServer::stop(*self).map_err(|e| e.to_string())
    }

    fn start_log(&self, origin_mono_ns: u64) -> Result<(), String> {
        EmuServer::start_log(self, origin_mono_ns);
        Ok(())
    }

    fn stop_log(&self, path: &Path, lateness: &Path) -> Result<(u64, u64), String> {
        EmuServer::stop_log(self, path, lateness).map_err(|e| e.to_string())
    }

    fn background(&self, fast_forward_ns: u64) -> Result<BackgroundReply, String> {
        Ok(BackgroundReply::of(EmuServer::background(
            self,
            fast_forward_ns,
        )))
    }
}
