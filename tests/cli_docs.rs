//! What the command line says of itself, made from its one clap definition: completion
//! scripts for bash, zsh and fish, man pages whose first request is `.TH`, and tables that fit
//! the width `COLUMNS` gives.

use assert_cmd::Command;

fn iotrial() -> Command {
    Command::cargo_bin("iotrial").unwrap()
}

fn stdout(args: &[&str], columns: Option<&str>) -> String {
    let mut c = iotrial();
    c.args(args);
    match columns {
        Some(w) => c.env("COLUMNS", w),
        None => c.env_remove("COLUMNS"),
    };
    String::from_utf8(c.assert().success().get_output().stdout.clone()).unwrap()
}

#[test]
fn completions_name_every_subcommand_and_flag() {
    for shell in ["bash", "zsh", "fish"] {
        let s = stdout(&["completions", shell], None);
        for word in ["study", "capacity", "max-repeats", "quick"] {
            assert!(s.contains(word), "{shell}: {word} missing");
        }
    }
    assert!(stdout(&["completions", "bash"], None).contains("complete -F _iotrial"));
    assert!(stdout(&["completions", "zsh"], None).starts_with("#compdef iotrial"));
    iotrial().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn man_pages_open_with_their_title() {
    let page = stdout(&["man"], None);
    assert!(page.starts_with(".TH iotrial 1"), "{}", &page[..80]);
    assert!(page.contains("study") && page.contains(".SH SUBCOMMANDS"));
    let study = stdout(&["man", "study"], None);
    assert!(study.starts_with(".TH iotrial-study 1"), "{}", &study[..80]);
    assert!(study.contains("max\\-repeats"), "its own flags");
    let e = iotrial().args(["man", "nope"]).assert().code(2);
    let err = String::from_utf8_lossy(&e.get_output().stderr).into_owned();
    assert!(
        err.contains("no subcommand 'nope'") && err.contains("study"),
        "{err}"
    );
}

#[test]
fn tables_fit_the_width_columns_gives() {
    let wide = stdout(&["list", "models"], None);
    assert!(
        wide.lines().any(|l| l.chars().count() > 100),
        "to a pipe the table keeps its full lines"
    );
    let fit = stdout(&["list", "models"], Some("100"));
    let longest = fit.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(longest <= 100, "a line of {longest} columns");
    assert!(fit.contains("hdd") && fit.contains("rpm"));
    let studies = stdout(&["list", "studies"], Some("60"));
    assert!(
        studies.lines().all(|l| l.chars().count() <= 60),
        "{studies}"
    );
}
