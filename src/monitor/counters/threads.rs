//! The threads monitor: the CPU of every thread on the host that used any during an
//! interval, kernel threads included, from /proc/*/task/*. CPU time is the scheduler's own
//! count in nanoseconds (`schedstat`), or user + system ticks where the kernel has no
//! schedstat; with schedstat also the time each thread waited on a run queue for a CPU
//! (`wait_pct`: it was ready to run and did not). Threads are grouped by name with numbers and instance suffixes stripped
//! (`kworker/u4:2` -> `kworker`, `jbd2/loop3-8` -> `jbd2`), kernel threads flagged, and
//! iotrial's own threads told apart: the trial's main thread, its engine (stream) threads,
//! its monitor threads, and the run's device server process. Rows go to
//! `monitor/threads.csv`; result.json gets the top groups and the kernel total. The host's CPU
//! as a whole, steal included, goes beside them ([`super::hostcpu`], `monitor/cpu.csv`).

use super::hostcpu::HostCpu;
use crate::monitor::series::{field, CsvFile, PerPhase};
use crate::result::monitor::{GroupCpu, OwnCpu, PhaseCpu, ThreadSummary};
use crate::timeline::Span;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Header of threads.csv.
pub const HEADER: &str = "t_s,phase,group,comm,pid,tid,kernel,own,cpu_pct,wait_pct";

/// PF_KTHREAD in the `flags` field of /proc/<pid>/stat.
const PF_KTHREAD: u64 = 0x0020_0000;
/// Groups kept in result.json: the busiest kernel groups and other groups.
const TOP_KERNEL: usize = 10;
const TOP_OTHER: usize = 5;

/// The group of a thread name: what comes before a `/` (the instance follows it:
/// `jbd2/loop3-8` -> `jbd2`), else the name without its digits and the separators they leave
/// at its end (`loop3` -> `loop`, `flush-9:10` -> `flush`, `md10_raid10` -> `md_raid`).
pub fn group_of(comm: &str) -> String {
    let g = match comm.split_once('/') {
        Some((head, _)) => head.to_string(),
        None => {
            let stripped: String = comm.chars().filter(|c| !c.is_ascii_digit()).collect();
            stripped
                .trim_end_matches(['-', '_', ':', '.', ' '])
                .to_string()
        }
    };
    if g.is_empty() {
        comm.to_string()
    } else {
        g
    }
}

/// Who iotrial is on this host: the trial's process, its monitor threads, and the run's
/// device server process.
#[derive(Debug, Clone, Default)]
pub struct Own {
    pub pid: u32,
    pub monitor_tids: Arc<Mutex<Vec<u32>>>,
    pub server_pid: Option<u32>,
}

impl Own {
    /// `main`, `engine`, `monitor`, `server`, or empty for a thread that is not iotrial's.
    fn label(&self, pid: u32, tid: u32) -> &'static str {
        if pid == self.pid {
            let monitors = self.monitor_tids.lock().unwrap_or_else(|e| e.into_inner());
            if monitors.contains(&tid) {
                "monitor"
            } else if tid == pid {
                "main"
            } else {
                "engine"
            }
        } else if Some(pid) == self.server_pid {
            "server"
        } else {
            ""
        }
    }
}

/// What is known of one thread.
struct Thread {
    pid: u32,
    comm: String,
    group: String,
    kernel: bool,
    own: &'static str,
    cpu_ns: u64,
    /// Run-queue wait so far (schedstat), ns.
    wait_ns: u64,
}

/// Sums of one group.
#[derive(Default)]
struct GroupSums {
    cpu_ns: u64,
    peak_pct: f64,
    tids: HashSet<u32>,
}

/// Kernel and own CPU time of one phase.
#[derive(Default)]
struct PhaseSums {
    seconds: f64,
    kernel_ns: u64,
    own_ns: u64,
}

