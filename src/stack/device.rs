//! Device specs as users write them: `dir:PATH` (a directory; no root needed),
//! `image:[PATH][,size=SIZE]` (a sparse file on a loop device), `block:/dev/X` (a real disk,
//! guarded), `emu:MODEL[,k=v...]` (an emulated device, its model parameters checked here).
//! A twin file stands for its `emu:` spec, by path or by name ([`crate::emu::twinfile`]).
//! Kinds this host cannot provide (`md:`, `zfs:`, `dm:`, `nbd:`, `ublk:`) are refused with the
//! reason, as the host's limit rather than a mistake in the spec.

use crate::cause::{Cause, HasCause};
use crate::emu::{twinfile, ModelSpec, SpecError};
use crate::units::{parse_size, Size};
use std::fmt;
use std::path::{Path, PathBuf};

/// Default size of an image whose spec names none.
pub const DEFAULT_IMAGE_SIZE: u64 = 16 << 30;

/// Where a trial runs.
#[derive(Debug, Clone, PartialEq)]
pub enum DeviceSpec {
    /// An existing directory; streams get one file each inside a fresh subdirectory.
    Dir(PathBuf),
    /// A fresh temporary directory (the default target of `iotrial run`).
    TempDir,
    /// A sparse image file on a loop device; `path` None = in a fresh temporary directory.
    Image { path: Option<PathBuf>, size: u64 },
    /// A real block device.
    Block(PathBuf),
    /// An emulated device: the model spec after `emu:` as written (`hdd,size=200GiB,scale=10`)
    /// and as parsed.
    Emu { text: String, model: ModelSpec },
}

/// A device spec that names nothing this host can build.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeviceSpecError {
    /// The spec is malformed: the user's input.
    #[error("{0}")]
    Invalid(String),
    /// The `emu:` model spec is wrong: the user's input.
    #[error("'{text}': {source}")]
    Model { text: String, source: SpecError },
    /// A kind this host (or iotrial, here) cannot build.
    #[error("{0}")]
    Unsupported(String),
}

impl HasCause for DeviceSpecError {
    fn why(&self) -> Cause {
        match self {
            DeviceSpecError::Invalid(_) | DeviceSpecError::Model { .. } => Cause::Input,
            DeviceSpecError::Unsupported(_) => Cause::Host,
        }
    }
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
    pub fn parse(text: &str) -> Result<DeviceSpec, DeviceSpecError> {
        // A twin file, by path or by name, with keys after it overriding it.
        let (head, keys) = text.split_once(',').unwrap_or((text, ""));
        let head = head.trim();
        let file = head.ends_with(".twin") || Path::new(head).is_file();
        if twinfile::names_a_twin(head) && (file || !head.contains('/')) {
            let t = twinfile::find(head).map_err(|e| {
                DeviceSpecError::Invalid(format!(
                    "'{text}' is neither a twin nor a device spec: {e}; device specs: dir:PATH, image:[PATH][,size=SIZE], block:/dev/X, emu:MODEL[,key=value...]"
                ))
            })?;
            let full = if keys.trim().is_empty() {
                t.spec
            } else {
                format!("{},{}", t.spec, keys)
            };
            return DeviceSpec::parse(&full);
        }
        let allowed =
            "allowed: dir:PATH, image:[PATH][,size=SIZE], block:/dev/X, emu:MODEL[,key=value...]";
        let invalid = |m: String| Err(DeviceSpecError::Invalid(m));
        let Some((kind, rest)) = text.split_once(':') else {
            return invalid(format!("'{text}' is not a device spec; {allowed}"));
        };
        match kind {
            "dir" if !rest.is_empty() => Ok(DeviceSpec::Dir(PathBuf::from(rest))),
            "dir" => invalid(format!("'{text}' names no directory; {allowed}")),
            "image" => parse_image(text, rest).map_err(DeviceSpecError::Invalid),
            "block" if rest.starts_with("/dev/") && rest.len() > 5 => {
                Ok(DeviceSpec::Block(PathBuf::from(rest)))
            }
            "block" => invalid(format!(
                "'{text}': a block device is named by its path, e.g. block:/dev/sdb"
            )),
            "emu" if !rest.is_empty() => parse_emu(text, rest),
            "emu" => invalid(format!(
                "'{text}' names no model; see `iotrial list models`"
            )),
            _ => Err(kernel_kind(text, kind).unwrap_or_else(|| {
                DeviceSpecError::Invalid(format!(
                    "unknown device kind '{kind}' in '{text}'; {allowed}"
                ))
            })),
        }
    }

