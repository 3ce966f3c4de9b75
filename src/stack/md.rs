//! MD RAID under a stack: the `md` key (`md = "raid10"`, `--md raid10,chunk=512KiB`) makes the
//! stack's devices the members of one Linux MD array, and the filesystem or the raw layout goes
//! on the array. Created with `--assume-clean`, so no initial resync runs (seed 001's array
//! rebuilt all night first) and the trial measures the workload, not a rebuild. Here: the spec
//! and its levels, the command lines, whether this host can build one, and releasing one;
//! [`crate::stack::build::volume`] builds it, in the ledger first, and the ledger stops it after the
//! filesystem on it is unmounted. Hosts whose kernel has no MD run such stacks in a guest (`vm`).

use crate::stack::{sys, StackError};
use crate::units::{parse_size, Size};
use std::path::{Path, PathBuf};

/// RAID levels iotrial builds: (name, fewest members, kernel module).
const LEVELS: &[(&str, usize, &str)] = &[
    ("raid0", 2, "raid0"),
    ("raid1", 2, "raid1"),
    ("raid10", 2, "raid10"),
    ("raid5", 3, "raid456"),
    ("raid6", 4, "raid456"),
];

/// The syntax the `md` key takes, for error messages and docs.
pub const SYNTAX: &str =
    "LEVEL[,chunk=SIZE][,layout=n2|f2|o2] with LEVEL raid0, raid1, raid10, raid5 or raid6";

/// An MD array as the user describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct MdSpec {
    pub level: &'static str,
    /// Chunk size in bytes (striped levels); None: mdadm's default (512 KiB).
    pub chunk: Option<u64>,
    /// raid10 layout (`n2`, `f2`, `o2`, or `n3`, ...); None: mdadm's default (`n2`).
    pub layout: Option<String>,
}

impl MdSpec {
    /// Parses `raid10[,chunk=512KiB][,layout=f2]`.
    pub fn parse(text: &str) -> Result<MdSpec, String> {
        let mut parts = text.split(',').map(str::trim);
        let level = parts.next().unwrap_or_default();
        let Some(&(level, _, _)) = LEVELS.iter().find(|l| l.0 == level) else {
            return Err(format!("unknown MD level '{level}'; write {SYNTAX}"));
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
        LEVELS.iter().find(|l| l.0 == self.level).map_or(2, |l| l.1)
    }

    /// The kernel modules the array needs.
    pub fn modules(&self) -> Vec<&'static str> {
        let level = LEVELS
            .iter()
            .find(|l| l.0 == self.level)
            .map_or("", |l| l.2);
        vec!["md-mod", level]
    }

    /// Checks that `members` devices are enough for the level.
    pub fn check_members(&self, members: usize) -> Result<(), String> {
        if members < self.min_devices() {
            return Err(format!(
                "{} needs at least {} devices; {members} given",
                self.level,
                self.min_devices()
            ));
        }
        Ok(())
    }

