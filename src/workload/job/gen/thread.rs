//! Where a clone's thread runs: on the CPUs its job names (`cpus_allowed`, `cpumask`,
//! `numa_cpu_nodes`, with `cpus_allowed_policy`), pinned with the engine's own
//! [`crate::engine::cpus::CpuSet`], and at its job's nice value; set as each phase's thread
//! begins.

use super::super::spec::JobSpec;
use super::generator::JobGen;

impl JobGen {
    /// Puts the calling (stream) thread where the job asks: on its CPUs (`cpus_allowed`,
    /// with the engine's pinning) and at its nice value; a refusal ends the job saying why.
    pub(super) fn place_thread(&mut self, j: &JobSpec) {
        if let Some(cpus) = crate::workload::job::options::sched_cpus(j, self.c.clone) {
            let pinned = crate::engine::cpus::CpuSet::of(&cpus)
                .ok_or_else(|| std::io::Error::other("no CPU"))
                .and_then(|set| set.pin_calling_thread());
            match pinned {
                Ok(()) => self.cpus = Some(cpus),
                Err(e) if self.stop.is_none() => {
                    self.stop = Some(format!("could not run on CPUs {cpus:?}: {e}"));
                }
                Err(_) => {}
            }
        }
        if let Some(n) = j.nice {
            // SAFETY: setpriority of the calling thread (its tid), no pointers.
            let r =
                unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, n) };
            if r < 0 && self.stop.is_none() {
                self.stop = Some(format!(
                    "the kernel refused nice={n} ({})",
                    std::io::Error::last_os_error()
                ));
            }
        }
    }
}
