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
    /// Drawn against the chart's second y axis (on the right).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub right: bool,
}

/// A shaded stretch of the x axis with its name (a phase).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Band {
    pub label: String,
    pub x0: f64,
    pub x1: f64,
}

impl Band {
    /// The bands of a trial's phases (name, start, end), x in seconds on its timeline; a phase
    /// still running (no end) has none.
    pub fn phases(phases: impl IntoIterator<Item = (String, f64, Option<f64>)>) -> Vec<Band> {
        phases
            .into_iter()
            .filter_map(|(label, x0, end)| end.map(|x1| Band { label, x0, x1 }))
            .collect()
    }
}

/// An x-y chart. Its data go into the page's embedded JSON, not into the markup.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Chart {
    pub title: String,
    pub caption: String,
    pub x_label: String,
    pub y_label: String,
    /// Category names for integer x values 0, 1, 2, ... (otherwise numeric ticks).
    pub x_names: Option<Vec<String>>,
    pub series: Vec<Series>,
    /// The label of the second y axis, for series drawn on the right.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub y2_label: Option<String>,
    /// Stretches of x shaded behind the series (phases).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bands: Vec<Band>,
    /// Logarithmic x and y axes (scaling charts: time against the file count).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub x_log: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub y_log: bool,
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
            right: false,
        };
        (series, keep.len() < ys.len())
    }

    /// The series, drawn against the second y axis.
    pub fn on_right(mut self) -> Series {
        self.right = true;
        self
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
    fn finished_phases_are_bands() {
        let two = Band::phases([
            ("stream".to_string(), 0.0, Some(5.0)),
            ("sync".to_string(), 5.0, Some(6.5)),
            ("open".to_string(), 6.5, None),
        ]);
        assert_eq!(two.len(), 2);
        assert_eq!((two[1].x0, two[1].x1), (5.0, 6.5));
        assert_eq!(two[1].label, "sync");
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
