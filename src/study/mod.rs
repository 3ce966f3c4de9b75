//! Studies: workloads x stacks x repeats. A study file (or a built-in one) is parsed and
//! checked ([`plan::file`]), expanded into an ordered list of trials with `--quick`, `--only`
//! and `--device` applied ([`plan::expand`]), each trial named the same on every machine
//! ([`plan::identity`]), the whole study or one part of it run (`--shard`, `--trial`:
//! [`plan::shard`]) with a [`pause`] between its trials when it asks for one, its stacks
//! repeated round-robin and, when the study asks, repeated again until their intervals are
//! narrow enough ([`plan::repeats`]), tracked in the results directory's manifest so a study
//! can be resumed ([`results::manifest`], [`results`]), and summarised in a comparison table
//! ([`results::table`]). Results directories of one study's parts are combined by
//! [`results::merge`], which derives again the figures relating trials ([`results::relate`]).
//!
//! Its rooms follow a study's life: [`plan`] (the file, its expansion into trials, shards and
//! repeats), [`run`] (the trials run, with a [`pause`] between them), and [`results`] (the results
//! directory, its manifest, merging, the table and the figures relating trials).

pub mod builtin;
mod error;
pub mod pause;
pub mod plan;
pub mod results;
pub mod run;

pub use error::StudyError;
pub use plan::assign::Assignments;
pub use plan::expand::{expand, Expansion, Options, Trial};
pub use plan::file::{Origin, Quick, Study, WorkloadEntry};
pub use plan::shard::Shard;
pub use results::manifest::{Manifest, Resume, Status, TrialRecord};
