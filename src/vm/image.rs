//! The guest's boot image, built by iotrial itself, offline: the kernel (used as it is) and an
//! initramfs holding iotrial (stripped), busybox (the shell and the
//! small tools), the mkfs, partitioning and MD tools of the host with the libraries they load,
//! and the kernel modules a stack may need. The initramfs is cached under the cache directory
//! by a hash of everything that goes into it, so it is rebuilt exactly when an input changes
//! (a new iotrial, kernel or tool), and the other cached images are removed then.

use super::cpio::Entry;
use super::host::{cache_dir, Kernel};
use super::modules::{self, Tree};
use super::VmError;
use serde_json::json;
use std::collections::BTreeSet;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

/// Bumped when the image's layout changes, so old cached images are not used.
const LAYOUT: u32 = 1;

/// Tools the guest's stacks run, copied from the host where it has them.
const TOOLS: &[&str] = &[
    "mke2fs",
    "mkfs.ext2",
    "mkfs.ext3",
    "mkfs.ext4",
    "e2fsck",
    "mkfs.xfs",
    "xfs_repair",
    "mkfs.btrfs",
    "btrfs",
    "sfdisk",
    "wipefs",
    "blkid",
    "mount",
    "umount",
    "mdadm",
];

/// Busybox applets linked in /bin (the guest's shell and small tools).
const APPLETS: &[&str] = &["sh", "cat", "ls", "mkdir", "dmesg", "sync", "poweroff"];

/// The guest's first process: iotrial's guest agent.
const INIT: &str = "#!/bin/busybox sh\nexec /bin/iotrial guest\n";

/// Where the image lists its modules, in load order, for the guest agent.
pub const MODULE_LIST: &str = "lib/iotrial/modules.json";

/// A built (or cached) initramfs.
#[derive(Debug, Clone)]
pub struct Image {
    pub initramfs: PathBuf,
    /// The hash of its inputs, as cached.
    pub hash: String,
    /// Whether it was built now (false: found in the cache).
    pub built: bool,
    /// Tools the host lacked, so the guest lacks them too.
    pub missing_tools: Vec<String>,
}

/// One file that goes into the image: where from, where to, its mode.
struct Input {
    from: PathBuf,
    to: String,
    mode: u32,
}

/// The image for `kernel` and the iotrial at `exe`: from the cache when its inputs are
/// unchanged, else built now.
pub fn ensure(kernel: &Kernel, exe: &Path) -> Result<Image, VmError> {
    let busybox = find_tool("busybox").ok_or_else(|| {
        VmError::Missing("busybox is not installed: install the Debian package busybox-static (scripts/install-deps.sh does)".into())
    })?;
    let mut inputs = vec![
        Input {
            from: exe.to_path_buf(),
            to: "bin/iotrial".into(),
            mode: 0o755,
        },
        Input {
            from: busybox.clone(),
            to: "bin/busybox".into(),
            mode: 0o755,
        },
    ];
    let mut missing_tools = Vec::new();
    for t in TOOLS {
        match find_tool(t) {
            Some(p) => inputs.push(Input {
                from: p,
                to: format!("sbin/{t}"),
                mode: 0o755,
            }),
            None => missing_tools.push(t.to_string()),
        }
    }
    let elves: Vec<PathBuf> = inputs.iter().map(|i| i.from.clone()).collect();
    for lib in libraries(&elves) {
        let to = lib
            .display()
            .to_string()
            .trim_start_matches('/')
            .to_string();
        inputs.push(Input {
            from: lib,
            to,
            mode: 0o755,
        });
    }
    let tree = Tree::read(&kernel.modules)
        .map_err(|e| VmError::io(format!("read modules in {}", kernel.modules.display()), e))?;
    let wanted: Vec<&str> = modules::BOOT
        .iter()
        .chain(modules::STACKS)
        .copied()
        .collect();
    let mods = tree
        .closure(&wanted)
        .map_err(|e| VmError::io("read kernel modules", e))?;
    let mut list = Vec::new();
    for (name, file, deps) in &mods {
        let to = format!("lib/modules/{}/{name}.ko", kernel.release);
        list.push(json!({"name": name, "file": format!("/{to}"), "depends": deps}));
        inputs.push(Input {
            from: file.clone(),
            to,
            mode: 0o644,
        });
    }
    let list = serde_json::to_vec(&list).expect("module list serializes");
    let hash = hash_inputs(&inputs, &list)?;
    let root = cache_dir().join("guest");
    let dir = root.join(&hash);
    let initramfs = dir.join("initramfs.cpio");
    if initramfs.is_file() {
        return Ok(Image {
            initramfs,
            hash,
            built: false,
            missing_tools,
        });
    }
    build(&root, &dir, &inputs, &list)?;
    Ok(Image {
        initramfs,
        hash,
        built: true,
        missing_tools,
    })
}

/// A tool on PATH, in the system's sbin directories, or in the packages extracted into the
/// cache directory.
fn find_tool(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    for d in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
        dirs.push(PathBuf::from(d));
    }
    let pkgs = cache_dir().join("packages");
    for d in ["sbin", "usr/sbin", "bin", "usr/bin"] {
        dirs.push(pkgs.join(d));
    }
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// The shared libraries (and the loader) the programs at `elves` load, as `ldd` lists them.
fn libraries(elves: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut libs = BTreeSet::new();
    for e in elves {
        let Ok(out) = std::process::Command::new("ldd").arg(e).output() else {
            continue;
        };
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let path = match line.split_once("=>") {
                Some((_, rest)) => rest.split_whitespace().next(),
                None => line.split_whitespace().next(),
            };
            if let Some(p) = path.filter(|p| p.starts_with('/')) {
                libs.insert(PathBuf::from(p));
            }
        }
    }
    libs
}

