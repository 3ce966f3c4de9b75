//! Device model specs as users write them after `emu:` (`hdd`, `hdd,size=200GiB,scale=10`,
//! `smr,cache=2GiB`, `flash,open_units=2`, `hdd,fail_range=1GiB-1GiB+4MiB`): parsing into a
//! validated [`ModelSpec`] that builds the model and carries the server settings, the canonical
//! form with every default written out, and the table behind `iotrial list models`.

use super::autoscale::{self, AutoScale, AUTO_IO};
use super::fault::{Fault, FaultParams};
use super::model::{DeviceModel, Expectations, ModelDescriptor, ModelError, Preset};
use super::{array, flash, hdd, null, smr, ssd};
use crate::cause::{Cause, HasCause};
use crate::params::{parse_value, Kind, ParamSpec, Params, Value};
use crate::units::{parse_size, Size};
use serde::Serialize;
use std::fmt;

/// The time-scale parameter, and the value that lets the model pick it ([`autoscale`]).
const SCALE: &str = "scale";
const AUTO: &str = "auto";

/// Parameters every model accepts (besides its own `size`).
pub static COMMON: &[ParamSpec] = &[
    ParamSpec::new(
        SCALE,
        Kind::Float,
        "1",
        "time-scale factor dividing every modeled delay; auto: the largest the emulator keeps up with (its shortest 4 KiB request over 2 x 80 µs)",
    )
    .in_unit("divisor"),
    ParamSpec::new(
        "fail_prob",
        Kind::Float,
        "0",
        "fail each read or write with EIO with this probability",
    )
    .in_unit("probability"),
    ParamSpec::new(
        "fail_seed",
        Kind::Count,
        "1",
        "seed of the fault coin tosses (deterministic)",
    ),
    ParamSpec::new(
        "stale",
        Kind::Bool,
        "false",
        "a used disk: what this run never wrote reads as an earlier owner's data (not zeros), and there is no TRIM (discards fail)",
    ),
];

/// The byte-range fault parameter (repeatable; its value is not a plain quantity).
pub const FAIL_RANGE: ParamSpec = ParamSpec::new(
    "fail_range",
    Kind::Size,
    "",
    "fail reads and writes touching [START, END) with EIO, e.g. 1GiB-1GiB+4MiB; repeatable",
)
.in_unit("START-END");

/// A model spec could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    #[error(
        "empty device model spec; expected MODEL[,key=value...] with MODEL one of {names}",
        names = model_names()
    )]
    Empty,
    #[error("unknown device model '{0}'; allowed: {names}", names = model_names())]
    UnknownModel(String),
    #[error("'{0}' in a device model spec is not of the form key=value")]
    Malformed(String),
    #[error("unknown parameter '{key}' for device model {model}; allowed: {allowed}")]
    UnknownKey {
        model: &'static str,
        key: String,
        allowed: String,
    },
    #[error("device model {model}, parameter {key}: {message}")]
    Invalid {
        model: &'static str,
        key: String,
        message: String,
    },
}

/// Every device model, in the order `iotrial list models` shows them.
pub static MODELS: &[&ModelDescriptor] = &[
    &hdd::MODEL,
    &smr::MODEL,
    &flash::MODEL,
    &ssd::MODEL,
    &array::MODEL,
    &null::MODEL,
];

/// The model named `name`.
pub fn find_model(name: &str) -> Option<&'static ModelDescriptor> {
    MODELS.iter().copied().find(|m| m.name == name)
}

/// `hdd, smr, flash, ssd, array, null`.
fn model_names() -> String {
    MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}

/// Settings of the server that serves a model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerSettings {
    /// Logical capacity in bytes (the served file's size).
    pub capacity: u64,
    /// Time-scale divisor: the server waits modeled delay / scale.
    pub scale: f64,
    /// A used disk ([`super::stale`]).
    pub stale: bool,
}

/// A validated model spec.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    pub model: &'static ModelDescriptor,
    /// Every model parameter, resolved.
    pub values: Params,
    pub settings: ServerSettings,
    pub faults: FaultParams,
    /// The preset the values started from (`card=lexar`), if any.
    pub preset: Option<&'static Preset>,
    /// What `scale=auto` chose, when the spec said it.
    pub auto_scale: Option<AutoScale>,
    common: Params,
}

