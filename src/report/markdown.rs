//! report.md: the header facts, each workload's verdict table and its key figures as Markdown
//! tables, for pasting into a ticket. Cell text is escaped so labels cannot break the table.

use super::model::Report;
use crate::present::chart::Block;
use crate::present::verdict::Medium;
use crate::present::Rows;

/// Escapes text for a Markdown table cell: `|`, `\`, `<`, `>`, `*`, `_`, `` ` `` and line
/// breaks cannot change the table's layout or add markup.
pub fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' | '\\' | '*' | '_' | '`' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A Markdown table; the first column left-aligned, the others right-aligned.
pub fn table(rows: &Rows) -> String {
    let mut s = String::new();
    let line = |cells: &[String]| {
        format!(
            "| {} |\n",
            cells
                .iter()
                .map(|c| cell(c))
                .collect::<Vec<_>>()
                .join(" | ")
        )
    };
    s.push_str(&line(&rows.headings));
    let align: Vec<&str> = (0..rows.headings.len())
        .map(|i| if i == 0 { ":---" } else { "---:" })
        .collect();
    s.push_str(&format!("| {} |\n", align.join(" | ")));
    for r in &rows.rows {
        s.push_str(&line(r));
    }
    s
}

/// The whole report.md.
pub fn render(report: &Report) -> String {
    let mut s = format!("# iotrial report: {}\n\n", cell(&report.study));
    for (k, v) in &report.header {
        s.push_str(&format!("- {}: {}\n", cell(k), cell(v)));
    }
    if !report.unfinished.is_empty() {
        s.push_str("\nTrials that did not finish and are not in this report:\n\n");
        for u in &report.unfinished {
            s.push_str(&format!("- {}\n", cell(u)));
        }
    }
    for w in &report.workloads {
        s.push_str(&format!("\n## Workload {}: verdict\n\n", cell(&w.workload)));
        s.push_str(&table(&w.table.rows_text(Medium::Markdown)));
        s.push_str(&format!(
            "\n{}\n",
            cell(&w.table.method_note(Medium::Markdown))
        ));
        for sec in &w.sections {
            let tables: Vec<_> = sec
                .blocks
                .iter()
                .filter_map(|b| match b {
                    Block::Table(t) => Some(t),
                    _ => None,
                })
                .collect();
            if tables.is_empty() {
                continue;
            }
            s.push_str(&format!("\n### {}\n", cell(&sec.title)));
            for t in tables {
                s.push_str(&format!("\n{}\n\n", cell(&t.caption)));
                s.push_str(&table(&Rows {
                    headings: t.headings.clone(),
                    rows: t.rows.clone(),
                }));
            }
        }
        let warned: Vec<_> = w.built.iter().filter(|b| !b.warnings.is_empty()).collect();
        if !warned.is_empty() {
            s.push_str("\n### Warnings\n\n");
            for b in warned {
                for x in &b.warnings {
                    s.push_str(&format!("- {}: {}\n", cell(&b.stack), cell(x)));
                }
            }
        }
    }
    s.push_str("\nCharts and the stacks as built are in report.html.\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_cannot_break_a_table() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
        assert_eq!(
            cell("<script>alert(1)</script>"),
            "&lt;script&gt;alert(1)&lt;/script&gt;"
        );
        let t = table(&Rows {
            headings: vec!["stack".into(), "x".into()],
            rows: vec![vec!["ext4|x".into(), "1.0".into()]],
        });
        assert_eq!(t, "| stack | x |\n| :--- | ---: |\n| ext4\\|x | 1.0 |\n");
    }
}
