//! result.json's `monitor` part, typed: what the monitors saw during a trial, summarised per
//! device (iostat -x figures and totals), per thread group (CPU in percent of one core, kernel
//! threads and iotrial's own told apart), for dirty memory, and per block-request class
//! (journal, metadata, data, flush, discard) when the block trace ran. The per-second series
//! are the trial's `monitor/*.csv`; docs/result-format.md documents every key.

pub use crate::timeline::Outside;
use serde::{Deserialize, Serialize};

/// What the monitors of one trial saw. Trials written before monitors existed read as the
/// default: nothing enabled.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MonitorSummary {
    /// The monitors that ran, in the order `diskstats`, `threads`, `memory`, `trace`.
    pub enabled: Vec<String>,
    /// Seconds between two samples of the periodic monitors.
    pub interval_s: f64,
    /// Seconds from the trial's origin the monitors started and stopped at.
    pub start_s: f64,
    pub end_s: f64,
    /// One per block device of the stack (diskstats).
    pub devices: Vec<DeviceSummary>,
    /// CPU of the host's threads; `None` without the threads monitor.
    pub threads: Option<ThreadSummary>,
    /// Page-cache figures; `None` without the memory monitor.
    pub memory: Option<MemorySummary>,
    /// Traced block requests per phase, class and direction; empty without the trace.
    pub io_classes: Vec<IoClassRow>,
    /// What the block trace covered and how it classified; `None` without the trace.
    pub trace: Option<TraceSummary>,
    /// Per emulated device whose request log ran: its seconds with a reply more than 5 ms
    /// late, beside the host's steal and memory stall in the same seconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub late_seconds: Vec<LateSeconds>,
}

/// One emulated device's replies second by second (`monitor/lateness-<device>.csv`): over
/// the monitored time, how late they went out, the seconds with a reply more than 5 ms late and
/// what the host's monitors saw in them; and the same figures for the device's replies before
/// the monitors started (provisioning: mkfs, the layout), which no phase's figure includes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LateSeconds {
    pub device: String,
    /// Seconds of the series in the monitored time.
    pub seconds: u64,
    /// Replies due in them, how late on average and at most (µs).
    pub replies: u64,
    pub late_us_mean: f64,
    pub late_us_max: f64,
    /// The mean service time the model gave the requests due in those seconds (µs); absent
    /// in series written before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_us_mean: Option<f64>,
    /// Replies more than 5 ms late, and the seconds they fell in.
    pub replies_over_5ms: u64,
    pub seconds_over_5ms: u64,
    /// Of those seconds, those whose host CPU intervals had steal.
    pub with_steal: u64,
    /// Of those seconds, those whose host CPUs spent at least half their time in the kernel
    /// (system and interrupt time).
    pub with_kernel_busy: u64,
    /// Of those seconds, those in which some task stalled on memory for more than 1 ms per
    /// second.
    pub with_memory_stall: u64,
    /// Of those seconds, those in which a thread of the device server waited on a run queue
    /// for a CPU at least 1 ms per second (threads.csv's `wait_pct`).
    #[serde(default)]
    pub with_server_waiting: u64,
    /// Of those seconds, those whose request thread sent a reply over 5 ms late itself: the
    /// host took that much longer than the modeled service time to handle the request.
    #[serde(default)]
    pub with_slow_request: u64,
    /// Of those seconds, those in which writing one reply to the kernel took 1 ms or more.
    #[serde(default)]
    pub with_slow_send: u64,
    /// Of those seconds, those with none of these, where the CPU series covers them.
    pub with_none: u64,
    /// The second with the latest reply (its start, s from the origin), that reply's lateness,
    /// and the host's steal (ms per second), share of its CPUs in the kernel and memory stall
    /// (ms per second) then; absent without the series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_at_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_late_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_steal_ms_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_kernel_share: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_memory_stall_ms_per_s: Option<f64>,
    /// In that second: the longest run-queue wait of a server thread (ms per second), the
    /// latest reply its request thread sent (µs), the longest write of a reply (µs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_server_wait_ms_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_inline_late_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_send_us: Option<f64>,
    /// The replies before the monitors started: how many, the latest (µs), those over 5 ms.
    pub before_replies: u64,
    pub before_late_us_max: f64,
    pub before_replies_over_5ms: u64,
}

