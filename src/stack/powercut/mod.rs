//! The `powercut` phase: what a stack goes through after its emulated devices lost their power
//! during the stream phase before (the cut itself comes from [`switch`], armed by the trial as
//! that phase starts). The devices take back what they lose; the kernel's mount of the dead
//! devices is torn down; the devices power up again over their post-cut images; the block
//! devices' caches are dropped; the filesystem is mounted (journal replay, timed), unmounted and
//! checked read-only by its own checker (output kept), mounted again; and every region and file
//! the workload wrote is scanned ([`scan`]). Only stacks whose every device is emulated can be
//! cut ([`refusal`]).

pub mod scan;
pub mod switch;

use super::build::provision::Built;
use super::phases::action_phase::{self, ActionCtx};
use super::{sys, DeviceSpec, StackError, StackSpec};
use crate::engine::{Action, Plan, PowerCut};
use serde_json::{json, Value as Json};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;
pub use switch::{CutDone, HostSwitch, PowerSwitch};

/// Why a stack cannot have its power cut, if it cannot: iotrial cuts only the emulated devices
/// it serves.
pub fn refusal(stack: &StackSpec, devices: &[DeviceSpec]) -> Option<String> {
    let logdev = stack
        .logdev
        .as_deref()
        .and_then(|l| DeviceSpec::parse(l).ok());
    for d in devices.iter().chain(logdev.as_ref()) {
        let why = match d {
            DeviceSpec::Emu { .. } => continue,
            DeviceSpec::Block(_) => "a real disk, whose power iotrial cannot cut",
            DeviceSpec::Image { .. } => {
                "an image on a loop device, which has no drive to lose power (the host's page cache holds what it wrote)"
            }
            DeviceSpec::Dir(_) | DeviceSpec::TempDir => {
                "a directory of the host's own filesystem, on a disk iotrial cannot cut"
            }
        };
        return Some(format!(
            "powercut: stack {} uses {d}: {why}; a power cut needs emulated devices (emu:hdd, emu:smr, emu:flash)",
            stack.name
        ));
    }
    if stack.fs.as_deref() == Some("zfs") {
        return Some(format!(
            "powercut: stack {} is a ZFS pool, which suspends when its devices fail (failmode=wait) and then cannot be exported; iotrial does not cut it",
            stack.name
        ));
    }
    None
}

/// What the recovery found, for the durability verdict.
#[derive(Debug, Clone)]
pub struct Recovery {
    /// The plan's index of the powercut phase.
    pub phase: usize,
    pub cut: PowerCut,
    pub done: CutDone,
    /// When the power went, ns of real time since the trial's origin.
    pub cut_real_ns: u64,
    /// The filesystem mounted again after the cut (`None`: a raw layout, nothing to mount).
    pub mount: Option<MountAfter>,
    /// The checker's run as the `fsck` phase measures it (`None`: not run).
    pub checker: Option<Json>,
    pub scan: scan::Scan,
}

/// The first mount after the cut.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MountAfter {
    pub ok: bool,
    /// How long it took, s of the device model's time: the journal's replay.
    pub replay_s: f64,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What the recovery needs besides the stack.
pub struct RecoverCtx<'a> {
    /// The powercut phase's name (names the checker's output) and where kept files go.
    pub phase: &'a str,
    pub dir: &'a Path,
    pub checker_args: &'a [String],
    pub stop: &'a AtomicBool,
    /// The trial's time origin.
    pub origin: Instant,
}

/// `_IO(0x12, 97)`: write a block device's buffers out and drop its cache.
const BLKFLSBUF: libc::c_ulong = 0x1261;

/// Drops the page cache of every block device of the stack: what the kernel read or wrote
/// before the cut must not be served after it.
fn drop_block_caches(built: &Built) {
    use std::os::fd::AsRawFd;
    for d in &built.devices.devices {
        if let Ok(f) = std::fs::File::open(&d.path) {
            // SAFETY: BLKFLSBUF takes no argument; the descriptor is open.
            unsafe {
                libc::ioctl(f.as_raw_fd(), BLKFLSBUF as _, 0);
            }
        }
    }
}

