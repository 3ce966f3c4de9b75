//! The seeds' tables of docs/seeds.md, made by a command rather than by hand. For each seed
//! and its built-in study, [`extract`] reads a results directory into a small summary (the
//! figures used, per stack and repeat, and what ran where), committed as docs/seeds/NNN.json;
//! [`render`] makes the seed's blocks of the page from that summary alone: its comparison
//! tables (the seed's published figure with its words, iotrial's mean ± 95% interval, rank
//! range and top group, their ratio in one unit, the rank agreement with a bootstrap
//! interval), its findings checked against iotrial's groups, and its main conclusion.
//! `cargo bench --bench seed_tables` runs it (bench/seed_tables.rs); a test checks that the
//! page holds what the committed summaries make.

pub mod blocks;
pub mod bootstrap;
pub mod claims;
pub mod compare;
pub mod context;
pub mod extract;
pub mod header;
pub mod s000;
pub mod s001;
pub mod s002;
pub mod s003;
pub mod s004;
pub mod summary;

use claims::Claim;
use context::Context;
use iotrial::result::Trial;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use summary::{Summary, SummaryError};

/// What a seed's section shows, besides the common header and findings.
pub struct Shown {
    /// Its tables and notes, in Markdown.
    pub body: String,
    pub claims: Vec<Claim>,
}

/// One seed: its study, what its summary keeps, and how its section is made.
pub struct Seed {
    /// `000` to `004`.
    pub id: &'static str,
    /// The built-in study that reproduces it.
    pub study: &'static str,
    /// The verdict figures kept for a workload of kind `kind` (none: the workload is left out).
    pub columns: fn(&str) -> &'static [&'static str],
    /// The parameters the header names.
    pub params: &'static [&'static str],
    /// Per-repeat figures read beside the verdict, from a stack's trials.
    pub extra: fn(&[&Trial]) -> BTreeMap<String, Vec<f64>>,
    /// The seed's tables and findings.
    pub show: fn(&Context) -> Shown,
}

/// The five seeds, in order.
pub const SEEDS: &[Seed] = &[s000::SEED, s001::SEED, s002::SEED, s003::SEED, s004::SEED];

/// The seed whose study is `study`.
pub fn by_study(study: &str) -> Option<&'static Seed> {
    SEEDS.iter().find(|s| s.study == study)
}

/// No per-repeat figures beside the verdict.
pub fn no_extra(_: &[&Trial]) -> BTreeMap<String, Vec<f64>> {
    BTreeMap::new()
}

/// Where the summaries live in the repository, and their file name as the page names it.
pub fn summary_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.json"))
}

fn page_name(id: &str) -> String {
    format!("docs/seeds/{id}.json")
}

/// A seed's two blocks from its summary: (name, opening marker, body) for its tables and for
/// its main conclusion.
pub fn render(
    seed: &Seed,
    summary: &Summary,
) -> Result<Vec<(String, String, String)>, SummaryError> {
    let ctx = Context::new(summary)?;
    let shown = (seed.show)(&ctx);
    let (findings, outcomes) = claims::render(&ctx, &shown.claims);
    let mut body = header::text(summary);
    body.push('\n');
    body.push_str(&shown.body);
    body.push('\n');
    body.push_str(&findings);
    let verdict = claims::conclusion(&outcomes);
    let run = if summary.quick {
        format!(
            " (from the quick run of {}, a placeholder until the full study's results replace it)",
            header::day(&summary.created_utc)
        )
    } else {
        String::new()
    };
    let conclusion = format!(
        "Main conclusion: **{verdict}**{run}. {}.\n",
        claims::why(&shown.claims, &outcomes)
    );
    let file = page_name(seed.id);
    Ok(vec![
        (seed.id.to_string(), blocks::begin(seed.id, &file), body),
        (
            format!("{} conclusion", seed.id),
            blocks::begin(&format!("{} conclusion", seed.id), &file),
            conclusion,
        ),
    ])
}

/// The blocks of every seed from the summaries in `dir`; a seed without one gets blocks that
/// say so (an error when no seed has one).
pub fn render_all(dir: &Path) -> Result<Vec<(String, String, String)>, SummaryError> {
    let mut out = Vec::new();
    let mut found = 0;
    for seed in SEEDS {
        let path = summary_path(dir, seed.id);
        if !path.exists() {
            out.extend(unmade(seed));
            continue;
        }
        found += 1;
        let summary = Summary::read(&path)?;
        if summary.seed != seed.id {
            return Err(SummaryError(format!(
                "{}: the summary of seed {}, not {}",
                path.display(),
                summary.seed,
                seed.id
            )));
        }
        out.extend(render(seed, &summary)?);
    }
    if found == 0 {
        return Err(SummaryError(format!(
            "{}: no seed's summary (000.json to 004.json)",
            dir.display()
        )));
    }
    Ok(out)
}

/// The blocks of a seed whose study has no summary yet.
fn unmade(seed: &Seed) -> Vec<(String, String, String)> {
    let file = page_name(seed.id);
    let how = format!(
        "`SEED_TABLES_FROM=<results directory of study {}> SEED_TABLES_WRITE=docs/seeds.md cargo bench --bench seed_tables`",
        seed.study
    );
    vec![
        (
            seed.id.to_string(),
            blocks::begin(seed.id, &file),
            format!(
                "No results of `iotrial study {}` are summarised here yet ({file} is missing): {how} makes this block.\n",
                seed.study
            ),
        ),
        (
            format!("{} conclusion", seed.id),
            blocks::begin(&format!("{} conclusion", seed.id), &file),
            "Main conclusion: none yet, no results of the study are summarised here.\n".into(),
        ),
    ]
}
