//! What the host must have to run a guest, found or named in a clear error: QEMU
//! (qemu-system-x86), a guest kernel with its modules (the Debian cloud kernel that
//! scripts/install-deps.sh extracts into the cache directory, never into /boot), and KVM, or
//! TCG where the host has no hardware virtualization. Also the host's CPU and memory, which
//! the guest's defaults derive from.

use super::VmError;
use crate::stack::spec::vm_key::{Accel, VmSettings};
use std::path::{Path, PathBuf};

/// The QEMU system emulator this host runs guests with.
pub const QEMU: &str = "qemu-system-x86_64";

/// Where iotrial keeps what it builds or extracts for guests: `$IOTRIAL_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/iotrial`, else `~/.cache/iotrial`.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("IOTRIAL_CACHE_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("iotrial");
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
    home.join(".cache/iotrial")
}

/// QEMU's path, or an error naming its package.
pub fn qemu() -> Result<PathBuf, VmError> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(QEMU))
            .find(|f| f.is_file())
    });
    found.ok_or_else(|| {
        VmError::Missing(format!(
            "{QEMU} is not installed: install the Debian package qemu-system-x86 (scripts/install-deps.sh does)"
        ))
    })
}

/// How the guest's CPU will run, and a warning when it is not what the user may expect.
pub fn accel(asked: Accel) -> Result<(Accel, Option<String>), VmError> {
    let kvm = Path::new("/dev/kvm");
    let hw = hardware_virtualization();
    match asked {
        Accel::Tcg => Ok((Accel::Tcg, None)),
        Accel::Kvm if !kvm.exists() => Err(VmError::Missing(
            "/dev/kvm is missing: load the kvm_intel or kvm_amd module (or enable virtualization in the firmware), or run with --vm=accel=tcg".into(),
        )),
        Accel::Kvm => Ok((Accel::Kvm, None)),
        Accel::Auto if kvm.exists() && hw => Ok((Accel::Kvm, None)),
        Accel::Auto => Ok((Accel::Tcg, Some(format!(
            "the guest ran under TCG (QEMU's CPU emulator), not KVM: {}; the cost of virtualization it shows is an emulator's, far above KVM's",
            if kvm.exists() {
                "this host's /dev/kvm has no hardware virtualization behind it (no vmx or svm CPU flag), and an unmodified kernel boots on it too slowly to use"
            } else {
                "this host has no /dev/kvm"
            }
        )))),
    }
}

/// Whether the CPU offers VT-x or AMD-V (a vmx or svm flag in /proc/cpuinfo).
fn hardware_virtualization() -> bool {
    std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|t| {
        t.lines()
            .filter(|l| l.starts_with("flags"))
            .any(|l| l.split_whitespace().any(|f| f == "vmx" || f == "svm"))
    })
}

/// A guest kernel: its image and its module tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    pub image: PathBuf,
    /// The `/lib/modules/<release>` directory of the same kernel.
    pub modules: PathBuf,
    pub release: String,
}

const KERNEL_HINT: &str = "install the Debian cloud kernel with scripts/install-deps.sh (package linux-image-cloud-amd64, extracted into the cache directory, not installed into /boot) or name one with --vm=kernel=PATH";

/// The kernel `settings` names, else the newest Debian cloud kernel in the cache directory,
/// else one in /boot.
pub fn kernel(settings: &VmSettings) -> Result<Kernel, VmError> {
    if let Some(p) = &settings.kernel {
        return kernel_at(p);
    }
    let roots = [cache_dir().join("kernel"), PathBuf::from("/")];
    for root in roots {
        let mut found: Vec<PathBuf> = std::fs::read_dir(root.join("boot"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("vmlinuz-") && n.ends_with("-cloud-amd64"))
            })
            .collect();
        found.sort_by_key(|p| version_key(p));
        if let Some(newest) = found.pop() {
            return kernel_at(&newest);
        }
    }
    Err(VmError::Missing(format!(
        "no guest kernel found: {KERNEL_HINT}"
    )))
}

/// `vmlinuz-6.1.0-56-cloud-amd64` -> [6, 1, 0, 56] for ordering.
fn version_key(p: &Path) -> Vec<u64> {
    let n = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    n.split(|c: char| !c.is_ascii_digit())
        .filter_map(|d| d.parse().ok())
        .collect()
}

/// The kernel image at `image` and its modules: `<image dir>/../lib/modules/<release>` (an
/// extracted package) or `/lib/modules/<release>`.
fn kernel_at(image: &Path) -> Result<Kernel, VmError> {
    if !image.is_file() {
        return Err(VmError::Missing(format!(
            "guest kernel {} does not exist: {KERNEL_HINT}",
            image.display()
        )));
    }
    let name = image
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let release = name.strip_prefix("vmlinuz-").unwrap_or(name).to_string();
    let beside = image
        .parent()
        .and_then(Path::parent)
        .map(|root| root.join("lib/modules").join(&release));
    let modules = beside
        .filter(|d| d.is_dir())
        .unwrap_or_else(|| Path::new("/lib/modules").join(&release));
    if !modules.is_dir() {
        return Err(VmError::Missing(format!(
            "guest kernel {}: its modules ({}) are missing: {KERNEL_HINT}",
            image.display(),
            modules.display()
        )));
    }
    Ok(Kernel {
        image: image.to_path_buf(),
        modules,
        release,
    })
}

/// The host's online CPUs.
pub fn host_cpus() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// The host's memory, bytes (MemTotal).
pub fn host_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|k| k.parse::<u64>().ok())
        })
        .map_or(2 << 30, |k| k * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_kernel_finds_its_modules_beside_it() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("boot")).unwrap();
        std::fs::create_dir_all(root.path().join("lib/modules/6.1.0-9-cloud-amd64")).unwrap();
        let img = root.path().join("boot/vmlinuz-6.1.0-9-cloud-amd64");
        std::fs::write(&img, b"kernel").unwrap();
        let s = VmSettings {
            kernel: Some(img.clone()),
            ..Default::default()
        };
        let k = kernel(&s).unwrap();
        assert_eq!(k.release, "6.1.0-9-cloud-amd64");
        assert_eq!(
            k.modules,
            root.path().join("lib/modules/6.1.0-9-cloud-amd64")
        );
        let missing = VmSettings {
            kernel: Some(root.path().join("boot/vmlinuz-none")),
            ..Default::default()
        };
        let e = kernel(&missing).unwrap_err().to_string();
        assert!(e.contains("linux-image-cloud-amd64"), "{e}");
    }

    #[test]
    fn versions_order_numerically() {
        let a = version_key(Path::new("/boot/vmlinuz-6.1.0-9-cloud-amd64"));
        let b = version_key(Path::new("/boot/vmlinuz-6.1.0-56-cloud-amd64"));
        assert!(a < b);
    }
}