impl LateSeconds {
    /// One line for the reader: the seconds with a reply over 5 ms late and what the host's
    /// series showed in them, and the late replies before the monitors started; `None` when
    /// there were none.
    pub fn describe(&self) -> Option<String> {
        let before = (self.before_replies_over_5ms > 0).then(|| {
            format!(
                "{}: {} replies over 5 ms late before the monitors started (provisioning), {:.1} ms at most",
                self.device,
                self.before_replies_over_5ms,
                self.before_late_us_max / 1e3
            )
        });
        if self.seconds_over_5ms == 0 {
            return before;
        }
        let mut line = format!(
            "{}: {} of {} monitored s had a reply over 5 ms late ({} with steal, {} with the CPUs busy in the kernel, {} with a memory stall, {} with the server waiting for a CPU, {} with a slow request, {} with a slow send, {} with none of these)",
            self.device,
            self.seconds_over_5ms,
            self.seconds,
            self.with_steal,
            self.with_kernel_busy,
            self.with_memory_stall,
            self.with_server_waiting,
            self.with_slow_request,
            self.with_slow_send,
            self.with_none
        );
        if let (Some(at), Some(us)) = (self.worst_at_s, self.worst_late_us) {
            line.push_str(&format!("; the worst, {:.1} ms, at {at:.0} s", us / 1e3));
            let mut then = Vec::new();
            if let Some(st) = self.worst_steal_ms_per_s {
                then.push(format!("steal {st:.0} ms/s"));
            }
            if let Some(k) = self.worst_kernel_share {
                then.push(format!("kernel {:.0}% of the CPUs", k * 100.0));
            }
            if let Some(ms) = self.worst_memory_stall_ms_per_s {
                then.push(format!("memory stall {ms:.1} ms/s"));
            }
            if let Some(ms) = self.worst_server_wait_ms_per_s {
                then.push(format!("server waited {ms:.1} ms/s for a CPU"));
            }
            if let Some(us) = self.worst_inline_late_us.filter(|&us| us > 0.0) {
                then.push(format!("request thread {:.1} ms late", us / 1e3));
            }
            if let Some(us) = self.worst_send_us {
                then.push(format!("longest send {:.1} ms", us / 1e3));
            }
            if !then.is_empty() {
                line.push_str(&format!(" ({})", then.join(", ")));
            }
        }
        if let Some(b) = before {
            line.push_str(&format!(
                "; {}",
                b.split_once(": ").map_or(&b[..], |(_, r)| r)
            ));
        }
        Some(line)
    }
}

impl MonitorSummary {
    /// The summary of the stack's first data device, if diskstats watched it.
    pub fn data_device(&self) -> Option<&DeviceSummary> {
        self.devices.iter().find(|d| d.role == "data")
    }
}

/// iostat -x's figures over an interval, with iostat's names and units.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct IostatFigures {
    pub r_s: f64,
    pub w_s: f64,
    pub d_s: f64,
    pub f_s: f64,
    pub rkB_s: f64,
    pub wkB_s: f64,
    pub rrqm_s: f64,
    pub wrqm_s: f64,
    pub r_await_ms: f64,
    pub w_await_ms: f64,
    pub aqu_sz: f64,
    pub rareq_sz_kB: f64,
    pub wareq_sz_kB: f64,
    pub util_pct: f64,
}

/// Requests and kilobytes a device completed over an interval.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct DiskTotals {
    pub read_requests: u64,
    pub write_requests: u64,
    pub discard_requests: u64,
    pub flush_requests: u64,
    pub read_kB: f64,
    pub written_kB: f64,
    pub discarded_kB: f64,
}

/// One device over the whole monitored time and per phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSummary {
    /// Kernel name (`loop3`, `loop3p1`, `sdb`).
    pub device: String,
    /// `data` (a device the stack is built on), `partition`, `log` (external log device) or
    /// `backing` (the disk holding an image or a directory target).
    pub role: String,
    pub seconds: f64,
    /// iostat -x figures over the whole monitored time (rates are means, awaits are means per
    /// request).
    pub means: IostatFigures,
    /// Mean time per read or write request, ms (iostat's former `await`).
    pub await_ms: f64,
    /// Highest `await_ms` of any interval that completed requests (0 when none did).
    #[serde(default)]
    pub await_ms_peak: f64,
    /// Highest `aqu_sz` of any interval.
    #[serde(default)]
    pub aqu_sz_peak: f64,
    /// Highest `util_pct` of any interval.
    pub util_pct_peak: f64,
    pub totals: DiskTotals,
    /// The same per phase, in phase order.
    pub phases: Vec<DevicePhase>,
}

/// One device during one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DevicePhase {
    /// The phase; `None` for the monitored time outside every phase.
    pub phase: Option<String>,
    /// Outside every phase: `before` the first phase began or `after` the last ended (absent
    /// in a phase, and in results written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside: Option<Outside>,
    pub seconds: f64,
    pub means: IostatFigures,
    pub await_ms: f64,
    /// Highest `await_ms` of an interval of the phase that completed requests (0 when none
    /// did; 0 in results written before it existed).
    #[serde(default)]
    pub await_ms_peak: f64,
    /// Highest `aqu_sz` of an interval of the phase.
    #[serde(default)]
    pub aqu_sz_peak: f64,
    pub totals: DiskTotals,
}

