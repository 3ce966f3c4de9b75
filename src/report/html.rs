//! report.html: one self-contained page (template, styles, the vendored uPlot library and the
//! chart data all inlined; no network request, enforced by a Content-Security-Policy). Every
//! label is HTML-escaped by the template engine; the chart data are embedded as JSON made safe
//! inside a `<script>` element.

use super::load::Study;
use super::model::{self, Report};
use super::{markdown, ReportError};
use crate::present::chart::Block;
use crate::present::verdict::{Medium, Standing, VerdictTable};
use crate::present::KindLookup;
use minijinja::{AutoEscape, Environment};
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const TEMPLATE: &str = include_str!("assets/report.html.j2");
const CAPTURE_JS: &str = include_str!("assets/capture.js");
const REPORT_JS: &str = include_str!("assets/report.js");
const REPORT_CSS: &str = include_str!("assets/report.css");
const UPLOT_JS: &str = include_str!("vendor/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("vendor/uPlot.min.css");

/// The files a report was written to.
#[derive(Debug, Clone)]
pub struct ReportFiles {
    pub html: PathBuf,
    pub markdown: PathBuf,
}

/// Reads the results directory `results_dir` and writes its report.html and report.md;
/// `kinds` gives each workload kind's columns and sections.
pub fn write_report(results_dir: &Path, kinds: KindLookup) -> Result<ReportFiles, ReportError> {
    let study = Study::load(results_dir)?;
    let report = model::build(&study, kinds)?;
    let files = ReportFiles {
        html: results_dir.join("report.html"),
        markdown: results_dir.join("report.md"),
    };
    let html = render(&report)?;
    std::fs::write(&files.html, html).map_err(|e| ReportError::io(&files.html, e))?;
    let md = markdown::render(&report);
    std::fs::write(&files.markdown, md).map_err(|e| ReportError::io(&files.markdown, e))?;
    Ok(files)
}

/// JSON text that is safe inside a `<script>` element: `<`, `>`, `&` and the JavaScript line
/// separators are written as `\uXXXX` escapes (they can only occur inside JSON strings).
pub fn script_safe_json(v: &Json) -> String {
    let text = serde_json::to_string(v).expect("JSON serializes");
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// An id for an HTML anchor: lowercase letters, digits and dashes, unique within `used`.
fn anchor(text: &str, used: &mut Vec<String>) -> String {
    let mut a: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    a = a
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    if a.is_empty() {
        a = "part".into();
    }
    let base = a.clone();
    let mut n = 2;
    while used.contains(&a) {
        a = format!("{base}-{n}");
        n += 1;
    }
    used.push(a.clone());
    a
}

#[derive(Serialize)]
struct Cell {
    text: String,
    class: String,
}

#[derive(Serialize)]
struct Row {
    /// The one best stack (★).
    best: bool,
    /// One of the stacks the data cannot separate at the top (☆).
    shared: bool,
    cells: Vec<Cell>,
}

/// The verdict table's rows: the best stack flagged (the template stars it) or the stacks
/// sharing the top, a column's one best value and the values sharing its best classed, and
/// the target cells classed.
fn table_rows(t: &VerdictTable) -> Vec<Row> {
    let lead = t.first_figure_cell();
    let target = t.has_target().then_some(lead + t.columns.len());
    (0..t.rows.len())
        .map(|i| {
            let cells = t
                .cells(i)
                .into_iter()
                .enumerate()
                .map(|(j, text)| {
                    let figure = (lead..lead + t.columns.len()).contains(&j);
                    let class = if figure && t.standing(i, j - lead) == Standing::Best {
                        "top"
                    } else if figure && t.standing(i, j - lead) == Standing::SharesBest {
                        "top shared"
                    } else if Some(j) == target {
                        t.rows[i].target.class()
                    } else {
                        ""
                    };
                    Cell {
                        text,
                        class: class.into(),
                    }
                })
                .collect();
            Row {
                best: t.is_best_stack(i),
                shared: t.shares_top(i),
                cells,
            }
        })
        .collect()
}

/// The template's context and the charts' data, built from the report.
fn context(report: &Report) -> (Json, Json) {
    let mut charts = BTreeMap::new();
    let mut used = Vec::new();
    let mut workloads = Vec::new();
    for w in &report.workloads {
        let rows = table_rows(&w.table);
        let wa = anchor(&w.workload, &mut used);
        let sections: Vec<Json> = w
            .sections
            .iter()
            .map(|s| {
                let blocks: Vec<Json> = s
                    .blocks
                    .iter()
                    .map(|b| match b {
                        Block::Chart(c) => {
                            let id = format!("c{}", charts.len());
                            charts.insert(id.clone(), json!(c));
                            json!({"kind": "chart", "id": id, "title": c.title, "caption": c.caption})
                        }
                        other => json!(other),
                    })
                    .collect();
                json!({"title": s.title, "intro": s.intro, "anchor": anchor(&format!("{wa}-{}", s.title), &mut used), "blocks": blocks})
            })
            .collect();
        let built: Vec<Json> = w
            .built
            .iter()
            .map(|b| json!({"stack": b.stack, "devices": b.devices, "facts": b.facts, "warnings": b.warnings}))
            .collect();
        workloads.push(json!({
            "name": w.workload,
            "anchor": wa,
            "table": {"headings": w.table.headings(Medium::Html), "rows": rows, "note": w.table.method_note(Medium::Html)},
            "sections": sections,
            "built": built,
        }));
    }
    let ctx = json!({
        "study": report.study,
        "header": report.header,
        "workloads": workloads,
        "unfinished": report.unfinished,
    });
    (ctx, json!({ "charts": charts }))
}

/// A fresh nonce for the page's Content-Security-Policy.
fn nonce() -> String {
    let n: u128 = rand::random();
    format!("{n:032x}")
}

/// The whole page.
pub fn render(report: &Report) -> Result<String, ReportError> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.add_template("report.html", TEMPLATE)
        .map_err(|e| ReportError::Template(e.to_string()))?;
    let (mut ctx, data) = context(report);
    let extra = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "nonce": nonce(),
        "data": script_safe_json(&data),
        "capture_js": CAPTURE_JS,
        "report_js": REPORT_JS,
        "report_css": REPORT_CSS,
        "uplot_js": UPLOT_JS,
        "uplot_css": UPLOT_CSS,
    });
    if let (Some(c), Some(e)) = (ctx.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    env.get_template("report.html")
        .and_then(|t| t.render(minijinja::value::Serde(&ctx)))
        .map_err(|e| ReportError::Template(format!("{e:#}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::kind::example::{lookup, verdict};
    use crate::result::example;

    #[test]
    fn json_cannot_close_the_script_element() {
        let v = json!({"stack": "</script><script>alert(1)</script>", "s": "a\u{2028}b&c"});
        let s = script_safe_json(&v);
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        assert!(!s.contains('\u{2028}'));
        let back: Json = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn vendored_code_cannot_close_its_script_element() {
        for code in [UPLOT_JS, REPORT_JS, CAPTURE_JS] {
            assert!(!code.to_ascii_lowercase().contains("</script"));
        }
    }

    #[test]
    fn labels_from_results_are_escaped() {
        let d = tempfile::tempdir().unwrap();
        let xss = "<script>alert(1)</script>";
        let t = d.path().join("trials/x/dvr/r1");
        std::fs::create_dir_all(&t).unwrap();
        let mut result = example::doc("test", verdict(20.0, 1.0, true));
        result.stack = json!({"mount": {"options": format!("rw,{xss}")}});
        result.warnings = vec![xss.into()];
        crate::result::write(&t.join("result.json"), &result).unwrap();
        let manifest = json!({"study": xss, "host": {"hostname": xss, "kernel": xss},
            "trials": [{"stack": xss, "workload": "dvr", "repeat": 1, "status": "done", "path": "trials/x/dvr/r1"},
                       {"stack": xss, "workload": "dvr", "repeat": 2, "status": "failed", "path": "trials/x/dvr/r2"}]});
        std::fs::write(d.path().join("manifest.json"), manifest.to_string()).unwrap();
        let files = write_report(d.path(), lookup).unwrap();
        let html = std::fs::read_to_string(files.html).unwrap();
        assert!(!html.contains(xss), "unescaped label in report.html");
        assert!(html.matches("&lt;script&gt;alert(1)&lt;").count() >= 6);
        assert!(html.contains("failed"));
        let md = std::fs::read_to_string(files.markdown).unwrap();
        assert!(!md.contains(xss) && md.contains("&lt;script&gt;alert(1)"));
    }

    #[test]
    fn baseline_with_the_best_values_is_not_starred() {
        let d = tempfile::tempdir().unwrap();
        let mut trials = Vec::new();
        for (stack, mbit) in [("a", 20.0), ("b", 18.0), ("host", 90.0)] {
            for (r, off) in [(1, 0.0), (2, 0.1), (3, -0.1)] {
                let t = d.path().join(format!("trials/{stack}/w/r{r}"));
                std::fs::create_dir_all(&t).unwrap();
                let result = example::doc("test", verdict(mbit + off, 1.0, true));
                crate::result::write(&t.join("result.json"), &result).unwrap();
                trials.push(
                    json!({"stack": stack, "workload": "w", "repeat": r, "status": "done",
                               "path": format!("trials/{stack}/w/r{r}")}),
                );
            }
        }
        let manifest = json!({"study": "s", "trials": trials, "resolved": {"stacks": [
            {"name": "a"}, {"name": "b"}, {"name": "host", "baseline": true}]}});
        std::fs::write(d.path().join("manifest.json"), manifest.to_string()).unwrap();
        let files = write_report(d.path(), lookup).unwrap();
        let md = std::fs::read_to_string(files.markdown).unwrap();
        // sd 0.1, t(0.975, 2) = 4.303: half-width 0.248.
        assert!(md.contains("| ★ a | 3 | 1 | 20.0 ± 0.248 \\* |"), "{md}");
        assert!(
            md.contains("| host (baseline) | 3 | - | 90.0 ± 0.248 |"),
            "{md}"
        );
        assert!(md.contains("never ranked"), "{md}");
        let html = std::fs::read_to_string(files.html).unwrap();
        assert_eq!(
            html.matches(r#"separated from every other stack">★</span> a<"#)
                .count(),
            1
        );
        assert_eq!(html.matches(r#"class="top""#).count(), 1);
        assert_eq!(
            html.matches(r#"class="top shared""#).count(),
            0,
            "a's and b's equal pre-rolls tie: where every stack ties, none is marked"
        );
        assert!(html.contains("<td>host (baseline)</td><td>3</td><td>-</td><td>90.0 ± 0.248</td>"));
    }

    #[test]
    fn anchors_are_unique_and_plain() {
        let mut used = Vec::new();
        assert_eq!(anchor("dvr-Stack <script>", &mut used), "dvr-stack-script");
        assert_eq!(
            anchor("dvr-Stack <script>", &mut used),
            "dvr-stack-script-2"
        );
        assert_eq!(anchor("★", &mut used), "part");
    }
}
