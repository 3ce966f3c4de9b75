//! Whether the stack's devices set a stream's rate. Streams that move their next I/O as soon
//! as the last is done keep the devices under them busy nearly all the time when the devices
//! are what limits them, or the busiest of them when the stack loads them unevenly. When even
//! the busiest data device was idle for much of the streaming phase (the diskstats monitor's
//! busy time), something above them set the rate: the streams' own count and size, the CPUs
//! they ran on, the page cache or the host's memory. The figure then measures that as much as
//! the stack, and the trial says so.

use super::PHASE;
use crate::present::num;
use crate::workload::Seen;

/// When the busiest data device was busy less than this (% of the streaming phase), the
/// devices were not what set the rate. A drive a buffered stream keeps writing is busy 93-98%
/// of the time, and the busiest drive of a btrfs raid10 that loads its six unevenly 90%; six
/// drives behind eight writers held to about 170 MB/s by their CPU were 15-56%.
pub const BUSY_BELOW_PCT: f64 = 70.0;

/// The warning for a stream whose data devices were each busy less than [`BUSY_BELOW_PCT`]
/// of the streaming phase; `None` when one was busier, or when the diskstats monitor did not
/// watch at least three of its intervals of the phase.
pub fn devices_idle(seen: &Seen) -> Option<String> {
    let m = seen.monitor?;
    let busy: Vec<(&str, f64)> = (m.devices.iter())
        .filter(|d| d.role == "data")
        .filter_map(|d| {
            let p = (d.phases.iter()).find(|p| p.phase.as_deref() == Some(PHASE))?;
            let watched = p.seconds > 0.0 && p.seconds >= 3.0 * m.interval_s;
            watched.then_some((d.device.as_str(), p.means.util_pct))
        })
        .collect();
    if busy.is_empty() {
        return None;
    }
    let most = busy.iter().map(|b| b.1).fold(0.0, f64::max);
    if most >= BUSY_BELOW_PCT {
        return None;
    }
    let each: Vec<String> = (busy.iter())
        .map(|(d, u)| format!("{d} {}%", num(*u)))
        .collect();
    Some(format!(
        "the stack's devices were busy at most {}% of the streaming ({}), each under {}%: they were not what set this rate; something above them did (the streams' own count and size, the CPUs they ran on, the page cache or the host's memory), so the figure measures that as much as the stack",
        num(most),
        each.join(", "),
        num(BUSY_BELOW_PCT)
    ))
}
