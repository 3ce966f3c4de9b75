//! dvr's part of the report, in the reading order of seed 000: per stack, every record
//! stream's access times over the run with its moving-window average and peak, every playback
//! read with its consecutive-read sums; then a latency CDF overlaying all stacks and each
//! stream's completion time (fairness).

use super::figures::{StreamFigures, Verdict, COLUMNS};
use super::params::PARAMS;
use crate::analysis::window;
use crate::engine::StreamSamples;
use crate::params::Params;
use crate::present::chart::{
    Block, Chart, Section, Series, Style, Table, ACCENT, DOWNSAMPLED_NOTE,
};
use crate::present::{
    monitor, num, num_opt, FigureSpec, KindReport, MonitorColumn, VerdictFigures,
};
use crate::result::{self, ResultError, StackTrials, Trial};
use crate::units::trim_float;
use serde_json::Value as Json;

/// dvr's part of the report.
pub struct DvrReport;

/// The columns of a hammering run (`pacing = max`), which a run in real time has none of.
const HAMMER_KEYS: &[&str] = &[
    "record_mbit_guaranteed",
    "playback_preroll_s",
    "record_fairness_jain",
    "playback_fairness_jain",
    "record_completion_spread",
    "playback_completion_spread",
];

/// Decimal places kept in charts: seconds to the millisecond, milliseconds to 10 µs.
const SECONDS_MS: (i32, i32) = (3, 2);

/// One dvr trial's result.json through dvr's own types.
struct DvrResult {
    params: Params,
    streams: Vec<StreamFigures>,
    verdict: Verdict,
}

impl DvrResult {
    fn read(t: &Trial) -> Result<DvrResult, ResultError> {
        let doc = &t.result;
        let overrides = Params::overrides_from_json(PARAMS, &Json::Object(doc.params.clone()));
        Ok(DvrResult {
            params: Params::resolve("dvr", PARAMS, &overrides)
                .map_err(|e| t.error(format!("params: {e}")))?,
            streams: doc.streams_as().map_err(|e| t.error(e))?,
            verdict: doc.verdict_as().map_err(|e| t.error(e))?,
        })
    }
}

