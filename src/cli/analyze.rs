//! `iotrial analyze`: a workload's verdict derived again from a samples.csv, with other
//! parameters if asked (`--set window=10s`), without any I/O.

use super::errors::usage;
use super::single::run::print_outcome;
use super::single::stack_args::parse_sets;
use anyhow::Result;
use iotrial::params::Params;
use iotrial::result::{self, Analysis};
use iotrial::workload;
use std::path::PathBuf;

/// The arguments of `iotrial analyze`.
#[derive(clap::Args)]
pub struct AnalyzeArgs {
    workload: String,
    /// A samples.csv written by `iotrial run` (parameters are read from a result.json beside it).
    samples: PathBuf,
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    #[arg(long)]
    json: bool,
}

/// Reads the samples, analyzes them and prints the outcome (or its JSON).
pub fn run(a: AnalyzeArgs) -> Result<()> {
    let w = workload::find(&a.workload).map_err(usage)?;
    let mut overrides = Vec::new();
    let beside = a.samples.with_file_name("result.json");
    let doc = if beside.exists() {
        let doc = result::read(&beside).map_err(usage)?;
        if doc.kind != w.name() {
            return Err(usage(format!(
                "{} is a result of workload kind {}, not {}",
                beside.display(),
                doc.kind,
                w.name()
            )));
        }
        overrides = Params::overrides_from_json(w.params(), &doc.params.clone().into());
        if !a.json {
            eprintln!("parameters and phases from {}", beside.display());
        }
        Some(doc)
    } else {
        None
    };
    overrides.extend(parse_sets(&a.set)?);
    let params = w.resolve(&overrides).map_err(usage)?;
    let streams = result::read_samples(&a.samples, doc.as_ref()).map_err(usage)?;
    let emulated: Vec<serde_json::Value> = doc
        .as_ref()
        .and_then(|d| d.stack["emulated"].as_array().cloned())
        .unwrap_or_default();
    let seen = workload::Seen {
        monitor: doc.as_ref().map(|d| &d.monitor),
        emulated: &emulated,
        time_scale: doc.as_ref().map_or(1.0, |d| d.time_scale),
    };
    let outcome = w.analyze(&params, &streams, &seen).map_err(usage)?;
    if a.json {
        let doc = Analysis {
            format_version: result::FORMAT_VERSION,
            kind: w.name().to_string(),
            params: result::params_object(&params),
            warnings: outcome.warnings(),
            streams: outcome.streams_json(),
            verdict: outcome.verdict_json(),
        };
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print_outcome(outcome.as_ref(), &outcome.warnings());
    }
    Ok(())
}
