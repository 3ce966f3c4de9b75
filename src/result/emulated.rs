//! The statistics of a trial's emulated devices as result.json carries them under
//! `stack.emulated` (one object per device, written by its server): the model, the time scale,
//! the service time the model gave the requests and how late the replies went out. The report
//! shows them next to the device, and warns when replies were late enough to matter: judged on
//! the monitored time (the device's `monitor.late_seconds`) where its server's per-second series
//! ran, so provisioning (mkfs, the layout) neither hides nor makes a trial's lateness.

use super::monitor::LateSeconds;
use serde::Deserialize;
use serde_json::Value as Json;

/// A reply lateness above this share of the mean service time is worth a warning: the
/// device then ran measurably slower than its model.
pub const LATE_SHARE_WARNING: f64 = 0.01;

/// ... and the lateness added up over the monitored time to at least this much per second
/// (µs/s, 0.1% of the time): below it, a device used rarely (a filesystem's log written a few
/// times a minute) cannot move any of the trial's figures by more than 0.1%, however late its
/// few replies were beside their short service time.
pub const LATE_TIME_WARNING_US_PER_S: f64 = 1_000.0;

/// One emulated device of a trial.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EmulatedDevice {
    /// The model (`hdd`).
    pub model: String,
    /// The block device it was served as (`loop3`); absent in results before it was kept.
    #[serde(default)]
    pub device: Option<String>,
    /// Modeled delays were divided by this.
    #[serde(default = "one")]
    pub scale: f64,
    pub server: ServerStats,
}

fn one() -> f64 {
    1.0
}

/// The server's figures, in real time (µs).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct ServerStats {
    /// Mean lateness of a reply after its due time.
    pub late_us_mean: f64,
    pub late_us_max: f64,
    /// Mean service time the model gave a request (absent in results before it was counted).
    #[serde(default)]
    pub service_us_mean: Option<ServiceMeans>,
}

/// Mean service time by request kind, µs of real time.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct ServiceMeans {
    pub all: f64,
}

impl EmulatedDevice {
    /// The devices in a stack as built (`stack.emulated`); entries that do not read as one
    /// (a server that failed to answer) are left out.
    pub fn all_in(stack: &Json) -> Vec<EmulatedDevice> {
        stack["emulated"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| EmulatedDevice::deserialize(d).ok())
            .collect()
    }

    /// Mean lateness as a share of the mean service time over the whole run (provisioning
    /// included), when both are known.
    pub fn late_share(&self) -> Option<f64> {
        let service = self.server.service_us_mean.as_ref()?.all;
        (service > 0.0).then(|| self.server.late_us_mean / service)
    }

