//! What the user asks of the guest a VM trial runs in: `--vm[=cpus=2,memory=4GiB,...]` on the
//! command line and the `vm` stack key of a study file (`false`, `true`, the same text, a
//! table, or a list of those that expands into one stack per entry). Checked without a host.

use crate::units::{parse_duration, parse_size, Size};
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::path::PathBuf;

/// The host's page cache mode for the guest's disks (QEMU's `cache=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cache {
    /// O_DIRECT on the host: the guest's writes reach the host device.
    None,
    /// Through the host's page cache, flushed when the guest flushes (seed 001's mode).
    #[default]
    Writeback,
    /// Through the host's page cache, every write synchronous.
    Writethrough,
}

/// How QEMU does the guest's disk I/O on the host (QEMU's `aio=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Aio {
    /// A pool of threads doing preadv/pwritev.
    #[default]
    Threads,
    /// Linux native AIO (needs `cache=none`).
    Native,
    IoUring,
}

/// How the guest's CPU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Accel {
    /// KVM when the host has hardware virtualization (vmx or svm) and /dev/kvm, else TCG with
    /// a warning in the result.
    #[default]
    Auto,
    /// KVM, or an error naming what is missing.
    Kvm,
    /// QEMU's own CPU emulator (slow; for hosts without hardware virtualization).
    Tcg,
}

macro_rules! named {
    ($t:ty, $key:literal, $($v:path => $n:literal),+) => {
        impl $t {
            pub fn name(self) -> &'static str {
                match self { $($v => $n),+ }
            }
            fn parse(text: &str) -> Result<Self, String> {
                match text {
                    $($n => Ok($v),)+
                    _ => Err(format!(
                        "{}: '{text}' is not allowed; allowed: {}",
                        $key,
                        [$($n),+].join(", ")
                    )),
                }
            }
        }
    };
}

named!(Cache, "cache", Cache::None => "none", Cache::Writeback => "writeback", Cache::Writethrough => "writethrough");
named!(Aio, "aio", Aio::Threads => "threads", Aio::Native => "native", Aio::IoUring => "io_uring");
named!(Accel, "accel", Accel::Auto => "auto", Accel::Kvm => "kvm", Accel::Tcg => "tcg");

/// The guest's settings; `None` fields are derived from the host when the guest starts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VmSettings {
    /// Virtual CPUs; default: the host's CPU count.
    pub cpus: Option<u32>,
    /// Guest memory, bytes; default: half of the host's (as seed 001 split it).
    pub memory: Option<u64>,
    pub cache: Cache,
    pub aio: Aio,
    /// A kernel image (`vmlinuz-*`, its modules under `../lib/modules/<release>`); default:
    /// the Debian cloud kernel extracted by scripts/install-deps.sh, else one in /boot.
    pub kernel: Option<PathBuf>,
    pub accel: Accel,
    /// Seconds the guest has to boot before it is given up (with its console's last lines);
    /// `None`: [`VmSettings::boot_timeout`]'s default for the accelerator.
    pub boot_timeout_s: Option<f64>,
}

/// Seconds a guest has to boot by default under KVM.
pub const BOOT_TIMEOUT_S: f64 = 60.0;

/// Seconds a guest has to boot by default under TCG: QEMU emulates every guest instruction,
/// and on a busy host its CPUs can stall for tens of seconds while the kernel starts.
pub const BOOT_TIMEOUT_TCG_S: f64 = 300.0;

/// The keys `--vm` and the `vm` table take.
pub const KEYS: &str = "cpus, memory, cache, aio, kernel, accel, boot_timeout";

impl VmSettings {
    /// Seconds the guest has to boot under `accel` (KVM or TCG, as resolved): the one set, or
    /// the accelerator's default.
    pub fn boot_timeout(&self, accel: Accel) -> f64 {
        self.boot_timeout_s.unwrap_or(match accel {
            Accel::Tcg => BOOT_TIMEOUT_TCG_S,
            _ => BOOT_TIMEOUT_S,
        })
    }

