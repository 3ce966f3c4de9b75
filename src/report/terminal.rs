//! What a person sees in the terminal: the per-stream table, the verdict line, and a progress
//! bar with ETA that stays silent when stdout is not a terminal.

use crate::present::Rows;
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Renders rows as a table; every column but the first is right-aligned.
pub fn table(rows: &Rows) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(rows.headings.clone());
    for r in &rows.rows {
        t.add_row(r.clone());
    }
    for i in 1..rows.headings.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t.to_string()
}

/// A progress bar over `total` samples, drawn on stderr only when stdout is a terminal.
pub fn progress(total: u64, what: &str) -> ProgressBar {
    if !std::io::stdout().is_terminal() || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template(
            "{prefix} [{bar:40}] {pos}/{len} {msg}, {elapsed} elapsed, ETA {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    pb
}