impl ModelSpec {
    /// Parses `MODEL[,key=value...]` (an `emu:` prefix is accepted) and validates it.
    pub fn parse(text: &str) -> Result<ModelSpec, SpecError> {
        let text = text.trim();
        let text = text.strip_prefix("emu:").unwrap_or(text);
        let mut parts = text.split(',').map(str::trim);
        let name = parts.next().unwrap_or("");
        if name.is_empty() {
            return Err(SpecError::Empty);
        }
        let model = find_model(name).ok_or_else(|| SpecError::UnknownModel(name.to_string()))?;
        let mut spec = ModelSpec {
            model,
            values: Params::defaults(model.params()),
            settings: ServerSettings {
                capacity: 0,
                scale: 1.0,
                stale: false,
            },
            faults: FaultParams::default(),
            preset: None,
            auto_scale: None,
            common: Params::defaults(COMMON),
        };
        let mut ranges = Vec::new();
        let pairs = parts
            .filter(|p| !p.is_empty())
            .map(|part| {
                part.split_once('=')
                    .map(|(k, v)| (k.trim(), v.trim()))
                    .filter(|(k, _)| !k.is_empty())
                    .ok_or_else(|| SpecError::Malformed(part.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        // A preset first, wherever it is written, so the keys beside it override it.
        let preset_key = model.preset_key;
        for (_, val) in pairs.iter().filter(|(k, _)| *k == preset_key) {
            if !model.presets.is_empty() {
                spec.apply_preset(val)?;
            }
        }
        for (key, val) in pairs {
            if key == preset_key && !model.presets.is_empty() {
                continue;
            }
            if key == FAIL_RANGE.name {
                ranges.push(val);
            } else {
                spec.assign(key, val)?;
            }
        }
        spec.settle(&ranges)?;
        spec.build()?;
        Ok(spec)
    }

    fn invalid(&self, key: &str, message: impl Into<String>) -> SpecError {
        SpecError::Invalid {
            model: self.model.name,
            key: key.to_string(),
            message: message.into(),
        }
    }

    /// Starts the values from the model's preset `name`.
    fn apply_preset(&mut self, name: &str) -> Result<(), SpecError> {
        let presets = self.model.presets;
        let Some(p) = presets.iter().find(|p| p.name == name) else {
            let names = presets.iter().map(|p| p.name).collect::<Vec<_>>();
            let key = self.model.preset_key;
            let message = format!("unknown {key} '{name}'; allowed: {}", names.join(", "));
            return Err(self.invalid(key, message));
        };
        for (key, val) in p.values {
            self.assign(key, val)?;
        }
        self.preset = Some(p);
        Ok(())
    }

    /// Sets `key`, one of the model's parameters or of those every model accepts, to `val`.
    fn assign(&mut self, key: &str, val: &str) -> Result<(), SpecError> {
        if key == SCALE && val == AUTO {
            // Resolved in `settle`, once the model's values are all known.
            self.auto_scale = Some(AutoScale {
                scale: 1.0,
                shortest_us: f64::NAN,
                what: "none",
            });
            return Ok(());
        }
        if key == SCALE {
            self.auto_scale = None;
        }
        let own = self.model.params().find(|d| d.name == key);
        let Some(def) = own.or_else(|| COMMON.iter().find(|d| d.name == key)) else {
            let allowed = self
                .model
                .params()
                .chain(COMMON)
                .map(|d| d.name)
                .chain([FAIL_RANGE.name])
                .chain((!self.model.presets.is_empty()).then_some(self.model.preset_key))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(SpecError::UnknownKey {
                model: self.model.name,
                key: key.to_string(),
                allowed,
            });
        };
        let v = parse_value(def.kind, val).map_err(|m| self.invalid(key, m))?;
        let set = if own.is_some() {
            &mut self.values
        } else {
            &mut self.common
        };
        set.set(key, v);
        Ok(())
    }

    /// Reads the server settings and the faults (with the `fail_range` texts) out of the
    /// resolved values, checking them.
    fn settle(&mut self, ranges: &[&str]) -> Result<(), SpecError> {
        let capacity = self.values.u64("size");
        if self.auto_scale.is_some() {
            let e = (self.model.expect)(&self.values, AUTO_IO).map_err(|e| self.model_error(e))?;
            let auto = autoscale::pick(&e);
            self.common.set(SCALE, Value::Float(auto.scale));
            self.auto_scale = Some(auto);
        }
        let scale = self.common.f64(SCALE);
        if !(scale > 0.0 && scale.is_finite()) {
            let message = format!("'{scale}' must be a number greater than 0");
            return Err(self.invalid("scale", message));
        }
        self.settings = ServerSettings {
            capacity,
            scale,
            stale: self.common.bool("stale"),
        };
        self.faults.prob = self.common.f64("fail_prob");
        if !(0.0..=1.0).contains(&self.faults.prob) {
            return Err(self.invalid("fail_prob", "must be between 0 and 1"));
        }
        self.faults.seed = self.common.u64("fail_seed");
        for r in ranges {
            let range = parse_range(r).map_err(|m| self.invalid(FAIL_RANGE.name, m))?;
            if range.0 >= capacity {
                let message = format!("'{r}' starts beyond size {}", Size(capacity));
                return Err(self.invalid(FAIL_RANGE.name, message));
            }
            self.faults.ranges.push(range);
        }
        Ok(())
    }

    fn model_error(&self, e: ModelError) -> SpecError {
        self.invalid(e.param, e.message)
    }

    /// Builds a fresh model (with fault injection if any fault is configured).
    pub fn build(&self) -> Result<Box<dyn DeviceModel>, SpecError> {
        let model = (self.model.build)(&self.values).map_err(|e| self.model_error(e))?;
        Ok(if self.faults.is_active() {
            Box::new(Fault::new(model, &self.faults))
        } else {
            model
        })
    }

    /// What a seeker-style probe should measure, with sequential transfers of `seq_io` bytes.
    pub fn expectations(&self, seq_io: u64) -> Result<Expectations, SpecError> {
        (self.model.expect)(&self.values, seq_io).map_err(|e| self.model_error(e))
    }
}

/// Every error of a model spec is the user's input.
impl HasCause for SpecError {
    fn why(&self) -> Cause {
        Cause::Input
    }
}

impl std::str::FromStr for ModelSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ModelSpec::parse(s)
    }
}

/// The canonical spec: model, then every parameter with its resolved value.
impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.model.name)?;
        if let Some(p) = self.preset {
            write!(f, ",{}={}", self.model.preset_key, p.name)?;
        }
        for (n, v) in self.values.entries().iter().chain(self.common.entries()) {
            write!(f, ",{n}={v}")?;
        }
        for (a, b) in &self.faults.ranges {
            write!(f, ",{}={}-{}", FAIL_RANGE.name, Size(*a), Size(*b))?;
        }
        Ok(())
    }
}

