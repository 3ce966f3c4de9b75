//! `iotrial device`: `serve` puts an emulated device under any program until Ctrl-C; `probe`
//! measures a device seeker-style beside the model's expectation; `characterize` times a
//! device and writes its twin; `validate` sets a device and its twin side by side.

mod characterize;
mod laps;
mod validate;

use super::errors::{failed, refused_flag, usage};
use anyhow::{Context, Result};
use iotrial::present::Rows;
use iotrial::report::{self, terminal};
use iotrial::stack::ledger::Ledger;
use iotrial::stack::provision::BuildOptions;
use iotrial::stack::DeviceSpec;
use iotrial::units::Percent;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The arguments of `iotrial device`.
#[derive(clap::Args)]
pub struct DeviceArgs {
    #[command(subcommand)]
    what: DeviceCommand,
}

#[derive(clap::Subcommand)]
enum DeviceCommand {
    /// Serve an emulated device to any program: prints the loop device to use (fio, a
    /// database, a recorder), serves until Ctrl-C or SIGTERM, or until the process that
    /// started it is gone, then releases everything and prints the model's statistics.
    Serve {
        /// The device: emu:MODEL[,k=v] (see `iotrial list models`).
        #[arg(required_unless_present = "for_ledger")]
        spec: Option<String>,
        /// Print the device, its model and the expectations `device probe` uses as JSON, and
        /// the statistics at the end as JSON.
        #[arg(long)]
        json: bool,
        /// Serve the emulated devices of the run whose ledger this is, and release what it
        /// lists when the run is gone (started by iotrial itself).
        #[arg(long, hide = true, value_name = "LEDGER")]
        for_ledger: Option<PathBuf>,
    },
    /// Seeker-style probe: random 4 KiB read access time, sequential read MB/s at the outer and
    /// inner 1%, random 4 KiB write IOPS, sequential write MB/s; beside the model's expectation
    /// for emu: devices. Writes to the device.
    Probe {
        /// The device: emu:MODEL[,k=v], image:[PATH][,size=], block:/dev/X.
        spec: String,
        /// Random I/Os per random phase.
        #[arg(long, default_value_t = 1000)]
        random_ios: usize,
        /// Bytes per sequential phase (at most 1% of the device).
        #[arg(long, default_value = "256MiB")]
        seq_bytes: String,
        /// Allow destroying the signatures on this block device.
        #[arg(long, value_name = "DEVICE")]
        wipe: Vec<PathBuf>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Time a block device and fit the model that explains it (hdd, smr or flash): prints
    /// every parameter with how it was measured, those it could not identify with the probe
    /// that would, and the twin as a device spec on the last line. Writes to the device
    /// unless --read-only.
    Characterize {
        /// The device: block:/dev/X (or emu:MODEL[,k=v], image:[PATH][,size=]).
        spec: String,
        /// Write the twin as a preset file (usable as --target FILE, or by its name when it
        /// lies in a twins directory: see `iotrial list models`).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Run only the probes that read; the device is opened read-only.
        #[arg(long)]
        read_only: bool,
        /// The device runs this many times faster than the one it stands for (an emulated
        /// device served with scale=): measured times are multiplied by it.
        #[arg(long, default_value_t = 1.0, value_name = "FACTOR")]
        time_scale: f64,
        /// Seed of the probes' offsets.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Keep the host's CPUs out of idle sleep while timing (CPU latency limit held at
        /// 0 µs through /dev/cpu_dma_latency), as `device validate --poll-idle` does: the
        /// host's path characterize nets out is then the one such a validate meets. Needs
        /// root; idle CPUs spin until the command ends.
        #[arg(long)]
        poll_idle: bool,
        /// Allow destroying the signatures on this block device.
        #[arg(long, value_name = "DEVICE")]
        wipe: Vec<PathBuf>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run one validation set (QD1 and QD32 random reads, a write burst, a sequential pass) on
    /// a block device and on its twin, alternated, and print the Ruemmler-Wilkes demerit per
    /// workload beside the device's own round-to-round demerit. Writes to the device unless
    /// --read-only.
    Validate {
        /// The device: block:/dev/X.
        spec: String,
        /// The twin: an emu: spec or a twin file (by path or name).
        #[arg(long)]
        twin: String,
        /// Rounds on each (at least 3): each I/O's response time is its median over them.
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// QD32 random reads in each round (at least 320). A drive whose QD32 reads switch
        /// between regimes (an RPO drive whose aging limit is near what a read waits at QD32)
        /// needs tens of thousands for its own rounds at other offsets to agree.
        #[arg(long, default_value_t = iotrial::probe::validate::QD32_READS, value_name = "N")]
        qd32_reads: usize,
        /// The device runs this many times faster than the one it stands for (an emulated
        /// device served with scale=): its times are multiplied by it.
        #[arg(long, default_value_t = 1.0, value_name = "FACTOR")]
        time_scale: f64,
        /// Also a small dvr and a small tree on each filesystem named (`--fs` alone: ext4 and
        /// xfs; `--fs=xfs`: xfs only) on both, in the same rounds, figures side by side.
        #[arg(
            long,
            value_name = "FS,...",
            num_args = 0..=1,
            require_equals = true,
            default_missing_value = "ext4,xfs",
            value_delimiter = ','
        )]
        fs: Option<Vec<String>>,
        /// With --fs: after --rounds, more rounds of each filesystem workload that has a
        /// figure whose 90% interval is wider than --fs-interval, up to this many in all
        /// (default: --rounds, no more).
        #[arg(long, value_name = "N")]
        fs_max_rounds: Option<usize>,
        /// With --fs-max-rounds: the half-width of a figure's 90% interval, over its ratio,
        /// that is narrow enough (default 5%, half the 10% margin; below it).
        #[arg(long, value_name = "P%", value_parser = Percent::parse)]
        fs_interval: Option<Percent>,
        /// Run only the reads (QD1, QD32, the pass), the device opened read-only: the write
        /// burst is not run and says so. Not with --fs.
        #[arg(long, conflicts_with = "fs")]
        read_only: bool,
        /// Keep the host's CPUs out of idle sleep while timing (CPU latency limit held at
        /// 0 µs through /dev/cpu_dma_latency, as cyclictest does): a CPU woken from idle
        /// answers late by a varying amount, which widens both sides' response times. Needs
        /// root; idle CPUs spin until the command ends.
        #[arg(long)]
        poll_idle: bool,
        /// Allow destroying the signatures on this block device.
        #[arg(long, value_name = "DEVICE")]
        wipe: Vec<PathBuf>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs the device subcommand.
pub fn run(a: DeviceArgs, stop: &Arc<AtomicBool>) -> Result<()> {
    match a.what {
        DeviceCommand::Serve {
            spec,
            json,
            for_ledger,
        } => match for_ledger {
            Some(ledger) => {
                if iotrial::stack::server::process::serve_for_ledger(&ledger) {
                    Ok(())
                } else {
                    anyhow::bail!("some resources were left for `iotrial cleanup`")
                }
            }
            None => serve(spec.as_deref().unwrap_or_default(), json, stop),
        },
        DeviceCommand::Probe {
            spec,
            random_ios,
            seq_bytes,
            wipe,
            json,
        } => probe(&spec, random_ios, &seq_bytes, wipe, json, stop),
        DeviceCommand::Characterize {
            spec,
            out,
            read_only,
            time_scale,
            seed,
            poll_idle,
            wipe,
            json,
        } => {
            let opts = iotrial::probe::character::CharOptions {
                read_only,
                scale: time_scale,
                seed,
                wipe,
                poll_idle,
            };
            characterize::run(&spec, out.as_deref(), &opts, json, stop)
        }
        DeviceCommand::Validate {
            spec,
            twin,
            rounds,
            qd32_reads,
            time_scale,
            fs,
            fs_max_rounds,
            fs_interval,
            read_only,
            poll_idle,
            wipe,
            json,
        } => validate::run(
            validate::Args {
                spec,
                twin,
                rounds,
                qd32_reads,
                time_scale,
                fs: fs.unwrap_or_default(),
                fs_max_rounds: fs_max_rounds.unwrap_or(rounds),
                fs_interval: fs_interval.map_or(validate::FS_INTERVAL, Percent::share),
                read_only,
                poll_idle,
                wipe,
                json,
            },
            stop,
        ),
    }
}

/// `--poll-idle`: the CPUs held out of idle sleep until the guard drops (the kernel drops it
/// with the process); a limit that cannot be held is named by its flag.
fn poll_idle(on: bool) -> Result<Option<iotrial::probe::idle::PollIdle>> {
    match on {
        true => iotrial::probe::idle::PollIdle::hold()
            .map(Some)
            .map_err(|e| refused_flag("--poll-idle", e)),
        false => Ok(None),
    }
}

/// Probes the device and prints its figures beside the model's.
fn probe(
    spec: &str,
    random_ios: usize,
    seq_bytes: &str,
    wipe: Vec<PathBuf>,
    as_json: bool,
    stop: &Arc<AtomicBool>,
) -> Result<()> {
    use iotrial::probe::{probe, ProbeOptions};
    let device = DeviceSpec::parse(spec).map_err(failed)?;
    let seq_bytes = iotrial::units::parse_size(seq_bytes)
        .map_err(|e| usage(format!("--seq-bytes: {}", e.0)))?;
    if random_ios == 0 {
        return Err(usage("--random-ios: must be at least 1"));
    }
    let opts = ProbeOptions {
        random_ios,
        seq_bytes,
        ..Default::default()
    };
    let build = BuildOptions {
        wipe,
        ..Default::default()
    };
    let mut ledger = Ledger::new().context("create the resource ledger")?;
    let r = probe(&device, &opts, &build, &mut ledger, stop).map_err(failed)?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    let rows = Rows {
        headings: ["figure", "measured", "model expects", "difference", "note"]
            .map(String::from)
            .to_vec(),
        rows: r
            .figures
            .iter()
            .map(|f| {
                vec![
                    format!("{} ({})", f.name, f.unit),
                    format!("{:.3}", f.measured),
                    f.expected
                        .map(|e| format!("{e:.3}"))
                        .unwrap_or_else(|| "-".into()),
                    f.diff_pct
                        .map(|d| format!("{d:+.1}%"))
                        .unwrap_or_else(|| "-".into()),
                    if f.host_bound {
                        format!(
                            "may be host-bound ({:.0} µs of wall time per I/O): lower the scale",
                            f.wall_us_per_io
                        )
                    } else if f.time_scale != r.time_scale {
                        format!(
                            "at scale {}: the emulator's own ~{} µs per I/O under {}% of it",
                            f.time_scale,
                            iotrial::probe::HOST_PATH_US,
                            iotrial::probe::HOST_PATH_SHARE * 100.0
                        )
                    } else {
                        String::new()
                    },
                ]
            })
            .collect(),
    };
    println!(
        "{} ({} bytes){}",
        r.device,
        r.capacity_bytes,
        if r.time_scale != 1.0 {
            format!(", times scaled back by {}", r.time_scale)
        } else {
            String::new()
        }
    );
    println!("{}", terminal::table(&rows));
    Ok(())
}

/// Serves the device until Ctrl-C or SIGTERM, then prints its statistics.
fn serve(spec: &str, as_json: bool, stop: &Arc<AtomicBool>) -> Result<()> {
    use iotrial::stack::serve::serve;
    let mut ledger = Ledger::new().context("create the resource ledger")?;
    let ready = |s: &iotrial::stack::serve::Served| {
        if as_json {
            println!("{}", serde_json::to_string(s).expect("serializes"));
        } else {
            println!("{}", s.device.display());
            eprintln!(
                "serving {} ({} bytes, model {}) on {}; Ctrl-C to stop",
                s.spec,
                s.capacity_bytes,
                s.model,
                s.device.display()
            );
        }
        if !s.image_in_memory {
            eprintln!(
                "note: its image {} is on the host's disk, so a reply may wait for the host's write-back; TMPDIR on a tmpfs (TMPDIR=/dev/shm) keeps it in memory",
                s.image.display()
            );
        }
        use std::io::Write;
        let _ = std::io::stdout().flush();
    };
    let (stats, warning) = serve(spec, &mut ledger, stop, ready).map_err(failed)?;
    // When the parent is gone its end of our stdout and stderr may be too: what cannot be
    // written is dropped (the device is released already).
    use std::io::Write;
    let text = if as_json {
        serde_json::to_string(&stats)?
    } else {
        terminal::table(&stats_rows(&stats))
    };
    let _ = writeln!(std::io::stdout(), "{text}");
    if stats["server"]["stopped_by"] == "parent gone" {
        let _ = writeln!(
            std::io::stderr(),
            "the process that started device serve is gone: the device is released"
        );
    }
    if let Some(w) = warning {
        let _ = writeln!(std::io::stderr(), "warning: {w}");
    }
    Ok(())
}

/// The server's counters and the model's statistics as two-column rows.
fn stats_rows(stats: &serde_json::Value) -> Rows {
    let mut rows = Vec::new();
    for (section, key) in [("server", "server"), ("model", "model_stats")] {
        for (k, v) in report::model::flatten(&stats[key]) {
            rows.push(vec![format!("{section} {k}"), v]);
        }
    }
    Rows {
        headings: vec!["statistic".into(), "value".into()],
        rows,
    }
}