/// A hash of the image's layout, every input's place and content, and the module list.
fn hash_inputs(inputs: &[Input], list: &[u8]) -> Result<String, VmError> {
    let mut h = std::hash::DefaultHasher::new();
    h.write_u32(LAYOUT);
    h.write(INIT.as_bytes());
    h.write(list);
    for i in inputs {
        h.write(i.to.as_bytes());
        let data = std::fs::read(&i.from)
            .map_err(|e| VmError::io(format!("read {}", i.from.display()), e))?;
        h.write_usize(data.len());
        h.write(&data);
    }
    Ok(format!("{:016x}", h.finish()))
}

/// Writes the initramfs into `dir` (through a temporary directory, renamed when complete) and
/// removes the other images under `root`. Another run building the same image at the same
/// time is fine: the first rename wins and the other's copy is dropped.
fn build(root: &Path, dir: &Path, inputs: &[Input], list: &[u8]) -> Result<(), VmError> {
    let tmp = root.join(format!("{BUILDING}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp)
        .map_err(|e| VmError::io(format!("create {}", tmp.display()), e))?;
    let entries = entries(inputs, list, &tmp)?;
    let path = tmp.join("initramfs.cpio");
    let file = std::fs::File::create(&path)
        .map_err(|e| VmError::io(format!("create {}", path.display()), e))?;
    let mut w = std::io::BufWriter::new(file);
    super::cpio::write(&mut w, &entries)
        .and_then(|_| std::io::Write::flush(&mut w))
        .map_err(|e| VmError::io(format!("write {}", path.display()), e))?;
    let _ = std::fs::remove_file(tmp.join("iotrial"));
    let renamed = std::fs::rename(&tmp, dir);
    if renamed.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
        if !dir.join("initramfs.cpio").is_file() {
            return renamed.map_err(|e| {
                VmError::io(format!("rename {} to {}", tmp.display(), dir.display()), e)
            });
        }
    }
    prune(root, dir);
    Ok(())
}

/// Prefix of an image being built (`.build-<pid>`).
const BUILDING: &str = ".build-";

/// Removes the images under `root` other than `keep`, and builds a crashed run left (older
/// than an hour); builds in progress are left alone.
fn prune(root: &Path, keep: &Path) {
    for e in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let p = e.path();
        let building = e.file_name().to_string_lossy().starts_with(BUILDING);
        let stale = e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|d| d.as_secs() > 3600));
        if p != keep && (!building || stale) {
            let _ = std::fs::remove_dir_all(&p);
        }
    }
}

/// The archive's entries: directories, /init, the inputs, busybox's applets, the module list.
fn entries(inputs: &[Input], list: &[u8], tmp: &Path) -> Result<Vec<Entry>, VmError> {
    let mut dirs = BTreeSet::new();
    for d in [
        "dev",
        "proc",
        "sys",
        "tmp",
        "run",
        "etc",
        "bin",
        "sbin",
        "lib/iotrial",
    ] {
        dirs.insert(d.to_string());
    }
    for i in inputs {
        let mut p = Path::new(&i.to);
        while let Some(parent) = p.parent().filter(|p| !p.as_os_str().is_empty()) {
            dirs.insert(parent.display().to_string());
            p = parent;
        }
    }
    // Parents sort before their children.
    let mut out: Vec<Entry> = dirs.into_iter().map(|path| Entry::Dir { path }).collect();
    out.push(Entry::File {
        path: "init".into(),
        data: INIT.as_bytes().to_vec(),
        mode: 0o755,
    });
    for i in inputs {
        let data = if i.to == "bin/iotrial" {
            stripped(&i.from, tmp)
        } else {
            std::fs::read(&i.from)
        }
        .map_err(|e| VmError::io(format!("read {}", i.from.display()), e))?;
        out.push(Entry::File {
            path: i.to.clone(),
            data,
            mode: i.mode,
        });
    }
    for a in APPLETS {
        out.push(Entry::Symlink {
            path: format!("bin/{a}"),
            target: "busybox".into(),
        });
    }
    out.push(Entry::File {
        path: MODULE_LIST.into(),
        data: list.to_vec(),
        mode: 0o644,
    });
    Ok(out)
}

/// The program at `exe` without its symbols and debug information (`strip`: a smaller image
/// unpacks faster at boot), or as it is when strip is not there.
fn stripped(exe: &Path, tmp: &Path) -> std::io::Result<Vec<u8>> {
    let out = tmp.join("iotrial");
    let ok = std::process::Command::new("strip")
        .arg("-o")
        .arg(&out)
        .arg(exe)
        .status()
        .is_ok_and(|s| s.success());
    std::fs::read(if ok { &out } else { exe })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pruning_keeps_the_new_image_and_builds_in_progress() {
        let root = tempfile::tempdir().unwrap();
        let (keep, old) = (root.path().join("aaaa"), root.path().join("bbbb"));
        let building = root.path().join(format!("{BUILDING}42"));
        for d in [&keep, &old, &building] {
            std::fs::create_dir_all(d).unwrap();
        }
        prune(root.path(), &keep);
        assert!(keep.exists() && building.exists() && !old.exists());
    }

    #[test]
    fn the_init_script_starts_the_guest_agent() {
        let entries = entries(&[], b"[]", Path::new("/nonexistent")).unwrap();
        let init = entries
            .iter()
            .find_map(|e| match e {
                Entry::File { path, data, mode } if path == "init" => Some((data, *mode)),
                _ => None,
            })
            .unwrap();
        assert_eq!(init.0, INIT.as_bytes());
        assert_eq!(init.1, 0o755);
        assert!(entries.iter().any(|e| *e
            == Entry::Symlink {
                path: "bin/sh".into(),
                target: "busybox".into()
            }));
    }
}
