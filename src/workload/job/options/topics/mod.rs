//! The options iotrial honours, by topic, each file a table of [`super::Opt`]s whose setters
//! fill the fields of a [`JobSpec`](crate::workload::job::spec::JobSpec) it reads: the job's
//! core, its I/O, files, control flow, priorities, scheduling, replay, steady state, verification,
//! zones and outputs.

pub(super) mod control;
pub(super) mod core;
pub(super) mod files;
pub(super) mod io;
pub(super) mod outputs;
pub(super) mod prio;
pub(super) mod replay;
pub(super) mod sched;
pub(super) mod steady;
pub(super) mod verify;
pub(super) mod zones;
