//! Capacity searches (`iotrial capacity`, a study workload's `capacity = { ... }`): the largest
//! number of record streams (or playback streams, or the highest bitrate) a stack holds in real
//! time, with no overflow and no underrun over a run's `duration`. The search starts where the
//! kind's hammering run points, then steps, bisects and repeats the values at the edge, each
//! probe a full trial on a freshly built stack. What is asked ([`spec`]), how the next value
//! is chosen ([`search`]), how probes are run and written ([`run`]), the result ([`figures`])
//! and its part of the report ([`report`], kind `capacity`).

pub mod figures;
pub mod report;
pub mod run;
pub mod search;
pub mod spec;

pub use spec::CapacitySpec;

use crate::cause::{Cause, HasCause};
use crate::present::KindReport;

/// The `kind` of a capacity search's result.json.
pub const KIND: &str = "capacity";

/// A capacity search could not be made or run.
#[derive(Debug, thiserror::Error)]
pub enum CapacityError {
    /// What was asked cannot be searched (input).
    #[error("capacity: {0}")]
    Spec(String),
    #[error(transparent)]
    Trial(#[from] crate::trial::TrialError),
    #[error(transparent)]
    Result(#[from] crate::result::ResultError),
}

impl HasCause for CapacityError {
    fn why(&self) -> Cause {
        match self {
            CapacityError::Spec(_) => Cause::Input,
            CapacityError::Trial(t) => t.why(),
            CapacityError::Result(_) => Cause::Run,
        }
    }
}

/// The report part of a result.json's `kind`: a capacity search's, or its workload kind's.
pub fn report_of(kind: &str) -> Option<&'static dyn KindReport> {
    if kind == KIND {
        return Some(&report::CapacityReport);
    }
    crate::workload::report_of(kind)
}
