//! What `device characterize` found: the model it chose, each parameter it identified with the
//! method and figure behind it, each it could not with the probe that would be needed, the
//! twin as an `emu:` spec, and the twin as a preset file (the spec, with every source cited in
//! comments) that `--target`, studies and `iotrial list models` accept.

use crate::emu::find_model;
use serde::Serialize;

/// A parameter identified.
#[derive(Debug, Clone, Serialize)]
pub struct Found {
    pub name: &'static str,
    /// As written in the spec (`7212.4`, `8.512ms`, `16MiB`).
    pub value: String,
    /// The method and the figures it rests on.
    pub how: String,
}

/// A parameter not identified.
#[derive(Debug, Clone, Serialize)]
pub struct Unknown {
    pub name: &'static str,
    /// Why, and the probe that would identify it.
    pub why: String,
    /// The model's default, which a twin built from the spec uses.
    pub default: String,
}

/// A device's twin.
#[derive(Debug, Clone, Serialize)]
pub struct Twin {
    /// `hdd`, `smr` or `flash`.
    pub model: &'static str,
    /// Why this model.
    pub model_why: String,
    pub found: Vec<Found>,
    pub unknown: Vec<Unknown>,
}

impl Twin {
    pub fn new(model: &'static str, why: impl Into<String>) -> Twin {
        Twin {
            model,
            model_why: why.into(),
            found: Vec::new(),
            unknown: Vec::new(),
        }
    }

    /// Records `name` = `value`, found by `how`.
    pub fn set(&mut self, name: &'static str, value: impl Into<String>, how: impl Into<String>) {
        self.found.retain(|f| f.name != name);
        self.unknown.retain(|u| u.name != name);
        self.found.push(Found {
            name,
            value: value.into(),
            how: how.into(),
        });
    }

    /// Records that `name` was not identified, and why.
    pub fn unknown(&mut self, name: &'static str, why: impl Into<String>) {
        if self.found.iter().any(|f| f.name == name) || self.unknown.iter().any(|u| u.name == name)
        {
            return;
        }
        self.unknown.push(Unknown {
            name,
            why: why.into(),
            default: String::new(),
        });
    }

    /// The value found for `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.found
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.value.as_str())
    }

    /// How the value found for `name` was measured.
    pub fn how(&self, name: &str) -> Option<&str> {
        self.found
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.how.as_str())
    }

    /// Lists every parameter of the model that nothing identified, with its default.
    pub fn close(&mut self) {
        let Some(m) = find_model(self.model) else {
            return;
        };
        for d in m.params() {
            if !self.found.iter().any(|f| f.name == d.name) {
                self.unknown(d.name, "no probe of `device characterize` measures it");
            }
        }
        for u in &mut self.unknown {
            if let Some(d) = m.params().find(|d| d.name == u.name) {
                u.default = d.default.to_string();
            }
        }
        // The spec's order: the model's.
        let order = |n: &str| m.params().position(|d| d.name == n).unwrap_or(usize::MAX);
        self.found.sort_by_key(|f| order(f.name));
        self.unknown.sort_by_key(|u| order(u.name));
    }

    /// The twin as a device spec: the model and every parameter identified (those not
    /// identified take the model's defaults, listed in [`Twin::unknown`]).
    pub fn spec(&self) -> String {
        let mut s = format!("emu:{}", self.model);
        for f in &self.found {
            s.push_str(&format!(",{}={}", f.name, f.value));
        }
        s
    }

    /// The twin as a preset file: comments citing each value's source, then the spec.
    pub fn preset_file(&self, device: &str, when: &str) -> String {
        let mut t = String::new();
        t.push_str(&format!(
            "# Twin of {device}, from `iotrial device characterize` ({when}).\n"
        ));
        t.push_str(&format!("# Model {}: {}\n#\n", self.model, self.model_why));
        t.push_str("# Identified (value: how it was measured):\n");
        for f in &self.found {
            t.push_str(&format!("#   {} = {}: {}\n", f.name, f.value, f.how));
        }
        if !self.unknown.is_empty() {
            t.push_str(
                "#\n# Not identified (the model's default applies; what would identify it):\n",
            );
            for u in &self.unknown {
                t.push_str(&format!(
                    "#   {} (default {}): {}\n",
                    u.name, u.default, u.why
                ));
            }
        }
        t.push_str(&self.spec());
        t.push('\n');
        t
    }
}

/// A size as a spec writes it, rounded to whole 4 KiB.
pub fn size_text(bytes: f64) -> String {
    let b = ((bytes / 4096.0).round().max(1.0) as u64) * 4096;
    crate::units::Size(b).to_string()
}

/// `n` as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 21st.
pub fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// A duration in seconds as a spec writes it, in ms with four decimals.
pub fn ms_text(s: f64) -> String {
    format!("{}ms", crate::units::trim_float((s * 1e7).round() / 1e4))
}

/// A rate in bytes per second as a spec writes it, MB/s with two decimals.
pub fn mbs_text(bps: f64) -> String {
    crate::units::trim_float((bps / 1e4).round() / 100.0)
}
