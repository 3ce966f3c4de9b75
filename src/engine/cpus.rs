//! The CPUs a phase's stream threads run on: every CPU the process may use, or a set the
//! trial chose to keep them off a CPU that serves something else (the emulated devices'
//! reply timer, see `trial::cpus`). Each stream thread applies the set to itself as it starts.

use std::fmt;

/// CPU numbers the kernel's affinity calls take (`CPU_SETSIZE`).
const MAX_CPUS: usize = libc::CPU_SETSIZE as usize;

/// The CPUs the calling thread may run on, ascending (empty if the kernel will not say).
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity of the calling thread into a zeroed set of the right size.
    let set = unsafe {
        let mut set = std::mem::zeroed::<libc::cpu_set_t>();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        set
    };
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: CPU_ISSET reads the set filled above, with an index below its size.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// A set of CPU numbers, small enough to copy into every stream thread.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CpuSet {
    bits: [u64; MAX_CPUS / 64],
}

impl CpuSet {
    /// The set of `cpus`; None when it is empty or names a CPU the kernel's sets cannot hold.
    pub fn of(cpus: &[usize]) -> Option<CpuSet> {
        if cpus.is_empty() || cpus.iter().any(|&c| c >= MAX_CPUS) {
            return None;
        }
        let mut bits = [0u64; MAX_CPUS / 64];
        for &c in cpus {
            bits[c / 64] |= 1 << (c % 64);
        }
        Some(CpuSet { bits })
    }

    /// The CPUs in the set, ascending.
    pub fn cpus(&self) -> Vec<usize> {
        self.each().collect()
    }

    /// The CPUs in the set, ascending, without allocating.
    fn each(&self) -> impl Iterator<Item = usize> + '_ {
        (0..MAX_CPUS).filter(|&c| self.holds(c))
    }

    /// Whether CPU `c` is in the set.
    pub fn holds(&self, c: usize) -> bool {
        c < MAX_CPUS && self.bits[c / 64] & (1 << (c % 64)) != 0
    }

    /// Restricts the calling thread to the set. It allocates nothing, so a child process may
    /// call it between fork and exec (threads it starts later inherit the set).
    pub fn pin_calling_thread(&self) -> std::io::Result<()> {
        // SAFETY: a zeroed set filled with CPUs below its size, applied to the calling thread.
        let ok = unsafe {
            let mut set = std::mem::zeroed::<libc::cpu_set_t>();
            for c in self.each() {
                libc::CPU_SET(c, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
        };
        if ok {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.cpus()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_holds_its_cpus_and_refuses_none_or_too_high() {
        let s = CpuSet::of(&[3, 0, 64, 1023]).unwrap();
        assert_eq!(s.cpus(), [0, 3, 64, 1023]);
        assert_eq!(format!("{s:?}"), "{0, 3, 64, 1023}");
        assert!(CpuSet::of(&[]).is_none());
        assert!(CpuSet::of(&[MAX_CPUS]).is_none());
    }

    #[test]
    fn a_thread_pinned_to_a_set_runs_only_there() {
        let allowed = allowed_cpus();
        let &one = allowed
            .last()
            .expect("sched_getaffinity names this process's CPUs");
        let set = CpuSet::of(&[one]).unwrap();
        let seen = std::thread::spawn(move || {
            set.pin_calling_thread().unwrap();
            allowed_cpus()
        })
        .join()
        .unwrap();
        assert_eq!(seen, [one]);
        // Only the new thread was pinned.
        assert_eq!(allowed_cpus(), allowed);
    }

    /// The CPUs thread `name` of this process may run on, as /proc lists them.
    fn cpus_of_thread(name: &str) -> Option<String> {
        std::fs::read_dir("/proc/self/task")
            .ok()?
            .flatten()
            .find_map(|t| {
                let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
                if comm.trim_end() != name {
                    return None;
                }
                let status = std::fs::read_to_string(t.path().join("status")).ok()?;
                status
                    .lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .map(|l| l.trim().to_owned())
            })
    }

    #[test]
    fn the_engine_runs_its_stream_threads_on_its_set() {
        use crate::engine::{
            run, EngineOptions, Op, Pacing, Pattern, Phase, Placement, Plan, Step, Stop, StreamPlan,
        };
        let &one = allowed_cpus().last().expect("this process runs somewhere");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("target");
        std::fs::File::create(&path)
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
        let stream = StreamPlan {
            name: "pinned-w".into(),
            role: "write".into(),
            op: Op::Write,
            region_len: 1 << 20,
            io_size: 4096,
            pattern: Pattern::Sequential,
            pacing: Pacing::Max,
            samples: 1,
            source: None,
            io: Default::default(),
        };
        let phases = vec![Phase {
            name: "write".into(),
            // Until the check below has seen the thread and stops the phase.
            step: Step::Streams {
                streams: vec![0],
                stop: Stop::Duration(3600.0),
            },
        }];
        let plan = Plan::new(vec![stream], phases, false, 7);
        let placements = [Placement {
            path,
            offset: 0,
            len: 1 << 20,
        }];
        let opts = EngineOptions {
            cpus: CpuSet::of(&[one]),
            ..EngineOptions::buffered()
        };
        let mut seen = None;
        run(&plan, &placements, opts, |p| {
            if seen.is_none() {
                seen = cpus_of_thread("pinned-w");
            }
            if seen.is_some() {
                p.request_stop();
            }
        })
        .unwrap();
        assert_eq!(seen, Some(one.to_string()));
    }
}
