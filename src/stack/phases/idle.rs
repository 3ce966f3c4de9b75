//! The `idle` action phase: waits until the stack's devices have finished the work they do on
//! their own once the host stops writing (a drive-managed SMR disk cleaning its persistent
//! cache, a disk destaging its write-back buffer) and times it. An emulated device reports its
//! background work through its device server, so the phase knows when the model went idle, in
//! model time. A real disk hides drive-managed cleaning from the host: the phase then waits
//! until diskstats show no I/O for the quiet time and says the cleaning time is unknown (a
//! trial then reads a disk the user named until it is calm: `trial::calm`).

use crate::engine::{IdleLimits, IdleRecord};
use crate::stack::blockdevs::{DeviceRole, StackDevice};
use crate::stack::build::provision::Built;
use crate::stack::ledger::Ledger;
use crate::stack::server::{BackgroundReply, DeviceServer};
use crate::stack::StackError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the device servers are asked, wall time.
const POLL: Duration = Duration::from_millis(20);

/// The stack's own devices (data and log) and, of those, the emulated ones with their servers.
fn devices<'a>(
    built: &'a Built,
    ledger: &'a Ledger,
) -> (Vec<&'a StackDevice>, Vec<(&'a str, &'a dyn DeviceServer)>) {
    let own: Vec<&StackDevice> = built
        .devices
        .devices
        .iter()
        .filter(|d| matches!(d.role, DeviceRole::Data | DeviceRole::Log))
        .collect();
    let emulated = own
        .iter()
        .filter_map(|d| {
            let mp = d.emulated.as_deref()?;
            Some((d.name.as_str(), ledger.device_server(mp)?))
        })
        .collect();
    (own, emulated)
}

/// Seconds of model time the stack's emulated devices have spent on background work so far
/// (SMR cleaning), summed; `None` without emulated devices.
pub fn worked_s(built: &Built, ledger: &Ledger) -> Result<Option<f64>, StackError> {
    let (_, emulated) = devices(built, ledger);
    if emulated.is_empty() {
        return Ok(None);
    }
    let mut ns = 0;
    for (name, s) in emulated {
        ns += ask(name, s, 0)?.worked_ns;
    }
    Ok(Some(ns as f64 * 1e-9))
}

/// Model nanoseconds the stack's emulated device has had a request in service so far (see
/// `emu::replies::Outstanding`); `None` unless the stack has exactly one emulated device
/// (the union over several devices cannot be had from their totals) or its server cannot say.
pub fn outstanding_ns(built: &Built, ledger: &Ledger) -> Option<u64> {
    match devices(built, ledger).1[..] {
        [(_, s)] => s.stats()["outstanding_ns"].as_u64(),
        _ => None,
    }
}

/// Waits as `limits` say until the stack's devices are idle; `stop` (Ctrl-C) ends the wait.
pub fn wait(
    built: &Built,
    ledger: &Ledger,
    limits: IdleLimits,
    stop: &AtomicBool,
) -> Result<IdleRecord, StackError> {
    let (own, emulated) = devices(built, ledger);
    if !emulated.is_empty() {
        return wait_emulated(&emulated, built.time_scale, limits, stop);
    }
    if own.is_empty() {
        return Ok(IdleRecord {
            cleaning_s: None,
            how: "none".into(),
            capped: false,
            device_idle_s: None,
            bands_cleaned: None,
            fast_forward_s: None,
            busy_s: None,
            note: Some("the target is a directory: no device of the stack's own to watch, so no idle wait and no cleaning time".into()),
        });
    }
    wait_quiet(&own, limits, stop)
}

/// A device server's answer, or the phase's error (`fast_forward_ns`: see
/// [`DeviceServer::background`]).
fn ask(
    name: &str,
    s: &dyn DeviceServer,
    fast_forward_ns: u64,
) -> Result<BackgroundReply, StackError> {
    s.background(fast_forward_ns).map_err(|e| {
        StackError::Command(format!(
            "idle: ask the device server of {name} for its background work: {e}"
        ))
    })
}

/// Bands cleaned so far by the model of `s`, when it is an SMR disk.
fn bands_cleaned(s: &dyn DeviceServer) -> Option<u64> {
    s.stats()["model_stats"]["bands_cleaned"].as_u64()
}

