//! The seeds' tables of docs/seeds.md, made from results directories of the built-in studies.
//!
//! `cargo bench --bench seed_tables` renders every seed's blocks from the committed summaries
//! (docs/seeds/000.json to 004.json) and prints them. Given results directories
//! (`SEED_TABLES_FROM=DIR[:DIR...]`, or `-- --from DIR ...`), it first reads each (matched to
//! its seed by its study's name: dvr 000, streaming 001, smr-metadata 002, cf-cacti 003,
//! fsck-scaling 004) into that seed's summary and writes the summary; with
//! `SEED_TABLES_WRITE=docs/seeds.md` (or `-- --write docs/seeds.md`) it rewrites the page's
//! generated blocks in place, leaving the hand-written text; with `SEED_TABLES_CHECK=docs/seeds.md`
//! (`-- --check docs/seeds.md`) it only says whether the page's blocks are what the summaries
//! make, and exits 1 when one is not. It exits with an error when a full
//! dvr study's raw row is more than 10% from the seed's device-level figures (the twin's
//! calibration). A test (tests/seed_page.rs) fails when the page differs from what the
//! summaries make.

mod seeds;

use seeds::summary::SummaryError;
use std::path::{Path, PathBuf};

struct Args {
    from: Vec<PathBuf>,
    write: Option<PathBuf>,
    check: Option<PathBuf>,
    summaries: PathBuf,
}

fn args() -> Args {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut a = Args {
        from: std::env::var_os("SEED_TABLES_FROM")
            .map(|v| std::env::split_paths(&v).collect())
            .unwrap_or_default(),
        write: std::env::var_os("SEED_TABLES_WRITE").map(PathBuf::from),
        check: std::env::var_os("SEED_TABLES_CHECK").map(PathBuf::from),
        summaries: std::env::var_os("SEED_TABLES_SUMMARIES")
            .map_or_else(|| root.join("docs/seeds"), PathBuf::from),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--from" => a.from.extend(it.next().map(PathBuf::from)),
            "--write" => a.write = it.next().map(PathBuf::from),
            "--check" => a.check = it.next().map(PathBuf::from),
            "--summaries" => a.summaries = it.next().map_or(a.summaries, PathBuf::from),
            // cargo bench passes --bench; nothing else is taken.
            _ => {}
        }
    }
    a
}

fn run(a: &Args) -> Result<bool, SummaryError> {
    let mut calibrated = true;
    for dir in &a.from {
        let study = iotrial::report::load::Study::load(dir)
            .map_err(|e| SummaryError(e.to_string()))?
            .name();
        let seed = seeds::by_study(&study).ok_or_else(|| {
            SummaryError(format!(
                "{}: study '{study}' is none of the seeds' (dvr, streaming, smr-metadata, cf-cacti, fsck-scaling)",
                dir.display()
            ))
        })?;
        let summary = seeds::extract::extract(dir, seed)?;
        let path = seeds::summary_path(&a.summaries, seed.id);
        std::fs::write(&path, summary.to_text())
            .map_err(|e| SummaryError(format!("{}: {e}", path.display())))?;
        eprintln!(
            "seed_tables: seed {} from {} -> {}",
            seed.id,
            dir.display(),
            path.display()
        );
        if seeds::s000::calibrated(&summary) == Some(false) {
            eprintln!("seed_tables: the twin's raw row is more than 10% from the seed's device-level figures (seed 000's calibration table)");
            calibrated = false;
        }
    }
    let blocks = seeds::render_all(&a.summaries)?;
    if let Some(page) = &a.check {
        let text = std::fs::read_to_string(page)
            .map_err(|e| SummaryError(format!("{}: {e}", page.display())))?;
        let stale = seeds::blocks::stale(&text, &blocks).map_err(SummaryError)?;
        if !stale.is_empty() {
            eprintln!(
                "seed_tables: {}: blocks {} differ from what the summaries make",
                page.display(),
                stale.join(", ")
            );
            return Ok(false);
        }
        eprintln!(
            "seed_tables: {}: every block is what the summaries make",
            page.display()
        );
        return Ok(calibrated);
    }
    match &a.write {
        Some(page) => {
            let text = std::fs::read_to_string(page)
                .map_err(|e| SummaryError(format!("{}: {e}", page.display())))?;
            let new = seeds::blocks::replace(&text, &blocks).map_err(SummaryError)?;
            std::fs::write(page, &new)
                .map_err(|e| SummaryError(format!("{}: {e}", page.display())))?;
            eprintln!(
                "seed_tables: {} blocks of {} written ({})",
                blocks.len(),
                page.display(),
                if new == text { "unchanged" } else { "changed" }
            );
        }
        None => {
            for (_, open, body) in &blocks {
                println!("{open}\n{body}");
            }
        }
    }
    Ok(calibrated)
}

fn main() {
    match run(&args()) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("seed_tables: {e}");
            std::process::exit(2);
        }
    }
}
