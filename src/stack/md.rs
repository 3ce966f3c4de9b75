//! MD RAID under a stack: the `md` key (`md = "raid10"`, `--md raid10,chunk=512KiB`) builds one
//! Linux MD array with mdadm over the stack's devices, and the filesystem or the raw layout
//! goes on the array. Created with `--assume-clean` (no initial resync, so the trial measures
//! the workload, not a rebuild), recorded in the ledger and stopped when the trial ends. Hosts
//! whose kernel has no MD (this project's CI) run such stacks in a guest (`vm`).

use super::actions::Actions;
use super::ledger::Ledger;
use super::resource::Resource;
use super::{sys, StackError};
use crate::units::{parse_size, Size};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

/// An MD array as the user describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct MdSpec {
    /// `raid0`, `raid1` or `raid10`.
    pub level: &'static str,
    /// Chunk size in bytes (raid0 and raid10); None: mdadm's default (512 KiB).
    pub chunk: Option<u64>,
    /// raid10 layout (`n2`, `f2`, `o2`); None: mdadm's default (`n2`).
    pub layout: Option<String>,
}

const LEVELS: &[(&str, usize)] = &[("raid0", 2), ("raid1", 2), ("raid10", 2)];

/// The syntax the `md` key takes, for error messages and docs.
pub const SYNTAX: &str = "LEVEL[,chunk=SIZE][,layout=n2|f2|o2] with LEVEL raid0, raid1 or raid10";

impl MdSpec {
    /// Parses `raid10[,chunk=512KiB][,layout=f2]`.
    pub fn parse(text: &str) -> Result<MdSpec, String> {
        let mut parts = text.split(',').map(str::trim);
        let level = parts.next().unwrap_or_default();
        let Some((level, _)) = LEVELS.iter().find(|(l, _)| *l == level) else {
            return Err(format!("'{level}' is not an MD level; write {SYNTAX}"));
        };
        let mut spec = MdSpec {
            level,
            chunk: None,
            layout: None,
        };
        for p in parts {
            match p.split_once('=') {
                Some(("chunk", v)) => {
                    let b = parse_size(v).map_err(|e| format!("chunk: {}", e.0))?;
                    if b < 4096 || !b.is_power_of_two() {
                        return Err(format!("chunk: {v} is not a power of two of at least 4KiB"));
                    }
                    spec.chunk = Some(b);
                }
                Some(("layout", v)) if spec.level == "raid10" && valid_layout(v) => {
                    spec.layout = Some(v.to_string())
                }
                Some(("layout", v)) => {
                    return Err(format!(
                    "layout '{v}': only raid10 takes a layout, one of n2, f2, o2 (or n3, f3, o3)"
                ))
                }
                _ => return Err(format!("'{p}' is not understood; write {SYNTAX}")),
            }
        }
        if spec.chunk.is_some() && spec.level == "raid1" {
            return Err("chunk: raid1 has no chunk size".into());
        }
        Ok(spec)
    }

    /// Fewest member devices of the level.
    pub fn min_devices(&self) -> usize {
        LEVELS
            .iter()
            .find(|(l, _)| *l == self.level)
            .map_or(2, |(_, n)| *n)
    }

    /// The kernel modules the array needs.
    pub fn modules(&self) -> Vec<&'static str> {
        vec!["md-mod", self.level]
    }
}

fn valid_layout(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 2 && b"nfo".contains(&b[0]) && (b'2'..=b'3').contains(&b[1])
}

impl std::fmt::Display for MdSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.level)?;
        if let Some(c) = self.chunk {
            write!(f, ",chunk={}", Size(c))?;
        }
        if let Some(l) = &self.layout {
            write!(f, ",layout={l}")?;
        }
        Ok(())
    }
}

/// Whether this kernel can assemble MD arrays (it has /proc/mdstat, or md-mod can be loaded).
pub fn kernel_has_md() -> bool {
    Path::new("/proc/mdstat").exists()
}

/// The first unused /dev/mdN.
fn free_array() -> PathBuf {
    let n = (0..1000)
        .find(|n| !Path::new(&format!("/sys/block/md{n}")).exists())
        .unwrap_or(127);
    PathBuf::from(format!("/dev/md{n}"))
}

/// Creates the array over `members`, in the ledger first. Returns its device and what was
/// built (level, members, chunk, layout, the command), for the stack as built.
pub fn create(
    spec: &MdSpec,
    members: &[PathBuf],
    ledger: &mut Ledger,
    actions: &mut Actions,
) -> Result<(PathBuf, Json), StackError> {
    if !actions.dry_run && !kernel_has_md() {
        return Err(StackError::Unavailable(
            "md: this kernel has no MD RAID (no /proc/mdstat); run the stack in a guest with --vm (or `vm = true`)".into(),
        ));
    }
    if !sys::have("mdadm") {
        return Err(StackError::Unavailable(
            "md: mdadm is not installed (run scripts/install-deps.sh)".into(),
        ));
    }
    let array = free_array();
    ledger
        .record(Resource::Md {
            array: array.clone(),
        })
        .map_err(|e| StackError::io("write the ledger", e))?;
    let mut args = vec![
        "--create".to_string(),
        array.display().to_string(),
        "--run".into(),
        "--quiet".into(),
        format!("--level={}", spec.level.trim_start_matches("raid")),
        format!("--raid-devices={}", members.len()),
        "--metadata=1.2".into(),
        "--assume-clean".into(),
    ];
    if let Some(c) = spec.chunk {
        args.push(format!("--chunk={}", c / 1024));
    }
    if let Some(l) = &spec.layout {
        args.push(format!("--layout={l}"));
    }
    args.extend(members.iter().map(|m| m.display().to_string()));
    actions.run("mdadm", &args)?;
    let built = json!({
        "array": array,
        "level": spec.level,
        "members": members,
        "chunk_bytes": spec.chunk,
        "layout": spec.layout,
        "assume_clean": true,
        "command": sys::display_command("mdadm", &args),
        "mdstat": std::fs::read_to_string("/proc/mdstat").ok(),
    });
    Ok((array, built))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_print_back() {
        let s = MdSpec::parse("raid10,chunk=512KiB,layout=f2").unwrap();
        assert_eq!(s.level, "raid10");
        assert_eq!(s.chunk, Some(512 << 10));
        assert_eq!(s.layout.as_deref(), Some("f2"));
        assert_eq!(MdSpec::parse(&s.to_string()).unwrap(), s);
        assert_eq!(s.modules(), vec!["md-mod", "raid10"]);
        assert_eq!(MdSpec::parse("raid1").unwrap().min_devices(), 2);
    }

    #[test]
    fn bad_specs_say_the_syntax() {
        for bad in [
            "raid5",
            "raid10,chunk=3000",
            "raid1,chunk=64KiB",
            "raid0,layout=n2",
            "raid10,x=1",
        ] {
            let e = MdSpec::parse(bad).unwrap_err();
            assert!(!e.is_empty(), "{bad}");
        }
        assert!(MdSpec::parse("raid6").unwrap_err().contains(SYNTAX));
    }
}
