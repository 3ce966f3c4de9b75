//! The report's part about the monitors, the same for every workload kind: for each trial, a
//! chart of every device's throughput (MiB/s) and await (ms, right axis) per sample with the
//! phases shaded, from its `monitor/diskstats.csv` and `monitor/phases.csv`; and tables of its
//! devices, its busiest thread groups and, with the block trace, its I/O classes, from
//! result.json's `monitor`.

use crate::present::chart::{Band, Block, Chart, Section, Series, Style, Table, DOWNSAMPLED_NOTE};
use crate::present::num;
use crate::result::monitor::MonitorSummary;
use crate::result::{StackTrials, Trial};
use std::collections::BTreeMap;
use std::path::Path;

/// Thread groups shown per trial.
const GROUPS_SHOWN: usize = 12;

/// One device's series: (t_s, MiB/s), and (t_s, await ms) where it had requests.
#[derive(Default)]
struct DeviceSeries {
    mib: (Vec<f64>, Vec<f64>),
    await_ms: (Vec<f64>, Vec<f64>),
}

/// Every device's series in diskstats.csv, in the order devices first appear.
fn read_diskstats(path: &Path) -> Result<Vec<(String, DeviceSeries)>, String> {
    let mut r = csv::Reader::from_path(path).map_err(|e| e.to_string())?;
    let head = r.headers().map_err(|e| e.to_string())?.clone();
    let at = |h: &str| {
        head.iter()
            .position(|c| c == h)
            .ok_or(format!("no column {h}"))
    };
    let cols = [
        "t_s",
        "device",
        "r_s",
        "w_s",
        "rkB_s",
        "wkB_s",
        "r_await_ms",
        "w_await_ms",
    ];
    let idx: Vec<usize> = cols.iter().map(|c| at(c)).collect::<Result<_, _>>()?;
    let mut out: Vec<(String, DeviceSeries)> = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| e.to_string())?;
        let v = |i: usize| {
            rec.get(idx[i])
                .and_then(|x| x.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        let device = rec.get(idx[1]).unwrap_or("").to_string();
        let pos = match out.iter().position(|(d, _)| *d == device) {
            Some(p) => p,
            None => {
                out.push((device, DeviceSeries::default()));
                out.len() - 1
            }
        };
        let s = &mut out[pos].1;
        let t = v(0);
        s.mib.0.push(t);
        s.mib.1.push((v(4) + v(5)) / 1024.0);
        let n = v(2) + v(3);
        if n > 0.0 {
            s.await_ms.0.push(t);
            s.await_ms.1.push((v(2) * v(6) + v(3) * v(7)) / n);
        }
    }
    Ok(out)
}

/// The phases of phases.csv as bands (a phase still running at the end ends at `end`).
fn read_phases(path: &Path, end: f64) -> Vec<Band> {
    let Ok(mut r) = csv::Reader::from_path(path) else {
        return Vec::new();
    };
    r.records()
        .flatten()
        .filter_map(|rec| {
            let x0 = rec.get(2)?.parse().ok()?;
            Some(Band {
                label: rec.get(0)?.to_string(),
                x0,
                x1: rec.get(3).and_then(|v| v.parse().ok()).unwrap_or(end),
            })
        })
        .collect()
}

/// The device chart of one trial; None when it has no series.
fn device_chart(label: &str, t: &Trial) -> Result<Option<Chart>, String> {
    let dir = t.dir.join("monitor");
    let path = dir.join("diskstats.csv");
    if !path.exists() {
        return Ok(None);
    }
    let devices = read_diskstats(&path)?;
    let mut series = Vec::new();
    let mut reduced = false;
    for (g, (name, s)) in devices.iter().enumerate() {
        let (a, r1) = Series::new(
            format!("{name} MiB/s"),
            Style::Line,
            g,
            &s.mib.0,
            &s.mib.1,
            (3, 2),
        );
        let (b, r2) = Series::new(
            format!("{name} await ms"),
            Style::Trace,
            g,
            &s.await_ms.0,
            &s.await_ms.1,
            (3, 3),
        );
        reduced |= r1 || r2;
        series.push(a);
        if !b.x.is_empty() {
            series.push(b.on_right());
        }
    }
    if series.iter().all(|s| s.x.is_empty()) {
        return Ok(None);
    }
    let mut caption = "Each device's throughput (reads and writes, MiB/s, thick lines, left axis) and mean time per request (ms, thin lines, right axis) per sample, as iostat -x computes them; shaded: the phases.".to_string();
    if reduced {
        caption = format!("{caption} {DOWNSAMPLED_NOTE}");
    }
    Ok(Some(Chart {
        title: format!("{label}: devices"),
        caption,
        x_label: "elapsed time (s)".into(),
        y_label: "throughput (MiB/s)".into(),
        series,
        y2_label: Some("await (ms)".into()),
        bands: read_phases(&dir.join("phases.csv"), t.result.monitor.end_s),
        ..Chart::default()
    }))
}