/// Does the powercut phase `phase` of `plan` on `built`, whose devices `switch` controls.
pub fn recover(
    plan: &Plan,
    phase: usize,
    built: &Built,
    switch: &dyn PowerSwitch,
    ctx: &RecoverCtx,
) -> Result<(Recovery, Json), StackError> {
    let cut = plan
        .power_cut(phase)
        .ok_or_else(|| StackError::Invalid(format!("phase {phase} is no power cut")))?;
    let power = |e: String| StackError::Command(format!("power cut: {e}"));
    let done = switch.cut(cut.in_flight, cut.seed).map_err(power)?;
    let cut_real_ns = (ctx.origin.elapsed().as_nanos() as u64).saturating_sub(done.ago_ns);
    let mut measured = json!({
        "in_flight": cut.in_flight.name(),
        "cut_s": cut_real_ns as f64 * built.time_scale / 1e9,
        "devices": done.devices.iter().map(device_summary).collect::<Vec<_>>(),
    });
    // The kernel's mount of the dead devices goes first: it may still hold their requests.
    if let Some(m) = &built.mounted {
        let how = sys::unmount(&m.mountpoint).map_err(StackError::Command)?;
        measured["unmount"] = json!(format!("{how:?}").to_lowercase());
    }
    // An MD array goes down with its dead members, so its last words reach no disk.
    let md = stop_md(built)?;
    switch.revive(false).map_err(power)?;
    if let Some(md) = md {
        measured["md"] = assemble_md(&md)?;
    }
    drop_block_caches(built);
    let (mount, checker) = match &built.mounted {
        None => (None, None),
        Some(m) => {
            let t = Instant::now();
            let ran = sys::run(&m.program, &m.args);
            let replay_s = t.elapsed().as_secs_f64() * built.time_scale;
            let mount = MountAfter {
                ok: ran.is_ok(),
                replay_s,
                error: ran.err(),
            };
            if mount.ok {
                action_phase::perform(Action::Unmount, built, &action_ctx(ctx))?;
            }
            let checker = action_phase::perform(Action::Fsck, built, &action_ctx(ctx))?;
            if mount.ok {
                action_phase::perform(Action::Mount, built, &action_ctx(ctx))?;
            }
            (Some(mount), checker)
        }
    };
    if let Some(m) = &mount {
        measured["mount"] = json!(m);
    }
    if let Some(c) = &checker {
        measured["checker"] = c.clone();
        measured["output"] = c["output"].clone();
    }
    // The scan is iotrial's own reading, not the stack's recovery: the drives serve it with
    // no modeled delay, then power up as themselves again for what follows.
    switch.revive(true).map_err(power)?;
    let t = Instant::now();
    let scan = match &mount {
        Some(m) if !m.ok => scan::nothing(plan, &built.placements, "the filesystem did not mount"),
        _ => scan::scan(plan, &built.placements, built.direct_ok, ctx.stop),
    };
    measured["scan_wall_s"] = json!(t.elapsed().as_secs_f64());
    switch.revive(false).map_err(power)?;
    let recovery = Recovery {
        phase,
        cut,
        done,
        cut_real_ns,
        mount,
        checker,
        scan,
    };
    Ok((recovery, measured))
}

/// The stack's MD array and its members.
struct MdArray {
    array: String,
    members: Vec<String>,
}