    /// How many members' worth of sequential write bandwidth the data gets: every byte goes
    /// to every mirror, and parity takes one or two members' worth.
    pub fn data_devices(&self, members: usize) -> f64 {
        let n = members as f64;
        match self.level {
            "raid1" => 1.0,
            "raid10" => n / 2.0,
            "raid5" => n - 1.0,
            "raid6" => n - 2.0,
            _ => n,
        }
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

/// Whether this host can build MD arrays: the kernel's md driver and mdadm.
pub fn available() -> Result<(), StackError> {
    let driver = Path::new("/proc/mdstat").exists() || sys::kernel_module("md-mod");
    if !driver {
        return Err(StackError::Unavailable(
            "MD RAID is not available in this kernel (no md driver: /proc/mdstat is missing and there is no md-mod module), so this stack cannot be built here; run it in a guest with --vm (or `vm = true`)".into(),
        ));
    }
    if !sys::have("mdadm") {
        return Err(StackError::Unavailable(
            "MD RAID needs mdadm, which is not installed (scripts/install-deps.sh installs it)"
                .into(),
        ));
    }
    Ok(())
}

/// `mdadm --create` of `dev` as `spec` over `members`, without an initial resync.
pub fn create_args(dev: &Path, spec: &MdSpec, members: &[PathBuf]) -> Vec<String> {
    let mut a = sys::args(&["--create", &dev.display().to_string(), "--run", "--quiet"]);
    a.push("--metadata=1.2".into());
    a.push(format!("--level={}", spec.level.trim_start_matches("raid")));
    a.push(format!("--raid-devices={}", members.len()));
    a.push("--assume-clean".into());
    if let Some(c) = spec.chunk {
        a.push(format!("--chunk={}", c / 1024));
    }
    if let Some(l) = &spec.layout {
        a.push(format!("--layout={l}"));
    }
    a.extend(members.iter().map(|m| m.display().to_string()));
    a
}

/// `mdadm --stop` of `dev`.
pub fn stop_args(dev: &Path) -> Vec<String> {
    sys::args(&["--stop", &dev.display().to_string()])
}

/// `mdadm --zero-superblock` of `members`, so no member is assembled again by itself.
pub fn zero_args(members: &[PathBuf]) -> Vec<String> {
    let mut a = vec!["--zero-superblock".to_string()];
    a.extend(members.iter().map(|m| m.display().to_string()));
    a
}

/// A free array device: `/dev/md<N>` for the first N from 100 the kernel does not have.
pub fn free_device() -> PathBuf {
    let n = (100..)
        .find(|n| !Path::new(&format!("/sys/block/md{n}")).exists())
        .expect("a free md number");
    PathBuf::from(format!("/dev/md{n}"))
}

/// Stops the array `dev` and clears its members' superblocks; `Ok(false)` when there was no
/// such array.
pub fn release(dev: &Path, members: &[PathBuf]) -> Result<bool, String> {
    let name = dev.file_name().unwrap_or_default().to_string_lossy();
    if !Path::new(&format!("/sys/block/{name}")).exists() {
        return Ok(false);
    }
    sys::run("mdadm", &stop_args(dev))?;
    let present: Vec<PathBuf> = members.iter().filter(|m| m.exists()).cloned().collect();
    if !present.is_empty() {
        sys::run("mdadm", &zero_args(&present))?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(n: usize) -> Vec<PathBuf> {
        (0..n)
            .map(|i| PathBuf::from(format!("/dev/loop{i}")))
            .collect()
    }

    #[test]
    fn the_array_is_made_without_a_resync_and_stopped_by_name() {
        let spec = MdSpec::parse("raid10").unwrap();
        let a = create_args(Path::new("/dev/md100"), &spec, &members(6));
        assert_eq!(
            sys::display_command("mdadm", &a),
            "mdadm --create /dev/md100 --run --quiet --metadata=1.2 --level=10 --raid-devices=6 --assume-clean /dev/loop0 /dev/loop1 /dev/loop2 /dev/loop3 /dev/loop4 /dev/loop5"
        );
        let f2 = MdSpec::parse("raid10,chunk=64KiB,layout=f2").unwrap();
        let a = create_args(Path::new("/dev/md100"), &f2, &members(4));
        assert!(sys::display_command("mdadm", &a).contains("--chunk=64 --layout=f2 /dev/loop0"));
        assert_eq!(stop_args(Path::new("/dev/md100")), ["--stop", "/dev/md100"]);
        assert_eq!(
            zero_args(&members(2)),
            ["--zero-superblock", "/dev/loop0", "/dev/loop1"]
        );
    }

    #[test]
    fn specs_parse_and_print_back() {
        let s = MdSpec::parse("raid10,chunk=512KiB,layout=f2").unwrap();
        assert_eq!(s.level, "raid10");
        assert_eq!(s.chunk, Some(512 << 10));
        assert_eq!(s.layout.as_deref(), Some("f2"));
        assert_eq!(MdSpec::parse(&s.to_string()).unwrap(), s);
        assert_eq!(s.modules(), vec!["md-mod", "raid10"]);
        assert_eq!(
            MdSpec::parse("raid5").unwrap().modules(),
            vec!["md-mod", "raid456"]
        );
        assert_eq!(MdSpec::parse("raid1").unwrap().min_devices(), 2);
    }

    #[test]
    fn bad_specs_say_the_syntax() {
        for bad in [
            "raid9",
            "raid10,chunk=3000",
            "raid1,chunk=64KiB",
            "raid0,layout=n2",
            "raid10,x=1",
        ] {
            let e = MdSpec::parse(bad).unwrap_err();
            assert!(!e.is_empty(), "{bad}");
        }
        assert!(MdSpec::parse("raid7").unwrap_err().contains(SYNTAX));
    }

    #[test]
    fn levels_need_members_and_say_how_much_bandwidth_the_data_gets() {
        let r10 = MdSpec::parse("raid10").unwrap();
        assert_eq!(r10.check_members(6), Ok(()));
        let r5 = MdSpec::parse("raid5").unwrap();
        assert!(r5.check_members(2).unwrap_err().contains("at least 3"));
        assert_eq!(r10.data_devices(6), 3.0);
        assert_eq!(MdSpec::parse("raid1").unwrap().data_devices(2), 1.0);
        assert_eq!(MdSpec::parse("raid6").unwrap().data_devices(6), 4.0);
    }

    #[test]
    fn a_missing_array_is_already_released() {
        let gone = Path::new("/dev/md-iotrial-test-none");
        assert_eq!(release(gone, &members(2)), Ok(false));
    }
}
