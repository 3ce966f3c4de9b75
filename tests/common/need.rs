//! What a test needs from the host. [`ready`] says whether every need is met; when one is not,
//! it prints why the test skips, or, with `CI` set, fails the test naming what is missing: a
//! skip in CI would hide a missing install step.

use std::path::{Path, PathBuf};

/// Something a test needs from the host.
#[derive(Debug, Clone, Copy)]
pub enum Need {
    /// Running as root (loop devices, mkfs, mount, FUSE).
    Root,
    /// Loop device support (/dev/loop-control).
    Loop,
    /// FUSE (/dev/fuse).
    Fuse,
    /// A program on PATH (or in the sbin directories).
    Tool(&'static str),
    /// A guest kernel for VM trials (the Debian cloud kernel scripts/install-deps.sh extracts).
    GuestKernel,
}

/// Whether `CI` asks for every test to run.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// The path of an executable on PATH, or in the sbin directories (which a non-root PATH may
/// lack).
pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .filter(|d| !d.is_empty())
        .chain(["/usr/sbin", "/sbin"])
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file());
    found
}

/// Whether `tool` can be found.
pub fn have(tool: &str) -> bool {
    which(tool).is_some()
}

/// Why `need` is not met here, or None.
pub fn missing(need: Need) -> Option<String> {
    match need {
        Need::Root if !rustix::process::geteuid().is_root() => Some("needs root".into()),
        Need::Loop if !Path::new("/dev/loop-control").exists() => {
            Some("no loop device support (/dev/loop-control is missing)".into())
        }
        Need::Fuse if !Path::new("/dev/fuse").exists() => {
            Some("no FUSE (/dev/fuse is missing; load the fuse module)".into())
        }
        Need::Tool(t) if !have(t) => Some(format!(
            "{t} is not installed (scripts/install-deps.sh installs it)"
        )),
        Need::GuestKernel => {
            iotrial::vm::host::kernel(&iotrial::stack::spec::vm_key::VmSettings::default())
                .err()
                .map(|e| e.to_string())
        }
        _ => None,
    }
}

/// A test that cannot run here: prints why it skips, or panics when `CI` is set.
pub fn skip(test: &str, why: &str) {
    if in_ci() {
        panic!("{test} cannot run here: {why}; CI is set, so a skipped test is a failure");
    }
    eprintln!("skipped {test}: {why}");
}

/// Whether every need of `test` is met; otherwise [`skip`]s it (a failure under `CI`).
pub fn ready(test: &str, needs: &[Need]) -> bool {
    match needs.iter().find_map(|n| missing(*n)) {
        None => true,
        Some(why) => {
            skip(test, &why);
            false
        }
    }
}

/// Root, loop devices and FUSE, plus `tools`: what a test of emulated devices needs.
pub fn ready_to_emulate(test: &str, tools: &[&'static str]) -> bool {
    let mut needs = vec![Need::Root, Need::Loop, Need::Fuse];
    needs.extend(tools.iter().map(|t| Need::Tool(t)));
    ready(test, &needs)
}

/// Root and loop devices, plus `tools`: what a test that builds stacks on images needs.
pub fn ready_for_stacks(test: &str, tools: &[&'static str]) -> bool {
    let mut needs = vec![Need::Root, Need::Loop, Need::Tool("losetup")];
    needs.extend(tools.iter().map(|t| Need::Tool(t)));
    ready(test, &needs)
}

/// What a VM trial on emulated devices needs: root, loop devices, FUSE, QEMU, busybox and a
/// guest kernel, plus `tools`.
pub fn ready_for_guests(test: &str, tools: &[&'static str]) -> bool {
    let mut needs = vec![
        Need::Root,
        Need::Loop,
        Need::Fuse,
        Need::Tool("qemu-system-x86_64"),
        Need::Tool("busybox"),
        Need::GuestKernel,
    ];
    needs.extend(tools.iter().map(|t| Need::Tool(t)));
    ready(test, &needs)
}
