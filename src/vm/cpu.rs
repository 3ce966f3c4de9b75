//! What a guest costs the host's CPU: the user + system time of every thread of its QEMU
//! process (vCPU threads `CPU n/KVM` or `CPU n/TCG`, the main loop, the I/O worker threads),
//! read from `/proc/<pid>/task/*/stat` at two moments, as percent of one host core, by group.

use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::time::Instant;

/// CPU ticks of each thread group of a process at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    at: Instant,
    /// Ticks (user + system) per thread id, with the thread's group.
    threads: BTreeMap<u32, (String, u64)>,
}

/// The group a QEMU thread's name puts it in.
pub fn group(name: &str) -> &'static str {
    if name.starts_with("CPU ") {
        "vcpu"
    } else if name.starts_with("qemu-system") {
        "main"
    } else if name == "worker" || name.starts_with("iou-") || name.starts_with("IO ") {
        "io"
    } else {
        "other"
    }
}

/// The threads of `pid` now.
pub fn snapshot(pid: u32) -> Snapshot {
    let mut threads = BTreeMap::new();
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
    for t in tasks.into_iter().flatten().flatten() {
        let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Some((name, ticks)) = std::fs::read_to_string(t.path().join("stat"))
            .ok()
            .and_then(|s| parse_stat(&s))
        {
            threads.insert(tid, (group(&name).to_string(), ticks));
        }
    }
    Snapshot {
        at: Instant::now(),
        threads,
    }
}

/// (name, utime + stime) of a /proc/<pid>/task/<tid>/stat line.
fn parse_stat(s: &str) -> Option<(String, u64)> {
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let name = s[open + 1..close].to_string();
    let fields: Vec<&str> = s[close + 1..].split_whitespace().collect();
    // Fields after the name start at field 3 (state); utime and stime are fields 14 and 15.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((name, utime + stime))
}

/// CPU used between `a` and `b` as percent of one core: the total and by group. Threads
/// that started after `a` count from zero; threads that ended before `b` are lost (QEMU's
/// long-lived threads are not).
pub fn between(a: &Snapshot, b: &Snapshot) -> (f64, Json) {
    let secs = b.at.duration_since(a.at).as_secs_f64().max(1e-9);
    // SAFETY: sysconf reads a constant of the C library.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let mut groups: BTreeMap<String, f64> = BTreeMap::new();
    for (tid, (g, ticks)) in &b.threads {
        let before = a.threads.get(tid).map_or(0, |(_, t)| *t);
        *groups.entry(g.clone()).or_default() += ticks.saturating_sub(before) as f64;
    }
    let pct = |ticks: f64| (ticks / hz / secs * 1000.0).round() / 10.0;
    let total: f64 = groups.values().sum();
    let by: BTreeMap<String, f64> = groups.into_iter().map(|(g, t)| (g, pct(t))).collect();
    (
        pct(total),
        json!({"window_s": secs, "by_thread_group_pct": by}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_and_groups() {
        let line = "4242 (CPU 0/KVM) S 1 2 3 4 5 6 7 8 9 10 250 30 0 0 20 0 1 0 100 0 0";
        assert_eq!(parse_stat(line), Some(("CPU 0/KVM".into(), 280)));
        assert_eq!(group("CPU 1/TCG"), "vcpu");
        assert_eq!(group("qemu-system-x86"), "main");
        assert_eq!(group("worker"), "io");
        assert_eq!(group("call_rcu"), "other");
    }

    #[test]
    fn a_busy_thread_of_this_process_shows_cpu() {
        let pid = std::process::id();
        let a = snapshot(pid);
        let guard = Instant::now();
        let mut x = 0u64;
        // Spin on this thread until the kernel has accounted it a tick (a deadlock guard, not
        // a timing assertion).
        let (total, by) = loop {
            for _ in 0..1_000_000 {
                x = x.wrapping_add(std::hint::black_box(1));
            }
            let (total, by) = between(&a, &snapshot(pid));
            if total > 0.0 || guard.elapsed().as_secs() > 30 {
                break (total, by);
            }
        };
        assert!(total > 0.0, "{total} {by} {x}");
        assert!(by["by_thread_group_pct"].is_object());
    }
}
