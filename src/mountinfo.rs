//! /proc/self/mountinfo, parsed: what is mounted where, from which device, with which options
//! the kernel actually applied. The one parser of it: stacks read mount options back and find
//! the filesystem under a path, the guard refuses mounted devices, and the emulator finds the
//! FUSE connections of its mounts.

use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// One line of mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Device number (major, minor) of the mounted filesystem.
    pub dev: (u32, u32),
    pub mount_point: PathBuf,
    /// Per-mount options (`rw,noatime`).
    pub mount_options: String,
    pub fs_type: String,
    /// The mount source (`/dev/loop3`).
    pub source: String,
    /// Superblock options (`rw,data=writeback,commit=1`).
    pub super_options: String,
}

impl Mount {
    /// Per-mount and superblock options together, as `mount` would show them.
    pub fn options(&self) -> String {
        let mut v: Vec<&str> = self.mount_options.split(',').collect();
        for o in self.super_options.split(',') {
            if !o.is_empty() && !v.contains(&o) {
                v.push(o);
            }
        }
        v.join(",")
    }
}

/// Undoes mountinfo's octal escapes (`\040` for a space); paths need not be UTF-8.
fn unescape(field: &str) -> PathBuf {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = |c: u8| (b'0'..=b'7').contains(&c);
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|&c| oct(c)) {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// Parses mountinfo text.
pub fn parse(text: &str) -> Vec<Mount> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let Some(sep) = f.iter().position(|x| *x == "-") else {
            continue;
        };
        if f.len() < sep + 4 || sep < 6 {
            continue;
        }
        let Some((ma, mi)) = f[2].split_once(':') else {
            continue;
        };
        let (Ok(ma), Ok(mi)) = (ma.parse(), mi.parse()) else {
            continue;
        };
        out.push(Mount {
            dev: (ma, mi),
            mount_point: unescape(f[4]),
            mount_options: f[5].to_string(),
            fs_type: f[sep + 1].to_string(),
            source: unescape(f[sep + 2]).to_string_lossy().into_owned(),
            super_options: f[sep + 3].to_string(),
        });
    }
    out
}

/// The current mounts.
pub fn read() -> Vec<Mount> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse(&t))
        .unwrap_or_default()
}

/// The mount a path lives on (the longest mount point that is a prefix of it).
pub fn mount_of(path: &Path) -> Option<Mount> {
    let canon = path.canonicalize().ok()?;
    read()
        .into_iter()
        .filter(|m| canon.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.as_os_str().len())
}

/// The mount whose mount point is exactly `target` (the last one, if stacked).
pub fn mount_at(target: &Path) -> Option<Mount> {
    // A dead FUSE mount cannot be stat'ed; compare the path as given then.
    let canon = target
        .canonicalize()
        .unwrap_or_else(|_| target.to_path_buf());
    read().into_iter().rfind(|m| m.mount_point == canon)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "36 35 98:0 /mnt1 /mnt/my\\040disk rw,noatime master:1 - ext4 /dev/loop3 rw,data=writeback,commit=1\n\
                          22 1 0:21 / /proc rw,nosuid shared:5 - proc proc rw\n";

    #[test]
    fn parses_options_and_escapes() {
        let m = parse(SAMPLE);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].mount_point, PathBuf::from("/mnt/my disk"));
        assert_eq!(m[0].dev, (98, 0));
        assert_eq!(m[0].fs_type, "ext4");
        assert_eq!(m[0].source, "/dev/loop3");
        assert_eq!(m[0].options(), "rw,noatime,data=writeback,commit=1");
    }

    #[test]
    fn unescape_leaves_plain_backslashes() {
        assert_eq!(unescape("/a\\b"), PathBuf::from("/a\\b"));
        assert_eq!(unescape("/a\\134b"), PathBuf::from("/a\\b"));
    }

    #[test]
    fn finds_the_root_mount() {
        assert!(mount_of(Path::new("/")).is_some());
    }
}
