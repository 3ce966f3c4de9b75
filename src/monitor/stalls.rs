//! What each late second of an emulated device had beside it: the device server writes its
//! replies' lateness second by second (`lateness-<device>.csv`), the host CPU monitor the
//! steal, system and interrupt time of each interval (`cpu.csv`), the memory monitor the time
//! tasks were stalled on memory (`memory.csv`). For every second with a reply more than 5 ms
//! late, this sets them side by side and counts the seconds the hypervisor took CPU time in,
//! those the host's CPUs spent at least half their time in the kernel in (system and interrupt
//! time: an unmount evicting a hundred thousand inodes, say, where the device server's
//! real-time timer may wait for a CPU behind work that does not yield), those some task stalled
//! on memory in; then what the device server itself saw: its threads waiting on a run queue for
//! a CPU (`threads.csv`'s `wait_pct`, from the scheduler's own count), its latest reply that
//! second sent by the request thread (the host took longer than the modeled service time to
//! handle the request: its image I/O), a write of a reply to the kernel that took over a
//! millisecond; and those with none of these (where the CPU series covers the second), so a
//! trial's worst lateness is tied to a measured cause second by second, not only by correlation
//! over trials. /proc/stat counts in ticks of 10 ms: a stall shorter than a tick may leave no
//! steal.

use crate::emu::LATE_NOTED_NS;
use crate::result::monitor::LateSeconds;
use std::path::Path;

/// Memory stall above this (ms per second) counts as a stall beside a late second: below it
/// the figure is the background of an idle host (a page fault or two).
pub const MEMORY_STALL_NOTED_MS_PER_S: f64 = 1.0;

/// The host's CPUs count as busy in the kernel in an interval where system and interrupt time
/// take at least this share of them.
pub const KERNEL_BUSY_SHARE: f64 = 0.5;

/// The device server's threads count as waiting for a CPU in an interval where one of them
/// waited on a run queue at least this long (ms per second).
pub const SERVER_WAIT_NOTED_MS_PER_S: f64 = 1.0;

/// A write of one reply to the kernel this long (µs) counts as a slow send.
pub const SEND_NOTED_US: f64 = 1000.0;

/// One row of a monitor series: the time it ended (s from the origin) and its figure.
type Row = (f64, f64);

/// The rows of a monitor CSV (`t_s` first): each row's time and its `columns`, skipping rows
/// without them (a file or a column missing reads as no rows).
fn rows(path: &Path, columns: &[&str]) -> Vec<(f64, Vec<f64>)> {
    rows_where(path, columns, None)
        .into_iter()
        .filter_map(|(t, v)| Some((t, v.into_iter().collect::<Option<Vec<f64>>>()?)))
        .collect()
}

/// The rows of a monitor CSV (`t_s` first) whose column `only.0` reads `only.1` (all rows
/// without `only`), each with its `columns`, a figure missing or unreadable as `None`. Quoted
/// fields (a thread name with a comma) are read as one.
fn rows_where(
    path: &Path,
    columns: &[&str],
    only: Option<(&str, &str)>,
) -> Vec<(f64, Vec<Option<f64>>)> {
    let Ok(mut r) = csv::ReaderBuilder::new().flexible(true).from_path(path) else {
        return Vec::new();
    };
    let Ok(header) = r.headers().cloned() else {
        return Vec::new();
    };
    let at = |c: &str| header.iter().position(|h| h == c);
    let Some(cols) = columns
        .iter()
        .map(|c| at(c))
        .collect::<Option<Vec<usize>>>()
    else {
        return Vec::new();
    };
    let only = match only {
        Some((c, v)) => match at(c) {
            Some(i) => Some((i, v)),
            None => return Vec::new(),
        },
        None => None,
    };
    r.records()
        .map_while(Result::ok)
        .filter(|f| only.is_none_or(|(i, v)| f.get(i) == Some(v)))
        .filter_map(|f| {
            let v = cols.iter().map(|&i| f.get(i)?.parse().ok()).collect();
            Some((f.get(0)?.parse().ok()?, v))
        })
        .collect()
}

