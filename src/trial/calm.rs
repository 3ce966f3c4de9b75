//! An `idle` phase on a disk the user named. Such a disk hides the work it does on its own
//! (a drive-managed SMR disk cleaning its persistent cache, a disk destaging its write
//! buffer) from diskstats, which go quiet while it still works. So once they are quiet, the
//! phase reads the disk as `device validate` does before its rounds (the calm check: an idle,
//! then a read, a busy disk answering it late) until it answers at once, and the next phase
//! starts from a calm disk, as it does on an emulated one whose server reports its work.

use crate::engine::{IdleLimits, IdleRecord};
use crate::probe::character::calm::settle_within;
use crate::probe::character::CharError;
use crate::probe::script::{Runner, ScriptError};
use crate::stack::blockdevs::{DeviceRole, StackDevice};
use crate::stack::build::provision::Built;
use crate::stack::build::raw::device_size;
use crate::stack::ledger::Ledger;
use crate::stack::release::resource::Resource;
use crate::stack::StackError;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The file behind loop device `name`, or behind the loop device partition `name` is on.
fn loop_backing(name: &str) -> Option<PathBuf> {
    let at =
        |n: &str| std::fs::read_to_string(format!("/sys/class/block/{n}/loop/backing_file")).ok();
    let text = at(name).or_else(|| {
        let dir = std::fs::canonicalize(format!("/sys/class/block/{name}")).ok()?;
        at(dir.parent()?.file_name()?.to_str()?)
    })?;
    let path = PathBuf::from(text.trim());
    Some(std::fs::canonicalize(&path).unwrap_or(path))
}

/// The stack's data and log devices that are disks the user named: neither emulated (their
/// server reports their background work) nor loop devices over an image this trial made.
pub fn named_disks<'a>(built: &'a Built, ledger: &Ledger) -> Vec<&'a StackDevice> {
    let images: Vec<PathBuf> = ledger
        .resources()
        .iter()
        .filter_map(|r| match r {
            Resource::Loop { backing } => {
                Some(std::fs::canonicalize(backing).unwrap_or_else(|_| backing.clone()))
            }
            _ => None,
        })
        .collect();
    built
        .devices
        .devices
        .iter()
        .filter(|d| matches!(d.role, DeviceRole::Data | DeviceRole::Log))
        .filter(|d| d.emulated.is_none())
        .filter(|d| loop_backing(&d.name).is_none_or(|b| !images.contains(&b)))
        .collect()
}

fn failed(d: &StackDevice, e: CharError) -> StackError {
    match e {
        CharError::Interrupted | CharError::Script(ScriptError::Interrupted) => {
            StackError::Interrupted
        }
        e => StackError::Command(format!(
            "idle: read {} to see whether it is still busy on its own: {e}",
            d.path.display()
        )),
    }
}

/// After `rec`'s diskstats quiet (`waited`: how long that took), waits until each of `disks`
/// answers reads after an idle at once, within what is left of `limits.max_ms`, and says in
/// `rec` how long they were found busy.
pub fn settle_disks(
    rec: &mut IdleRecord,
    disks: &[&StackDevice],
    limits: IdleLimits,
    waited: Duration,
    stop: &AtomicBool,
) -> Result<(), StackError> {
    let left = (limits.max_ms as f64 / 1000.0 - waited.as_secs_f64()).max(0.0);
    let mut busy: f64 = 0.0;
    let mut calm = true;
    for (i, d) in disks.iter().enumerate() {
        let Some(cap) = device_size(&d.path).filter(|&c| c >= 1 << 20) else {
            continue;
        };
        let mut run = Runner::new(&d.path, 1.0, false, stop);
        let s = settle_within(&mut run, cap, 0xca1d + i as u64, left).map_err(|e| failed(d, e))?;
        busy = busy.max(s.busy_s);
        calm &= s.calm;
    }
    rec.busy_s = Some(busy);
    rec.how = "diskstats, then reads".into();
    rec.capped |= !calm;
    let quiet_s = crate::units::trim_float(limits.quiet_ms as f64 / 1000.0);
    rec.note = Some(if calm {
        format!(
            "a disk hides its own background work from the host: after diskstats showed no I/O for {quiet_s} s, reads after an idle were answered late for {} s (the disk still busy on its own), then at once; the cleaning time is at least that, not measured",
            crate::units::trim_float((busy * 10.0).round() / 10.0)
        )
    } else {
        format!(
            "after diskstats showed no I/O for {quiet_s} s, the disk still answered reads after an idle late at idle_max: still busy on its own; the cleaning time is unknown"
        )
    });
    Ok(())
}
