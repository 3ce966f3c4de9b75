//! Parameters of workloads and device models: each declares a list of [`ParamSpec`]s (name,
//! kind, default, unit, meaning); user overrides (`--set k=v`, study files, `emu:` specs) are
//! checked against it and resolved into [`Params`], where every value is known and typed.

use crate::units::{self, Duration, Size};
use serde_json::{json, Value as Json};
use std::fmt;

/// What kind of quantity a parameter holds, which decides how it is parsed and printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bytes; accepts `4096`, `1MiB`, `1M`.
    Size,
    /// Bytes as fio reads them: every suffix a power of 1024 (`4k` = 4096, `1m`, `8g`).
    FioSize,
    /// Seconds; accepts `5s`, `250ms`.
    Duration,
    /// A real number.
    Float,
    /// A whole number.
    Count,
    /// `true` / `false` (also `yes`/`no`, `1`/`0`).
    Bool,
    /// One of a fixed list of words (fio's `rw=randread`).
    Choice(&'static [&'static str]),
    /// Free text (a policy's name, extra arguments of a tool).
    Text,
}

impl Kind {
    /// The unit a user reads in `iotrial list`, unless a parameter names its own.
    pub const fn unit(self) -> &'static str {
        match self {
            Kind::Size => "bytes",
            Kind::FioSize => "bytes (4k = 4096)",
            Kind::Choice(_) => "word",
            Kind::Duration => "seconds",
            Kind::Float => "number",
            Kind::Count => "count",
            Kind::Bool => "true/false",
            Kind::Text => "text",
        }
    }
}

/// One parameter a workload or a device model accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: Kind,
    /// Default as a user would type it.
    pub default: &'static str,
    /// Unit a user reads in `iotrial list` (the kind's, unless set with [`ParamSpec::in_unit`]).
    pub unit: &'static str,
    /// What it means.
    pub help: &'static str,
}

impl ParamSpec {
    /// A parameter in the unit of its kind.
    pub const fn new(
        name: &'static str,
        kind: Kind,
        default: &'static str,
        help: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            kind,
            default,
            unit: kind.unit(),
            help,
        }
    }

    /// The same parameter read in `unit` (e.g. `MB/s` for a float).
    pub const fn in_unit(self, unit: &'static str) -> Self {
        ParamSpec { unit, ..self }
    }
}

/// A typed parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Size(u64),
    Duration(f64),
    Float(f64),
    Count(u64),
    Bool(bool),
    Text(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Size(b) => write!(f, "{}", Size(b)),
            Value::Duration(s) => write!(f, "{}", Duration(s)),
            Value::Float(x) => write!(f, "{}", units::trim_float(x)),
            Value::Count(n) => write!(f, "{n}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Text(ref t) => f.write_str(t),
        }
    }
}

impl Value {
    /// The value as JSON in base units (bytes, seconds).
    pub fn to_json(&self) -> Json {
        match self {
            Value::Size(b) | Value::Count(b) => json!(b),
            Value::Duration(x) | Value::Float(x) => json!(x),
            Value::Bool(b) => json!(b),
            Value::Text(t) => json!(t),
        }
    }
}

/// A parameter could not be resolved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    #[error("unknown parameter '{name}' for workload {workload}; allowed: {allowed}")]
    Unknown {
        workload: String,
        name: String,
        allowed: String,
    },
    #[error("parameter {name}: {message}")]
    Invalid { name: String, message: String },
    #[error("'{0}' is not of the form key=value")]
    Malformed(String),
}

impl ParamError {
    /// Shorthand for an [`ParamError::Invalid`] about `name`.
    pub fn invalid(name: &str, message: impl Into<String>) -> Self {
        ParamError::Invalid {
            name: name.to_string(),
            message: message.into(),
        }
    }

    /// The parameter an [`ParamError::Invalid`] is about.
    pub fn name(&self) -> Option<String> {
        match self {
            ParamError::Invalid { name, .. } => Some(name.clone()),
            _ => None,
        }
    }

    /// What is wrong, with the parameter's name but not the word "parameter"
    /// (`iodepth: 8 needs ...`).
    pub fn message(&self) -> String {
        match self {
            ParamError::Invalid { name, message } => format!("{name}: {message}"),
            other => other.to_string(),
        }
    }
}