/// Asks each emulated device until none has background work pending, or the cap. A device
/// with work pending and no request in service is first fast-forwarded over it (its clock
/// moved to when the work ends, within the cap): the host sends nothing during the phase, so
/// waiting it out in real time would only cost the user time; what a request in service
/// keeps from being skipped is then waited for.
fn wait_emulated(
    devices: &[(&str, &dyn DeviceServer)],
    scale: f64,
    limits: IdleLimits,
    stop: &AtomicBool,
) -> Result<IdleRecord, StackError> {
    let bands_before: Vec<Option<u64>> = devices.iter().map(|(_, s)| bands_cleaned(*s)).collect();
    let started = Instant::now();
    let mut first = Vec::with_capacity(devices.len());
    let mut last = Vec::with_capacity(devices.len());
    for (name, s) in devices {
        let r = ask(name, *s, 0)?;
        first.push(r.now_ns);
        last.push(r);
    }
    let mut skipped_ns = 0;
    for (i, (name, s)) in devices.iter().enumerate() {
        if last[i].pending {
            let r = ask(name, *s, limits.max_ms.saturating_mul(1_000_000))?;
            skipped_ns = skipped_ns.max(r.now_ns.saturating_sub(last[i].now_ns));
            last[i] = r;
        }
    }
    let mut capped = false;
    while last.iter().any(|r| r.pending) {
        if stop.load(Ordering::Relaxed) {
            return Err(StackError::Interrupted);
        }
        // The cap is model time: what was waited (scaled) plus what was skipped.
        let waited_ns = (started.elapsed().as_secs_f64() * scale * 1e9) as u64;
        if waited_ns + skipped_ns >= limits.max_ms * 1_000_000 {
            capped = true;
            break;
        }
        std::thread::sleep(POLL);
        for (i, (name, s)) in devices.iter().enumerate() {
            if last[i].pending {
                last[i] = ask(name, *s, 0)?;
            }
        }
    }
    // The work each device did on its own: from the host's last request until it went idle
    // (until the last question when it did not), and when it went idle, from the phase's
    // first question (negative: before it).
    let on_own_ns = last
        .iter()
        .map(|r| {
            let end = if r.pending { r.now_ns } else { r.idle_at_ns };
            end.saturating_sub(r.host_done_ns)
        })
        .max()
        .unwrap_or(0);
    let idle_ns = last
        .iter()
        .zip(&first)
        .map(|(r, &t0)| match r.pending {
            true => r.now_ns as i128 - t0 as i128,
            false => r.idle_at_ns as i128 - t0 as i128,
        })
        .max()
        .unwrap_or(0);
    let bands: Option<u64> = devices
        .iter()
        .zip(&bands_before)
        .filter_map(|((_, s), b)| Some(bands_cleaned(*s)? - (*b)?))
        .reduce(|a, b| a + b);
    Ok(IdleRecord {
        cleaning_s: Some(on_own_ns as f64 * 1e-9),
        how: "device".into(),
        capped,
        device_idle_s: Some(idle_ns as f64 * 1e-9),
        bands_cleaned: bands,
        fast_forward_s: (skipped_ns > 0).then_some(skipped_ns as f64 * 1e-9),
        busy_s: None,
        note: capped.then(|| {
            format!(
                "background work still pending after idle_max ({} s of model time): the cleaning time is at least this",
                crate::units::trim_float(limits.max_ms as f64 / 1000.0)
            )
        }),
    })
}

/// The I/O counters of a block device that change when it does any I/O (reads, writes,
/// in flight), from /sys/class/block/NAME/stat.
fn io_counters(name: &str) -> Option<Vec<u64>> {
    let text = std::fs::read_to_string(format!("/sys/class/block/{name}/stat")).ok()?;
    let f: Vec<u64> = text
        .split_whitespace()
        .filter_map(|v| v.parse().ok())
        .collect();
    // reads completed, sectors read, writes completed, sectors written, in flight
    Some(
        [0, 2, 4, 6, 8]
            .iter()
            .filter_map(|&i| f.get(i).copied())
            .collect(),
    )
}

/// Waits until no device of `own` did any I/O for the quiet time, or the cap.
fn wait_quiet(
    own: &[&StackDevice],
    limits: IdleLimits,
    stop: &AtomicBool,
) -> Result<IdleRecord, StackError> {
    let quiet = Duration::from_millis(limits.quiet_ms);
    let cap = Duration::from_millis(limits.max_ms);
    let read = || own.iter().map(|d| io_counters(&d.name)).collect::<Vec<_>>();
    let started = Instant::now();
    let (mut seen, mut since) = (read(), Instant::now());
    let mut capped = false;
    while since.elapsed() < quiet {
        if stop.load(Ordering::Relaxed) {
            return Err(StackError::Interrupted);
        }
        if started.elapsed() >= cap {
            capped = true;
            break;
        }
        std::thread::sleep(POLL.max(quiet / 50));
        let now = read();
        if now != seen {
            (seen, since) = (now, Instant::now());
        }
    }
    let quiet_s = crate::units::trim_float(limits.quiet_ms as f64 / 1000.0);
    Ok(IdleRecord {
        cleaning_s: None,
        how: "diskstats".into(),
        capped,
        device_idle_s: None,
        bands_cleaned: None,
        fast_forward_s: None,
        busy_s: None,
        note: Some(match capped {
            false => format!("this device cannot report its background work (a real disk hides drive-managed cleaning from the host): waited until diskstats showed no I/O for {quiet_s} s; the cleaning time is unknown"),
            true => format!("the devices never went {quiet_s} s without I/O before idle_max; the cleaning time is unknown"),
        }),
    })
}
