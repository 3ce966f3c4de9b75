//! `iotrial list`: the workload kinds with their parameters, the built-in studies, and the
//! device models with theirs.

use anyhow::Result;
use iotrial::present::Rows;
use iotrial::report::terminal;
use iotrial::study::builtin;
use iotrial::workload;

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ListWhat {
    /// Workload kinds, their parameters, defaults and units.
    Workloads,
    /// Built-in studies.
    Studies,
    /// Device models for emu: devices, their parameters and defaults.
    Models,
}

/// Prints the list asked for.
pub fn run(what: ListWhat) -> Result<()> {
    match what {
        ListWhat::Workloads => workloads(),
        ListWhat::Studies => {
            let rows = Rows {
                headings: ["study", "stacks", "workloads", "file", "what it runs"]
                    .map(String::from)
                    .to_vec(),
                rows: builtin::list()?
                    .into_iter()
                    .map(|b| {
                        vec![
                            b.name,
                            b.stacks.to_string(),
                            b.workloads.to_string(),
                            b.path,
                            b.description,
                        ]
                    })
                    .collect(),
            };
            println!("{}", terminal::table(&rows));
        }
        ListWhat::Models => {
            let rows = Rows {
                headings: ["model", "parameter", "default", "unit", "meaning"]
                    .map(String::from)
                    .to_vec(),
                rows: iotrial::emu::model_table()
                    .into_iter()
                    .map(|r| {
                        vec![
                            r.model.to_string(),
                            r.parameter.to_string(),
                            r.default.to_string(),
                            r.unit.to_string(),
                            r.meaning.to_string(),
                        ]
                    })
                    .collect(),
            };
            println!("{}", terminal::table(&rows));
            let twins = Rows {
                headings: ["twin", "model", "from", "what"].map(String::from).to_vec(),
                rows: iotrial::emu::twinfile::all()
                    .into_iter()
                    .map(|t| {
                        let model = t.spec.trim_start_matches("emu:");
                        let model = model.split(',').next().unwrap_or_default().to_string();
                        vec![t.name, model, t.source, t.summary]
                    })
                    .collect(),
            };
            println!(
                "Twins (--target NAME or a path to NAME.twin; `device characterize --out` writes one; looked up in IOTRIAL_TWINS, then ~/.config/iotrial/twins, then these built-in):"
            );
            println!("{}", terminal::table(&twins));
        }
    }
    Ok(())
}

/// Every workload kind and its parameters, one table each.
fn workloads() {
    for w in workload::all() {
        println!("{}: {}", w.name(), w.about());
        let rows = Rows {
            headings: ["parameter", "default", "unit", "meaning"]
                .map(String::from)
                .to_vec(),
            rows: w
                .params()
                .iter()
                .map(|p| {
                    vec![
                        p.name.to_string(),
                        p.default.to_string(),
                        p.unit.to_string(),
                        p.help.to_string(),
                    ]
                })
                .collect(),
        };
        println!("{}\n", terminal::table(&rows));
    }
}
