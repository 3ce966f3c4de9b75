//! What a person sees in the terminal: tables that wrap their widest columns to the
//! terminal's width (or to `COLUMNS` when it is set, as `ls` reads it), the verdict line, and
//! a progress bar with ETA that stays silent when stdout is not a terminal.

use crate::present::Rows;
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, ContentArrangement, Table};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// The width tables fit: `COLUMNS` when it holds a width, else the terminal's when stdout is
/// one; `None` (no limit) when the output goes to a file or a pipe.
pub fn width() -> Option<u16> {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<u16>().ok())
        .filter(|&c| c > 0);
    if columns.is_some() {
        return columns;
    }
    if !std::io::stdout().is_terminal() {
        return None;
    }
    Table::new().width()
}

/// Renders rows as a table fitting [`width`]; every column but the first is right-aligned.
pub fn table(rows: &Rows) -> String {
    table_within(rows, width())
}

/// Renders rows as a table whose lines are at most `width` characters, its widest columns
/// wrapped to fit (no limit for `None`).
pub fn table_within(rows: &Rows, width: Option<u16>) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    if let Some(w) = width {
        t.set_content_arrangement(ContentArrangement::Dynamic);
        t.set_width(w);
    }
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

/// `text` with its words wrapped to lines of at most [`width`] characters (a word longer
/// than the width stands on its own line).
pub fn paragraph(text: &str) -> String {
    paragraph_within(text, width())
}

/// `text` wrapped to lines of at most `width` characters (unchanged for `None`).
pub fn paragraph_within(text: &str, width: Option<u16>) -> String {
    let Some(w) = width else {
        return text.to_string();
    };
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= w as usize => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines.join("\n")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paragraph_wraps_its_words_to_the_width_given() {
        let text = "one two three four five six";
        assert_eq!(paragraph_within(text, None), text);
        assert_eq!(
            paragraph_within(text, Some(9)),
            "one two\nthree\nfour five\nsix"
        );
        assert_eq!(paragraph_within("abcdefghijk x", Some(4)), "abcdefghijk\nx");
    }

    #[test]
    fn a_wide_table_wraps_to_the_width_given() {
        let rows = Rows {
            headings: vec!["model".into(), "parameter".into(), "meaning".into()],
            rows: vec![vec![
                "hdd".into(),
                "rpm".into(),
                "spindle speed in revolutions per minute, which sets the rotational latency of every request that misses the drive's buffer".into(),
            ]],
        };
        let wide = table_within(&rows, None);
        assert!(wide.lines().any(|l| l.chars().count() > 100));
        let narrow = table_within(&rows, Some(60));
        assert!(narrow.lines().all(|l| l.chars().count() <= 60), "{narrow}");
        assert!(narrow.contains("revolutions") && narrow.contains("buffer"));
    }
}
