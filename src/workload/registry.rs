//! The registry of workload kinds: every kind iotrial has ([`all`]), one by name ([`find`]), and
//! the report part of one ([`report_of`]), which is what callers hand the report.

use super::kind::Workload;
use super::{burst, dvr, fsck, job, replay, smallrand, stream, tree};
use crate::present::KindReport;

/// Every workload kind iotrial has.
pub fn all() -> Vec<&'static dyn Workload> {
    vec![
        &dvr::Dvr,
        &stream::Stream,
        &tree::Tree,
        &fsck::Fsck,
        &smallrand::SmallRandWorkload,
        &burst::Burst,
        &replay::Replay,
        &job::Job,
    ]
}

/// The workload named `name`, or an error listing the known ones.
pub fn find(name: &str) -> Result<&'static dyn Workload, UnknownWorkload> {
    all()
        .into_iter()
        .find(|w| w.name() == name)
        .ok_or_else(|| UnknownWorkload {
            name: name.to_string(),
            known: all()
                .iter()
                .map(|w| w.name())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The report part of workload kind `kind` (a [`crate::present::KindLookup`]): what callers
/// hand the report, which knows no workload.
pub fn report_of(kind: &str) -> Option<&'static dyn KindReport> {
    find(kind).ok().map(|w| w.report())
}

/// No workload of that name.
#[derive(Debug, thiserror::Error)]
#[error("unknown workload '{name}'; available: {known}")]
pub struct UnknownWorkload {
    pub name: String,
    pub known: String,
}
