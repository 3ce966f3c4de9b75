//! A study's pause between trials (`pause` in a study file, `[quick] pause` under `--quick`):
//! how long the host is left idle after a trial that ran before the next trial starts, so what
//! one trial leaves behind (writeback still going, page cache a hypervisor is taking back) does
//! not land in the next trial's timings. The wait ends early when the study is stopped.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The longest pause a study may ask for.
pub const MAX: Duration = Duration::from_secs(24 * 3600);

/// How often a pause looks at the stop flag: Ctrl-C ends a pause within this.
const LOOK: Duration = Duration::from_millis(100);

/// A pause between trials, whole milliseconds; zero (the default) is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pause(Duration);

impl Pause {
    /// `60s`, `500ms`, `2m`, `0s`: a duration from zero to [`MAX`], rounded to milliseconds.
    pub fn parse(text: &str) -> Result<Pause, String> {
        let s = crate::units::parse_duration(text).map_err(|e| e.to_string())?;
        if !(0.0..=MAX.as_secs_f64()).contains(&s) {
            return Err(format!(
                "'{text}' is not a pause between trials; expected 0s to {} h",
                MAX.as_secs() / 3600
            ));
        }
        Ok(Pause(Duration::from_millis((s * 1e3).round() as u64)))
    }

    /// No pause.
    pub fn is_none(&self) -> bool {
        self.0.is_zero()
    }

    pub fn duration(&self) -> Duration {
        self.0
    }

    /// As a study file writes it: whole seconds as `60s`, else milliseconds (`1500ms`).
    pub fn text(&self) -> String {
        let ms = self.0.as_millis();
        if ms % 1000 == 0 {
            format!("{}s", ms / 1000)
        } else {
            format!("{ms}ms")
        }
    }
}

impl Serialize for Pause {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

impl<'de> Deserialize<'de> for Pause {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Pause, D::Error> {
        let text = String::deserialize(d)?;
        Pause::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// How long is left of `pause` after a trial that ended at `ended`, at `now`: zero once it
/// has passed.
pub fn left(pause: Pause, ended: Instant, now: Instant) -> Duration {
    (ended + pause.0).saturating_duration_since(now)
}

/// Waits until `until`, looking at `stop` every 100 ms: true when the time came, false when
/// the study was stopped first (at once if it already was).
pub fn wait(until: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= until {
            return true;
        }
        std::thread::sleep((until - now).min(LOOK));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_writes_back() {
        assert_eq!(
            Pause::parse("60s").unwrap().duration(),
            Duration::from_secs(60)
        );
        assert_eq!(Pause::parse("2m").unwrap().text(), "120s");
        assert_eq!(Pause::parse("1500ms").unwrap().text(), "1500ms");
        assert_eq!(Pause::parse("0.25").unwrap().text(), "250ms");
        assert!(Pause::parse("0s").unwrap().is_none());
        assert!(Pause::default().is_none());
        for t in ["60s", "1500ms", "0s"] {
            let p = Pause::parse(t).unwrap();
            assert_eq!(Pause::parse(&p.text()).unwrap(), p, "{t}");
        }
    }

    #[test]
    fn refuses_what_is_no_pause() {
        for bad in ["-1s", "25h", "soon", "5 parsecs"] {
            let e = Pause::parse(bad).unwrap_err();
            assert!(e.contains(bad), "{bad}: {e}");
        }
    }

    #[test]
    fn what_is_left_counts_from_the_trial_s_end() {
        let p = Pause::parse("60s").unwrap();
        let end = Instant::now();
        assert_eq!(left(p, end, end), Duration::from_secs(60));
        assert_eq!(
            left(p, end, end + Duration::from_secs(45)),
            Duration::from_secs(15)
        );
        assert_eq!(left(p, end, end + Duration::from_secs(61)), Duration::ZERO);
        assert_eq!(left(Pause::default(), end, end), Duration::ZERO);
    }

    #[test]
    fn a_stopped_study_does_not_wait() {
        // An hour's wait returns at once when the study is already stopped; a broken wait
        // would hang the test rather than pass it.
        let stop = AtomicBool::new(true);
        assert!(!wait(Instant::now() + Duration::from_secs(3600), &stop));
        let go = AtomicBool::new(false);
        assert!(wait(Instant::now(), &go));
    }

    #[test]
    fn a_pause_ends_when_the_study_is_stopped_during_it() {
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                tx.send(()).unwrap();
                wait(Instant::now() + Duration::from_secs(3600), &stop)
            })
        };
        rx.recv().unwrap();
        stop.store(true, Ordering::Relaxed);
        assert!(!waiter.join().unwrap(), "stopped, not waited out");
    }
}
