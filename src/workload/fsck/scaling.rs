//! fsck across a sweep of the file count (seed 004's question: how long will a check take on
//! the filesystem I am about to build?). Per stack, a power law `fsck_s = a · files^b` fitted
//! on log-log axes ([`crate::analysis::fit`]) with its R², and predictions at 10M, 100M and 1B
//! files with 95% prediction intervals, marked as outside the data they extrapolate from.
//! Charts: check time against files on log axes with each fit, and files/s against files per
//! stack (each stack is a filesystem at one size: the seed's Tables 2 and 3), with the same
//! comparison as a table.

use super::figures::{count, verdict_of};
use crate::analysis::fit::PowerLaw;
use crate::present::chart::{Block, Chart, Section, Series, Style, Table};
use crate::present::{num, num_opt};
use crate::result::{ResultError, StackTrials};

/// The file counts the fit extrapolates to.
pub const TARGETS: [f64; 3] = [1e7, 1e8, 1e9];

/// One stack's points: (files, fsck_s, fsck_files_per_s), by files.
struct Points {
    stack: String,
    points: Vec<(f64, f64, f64)>,
}

fn points(stacks: &[StackTrials<'_>]) -> Result<Vec<Points>, ResultError> {
    let mut out = Vec::new();
    for s in stacks {
        let mut points = Vec::new();
        for t in &s.trials {
            let v = verdict_of(t)?;
            if let (Some(secs), Some(rate)) = (v.fsck_s, v.fsck_files_per_s) {
                if v.files > 0 && secs > 0.0 {
                    points.push((v.files as f64, secs, rate));
                }
            }
        }
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        out.push(Points {
            stack: s.stack.to_string(),
            points,
        });
    }
    Ok(out)
}

/// `y s (low–high)` of a prediction, with its interval when there is one.
fn predicted(fit: &PowerLaw, x: f64) -> String {
    let p = fit.predict(x);
    let mark = if p.extrapolated { " *" } else { "" };
    match (p.low, p.high) {
        (Some(l), Some(h)) => format!("{} ({}–{}){mark}", num(p.y), num(l), num(h)),
        _ => format!("{} (no interval: 2 points){mark}", num(p.y)),
    }
}

/// `n` values from `a` to `b`, evenly on a log scale.
fn log_steps(a: f64, b: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| (a.ln() + (b.ln() - a.ln()) * i as f64 / (n - 1) as f64).exp())
        .collect()
}

