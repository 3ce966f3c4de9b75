//! `iotrial capture`: a device's block requests recorded as fio's iolog v3 while a command runs
//! (without a shell) or for a duration.

use super::errors::{failed, usage};
use anyhow::{Context, Result};
use iotrial::stack::ledger::Ledger;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The arguments of `iotrial capture`.
#[derive(clap::Args)]
pub struct CaptureArgs {
    /// The block device to record (/dev/X); nothing else is traced.
    #[arg(long)]
    device: PathBuf,
    /// The iolog to write.
    #[arg(long)]
    out: PathBuf,
    /// Record for this long (e.g. 60s) instead of while a command runs.
    #[arg(long)]
    duration: Option<String>,
    /// The command to run while recording (after --), without a shell.
    #[arg(last = true)]
    command: Vec<String>,
}

/// Records the requests and prints what was captured.
pub fn run(a: CaptureArgs, stop: &Arc<AtomicBool>) -> Result<()> {
    use iotrial::monitor::trace::capture::{capture, Until};
    let until = match (a.duration, a.command.is_empty()) {
        (Some(d), true) => Until::Duration(
            iotrial::units::parse_duration(&d)
                .map_err(|e| usage(format!("--duration: {}", e.0)))?,
        ),
        (None, false) => Until::Command(a.command),
        _ => {
            return Err(usage(
                "give either --duration or a command after --, not both",
            ))
        }
    };
    let mut ledger = Ledger::new().context("create the resource ledger")?;
    let c = capture(&a.device, &a.out, &until, &mut ledger, stop).map_err(failed)?;
    println!(
        "{}: {} requests, {} bytes in {:.2} s -> {}",
        c.device.display(),
        c.requests,
        c.bytes,
        c.seconds,
        c.out.display()
    );
    if c.lost_events > 0 {
        println!(
            "warning: the trace lost {} events; the log lacks requests",
            c.lost_events
        );
    }
    if let Some(code) = c.exit_status.filter(|&c| c != 0) {
        println!("warning: the command exited with status {code}");
    }
    Ok(())
}
