//! Writes a study back as TOML in the format it is read in (study.toml of a results
//! directory): the resolved study, with every parameter and stack field written out.

use crate::study::plan::file::Study;
use crate::study::Assignments;
use std::collections::BTreeMap;
use std::fmt::Write;

fn quote(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        k.to_string()
    } else {
        quote(k)
    }
}

fn set_table(out: &mut String, header: &str, set: &Assignments) {
    if set.is_empty() {
        return;
    }
    let _ = writeln!(out, "[{header}]");
    for (k, v) in set.pairs() {
        let _ = writeln!(out, "{} = {}", key(k), quote(v));
    }
}

fn devices_table(out: &mut String, header: &str, devices: &BTreeMap<String, String>) {
    if devices.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n[{header}]");
    for (k, v) in devices {
        let _ = writeln!(out, "{} = {}", key(k), quote(v));
    }
}

impl Study {
    /// The study as a study file; parsing it gives this study back.
    pub fn to_toml(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "name = {}", quote(&self.name));
        let _ = writeln!(o, "description = {}", quote(&self.description));
        let _ = writeln!(o, "repeats = {}", self.repeats);
        if let Some(m) = self.max_repeats {
            let _ = writeln!(o, "max_repeats = {m}");
        }
        if let Some(i) = self.interval {
            let _ = writeln!(o, "interval = {}", quote(&i.text()));
        }
        if let Some(n) = self.noise {
            let _ = writeln!(o, "noise = {}", quote(&n.text()));
        }
        if let Some(n) = &self.note {
            let _ = writeln!(o, "note = {}", quote(n));
        }
        if let Some(out) = &self.out {
            let _ = writeln!(o, "out = {}", quote(out));
        }
        if let Some(d) = &self.device {
            let _ = writeln!(o, "device = {}", quote(d));
        }
        let _ = writeln!(o, "monitor = {}", quote(&self.monitor.list()));
        let _ = writeln!(o, "monitor_interval = {}", quote(&self.monitor.interval()));
        if !self.workload_cpus.is_all() {
            let _ = writeln!(o, "workload_cpus = {}", quote(self.workload_cpus.name()));
        }
        if !self.pause.is_none() {
            let _ = writeln!(o, "pause = {}", quote(&self.pause.text()));
        }
        devices_table(&mut o, "devices", &self.devices);
        if !self.quick.is_empty() {
            let _ = writeln!(o, "\n[quick]");
            if let Some(d) = &self.quick.device {
                let _ = writeln!(o, "device = {}", quote(d));
            }
            if let Some(r) = self.quick.repeats {
                let _ = writeln!(o, "repeats = {r}");
            }
            if let Some(m) = self.quick.max_repeats {
                let _ = writeln!(o, "max_repeats = {m}");
            }
            if let Some(i) = self.quick.interval {
                let _ = writeln!(o, "interval = {}", quote(&i.text()));
            }
            if let Some(n) = &self.quick.note {
                let _ = writeln!(o, "note = {}", quote(n));
            }
            if let Some(p) = self.quick.pause {
                let _ = writeln!(o, "pause = {}", quote(&p.text()));
            }
            if !self.quick.stacks.is_empty() {
                let names = toml::Value::try_from(&self.quick.stacks).expect("names serialize");
                let _ = writeln!(o, "stacks = {names}");
            }
            set_table(&mut o, "quick.set", &self.quick.set);
            devices_table(&mut o, "quick.devices", &self.quick.devices);
        }
        for w in &self.workloads {
            let _ = writeln!(o, "\n[[workloads]]");
            let _ = writeln!(o, "name = {}", quote(&w.name));
            let _ = writeln!(o, "kind = {}", quote(&w.kind));
            if let Some(c) = &w.capacity {
                let v = toml::Value::try_from(c).expect("a capacity search serializes to TOML");
                let _ = writeln!(o, "capacity = {v}");
            }
            set_table(&mut o, "workloads.set", &w.set);
            set_table(&mut o, "workloads.quick", &w.quick);
        }
        for s in &self.stacks {
            let _ = writeln!(o, "\n[[stacks]]");
            let _ = writeln!(o, "name = {}", quote(&s.name));
            let table = toml::Value::try_from(s).expect("a stack spec serializes to TOML");
            if let toml::Value::Table(t) = table {
                for (k, v) in t.iter().filter(|(k, _)| *k != "name") {
                    let _ = writeln!(o, "{} = {v}", key(k));
                }
            }
        }
        o
    }
}
