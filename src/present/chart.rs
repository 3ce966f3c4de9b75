//! Report sections as data: titled sections made of charts, tables and notes. The report lays
//! them out in HTML and Markdown without knowing which workload made them.

use crate::analysis::downsample;
use serde::Serialize;

/// One titled part of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub title: String,
    /// A sentence or two under the title.
    pub intro: Option<String>,
    pub blocks: Vec<Block>,
}

/// A piece of a section.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Block {
    Chart(Chart),
    Table(Table),
    Note { text: String },
}

/// A table of text; also written to report.md as one of the key figures.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    pub caption: String,
    pub headings: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Style {
    /// Small dots, one per point.
    Points,
    /// A line through the points.
    Line,
    /// A thin, translucent line (a secondary series over points).
    Trace,
    /// A line that steps (for distributions).
    Step,
    /// Large outlined dots for points to notice (a peak).
    Marker,
}

/// One series of a chart: its own x and y values.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub label: String,
    pub style: Style,
    /// Series of one group share a colour (a stream's points and its moving average).
    pub group: usize,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
}

/// An x-y chart. Its data go into the page's embedded JSON, not into the markup.
#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    pub title: String,
    pub caption: String,
    pub x_label: String,
    pub y_label: String,
    /// Category names for integer x values 0, 1, 2, ... (otherwise numeric ticks).
    pub x_names: Option<Vec<String>>,
    pub series: Vec<Series>,
    /// Phases shaded behind a time chart (x in seconds on the trial's timeline); none for
    /// other charts or a trial of one phase.
    pub phases: Vec<PhaseBand>,
}

/// One phase of a trial, shaded behind a time chart from `start` to `end` (x units).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseBand {
    pub name: String,
    pub start: f64,
    pub end: f64,
}

impl PhaseBand {
    /// The bands of phases (name, start, end); none when there are fewer than two, since one
    /// band behind the whole chart says nothing.
    pub fn of(phases: impl IntoIterator<Item = (String, f64, Option<f64>)>) -> Vec<PhaseBand> {
        let bands: Vec<PhaseBand> = phases
            .into_iter()
            .filter_map(|(name, start, end)| end.map(|end| PhaseBand { name, start, end }))
            .collect();
        if bands.len() < 2 {
            return Vec::new();
        }
        bands
    }
}

/// The group of series drawn in the accent colour (peaks and other points to notice).
pub const ACCENT: usize = 999;

/// Most points a series keeps in a chart before it is downsampled.
pub const MAX_POINTS: usize = 1000;

/// Caption sentence for charts whose series were downsampled.
pub const DOWNSAMPLED_NOTE: &str = "Series of more than 1000 points are downsampled: each bucket keeps its minimum and maximum, so every spike stays visible.";

impl Series {
    /// A series of `xs`, `ys`, downsampled to [`MAX_POINTS`] keeping each bucket's min and
    /// max of y, and rounded to `decimals` decimal places. Returns whether it was reduced.
    pub fn new(
        label: impl Into<String>,
        style: Style,
        group: usize,
        xs: &[f64],
        ys: &[f64],
        decimals: (i32, i32),
    ) -> (Series, bool) {
        let keep = downsample::min_max_indices(ys, MAX_POINTS);
        let (px, py) = (10f64.powi(decimals.0), 10f64.powi(decimals.1));
        let series = Series {
            label: label.into(),
            style,
            group,
            x: keep.iter().map(|&i| (xs[i] * px).round() / px).collect(),
            y: keep.iter().map(|&i| (ys[i] * py).round() / py).collect(),
        };
        (series, keep.len() < ys.len())
    }
}

impl Chart {
    /// Number of points over all series.
    pub fn points(&self) -> usize {
        self.series.iter().map(|s| s.x.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_phase_is_not_shaded() {
        let one = PhaseBand::of([("run".to_string(), 0.0, Some(5.0))]);
        assert!(one.is_empty());
        let two = PhaseBand::of([
            ("stream".to_string(), 0.0, Some(5.0)),
            ("sync".to_string(), 5.0, Some(6.5)),
            ("open".to_string(), 6.5, None),
        ]);
        assert_eq!(two.len(), 2);
        assert_eq!(two[1].end, 6.5);
    }

    #[test]
    fn series_is_downsampled_and_rounded() {
        let xs: Vec<f64> = (0..5000).map(|i| i as f64 * 0.0012345).collect();
        let mut ys = vec![1.0; 5000];
        ys[4321] = 99.123_456;
        let (s, reduced) = Series::new("r0", Style::Points, 0, &xs, &ys, (3, 2));
        assert!(reduced && s.x.len() <= MAX_POINTS);
        assert!(s.y.contains(&99.12));
        assert!(s
            .x
            .iter()
            .all(|x| (x * 1000.0 - (x * 1000.0).round()).abs() < 1e-6));
        let (s, reduced) = Series::new("r0", Style::Points, 0, &xs[..10], &ys[..10], (3, 2));
        assert!(!reduced && s.x.len() == 10);
    }
}
