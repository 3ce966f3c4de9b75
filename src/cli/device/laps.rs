//! The rounds of `device validate` as they ran, one row per side and round: when it began,
//! each workload's mean response time in that round, and the host's steal meanwhile. Where the
//! main table judges the twin on each I/O's median over the rounds, this one shows what a
//! single round did: one standing apart, or a drift over the run on both sides. On the twin,
//! whose server runs here, it also counts the replies its server sent late: the host took
//! longer to handle those requests than the model's time for them.

use iotrial::present::Rows;
use iotrial::probe::validate::laps::{Lap, ServerLate};
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
    let served = laps.iter().any(|l| l.server.is_some());
    if served {
        headings.push("late replies".into());
    }
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
            if served {
                row.push(sum(mine.iter().filter_map(|l| l.server)).map_or("-".into(), late_text));
            }
            row
        })
        .collect();
    Rows { headings, rows }
}

/// The counts of several laps together; `None` for none.
fn sum(counts: impl Iterator<Item = ServerLate>) -> Option<ServerLate> {
    counts.reduce(|a, b| ServerLate {
        replies: a.replies + b.replies,
        late: a.late + b.late,
        late_ms: a.late_ms + b.late_ms,
    })
}

/// "late of replies, ms late in all".
fn late_text(s: ServerLate) -> String {
    format!("{} of {}, {:.1} ms", s.late, s.replies, s.late_ms)
}

/// What the twin's server's late replies mean, said once under the table; `None` when it sent
/// none late (or is not served here).
pub fn late_note(laps: &[Lap]) -> Option<String> {
    let all = sum(laps.iter().filter_map(|l| l.server))?;
    if all.late == 0 {
        return None;
    }
    let worst = laps
        .iter()
        .filter(|l| l.server.is_some_and(|s| s.late > 0))
        .max_by(|a, b| {
            a.server
                .map(|s| s.late_ms)
                .partial_cmp(&b.server.map(|s| s.late_ms))
                .expect("finite")
        })?;
    let w = worst.server?;
    Some(format!(
        "\"late replies\": the twin's server replied late to {} of its {} requests, {:.1} ms late in all (the most in round {}'s {}: {}), where handling a request on this host (the store into the twin's image included) outlasted the model's time for it; those response times measure the host as well as the twin.",
        all.late,
        all.replies,
        all.late_ms,
        worst.round,
        worst.half,
        late_text(w)
    ))
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
            server: None,
        }
    }

    #[test]
    fn the_twins_late_replies_are_summed_by_round_and_said_under_the_table() {
        let late = |late: u64, late_ms: f64| {
            Some(ServerLate {
                replies: 64,
                late,
                late_ms,
            })
        };
        let laps = [
            lap("device", 1, "random reads", &[(0, 8.0)]),
            Lap {
                server: late(1, 0.2),
                ..lap("twin", 1, "random reads", &[(0, 8.1)])
            },
            lap("device", 1, "burst and pass", &[(2, 0.3)]),
            Lap {
                server: late(20, 4.5),
                ..lap("twin", 1, "burst and pass", &[(2, 0.4)])
            },
        ];
        let t = table(&laps);
        assert_eq!(t.headings.last().unwrap(), "late replies");
        assert_eq!(t.rows[0].last().unwrap(), "-");
        assert_eq!(t.rows[1].last().unwrap(), "21 of 128, 4.7 ms");
        let note = late_note(&laps).unwrap();
        assert!(note.contains("21 of its 128 requests, 4.7 ms"), "{note}");
        assert!(
            note.contains("round 1's burst and pass: 20 of 64, 4.5 ms"),
            "{note}"
        );
        let none = [Lap {
            server: late(0, 0.0),
            ..lap("twin", 1, "random reads", &[(0, 8.1)])
        }];
        assert_eq!(late_note(&none), None);
        assert_eq!(late_note(&laps[..1]), None);
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