/// Stops the stack's MD array, which failed with its members, while they are still dead:
/// whatever it writes as it stops (members marked failed) reaches no disk, as when the power
/// goes. `None` without an array.
fn stop_md(built: &Built) -> Result<Option<MdArray>, StackError> {
    let md = &built.as_built["md"];
    let Some(array) = md["array"].as_str() else {
        return Ok(None);
    };
    let members = md["members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m.as_str().map(str::to_string))
        .collect();
    let stop = super::md::stop_args(Path::new(array));
    sys::run("mdadm", &stop).map_err(StackError::Command)?;
    Ok(Some(MdArray {
        array: array.to_string(),
        members,
    }))
}

/// Assembles the array again over its members powered up. MD resyncs an array that was not
/// shut down clean, copying each mirror pair's first copy onto the second, so what a pair
/// disagreed on at the cut (the write hole) reads as the first copy. Returns what was done
/// and /proc/mdstat after.
fn assemble_md(md: &MdArray) -> Result<Json, StackError> {
    let mut assemble = sys::args(&["--assemble", &md.array, "--run"]);
    assemble.extend(md.members.iter().cloned());
    let out = sys::run("mdadm", &assemble).map_err(StackError::Command)?;
    Ok(json!({
        "assemble": sys::display_command("mdadm", &assemble),
        "output": out.trim(),
        "mdstat": std::fs::read_to_string("/proc/mdstat").ok(),
    }))
}

fn action_ctx<'a>(ctx: &'a RecoverCtx<'a>) -> ActionCtx<'a> {
    ActionCtx {
        phase: ctx.phase,
        dir: ctx.dir,
        checker_args: ctx.checker_args,
        stop: ctx.stop,
        outstanding_ns: &|| None,
    }
}

/// One device's cut in a few figures: writes and bytes lost (all, acknowledged, flushed),
/// the writes in flight and how they ended.
fn device_summary(r: &crate::emu::journal::CutReport) -> Json {
    use crate::emu::journal::Fate;
    let lost = |w: &&crate::emu::journal::CutWrite| w.kept < w.len;
    let count = |f: &dyn Fn(&crate::emu::journal::CutWrite) -> bool| {
        let ws: Vec<_> = r.writes.iter().filter(lost).filter(|w| f(w)).collect();
        (ws.len(), ws.iter().map(|w| w.len - w.kept).sum::<u64>())
    };
    let (writes, bytes) = count(&|_| true);
    let (acked, acked_bytes) = count(&|w| w.acked);
    let (flushed, flushed_bytes) = count(&|w| w.flushed);
    let fates = |f: Fate| r.writes.iter().filter(|w| w.fate == f).count();
    json!({
        "writes_lost": writes,
        "bytes_lost": bytes,
        "acked_writes_lost": acked,
        "acked_bytes_lost": acked_bytes,
        "flushed_writes_lost": flushed,
        "flushed_bytes_lost": flushed_bytes,
        "in_flight_whole": fates(Fate::Whole),
        "in_flight_torn": fates(Fate::Torn),
        "in_flight_absent": fates(Fate::Absent),
        "split_partly_lost": fates(Fate::Part),
        "journaled": r.journaled,
        "before_journal": r.before_journal,
        "journal_peak_bytes": r.peak_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(fs: Option<&str>) -> StackSpec {
        StackSpec {
            name: "s".into(),
            fs: fs.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn only_emulated_devices_are_cut() {
        let emu = DeviceSpec::parse("emu:hdd,size=1GiB").unwrap();
        assert_eq!(
            refusal(&stack(Some("ext4")), std::slice::from_ref(&emu)),
            None
        );
        for (d, why) in [
            ("block:/dev/sdz", "real disk"),
            ("dir:/srv", "directory"),
            ("image:size=1GiB", "loop device"),
        ] {
            let d = DeviceSpec::parse(d).unwrap();
            let e = refusal(&stack(Some("ext4")), &[emu.clone(), d]).unwrap();
            assert!(e.contains(why) && e.contains("emulated devices"), "{e}");
        }
        let e = refusal(&stack(Some("zfs")), &[emu]).unwrap();
        assert!(e.contains("failmode=wait"), "{e}");
    }
}
