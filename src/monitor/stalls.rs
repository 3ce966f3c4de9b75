//! What each late second of an emulated device had beside it: the device server writes its
//! replies' lateness second by second (`lateness-<device>.csv`), the host CPU monitor the
//! steal, system and interrupt time of each interval (`cpu.csv`), the memory monitor the time
//! tasks were stalled on memory (`memory.csv`). For every second with a reply more than 5 ms
//! late, this sets them side by side and counts the seconds the hypervisor took CPU time in,
//! those the host's CPUs spent at least half their time in the kernel in (system and interrupt
//! time: an unmount evicting a hundred thousand inodes, say, where the device server's
//! real-time timer may wait for a CPU behind work that does not yield), those some task stalled
//! on memory in, and those with none of these (where the CPU series covers the second), so a
//! trial's worst lateness is tied to a measured cause second by second, not only by correlation
//! over trials. /proc/stat counts in ticks of 10 ms: a stall shorter than a tick may leave no
//! steal.

use crate::result::monitor::LateSeconds;
use std::path::Path;

/// Memory stall above this (ms per second) counts as a stall beside a late second: below it
/// the figure is the background of an idle host (a page fault or two).
pub const MEMORY_STALL_NOTED_MS_PER_S: f64 = 1.0;

/// The host's CPUs count as busy in the kernel in an interval where system and interrupt time
/// take at least this share of them.
pub const KERNEL_BUSY_SHARE: f64 = 0.5;

/// One row of a monitor series: the time it ended (s from the origin) and its figure.
type Row = (f64, f64);

/// The rows of a monitor CSV (`t_s` first): each row's time and its `columns`, skipping rows
/// without them (a file or a column missing reads as no rows).
fn rows(path: &Path, columns: &[&str]) -> Vec<(f64, Vec<f64>)> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let Some(at) = columns
        .iter()
        .map(|c| header.iter().position(|h| h == c))
        .collect::<Option<Vec<usize>>>()
    else {
        return Vec::new();
    };
    lines
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let v = at
                .iter()
                .map(|&i| f.get(i)?.parse().ok())
                .collect::<Option<Vec<f64>>>()?;
            Some((f.first()?.parse().ok()?, v))
        })
        .collect()
}

/// The rows of a monitor CSV with `figure` of its `columns`.
fn series(path: &Path, columns: &[&str], figure: impl Fn(&[f64]) -> f64) -> Vec<Row> {
    rows(path, columns)
        .into_iter()
        .map(|(t, v)| (t, figure(&v)))
        .collect()
}

/// The largest figure of the intervals that overlap the second `[t, t + 1)`; an interval
/// ends at its row's time and starts at the previous row's.
fn peak_in(rows: &[Row], t: f64) -> Option<f64> {
    let mut peak: Option<f64> = None;
    let mut start = f64::NEG_INFINITY;
    for &(end, v) in rows {
        if end > t && start < t + 1.0 {
            peak = Some(peak.map_or(v, |p| p.max(v)));
        }
        if start >= t + 1.0 {
            break;
        }
        start = end;
    }
    peak
}

/// One second of a lateness series.
struct LateRow {
    /// Its start, s from the origin.
    t: f64,
    replies: u64,
    mean_us: f64,
    max_us: f64,
    over: u64,
}

fn late_rows(path: &Path) -> Vec<LateRow> {
    let columns = ["replies", "late_us_mean", "late_us_max", "over_5ms"];
    rows(path, &columns)
        .into_iter()
        .map(|(t, v)| LateRow {
            t,
            replies: v[0] as u64,
            mean_us: v[1],
            max_us: v[2],
            over: v[3] as u64,
        })
        .collect()
}