type GroupKey = (String, bool, &'static str);

/// The threads monitor of one trial.
pub struct Threads {
    csv: CsvFile,
    own: Own,
    schedstat: bool,
    known: HashMap<u32, Thread>,
    last_t: f64,
    seconds: f64,
    groups: BTreeMap<GroupKey, GroupSums>,
    own_ns: BTreeMap<&'static str, u64>,
    kernel_ns: u64,
    kernel_peak: f64,
    phases: PerPhase<PhaseSums>,
    /// This process's CPU ns (all its threads, exited ones included), read with its threads
    /// at the last and the latest scan.
    process_ns: (u64, u64),
    /// Own CPU not yet accounted to a thread (ns; negative: accounted ahead).
    exited_carry: i64,
    /// The host's CPU as a whole; `None` if /proc/stat could not be read.
    host: Option<HostCpu>,
}

/// One thread's CPU in an interval, as threads.csv has it.
struct Use {
    group: String,
    comm: String,
    pid: u32,
    tid: u32,
    kernel: bool,
    own: &'static str,
    ns: u64,
    /// Run-queue wait in the interval, ns (`None` without schedstat).
    wait_ns: Option<u64>,
}

/// Own CPU below this per interval is not worth a row of exited threads.
const EXITED_MIN_NS: i64 = 1_000_000;

/// CPU time of this process, all its threads together (exited ones included), ns.
fn process_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// (CPU ns, run-queue wait ns) from the text of `/proc/<pid>/task/<tid>/schedstat`.
fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace().map(str::parse::<u64>);
    Some((f.next()?.ok()?, f.next()?.ok()?))
}

/// (comm, kernel thread, user + system ticks) from the text of `/proc/<pid>/task/<tid>/stat`.
fn parse_stat(text: &str) -> Option<(String, bool, u64)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = &text[open + 1..close];
    let f: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let flags: u64 = f.get(6)?.parse().ok()?;
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some((comm.to_string(), flags & PF_KTHREAD != 0, ticks))
}

fn numeric_entries(dir: &Path) -> Vec<u32> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// Nanoseconds per clock tick of /proc/<pid>/stat's times (USER_HZ, 100 on Linux).
const TICK_NS: u64 = 10_000_000;

impl Threads {
    /// Creates threads.csv in `dir` and takes the first reading at `t_s`.
    pub fn start(dir: &Path, own: Own, t_s: f64) -> std::io::Result<Threads> {
        let csv = CsvFile::create(&dir.join("threads.csv"), HEADER)?;
        let mut t = Threads {
            csv,
            own,
            schedstat: std::fs::read_to_string("/proc/self/schedstat").is_ok(),
            known: HashMap::new(),
            last_t: t_s,
            seconds: 0.0,
            groups: BTreeMap::new(),
            own_ns: BTreeMap::new(),
            kernel_ns: 0,
            kernel_peak: 0.0,
            phases: PerPhase::default(),
            process_ns: (0, 0),
            exited_carry: 0,
            host: HostCpu::start(dir, t_s).ok(),
        };
        t.scan();
        Ok(t)
    }

    /// A thread's CPU ns and run-queue wait ns so far (schedstat, else CPU ticks from stat
    /// and no wait).
    fn cpu_ns(&self, base: &str) -> Option<(u64, u64)> {
        if self.schedstat {
            let s = std::fs::read_to_string(format!("{base}/schedstat")).ok()?;
            parse_schedstat(&s)
        } else {
            let text = std::fs::read_to_string(format!("{base}/stat")).ok()?;
            parse_stat(&text).map(|(_, _, ticks)| (ticks * TICK_NS, 0))
        }
    }

