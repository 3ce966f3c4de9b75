//! What a seed's tables are rendered from: its summary and, per workload, the comparison
//! iotrial's own verdict table makes of it (groups, ranks, intervals), built once.

use super::summary::{Summary, SummaryError};
use iotrial::present::verdict::VerdictTable;

/// A summary with its workloads' verdict tables.
pub struct Context<'a> {
    pub summary: &'a Summary,
    pub tables: Vec<(String, VerdictTable)>,
}

impl<'a> Context<'a> {
    /// Rebuilds every workload's table from `summary`.
    pub fn new(summary: &'a Summary) -> Result<Context<'a>, SummaryError> {
        let tables = summary
            .workloads
            .iter()
            .map(|w| Ok((w.workload.clone(), w.table(summary.rule())?)))
            .collect::<Result<_, SummaryError>>()?;
        Ok(Context { summary, tables })
    }

    /// `seed 000`.
    pub fn seed_name(&self) -> String {
        format!("seed {}", self.summary.seed)
    }

    /// The table of workload `w`.
    pub fn table(&self, w: &str) -> Option<&VerdictTable> {
        self.tables.iter().find(|(n, _)| n == w).map(|(_, t)| t)
    }

    /// The table of workload `w` and the index of its column `key`.
    pub fn column(&self, w: &str, key: &str) -> Option<(&VerdictTable, usize)> {
        let t = self.table(w)?;
        Some((t, t.columns.iter().position(|c| c.key == key)?))
    }

    /// The table of workload `w` and the index of stack `stack`'s row.
    pub fn row(&self, w: &str, stack: &str) -> Option<(&VerdictTable, usize)> {
        let t = self.table(w)?;
        Some((t, t.rows.iter().position(|r| r.stack == stack)?))
    }
}
