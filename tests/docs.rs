//! The pages hold together: every relative link of README.md, docs/, bench/README.md and
//! CHANGELOG.md reaches a file that exists and, when it names an anchor, a heading of that
//! file (GitHub's anchors); README.md stays short; and docs/workloads.md's parameter tables
//! are what `iotrial list workloads --markdown` prints today.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown pages checked.
fn pages() -> Vec<PathBuf> {
    let r = root();
    let mut v = vec![
        r.join("README.md"),
        r.join("bench/README.md"),
        r.join("CHANGELOG.md"),
    ];
    for e in std::fs::read_dir(r.join("docs")).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "md") {
            v.push(e.path());
        }
    }
    v.sort();
    v
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings (a repeated heading gets `-1`, `-2`, ... as on GitHub).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for l in text.lines() {
        if l.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !l.starts_with('#') {
            continue;
        }
        let base = slug(l.trim_start_matches('#'));
        let mut a = base.clone();
        let mut n = 0;
        while out.contains(&a) {
            n += 1;
            a = format!("{base}-{n}");
        }
        out.insert(a);
    }
    out
}

/// The targets of a page's inline links `[text](target)`, outside code blocks and spans.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for l in text.lines() {
        if l.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Code spans hold no links.
        let plain: String = l.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = plain.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_reaches_a_file_and_a_heading() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let dest = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            let name = page.strip_prefix(root()).unwrap().display().to_string();
            if !dest.exists() {
                broken.push(format!("{name}: {target}: no such file"));
                continue;
            }
            if let Some(a) = anchor {
                let text = std::fs::read_to_string(&dest).unwrap_or_default();
                if dest.extension().is_some_and(|x| x == "md") && !anchors(&text).contains(a) {
                    broken.push(format!("{name}: {target}: no heading with that anchor"));
                }
            }
        }
    }
    assert!(checked > 20, "the links were found ({checked})");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_is_short_and_docs_has_its_pages() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; the reference belongs in docs/"
    );
    let docs = pages()
        .iter()
        .filter(|p| p.parent() == Some(&root().join("docs")))
        .count();
    assert!(docs >= 6, "{docs} pages in docs/");
    let index = std::fs::read_to_string(root().join("docs/README.md")).unwrap();
    for p in pages()
        .iter()
        .filter(|p| p.parent() == Some(&root().join("docs")))
    {
        let name = p.file_name().unwrap().to_string_lossy();
        assert!(
            name == "README.md" || index.contains(&format!("]({name})")),
            "docs/README.md does not list {name}"
        );
    }
}

#[test]
fn the_parameter_tables_are_what_list_workloads_prints() {
    let page = std::fs::read_to_string(root().join("docs/workloads.md")).unwrap();
    let begin =
        "<!-- parameters: made by `iotrial list workloads --markdown`; do not edit by hand -->\n";
    let end = "<!-- end of parameters -->";
    let from = page.find(begin).expect("the block's first marker") + begin.len();
    let to = page[from..].find(end).expect("the block's last marker") + from;
    let out = assert_cmd::Command::cargo_bin("iotrial")
        .unwrap()
        .args(["list", "workloads", "--markdown"])
        .assert()
        .success();
    let printed = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        page[from..to] == printed,
        "docs/workloads.md's parameters differ from `iotrial list workloads --markdown`: run it and paste its output between the markers"
    );
}

#[test]
fn anchors_follow_github() {
    assert_eq!(slug(" Device twins"), "device-twins");
    assert_eq!(
        slug(" The job workload (fio's vocabulary)"),
        "the-job-workload-fios-vocabulary"
    );
    let a = anchors("# A\n## B c\n```\n# not\n```\n## B c\n");
    assert!(a.contains("a") && a.contains("b-c") && a.contains("b-c-1") && !a.contains("not"));
    let l = links("see [x](a.md#b) and `[y](no.md)`\n```\n[z](no.md)\n```\n");
    assert_eq!(l, ["a.md#b"]);
    assert!(Path::new(&root()).join("docs").is_dir());
}
