//! Filesystems: which ones can be built here, the mkfs command line for each (with the user's
//! extra arguments, several devices for btrfs, an external log for xfs), the tool's version,
//! and mounting with the options read back from the kernel.

use crate::mountinfo;
use crate::stack::actions::Actions;
use crate::stack::ledger::Ledger;
use crate::stack::release::resource::Resource;
use crate::stack::{hash_seed, sys, StackError};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

/// Filesystems iotrial knows how to make: (name, mkfs program, force flag).
const KNOWN: &[(&str, &str, &str)] = &[
    ("ext2", "mkfs.ext2", "-F"),
    ("ext3", "mkfs.ext3", "-F"),
    ("ext4", "mkfs.ext4", "-F"),
    ("xfs", "mkfs.xfs", "-f"),
    ("btrfs", "mkfs.btrfs", "-f"),
    ("f2fs", "mkfs.f2fs", "-f"),
    ("jfs", "mkfs.jfs", "-q"),
    ("vfat", "mkfs.vfat", ""),
    ("exfat", "mkfs.exfat", ""),
    // A pool, not an mkfs: made by `zpool create` (see the zfs module).
    ("zfs", "zpool", ""),
];

/// Debian's package of each mkfs program, and whether scripts/install-deps.sh installs it.
const PACKAGES: &[(&str, &str, bool)] = &[
    ("mkfs.ext2", "e2fsprogs", true),
    ("mkfs.ext3", "e2fsprogs", true),
    ("mkfs.ext4", "e2fsprogs", true),
    ("mkfs.xfs", "xfsprogs", true),
    ("mkfs.btrfs", "btrfs-progs", true),
    ("mkfs.f2fs", "f2fs-tools", false),
    ("mkfs.jfs", "jfsutils", false),
    ("mkfs.vfat", "dosfstools", false),
    ("mkfs.exfat", "exfatprogs", false),
    ("zpool", "zfsutils-linux", false),
];

/// What to do about a missing mkfs program: the project's install script when it installs the
/// program's package, else the package to install.
fn install_hint(prog: &str) -> String {
    match PACKAGES.iter().find(|(p, _, _)| *p == prog) {
        Some((_, _, true)) => "run scripts/install-deps.sh".into(),
        Some((_, pkg, false)) => format!("install Debian's {pkg}"),
        None => format!("install {prog}"),
    }
}

/// Why the running kernel cannot mount `fs`: nothing to install on the host helps.
fn kernel_lacks(fs: &str) -> String {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "filesystem {fs} is not available here: this kernel ({}) has no {fs} ({fs} is not in /proc/filesystems and no {fs} module can be loaded), so installing its tools would not help",
        release.trim()
    )
}

/// Whether the running kernel has `fs` (in /proc/filesystems, or as a loadable module).
fn kernel_has(fs: &str) -> bool {
    let listed = std::fs::read_to_string("/proc/filesystems")
        .map(|t| t.lines().any(|l| l.split_whitespace().last() == Some(fs)))
        .unwrap_or(false);
    listed || sys::kernel_module(fs)
}

/// The mkfs program and force flag of a filesystem iotrial knows how to make.
fn known(fs: &str) -> Result<(&'static str, &'static str), String> {
    KNOWN
        .iter()
        .find(|(n, _, _)| *n == fs)
        .map(|&(_, prog, force)| (prog, force))
        .ok_or_else(|| {
            format!(
                "unknown filesystem '{fs}'; known: {}",
                KNOWN.iter().map(|k| k.0).collect::<Vec<_>>().join(", ")
            )
        })
}

/// Checks a filesystem name against those iotrial knows how to make.
pub fn check_name(fs: &str) -> Result<(), String> {
    known(fs).map(|_| ())
}

/// Checks the syntax of mount options as written (`noatime,data=writeback,commit=1`): options
/// separated by commas, each `name` or `name=value`, without spaces. Whether the filesystem
/// takes them is the kernel's to say when mounting.
pub fn check_mount_options(options: &str) -> Result<(), String> {
    if options.is_empty() {
        return Ok(());
    }
    let name_char = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
    for o in options.split(',') {
        let (name, value) = o.split_once('=').map_or((o, None), |(n, v)| (n, Some(v)));
        let name_ok = !name.is_empty() && name.chars().all(name_char);
        let value_ok = value.is_none_or(|v| !v.is_empty() && !v.contains(char::is_whitespace));
        if !(name_ok && value_ok) {
            return Err(format!(
                "'{o}' in '{options}' is not a mount option: write name or name=value, separated by commas without spaces (e.g. noatime,data=writeback)"
            ));
        }
    }
    Ok(())
}