/// The samples of a trial's one phase, times since its sampling began.
fn samples_of(t: &Trial) -> Result<Vec<StreamSamples>, ResultError> {
    let path = t.file("samples.csv");
    let set = result::read_samples(&path, Some(&t.result))?;
    let phase = set
        .phase_index(super::PHASE)
        .ok_or_else(|| ResultError::format(&path, format!("no phase {}", super::PHASE)))?;
    set.load_phase(phase).map_err(|e| ResultError::io(&path, e))
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn s(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Appends the downsampling sentence when any series was reduced.
fn caption(text: String, reduced: bool) -> String {
    if reduced {
        format!("{text} {DOWNSAMPLED_NOTE}")
    } else {
        text
    }
}

/// The stack's verdict in a sentence, and which repeat the charts show.
fn intro(st: &StackTrials<'_>, shown: &DvrResult) -> Option<String> {
    let v = &shown.verdict;
    let mut parts = Vec::new();
    if let Some(m) = v.record_mbit_guaranteed {
        let met = match v.meets_target {
            Some(true) => "met",
            Some(false) => "not met",
            None => "no target",
        };
        parts.push(format!(
            "Each record stream is guaranteed {} Mbit/s with a {} s buffer (target {} Mbit/s: {met}).",
            num(m),
            trim_float(shown.params.f64("window")),
            trim_float(v.target_mbit)
        ));
    }
    if let Some(p) = v.playback_preroll_s {
        parts.push(format!("A playback needs {} s of pre-roll.", num(p)));
    }
    if shown.params.text("pacing") == crate::workload::realtime::REALTIME {
        parts.push(format!(
            "Streams in real time at {} Mbit/s for {} s: {}.",
            trim_float(shown.params.f64("bitrate")),
            trim_float(shown.params.f64("duration")),
            v.realtime.summary().line()
        ));
    }
    if st.trials.len() > 1 {
        parts.push(format!(
            "Charts show repeat {} of {}; the verdict table averages all repeats.",
            st.trials[0].repeat,
            st.trials.len()
        ));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

fn record_chart(streams: &[StreamSamples], window_s: f64) -> Option<Chart> {
    let mut series = Vec::new();
    let mut lines = Vec::new();
    let mut peaks = (Vec::new(), Vec::new());
    let mut reduced = false;
    let mut worst: Option<f64> = None;
    for (g, st) in streams.iter().filter(|s| s.role == "record").enumerate() {
        let ok: Vec<_> = st.ok().collect();
        let xs: Vec<f64> = ok.iter().map(|x| s(x.done_ns())).collect();
        let ys: Vec<f64> = ok.iter().map(|x| ms(x.latency_ns)).collect();
        let (pts, r1) = Series::new(&st.name, Style::Points, g, &xs, &ys, SECONDS_MS);
        let pairs: Vec<(u64, u64)> = ok.iter().map(|x| (x.issue_ns, x.latency_ns)).collect();
        let (win, _) = window::moving_average(&pairs, (window_s * 1e9) as u64);
        let wx: Vec<f64> = win.iter().map(|p| s(p.end_ns)).collect();
        let wy: Vec<f64> = win.iter().map(|p| p.mean_ns / 1e6).collect();
        let label = format!("{} {} s avg", st.name, trim_float(window_s));
        let (line, r2) = Series::new(label, Style::Line, g, &wx, &wy, SECONDS_MS);
        if let Some(p) = win.iter().max_by(|a, b| a.mean_ns.total_cmp(&b.mean_ns)) {
            peaks.0.push(s(p.end_ns));
            peaks.1.push(p.mean_ns / 1e6);
            worst = Some(worst.unwrap_or(0.0).max(p.mean_ns / 1e6));
        }
        reduced |= r1 || r2;
        series.push(pts);
        lines.push(line);
    }
    let series = with_marks(series, lines, "peak average", &peaks)?;
    let worst = worst
        .map(|w| format!(" The worst peak is {} ms.", num(w)))
        .unwrap_or_default();
    Some(Chart {
        title: "Record: write access time".into(),
        caption: caption(
            format!(
                "Each dot is one write's access time, placed at its completion; each line is that stream's moving average over the {} s record buffer; ringed dots mark each stream's peak average, which sets the bitrate it can sustain.{worst}",
                trim_float(window_s)
            ),
            reduced,
        ),
        x_label: "elapsed time (s)".into(),
        y_label: "access time (ms)".into(),
        x_names: None,
        series,
        ..Chart::default()
    })
}

/// Points, then lines, then the ringed marks at `marks` (x, y); None when there are no points.
fn with_marks(
    mut series: Vec<Series>,
    mut lines: Vec<Series>,
    label: &str,
    marks: &(Vec<f64>, Vec<f64>),
) -> Option<Vec<Series>> {
    if series.is_empty() {
        return None;
    }
    series.append(&mut lines);
    let (m, _) = Series::new(label, Style::Marker, ACCENT, &marks.0, &marks.1, SECONDS_MS);
    series.push(m);
    Some(series)
}

fn playback_chart(streams: &[StreamSamples], k: usize) -> Option<Chart> {
    let mut series = Vec::new();
    let mut lines = Vec::new();
    let mut peaks = (Vec::new(), Vec::new());
    let mut reduced = false;
    for (g, st) in streams.iter().filter(|s| s.role == "playback").enumerate() {
        let ok: Vec<_> = st.ok().collect();
        let xs: Vec<f64> = ok.iter().map(|x| s(x.done_ns())).collect();
        let ys: Vec<f64> = ok.iter().map(|x| ms(x.latency_ns)).collect();
        let (pts, r1) = Series::new(&st.name, Style::Points, g, &xs, &ys, SECONDS_MS);
        let lats: Vec<u64> = ok.iter().map(|x| x.latency_ns).collect();
        let sums = window::consecutive_sums(&lats, k);
        let sx: Vec<f64> = xs
            .iter()
            .skip(k.saturating_sub(1))
            .copied()
            .take(sums.len())
            .collect();
        let sy: Vec<f64> = sums.iter().map(|&v| ms(v)).collect();
        let label = format!("{} sum of {k}", st.name);
        let (line, r2) = Series::new(label, Style::Trace, g, &sx, &sy, SECONDS_MS);
        if let Some((i, v)) = sy.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)) {
            peaks.0.push(sx[i]);
            peaks.1.push(*v);
        }
        reduced |= r1 || r2;
        series.push(pts);
        lines.push(line);
    }
    let series = with_marks(series, lines, "worst sum (pre-roll)", &peaks)?;
    Some(Chart {
        title: "Playback: read access time".into(),
        caption: caption(
            format!(
                "Each dot is one read's access time at its completion; each thin line is the sum of {k} consecutive reads (one playback read split into {k} fragments); ringed dots mark the worst sum, the pre-roll a playback needs."
            ),
            reduced,
        ),
        x_label: "elapsed time (s)".into(),
        y_label: "access time (ms)".into(),
        x_names: None,
        series,
        ..Chart::default()
    })
}

fn stream_table(streams: &[StreamFigures]) -> Table {
    let headings = [
        "stream",
        "samples",
        "errors",
        "time (s)",
        "mean (ms)",
        "p99 (ms)",
        "max (ms)",
        "window peak (ms)",
        "guaranteed (Mbit/s)",
        "pre-roll (s)",
    ];
    let rows = streams
        .iter()
        .map(|st| {
            vec![
                st.name.clone(),
                st.samples.to_string(),
                st.errors.to_string(),
                num(st.elapsed_s),
                num(st.lat_ms.mean),
                num(st.lat_ms.p99),
                num(st.lat_ms.max),
                num_opt(st.window_peak_ms),
                num_opt(st.mbit_guaranteed),
                num_opt(st.preroll_s),
            ]
        })
        .collect();
    Table {
        caption: "Per-stream figures".into(),
        headings: headings.iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

fn stack_section(
    st: &StackTrials<'_>,
    shown: &DvrResult,
    samples: &Result<Vec<StreamSamples>, ResultError>,
) -> Section {
    let mut blocks = Vec::new();
    let realtime = shown.params.text("pacing") == crate::workload::realtime::REALTIME;
    if realtime {
        let buffers: Vec<_> = shown
            .streams
            .iter()
            .map(|f| (f.name.clone(), f.buffer.clone()))
            .collect();
        blocks.extend(crate::workload::realtime::report::blocks(
            st.trials[0],
            super::PHASE,
            &buffers,
        ));
    }
    match samples {
        Ok(_) if realtime => {}
        Ok(streams) => {
            let w = shown.params.f64("window");
            let k = shown.params.u64("playback_ios").max(1) as usize;
            blocks.extend(record_chart(streams, w).map(Block::Chart));
            blocks.extend(playback_chart(streams, k).map(Block::Chart));
        }
        Err(e) => blocks.push(Block::Note {
            text: format!("No charts: {e}"),
        }),
    }
    blocks.push(Block::Table(stream_table(&shown.streams)));
    Section {
        title: format!("Stack {}", st.stack),
        intro: intro(st, shown),
        blocks,
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// CDF of one role's access times, one step series per stack.
fn cdf_chart(
    stacks: &[StackTrials<'_>],
    samples: &[Result<Vec<StreamSamples>, ResultError>],
    role: &str,
    what: &str,
) -> Option<Chart> {
    let mut series = Vec::new();
    let mut reduced = false;
    for (g, (st, sm)) in stacks.iter().zip(samples).enumerate() {
        let Ok(streams) = sm else { continue };
        let mut lat: Vec<f64> = streams
            .iter()
            .filter(|x| x.role == role)
            .flat_map(|x| x.ok().map(|s| ms(s.latency_ns)))
            .collect();
        if lat.is_empty() {
            continue;
        }
        lat.sort_by(f64::total_cmp);
        let n = lat.len() as f64;
        let ys: Vec<f64> = (1..=lat.len()).map(|i| i as f64 / n).collect();
        // Downsample on x (latency): each bucket keeps its fastest and slowest I/O.
        let (mut ser, r) = Series::new(st.stack, Style::Step, g, &ys, &lat, (4, 2));
        std::mem::swap(&mut ser.x, &mut ser.y);
        reduced |= r;
        series.push(ser);
    }
    if series.is_empty() {
        return None;
    }
    Some(Chart {
        title: format!("{} access time distribution", capitalized(what)),
        caption: caption(
            format!("Fraction of {what} I/Os (all streams of the role) completed within each access time; further left and steeper is better, and the top right shows the tail."),
            reduced,
        ),
        x_label: "access time (ms)".into(),
        y_label: "fraction of I/Os".into(),
        x_names: None,
        series,
        ..Chart::default()
    })
}

/// Completion time of each stream, one series per stack.
fn fairness(stacks: &[StackTrials<'_>], shown: &[DvrResult]) -> (Option<Chart>, Table) {
    let mut names: Vec<String> = Vec::new();
    for s in shown.iter().flat_map(|d| &d.streams) {
        if !names.contains(&s.name) {
            names.push(s.name.clone());
        }
    }
    let mut series = Vec::new();
    let mut rows = Vec::new();
    for (g, (st, d)) in stacks.iter().zip(shown).enumerate() {
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        let mut row = vec![st.stack.to_string()];
        for (i, n) in names.iter().enumerate() {
            let v = d.streams.iter().find(|s| s.name == *n).map(|s| s.elapsed_s);
            if let Some(v) = v {
                // Spread the stacks a little around each stream so their dots do not hide each other.
                let spread = 0.5 / stacks.len() as f64;
                xs.push(i as f64 + (g as f64 - (stacks.len() - 1) as f64 / 2.0) * spread);
                ys.push(v);
            }
            row.push(v.map(num).unwrap_or_else(|| "-".into()));
        }
        rows.push(row);
        series.push(Series::new(st.stack, Style::Marker, g, &xs, &ys, (0, 3)).0);
    }
    let table = Table {
        caption: "Seconds each stream took to collect its samples".into(),
        headings: std::iter::once("stack".to_string())
            .chain(names.iter().cloned())
            .collect(),
        rows,
    };
    let chart = (!names.is_empty()).then(|| Chart {
        title: "Fairness: time each stream took to collect its samples".into(),
        caption: "Streams of one role should finish together; a stream far above its peers was starved (seed 000: on ext4 with ordered data, one playback finished twice as fast as the other).".into(),
        x_label: "stream".into(),
        y_label: "completion time (s)".into(),
        x_names: Some(names),
        series,
        ..Chart::default()
    });
    (chart, table)
}

impl KindReport for DvrReport {
    fn columns(&self) -> &'static [FigureSpec] {
        COLUMNS
    }

    fn figures(&self, trial: &Trial) -> Result<VerdictFigures, ResultError> {
        crate::workload::figures_of(trial, Verdict::figures)
    }

    fn monitor_columns(&self) -> &'static [MonitorColumn] {
        &[
            monitor::DEVICE_AWAIT,
            monitor::KERNEL_CPU,
            monitor::HOST_STEAL_PEAK,
        ]
    }

    fn column_groups(&self) -> &'static [&'static [&'static str]] {
        &[HAMMER_KEYS, &crate::workload::realtime::REALTIME_KEYS]
    }

    fn sections(&self, stacks: &[StackTrials<'_>]) -> Result<Vec<Section>, ResultError> {
        let shown: Vec<DvrResult> = stacks
            .iter()
            .map(|st| DvrResult::read(st.trials[0]))
            .collect::<Result<_, _>>()?;
        let samples: Vec<Result<Vec<StreamSamples>, ResultError>> =
            stacks.iter().map(|st| samples_of(st.trials[0])).collect();
        let mut out: Vec<Section> = stacks
            .iter()
            .zip(&shown)
            .zip(&samples)
            .map(|((st, d), sm)| stack_section(st, d, sm))
            .collect();
        let blocks: Vec<Block> = [("record", "write"), ("playback", "read")]
            .into_iter()
            .filter_map(|(role, what)| cdf_chart(stacks, &samples, role, what))
            .map(Block::Chart)
            .collect();
        let (chart, table) = fairness(stacks, &shown);
        out.push(Section {
            title: "All stacks: latency distribution".into(),
            intro: None,
            blocks,
        });
        out.push(Section {
            title: "All stacks: fairness".into(),
            intro: Some("Jain's index and the completion-time spread (slowest / fastest) are in the verdict table.".into()),
            blocks: chart.map(Block::Chart).into_iter().chain([Block::Table(table)]).collect(),
        });
        Ok(out)
    }
}
