//! report.md: the header facts, each workload's verdict table and its key figures as Markdown
//! tables, its stacks' emulated devices and warnings, for pasting into a ticket. Cell text is
//! escaped so labels cannot break the table.

use super::model::{BuiltStack, Report};
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

/// The stacks' emulated devices, a line each (how late their replies were, their late seconds
/// and what the host had in them), as report.html shows them under each stack; empty without
/// emulated devices.
fn devices(built: &[BuiltStack]) -> String {
    let lines: Vec<String> = built
        .iter()
        .flat_map(|b| {
            b.devices
                .iter()
                .map(move |d| format!("- {}: {}\n", cell(&b.stack), cell(d)))
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!("\n### Emulated devices\n\n{}", lines.concat())
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
        s.push_str(&devices(&w.built));
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
    use super::super::model::WorkloadReport;
    use super::*;
    use crate::present::verdict::VerdictTable;

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

    #[test]
    fn each_emulated_device_has_its_line_under_its_stack() {
        let built = |stack: &str, devices: &[&str]| BuiltStack {
            stack: stack.into(),
            devices: devices.iter().map(|d| d.to_string()).collect(),
            facts: Vec::new(),
            warnings: Vec::new(),
        };
        let report = Report {
            study: "s".into(),
            header: Vec::new(),
            workloads: vec![WorkloadReport {
                workload: "dvr".into(),
                table: VerdictTable::build(&[], Vec::new()),
                sections: Vec::new(),
                built: vec![
                    built(
                        "raw",
                        &["emulated hdd: late by 1.0 µs", "loop0: 2 of 9 s|late"],
                    ),
                    built("dir", &[]),
                ],
            }],
            unfinished: Vec::new(),
        };
        let md = render(&report);
        assert!(
            md.contains(
                "\n### Emulated devices\n\n- raw: emulated hdd: late by 1.0 µs\n- raw: loop0: 2 of 9 s\\|late\n"
            ),
            "{md}"
        );
        assert!(!md.contains("- dir:"), "{md}");
        assert_eq!(devices(&[built("dir", &[])]), "");
    }
}
