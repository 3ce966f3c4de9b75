//! The block trace (work in progress).

use super::threads::Own;
use super::Watch;
use crate::result::monitor::MonitorSummary;
use crate::stack::ledger::Ledger;
use crate::timeline::Timeline;
use std::path::Path;

/// A running trace.
pub struct Tracing;

impl Tracing {
    pub fn start(_w: &Watch, _l: &mut Ledger, _own: &Own) -> Result<Tracing, String> {
        Err("not yet".into())
    }
    pub fn stop(
        self,
        _t: &Timeline,
        _d: &Path,
        _l: &mut Ledger,
        _s: &mut MonitorSummary,
    ) -> Vec<String> {
        Vec::new()
    }
}