/// The scaling sections of every fsck trial of a study, grouped by stack; none when no stack
/// has checks at two file counts.
pub fn sections(stacks: &[StackTrials<'_>]) -> Result<Vec<Section>, ResultError> {
    let all = points(stacks)?;
    let fits: Vec<(&Points, PowerLaw)> = all
        .iter()
        .filter_map(|p| {
            let xy: Vec<(f64, f64)> = p.points.iter().map(|&(x, y, _)| (x, y)).collect();
            PowerLaw::fit(&xy).ok().map(|f| (p, f))
        })
        .collect();
    if fits.is_empty() {
        return Ok(Vec::new());
    }
    let mut headings = vec![
        "stack".to_string(),
        "points".into(),
        "files fitted".into(),
        "fsck_s = a · files^b".into(),
        "R²".into(),
    ];
    headings.extend(TARGETS.map(|x| format!("fsck s at {} files (95% PI)", count(x))));
    let rows = fits
        .iter()
        .map(|(p, f)| {
            let mut r = vec![
                p.stack.clone(),
                f.n.to_string(),
                format!("{}–{}", count(f.x_min), count(f.x_max)),
                format!("{:.3e} · files^{}", f.coefficient, num(f.exponent)),
                format!("{:.3}", f.r2),
            ];
            r.extend(TARGETS.map(|x| predicted(f, x)));
            r
        })
        .collect();
    let fit_table = Table {
        caption: "Check time against the file count: a power law fitted per stack by least squares on log-log axes, with its R² there, and its predictions with 95% prediction intervals (Student's t on the residuals)".into(),
        headings,
        rows,
    };
    let warning = "* Outside the data: these predictions assume the power law fitted on the counts measured holds far beyond them. It does not hold once the checker's memory runs short (the seed's xfs_repair at 415M files on 72 TB swapped and fell to a third of its rate) or the metadata outgrows the caches; treat them as a model's guess with the stated interval, not as measurements.";
    let blocks = vec![
        Block::Table(fit_table),
        Block::Note {
            text: warning.into(),
        },
        Block::Chart(time_chart(&fits)),
        Block::Chart(rate_chart(&all)),
        Block::Table(rate_table(&all)),
    ];
    Ok(vec![Section {
        title: "Scaling: check time against the file count".into(),
        intro: Some(
            "Every fsck trial of the study, grouped by stack (a filesystem on a device of one size), across the swept file counts.".into(),
        ),
        blocks,
    }])
}

/// Check time against files on log axes: each stack's points, its fit over the data, and the
/// fit extrapolated to the largest target.
fn time_chart(fits: &[(&Points, PowerLaw)]) -> Chart {
    let mut series = Vec::new();
    for (g, (p, f)) in fits.iter().enumerate() {
        let xs: Vec<f64> = p.points.iter().map(|q| q.0).collect();
        let ys: Vec<f64> = p.points.iter().map(|q| q.1).collect();
        series.push(Series::new(&p.stack, Style::Points, g, &xs, &ys, (0, 3)).0);
        let inside = log_steps(f.x_min, f.x_max, 16);
        let fy: Vec<f64> = inside.iter().map(|&x| f.at(x)).collect();
        let label = format!("{} fit", p.stack);
        series.push(Series::new(label, Style::Line, g, &inside, &fy, (0, 3)).0);
        let beyond = log_steps(f.x_max, TARGETS[2], 16);
        let by: Vec<f64> = beyond.iter().map(|&x| f.at(x)).collect();
        let label = format!("{} extrapolated", p.stack);
        series.push(Series::new(label, Style::Trace, g, &beyond, &by, (0, 3)).0);
    }
    Chart {
        title: "Check time against files".into(),
        caption: "Each stack's checks (points), its power-law fit over the data (line) and the same law extrapolated to 1G files (thin line: outside the data). Log axes.".into(),
        x_label: "files".into(),
        y_label: "fsck time (s)".into(),
        series,
        x_log: true,
        y_log: true,
        ..Chart::default()
    }
}

/// Files/s against files, one line per stack.
fn rate_chart(all: &[Points]) -> Chart {
    let series = all
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.points.is_empty())
        .map(|(g, p)| {
            let xs: Vec<f64> = p.points.iter().map(|q| q.0).collect();
            let ys: Vec<f64> = p.points.iter().map(|q| q.2).collect();
            Series::new(&p.stack, Style::Line, g, &xs, &ys, (0, 1)).0
        })
        .collect();
    Chart {
        title: "Check rate against files, per filesystem and size".into(),
        caption: "Files checked per second at each file count (the seed's red figure); stacks that differ only in device size show what spreading the same files over more space costs (the seed's Tables 2 and 3). Log x axis.".into(),
        x_label: "files".into(),
        y_label: "fsck files/s".into(),
        series,
        x_log: true,
        ..Chart::default()
    }
}

/// The base of a swept stack's name (`xfs` of `xfs-72GiB`).
fn base(stack: &str) -> &str {
    stack.rsplit_once('-').map_or(stack, |(b, _)| b)
}

/// Files/s per file count and stack, with the change between stacks of one base (one
/// filesystem at two sizes: the seed's Tables 2 and 3).
fn rate_table(all: &[Points]) -> Table {
    let mut counts: Vec<f64> = all
        .iter()
        .flat_map(|p| p.points.iter().map(|q| q.0))
        .collect();
    counts.sort_by(f64::total_cmp);
    counts.dedup();
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (i, a) in all.iter().enumerate() {
        if let Some(j) = all[i + 1..]
            .iter()
            .position(|b| base(&b.stack) == base(&a.stack))
        {
            if base(&a.stack) != a.stack {
                pairs.push((i, i + 1 + j));
            }
        }
    }
    let mut headings = vec!["files".to_string()];
    headings.extend(all.iter().map(|p| format!("{} files/s", p.stack)));
    headings.extend(
        pairs
            .iter()
            .map(|&(i, j)| format!("{} vs {}", all[j].stack, all[i].stack)),
    );
    let rate = |p: &Points, x: f64| {
        let r: Vec<f64> = p.points.iter().filter(|q| q.0 == x).map(|q| q.2).collect();
        (!r.is_empty()).then(|| r.iter().sum::<f64>() / r.len() as f64)
    };
    let rows = counts
        .iter()
        .map(|&x| {
            let mut r = vec![count(x)];
            r.extend(all.iter().map(|p| num_opt(rate(p, x))));
            r.extend(
                pairs
                    .iter()
                    .map(|&(i, j)| match (rate(&all[i], x), rate(&all[j], x)) {
                        (Some(a), Some(b)) if a > 0.0 => format!("{:+.1}%", (b / a - 1.0) * 100.0),
                        _ => "-".into(),
                    }),
            );
            r
        })
        .collect();
    Table {
        caption: "Check rate (files/s) per file count and stack, and the change from one size of a filesystem to the other (mean over repeats)".into(),
        headings,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swept_stack_names_have_their_base() {
        assert_eq!(base("xfs-72GiB"), "xfs");
        assert_eq!(base("ext4"), "ext4");
        let s = log_steps(10.0, 1000.0, 3);
        assert!((s[1] - 100.0).abs() < 1e-9);
    }
}
