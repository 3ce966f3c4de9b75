//! The report's view of real-time streams, for any kind that has them: each stream's buffer
//! occupancy over the run (its peak per interval, as a share of its size, from
//! timeseries.csv; record streams climbing toward 100% are near overflow, playback streams
//! falling toward 0% near a stall), and a table of every buffer's figures with the first
//! overflow and stall times.

use super::figures::BufferFigures;
use crate::present::chart::{Block, Chart, Series, Style, Table};
use crate::present::{num, num_opt};
use crate::result::{csv, Trial};

/// The blocks of one trial's real-time streams: one chart per role, then the table. `buffers`
/// are its streams' names and buffer figures (`None` for streams not in real time); `phase`
/// names the phase they ran in.
pub fn blocks(
    trial: &Trial,
    phase: &str,
    buffers: &[(String, Option<BufferFigures>)],
) -> Vec<Block> {
    if buffers.iter().all(|(_, b)| b.is_none()) {
        return Vec::new();
    }
    let mut out = Vec::new();
    match csv::read_timeseries(&trial.file("timeseries.csv")) {
        Ok(rows) => {
            let zero = trial
                .result
                .phases
                .iter()
                .find(|p| p.name == phase)
                .map_or(0.0, |p| p.sampling_start_s.unwrap_or(p.start_s));
            for role in ["record", "playback"] {
                let mut series = Vec::new();
                let mine = buffers
                    .iter()
                    .filter_map(|(n, b)| Some((n, b.as_ref()?)))
                    .filter(|(_, b)| b.role == role);
                for (g, (name, b)) in mine.enumerate() {
                    let pts: Vec<(f64, f64)> = rows
                        .iter()
                        .filter(|r| r.phase == phase && &r.stream == name)
                        .filter_map(|r| {
                            let level =
                                r.buffer?.peak as f64 * 100.0 / b.buffer_bytes.max(1) as f64;
                            Some((r.start_s - zero, level))
                        })
                        .collect();
                    let (xs, ys): (Vec<f64>, Vec<f64>) = pts.into_iter().unzip();
                    series.push(Series::new(name.as_str(), Style::Line, g, &xs, &ys, (3, 1)).0);
                }
                if series.is_empty() {
                    continue;
                }
                let caption = match role {
                    "record" => "Each line is one record stream's buffer: the most it held in each interval, as a share of its size. At 100% the application's data had nowhere to go and was dropped (an overflow); a stack that keeps up holds about one chunk.",
                    _ => "Each line is one playback stream's buffer: the most it held in each interval, as a share of its size, from when it started filling its pre-roll. A line at 0% is a stall: a frame was due with nothing to play.",
                };
                out.push(Block::Chart(Chart {
                    title: format!("{}: buffer occupancy", capitalized(role)),
                    caption: caption.into(),
                    x_label: "time since the streams started (s)".into(),
                    y_label: "peak occupancy (% of the buffer)".into(),
                    series,
                    ..Chart::default()
                }));
            }
        }
        Err(e) => out.push(Block::Note {
            text: format!("No buffer charts: {e}"),
        }),
    }
    out.push(Block::Table(table(buffers)));
    out
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Every real-time stream's buffer figures.
fn table(buffers: &[(String, Option<BufferFigures>)]) -> Table {
    let headings = [
        "stream",
        "bitrate (Mbit/s)",
        "buffer (MB)",
        "peak (%)",
        "overflow (MB)",
        "overflows",
        "first overflow (s)",
        "underruns",
        "stalled (s)",
        "first stall (s)",
        "started (s)",
        "from wanted p99 (ms)",
    ];
    let mb = |b: u64| num(b as f64 / 1e6);
    let rows = buffers
        .iter()
        .filter_map(|(n, b)| Some((n, b.as_ref()?)))
        .map(|(n, b)| {
            let playback = b.role == "playback";
            let opt_if = |yes: bool, v: String| if yes { v } else { "-".into() };
            vec![
                n.clone(),
                num(b.bitrate_mbit),
                mb(b.buffer_bytes),
                num(b.peak_pct),
                opt_if(!playback, mb(b.overflow_bytes)),
                opt_if(!playback, b.overflow_events.to_string()),
                num_opt(b.overflows.first().map(|o| o.start_s)),
                opt_if(playback, b.underruns.to_string()),
                opt_if(playback, num(b.stall_s)),
                num_opt(b.stalls.first().map(|s| s.start_s)),
                num_opt(b.startup_s),
                num(b.lat_from_wanted_ms.p99),
            ]
        })
        .collect();
    Table {
        caption: "Real-time streams: each buffer, what it dropped or how it stalled, and when; latency counted from when each I/O was wanted".into(),
        headings: headings.iter().map(|h| h.to_string()).collect(),
        rows,
    }
}