    /// Short name of the kind (`dir`, `image`, `block`, `emu`).
    pub fn kind(&self) -> &'static str {
        match self {
            DeviceSpec::Dir(_) | DeviceSpec::TempDir => "dir",
            DeviceSpec::Image { .. } => "image",
            DeviceSpec::Block(_) => "block",
            DeviceSpec::Emu { .. } => "emu",
        }
    }

    /// The time-scale factor its delays are divided by (1 for real devices).
    pub fn time_scale(&self) -> f64 {
        match self {
            DeviceSpec::Emu { model, .. } => model.settings.scale,
            _ => 1.0,
        }
    }

    /// Whether building a stack on it needs root (loop devices, mkfs, mount).
    pub fn needs_root(&self) -> bool {
        !matches!(self, DeviceSpec::Dir(_) | DeviceSpec::TempDir)
    }
}

fn parse_emu(text: &str, rest: &str) -> Result<DeviceSpec, DeviceSpecError> {
    match ModelSpec::parse(rest) {
        Ok(model) => Ok(DeviceSpec::Emu {
            text: rest.to_string(),
            model,
        }),
        Err(source) => Err(DeviceSpecError::Model {
            text: text.to_string(),
            source,
        }),
    }
}

/// Why a kind iotrial knows of but cannot build here is refused; None for other kinds.
fn kernel_kind(text: &str, kind: &str) -> Option<DeviceSpecError> {
    let (k, what, probes) = KERNEL_KINDS.iter().find(|(k, _, _)| *k == kind)?;
    if *k == "md" {
        return Some(DeviceSpecError::Unsupported(format!(
            "'{text}': MD RAID (md driver) is not a device kind: name the member devices and add the stack key md = \"raid10\" (--md raid10 on run); with vm = true (--vm) a guest's kernel builds it where this one cannot"
        )));
    }
    Some(DeviceSpecError::Unsupported(
        if probes.iter().any(|p| Path::new(p).exists()) {
            format!("'{text}': iotrial cannot build {k}: stacks yet ({what} is present)")
        } else {
            format!(
                "'{text}': {what} is not available in this kernel ({} missing), so {k}: devices cannot be built here",
                probes.join(", ")
            )
        },
    ))
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
            DeviceSpec::Emu { text, .. } => write!(f, "emu:{text}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: &str) -> String {
        DeviceSpec::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn parse_specs() {
        assert_eq!(
            DeviceSpec::parse("dir:/srv/media").unwrap(),
            DeviceSpec::Dir("/srv/media".into())
        );
        assert!(message("dir:").contains("names no directory"));
        assert!(message("floppy:/dev/fd0").contains("unknown device kind 'floppy'"));
        assert!(message("/srv").contains("allowed: dir:PATH"));
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
        assert!(message("image:size=big").contains("size"));
        assert!(message("block:sdb").contains("block:/dev/sdb"));
        match DeviceSpec::parse("emu:hdd,scale=10").unwrap() {
            DeviceSpec::Emu { text, model } => {
                assert_eq!(
                    (text.as_str(), model.settings.scale),
                    ("hdd,scale=10", 10.0)
                )
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            DeviceSpec::parse("image:size=1GiB").unwrap().to_string(),
            "image:size=1GiB"
        );
    }

    #[test]
    fn kernel_kinds_are_the_hosts_limit() {
        let e = DeviceSpec::parse("md:raid10,devices=4").unwrap_err();
        assert_eq!(e.why(), Cause::Host);
        assert!(e.to_string().contains("MD RAID"), "{e}");
        let e = DeviceSpec::parse("zfs:pool").unwrap_err();
        assert!(e.to_string().contains("ZFS"), "{e}");
    }

    #[test]
    fn model_parameters_are_checked_as_input() {
        let e = DeviceSpec::parse("emu:hdd,rpm=fast").unwrap_err();
        assert_eq!(e.why(), Cause::Input);
        assert!(e.to_string().contains("rpm"), "{e}");
        assert_eq!(
            DeviceSpec::parse("floppy:0").unwrap_err().why(),
            Cause::Input
        );
    }
}
