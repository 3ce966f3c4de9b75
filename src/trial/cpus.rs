//! Which CPUs a trial's stream threads run on. An emulated device's replies go out from a
//! timer thread pinned to one CPU (its lead, see `emu::rt`); a stream thread on that CPU in a
//! long system call (a buffered write copying 1 MiB into fresh page-cache pages) holds the
//! timer until the call returns, since a kernel built without full preemption does not
//! preempt it. With the `apart` policy (a study's `workload_cpus`, `iotrial run
//! --workload-cpus`) the stream threads keep off the lead timers' CPUs while at least one
//! other CPU is left: the emulated hardware gets a CPU of its own, as a real drive has its own
//! processor, and the workload one CPU less. In a guest the workload's threads on the host are
//! QEMU's (its vCPUs, its I/O workers writing the guest's disks), and QEMU runs on the same
//! CPUs. `all` (the default) lets them run everywhere. result.json's `target.workload_cpus`
//! says what a trial did.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// Where a trial's stream threads run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// On every CPU the process may use.
    #[default]
    All,
    /// Off the CPUs of the stack's emulated devices' lead timers, while one CPU is left.
    Apart,
}

impl Policy {
    /// The values a study file or the command line may give.
    pub const VALUES: &'static str = "all, apart";

    /// `all` or `apart`; an error saying what is allowed otherwise.
    pub fn parse(s: &str) -> Result<Policy, String> {
        match s {
            "all" => Ok(Policy::All),
            "apart" => Ok(Policy::Apart),
            _ => Err(format!("`{s}` is not one of {}", Self::VALUES)),
        }
    }

    /// The value as written.
    pub fn name(self) -> &'static str {
        match self {
            Policy::All => "all",
            Policy::Apart => "apart",
        }
    }

    /// Whether this is the default, `all`.
    pub fn is_all(&self) -> bool {
        *self == Policy::All
    }
}

/// The CPUs of `allowed` left once `reserved` are taken out; None when nothing is reserved
/// among them or nothing would be left (the streams then run everywhere).
pub fn keep_off(allowed: &[usize], reserved: &[usize]) -> Option<Vec<usize>> {
    let left: Vec<usize> = allowed
        .iter()
        .copied()
        .filter(|c| !reserved.contains(c))
        .collect();
    (left.len() < allowed.len() && !left.is_empty()).then_some(left)
}

/// The lead timer CPUs of the device servers in `servers` (the stats the ledger gives, each
/// with `server.timer_cpus`, lead first) that serve one of the stack's devices (`device`).
pub fn lead_cpus(servers: &[Json]) -> Vec<usize> {
    let mut cpus: Vec<usize> = servers
        .iter()
        .filter(|s| s.get("device").is_some())
        .filter_map(|s| s["server"]["timer_cpus"][0].as_u64())
        .map(|c| c as usize)
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// The CPUs the stream threads of a trial run on under `policy`, its stack's device servers
/// reporting `servers()` (asked only when the policy needs them); None for every CPU the
/// process may use.
pub fn for_stack(policy: Policy, servers: impl FnOnce() -> Vec<Json>) -> Option<Vec<usize>> {
    match policy {
        Policy::All => None,
        Policy::Apart => keep_off(&crate::engine::cpus::allowed_cpus(), &lead_cpus(&servers())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_policy_reads_back_as_written_and_refuses_others() {
        for p in [Policy::All, Policy::Apart] {
            assert_eq!(Policy::parse(p.name()), Ok(p));
        }
        assert_eq!(Policy::default(), Policy::All);
        let e = Policy::parse("timer").unwrap_err();
        assert!(e.contains("`timer`") && e.contains("all, apart"), "{e}");
        // `all` runs everywhere whatever the servers say.
        let servers = [json!({"device": "loop0", "server": {"timer_cpus": [0]}})];
        let asked = std::cell::Cell::new(false);
        let servers = || {
            asked.set(true);
            servers.to_vec()
        };
        assert_eq!(for_stack(Policy::All, servers), None);
        assert!(!asked.get());
    }

    #[test]
    fn streams_keep_off_the_reserved_cpus_while_one_is_left() {
        assert_eq!(keep_off(&[0, 1], &[1]), Some(vec![0]));
        assert_eq!(keep_off(&[0, 1, 2, 3], &[3, 1]), Some(vec![0, 2]));
        // Nothing reserved here, or nothing left: everywhere.
        assert_eq!(keep_off(&[0, 1], &[]), None);
        assert_eq!(keep_off(&[0, 1], &[5]), None);
        assert_eq!(keep_off(&[1], &[1]), None);
        assert_eq!(keep_off(&[], &[0]), None);
    }

    #[test]
    fn lead_cpus_are_those_of_the_stacks_own_servers() {
        let servers = [
            json!({"device": "loop0", "server": {"timer_cpus": [1, 0]}}),
            json!({"device": "loop1", "server": {"timer_cpus": [1, 0]}}),
            json!({"device": "loop2", "server": {"timer_cpus": [3, 2]}}),
            // One unpinned timer (one CPU, or IOTRIAL_EMU_ONE_TIMER): nothing reserved.
            json!({"device": "loop3", "server": {"timer_cpus": []}}),
            // A server the ledger holds for no device of this stack.
            json!({"server": {"timer_cpus": [2, 1]}}),
        ];
        assert_eq!(lead_cpus(&servers), [1, 3]);
        assert_eq!(lead_cpus(&[]), Vec::<usize>::new());
    }
}