/// Parses `text` as a value of `kind`.
pub fn parse_value(kind: Kind, text: &str) -> Result<Value, String> {
    let t = text.trim();
    match kind {
        Kind::Size => units::parse_size(t).map(Value::Size).map_err(|e| e.0),
        Kind::FioSize => units::parse_fio_size(t).map(Value::Size).map_err(|e| e.0),
        Kind::Choice(words) => words
            .iter()
            .find(|w| **w == t)
            .map(|w| Value::Text((*w).to_string()))
            .ok_or_else(|| format!("'{t}' is not one of {}", words.join(", "))),
        Kind::Duration => units::parse_duration(t)
            .map(Value::Duration)
            .map_err(|e| e.0),
        Kind::Float => t
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Value::Float)
            .ok_or_else(|| format!("'{t}' is not a number")),
        Kind::Count => t
            .replace('_', "")
            .parse::<u64>()
            .map(Value::Count)
            .map_err(|_| format!("'{t}' is not a whole number >= 0")),
        Kind::Bool => match t.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" | "on" => Ok(Value::Bool(true)),
            "false" | "no" | "0" | "off" => Ok(Value::Bool(false)),
            _ => Err(format!("'{t}' is not true or false")),
        },
        Kind::Text => Ok(Value::Text(t.to_string())),
    }
}

/// Splits `key=value`.
pub fn split_assignment(text: &str) -> Result<(String, String), ParamError> {
    let (k, v) = text
        .split_once('=')
        .ok_or_else(|| ParamError::Malformed(text.to_string()))?;
    let k = k.trim();
    if k.is_empty() {
        return Err(ParamError::Malformed(text.to_string()));
    }
    Ok((k.to_string(), v.trim().to_string()))
}

/// Parameters every workload takes, besides its own: a power cut of the stack's emulated
/// devices during one of its stream phases. Present in [`Params`] only when given, so a
/// trial without a cut records none of them.
pub static COMMON: &[ParamSpec] = &[
    ParamSpec::new(
        "powercut",
        Kind::Text,
        "",
        "cut the power of the stack's emulated devices during a stream phase: TIME into it (12s), after:N writes the devices receive in it, or random:FROM-TO (a time drawn from the seed and the repeat, so K repeats give K cuts); empty: no cut",
    )
    .in_unit("TIME | after:N | random:FROM-TO"),
    ParamSpec::new(
        "powercut_torn",
        Kind::Choice(&["torn", "whole", "none"]),
        "torn",
        "what the cut does to a multi-sector write a device is executing: torn at a 4 KiB sector boundary drawn from the seed, whole, or none of it",
    ),
    ParamSpec::new(
        "powercut_phase",
        Kind::Text,
        "",
        "the stream phase the cut comes in; empty: the first one that writes",
    ),
];

/// Every parameter of one workload, resolved, in the workload's declaration order.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    entries: Vec<(&'static str, Value)>,
}

impl Params {
    /// Resolves defaults plus `overrides` (applied in order; later wins) against `specs`.
    pub fn resolve(
        workload: &str,
        specs: &'static [ParamSpec],
        overrides: &[(String, String)],
    ) -> Result<Params, ParamError> {
        let mut params = Params::defaults(specs);
        for (k, text) in overrides {
            let Some(i) = specs.iter().position(|s| s.name == k.as_str()) else {
                let Some(c) = COMMON.iter().find(|s| s.name == k.as_str()) else {
                    return Err(ParamError::Unknown {
                        workload: workload.to_string(),
                        name: k.clone(),
                        allowed: specs
                            .iter()
                            .chain(COMMON)
                            .map(|s| s.name)
                            .collect::<Vec<_>>()
                            .join(", "),
                    });
                };
                let v = parse_value(c.kind, text).map_err(|m| ParamError::invalid(k, m))?;
                params.entries.retain(|(n, _)| *n != c.name);
                params.entries.push((c.name, v));
                continue;
            };
            let v = parse_value(specs[i].kind, text).map_err(|m| ParamError::invalid(k, m))?;
            params.entries[i].1 = v;
        }
        Ok(params)
    }

