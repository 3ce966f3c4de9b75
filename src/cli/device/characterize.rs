//! `iotrial device characterize`: progress on stderr as the probes go, then the parameters
//! found (with how), those not found (with the probe that would find them), and the twin as a
//! device spec on the last line; `--out` writes the twin as a preset file.

use super::super::errors::{failed, usage};
use anyhow::{Context, Result};
use iotrial::present::Rows;
use iotrial::probe::character::{characterize, CharOptions};
use iotrial::report::terminal;
use iotrial::stack::ledger::Ledger;
use iotrial::stack::DeviceSpec;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// Characterizes `spec` and prints (and with `out`, writes) its twin.
pub fn run(
    spec: &str,
    out: Option<&Path>,
    opts: &CharOptions,
    as_json: bool,
    stop: &Arc<AtomicBool>,
) -> Result<()> {
    let device = DeviceSpec::parse(spec).map_err(failed)?;
    if !(opts.scale > 0.0 && opts.scale.is_finite()) {
        return Err(usage("--time-scale: must be a number greater than 0"));
    }
    if let Some(dir) = out
        .and_then(|o| o.parent())
        .filter(|d| !d.as_os_str().is_empty())
    {
        if !dir.is_dir() {
            return Err(usage(format!(
                "--out {}: the directory {} does not exist",
                out.unwrap_or(dir).display(),
                dir.display()
            )));
        }
    }
    // Held to the end.
    let _poll = super::poll_idle(opts.poll_idle)?;
    let mut ledger = Ledger::new().context("create the resource ledger")?;
    let started = Instant::now();
    let mut say = |line: &str| {
        let s = started.elapsed().as_secs();
        eprintln!("[{:>2}:{:02}] {line}", s / 60, s % 60);
    };
    let c = characterize(&device, opts, &mut ledger, stop, &mut say).map_err(failed)?;
    if let Some(path) = out {
        let when = iotrial::utc::utc_iso(std::time::SystemTime::now());
        let text = c.twin_file(&when);
        let tmp = path.with_extension("tmp-twin");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| usage(format!("--out {}: {e}", path.display())))?;
        say(&format!("twin written to {}", path.display()));
    }
    if as_json {
        println!("{}", serde_json::to_string_pretty(&c)?);
        return Ok(());
    }
    let t = &c.twin;
    println!(
        "{} ({} bytes): model {}: {}",
        c.device, c.capacity_bytes, t.model, t.model_why
    );
    let found = Rows {
        headings: ["parameter", "value", "how"].map(String::from).to_vec(),
        rows: t
            .found
            .iter()
            .map(|f| vec![f.name.to_string(), f.value.clone(), f.how.clone()])
            .collect(),
    };
    println!("{}", terminal::table(&found));
    if !t.unknown.is_empty() {
        let unknown = Rows {
            headings: ["not identified", "model default", "what would identify it"]
                .map(String::from)
                .to_vec(),
            rows: t
                .unknown
                .iter()
                .map(|u| vec![u.name.to_string(), u.default.clone(), u.why.clone()])
                .collect(),
        };
        println!("{}", terminal::table(&unknown));
    }
    println!(
        "{} I/Os, {:.1} s of the device's time",
        c.ios, c.device_seconds
    );
    if c.poll_idle {
        println!(
            "--poll-idle: the host's CPUs were kept out of idle sleep ({} held at 0 µs).",
            iotrial::probe::idle::LATENCY_FILE
        );
    }
    for l in c.host.iter().filter(|l| l.disturbed()) {
        println!("warning: {}", l.warning());
    }
    println!("{}", c.spec);
    Ok(())
}
