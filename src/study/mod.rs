//! Studies: workloads x stacks x repeats. A study file (or a built-in one) is parsed and
//! checked ([`file`]), expanded into an ordered list of trials with `--quick`, `--only` and
//! `--device` applied ([`expand`]), and written to a results directory ([`results`]).

mod assign;
pub mod builtin;
mod error;
pub mod expand;
pub mod file;
mod locate;
pub mod results;
mod write;

pub use assign::Assignments;
pub use error::StudyError;
pub use expand::{expand, Expansion, Options, Trial};
pub use file::{Origin, Quick, Study, WorkloadEntry};