/// The late seconds of `device` (its series at `lateness`) beside the host's steal and memory
/// stall from the monitors in `dir`; seconds ending before `start_s` (the monitors' start)
/// are counted apart, as provisioning.
pub fn summarize(device: &str, lateness: &Path, dir: &Path, start_s: f64) -> LateSeconds {
    let cpu = dir.join("cpu.csv");
    let steal = series(&cpu, &["steal_ms_per_s"], |v| v[0]);
    let kernel = series(&cpu, &["cpus", "system_ms_per_s", "irq_ms_per_s"], |v| {
        (v[1] + v[2]) / (v[0] * 1000.0)
    });
    let stall = series(&dir.join("memory.csv"), &["stall_ms_per_s"], |v| v[0]);
    let mut s = LateSeconds {
        device: device.to_string(),
        ..Default::default()
    };
    let mut late_sum_us = 0.0;
    for r in late_rows(lateness) {
        if r.t + 1.0 <= start_s {
            s.before_replies += r.replies;
            s.before_late_us_max = s.before_late_us_max.max(r.max_us);
            s.before_replies_over_5ms += r.over;
            continue;
        }
        s.seconds += 1;
        s.replies += r.replies;
        late_sum_us += r.mean_us * r.replies as f64;
        s.late_us_max = s.late_us_max.max(r.max_us);
        if r.over == 0 {
            continue;
        }
        s.replies_over_5ms += r.over;
        s.seconds_over_5ms += 1;
        let st = peak_in(&steal, r.t);
        let ks = peak_in(&kernel, r.t);
        let ms = peak_in(&stall, r.t);
        let stolen = st.is_some_and(|v| v > 0.0);
        let busy = ks.is_some_and(|v| v >= KERNEL_BUSY_SHARE);
        let stalled = ms.is_some_and(|v| v > MEMORY_STALL_NOTED_MS_PER_S);
        s.with_steal += u64::from(stolen);
        s.with_kernel_busy += u64::from(busy);
        s.with_memory_stall += u64::from(stalled);
        s.with_none += u64::from(st.is_some() && !stolen && !busy && !stalled);
        if s.worst_late_us.is_none_or(|w| r.max_us > w) {
            s.worst_at_s = Some(r.t);
            s.worst_late_us = Some(r.max_us);
            s.worst_steal_ms_per_s = st;
            s.worst_kernel_share = ks;
            s.worst_memory_stall_ms_per_s = ms;
        }
    }
    if s.replies > 0 {
        s.late_us_mean = late_sum_us / s.replies as f64;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_late_second_is_set_beside_the_intervals_it_overlaps() {
        let d = tempfile::tempdir().unwrap();
        let w = |name: &str, text: &str| std::fs::write(d.path().join(name), text).unwrap();
        w(
            "cpu.csv",
            "t_s,phase,cpus,user_ms_per_s,system_ms_per_s,iowait_ms_per_s,irq_ms_per_s,steal_ms_per_s\n\
             1.5,run,2,1,1,0,0,0\n2.5,run,2,1,1,0,0,20\n3.5,run,2,1,1,0,0,0\n4.5,run,2,1,1,0,0,0\n\
             5.5,run,2,1,1,0,0,0\n6.5,run,2,1,700,0,300,0\n",
        );
        w(
            "memory.csv",
            "t_s,phase,dirty_kB,writeback_kB,cached_kB,free_kB,stall_ms_per_s\n\
             1.5,run,0,0,0,0,\n2.5,run,0,0,0,0,0.0\n3.5,run,0,0,0,0,0.0\n4.5,run,0,0,0,0,0.5\n\
             5.5,run,0,0,0,0,30.0\n",
        );
        w(
            "lateness-sdx.csv",
            "t_s,replies,inline,late_us_mean,late_us_max,over_5ms\n\
             -1.2,4,0,2.0,8000.0,3\n-0.2,2,0,1.0,10.0,0\n\
             1,10,0,5.0,9000.0,1\n2,10,0,5.0,100.0,0\n3,10,0,5.0,6000.0,2\n4,10,0,5.0,70000.0,1\n\
             6,10,0,5.0,7000.0,1\n",
        );
        let s = summarize("sdx", &d.path().join("lateness-sdx.csv"), d.path(), 0.5);
        // The second starting at -1.2 ended before the monitors started at 0.5: provisioning.
        assert_eq!((s.before_replies, s.before_replies_over_5ms), (4, 3));
        assert_eq!(s.before_late_us_max, 8000.0);
        assert_eq!(s.seconds, 6);
        assert_eq!((s.replies, s.replies_over_5ms), (52, 5));
        assert_eq!(s.late_us_mean, 252.0 / 52.0);
        assert_eq!(s.seconds_over_5ms, 4);
        // Second 1 overlaps the interval ending at 2.5 (steal 20); second 3 only quiet ones
        // (0.5 ms/s of memory stall is an idle host's background); second 4 the interval
        // ending at 5.5, with the memory stall; second 6 the one ending at 6.5, its two CPUs
        // half in the kernel.
        assert_eq!(s.with_steal, 1);
        assert_eq!(s.with_kernel_busy, 1);
        assert_eq!(s.with_memory_stall, 1);
        assert_eq!(s.with_none, 1);
        assert_eq!(s.worst_at_s, Some(4.0));
        assert_eq!(s.worst_late_us, Some(70000.0));
        assert_eq!(s.worst_steal_ms_per_s, Some(0.0));
        assert_eq!(s.worst_kernel_share, Some(0.0005));
        assert_eq!(s.worst_memory_stall_ms_per_s, Some(30.0));
        assert_eq!(
            s.describe().unwrap(),
            "sdx: 4 of 6 monitored s had a reply over 5 ms late (1 with steal, 1 with the CPUs busy in the kernel, 1 with a memory stall, 1 with none of these); the worst, 70.0 ms, at 4 s (steal 0 ms/s, kernel 0% of the CPUs, memory stall 30.0 ms/s); 3 replies over 5 ms late before the monitors started (provisioning), 8.0 ms at most"
        );
        let calm = LateSeconds::default();
        assert_eq!(calm.describe(), None);
    }

    #[test]
    fn without_the_host_series_a_late_second_is_not_called_unexplained() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("lateness-sdx.csv");
        std::fs::write(
            &p,
            "t_s,replies,inline,late_us_mean,late_us_max,over_5ms\n0,1,0,1.0,6000.0,1\n",
        )
        .unwrap();
        let s = summarize("sdx", &p, d.path(), 0.0);
        // Nothing is known of the host then: the second is neither counted as explained nor
        // as unexplained.
        assert_eq!((s.seconds_over_5ms, s.with_none), (1, 0));
        assert_eq!(s.worst_steal_ms_per_s, None);
    }
}
