//! Whether a built-in study's `--quick` answers what the full study answers. It runs `iotrial
//! study NAME --quick` (or reads a results directory of it) and sets every workload's verdict
//! table beside the full study's, from a results directory of the full study the user names:
//! the full run's top group (its sole best, or the stacks sharing its top), the quick run's,
//! whether the quick run's top group holds the full run's best (where the full run has none,
//! whether the two top groups share a stack), and every pair of stacks both
//! rank: ordered apart by both runs the same way, in opposite orders (a reversal), by one run
//! only, or by neither; then Spearman's rank correlation of the two runs' means. The quick
//! study answers when its top group holds the full study's best and no pair both order apart
//! is reversed. Results: bench/README.md ("The quick studies against the full ones").
//!
//! `QUICK_FULL_STUDY=dvr` (the built-in study), `QUICK_FULL_FULL=DIR` (the full study's results
//! directory, required), `QUICK_FULL_QUICK=DIR,DIR` (existing results directories of the quick
//! study: each is compared; without it the bench runs the quick study once, as root), `cargo
//! bench --bench quick_full`. Exits 1 when a quick run does not answer what the full one does.

use iotrial::present::rankings::{run_agreement, RunAgreement};
use iotrial::present::verdict::VerdictTable;
use iotrial::report::load::Study;
use iotrial::report::model::verdict_tables;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let name = std::env::var("QUICK_FULL_STUDY").unwrap_or_else(|_| "dvr".into());
    let Some(full) = std::env::var_os("QUICK_FULL_FULL").map(PathBuf::from) else {
        println!("quick_full: skipped, QUICK_FULL_FULL names no results directory of the full {name} study");
        return;
    };
    let quick: Vec<PathBuf> = match std::env::var("QUICK_FULL_QUICK") {
        Ok(list) => list.split(',').map(PathBuf::from).collect(),
        Err(_) => match run_quick(&name) {
            Some(d) => vec![d],
            None => return,
        },
    };
    let full_tables = tables(&full);
    println!("full study: {}", full.display());
    let mut all = true;
    for q in &quick {
        println!("\nquick study: {}", q.display());
        for (w, qt) in tables(q) {
            let Some((_, ft)) = full_tables.iter().find(|(fw, _)| *fw == w) else {
                println!("workload {w}: not in the full study");
                continue;
            };
            let a = run_agreement(ft, &qt);
            print_agreement(&w, &a);
            all &= a.answers();
        }
    }
    if !all {
        eprintln!("quick_full: a quick run does not answer what the full study answers");
        std::process::exit(1);
    }
}

/// Every workload's verdict table of the results directory `dir`.
fn tables(dir: &Path) -> Vec<(String, VerdictTable)> {
    let study = Study::load(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    verdict_tables(&study, iotrial::capacity::report_of)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

fn pairs(v: &[(String, String)]) -> String {
    if v.is_empty() {
        return "none".into();
    }
    v.iter()
        .map(|(a, b)| format!("{a} > {b}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn print_agreement(w: &str, a: &RunAgreement) {
    let full_best = if a.reference_sole {
        format!("★ {}", a.reference_top[0])
    } else {
        format!("no sole best; top group {}", a.reference_top.join(", "))
    };
    println!("workload {w}:");
    println!("  full study: {full_best}");
    println!("  quick study's top group: {}", a.top.join(", "));
    let held = if a.reference_sole {
        "its top group holds the full study's best"
    } else {
        "its top group shares a stack with the full study's top group (no best to hold)"
    };
    println!("  {held}: {}", if a.holds_best { "yes" } else { "NO" });
    println!(
        "  pairs both order apart, the same way: {}",
        pairs(&a.agreed)
    );
    println!("  pairs both order apart, reversed: {}", pairs(&a.reversed));
    let by = |who: &str| -> Vec<(String, String)> {
        a.one_sided
            .iter()
            .filter(|p| p.2 == who)
            .map(|p| (p.0.clone(), p.1.clone()))
            .collect()
    };
    println!(
        "  pairs only the full study orders: {}",
        pairs(&by("reference"))
    );
    println!(
        "  pairs only the quick study orders: {}",
        pairs(&by("other"))
    );
    println!("  pairs neither orders: {}", a.tied);
    match a.rho {
        Some(r) => println!("  Spearman's rho of the means: {r:.2}"),
        None => println!("  Spearman's rho of the means: - (fewer than 3 stacks)"),
    }
    println!(
        "  answers what the full study answers: {}",
        if a.answers() { "yes" } else { "NO" }
    );
}

/// Runs the quick study (root); its results directory, or None (printed why).
fn run_quick(name: &str) -> Option<PathBuf> {
    if !rustix::process::geteuid().is_root() {
        println!("quick_full: skipped, the {name} study needs root (loop devices, mkfs, mount)");
        return None;
    }
    let out = tempfile::Builder::new()
        .prefix("quick-full-")
        .tempdir()
        .unwrap()
        .keep();
    let status = Command::new(env!("CARGO_BIN_EXE_iotrial"))
        .args(["study", name, "--quick", "--out"])
        .arg(&out)
        .status()
        .expect("run iotrial");
    assert!(status.success(), "iotrial study {name} --quick failed");
    let dir = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.is_dir())
        .expect("a results directory");
    Some(dir)
}