/// The mkfs program for `fs`, or why it cannot be built here.
pub fn mkfs_program(fs: &str) -> Result<(&'static str, &'static str), StackError> {
    let (prog, force) = known(fs).map_err(StackError::Invalid)?;
    // The kernel first: without it, the tools would not help.
    if !kernel_has(fs) {
        return Err(StackError::Unavailable(kernel_lacks(fs)));
    }
    if !sys::have(prog) {
        return Err(StackError::Unavailable(format!(
            "filesystem {fs} is not available here: {prog} is not installed ({})",
            install_hint(prog)
        )));
    }
    Ok((prog, force))
}

/// Version line of a mkfs tool (`mke2fs 1.47.0 (5-Feb-2023)`).
pub fn mkfs_version(prog: &str) -> String {
    let out = std::process::Command::new(prog).arg("-V").output();
    match out {
        Ok(o) => {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            text.lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim()
                .to_string()
        }
        Err(_) => String::new(),
    }
}

/// Makes `fs` on `devices` (the first is the data device; btrfs takes all; the stack's checks
/// have made sure `fs` takes them); ext2/3/4 get their directory hash seed from `seed` (see
/// [`hash_seed`]). Returns what was run, for the stack as built.
pub fn mkfs(
    fs: &str,
    extra: &[String],
    devices: &[PathBuf],
    logdev: Option<&Path>,
    seed: u64,
    actions: &mut Actions,
) -> Result<Json, StackError> {
    let (prog, force) = mkfs_program(fs)?;
    let mut args: Vec<String> = Vec::new();
    if !force.is_empty() {
        args.push(force.into());
    }
    if fs.starts_with("ext") {
        args.push("-q".into());
        args.extend(hash_seed::with_hash_seed(extra, seed));
    } else {
        args.extend(extra.iter().cloned());
    }
    match logdev {
        Some(l) if fs.starts_with("ext") => {
            ext_journal_device(prog, force, extra, l, actions)?;
            if !extra.iter().any(|a| a == "-b") {
                args.extend(["-b".into(), EXT_JOURNAL_BLOCK.into()]);
            }
            args.push("-J".into());
            args.push(format!("device={}", l.display()));
        }
        Some(l) => {
            args.push("-l".into());
            args.push(format!("logdev={}", l.display()));
        }
        None => {}
    }
    args.extend(devices.iter().map(|d| d.display().to_string()));
    actions.run(prog, &args)?;
    Ok(json!({
        "command": sys::display_command(prog, &args),
        "version": if actions.dry_run { String::new() } else { mkfs_version(prog) },
    }))
}

/// Block size of an ext3/4 external journal and of the filesystem using it (they must match),
/// unless the stack's mkfs arguments give `-b`.
const EXT_JOURNAL_BLOCK: &str = "4096";

/// Makes `log` an ext3/4 external journal device (`mke2fs -O journal_dev`), with the block
/// size the filesystem will have.
fn ext_journal_device(
    prog: &str,
    force: &str,
    extra: &[String],
    log: &Path,
    actions: &mut Actions,
) -> Result<(), StackError> {
    let block = extra
        .iter()
        .position(|a| a == "-b")
        .and_then(|i| extra.get(i + 1))
        .map_or(EXT_JOURNAL_BLOCK, |b| b.as_str());
    let mut args: Vec<String> = vec![force.into(), "-q".into()];
    args.extend(["-O", "journal_dev", "-b", block].map(String::from));
    args.push(log.display().to_string());
    actions.run(prog, &args).map(|_| ())
}

/// A filesystem as mounted: enough to unmount it and mount it again between phases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mounted {
    pub fs: String,
    /// The device mounted (for zfs, the pool's name).
    pub device: PathBuf,
    pub mountpoint: PathBuf,
    /// The program that mounts it again and its arguments (`mount -t fs [-o options] device
    /// mountpoint`; `zfs mount pool`).
    pub program: String,
    pub args: Vec<String>,
}

/// `mount`'s arguments for `fs` on `device` at `mp` with `options` (and xfs's external log).
pub fn mount_args(
    fs: &str,
    device: &Path,
    options: &str,
    logdev: Option<&Path>,
    mp: &Path,
) -> Vec<String> {
    let mut opts: Vec<String> = options
        .split(',')
        .filter(|o| !o.is_empty())
        .map(String::from)
        .collect();
    // ext3/4 find their external journal by its device number, recorded by mkfs.
    if let Some(l) = logdev.filter(|_| !fs.starts_with("ext")) {
        opts.push(format!("logdev={}", l.display()));
    }
    let mut args = vec!["-t".to_string(), fs.to_string()];
    if !opts.is_empty() {
        args.push("-o".into());
        args.push(opts.join(","));
    }
    args.push(device.display().to_string());
    args.push(mp.display().to_string());
    args
}

