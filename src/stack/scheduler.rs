//! The I/O scheduler of a stack's devices: old single-queue names mapped to their multi-queue
//! successors, the scheduler and its tunables set through sysfs with the previous values in the
//! ledger (so they are restored), and what is active read back.

use crate::stack::actions::Actions;
use crate::stack::ledger::Ledger;
use crate::stack::release::resource::Resource;
use crate::stack::{sys, StackError};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The I/O schedulers of current kernels.
pub const KNOWN: &[&str] = &["none", "mq-deadline", "bfq", "kyber"];

/// Checks a scheduler name as users write it: a current one, or an old one that maps to one.
pub fn check_name(name: &str) -> Result<(), String> {
    if KNOWN.contains(&map_name(name).0.as_str()) {
        return Ok(());
    }
    Err(format!(
        "unknown scheduler '{name}'; known: {} (and deadline, cfq, noop, which map to mq-deadline, bfq, none)",
        KNOWN.join(", ")
    ))
}

/// Maps a scheduler name as users write it to the kernel's, with a notice when renamed.
pub fn map_name(name: &str) -> (String, Option<String>) {
    let to = match name {
        "deadline" => "mq-deadline",
        "cfq" => "bfq",
        "noop" => "none",
        other => return (other.to_string(), None),
    };
    (
        to.to_string(),
        Some(format!("scheduler '{name}' is single-queue and gone from current kernels; using its multi-queue successor '{to}'")),
    )
}

/// The sysfs queue directory of a whole-disk block device name (`loop3`, `sdb`).
pub fn queue_dir(disk: &str) -> PathBuf {
    PathBuf::from(format!("/sys/block/{disk}/queue"))
}

/// The active scheduler from a `scheduler` attribute (`none [mq-deadline] kyber`).
pub fn active(attr: &str) -> Option<String> {
    let s = attr.find('[')?;
    let e = attr.find(']')?;
    Some(attr[s + 1..e].to_string())
}

/// The schedulers a `scheduler` attribute offers (`none [mq-deadline] kyber`: all three).
pub fn offered(attr: &str) -> Vec<&str> {
    attr.split_whitespace()
        .map(|s| s.trim_matches(|c| c == '[' || c == ']'))
        .collect()
}

/// Sets `name` and `tunables` on `disk`, recording previous values in the ledger first.
/// Returns notices (renames) for the user.
pub fn apply(
    disk: &str,
    name: &str,
    tunables: &BTreeMap<String, String>,
    ledger: &mut Ledger,
    actions: &mut Actions,
) -> Result<Vec<String>, StackError> {
    check_name(name).map_err(StackError::Invalid)?;
    let (kname, notice) = map_name(name);
    let q = queue_dir(disk);
    let attr_path = q.join("scheduler");
    if actions.dry_run {
        actions.write_sysfs(&attr_path, &kname)?;
    } else {
        let previous = active_if_available(disk, name, &kname)?;
        if previous != kname {
            set(&attr_path, previous, &kname, ledger, actions)?;
        }
    }
    for (k, v) in tunables {
        let p = q.join("iosched").join(k);
        if actions.dry_run {
            actions.write_sysfs(&p, v)?;
            continue;
        }
        let previous = sys::read_sysfs(&p).ok_or_else(|| no_tunable(disk, &kname, k))?;
        set(&p, previous, v, ledger, actions)?;
    }
    Ok(notice.into_iter().collect())
}

/// The scheduler active on `disk`, once `kname` (`name` as the user wrote it) is known to be
/// one this kernel offers for it.
fn active_if_available(disk: &str, name: &str, kname: &str) -> Result<String, StackError> {
    let attr_path = queue_dir(disk).join("scheduler");
    let attr = sys::read_sysfs(&attr_path).ok_or_else(|| {
        StackError::Unavailable(format!(
            "{disk} has no I/O scheduler attribute ({})",
            attr_path.display()
        ))
    })?;
    let available = offered(&attr);
    if !available.contains(&kname) {
        return Err(StackError::Unavailable(format!(
            "scheduler '{name}' is not available for {disk} on this kernel; available: {}",
            available.join(", ")
        )));
    }
    Ok(active(&attr).unwrap_or_else(|| "none".into()))
}

/// Writes `value` to the sysfs attribute `path`, its `previous` value in the ledger first.
pub(super) fn set(
    path: &Path,
    previous: String,
    value: &str,
    ledger: &mut Ledger,
    actions: &mut Actions,
) -> Result<(), StackError> {
    let r = Resource::Sysfs {
        path: path.to_path_buf(),
        previous,
    };
    ledger.record(r).map_err(|e| StackError::io("ledger", e))?;
    actions.write_sysfs(path, value)
}

/// The scheduler `kname` of `disk` has no tunable `k`: the error lists those it has.
fn no_tunable(disk: &str, kname: &str, k: &str) -> StackError {
    let known: Vec<String> = std::fs::read_dir(queue_dir(disk).join("iosched"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let known = if known.is_empty() {
        "none".to_string()
    } else {
        known.join(", ")
    };
    StackError::Invalid(format!(
        "scheduler {kname} has no tunable '{k}'; available: {known}"
    ))
}

/// The active scheduler and every tunable of `disk`, read back from sysfs.
pub fn read_back(disk: &str) -> Json {
    let q = queue_dir(disk);
    let sched = sys::read_sysfs(&q.join("scheduler")).and_then(|a| active(&a));
    let mut tun = serde_json::Map::new();
    if let Ok(rd) = std::fs::read_dir(q.join("iosched")) {
        let mut names: Vec<_> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for n in names {
            if let Some(v) = sys::read_sysfs(&q.join("iosched").join(&n)) {
                tun.insert(n, json!(v));
            }
        }
    }
    json!({"device": disk, "active": sched, "tunables": tun})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_names_map_with_a_notice() {
        assert_eq!(map_name("deadline").0, "mq-deadline");
        assert!(map_name("deadline").1.unwrap().contains("mq-deadline"));
        assert_eq!(map_name("noop").0, "none");
        assert_eq!(map_name("cfq").0, "bfq");
        assert_eq!(map_name("kyber"), ("kyber".into(), None));
    }

    #[test]
    fn names_are_checked_against_the_known_set() {
        for ok in [
            "none",
            "mq-deadline",
            "bfq",
            "kyber",
            "deadline",
            "cfq",
            "noop",
        ] {
            assert_eq!(check_name(ok), Ok(()), "{ok}");
        }
        let e = check_name("cfq-nonexistent").unwrap_err();
        assert!(e.contains("unknown scheduler 'cfq-nonexistent'"), "{e}");
        assert!(e.contains("mq-deadline, bfq, kyber"), "{e}");
    }

    #[test]
    fn active_is_the_bracketed_one() {
        assert_eq!(
            active("none [mq-deadline] kyber bfq").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(active("[none] mq-deadline").as_deref(), Some("none"));
    }
}
