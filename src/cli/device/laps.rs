//! The rounds of `device validate` as they ran, one row per side and round: when it began,
//! each workload's mean response time in that round, and the host's steal meanwhile. Where the
//! main table judges the twin on each I/O's median over the rounds, this one shows what a
//! single round did: one standing apart, or a drift over the run on both sides.

use iotrial::present::Rows;
use iotrial::probe::validate::laps::Lap;
use iotrial::probe::validate::WORKLOADS;

/// Short column names of the set's workloads, in [`WORKLOADS`] order.
const SHORT: [&str; 4] = ["QD1 ms", "QD32 ms", "burst ms", "pass ms"];

/// One row per side and round, in the order the rounds began.
pub fn table(laps: &[Lap]) -> Rows {
    let shown: Vec<usize> = (0..WORKLOADS.len())
        .filter(|&w| {
            laps.iter()
                .any(|l| l.means.iter().any(|m| m.workload == WORKLOADS[w]))
        })
        .collect();
    let mut headings = vec!["side".to_string(), "round".into(), "began".into()];
    headings.extend(shown.iter().map(|&w| SHORT[w].to_string()));
    headings.push("steal ms/s".into());
    let mut keys: Vec<(&str, usize)> = Vec::new();
    for l in laps {
        if !keys.contains(&(l.side, l.round)) {
            keys.push((l.side, l.round));
        }
    }
    let rows = keys
        .into_iter()
        .map(|(side, round)| {
            let mine: Vec<&Lap> = laps
                .iter()
                .filter(|l| (l.side, l.round) == (side, round))
                .collect();
            let began = mine[0].started_s as u64;
            let mut row = vec![
                side.to_string(),
                round.to_string(),
                format!("{}:{:02}", began / 60, began % 60),
            ];
            row.extend(shown.iter().map(|&w| {
                mine.iter()
                    .flat_map(|l| &l.means)
                    .find(|m| m.workload == WORKLOADS[w])
                    .map_or("-".into(), |m| format!("{:.3}", m.mean_ms))
            }));
            let steal = mine
                .iter()
                .filter_map(|l| l.steal_ms_per_s)
                .reduce(f64::max);
            row.push(steal.map_or("-".into(), |s| format!("{s:.0}")));
            row
        })
        .collect();
    Rows { headings, rows }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iotrial::probe::validate::laps::LapMean;

    fn lap(side: &'static str, round: usize, half: &'static str, means: &[(usize, f64)]) -> Lap {
        Lap {
            side,
            round,
            half,
            started_s: 61.0 * round as f64,
            wall_s: 1.0,
            steal_ms_per_s: Some(round as f64 * 10.0),
            disturbed: false,
            means: means
                .iter()
                .map(|&(w, m)| LapMean {
                    workload: WORKLOADS[w],
                    mean_ms: m,
                })
                .collect(),
        }
    }

    #[test]
    fn a_rounds_two_halves_make_one_row_with_the_larger_steal() {
        let laps = [
            lap("device", 1, "random reads", &[(0, 8.0), (1, 4.0)]),
            lap("twin", 1, "random reads", &[(0, 8.1), (1, 4.2)]),
            lap("device", 1, "pass", &[(3, 4.5)]),
            Lap {
                steal_ms_per_s: Some(120.0),
                ..lap("twin", 1, "pass", &[(3, 4.4)])
            },
        ];
        let t = table(&laps);
        assert_eq!(
            t.headings,
            [
                "side",
                "round",
                "began",
                "QD1 ms",
                "QD32 ms",
                "pass ms",
                "steal ms/s"
            ]
        );
        assert_eq!(
            t.rows,
            [
                ["device", "1", "1:01", "8.000", "4.000", "4.500", "10"],
                ["twin", "1", "1:01", "8.100", "4.200", "4.400", "120"],
            ]
        );
    }
}
