//! I/O classes without the block trace: when the trace does not run, an emulated device's
//! server still logs every request it receives, and each is classified by where it lands
//! (inside the filesystem's journal, inside its fixed metadata areas, or elsewhere: data)
//! and by the phase it arrived in. The log has no request flags, so metadata that lives in
//! ordinary blocks (ext4's directory blocks, which the trace sees as REQ_META) counts as data
//! here; result.json says which source the classes came from (`monitor.trace` is absent).

use super::blockreq::{classify, Class, Op, Tally};
use super::fsmap::FsMap;
use super::{map_fs, start_logs, stop_logs};
use crate::monitor::Watch;
use crate::result::monitor::MonitorSummary;
use crate::stack::blockdevs::{DeviceRole, StackDevice};
use crate::stack::ledger::Ledger;
use crate::timeline::Timeline;
use std::io::BufRead;
use std::path::Path;

/// The request logs of the stack's emulated devices, running.
pub struct DeviceLogs {
    logging: Vec<(StackDevice, f64)>,
    map: FsMap,
    warnings: Vec<String>,
}

impl DeviceLogs {
    /// Starts the request log of every emulated device the stack is built on; `None` when it
    /// has none.
    pub fn start(w: &Watch, ledger: &Ledger) -> Option<DeviceLogs> {
        let roles = [DeviceRole::Data, DeviceRole::Log];
        let emulated: Vec<StackDevice> = w
            .devices
            .devices
            .iter()
            .filter(|d| roles.contains(&d.role) && d.emulated.is_some())
            .cloned()
            .collect();
        if emulated.is_empty() {
            return None;
        }
        let mut warnings = Vec::new();
        let map = map_fs(w, &mut warnings);
        let origin_ns = crate::emu::mono_now_ns() - (w.timeline.now_s() * 1e9) as u64;
        let logging = start_logs(&emulated, w.timeline, origin_ns, ledger, &mut warnings);
        Some(DeviceLogs {
            logging,
            map,
            warnings,
        })
    }

    /// Stops the logs (each kept as `requests-<device>.csv`), classifies their requests per
    /// phase into `summary.io_classes`, and returns the warnings.
    pub fn stop(
        mut self,
        timeline: &Timeline,
        dir: &Path,
        ledger: &Ledger,
        summary: &mut MonitorSummary,
    ) -> Vec<String> {
        let logs = stop_logs(&self.logging, timeline, dir, ledger, &mut self.warnings);
        let mut tally = Tally::default();
        for (device, _, path) in &logs {
            if let Err(e) = self.tally(device, path, timeline, &mut tally) {
                self.warnings.push(format!(
                    "monitor: {device}'s request log {}: {e}",
                    path.display()
                ));
            }
        }
        summary.io_classes = tally.rows();
        self.warnings
    }

    /// Adds the requests of one device's log (`t_s,op,offset,bytes,service_us`) to `tally`.
    fn tally(
        &self,
        device: &str,
        path: &Path,
        timeline: &Timeline,
        tally: &mut Tally,
    ) -> std::io::Result<()> {
        let file = std::io::BufReader::new(std::fs::File::open(path)?);
        for line in file.lines().skip(1) {
            let line = line?;
            let f: Vec<&str> = line.split(',').collect();
            let (Some(t), Some(op), Some(offset), Some(bytes)) = (
                f.first().and_then(|v| v.parse::<f64>().ok()),
                f.get(1),
                f.get(2).and_then(|v| v.parse::<u64>().ok()),
                f.get(3).and_then(|v| v.parse::<u64>().ok()),
            ) else {
                continue;
            };
            let op = match *op {
                "read" => Op::Read,
                "write" => Op::Write,
                "flush" => Op::Flush,
                _ => Op::Discard,
            };
            let class: Class = classify(&self.map, device, op, "", offset / 512);
            tally.issued(&timeline.span_at(t), class, op, bytes);
        }
        Ok(())
    }
}