/// Parses `START-END` where each side is a sum of sizes (`1GiB-1GiB+4MiB`).
fn parse_range(text: &str) -> Result<(u64, u64), String> {
    let expected = "expected START-END such as 1GiB-1GiB+4MiB";
    let (a, b) = text
        .split_once('-')
        .ok_or_else(|| format!("'{text}' is not a range; {expected}"))?;
    let sum = |s: &str| -> Result<u64, String> {
        s.split('+').try_fold(0u64, |acc, t| {
            let n = parse_size(t).map_err(|e| format!("{e} ({expected})"))?;
            acc.checked_add(n)
                .ok_or_else(|| format!("'{text}' is too large"))
        })
    };
    let (a, b) = (sum(a)?, sum(b)?);
    if b <= a {
        return Err(format!("'{text}' is empty: END must be greater than START"));
    }
    Ok((a, b))
}

/// One row of `iotrial list models`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ModelParamRow {
    /// Model name, or `all` for parameters every model accepts.
    pub model: &'static str,
    pub parameter: &'static str,
    pub default: &'static str,
    pub unit: &'static str,
    pub meaning: &'static str,
}

/// Every model's parameters, then those every model accepts, for `iotrial list models`.
pub fn model_table() -> Vec<ModelParamRow> {
    let row = |model, d: &ParamSpec| ModelParamRow {
        model,
        parameter: d.name,
        default: d.default,
        unit: d.unit,
        meaning: d.help,
    };
    let mut rows = Vec::new();
    for m in MODELS {
        rows.extend(m.params().map(|d| row(m.name, d)));
    }
    for m in MODELS.iter().filter(|m| !m.presets.is_empty()) {
        rows.extend(m.presets.iter().map(|p| ModelParamRow {
            model: m.name,
            parameter: m.preset_key,
            default: p.name,
            unit: "preset",
            meaning: p.summary,
        }));
    }
    rows.extend(COMMON.iter().chain([&FAIL_RANGE]).map(|d| row("all", d)));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emu::model::{ReqKind, Request};

    #[test]
    fn plain_models_parse_with_defaults() {
        for (text, name, cap) in [
            ("hdd", "hdd", 64u64 << 30),
            ("emu:smr", "smr", 64 << 30),
            ("flash", "flash", 4 << 30),
            ("null", "null", 16 << 30),
        ] {
            let s = ModelSpec::parse(text).unwrap();
            assert_eq!(s.model.name, name);
            assert_eq!(
                s.settings,
                ServerSettings {
                    capacity: cap,
                    scale: 1.0,
                    stale: false,
                }
            );
            let m = s.build().unwrap();
            assert_eq!((m.name(), m.capacity()), (name, cap));
        }
    }

    #[test]
    fn values_override_defaults() {
        let s = ModelSpec::parse("hdd,size=200GiB,scale=10").unwrap();
        assert_eq!(
            s.settings,
            ServerSettings {
                capacity: 200 << 30,
                scale: 10.0,
                stale: false,
            }
        );
        assert_eq!(
            ModelSpec::parse("smr,cache=1GiB")
                .unwrap()
                .values
                .u64("cache"),
            1 << 30
        );
        let f = ModelSpec::parse("flash,size=4GiB,open_units=3").unwrap();
        assert_eq!(f.values.u64("open_units"), 3);
        let h = ModelSpec::parse(" hdd , rpm=5400, write_back=false ").unwrap();
        assert_eq!(h.values.f64("rpm"), 5400.0);
        assert!(!h.values.bool("write_back"));
    }

    #[test]
    fn fault_keys_wrap_the_model() {
        let s = ModelSpec::parse("hdd,fail_range=1GiB-1GiB+4MiB").unwrap();
        assert_eq!(s.faults.ranges, vec![(1 << 30, (1 << 30) + (4 << 20))]);
        let mut m = s.build().unwrap();
        let rd = |offset| Request {
            kind: ReqKind::Read,
            offset,
            len: 4096,
        };
        assert_eq!(m.service(0, rd(1 << 30)).errno, 5);
        assert_eq!(m.service(0, rd(2 << 30)).errno, 0);
        let p = ModelSpec::parse("flash,fail_prob=0.001,fail_seed=9").unwrap();
        assert_eq!((p.faults.prob, p.faults.seed), (0.001, 9));
        let two = ModelSpec::parse("null,fail_range=0-4KiB,fail_range=1MiB-2MiB").unwrap();
        assert_eq!(two.faults.ranges.len(), 2);
    }

    #[test]
    fn errors_name_the_key_and_what_is_allowed() {
        let err = |t: &str| ModelSpec::parse(t).unwrap_err();
        assert_eq!(err(""), SpecError::Empty);
        assert_eq!(
            err("tape,size=1GiB"),
            SpecError::UnknownModel("tape".into())
        );
        assert!(err("tape")
            .to_string()
            .contains("hdd, smr, flash, ssd, array, null"));
        match err("hdd,cache=1GiB") {
            SpecError::UnknownKey {
                model,
                key,
                allowed,
            } => {
                assert_eq!((model, key.as_str()), ("hdd", "cache"));
                assert!(
                    allowed.contains("rpm")
                        && allowed.contains("fail_range")
                        && allowed.contains("scale")
                );
            }
            e => panic!("{e:?}"),
        }
        assert_eq!(err("hdd,rpm"), SpecError::Malformed("rpm".into()));
        let bad = |t: &str, key: &str| match err(t) {
            SpecError::Invalid {
                key: k, message, ..
            } => {
                assert_eq!(k, key, "{t}: {message}");
                assert!(!message.is_empty());
            }
            e => panic!("{t}: {e:?}"),
        };
        bad("hdd,size=big", "size");
        bad("hdd,scale=0", "scale");
        bad("hdd,write_back=maybe", "write_back");
        bad("hdd,avg_seek=16ms", "avg_seek");
        bad("hdd,fail_prob=2", "fail_prob");
        bad("hdd,fail_range=4MiB", "fail_range");
        bad("hdd,fail_range=2MiB-1MiB", "fail_range");
        bad("hdd,size=1GiB,fail_range=2GiB-3GiB", "fail_range");
        bad("flash,open_units=40", "open_units");
        bad("smr,band=0", "band");
        assert!(err("hdd,avg_seek=16ms").to_string().contains("avg_seek"));
    }

    #[test]
    fn canonical_form_round_trips() {
        let s = ModelSpec::parse("smr,cache=1GiB,scale=10,fail_range=1GiB-1GiB+4MiB").unwrap();
        let text = s.to_string();
        assert!(text.starts_with("smr,size=64GiB,"), "{text}");
        assert!(
            text.contains("cache=1GiB") && text.contains("scale=10"),
            "{text}"
        );
        let again = ModelSpec::parse(&text).unwrap();
        assert_eq!(again.to_string(), text);
        assert_eq!((again.settings, again.faults), (s.settings, s.faults));
    }

    #[test]
    fn table_lists_every_parameter_with_a_valid_default() {
        let rows = model_table();
        for m in MODELS {
            assert!(rows
                .iter()
                .any(|r| r.model == m.name && r.parameter == "size"));
        }
        let plain = |r: &&ModelParamRow| r.parameter != "fail_range" && r.unit != "preset";
        for r in rows.iter().filter(plain) {
            let def = MODELS
                .iter()
                .flat_map(|m| m.params())
                .chain(COMMON.iter())
                .find(|d| d.name == r.parameter)
                .unwrap();
            assert!(parse_value(def.kind, r.default).is_ok(), "{r:?}");
            assert!(!r.meaning.is_empty() && !r.unit.is_empty());
        }
        assert!(rows
            .iter()
            .any(|r| r.model == "smr" && r.parameter == "cache"));
        assert!(rows
            .iter()
            .any(|r| r.model == "all" && r.parameter == "fail_range"));
    }

    #[test]
    fn expectations_exist_for_every_model() {
        for m in MODELS {
            let e = ModelSpec::parse(m.name)
                .unwrap()
                .expectations(1 << 20)
                .unwrap();
            assert!(e.random_read_ms >= 0.0 && e.seq_read_outer_mbs >= e.seq_read_inner_mbs);
        }
    }

    #[test]
    fn scale_auto_is_resolved_from_the_models_shortest_request() {
        let at = |t: &str| {
            let s = ModelSpec::parse(t).unwrap();
            (s.settings.scale, s.auto_scale, s.to_string())
        };
        // An SMR disk's 107 µs cache writes, an HDD's 4 KiB reads from its buffer: 1.
        let (scale, auto, text) = at("smr,cache=256MiB,scale=auto");
        assert_eq!(scale, 1.0);
        assert_eq!(auto.unwrap().what, "random write");
        assert!(text.contains(",scale=1,"), "{text}");
        assert_eq!(at("hdd,scale=auto").0, 1.0);
        // Flash cards: their 0.37 / 0.60 / 2.23 ms random reads over 80 µs.
        assert_eq!(at("flash,card=lexar,scale=auto").0, 2.0);
        assert_eq!(at("flash,card=duracell,scale=auto").0, 2.0);
        assert_eq!(at("flash,card=transcend,scale=auto").0, 10.0);
        // The last word wins: a number after auto, auto after a number.
        assert_eq!(at("flash,card=duracell,scale=auto,scale=3").0, 3.0);
        assert!(at("flash,card=duracell,scale=auto,scale=3").1.is_none());
        assert_eq!(at("flash,card=duracell,scale=3,scale=auto").0, 2.0);
        // The canonical form parses back to the same scale, without `auto`.
        let (_, _, text) = at("flash,card=duracell,scale=auto");
        assert_eq!(ModelSpec::parse(&text).unwrap().settings.scale, 2.0);
        assert!(ModelSpec::parse("hdd,scale=automatic").is_err());
    }
}
