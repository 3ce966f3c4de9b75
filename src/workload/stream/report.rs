//! stream's part of the report, in seed 001's reading order: per stack, the aggregate and each
//! stream's throughput per harvest interval with the settled level marked and the trial's
//! phases shaded (the streaming, the final sync), and each stream's figures; then every
//! stack's aggregate on one chart, time counted from when the streams started.

use super::figures::{StreamFigures, Verdict, COLUMNS};
use super::params::PARAMS;
use super::PHASE;
use crate::analysis::timeseries::IntervalRow;
use crate::params::Params;
use crate::present::chart::{Band, Block, Chart, Section, Series, Style, Table, ACCENT};
use crate::present::{num, num_opt, FigureSpec, KindReport, VerdictFigures};
use crate::result::{csv, ResultError, StackTrials, Trial};
use serde_json::Value as Json;

/// stream's part of the report.
pub struct StreamReport;

/// The throughput columns, which a run in real time (paced by its own streams) has none of.
const THROUGHPUT_KEYS: &[&str] = &[
    "settled_mb_s",
    "raw_fraction",
    "total_mb_s",
    "settle_s",
    "burstiness",
    "stream_fairness_jain",
];

/// Decimal places kept in charts: seconds to the millisecond, MB/s to 0.01.
const DECIMALS: (i32, i32) = (3, 2);

/// Each stream's full intervals of the streaming phase: (start_s, MB/s), streams in order.
type Intervals = Vec<(String, Vec<(f64, f64)>)>;

/// One stream trial's result.json through stream's own types, and its intervals.
struct Shown<'a> {
    trial: &'a Trial,
    params: Params,
    streams: Vec<StreamFigures>,
    verdict: Verdict,
    /// When the streams started, seconds on the trial's timeline.
    zero_s: f64,
    intervals: Result<Intervals, ResultError>,
}

