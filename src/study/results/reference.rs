//! A study's raw baseline: the first stack that writes its drives raw (a `regions` or
//! `partitions` layout). A trial of another stack may be judged against that stack's finished
//! trial of the same workload (stream's `raw_fraction`), scaled by how much of the raw stack's
//! write bandwidth its own data can use: a RAID10 over the same six drives, three drives' worth;
//! the reference also carries each data device's diskstats series, so a workload can bound a
//! stack by the raw stack's best drive times its own data drives.

use super::manifest::{Manifest, Status};
use crate::result::monitor::MonitorSummary;
use crate::stack::LayoutKind;
use crate::study::{Study, Trial};
use crate::workload::{Reference, WriteInterval};
use std::collections::BTreeMap;
use std::path::Path;

/// The reference for trial `t` of `study` (resolved), when the raw stack's trial of the same
/// workload (the same repeat, else the first) comes before `t` in the manifest's run order and
/// is done in the results directory `root`.
pub fn for_trial(study: &Study, manifest: &Manifest, root: &Path, t: &Trial) -> Option<Reference> {
    let raw = study
        .stacks
        .iter()
        .find(|s| s.layout != LayoutKind::Files && s.name != t.stack.name)?;
    // Only a trial that runs before `t` counts, as in a run of the whole study in order: a
    // resumed run, a shard and a merge then judge `t` alike.
    let before = manifest.trials.iter().position(|r| r.id == t.id)?;
    let done = [t.repeat, 1].into_iter().find_map(|r| {
        let id = Trial::make_id(&raw.name, &t.workload, r);
        manifest.trials[..before]
            .iter()
            .find(|rec| rec.id == id && rec.status == Status::Done)
    })?;
    let dir = root.join(&done.path);
    let doc = crate::result::read(&dir.join("result.json")).ok()?;
    let phase_starts = doc
        .phases
        .iter()
        .map(|p| (p.name.clone(), p.sampling_start_s.unwrap_or(p.start_s)))
        .collect();
    Some(Reference {
        stack: raw.name.clone(),
        device_writes: device_writes(&dir.join("monitor/diskstats.csv"), &doc.monitor),
        phase_starts,
        kind: doc.kind,
        verdict: doc.verdict,
        share: t.stack.data_devices() / raw.data_devices(),
        data_devices: t.stack.data_devices(),
        media_mb_s: media_mb_s(&t.stack.devices).map(|m| m * t.stack.data_devices()),
    })
}

/// What the slowest of `devices` streams at by its model (its sequential write rate over its
/// outer 1%, in 1 MiB transfers, times its time scale: MB/s as the host sees them); None
/// unless every one is an emulated device.
pub fn media_mb_s(devices: &[String]) -> Option<f64> {
    let rates: Option<Vec<f64>> = devices
        .iter()
        .map(|d| {
            let spec = crate::emu::ModelSpec::parse(d.strip_prefix("emu:")?).ok()?;
            let scale = spec.settings.scale;
            spec.expectations(1 << 20)
                .ok()
                .map(|e| e.seq_write_mbs * scale)
        })
        .collect();
    rates?
        .into_iter()
        .filter(|r| r.is_finite() && *r > 0.0)
        .min_by(f64::total_cmp)
}

/// The write intervals of each data device in a trial's diskstats series (`path`); empty
/// when it is missing or unreadable, so the reference falls back to the stack's total.
fn device_writes(path: &Path, m: &MonitorSummary) -> BTreeMap<String, Vec<WriteInterval>> {
    let mut out: BTreeMap<String, Vec<WriteInterval>> = m
        .devices
        .iter()
        .filter(|d| d.role == "data")
        .map(|d| (d.device.clone(), Vec::new()))
        .collect();
    let Ok(mut rd) = csv::Reader::from_path(path) else {
        return BTreeMap::new();
    };
    let Ok(head) = rd.headers().cloned() else {
        return BTreeMap::new();
    };
    let col = |name: &str| head.iter().position(|h| h == name);
    let (Some(t), Some(ph), Some(dev), Some(w)) =
        (col("t_s"), col("phase"), col("device"), col("wkB_s"))
    else {
        return BTreeMap::new();
    };
    let mut last: BTreeMap<String, f64> = BTreeMap::new();
    for row in rd.records().map_while(Result::ok) {
        let (Some(rows), Ok(end_s), Ok(kb_s)) = (
            out.get_mut(&row[dev]),
            row[t].parse::<f64>(),
            row[w].parse::<f64>(),
        ) else {
            continue;
        };
        let Some(prev) = last.insert(row[dev].to_string(), end_s) else {
            continue;
        };
        let seconds = end_s - prev;
        if seconds > 0.0 {
            rows.push(WriteInterval {
                phase: Some(row[ph].to_string()).filter(|p| !p.is_empty()),
                end_s,
                seconds,
                mb: kb_s * 1024.0 * seconds / 1e6,
            });
        }
    }
    out.retain(|_, rows| !rows.is_empty());
    out
}

/// How [`note`] begins.
pub const NOTE_START: &str = "raw figures are relative to stack ";