/// Mounts `device` at a fresh mount point under `parent`, recording both in the ledger first.
pub fn mount(
    fs: &str,
    device: &Path,
    options: &str,
    logdev: Option<&Path>,
    parent: &Path,
    ledger: &mut Ledger,
    actions: &mut Actions,
) -> Result<Mounted, StackError> {
    let mp = parent.join("mnt");
    ledger
        .record(Resource::TempDir { path: mp.clone() })
        .map_err(|e| StackError::io("ledger", e))?;
    if !actions.dry_run {
        std::fs::create_dir_all(&mp)
            .map_err(|e| StackError::io(format!("create {}", mp.display()), e))?;
    }
    ledger
        .record(Resource::Mount { target: mp.clone() })
        .map_err(|e| StackError::io("ledger", e))?;
    let args = mount_args(fs, device, options, logdev, &mp);
    actions.run("mount", &args).map_err(|e| match e {
        StackError::Command(message) => StackError::MountRejected {
            fs: fs.to_string(),
            options: options.to_string(),
            message,
        },
        other => other,
    })?;
    Ok(Mounted {
        fs: fs.to_string(),
        device: device.to_path_buf(),
        mountpoint: mp,
        program: "mount".into(),
        args,
    })
}

/// The options the kernel applied to the mount at `mp`, read from /proc/self/mountinfo.
pub fn applied_options(mp: &Path) -> Json {
    match mountinfo::mount_at(mp) {
        Some(m) => json!({
            "applied": m.options(),
            "mount_options": m.mount_options,
            "super_options": m.super_options,
            "fs_type": m.fs_type,
            "source": m.source,
        }),
        None => Json::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_filesystems_are_named() {
        assert_eq!(check_name("xfs"), Ok(()));
        let e = mkfs_program("reiserfs").unwrap_err().to_string();
        assert!(
            e.contains("unknown filesystem 'reiserfs'") && e.contains("ext4"),
            "{e}"
        );
    }

    #[test]
    fn a_filesystem_this_kernel_lacks_says_it_is_the_kernel() {
        // Whichever of these this kernel lacks: the reason is the kernel, not a missing tool.
        for fs in ["jfs", "f2fs", "zfs"] {
            if kernel_has(fs) {
                continue;
            }
            let e = mkfs_program(fs).unwrap_err().to_string();
            assert!(
                e.contains(&format!("has no {fs}")) && !e.contains("install-deps"),
                "{e}"
            );
        }
        assert_eq!(install_hint("mkfs.xfs"), "run scripts/install-deps.sh");
        assert_eq!(install_hint("mkfs.jfs"), "install Debian's jfsutils");
    }

    #[test]
    fn dry_run_mkfs_shows_the_command() {
        if mkfs_program("xfs").is_err() {
            let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
            assert!(!ci, "mkfs.xfs or kernel xfs support missing, and CI is set");
            eprintln!(
                "skipped dry_run_mkfs_shows_the_command: mkfs.xfs or kernel xfs support missing"
            );
            return;
        }
        let mut a = Actions::new(true);
        let j = mkfs(
            "xfs",
            &[],
            &[PathBuf::from("/dev/loop9")],
            Some(Path::new("/dev/loop10")),
            1,
            &mut a,
        )
        .unwrap();
        assert_eq!(j["command"], "mkfs.xfs -f -l logdev=/dev/loop10 /dev/loop9");
    }

    #[test]
    fn an_ext4_journal_on_its_own_device() {
        if mkfs_program("ext4").is_err() {
            eprintln!("skipped an_ext4_journal_on_its_own_device: mkfs.ext4 missing");
            return;
        }
        let mut a = Actions::new(true);
        let (data, log) = (PathBuf::from("/dev/loop9"), Path::new("/dev/loop10"));
        let j = mkfs(
            "ext4",
            &[],
            std::slice::from_ref(&data),
            Some(log),
            5,
            &mut a,
        )
        .unwrap();
        let seed = hash_seed::uuid_from(5);
        assert_eq!(
            a.log,
            [
                "mkfs.ext4 -F -q -O journal_dev -b 4096 /dev/loop10".to_string(),
                format!(
                    "mkfs.ext4 -F -q -E hash_seed={seed} -b 4096 -J device=/dev/loop10 /dev/loop9"
                )
            ]
        );
        assert_eq!(j["command"], a.log[1]);
        let mp = Path::new("/mnt");
        let m = mount_args("ext4", &data, "noatime", Some(log), mp);
        assert_eq!(m, ["-t", "ext4", "-o", "noatime", "/dev/loop9", "/mnt"]);
    }

    #[test]
    fn mount_option_syntax() {
        for ok in [
            "",
            "noatime",
            "noatime,data=writeback,commit=1",
            "logbsize=256k",
        ] {
            assert_eq!(check_mount_options(ok), Ok(()), "{ok}");
        }
        for bad in [
            "noatime,,commit=1",
            "noatime ,commit=1",
            "commit=",
            "=1",
            "noatime,",
        ] {
            let e = check_mount_options(bad).unwrap_err();
            assert!(e.contains("is not a mount option"), "{bad}: {e}");
        }
    }
}
