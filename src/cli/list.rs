//! `iotrial list`: the workload kinds with their parameters, the built-in studies, the device
//! models with theirs, and fio's options with what iotrial does with each; `--markdown` prints
//! the same tables as Markdown (docs/workloads.md and docs/fio-options.md hold them as this
//! prints them, checked by tests).

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
    /// Every option of fio's HOWTO (and the others iotrial reads): honoured, honoured with a
    /// difference, ignored as harmless or refused, with why.
    FioOptions,
}

/// Prints `rows` as a terminal table, or as Markdown.
fn print(rows: &Rows, markdown: bool) {
    if markdown {
        print!("{}", iotrial::report::markdown::table(rows));
    } else {
        println!("{}", terminal::table(rows));
    }
}

/// Prints the list asked for, as terminal tables or as Markdown.
pub fn run(what: ListWhat, markdown: bool) -> Result<()> {
    match what {
        ListWhat::FioOptions if markdown => print!("{}", iotrial::fio::table::markdown()),
        ListWhat::FioOptions => print!("{}", iotrial::fio::table::text()),
        ListWhat::Workloads => workloads(markdown),
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
            print(&rows, markdown);
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
            print(&rows, markdown);
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
            let heading = "Twins (--target NAME or a path to NAME.twin; `device characterize --out` writes one; looked up in IOTRIAL_TWINS, then ~/.config/iotrial/twins, then these built-in):";
            if markdown {
                println!("\n{heading}\n");
            } else {
                println!("{}", terminal::paragraph(heading));
            }
            print(&twins, markdown);
        }
    }
    Ok(())
}

/// Every workload kind and its parameters, one table each.
fn workloads(markdown: bool) {
    for (i, w) in workload::all().into_iter().enumerate() {
        if markdown {
            if i > 0 {
                println!();
            }
            println!("### {}\n\n{}\n", w.name(), w.about());
        } else {
            println!("{}: {}", w.name(), w.about());
        }
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
        if markdown {
            print(&rows, true);
        } else {
            println!("{}\n", terminal::table(&rows));
        }
    }
}