/// The longest run-queue wait of the device server's threads in each interval of
/// threads.csv (ms per second), 0 where none of its threads waited or ran; empty without
/// the file or its `wait_pct` column (no schedstat).
fn server_wait(path: &Path) -> Vec<Row> {
    let all = rows_where(path, &["wait_pct"], None);
    if all.iter().all(|(_, v)| v[0].is_none()) {
        return Vec::new();
    }
    let server = rows_where(path, &["wait_pct"], Some(("own", "server")));
    let mut out: Vec<Row> = Vec::new();
    for (t, _) in all {
        if out.last().is_none_or(|&(last, _)| last != t) {
            out.push((t, 0.0));
        }
    }
    // Both in the file's order: one pass.
    let mut i = 0;
    for (t, v) in server {
        while out.get(i).is_some_and(|r| r.0 < t) {
            i += 1;
        }
        if let (Some(row), Some(pct)) = (out.get_mut(i).filter(|r| r.0 == t), v[0]) {
            row.1 = row.1.max(pct * 10.0);
        }
    }
    out
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
    /// The latest reply the request thread sent, and the longest write of a reply to the
    /// kernel (µs); absent in older files.
    inline_max_us: Option<f64>,
    send_max_us: Option<f64>,
    /// Requests the model serviced due in the second and their mean service time (µs);
    /// absent in older files.
    serviced: Option<(u64, f64)>,
}

