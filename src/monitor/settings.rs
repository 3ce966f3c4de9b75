//! Which monitors run and how often: `--monitor diskstats,threads,memory,trace|all|none` and
//! `--monitor-interval` on `iotrial run`, and the study file's `monitor` and
//! `monitor_interval` keys, all read by the one parser here.

use crate::cause::{Cause, HasCause};
use crate::units::{parse_duration, Duration};
use serde::{Deserialize, Serialize};

/// One monitor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Monitor {
    /// iostat -x figures of every block device of the stack.
    Diskstats,
    /// CPU of every thread on the host, kernel threads included.
    Threads,
    /// Dirty and writeback page-cache figures.
    Memory,
    /// Block requests traced and classified (root).
    Trace,
}

/// Every monitor, in the order they are listed.
pub const ALL: [Monitor; 4] = [
    Monitor::Diskstats,
    Monitor::Threads,
    Monitor::Memory,
    Monitor::Trace,
];

/// The monitors that run unless asked otherwise.
pub const DEFAULT: &str = "diskstats,threads,memory";
/// The default interval.
pub const DEFAULT_INTERVAL: &str = "1s";
/// Shortest and longest interval, seconds.
const MIN_INTERVAL_S: f64 = 0.01;
const MAX_INTERVAL_S: f64 = 3600.0;

const ALLOWED: &str = "allowed: a comma list of diskstats, threads, memory, trace; or all; or none";

impl Monitor {
    pub fn name(self) -> &'static str {
        match self {
            Monitor::Diskstats => "diskstats",
            Monitor::Threads => "threads",
            Monitor::Memory => "memory",
            Monitor::Trace => "trace",
        }
    }
}

/// The monitors asked for could not be read, or cannot run here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("unknown monitor '{0}'; {ALLOWED}")]
    Unknown(String),
    #[error("'{0}' names no monitor; {ALLOWED}")]
    Empty(String),
    #[error("{0}; allowed: 10ms to 1h (e.g. 1s, 500ms)")]
    Interval(String),
    #[error("trace needs root (it reads block requests from tracefs); {ALLOWED}")]
    TraceNeedsRoot,
}

impl SettingsError {
    /// The study file key the error is about: `monitor` or `monitor_interval`.
    pub fn key(&self) -> &'static str {
        match self {
            SettingsError::Interval(_) => "monitor_interval",
            _ => "monitor",
        }
    }
}

impl HasCause for SettingsError {
    fn why(&self) -> Cause {
        Cause::Input
    }
}

/// The monitors of a trial and their interval; written (in a study's manifest) as the text
/// the parser reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Written", into = "Written")]
pub struct Settings {
    /// Distinct, in [`ALL`]'s order.
    pub monitors: Vec<Monitor>,
    pub interval_s: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings::parse(DEFAULT, DEFAULT_INTERVAL).expect("the defaults parse")
    }
}

impl Settings {
    /// Reads a monitor list (`diskstats,threads`, `all`, `none`) and an interval (`1s`).
    pub fn parse(list: &str, interval: &str) -> Result<Settings, SettingsError> {
        Ok(Settings {
            monitors: parse_list(list)?,
            interval_s: parse_interval(interval)?,
        })
    }

    /// Whether `m` runs.
    pub fn has(&self, m: Monitor) -> bool {
        self.monitors.contains(&m)
    }

    /// Refuses what this process cannot run: the trace without root.
    pub fn check_host(&self) -> Result<(), SettingsError> {
        if self.has(Monitor::Trace) && !rustix::process::geteuid().is_root() {
            return Err(SettingsError::TraceNeedsRoot);
        }
        Ok(())
    }

    /// The list as written back (`diskstats,threads,memory`, `none`).
    pub fn list(&self) -> String {
        if self.monitors.is_empty() {
            return "none".into();
        }
        self.names().join(",")
    }

    /// The names of the monitors that run.
    pub fn names(&self) -> Vec<String> {
        self.monitors.iter().map(|m| m.name().to_string()).collect()
    }

    /// The interval as written back (`1s`, `250ms`).
    pub fn interval(&self) -> String {
        Duration(self.interval_s).to_string()
    }
}

/// [`Settings`] as written: `{"monitors": "diskstats,threads", "interval": "1s"}`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    monitors: String,
    interval: String,
}

impl TryFrom<Written> for Settings {
    type Error = SettingsError;
    fn try_from(w: Written) -> Result<Self, Self::Error> {
        Settings::parse(&w.monitors, &w.interval)
    }
}

impl From<Settings> for Written {
    fn from(s: Settings) -> Self {
        Written {
            monitors: s.list(),
            interval: s.interval(),
        }
    }
}

fn parse_list(list: &str) -> Result<Vec<Monitor>, SettingsError> {
    let mut out = Vec::new();
    let names: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    if names.is_empty() {
        return Err(SettingsError::Empty(list.to_string()));
    }
    for n in names {
        match n {
            "all" => out.extend(ALL),
            "none" => {}
            _ => match ALL.iter().find(|m| m.name() == n) {
                Some(m) => out.push(*m),
                None => return Err(SettingsError::Unknown(n.to_string())),
            },
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn parse_interval(text: &str) -> Result<f64, SettingsError> {
    let s = parse_duration(text).map_err(|e| SettingsError::Interval(e.0))?;
    if !(MIN_INTERVAL_S - 1e-12..=MAX_INTERVAL_S + 1e-9).contains(&s) {
        return Err(SettingsError::Interval(format!("'{text}' is out of range")));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_read_in_one_order() {
        let s = Settings::parse("memory, diskstats,memory", "250ms").unwrap();
        assert_eq!(s.monitors, vec![Monitor::Diskstats, Monitor::Memory]);
        assert_eq!(
            (s.list(), s.interval()),
            ("diskstats,memory".into(), "250ms".into())
        );
        assert_eq!(Settings::parse("all", "1s").unwrap().monitors, ALL.to_vec());
        assert!(Settings::parse("none", "1s").unwrap().monitors.is_empty());
        assert_eq!(Settings::parse("none", "1s").unwrap().list(), "none");
        assert_eq!(Settings::default().list(), DEFAULT);
        assert_eq!(Settings::default().interval_s, 1.0);
    }

    #[test]
    fn bad_input_names_what_is_allowed() {
        let e = Settings::parse("diskstat", "1s").unwrap_err().to_string();
        assert!(
            e.contains("'diskstat'") && e.contains("diskstats, threads, memory, trace"),
            "{e}"
        );
        assert!(Settings::parse(" , ", "1s")
            .unwrap_err()
            .to_string()
            .contains("names no monitor"));
        for bad in ["5ms", "2h", "fast", "-1s"] {
            let e = Settings::parse("all", bad).unwrap_err();
            assert!(matches!(e, SettingsError::Interval(_)), "{bad}");
            assert!(e.to_string().contains("10ms to 1h"), "{e}");
        }
        assert!(Settings::parse("all", "10ms").is_ok() && Settings::parse("all", "1h").is_ok());
        assert_eq!(SettingsError::TraceNeedsRoot.why(), Cause::Input);
    }
}
