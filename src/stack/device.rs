//! Device specs as users write them: `dir:PATH` (a directory; no root needed),
//! `image:[PATH][,size=SIZE]` (a sparse file on a loop device), `block:/dev/X` (a real disk,
//! guarded), `emu:MODEL[,k=v...]` (an emulated device). Kinds this kernel cannot provide
//! (`md:`, `zfs:`, `dm:`, `nbd:`, `ublk:`) are refused with the reason.

use crate::units::{parse_size, Size};
use std::fmt;
use std::path::{Path, PathBuf};

/// Default size of an image whose spec names none.
pub const DEFAULT_IMAGE_SIZE: u64 = 16 << 30;

/// Where a trial runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSpec {
    /// An existing directory; streams get one file each inside a fresh subdirectory.
    Dir(PathBuf),
    /// A fresh temporary directory (the default target of `iotrial run`).
    TempDir,
    /// A sparse image file on a loop device; `path` None = in a fresh temporary directory.
    Image { path: Option<PathBuf>, size: u64 },
    /// A real block device.
    Block(PathBuf),
    /// An emulated device: the model spec after `emu:` (`hdd,size=200GiB,scale=10`).
    Emu(String),
}

/// Kinds of device iotrial knows of but that need kernel support this machine may lack.
const KERNEL_KINDS: &[(&str, &str, &[&str])] = &[
    ("md", "MD RAID (md driver)", &["/proc/mdstat"]),
    ("zfs", "ZFS", &["/sys/module/zfs"]),
    ("dm", "device-mapper", &["/dev/mapper/control"]),
    ("nbd", "network block devices (nbd)", &["/sys/module/nbd"]),
    ("ublk", "ublk", &["/dev/ublk-control"]),
];

impl DeviceSpec {
    /// Parses a device spec; errors say what is allowed.
    pub fn parse(text: &str) -> Result<DeviceSpec, String> {
        let allowed =
            "allowed: dir:PATH, image:[PATH][,size=SIZE], block:/dev/X, emu:MODEL[,key=value...]";
        let Some((kind, rest)) = text.split_once(':') else {
            return Err(format!("'{text}' is not a device spec; {allowed}"));
        };
        match kind {
            "dir" if !rest.is_empty() => Ok(DeviceSpec::Dir(PathBuf::from(rest))),
            "dir" => Err(format!("'{text}' names no directory; {allowed}")),
            "image" => parse_image(text, rest),
            "block" if rest.starts_with("/dev/") && rest.len() > 5 => {
                Ok(DeviceSpec::Block(PathBuf::from(rest)))
            }
            "block" => Err(format!(
                "'{text}': a block device is named by its path, e.g. block:/dev/sdb"
            )),
            "emu" if !rest.is_empty() => Ok(DeviceSpec::Emu(rest.to_string())),
            "emu" => Err(format!(
                "'{text}' names no model; see `iotrial list models`"
            )),
            _ => {
                if let Some((k, what, probes)) = KERNEL_KINDS.iter().find(|(k, _, _)| *k == kind) {
                    if probes.iter().any(|p| Path::new(p).exists()) {
                        return Err(format!(
                            "'{text}': iotrial cannot build {k}: stacks yet ({what} is present)"
                        ));
                    }
                    return Err(format!(
                        "'{text}': {what} is not available in this kernel ({} missing), so {k}: devices cannot be built here",
                        probes.join(", ")
                    ));
                }
                Err(format!(
                    "unknown device kind '{kind}' in '{text}'; {allowed}"
                ))
            }
        }
    }

    /// Short name of the kind (`dir`, `image`, `block`, `emu`).
    pub fn kind(&self) -> &'static str {
        match self {
            DeviceSpec::Dir(_) | DeviceSpec::TempDir => "dir",
            DeviceSpec::Image { .. } => "image",
            DeviceSpec::Block(_) => "block",
            DeviceSpec::Emu(_) => "emu",
        }
    }

    /// Whether building a stack on it needs root (loop devices, mkfs, mount).
    pub fn needs_root(&self) -> bool {
        !matches!(self, DeviceSpec::Dir(_) | DeviceSpec::TempDir)
    }
}

fn parse_image(text: &str, rest: &str) -> Result<DeviceSpec, String> {
    let mut path = None;
    let mut size = DEFAULT_IMAGE_SIZE;
    for (i, part) in rest.split(',').enumerate() {
        if part.is_empty() {
            continue;
        }
        if let Some(v) = part.strip_prefix("size=") {
            size = parse_size(v).map_err(|e| format!("'{text}': size: {}", e.0))?;
            if size < (64 << 20) {
                return Err(format!("'{text}': size must be at least 64MiB"));
            }
        } else if i == 0 && !part.contains('=') {
            path = Some(PathBuf::from(part));
        } else {
            return Err(format!(
                "'{text}': unknown image option '{part}'; allowed: image:[PATH][,size=SIZE]"
            ));
        }
    }
    Ok(DeviceSpec::Image { path, size })
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSpec::Dir(p) => write!(f, "dir:{}", p.display()),
            DeviceSpec::TempDir => write!(f, "dir:(temporary directory)"),
            DeviceSpec::Image {
                path: Some(p),
                size,
            } => write!(f, "image:{},size={}", p.display(), Size(*size)),
            DeviceSpec::Image { path: None, size } => write!(f, "image:size={}", Size(*size)),
            DeviceSpec::Block(p) => write!(f, "block:{}", p.display()),
            DeviceSpec::Emu(m) => write!(f, "emu:{m}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_specs() {
        assert_eq!(
            DeviceSpec::parse("dir:/srv/media").unwrap(),
            DeviceSpec::Dir("/srv/media".into())
        );
        assert!(DeviceSpec::parse("dir:")
            .unwrap_err()
            .contains("names no directory"));
        assert!(DeviceSpec::parse("floppy:/dev/fd0")
            .unwrap_err()
            .contains("unknown device kind 'floppy'"));
        assert!(DeviceSpec::parse("/srv")
            .unwrap_err()
            .contains("allowed: dir:PATH"));
        assert_eq!(
            DeviceSpec::parse("image:").unwrap(),
            DeviceSpec::Image {
                path: None,
                size: DEFAULT_IMAGE_SIZE
            }
        );
        assert_eq!(
            DeviceSpec::parse("image:size=8GiB").unwrap(),
            DeviceSpec::Image {
                path: None,
                size: 8 << 30
            }
        );
        assert_eq!(
            DeviceSpec::parse("image:/var/tmp/a.img,size=1GiB").unwrap(),
            DeviceSpec::Image {
                path: Some("/var/tmp/a.img".into()),
                size: 1 << 30
            }
        );
        assert!(DeviceSpec::parse("image:size=big")
            .unwrap_err()
            .contains("size"));
        assert!(DeviceSpec::parse("block:sdb")
            .unwrap_err()
            .contains("block:/dev/sdb"));
        assert_eq!(
            DeviceSpec::parse("emu:hdd,scale=10").unwrap(),
            DeviceSpec::Emu("hdd,scale=10".into())
        );
        assert_eq!(
            DeviceSpec::parse("image:size=1GiB").unwrap().to_string(),
            "image:size=1GiB"
        );
    }

    #[test]
    fn kernel_kinds_say_why() {
        let e = DeviceSpec::parse("md:raid10,devices=4").unwrap_err();
        assert!(e.contains("MD RAID"), "{e}");
        let e = DeviceSpec::parse("zfs:pool").unwrap_err();
        assert!(e.contains("ZFS"), "{e}");
    }
}
