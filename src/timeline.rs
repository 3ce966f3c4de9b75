//! A trial's timeline: one time origin for everything a trial records (samples, time series,
//! monitor rows), and the phases marked on it as they begin and end. The trial marks the
//! phases; the engine and the monitors read which phase a moment fell in, so every row carries
//! its phase. Shared between threads; marking is rare and never in an I/O hot path.

use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::time::Instant;

/// One phase as it happened: name, kind (`stream` or an action: `sync`, `unmount`, ...), and
/// its start and end in seconds from the origin (end `None` while it runs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseSpan {
    pub name: String,
    pub kind: String,
    pub start_s: f64,
    pub end_s: Option<f64>,
}

/// Monitored time outside every phase: before the first phase began, or after the last ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outside {
    Before,
    After,
}

/// Which part of a trial a moment or a monitor interval belongs to: one of its phases, or the
/// monitored time before the first phase or after the last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Span {
    Phase(String),
    Outside(Outside),
}

impl Span {
    /// The phase's name; `None` outside every phase.
    pub fn phase(&self) -> Option<&str> {
        match self {
            Span::Phase(p) => Some(p),
            Span::Outside(_) => None,
        }
    }

    /// Before the first phase or after the last; `None` in a phase.
    pub fn outside(&self) -> Option<Outside> {
        match self {
            Span::Phase(_) => None,
            Span::Outside(o) => Some(*o),
        }
    }
}

/// The origin and the phases of one trial.
#[derive(Debug)]
pub struct Timeline {
    origin: Instant,
    spans: Mutex<Vec<PhaseSpan>>,
}

impl Timeline {
    /// A timeline whose origin is now.
    pub fn start() -> Timeline {
        Timeline::from(Instant::now())
    }

    /// A timeline with the given origin.
    pub fn from(origin: Instant) -> Timeline {
        Timeline {
            origin,
            spans: Mutex::new(Vec::new()),
        }
    }

    /// The origin.
    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// Seconds since the origin.
    pub fn now_s(&self) -> f64 {
        self.origin.elapsed().as_secs_f64()
    }

    /// Seconds from the origin to `t` (negative before it).
    pub fn seconds_at(&self, t: Instant) -> f64 {
        match t.checked_duration_since(self.origin) {
            Some(d) => d.as_secs_f64(),
            None => -(self.origin.duration_since(t).as_secs_f64()),
        }
    }

    fn spans(&self) -> std::sync::MutexGuard<'_, Vec<PhaseSpan>> {
        self.spans.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the start of phase `name` of `kind` now, ending the one that runs.
    pub fn begin(&self, name: &str, kind: &str) {
        let now = self.now_s();
        let mut spans = self.spans();
        if let Some(last) = spans.last_mut() {
            last.end_s.get_or_insert(now);
        }
        spans.push(PhaseSpan {
            name: name.to_string(),
            kind: kind.to_string(),
            start_s: now,
            end_s: None,
        });
    }

    /// Marks the end of the phase that runs, if any.
    pub fn end(&self) {
        let now = self.now_s();
        if let Some(last) = self.spans().last_mut() {
            last.end_s.get_or_insert(now);
        }
    }

    /// The phase running now.
    pub fn current(&self) -> Option<String> {
        self.spans()
            .last()
            .filter(|s| s.end_s.is_none())
            .map(|s| s.name.clone())
    }

    /// The phase that was running `t_s` seconds after the origin (the later one at a boundary).
    pub fn phase_at(&self, t_s: f64) -> Option<String> {
        self.spans()
            .iter()
            .rev()
            .find(|s| s.start_s <= t_s && s.end_s.is_none_or(|e| t_s <= e))
            .map(|s| s.name.clone())
    }

    /// The part of the trial `t_s` seconds after the origin fell in: the phase running then
    /// (the later one at a boundary), else before the first phase (or while none has begun),
    /// else after the last.
    pub fn span_at(&self, t_s: f64) -> Span {
        if let Some(p) = self.phase_at(t_s) {
            return Span::Phase(p);
        }
        match self.spans().first() {
            Some(first) if first.start_s <= t_s => Span::Outside(Outside::After),
            _ => Span::Outside(Outside::Before),
        }
    }

    /// The phases other than `except` that ran during `(t0_s, t1_s]`, in order.
    pub fn phases_between(&self, t0_s: f64, t1_s: f64, except: Option<&str>) -> Vec<String> {
        self.spans()
            .iter()
            .filter(|s| s.start_s < t1_s && s.end_s.is_none_or(|e| e > t0_s))
            .filter(|s| Some(s.name.as_str()) != except)
            .map(|s| s.name.clone())
            .collect()
    }

    /// Every phase so far, in order.
    pub fn phases(&self) -> Vec<PhaseSpan> {
        self.spans().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn phases_follow_each_other_and_tag_moments() {
        let origin = Instant::now() - Duration::from_secs(10);
        let t = Timeline::from(origin);
        assert_eq!(t.current(), None);
        t.begin("fill", "stream");
        assert_eq!(t.current().as_deref(), Some("fill"));
        t.begin("sync", "sync");
        t.end();
        assert_eq!(t.current(), None);
        let p = t.phases();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].end_s, Some(p[1].start_s));
        assert!(p[1].end_s.unwrap() >= p[1].start_s);
        assert_eq!(t.phase_at(p[0].start_s).as_deref(), Some("fill"));
        assert_eq!(t.phase_at(p[1].end_s.unwrap()).as_deref(), Some("sync"));
        assert_eq!(t.phase_at(p[1].end_s.unwrap() + 60.0), None);
        assert!(t.seconds_at(origin - Duration::from_secs(1)) < 0.0);
        // An interval from before the first phase to after the last overlapped both; one
        // inside the second, only it.
        let (a, b) = (p[0].start_s, p[1].end_s.unwrap());
        assert_eq!(t.phases_between(a - 1.0, b + 1.0, None), ["fill", "sync"]);
        assert_eq!(t.phases_between(a - 1.0, b + 1.0, Some("sync")), ["fill"]);
        assert!(t.phases_between(b + 1.0, b + 2.0, None).is_empty());
        assert_eq!(t.span_at(a - 1.0), Span::Outside(Outside::Before));
        assert_eq!(t.span_at(a).phase(), Some("fill"));
        assert_eq!(t.span_at(b + 1.0).outside(), Some(Outside::After));
        assert_eq!(
            Timeline::start().span_at(0.0),
            Span::Outside(Outside::Before)
        );
    }
}
