//! Kernel modules for the guest: which ones a stack needs (virtio always; the filesystem's;
//! MD's), found in the kernel's module tree with their dependencies (read from each module's
//! own `depends=` field, so no depmod is needed), in the order they load.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Modules every guest loads at boot: virtio PCI, its disks and its serial ports.
pub const BOOT: &[&str] = &["virtio_pci", "virtio_blk", "virtio_console"];

/// Modules the image carries for stacks (loaded only when a stack asks).
pub const STACKS: &[&str] = &[
    "xfs",
    "blake2b_generic",
    "xxhash_generic",
    "btrfs",
    "md_mod",
    "raid0",
    "raid1",
    "raid10",
    "crc32c_intel",
];

/// The modules a filesystem needs beyond what its module names (btrfs's checksum
/// algorithms, which it asks for at mount time).
pub fn for_fs(fs: &str) -> Vec<&'static str> {
    match fs {
        "xfs" => vec!["xfs"],
        "btrfs" => vec!["blake2b_generic", "xxhash_generic", "btrfs"],
        _ => Vec::new(),
    }
}

/// A module's name as the kernel knows it (`md-mod` -> `md_mod`).
pub fn canonical(name: &str) -> String {
    name.replace('-', "_")
}

/// The module tree of one kernel: each module's file and dependencies.
#[derive(Debug, Default)]
pub struct Tree {
    files: BTreeMap<String, PathBuf>,
}

impl Tree {
    /// Indexes every `*.ko` under `dir` (a `/lib/modules/<release>` directory).
    pub fn read(dir: &Path) -> std::io::Result<Tree> {
        let mut t = Tree::default();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d)? {
                let p = e?.path();
                if p.is_dir() {
                    stack.push(p);
                } else if let Some(n) = p.file_name().and_then(|n| n.to_str()) {
                    if let Some(stem) = n.strip_suffix(".ko") {
                        t.files.insert(canonical(stem), p.clone());
                    }
                }
            }
        }
        Ok(t)
    }

    /// `names` and their dependencies, each once, every module after what it depends on:
    /// (name, file, dependencies). Names the tree lacks are built into the kernel (or
    /// missing; the guest then says what failed) and left out.
    pub fn closure(&self, names: &[&str]) -> std::io::Result<Vec<(String, PathBuf, Vec<String>)>> {
        let mut out: Vec<(String, PathBuf, Vec<String>)> = Vec::new();
        for n in names {
            self.visit(&canonical(n), &mut out, 0)?;
        }
        Ok(out)
    }

    fn visit(
        &self,
        name: &str,
        out: &mut Vec<(String, PathBuf, Vec<String>)>,
        depth: usize,
    ) -> std::io::Result<()> {
        if depth > 32 || out.iter().any(|(n, _, _)| n == name) {
            return Ok(());
        }
        let Some(file) = self.files.get(name) else {
            return Ok(());
        };
        let deps = depends(&std::fs::read(file)?);
        for d in &deps {
            self.visit(d, out, depth + 1)?;
        }
        out.push((name.to_string(), file.clone(), deps));
        Ok(())
    }
}

/// The `depends=` field of a module's .modinfo section.
fn depends(ko: &[u8]) -> Vec<String> {
    let key = b"\0depends=";
    let Some(at) = ko.windows(key.len()).position(|w| w == key) else {
        return Vec::new();
    };
    let rest = &ko[at + key.len()..];
    let end = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
    String::from_utf8_lossy(&rest[..end])
        .split(',')
        .filter(|s| !s.is_empty())
        .map(canonical)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_come_first_and_once() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("kernel/drivers");
        std::fs::create_dir_all(&sub).unwrap();
        let ko = |deps: &str| {
            format!("\x7fELF...\0license=GPL\0depends={deps}\0vermagic=6.1\0").into_bytes()
        };
        std::fs::write(sub.join("md-mod.ko"), ko("")).unwrap();
        std::fs::write(sub.join("raid10.ko"), ko("md-mod")).unwrap();
        std::fs::write(sub.join("raid1.ko"), ko("md-mod")).unwrap();
        let t = Tree::read(dir.path()).unwrap();
        let c = t.closure(&["raid10", "raid1", "ext4"]).unwrap();
        let names: Vec<&str> = c.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(names, ["md_mod", "raid10", "raid1"]);
        assert_eq!(c[1].2, vec!["md_mod".to_string()]);
    }
}