fn table(caption: String, headings: &[&str], rows: Vec<Vec<String>>) -> Block {
    Block::Table(Table {
        caption,
        headings: headings.iter().map(|h| h.to_string()).collect(),
        rows,
    })
}

/// The busiest thread groups of one trial.
fn threads_table(label: &str, m: &MonitorSummary) -> Option<Block> {
    let t = m.threads.as_ref()?;
    let kind = |k: bool, own: &str| match (k, own) {
        (true, _) => "kernel".to_string(),
        (false, "") => "other".to_string(),
        (false, own) => format!("iotrial {own}"),
    };
    let rows = t
        .groups
        .iter()
        .take(GROUPS_SHOWN)
        .map(|g| {
            vec![
                g.group.clone(),
                kind(g.kernel, &g.own),
                g.threads.to_string(),
                num(g.cpu_pct_mean),
                num(g.cpu_pct_peak),
            ]
        })
        .collect();
    Some(table(
        format!(
            "{label}: busiest thread groups, CPU in % of one core (all kernel threads together: mean {}, peak {})",
            num(t.kernel_cpu_pct_mean),
            num(t.kernel_cpu_pct_peak)
        ),
        &["thread group", "kind", "threads", "mean CPU %", "peak CPU %"],
        rows,
    ))
}

/// Each device's iostat -x figures over the whole trial.
fn devices_table(label: &str, m: &MonitorSummary) -> Option<Block> {
    let rows: Vec<Vec<String>> = m
        .devices
        .iter()
        .map(|d| {
            let f = &d.means;
            vec![
                d.device.clone(),
                d.role.clone(),
                num(f.r_s),
                num(f.w_s),
                num(f.rkB_s / 1024.0),
                num(f.wkB_s / 1024.0),
                num(f.r_await_ms),
                num(f.w_await_ms),
                num(f.aqu_sz),
                num(f.util_pct),
            ]
        })
        .collect();
    let headings = [
        "device",
        "role",
        "r/s",
        "w/s",
        "read MiB/s",
        "write MiB/s",
        "r_await ms",
        "w_await ms",
        "aqu-sz",
        "%util",
    ];
    (!rows.is_empty()).then(|| {
        table(
            format!("{label}: devices, iostat -x over the trial"),
            &headings,
            rows,
        )
    })
}

/// The traced requests by class and direction, over every phase.
fn classes_table(label: &str, m: &MonitorSummary) -> Option<Block> {
    let mut by: BTreeMap<(String, String), (u64, u64, f64, u64)> = BTreeMap::new();
    for r in &m.io_classes {
        let e = by
            .entry((r.class.clone(), r.direction.clone()))
            .or_default();
        e.0 += r.requests;
        e.1 += r.bytes;
        if let Some(l) = r.latency_ms_mean {
            e.2 += l * r.requests as f64;
            e.3 += r.requests;
        }
    }
    let rows: Vec<Vec<String>> = by
        .into_iter()
        .map(|((class, dir), (n, bytes, lat, done))| {
            let mean = if done > 0 {
                num(lat / done as f64)
            } else {
                "-".into()
            };
            vec![
                class,
                dir,
                n.to_string(),
                num(bytes as f64 / 1048576.0),
                mean,
            ]
        })
        .collect();
    let headings = ["class", "direction", "requests", "MiB", "mean latency ms"];
    (!rows.is_empty()).then(|| {
        table(
            format!("{label}: block requests by class (trace)"),
            &headings,
            rows,
        )
    })
}

/// The blocks of one trial.
fn trial_blocks(label: &str, t: &Trial) -> Vec<Block> {
    let m = &t.result.monitor;
    let mut blocks = Vec::new();
    match device_chart(label, t) {
        Ok(Some(c)) => blocks.push(Block::Chart(c)),
        Ok(None) => {}
        Err(e) => blocks.push(Block::Note {
            text: format!("{label}: monitor/diskstats.csv could not be read: {e}"),
        }),
    }
    blocks.extend(devices_table(label, m));
    blocks.extend(threads_table(label, m));
    blocks.extend(classes_table(label, m));
    blocks
}

/// The monitors' section of one workload: every trial that ran monitors; None when none did.
pub fn section(stacks: &[StackTrials<'_>]) -> Option<Section> {
    let many = stacks.iter().any(|s| s.trials.len() > 1);
    let blocks: Vec<Block> = stacks
        .iter()
        .flat_map(|s| s.trials.iter().map(move |t| (s.stack, *t)))
        .filter(|(_, t)| !t.result.monitor.enabled.is_empty())
        .flat_map(|(stack, t)| {
            let label = if many {
                format!("{stack} r{}", t.repeat)
            } else {
                stack.to_string()
            };
            trial_blocks(&label, t)
        })
        .collect();
    (!blocks.is_empty()).then(|| Section {
        title: "Monitors: what the devices and threads did".into(),
        intro: Some("Read from outside the workload while each trial ran: every block device of the stack (iostat -x), the CPU of every thread on the host (kernel threads included, iotrial's own marked) and, with the block trace, the requests by class. Times are the host's, not a device model's.".into()),
        blocks,
    })
}