    /// Reads every thread of the host; returns (tid, CPU ns, run-queue wait ns since the last
    /// reading) of the threads that used CPU or waited for it. A thread seen for the first time after the first reading
    /// started since the last one: all its CPU counts. (The CPU a thread used between its
    /// last reading and its exit cannot be read per thread; for this process it is in
    /// [`Threads::exited`].)
    fn scan(&mut self) -> Vec<(u32, u64, u64)> {
        let first = self.known.is_empty();
        let mut used = Vec::new();
        let mut seen = HashSet::new();
        self.process_ns.0 = self.process_ns.1;
        for pid in numeric_entries(Path::new("/proc")) {
            if pid == self.own.pid {
                self.process_ns.1 = process_cpu_ns();
            }
            for tid in numeric_entries(Path::new(&format!("/proc/{pid}/task"))) {
                let base = format!("/proc/{pid}/task/{tid}");
                let Some((ns, wait)) = self.cpu_ns(&base) else {
                    continue;
                };
                match self.known.get_mut(&tid) {
                    Some(t) if t.pid == pid && ns >= t.cpu_ns && wait >= t.wait_ns => {
                        if ns > t.cpu_ns || wait > t.wait_ns {
                            used.push((tid, ns - t.cpu_ns, wait - t.wait_ns));
                        }
                        t.cpu_ns = ns;
                        t.wait_ns = wait;
                    }
                    _ => {
                        let text =
                            std::fs::read_to_string(format!("{base}/stat")).unwrap_or_default();
                        let Some((comm, kernel, _)) = parse_stat(&text) else {
                            continue;
                        };
                        let t = Thread {
                            pid,
                            group: group_of(&comm),
                            comm,
                            kernel,
                            own: self.own.label(pid, tid),
                            cpu_ns: ns,
                            wait_ns: wait,
                        };
                        self.known.insert(tid, t);
                        if !first && (ns > 0 || wait > 0) {
                            used.push((tid, ns, wait));
                        }
                    }
                }
                seen.insert(tid);
            }
        }
        self.known.retain(|tid, _| seen.contains(tid));
        used
    }

    /// Takes a reading at `t_s` and writes a row per thread that used CPU since the last.
    pub fn sample(&mut self, t_s: f64, span: &Span) -> std::io::Result<()> {
        let dt = t_s - self.last_t;
        self.last_t = t_s;
        if let Some(Err(_)) = self.host.as_mut().map(|h| h.sample(t_s, span)) {
            self.host = None;
        }
        let used = self.scan();
        if dt <= 0.0 {
            return Ok(());
        }
        self.seconds += dt;
        let mut uses: Vec<Use> = used
            .iter()
            .map(|&(tid, ns, wait)| self.use_of(tid, ns, wait))
            .collect();
        uses.extend(self.exited(&uses));
        for u in &uses {
            self.write_row(t_s, span, u, dt)?;
        }
        self.tally(&uses, span, dt);
        self.csv.flush()
    }

    /// A known thread's use of `ns` of CPU, having waited `wait_ns` for it.
    fn use_of(&self, tid: u32, ns: u64, wait_ns: u64) -> Use {
        let t = &self.known[&tid];
        Use {
            group: t.group.clone(),
            comm: t.comm.clone(),
            pid: t.pid,
            tid,
            kernel: t.kernel,
            own: t.own,
            ns,
            wait_ns: self.schedstat.then_some(wait_ns),
        }
    }

    fn write_row(&mut self, t_s: f64, span: &Span, u: &Use, dt: f64) -> std::io::Result<()> {
        let line = self.csv.start(t_s, span);
        let _ = write!(
            line,
            ",{},{},{},{},{},{},{:.2},",
            field(&u.group),
            field(&u.comm),
            u.pid,
            u.tid,
            u8::from(u.kernel),
            u.own,
            u.ns as f64 / (dt * 1e9) * 100.0
        );
        if let Some(w) = u.wait_ns {
            let _ = write!(line, "{:.2}", w as f64 / (dt * 1e9) * 100.0);
        }
        self.csv.end()
    }

    /// Adds one interval's uses to the sums by group, kernel, own and phase.
    fn tally(&mut self, uses: &[Use], span: &Span, dt: f64) {
        let pct = |ns: u64| ns as f64 / (dt * 1e9) * 100.0;
        let (mut kernel_ns, mut own_ns) = (0, 0);
        let mut by_group: BTreeMap<GroupKey, u64> = BTreeMap::new();
        for u in uses {
            let key = (u.group.clone(), u.kernel, u.own);
            *by_group.entry(key.clone()).or_default() += u.ns;
            self.groups.entry(key).or_default().tids.insert(u.tid);
            if u.kernel {
                kernel_ns += u.ns;
            }
            if !u.own.is_empty() {
                own_ns += u.ns;
                *self.own_ns.entry(u.own).or_default() += u.ns;
            }
        }
        for (key, ns) in by_group {
            let g = self.groups.entry(key).or_default();
            g.cpu_ns += ns;
            g.peak_pct = g.peak_pct.max(pct(ns));
        }
        self.kernel_ns += kernel_ns;
        self.kernel_peak = self.kernel_peak.max(pct(kernel_ns));
        let p = self.phases.get(span);
        p.seconds += dt;
        p.kernel_ns += kernel_ns;
        p.own_ns += own_ns;
    }