/// The lateness series' seconds; files written before a column was added read without it.
fn late_rows(path: &Path) -> Vec<LateRow> {
    const COLUMNS: [&str; 8] = [
        "replies",
        "late_us_mean",
        "late_us_max",
        "over_5ms",
        "inline_late_us_max",
        "send_us_max",
        "serviced",
        "service_us_mean",
    ];
    let all = [8, 6, 4]
        .iter()
        .map(|&n| rows_where(path, &COLUMNS[..n], None))
        .find(|rows| !rows.is_empty())
        .unwrap_or_default();
    all.into_iter()
        .filter_map(|(t, v)| {
            let at = |i: usize| v.get(i).copied().flatten();
            Some(LateRow {
                t,
                replies: v[0]? as u64,
                mean_us: v[1]?,
                max_us: v[2]?,
                over: v[3]? as u64,
                inline_max_us: at(4),
                send_max_us: at(5),
                serviced: at(6).zip(at(7)).map(|(n, mean)| (n as u64, mean)),
            })
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
    let waited = server_wait(&dir.join("threads.csv"));
    let mut s = LateSeconds {
        device: device.to_string(),
        ..Default::default()
    };
    let mut late_sum_us = 0.0;
    // Requests serviced in the monitored seconds and their service times' sum (µs); `None`
    // once a second lacks the figure.
    let mut service = Some((0u64, 0.0));
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
        service = service
            .zip(r.serviced)
            .map(|((n, sum), (k, mean))| (n + k, sum + mean * k as f64));
        if r.over == 0 {
            continue;
        }
        s.replies_over_5ms += r.over;
        s.seconds_over_5ms += 1;
        let st = peak_in(&steal, r.t);
        let ks = peak_in(&kernel, r.t);
        let ms = peak_in(&stall, r.t);
        let ws = peak_in(&waited, r.t);
        let stolen = st.is_some_and(|v| v > 0.0);
        let busy = ks.is_some_and(|v| v >= KERNEL_BUSY_SHARE);
        let stalled = ms.is_some_and(|v| v > MEMORY_STALL_NOTED_MS_PER_S);
        let waiting = ws.is_some_and(|v| v >= SERVER_WAIT_NOTED_MS_PER_S);
        let slow_request = r
            .inline_max_us
            .is_some_and(|v| v * 1e3 > LATE_NOTED_NS as f64);
        let slow_send = r.send_max_us.is_some_and(|v| v >= SEND_NOTED_US);
        s.with_steal += u64::from(stolen);
        s.with_kernel_busy += u64::from(busy);
        s.with_memory_stall += u64::from(stalled);
        s.with_server_waiting += u64::from(waiting);
        s.with_slow_request += u64::from(slow_request);
        s.with_slow_send += u64::from(slow_send);
        let any = stolen || busy || stalled || waiting || slow_request || slow_send;
        s.with_none += u64::from(st.is_some() && !any);
        if s.worst_late_us.is_none_or(|w| r.max_us > w) {
            s.worst_at_s = Some(r.t);
            s.worst_late_us = Some(r.max_us);
            s.worst_steal_ms_per_s = st;
            s.worst_kernel_share = ks;
            s.worst_memory_stall_ms_per_s = ms;
            s.worst_server_wait_ms_per_s = ws;
            s.worst_inline_late_us = r.inline_max_us;
            s.worst_send_us = r.send_max_us;
        }
    }
    if s.replies > 0 {
        s.late_us_mean = late_sum_us / s.replies as f64;
    }
    s.service_us_mean = service.and_then(|(n, sum)| (n > 0).then(|| sum / n as f64));
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
             5.5,run,2,1,1,0,0,0\n6.5,run,2,1,700,0,300,0\n7.5,run,2,1,1,0,0,0\n\
             8.5,run,2,1,1,0,0,0\n9.5,run,2,1,1,0,0,0\n10.5,run,2,1,1,0,0,0\n\
             11.5,run,2,1,1,0,0,0\n12.5,run,2,1,1,0,0,0\n13.5,run,2,1,1,0,0,0\n",
        );
        // A kernel thread waited for a CPU (not the server's: not counted); the server's timer
        // waited 3 ms in the interval ending at 8.9.
        w(
            "threads.csv",
            "t_s,phase,group,comm,pid,tid,kernel,own,cpu_pct,wait_pct\n\
             7.5,run,kworker,kworker/0:1,5,5,1,,1.00,50.00\n\
             8.5,run,emu-timer,emu-timer,9,10,0,server,2.00,0.00\n\
             8.9,run,emu-timer,\"emu,timer\",9,10,0,server,2.00,0.30\n\
             8.9,run,fuser,fuser-0,9,11,0,server,1.00,0.05\n\
             9.5,run,kworker,kworker/0:1,5,5,1,,1.00,0.00\n",
        );
        w(
            "memory.csv",
            "t_s,phase,dirty_kB,writeback_kB,cached_kB,free_kB,stall_ms_per_s\n\
             1.5,run,0,0,0,0,\n2.5,run,0,0,0,0,0.0\n3.5,run,0,0,0,0,0.0\n4.5,run,0,0,0,0,0.5\n\
             5.5,run,0,0,0,0,30.0\n",
        );
        w(
            "lateness-sdx.csv",
            "t_s,replies,inline,late_us_mean,late_us_max,over_5ms,inline_late_us_max,send_us_max\n\
             -1.2,4,0,2.0,8000.0,3,0,10\n-0.2,2,0,1.0,10.0,0,0,10\n\
             1,10,0,5.0,9000.0,1,0,10\n2,10,0,5.0,100.0,0,0,10\n3,10,0,5.0,6000.0,2,0,10\n\
             4,10,0,5.0,70000.0,1,0,10\n6,10,0,5.0,7000.0,1,0,10\n8,10,0,5.0,6000.0,1,0,10\n\
             10,10,1,5.0,6000.0,1,6000.0,10\n12,10,0,5.0,6000.0,1,0,1500\n",
        );
        let s = summarize("sdx", &d.path().join("lateness-sdx.csv"), d.path(), 0.5);
        // The second starting at -1.2 ended before the monitors started at 0.5: provisioning.
        assert_eq!((s.before_replies, s.before_replies_over_5ms), (4, 3));
        assert_eq!(s.before_late_us_max, 8000.0);
        assert_eq!(s.seconds, 9);
        assert_eq!((s.replies, s.replies_over_5ms), (82, 8));
        assert_eq!(s.late_us_mean, 402.0 / 82.0);
        assert_eq!(s.seconds_over_5ms, 7);
        // Second 1 overlaps the interval ending at 2.5 (steal 20); second 3 only quiet ones
        // (0.5 ms/s of memory stall is an idle host's background); second 4 the interval
        // ending at 5.5, with the memory stall; second 6 the one ending at 6.5, its two CPUs
        // half in the kernel.
        assert_eq!(s.with_steal, 1);
        assert_eq!(s.with_kernel_busy, 1);
        assert_eq!(s.with_memory_stall, 1);
        // Second 8 had the server's timer waiting 3 ms for a CPU, second 10 a request thread
        // 6 ms late, second 12 a send of 1.5 ms.
        assert_eq!(s.with_server_waiting, 1);
        assert_eq!(s.with_slow_request, 1);
        assert_eq!(s.with_slow_send, 1);
        assert_eq!(s.with_none, 1);
        assert_eq!(s.worst_at_s, Some(4.0));
        assert_eq!(s.worst_late_us, Some(70000.0));
        assert_eq!(s.worst_steal_ms_per_s, Some(0.0));
        assert_eq!(s.worst_kernel_share, Some(0.0005));
        assert_eq!(s.worst_memory_stall_ms_per_s, Some(30.0));
        // threads.csv's first interval (ending at 7.5) began with the monitors: second 4 is in
        // it, and no server thread waited then.
        assert_eq!(s.worst_server_wait_ms_per_s, Some(0.0));
        assert_eq!(
            (s.worst_inline_late_us, s.worst_send_us),
            (Some(0.0), Some(10.0))
        );
        assert_eq!(
            s.describe().unwrap(),
            "sdx: 7 of 9 monitored s had a reply over 5 ms late (1 with steal, 1 with the CPUs busy in the kernel, 1 with a memory stall, 1 with the server waiting for a CPU, 1 with a slow request, 1 with a slow send, 1 with none of these); the worst, 70.0 ms, at 4 s (steal 0 ms/s, kernel 0% of the CPUs, memory stall 30.0 ms/s, server waited 0.0 ms/s for a CPU, longest send 0.0 ms); 3 replies over 5 ms late before the monitors started (provisioning), 8.0 ms at most"
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
        // A threads.csv written without schedstat (or before `wait_pct`) gives no wait.
        std::fs::write(
            d.path().join("threads.csv"),
            "t_s,phase,group,comm,pid,tid,kernel,own,cpu_pct\n0.5,run,emu-timer,emu-timer,9,10,0,server,2.00\n",
        )
        .unwrap();
        let s = summarize("sdx", &p, d.path(), 0.0);
        assert_eq!(s.worst_server_wait_ms_per_s, None);
        assert_eq!((s.worst_inline_late_us, s.worst_send_us), (None, None));
        // Nothing is known of the host then: the second is neither counted as explained nor
        // as unexplained.
        assert_eq!((s.seconds_over_5ms, s.with_none), (1, 0));
        assert_eq!(s.worst_steal_ms_per_s, None);
        assert_eq!(
            s.service_us_mean, None,
            "a file without the service columns"
        );
    }

    #[test]
    fn the_service_time_is_the_monitored_seconds_own() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("lateness-sdx.csv");
        // Provisioning's many quick discards (100 µs) before the monitors start at 0.5 s; the
        // monitored seconds serviced 3 requests at 10 ms and 1 at 2 ms.
        std::fs::write(
            &p,
            "t_s,replies,inline,late_us_mean,late_us_max,over_5ms,inline_late_us_max,send_us_max,serviced,service_us_mean\n\
             -1,1000,0,1.0,5.0,0,0,10,1000,100.0\n\
             1,3,0,40.0,50.0,0,0,10,3,10000.0\n\
             2,1,0,40.0,40.0,0,0,10,1,2000.0\n\
             3,0,0,0.0,0.0,0,0,0,0,0.0\n",
        )
        .unwrap();
        let s = summarize("sdx", &p, d.path(), 0.5);
        assert_eq!(s.service_us_mean, Some(8000.0));
        assert_eq!((s.late_us_mean, s.before_replies), (40.0, 1000));
    }
}