/// CPU of the host's threads, in percent of one core.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadSummary {
    /// Mean over the intervals of all kernel threads' CPU together.
    pub kernel_cpu_pct_mean: f64,
    /// Highest interval of all kernel threads' CPU together.
    pub kernel_cpu_pct_peak: f64,
    /// Mean CPU of iotrial's own threads, by what they are.
    pub own_cpu_pct_mean: OwnCpu,
    /// The thread groups with the highest mean CPU, highest first.
    pub groups: Vec<GroupCpu>,
    /// Kernel and own CPU per phase, in phase order.
    pub phases: Vec<PhaseCpu>,
    /// The host's CPU as a whole (/proc/stat), steal included; absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostCpuSummary>,
}

/// The host's CPU as a whole over the monitored time, in ms per second of wall time summed
/// over its CPUs (so `cpus` x 1000 is every CPU at once).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostCpuSummary {
    pub cpus: u32,
    /// User, system and interrupt time.
    pub busy_ms_per_s_mean: f64,
    pub iowait_ms_per_s_mean: f64,
    /// Time the hypervisor gave this virtual machine's CPUs to others.
    pub steal_ms_per_s_mean: f64,
    /// The interval with the most steal, and the time it ended (s from the trial's origin).
    pub steal_ms_per_s_peak: f64,
    pub steal_peak_at_s: f64,
    /// Intervals with more than 100 ms of steal per second.
    pub steal_intervals_over_100ms: u64,
}

impl ThreadSummary {
    /// Mean kernel-thread CPU during `phase`, if the phase was monitored.
    pub fn kernel_cpu_pct_in(&self, phase: &str) -> Option<f64> {
        self.phases
            .iter()
            .find(|p| p.phase.as_deref() == Some(phase))
            .map(|p| p.kernel_cpu_pct_mean)
    }
}

/// Mean CPU of iotrial's own threads: the trial process's main thread, its engine (stream)
/// threads, its monitor threads, and the run's device server process (emulated devices).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OwnCpu {
    pub main: f64,
    pub engine: f64,
    pub monitor: f64,
    pub server: f64,
}

/// One thread group: threads whose names are equal once numbers and instance suffixes are
/// stripped (`kworker/u4:2` -> `kworker`, `jbd2/loop3-8` -> `jbd2`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupCpu {
    pub group: String,
    pub kernel: bool,
    /// `main`, `engine`, `monitor` or `server` for iotrial's own threads, else empty.
    pub own: String,
    /// Threads of the group seen using CPU.
    pub threads: u64,
    pub cpu_pct_mean: f64,
    pub cpu_pct_peak: f64,
}

/// Kernel and own CPU during one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseCpu {
    pub phase: Option<String>,
    /// Outside every phase: `before` the first or `after` the last (absent in a phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside: Option<Outside>,
    pub seconds: f64,
    pub kernel_cpu_pct_mean: f64,
    pub own_cpu_pct_mean: f64,
}

/// Page-cache figures from /proc/meminfo over the monitored time.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct MemorySummary {
    pub dirty_kB_mean: f64,
    pub dirty_kB_peak: f64,
    pub writeback_kB_mean: f64,
    pub writeback_kB_peak: f64,
    pub free_kB_min: f64,
    /// ms some task was stalled waiting for memory over the monitored time (pressure stall
    /// information; absent where the kernel has none, and in results from before it was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_ms: Option<f64>,
    /// The most of it in one interval, ms per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_ms_per_s_peak: Option<f64>,
}

/// Traced block requests of one class and direction during one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IoClassRow {
    pub phase: Option<String>,
    /// Outside every phase: `before` the first or `after` the last (absent in a phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside: Option<Outside>,
    /// `journal`, `metadata`, `data`, `flush` or `discard`.
    pub class: String,
    /// `read` or `write`; `none` for flush and discard.
    pub direction: String,
    pub requests: u64,
    pub bytes: u64,
    /// Mean issue-to-complete time of the requests that completed while traced.
    pub latency_ms_mean: Option<f64>,
}

/// What the block trace covered and where the classes came from.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSummary {
    /// Kernel names of the traced disks.
    pub devices: Vec<String>,
    /// Requests issued while traced.
    pub requests: u64,
    /// Events the kernel's trace buffer dropped (0 when the trace is complete).
    pub lost_events: u64,
    /// The filesystem's journal, as its own tools report it.
    pub journal: Vec<Extent>,
    /// The command that located the journal (`debugfs -R blocks <8> /dev/loop3`).
    pub journal_source: Option<String>,
    /// Metadata areas the filesystem's tools name (bitmaps, inode tables, AG headers).
    pub metadata_areas: u64,
    pub metadata_sectors: u64,
    /// Emulated devices: the device server's own request log against the trace.
    pub emulated: Vec<EmulatedCheck>,
}

/// A run of 512-byte sectors on a device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Extent {
    pub device: String,
    pub start_sector: u64,
    pub sectors: u64,
}

/// An emulated device's request log against the traced requests of its loop device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmulatedCheck {
    pub device: String,
    /// Requests the device server logged (read, write, flush, discard).
    pub server_requests: u64,
    /// Requests traced on the loop device in the same time.
    pub traced_requests: u64,
    /// Requests found in both with the same kind, offset and length.
    pub matched: u64,
}