    /// This process's CPU in the interval that none of its threads read now accounts for:
    /// threads that exited since the last reading (engine threads that ended with their
    /// phase). Shown as group `(exited)` of the engine, tid 0.
    fn exited(&mut self, uses: &[Use]) -> Option<Use> {
        let own: u64 = uses
            .iter()
            .filter(|u| u.pid == self.own.pid)
            .map(|u| u.ns)
            .sum();
        let (before, now) = self.process_ns;
        let left = now as i64 - before as i64 - own as i64 + self.exited_carry;
        if left < EXITED_MIN_NS {
            self.exited_carry = left;
            return None;
        }
        self.exited_carry = 0;
        Some(Use {
            group: "(exited)".into(),
            comm: String::new(),
            pid: self.own.pid,
            tid: 0,
            kernel: false,
            own: "engine",
            ns: left as u64,
            wait_ns: None,
        })
    }

    /// The summary: kernel total, own threads, the busiest groups, per phase.
    pub fn finish(mut self) -> ThreadSummary {
        let _ = self.csv.flush();
        let mean = |ns: u64, s: f64| {
            if s > 0.0 {
                ns as f64 / (s * 1e9) * 100.0
            } else {
                0.0
            }
        };
        let secs = self.seconds;
        let own = |k: &str| mean(self.own_ns.get(k).copied().unwrap_or(0), secs);
        let mut groups: Vec<GroupCpu> = self
            .groups
            .iter()
            .filter(|(_, g)| g.cpu_ns > 0)
            .map(|((group, kernel, own), g)| GroupCpu {
                group: group.clone(),
                kernel: *kernel,
                own: own.to_string(),
                threads: g.tids.len() as u64,
                cpu_pct_mean: mean(g.cpu_ns, secs),
                cpu_pct_peak: g.peak_pct,
            })
            .collect();
        groups.sort_by(|a, b| b.cpu_pct_mean.total_cmp(&a.cpu_pct_mean));
        ThreadSummary {
            kernel_cpu_pct_mean: mean(self.kernel_ns, secs),
            kernel_cpu_pct_peak: self.kernel_peak,
            own_cpu_pct_mean: OwnCpu {
                main: own("main"),
                engine: own("engine"),
                monitor: own("monitor"),
                server: own("server"),
            },
            groups: top_groups(groups),
            phases: self
                .phases
                .entries
                .iter()
                .map(|(p, s)| PhaseCpu {
                    phase: p.phase().map(str::to_string),
                    outside: p.outside(),
                    seconds: s.seconds,
                    kernel_cpu_pct_mean: mean(s.kernel_ns, s.seconds),
                    own_cpu_pct_mean: mean(s.own_ns, s.seconds),
                })
                .collect(),
            host: self.host.map(HostCpu::finish),
        }
    }
}

