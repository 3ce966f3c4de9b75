//! Where and in which scheduling class the device server's timing threads run: the real-time
//! FIFO class (timer above the request threads) and the CPUs the two timer threads are pinned
//! to, so that one CPU held by the host (a kernel worker that cannot be preempted, a stolen
//! virtual CPU) does not hold a reply that is due.

/// The FIFO priority of the device server's request threads: above every ordinary thread.
pub(crate) const WORKER_PRIORITY: i32 = 1;

/// The FIFO priority of the timer threads: above the request threads, so a reply falling due
/// takes a CPU from a request thread at once instead of waiting for it to block (in the same
/// FIFO priority a running thread keeps its CPU until it does).
pub(crate) const TIMER_PRIORITY: i32 = 2;
const _: () = assert!(TIMER_PRIORITY > WORKER_PRIORITY);

/// Runs the timer as one unpinned thread, without a standby (for comparisons, and hosts where
/// pinning is unwanted).
pub const ONE_TIMER_ENV: &str = "IOTRIAL_EMU_ONE_TIMER";

/// Where the timer's threads run: the lead on one CPU, the standby (if any) on another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// The CPU the lead thread is pinned to (None: not pinned).
    pub lead_cpu: Option<usize>,
    /// Whether a standby thread runs, and the CPU it is pinned to (None: not pinned).
    pub standby: Option<Option<usize>>,
}

impl Placement {
    /// One unpinned thread, as on a host with one CPU.
    pub const ALONE: Placement = Placement {
        lead_cpu: None,
        standby: None,
    };

    /// The placement for a process allowed on `cpus` (ascending): the lead on the highest,
    /// the standby on the next below it (CPU 0, which often takes more of the host's
    /// interrupts, is the last choice); one CPU or none gives one unpinned thread.
    pub fn for_cpus(cpus: &[usize]) -> Placement {
        match cpus {
            [.., standby, lead] => Placement {
                lead_cpu: Some(*lead),
                standby: Some(Some(*standby)),
            },
            _ => Placement::ALONE,
        }
    }

    /// The placement for this process: [`Placement::for_cpus`] on its CPU affinity, or one
    /// thread when [`ONE_TIMER_ENV`] is set.
    pub fn for_this_process() -> Placement {
        if std::env::var_os(ONE_TIMER_ENV).is_some() {
            return Placement::ALONE;
        }
        Placement::for_cpus(&allowed_cpus())
    }

    /// The CPUs the threads are pinned to, lead first.
    pub fn cpus(&self) -> Vec<usize> {
        self.lead_cpu
            .into_iter()
            .chain(self.standby.flatten())
            .collect()
    }
}

pub use crate::engine::cpus::allowed_cpus;

/// Pins the calling thread to `cpu`. Returns whether it did.
pub(crate) fn pin_to(cpu: usize) -> bool {
    if cpu >= libc::CPU_SETSIZE as usize {
        return false;
    }
    // SAFETY: a zeroed set with one CPU below the set's size, applied to the calling thread.
    unsafe {
        let mut set = std::mem::zeroed::<libc::cpu_set_t>();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Puts the calling thread in the real-time FIFO class at `priority`, when permitted (root,
/// or CAP_SYS_NICE): a reply then goes out when it is due instead of waiting for a CPU behind
/// the host's ordinary threads. Returns whether it did.
pub(crate) fn go_real_time(priority: i32) -> bool {
    if std::env::var_os("IOTRIAL_EMU_NO_REALTIME").is_some() {
        return false;
    }
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: sched_setscheduler on the calling thread (pid 0) with a valid parameter block.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

/// Runs `f` with the calling thread in the real-time FIFO class when permitted, so the threads
/// `f` starts inherit it (the device server's FUSE workers: a request then reaches the model,
/// and a model lock one of them holds is released, without waiting behind the host's ordinary
/// threads); the calling thread's own class is restored after.
pub(crate) fn spawning_real_time<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: sched_getscheduler / sched_getparam on the calling thread, into a valid block.
    let (policy, param) = unsafe {
        let mut p = std::mem::zeroed::<libc::sched_param>();
        (libc::sched_getscheduler(0), {
            libc::sched_getparam(0, &mut p);
            p
        })
    };
    let raised = go_real_time(WORKER_PRIORITY);
    let r = f();
    if raised && policy >= 0 {
        // SAFETY: restores the class and parameters read above on the calling thread.
        unsafe { libc::sched_setscheduler(0, policy, &param) };
    }
    r
}

/// The calling thread's scheduling class and priority.
#[cfg(test)]
pub(crate) fn class() -> (i32, i32) {
    // SAFETY: sched_getscheduler / sched_getparam on the calling thread, into a valid block.
    unsafe {
        let mut p = std::mem::zeroed::<libc::sched_param>();
        libc::sched_getparam(0, &mut p);
        (libc::sched_getscheduler(0), p.sched_priority)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_cpus_or_more_give_a_pinned_lead_and_a_standby_on_another() {
        assert_eq!(Placement::for_cpus(&[]), Placement::ALONE);
        assert_eq!(Placement::for_cpus(&[3]), Placement::ALONE);
        let two = Placement::for_cpus(&[0, 1]);
        assert_eq!(two.lead_cpu, Some(1));
        assert_eq!(two.standby, Some(Some(0)));
        assert_eq!(two.cpus(), [1, 0]);
        let sparse = Placement::for_cpus(&[0, 2, 5]);
        assert_eq!(sparse.cpus(), [5, 2]);
        assert!(Placement::ALONE.cpus().is_empty());
    }

    #[test]
    fn this_process_may_run_somewhere_and_a_thread_pins_to_one_of_its_cpus() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        let last = *cpus.last().unwrap();
        let got = std::thread::spawn(move || (pin_to(last), allowed_cpus()))
            .join()
            .unwrap();
        assert_eq!(got, (true, vec![last]));
        assert!(!pin_to(libc::CPU_SETSIZE as usize));
    }
}