/// What a trial's warnings say of the reference it was judged against.
pub fn note(r: &Reference, stack_devices: f64) -> String {
    let t = |x: f64| crate::units::trim_float((x * 1000.0).round() / 1000.0);
    let mut s = format!(
        "{NOTE_START}{}, scaled by {}: this stack's data can use {} devices' worth of write bandwidth, {}'s {}",
        r.stack,
        t(r.share),
        t(stack_devices),
        r.stack,
        t(stack_devices / r.share)
    );
    if !r.device_writes.is_empty() {
        s.push_str(&format!(
            "; or, when that is more, the most one of {}'s drives took once its writers had settled, times {}",
            r.stack,
            t(stack_devices)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::monitor::{DeviceSummary, IostatFigures};

    fn device(name: &str, role: &str) -> DeviceSummary {
        DeviceSummary {
            device: name.into(),
            role: role.into(),
            seconds: 60.0,
            means: IostatFigures::default(),
            await_ms: 0.0,
            await_ms_peak: 0.0,
            aqu_sz_peak: 0.0,
            util_pct_peak: 0.0,
            totals: Default::default(),
            phases: Vec::new(),
        }
    }

    fn reference(dir: &Path, csv: &str) -> Reference {
        let path = dir.join("diskstats.csv");
        std::fs::write(&path, csv).unwrap();
        let m = MonitorSummary {
            devices: vec![
                device("loop0", "data"),
                device("loop1", "data"),
                device("vda", "backing"),
            ],
            ..Default::default()
        };
        Reference {
            stack: "raw".into(),
            kind: "stream".into(),
            verdict: serde_json::Value::Null,
            share: 0.5,
            device_writes: device_writes(&path, &m),
            phase_starts: [("stream".to_string(), 1.0)].into(),
            data_devices: 3.0,
            media_mb_s: None,
        }
    }

    #[test]
    fn the_media_rate_is_the_slowest_emulated_drive_at_its_outer_edge() {
        let one = |d: &str| media_mb_s(&[d.to_string()]);
        let fast = one("emu:hdd,drive=sata2-2tb").unwrap();
        // The twin streams 115 MB/s at its outer edge; a drive made slower there, less.
        assert!((100.0..=115.0).contains(&fast), "{fast}");
        let slow = one("emu:hdd,outer_rate=80,size=64GiB").unwrap();
        assert!(slow <= 80.0 && slow < fast, "{slow}");
        let both = [
            "emu:hdd,drive=sata2-2tb".to_string(),
            "emu:hdd,outer_rate=80,size=64GiB".to_string(),
        ];
        assert_eq!(media_mb_s(&both), Some(slow));
        // The time scale speeds the drive up as the host sees it.
        let scaled = one("emu:hdd,drive=sata2-2tb,scale=10").unwrap();
        assert!((scaled / fast - 10.0).abs() < 1e-6, "{scaled}");
        // Anything that is not an emulated drive leaves it unknown.
        assert_eq!(one("image:size=4GiB"), None);
        assert_eq!(
            media_mb_s(&[both[0].clone(), "block:/dev/sdz".into()]),
            None
        );
    }

    #[test]
    fn a_drive_is_bounded_by_the_best_data_device_once_settled() {
        let dir = tempfile::tempdir().unwrap();
        // 100,000 kB/s is 102.4 MB/s. loop1 ramps up for two seconds, then takes 120,000 kB/s;
        // the backing disk (vda) and the sync phase do not count.
        let head = "t_s,phase,device,r_s,w_s,d_s,f_s,rkB_s,wkB_s,rrqm_s\n";
        let mut csv = head.to_string();
        for (t, phase, a, b, v) in [
            (1.0, "prepare", 0.0, 0.0, 0.0),
            (2.0, "stream", 100_000.0, 10_000.0, 900_000.0),
            (3.0, "stream", 100_000.0, 50_000.0, 900_000.0),
            (4.0, "stream", 100_000.0, 120_000.0, 900_000.0),
            (5.0, "stream", 100_000.0, 120_000.0, 900_000.0),
            (5.5, "sync", 900_000.0, 900_000.0, 900_000.0),
        ] {
            csv.push_str(&format!("{t},{phase},loop0,0,0,0,0,0,{a},0\n"));
            csv.push_str(&format!("{t},{phase},loop1,0,0,0,0,0,{b},0\n"));
            csv.push_str(&format!("{t},{phase},vda,0,0,0,0,0,{v},0\n"));
        }
        let r = reference(dir.path(), &csv);
        let all = r.best_device_mb_s("stream", 0.0).unwrap();
        assert!((all - 102.4).abs() < 1e-9, "{all}");
        let settled = r.best_device_mb_s("stream", 2.0).unwrap();
        assert!((settled - 122.88).abs() < 1e-9, "{settled}");
        // Less than a second of intervals, an unknown phase or no series: no bound.
        assert_eq!(r.best_device_mb_s("stream", 3.5), None);
        assert_eq!(r.best_device_mb_s("fill", 0.0), None);
        let none = reference(dir.path(), "not,a,series\n");
        assert!(none.device_writes.is_empty());
        assert!(!note(&r, 3.0).is_empty());
        assert!(note(&r, 3.0).contains("settled, times 3"));
        assert!(!note(&none, 3.0).contains("settled"));
    }
}
