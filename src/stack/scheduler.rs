//! The I/O scheduler of a stack's devices: old single-queue names mapped to their multi-queue
//! successors, the scheduler and its tunables set through sysfs with the previous values in the
//! ledger (so they are restored), and what is active read back.

use super::actions::Actions;
use super::ledger::Ledger;
use super::resource::Resource;
use super::{sys, StackError};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::PathBuf;

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

/// Sets `name` and `tunables` on `disk`, recording previous values in the ledger first.
/// Returns notices (renames) for the user.
pub fn apply(
    disk: &str,
    name: &str,
    tunables: &BTreeMap<String, String>,
    ledger: &mut Ledger,
    actions: &mut Actions,
) -> Result<Vec<String>, StackError> {
    let (kname, notice) = map_name(name);
    let q = queue_dir(disk);
    let attr_path = q.join("scheduler");
    let notices: Vec<String> = notice.into_iter().collect();
    if actions.dry_run {
        actions.write_sysfs(&attr_path, &kname)?;
        for (k, v) in tunables {
            actions.write_sysfs(&q.join("iosched").join(k), v)?;
        }
        return Ok(notices);
    }
    let attr = sys::read_sysfs(&attr_path).ok_or_else(|| {
        StackError::Command(format!(
            "{disk} has no I/O scheduler attribute ({})",
            attr_path.display()
        ))
    })?;
    let available: Vec<String> = attr
        .split_whitespace()
        .map(|s| s.trim_matches(|c| c == '[' || c == ']').to_string())
        .collect();
    if !available.contains(&kname) {
        return Err(StackError::Spec(format!(
            "scheduler '{name}' is not available for {disk}; available: {}",
            available.join(", ")
        )));
    }
    let previous = active(&attr).unwrap_or_else(|| "none".into());
    if previous != kname {
        ledger
            .record(Resource::Sysfs {
                path: attr_path.clone(),
                previous,
            })
            .map_err(|e| StackError::io("ledger", e))?;
        actions.write_sysfs(&attr_path, &kname)?;
    }
    for (k, v) in tunables {
        let p = q.join("iosched").join(k);
        let Some(prev) = sys::read_sysfs(&p) else {
            let known: Vec<String> = std::fs::read_dir(q.join("iosched"))
                .map(|rd| {
                    rd.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            return Err(StackError::Spec(format!(
                "scheduler {kname} has no tunable '{k}'; available: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        };
        ledger
            .record(Resource::Sysfs {
                path: p.clone(),
                previous: prev,
            })
            .map_err(|e| StackError::io("ledger", e))?;
        actions.write_sysfs(&p, v)?;
    }
    Ok(notices)
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
    fn active_is_the_bracketed_one() {
        assert_eq!(
            active("none [mq-deadline] kyber bfq").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(active("[none] mq-deadline").as_deref(), Some("none"));
    }
}
