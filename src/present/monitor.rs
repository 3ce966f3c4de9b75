//! The monitors' figures a workload kind may add to the comparison of stacks, as optional
//! columns after its verdict's (dvr adds the device's mean await, the kernel threads' CPU and
//! the host's worst second of steal). Each is read from a trial's result.json `monitor`, so
//! the report needs nothing else.

use super::figure::{Better, FigureSpec};
use crate::result::monitor::MonitorSummary;

/// One optional column: its heading and direction, and how to read it from a trial.
#[derive(Debug, Clone, Copy)]
pub struct MonitorColumn {
    /// `key` is the figure's path under result.json's `monitor`.
    pub spec: FigureSpec,
    /// The figure of one trial; `None` when the monitor did not run.
    pub value: fn(&MonitorSummary) -> Option<f64>,
}

/// The mean time per request of the stack's first data device (diskstats).
pub const DEVICE_AWAIT: MonitorColumn = MonitorColumn {
    spec: FigureSpec {
        key: "monitor.devices[role=data].await_ms",
        label: "device await",
        unit: "ms",
        better: Better::Lower,
    },
    value: |m| m.data_device().map(|d| d.await_ms),
};

/// All kernel threads' CPU together, mean over the monitored time (threads).
pub const KERNEL_CPU: MonitorColumn = MonitorColumn {
    spec: FigureSpec {
        key: "monitor.threads.kernel_cpu_pct_mean",
        label: "kernel threads CPU",
        unit: "% of a core",
        better: Better::Lower,
    },
    value: |m| m.threads.as_ref().map(|t| t.kernel_cpu_pct_mean),
};

/// The host's worst second of steal (the hypervisor holding its CPUs), summed over the CPUs.
pub const HOST_STEAL_PEAK: MonitorColumn = MonitorColumn {
    spec: FigureSpec {
        key: "monitor.threads.host.steal_ms_per_s_peak",
        label: "host steal, worst second",
        unit: "ms",
        better: Better::Lower,
    },
    value: |m| {
        let t = m.threads.as_ref()?;
        t.host.map(|h| h.steal_ms_per_s_peak)
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::monitor::{DeviceSummary, ThreadSummary};

    #[test]
    fn columns_read_the_summary() {
        let mut m = MonitorSummary::default();
        assert_eq!(
            ((DEVICE_AWAIT.value)(&m), (KERNEL_CPU.value)(&m)),
            (None, None)
        );
        m.threads = Some(ThreadSummary {
            kernel_cpu_pct_mean: 12.5,
            ..Default::default()
        });
        assert_eq!((HOST_STEAL_PEAK.value)(&m), None);
        m.threads.as_mut().unwrap().host = Some(crate::result::monitor::HostCpuSummary {
            steal_ms_per_s_peak: 360.0,
            ..Default::default()
        });
        assert_eq!((HOST_STEAL_PEAK.value)(&m), Some(360.0));
        m.devices.push(DeviceSummary {
            device: "vda".into(),
            role: "backing".into(),
            seconds: 1.0,
            means: Default::default(),
            await_ms: 9.0,
            await_ms_peak: 0.0,
            aqu_sz_peak: 0.0,
            util_pct_peak: 0.0,
            totals: Default::default(),
            phases: vec![],
        });
        assert_eq!(
            (DEVICE_AWAIT.value)(&m),
            None,
            "a backing disk is not the stack's device"
        );
        m.devices[0].role = "data".into();
        assert_eq!(
            ((DEVICE_AWAIT.value)(&m), (KERNEL_CPU.value)(&m)),
            (Some(9.0), Some(12.5))
        );
    }
}
