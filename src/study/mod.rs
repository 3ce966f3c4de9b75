//! Studies: workloads x stacks x repeats. A study file (or a built-in one) is parsed and
//! checked ([`mod@file`]), expanded into an ordered list of trials with `--quick`, `--only` and
//! `--device` applied ([`mod@expand`]), each trial named the same on every machine ([`identity`]),
//! the whole study or one part of it run (`--shard`, `--trial`: [`shard`]) with a [`pause`]
//! between its trials when it asks for one, its stacks repeated round-robin and, when the
//! study asks, repeated again until their intervals are narrow enough ([`repeats`]), tracked
//! in the
//! results directory's manifest so a study can be resumed ([`manifest`], [`results`]), and
//! summarised in a comparison table ([`table`]). Results directories of one study's parts are
//! combined by [`merge`], which derives again the figures relating trials ([`relate`]).

pub mod adaptive;
mod assign;
pub mod builtin;
mod error;
pub mod expand;
pub mod file;
pub mod identity;
mod locate;
pub mod manifest;
pub mod merge;
pub mod pause;
mod reference;
pub mod relate;
pub mod repeats;
pub mod results;
pub mod run;
pub mod shard;
pub mod sweep;
pub mod table;
mod write;

pub use assign::Assignments;
pub use error::StudyError;
pub use expand::{expand, Expansion, Options, Trial};
pub use file::{Origin, Quick, Study, WorkloadEntry};
pub use manifest::{Manifest, Resume, Status, TrialRecord};
pub use shard::Shard;
