//! What a workload hands the report, as data: verdict figures with their direction and unit
//! ([`figure`]), tables of text ([`Rows`]), report sections and charts ([`chart`]), the one
//! comparison of stacks that the terminal table, report.md and report.html all render
//! ([`verdict`]), and the trait through which a workload kind contributes to the report
//! ([`kind`]). Workloads and the report both depend on this module; it depends on neither,
//! so the report never imports a workload and a workload never imports the renderer.

pub mod chart;
pub mod durability;
pub mod figure;
pub mod guest;
pub mod kind;
pub mod monitor;
pub mod rankings;
pub mod verdict;

pub use figure::{num, num_opt, Better, FigureSpec, VerdictFigures};
pub use kind::{KindLookup, KindReport};
pub use monitor::MonitorColumn;

/// A table of strings: headings and rows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rows {
    pub headings: Vec<String>,
    pub rows: Vec<Vec<String>>,
}