impl<'a> Shown<'a> {
    fn read(t: &'a Trial) -> Result<Shown<'a>, ResultError> {
        let doc = &t.result;
        let overrides = Params::overrides_from_json(PARAMS, &Json::Object(doc.params.clone()));
        let verdict: Verdict = doc.verdict_as().map_err(|e| t.error(e))?;
        let zero_s = doc
            .phases
            .iter()
            .find(|p| p.name == PHASE)
            .map_or(0.0, |p| p.sampling_start_s.unwrap_or(p.start_s));
        let intervals = csv::read_timeseries(&t.file("timeseries.csv"))
            .map(|rows| full_intervals(&rows, verdict.intervals));
        Ok(Shown {
            trial: t,
            params: Params::resolve("stream", PARAMS, &overrides)
                .map_err(|e| t.error(format!("params: {e}")))?,
            streams: doc.streams_as().map_err(|e| t.error(e))?,
            verdict,
            zero_s,
            intervals,
        })
    }

    /// The aggregate per interval: (seconds since the streams started, MB/s).
    fn aggregate(&self) -> Vec<(f64, f64)> {
        let Ok(per) = &self.intervals else {
            return Vec::new();
        };
        let mut sum: Vec<(f64, f64)> = Vec::new();
        for (_, pts) in per {
            for (i, (x, y)) in pts.iter().enumerate() {
                match sum.get_mut(i) {
                    Some(s) => s.1 += y,
                    None => sum.push((x - self.zero_s, *y)),
                }
            }
        }
        sum
    }
}

/// The first `full` intervals of each stream in the streaming phase, in file order.
fn full_intervals(rows: &[IntervalRow], full: usize) -> Intervals {
    let mut out: Intervals = Vec::new();
    for r in rows.iter().filter(|r| r.phase == PHASE) {
        let at = match out.iter().position(|(n, _)| *n == r.stream) {
            Some(i) => i,
            None => {
                out.push((r.stream.clone(), Vec::new()));
                out.len() - 1
            }
        };
        if out[at].1.len() < full {
            out[at].1.push((r.start_s, r.mb_s));
        }
    }
    out
}

/// The stack's verdict in a sentence or two.
fn intro(st: &StackTrials<'_>, s: &Shown) -> String {
    let v = &s.verdict;
    let (p, n) = (&s.params, s.streams.len());
    let how = if p.bool("direct") {
        "O_DIRECT"
    } else {
        "buffered"
    };
    let mut text = match (v.settled_mb_s, v.settle_s) {
        (Some(m), Some(t)) => format!(
            "The {n} streams' aggregate settled at {} MB/s after {} s",
            num(m),
            num(t)
        ),
        _ => format!(
            "The {n} streams' aggregate never settled by the steady-state rule; its mean was {} MB/s",
            num_opt(v.mean_mb_s)
        ),
    };
    text.push_str(&format!(
        " ({} {how} I/Os).",
        crate::units::Size(p.u64("io_size"))
    ));
    if let (Some(t), Some(sync)) = (v.total_mb_s, v.sync_s) {
        text.push_str(&format!(
            " Counting the final sync ({} s), {} MB/s.",
            num(sync),
            num(t)
        ));
    }
    if let (Some(f), Some(r)) = (v.raw_fraction, v.raw_mb_s) {
        text.push_str(&format!(
            " That is {} of the {} MB/s its drives can stream raw.",
            num(f),
            num(r)
        ));
    }
    if st.trials.len() > 1 {
        text.push_str(&format!(
            " Charts show repeat {} of {}; the verdict table averages all repeats.",
            st.trials[0].repeat,
            st.trials.len()
        ));
    }
    text
}

/// The stack's throughput chart: the aggregate, each stream, the settled level, the phases.
fn throughput_chart(s: &Shown) -> Option<Chart> {
    let per = s.intervals.as_ref().ok()?;
    let half = s.params.f64("interval") / 2.0;
    let mut series = Vec::new();
    for (g, (name, pts)) in per.iter().enumerate() {
        let xs: Vec<f64> = pts.iter().map(|p| p.0 + half).collect();
        let ys: Vec<f64> = pts.iter().map(|p| p.1).collect();
        series.push(Series::new(name, Style::Trace, g + 1, &xs, &ys, DECIMALS).0);
    }
    let agg = s.aggregate();
    if agg.is_empty() {
        return None;
    }
    let xs: Vec<f64> = agg.iter().map(|p| p.0 + s.zero_s + half).collect();
    let ys: Vec<f64> = agg.iter().map(|p| p.1).collect();
    series.insert(
        0,
        Series::new("aggregate", Style::Line, 0, &xs, &ys, DECIMALS).0,
    );
    if let (Some(level), Some(from)) = (s.verdict.settled_mb_s, s.verdict.settle_s) {
        let end = s.zero_s + s.verdict.intervals as f64 * s.params.f64("interval");
        let label = format!("settled {} MB/s", num(level));
        let x = [s.zero_s + from, end];
        series.push(Series::new(label, Style::Line, ACCENT, &x, &[level, level], DECIMALS).0);
    }
    let phases = s.trial.result.phases.iter();
    Some(Chart {
        title: "Throughput per interval".into(),
        caption: format!(
            "The streams' aggregate (thick line) and each stream (thin lines) in MB/s (10^6 bytes/s), one point per {} s harvest interval; the black line is the settled level from the moment the steady-state rule found it. Shaded bands are the trial's phases: the streaming, then the final sync that the total counts.",
            num(s.params.f64("interval"))
        ),
        x_label: "time (s)".into(),
        y_label: "throughput (MB/s)".into(),
        x_names: None,
        series,
        bands: Band::phases(phases.map(|p| (p.name.clone(), p.start_s, p.end_s))),
        ..Chart::default()
    })
}

fn stream_table(streams: &[StreamFigures]) -> Table {
    Table {
        caption: "Per-stream figures".into(),
        headings: super::figures::ROW_HEADINGS.map(String::from).to_vec(),
        rows: streams.iter().map(StreamFigures::row).collect(),
    }
}

fn stack_section(st: &StackTrials<'_>, s: &Shown) -> Section {
    let mut blocks = Vec::new();
    match (&s.intervals, throughput_chart(s)) {
        (_, Some(c)) => blocks.push(Block::Chart(c)),
        (Err(e), None) => blocks.push(Block::Note {
            text: format!("No chart: {e}"),
        }),
        (Ok(_), None) => blocks.push(Block::Note {
            text: "No chart: no full interval was harvested.".into(),
        }),
    }
    let buffers: Vec<_> = s
        .streams
        .iter()
        .map(|f| (f.name.clone(), f.buffer.clone()))
        .collect();
    blocks.extend(crate::workload::realtime::report::blocks(
        s.trial, PHASE, &buffers,
    ));
    blocks.push(Block::Table(stream_table(&s.streams)));
    let mut intro = intro(st, s);
    if s.params.text("pacing") == crate::workload::realtime::REALTIME {
        intro = format!(
            "{} streams in real time at {} Mbit/s each for {} s: {}.",
            s.streams.len(),
            crate::units::trim_float(s.params.f64("bitrate")),
            crate::units::trim_float(s.params.f64("duration")),
            s.verdict.realtime.summary().line()
        );
    }
    Section {
        title: format!("Stack {}", st.stack),
        intro: Some(intro),
        blocks,
    }
}

/// Every stack's aggregate, time counted from when its streams started.
fn all_stacks_chart(stacks: &[StackTrials<'_>], shown: &[Shown]) -> Option<Chart> {
    let mut series = Vec::new();
    for (g, (st, s)) in stacks.iter().zip(shown).enumerate() {
        let agg = s.aggregate();
        if agg.is_empty() {
            continue;
        }
        let half = s.params.f64("interval") / 2.0;
        let xs: Vec<f64> = agg.iter().map(|p| p.0 + half).collect();
        let ys: Vec<f64> = agg.iter().map(|p| p.1).collect();
        series.push(Series::new(st.stack, Style::Line, g, &xs, &ys, DECIMALS).0);
    }
    (!series.is_empty()).then(|| Chart {
        title: "Aggregate throughput of every stack".into(),
        caption: "Each stack's aggregate in MB/s per harvest interval, from the moment its streams started: where each settles, and how bursty it is on the way.".into(),
        x_label: "time since the streams started (s)".into(),
        y_label: "throughput (MB/s)".into(),
        x_names: None,
        series,
        ..Chart::default()
    })
}

impl KindReport for StreamReport {
    fn columns(&self) -> &'static [FigureSpec] {
        COLUMNS
    }

    fn figures(&self, trial: &Trial) -> Result<VerdictFigures, ResultError> {
        crate::workload::figures_of(trial, Verdict::figures)
    }

    fn column_groups(&self) -> &'static [&'static [&'static str]] {
        &[THROUGHPUT_KEYS, &crate::workload::realtime::REALTIME_KEYS]
    }

    fn sections(&self, stacks: &[StackTrials<'_>]) -> Result<Vec<Section>, ResultError> {
        let shown: Vec<Shown> = stacks
            .iter()
            .map(|st| Shown::read(st.trials[0]))
            .collect::<Result<_, _>>()?;
        let mut out: Vec<Section> = stacks
            .iter()
            .zip(&shown)
            .map(|(st, s)| stack_section(st, s))
            .collect();
        out.push(Section {
            title: "All stacks: aggregate throughput".into(),
            intro: Some("The verdict table above answers seed 001's question: the settled MB/s of each stack and its fraction of the raw drives' capability (a RAID10 can use at most half of it).".into()),
            blocks: all_stacks_chart(stacks, &shown).map(Block::Chart).into_iter().collect(),
        });
        Ok(out)
    }
}
