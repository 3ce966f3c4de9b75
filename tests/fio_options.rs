//! The table of fio's options: `iotrial list fio-options` prints it from the parser's own table,
//! docs/fio-options.md is that table as it stands, and every option the installed fio knows
//! (`fio --cmdhelp`, and `fio --enghelp=ENGINE` for each engine iotrial runs) is in it, so a
//! user never meets an option iotrial has no word for.

mod common;

use assert_cmd::Command;
use common::{ready, Need};
use iotrial::workload::job::options;
use std::path::Path;

#[test]
fn docs_page_is_the_table_as_the_parser_holds_it() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/fio-options.md");
    let written = std::fs::read_to_string(&page).unwrap_or_default();
    let current = iotrial::fio::table::markdown();
    assert!(
        written == current,
        "docs/fio-options.md is out of date: regenerate it with `iotrial list fio-options --markdown > docs/fio-options.md`"
    );
    let out = Command::cargo_bin("iotrial")
        .unwrap()
        .args(["list", "fio-options", "--markdown"])
        .assert()
        .success();
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout), current);
}

#[test]
fn the_list_names_each_option_with_its_status() {
    let out = Command::cargo_bin("iotrial")
        .unwrap()
        .args(["list", "fio-options"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.starts_with("iotrial follows fio 3.33"), "{text}");
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with(' ')).collect();
    for (option, status) in [
        ("read_iolog", "honoured, differs"),
        ("serialize_overlap", "honoured"),
        ("cpus_allowed", "honoured"),
        ("gtod_reduce", "ignored"),
        ("exec_prerun", "refused"),
    ] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(option) && l.contains(status)),
            "{option} is {status}"
        );
    }
    let c = iotrial::fio::table::counts();
    assert!(c.listed >= 300, "{c:?}");
}

/// The option names `fio HELP` prints, one per line before its ':'.
fn fio_names(help: &str) -> Vec<String> {
    let out = std::process::Command::new("fio")
        .arg(help)
        .output()
        .expect("fio runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(':').map(|(n, _)| n.trim().to_string()))
        .filter(|n| !n.is_empty() && !n.contains(' '))
        .collect()
}

#[test]
fn every_option_the_installed_fio_knows_is_in_the_table() {
    if !ready(
        "every_option_the_installed_fio_knows_is_in_the_table",
        &[Need::Tool("fio")],
    ) {
        return;
    }
    let mut names = fio_names("--cmdhelp");
    assert!(names.len() > 150, "fio --cmdhelp lists its options");
    for (engine, _) in options::engines::RUNS {
        names.extend(fio_names(&format!("--enghelp={engine}")));
    }
    let unknown: Vec<&String> = names
        .iter()
        .filter(|n| options::find(n).is_none())
        .collect();
    assert!(unknown.is_empty(), "not in iotrial's table: {unknown:?}");
}