    /// Parses `cpus=2,memory=4GiB,cache=none,...` (empty: every default).
    pub fn parse(text: &str) -> Result<VmSettings, String> {
        let mut s = VmSettings::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((k, v)) = part.split_once('=') else {
                return Err(format!("'{part}' is not key=value; keys: {KEYS}"));
            };
            s.set(k.trim(), v.trim())?;
        }
        s.check()?;
        Ok(s)
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "cpus" => match value.parse::<u32>() {
                Ok(n) if (1..=256).contains(&n) => self.cpus = Some(n),
                _ => return Err(format!("cpus: '{value}' is not a count from 1 to 256")),
            },
            "memory" => match parse_size(value) {
                Ok(b) if b >= 128 << 20 => self.memory = Some(b),
                Ok(_) => return Err(format!("memory: '{value}' is less than 128MiB")),
                Err(e) => return Err(format!("memory: {}", e.0)),
            },
            "cache" => self.cache = Cache::parse(value)?,
            "aio" => self.aio = Aio::parse(value)?,
            "accel" => self.accel = Accel::parse(value)?,
            "kernel" if !value.is_empty() => self.kernel = Some(PathBuf::from(value)),
            "boot_timeout" => match parse_duration(value) {
                Ok(t) if t > 0.0 => self.boot_timeout_s = Some(t),
                _ => {
                    return Err(format!(
                        "boot_timeout: '{value}' is not a duration such as 60s"
                    ))
                }
            },
            _ => return Err(format!("unknown key '{key}'; keys: {KEYS}")),
        }
        Ok(())
    }

    /// Combinations QEMU refuses.
    fn check(&self) -> Result<(), String> {
        if self.aio == Aio::Native && self.cache != Cache::None {
            return Err(format!(
                "aio=native needs cache=none (QEMU does native AIO only with O_DIRECT), not cache={}",
                self.cache.name()
            ));
        }
        Ok(())
    }
}

impl fmt::Display for VmSettings {
    /// The settings as `--vm` takes them, every chosen value written out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(c) = self.cpus {
            parts.push(format!("cpus={c}"));
        }
        if let Some(m) = self.memory {
            parts.push(format!("memory={}", Size(m)));
        }
        parts.push(format!("cache={}", self.cache.name()));
        parts.push(format!("aio={}", self.aio.name()));
        parts.push(format!("accel={}", self.accel.name()));
        if let Some(k) = &self.kernel {
            parts.push(format!("kernel={}", k.display()));
        }
        if let Some(t) = self.boot_timeout_s {
            parts.push(format!("boot_timeout={}s", crate::units::trim_float(t)));
        }
        f.write_str(&parts.join(","))
    }
}

/// The `vm` key of a stack: native, in a guest, or (study files) one stack per entry.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum VmKey {
    /// On the host (`vm = false`, or no key).
    #[default]
    Native,
    /// In a guest with these settings (`vm = true`, a string or a table).
    Guest(VmSettings),
    /// Each entry a stack of its own (`vm = [false, true]`), expanded by the study.
    Each(Vec<VmKey>),
}

impl VmKey {
    pub fn is_native(&self) -> bool {
        matches!(self, VmKey::Native)
    }

    /// The guest's settings when the stack runs in one (a list is expanded before a trial).
    pub fn guest(&self) -> Option<&VmSettings> {
        match self {
            VmKey::Guest(s) => Some(s),
            _ => None,
        }
    }
}