    /// The defaults of `specs`. Panics on an invalid built-in default, which is a bug in the
    /// declaration.
    pub fn defaults<'a>(specs: impl IntoIterator<Item = &'a ParamSpec>) -> Params {
        let entries = specs
            .into_iter()
            .map(|s| {
                let v = parse_value(s.kind, s.default)
                    .unwrap_or_else(|e| panic!("built-in default of {} is invalid: {e}", s.name));
                (s.name, v)
            })
            .collect();
        Params { entries }
    }

    /// Replaces the value of `name`; false when no such parameter is declared.
    pub fn set(&mut self, name: &str, value: Value) -> bool {
        match self.entries.iter_mut().find(|(n, _)| *n == name) {
            Some(e) => {
                e.1 = value;
                true
            }
            None => false,
        }
    }

    /// Every (name, value), in declaration order.
    pub fn entries(&self) -> &[(&'static str, Value)] {
        &self.entries
    }

    fn get(&self, name: &str) -> Value {
        self.entries
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("parameter {name} is not declared"))
    }

    /// A size or count parameter.
    pub fn u64(&self, name: &str) -> u64 {
        match self.get(name) {
            Value::Size(v) | Value::Count(v) => v,
            other => panic!("parameter {name} is {other:?}, not an integer"),
        }
    }

    /// A duration (seconds) or float parameter.
    pub fn f64(&self, name: &str) -> f64 {
        match self.get(name) {
            Value::Duration(v) | Value::Float(v) => v,
            Value::Size(v) | Value::Count(v) => v as f64,
            other => panic!("parameter {name} is {other:?}, not a number"),
        }
    }

    /// A parameter as text (a [`COMMON`] one when it was given, any declared one), `None` when
    /// there is none of that name.
    pub fn given_text(&self, name: &str) -> Option<String> {
        self.entries
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
    }

    /// A text parameter.
    pub fn text(&self, name: &str) -> String {
        match self.get(name) {
            Value::Text(t) => t,
            other => panic!("parameter {name} is {other:?}, not text"),
        }
    }

    /// A boolean parameter.
    pub fn bool(&self, name: &str) -> bool {
        match self.get(name) {
            Value::Bool(b) => b,
            other => panic!("parameter {name} is {other:?}, not a bool"),
        }
    }

    /// Every parameter as `name -> value` JSON, in base units.
    pub fn to_json(&self) -> Json {
        let mut m = serde_json::Map::new();
        for (n, v) in &self.entries {
            m.insert((*n).to_string(), v.to_json());
        }
        Json::Object(m)
    }

    /// Every parameter as `name=value` in the form a user types (for study files and `--set`).
    pub fn assignments(&self) -> Vec<(String, String)> {
        self.entries
            .iter()
            .map(|(n, v)| ((*n).to_string(), v.to_string()))
            .collect()
    }

    /// Reads parameters back from a result.json `params` object (base units), ignoring unknown
    /// keys; the [`COMMON`] ones given there too.
    pub fn overrides_from_json(specs: &[ParamSpec], params: &Json) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for s in specs.iter().chain(COMMON) {
            if let Some(v) = params.get(s.name) {
                let text = match v {
                    Json::Bool(b) => b.to_string(),
                    Json::Number(n) => n.to_string(),
                    Json::String(t) => t.clone(),
                    _ => continue,
                };
                out.push((s.name.to_string(), text));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static SPECS: &[ParamSpec] = &[
        ParamSpec::new("io_size", Kind::Size, "1MiB", ""),
        ParamSpec::new("window", Kind::Duration, "5s", "").in_unit("s"),
    ];

    #[test]
    fn defaults_and_overrides() {
        let p = Params::resolve("x", SPECS, &[]).unwrap();
        assert_eq!(p.u64("io_size"), 1 << 20);
        assert_eq!((SPECS[0].unit, SPECS[1].unit), ("bytes", "s"));
        let p = Params::resolve("x", SPECS, &[("window".into(), "250ms".into())]).unwrap();
        assert_eq!(p.f64("window"), 0.25);
        let round = Params::overrides_from_json(SPECS, &p.to_json());
        assert_eq!(Params::resolve("x", SPECS, &round).unwrap(), p);
    }

    #[test]
    fn unknown_and_invalid() {
        let e = Params::resolve("x", SPECS, &[("iosize".into(), "1".into())]).unwrap_err();
        assert!(e.to_string().contains("allowed: io_size, window"), "{e}");
        let e = Params::resolve("x", SPECS, &[("io_size".into(), "big".into())]).unwrap_err();
        assert!(e.to_string().starts_with("parameter io_size:"), "{e}");
    }
}