    /// This device's figures over the monitored time among `late` (`monitor.late_seconds`),
    /// when its server's series ran and had replies then.
    pub fn monitored<'a>(&self, late: &'a [LateSeconds]) -> Option<&'a LateSeconds> {
        let name = self.device.as_deref()?;
        late.iter().find(|l| l.device == name && l.replies > 0)
    }

    /// Mean lateness as a share of the mean service time over the monitored time, where the
    /// device's series covers it (the whole run's service time where the series predates its
    /// service column: provisioning's quick requests make that share larger, not smaller);
    /// else over the whole run.
    pub fn late_share_in(&self, late: &[LateSeconds]) -> Option<f64> {
        let Some(m) = self.monitored(late) else {
            return self.late_share();
        };
        let service = m
            .service_us_mean
            .or_else(|| Some(self.server.service_us_mean.as_ref()?.all))?;
        (service > 0.0).then(|| m.late_us_mean / service)
    }

    /// One line for the reader: how late replies were, beside the service time.
    pub fn describe(&self) -> String {
        let s = &self.server;
        let mut line = format!(
            "emulated {} (time scale {}): replies late by {:.1} µs on average, {:.2} ms at most",
            self.model,
            crate::units::trim_float(self.scale),
            s.late_us_mean,
            s.late_us_max / 1e3
        );
        if let (Some(m), Some(share)) = (&s.service_us_mean, self.late_share()) {
            line.push_str(&format!(
                ", against a mean service time of {:.2} ms ({:.2}%)",
                m.all / 1e3,
                share * 100.0
            ));
        }
        line
    }

    /// The lateness of the replies over the monitored time, added up, per second of it (µs/s);
    /// None without the device's series.
    pub fn late_time_in(&self, late: &[LateSeconds]) -> Option<f64> {
        let m = self.monitored(late)?;
        (m.seconds > 0).then(|| m.late_us_mean * m.replies as f64 / m.seconds as f64)
    }

    /// A warning when replies were late by more than [`LATE_SHARE_WARNING`] of the service
    /// time, judged as [`Self::late_share_in`] judges, and (where the device's series covers
    /// the monitored time) their lateness added up to [`LATE_TIME_WARNING_US_PER_S`].
    pub fn warning_in(&self, late: &[LateSeconds]) -> Option<String> {
        let share = self.late_share_in(late)?;
        let (mean, when) = match self.monitored(late) {
            Some(m) => (m.late_us_mean, " while the monitors ran"),
            None => (self.server.late_us_mean, ""),
        };
        let adds_up = self
            .late_time_in(late)
            .is_none_or(|t| t >= LATE_TIME_WARNING_US_PER_S);
        (share > LATE_SHARE_WARNING && adds_up).then(|| {
            format!(
                "the emulated {}'s replies were late by {mean:.1} µs on average{when}, {:.1}% of its mean service time: the host could not keep up with the model, so the device ran slower than modeled (lower the time scale, or let the device pick one it keeps up with: `scale=auto`; or lower the load on the host)",
                self.model,
                share * 100.0
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stack(late: f64, service: f64) -> Json {
        json!({"emulated": [{"model": "hdd", "scale": 10.0, "capacity": 1,
            "model_stats": {}, "server": {"late_us_mean": late, "late_us_max": 2000.0,
            "service_us_mean": {"all": service, "read": service}}}]})
    }

    #[test]
    fn warns_over_one_percent_of_the_service_time() {
        let ok = &EmulatedDevice::all_in(&stack(9.0, 1000.0))[0];
        assert_eq!(ok.warning_in(&[]), None);
        assert!(ok.describe().contains("9.0 µs") && ok.describe().contains("0.90%"));
        let late = &EmulatedDevice::all_in(&stack(50.0, 1000.0))[0];
        let w = late.warning_in(&[]).unwrap();
        assert!(w.contains("5.0%") && w.contains("scale=auto"), "{w}");
    }

    fn named(late: f64, service: f64) -> EmulatedDevice {
        let mut s = stack(late, service);
        s["emulated"][0]["device"] = json!("loop3");
        EmulatedDevice::all_in(&s).remove(0)
    }

    fn seen(device: &str, late: f64, service: Option<f64>) -> LateSeconds {
        LateSeconds {
            device: device.into(),
            seconds: 10,
            replies: 1000,
            late_us_mean: late,
            service_us_mean: service,
            ..Default::default()
        }
    }

    #[test]
    fn the_monitored_time_is_judged_where_the_device_has_it() {
        // Provisioning's many prompt replies hid a late workload in the whole run's mean.
        let hidden = named(5.0, 1000.0);
        let w = hidden
            .warning_in(&[seen("loop9", 1.0, None), seen("loop3", 30.0, Some(2000.0))])
            .unwrap();
        assert!(
            w.contains("30.0 µs on average while the monitors ran, 1.5%"),
            "{w}"
        );
        // A late provisioning does not flag a prompt workload.
        let prompt = named(50.0, 1000.0);
        assert_eq!(prompt.warning_in(&[seen("loop3", 4.0, Some(1000.0))]), None);
        // A series without the service column: the whole run's service time.
        assert_eq!(
            prompt.late_share_in(&[seen("loop3", 4.0, None)]),
            Some(0.004)
        );
        // Another device's series, or none with replies, leaves the whole run's figures.
        assert_eq!(
            prompt.late_share_in(&[seen("loop9", 4.0, None)]),
            Some(0.05)
        );
        let mut idle = seen("loop3", 4.0, None);
        idle.replies = 0;
        assert_eq!(prompt.late_share_in(&[idle]), Some(0.05));
        // A result without the device's name cannot be matched.
        let unnamed = &EmulatedDevice::all_in(&stack(50.0, 1000.0))[0];
        assert!(unnamed
            .warning_in(&[seen("loop3", 4.0, Some(1000.0))])
            .is_some());
    }

    #[test]
    fn a_rarely_used_device_is_not_flagged_for_a_few_late_replies() {
        // A log device written 14 times in a minute, each reply 4 µs late beside 39 µs of
        // service (10%): 1 µs per second of the trial.
        let log = named(15.0, 236_000.0);
        let mut few = seen("loop3", 4.0, Some(39.0));
        (few.seconds, few.replies) = (62, 14);
        assert!(log.late_share_in(std::slice::from_ref(&few)).unwrap() > 0.1);
        assert!(log.late_time_in(std::slice::from_ref(&few)).unwrap() < 1.0);
        assert_eq!(log.warning_in(&[few.clone()]), None);
        // The same lateness on a device the workload keeps busy adds up, and is flagged.
        (few.seconds, few.replies) = (62, 62 * 20_000);
        let w = log.warning_in(&[few]).unwrap();
        assert!(
            w.contains("4.0 µs on average while the monitors ran"),
            "{w}"
        );
    }

    #[test]
    fn older_results_without_service_times_show_lateness_only() {
        let s = json!({"emulated": [{"model": "hdd", "server": {"late_us_mean": 1.0, "late_us_max": 2.0}}]});
        let d = &EmulatedDevice::all_in(&s)[0];
        assert_eq!(d.warning_in(&[]), None);
        assert!(d.describe().contains("replies late by 1.0 µs"));
        assert!(EmulatedDevice::all_in(&json!({})).is_empty());
    }
}