impl Serialize for VmKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            VmKey::Native => s.serialize_bool(false),
            VmKey::Guest(v) => s.serialize_str(&v.to_string()),
            VmKey::Each(list) => list.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for VmKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<VmKey, D::Error> {
        d.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

const EXPECTED: &str =
    "true, false, \"cpus=2,memory=4GiB,...\", a table of cpus, memory, cache, aio, kernel, accel, boot_timeout, or a list of these";

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = VmKey;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(EXPECTED)
    }

    fn visit_bool<E: de::Error>(self, on: bool) -> Result<VmKey, E> {
        Ok(if on {
            VmKey::Guest(VmSettings::default())
        } else {
            VmKey::Native
        })
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<VmKey, E> {
        VmSettings::parse(text).map(VmKey::Guest).map_err(E::custom)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<VmKey, A::Error> {
        let mut s = VmSettings::default();
        while let Some(key) = map.next_key::<String>()? {
            let value = match map.next_value::<Scalar>()? {
                Scalar::Int(n) => n.to_string(),
                Scalar::Text(t) => t,
            };
            s.set(&key, &value).map_err(de::Error::custom)?;
        }
        s.check().map_err(de::Error::custom)?;
        Ok(VmKey::Guest(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<VmKey, A::Error> {
        let mut list = Vec::new();
        while let Some(k) = seq.next_element::<VmKey>()? {
            if matches!(k, VmKey::Each(_)) {
                return Err(de::Error::custom("a vm list cannot hold another list"));
            }
            list.push(k);
        }
        if list.is_empty() {
            return Err(de::Error::custom(
                "an empty vm list; write false, true or a list of them",
            ));
        }
        Ok(VmKey::Each(list))
    }
}

/// A value in a `vm` table.
#[derive(Deserialize)]
#[serde(untagged)]
enum Scalar {
    Int(i64),
    Text(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Serialize)]
    struct Doc {
        vm: VmKey,
    }

    fn key(toml_text: &str) -> Result<VmKey, String> {
        toml::from_str::<Doc>(toml_text)
            .map(|d| d.vm)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn text_sets_every_key_and_prints_back() {
        let s = VmSettings::parse(
            "cpus=2, memory=1GiB,cache=none,aio=native,accel=tcg,kernel=/k,boot_timeout=5s",
        )
        .unwrap();
        assert_eq!(s.cpus, Some(2));
        assert_eq!(s.memory, Some(1 << 30));
        assert_eq!(
            (s.cache, s.aio, s.accel),
            (Cache::None, Aio::Native, Accel::Tcg)
        );
        assert_eq!(s.boot_timeout_s, Some(5.0));
        assert_eq!(VmSettings::parse(&s.to_string()).unwrap(), s);
        assert_eq!(VmSettings::parse("").unwrap(), VmSettings::default());
    }

    #[test]
    fn bad_settings_say_what_is_allowed() {
        let e = VmSettings::parse("cache=unsafe").unwrap_err();
        assert!(e.contains("none, writeback, writethrough"), "{e}");
        let e = VmSettings::parse("aio=native").unwrap_err();
        assert!(e.contains("needs cache=none"), "{e}");
        let e = VmSettings::parse("disks=3").unwrap_err();
        assert!(e.contains("unknown key 'disks'") && e.contains(KEYS), "{e}");
        assert!(VmSettings::parse("cpus=0").is_err());
        assert!(VmSettings::parse("memory=1MiB").is_err());
    }

    #[test]
    fn study_values_take_every_form() {
        assert_eq!(key("vm = false").unwrap(), VmKey::Native);
        assert_eq!(
            key("vm = true").unwrap(),
            VmKey::Guest(VmSettings::default())
        );
        let t = key("vm = { cpus = 2, memory = \"512MiB\", cache = \"none\" }").unwrap();
        let s = t.guest().unwrap();
        assert_eq!(
            (s.cpus, s.memory, s.cache),
            (Some(2), Some(512 << 20), Cache::None)
        );
        let l = key("vm = [false, \"cpus=1\"]").unwrap();
        let VmKey::Each(list) = &l else {
            panic!("{l:?}")
        };
        assert_eq!(list.len(), 2);
        assert!(list[0].is_native() && list[1].guest().unwrap().cpus == Some(1));
        let back = toml::to_string(&Doc { vm: l.clone() }).unwrap();
        assert_eq!(key(&back).unwrap(), l);
        let e = key("vm = { cache = \"fast\" }").unwrap_err();
        assert!(e.contains("cache: 'fast'"), "{e}");
        assert!(key("vm = []").is_err());
        assert!(key("vm = 3").unwrap_err().contains("true, false"));
    }
}