/// The groups result.json keeps, busiest first: every own group, the busiest kernel groups
/// and the busiest others.
fn top_groups(sorted: Vec<GroupCpu>) -> Vec<GroupCpu> {
    let (mut kernel, mut other) = (0, 0);
    sorted
        .into_iter()
        .filter(|g| {
            if !g.own.is_empty() {
                true
            } else if g.kernel {
                kernel += 1;
                kernel <= TOP_KERNEL
            } else {
                other += 1;
                other <= TOP_OTHER
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_strip_numbers_and_instances() {
        for (comm, group) in [
            ("kworker/u4:2", "kworker"),
            ("kworker/1:1H-kblockd", "kworker"),
            ("jbd2/loop3-8", "jbd2"),
            ("xfsaild/loop2", "xfsaild"),
            ("btrfs-endio-write", "btrfs-endio-write"),
            ("loop3", "loop"),
            ("flush-9:10", "flush"),
            ("md10_raid10", "md_raid"),
            ("record3", "record"),
            ("scsi_eh_0", "scsi_eh"),
            ("ksoftirqd/0", "ksoftirqd"),
            ("1234", "1234"),
        ] {
            assert_eq!(group_of(comm), group, "{comm}");
        }
    }

    #[test]
    fn stat_lines_with_odd_names_are_read() {
        let line = "42 (a (b) c) S 2 0 0 0 -1 2129984 0 0 0 0 7 5 0 0 20 0 1 0 3 0 0";
        assert_eq!(parse_stat(line), Some(("a (b) c".into(), true, 12)));
        assert_eq!(parse_stat("nonsense"), None);
    }

    #[test]
    fn schedstat_gives_cpu_and_run_queue_wait() {
        assert_eq!(parse_schedstat("81234 5678 9\n"), Some((81234, 5678)));
        assert_eq!(parse_schedstat("81234\n"), None);
    }

    #[test]
    fn own_threads_are_told_apart() {
        let own = Own {
            pid: 100,
            monitor_tids: Arc::new(Mutex::new(vec![102])),
            server_pid: Some(200),
        };
        let labels: Vec<_> = [(100, 100), (100, 101), (100, 102), (200, 201), (300, 300)]
            .iter()
            .map(|&(p, t)| own.label(p, t))
            .collect();
        assert_eq!(labels, ["main", "engine", "monitor", "server", ""]);
    }

    #[test]
    fn a_busy_thread_of_this_process_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let own = Own {
            pid: std::process::id(),
            ..Default::default()
        };
        let mut m = Threads::start(dir.path(), own, 0.0).unwrap();
        let (busy_tx, busy) = std::sync::mpsc::channel();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let spin = std::thread::Builder::new()
            .name("spin7".into())
            .spawn(move || {
                // Until this thread has used 20 ms of CPU, as its own clock says.
                let cpu = || rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
                while cpu().tv_nsec < 20_000_000 && cpu().tv_sec == 0 {}
                busy_tx.send(()).unwrap();
                let _ = stopped.recv();
            })
            .unwrap();
        busy.recv().unwrap();
        m.sample(0.06, &Span::Phase("run".into())).unwrap();
        drop(stop);
        spin.join().unwrap();
        let s = m.finish();
        let g = s
            .groups
            .iter()
            .find(|g| g.group == "spin")
            .expect("the spinning thread's group");
        assert_eq!((g.own.as_str(), g.kernel), ("engine", false));
        assert!(g.cpu_pct_peak > 0.0 && s.own_cpu_pct_mean.engine > 0.0);
        let text = std::fs::read_to_string(dir.path().join("threads.csv")).unwrap();
        let row = text
            .lines()
            .find(|l| l.contains(",spin,spin7,") && l.contains(",run,"))
            .unwrap_or_else(|| panic!("{text}"));
        // With schedstat, the run-queue wait follows the CPU share (empty without it).
        let wait = row.rsplit(',').next().unwrap();
        assert_eq!(wait.is_empty(), !has_schedstat(), "{row}");
    }

    fn has_schedstat() -> bool {
        std::fs::read_to_string("/proc/self/schedstat").is_ok()
    }

    #[test]
    fn threads_that_exit_between_readings_still_count() {
        let dir = tempfile::tempdir().unwrap();
        let own = Own {
            pid: std::process::id(),
            ..Default::default()
        };
        let mut m = Threads::start(dir.path(), own, 0.0).unwrap();
        std::thread::spawn(|| {
            let cpu = || rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
            while cpu().tv_nsec < 20_000_000 && cpu().tv_sec == 0 {}
        })
        .join()
        .unwrap();
        m.sample(0.5, &Span::Outside(crate::timeline::Outside::After))
            .unwrap();
        let s = m.finish();
        let g = s
            .groups
            .iter()
            .find(|g| g.group == "(exited)")
            .expect("exited CPU");
        assert_eq!(g.own, "engine");
        // The 20 ms the thread used count, as the kernel accounts them (in clock ticks: the
        // figure can come out a tick short of 4%).
        assert!(g.cpu_pct_mean > 0.0, "{g:?}");
    }
}
