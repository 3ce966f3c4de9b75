//! Tests of `device validate`: the demerit, the verdict, the set's scripts, the schedule of
//! the rounds and the wait for a calm drive, on models in this process.

use super::*;

/// Within 5% whatever the device's own spread; over it, as far as the device from itself
/// only up to the larger of its spread between rounds and at one more set of other places.
#[test]
fn a_demerit_is_judged_against_five_percent_and_the_devices_own_spread() {
    assert_eq!(Verdict::of(0.05, 0.0, None), Verdict::Within);
    assert_eq!(Verdict::of(0.049, 0.2, Some(0.3)), Verdict::Within);
    assert_eq!(Verdict::of(0.06, 0.01, None), Verdict::Over);
    assert_eq!(Verdict::of(0.30, 0.003, Some(0.34)), Verdict::OwnSpread);
    assert_eq!(Verdict::of(0.36, 0.003, Some(0.34)), Verdict::Over);
    assert_eq!(Verdict::of(0.07, 0.08, None), Verdict::OwnSpread);
    assert_eq!(Verdict::of(0.09, 0.08, Some(0.02)), Verdict::Over);
}

/// The device's places drawn afresh judge a twin by the upper end of their 95% prediction
/// interval, not by the largest of them: a twin beyond all four sets but within what a fifth
/// may show is as far as the device from itself; beyond that bound, over. Constant response
/// times make each demerit the difference of the constants.
#[test]
fn a_twin_is_judged_against_one_more_set_of_places_drawn_afresh() {
    let constant = |x: f64| -> Vec<Vec<f64>> { vec![vec![x; 64]; WORKLOADS.len()] };
    let at = [1.25, 1.31, 1.28, 1.33];
    let sides = |twin: f64| Sides {
        device: vec![constant(1.0); 3],
        twin: vec![constant(twin); 3],
        elsewhere: at.iter().map(|&x| constant(x)).collect(),
        busy: Busy {
            s: [0.0, 0.0],
            settled: true,
        },
        plan: Plan {
            rounds: 3,
            elsewhere: at.len(),
            set: Set::Full,
            qd32_reads: QD32_READS,
        },
        laps: Vec::new(),
    };
    // 0.2925 + t(0.95, 3) x 0.0359 x sqrt(1.25) = 0.3846.
    for (twin, want) in [(1.37, Verdict::OwnSpread), (1.39, Verdict::Over)] {
        let v = compared("device", "twin", sides(twin));
        for (w, f) in v.figures.iter().enumerate() {
            assert!((f.demerit_share - (twin - 1.0)).abs() < 1e-9, "{f:?}");
            if w < DRAWN {
                assert!(
                    (f.elsewhere_max_share.unwrap() - 0.33).abs() < 1e-9,
                    "{f:?}"
                );
                let bound = f.elsewhere_bound_share.unwrap();
                assert!((bound - 0.384_589_910_779_637_3).abs() < 1e-6, "{f:?}");
                assert_eq!(f.verdict, want, "{f:?}");
            } else {
                assert_eq!(f.elsewhere_bound_share, None, "{f:?}");
                assert_eq!(f.verdict, Verdict::Over, "{f:?}");
            }
        }
    }
}

#[test]
fn each_io_takes_its_median_over_the_rounds() {
    // The second round's third I/O was held up by the host: the median leaves it out.
    let rounds = vec![
        vec![1.0, 2.0, 3.0],
        vec![1.1, 2.0, 9.0],
        vec![0.9, 2.1, 3.1],
    ];
    assert_eq!(per_io_medians(&rounds), vec![1.0, 2.0, 3.1]);
}

#[test]
fn the_burst_counts_its_writes_and_the_pass_its_streaming_reads() {
    let s = scripts(1 << 30, 1, Set::Full, QD32_READS);
    assert_eq!(s[2].counted.iter().filter(|&&c| c).count(), 64);
    assert_eq!(s[2].counted.len(), 66);
    assert_eq!(s[3].counted.iter().filter(|&&c| c).count(), 63);
    assert_eq!((s[0].depth, s[1].depth), (1, 32));
}

/// In every round both sides read before either writes, the side that goes first
/// alternates, and each side's burst and pass come right after the other side's (or
/// right before): nothing of a round's reads runs between the two bursts.
#[test]
fn both_sides_burst_one_after_the_other_in_every_round() {
    let s = schedule(3);
    assert_eq!(s.len(), 12);
    for (r, round) in s.chunks(4).enumerate() {
        let first = r % 2;
        assert_eq!(
            round,
            [
                (first, Half::Drawn),
                (1 - first, Half::Drawn),
                (first, Half::Placed),
                (1 - first, Half::Placed)
            ]
        );
    }
}

/// A round run in halves holds every workload, in the set's order.
#[test]
fn a_round_in_halves_holds_the_whole_set() {
    static NEVER: AtomicBool = AtomicBool::new(false);
    let m = crate::emu::ModelSpec::parse("hdd,size=4GiB")
        .and_then(|s| s.build())
        .unwrap();
    let mut run = Runner::on_model(m, &NEVER);
    let plan = Plan {
        rounds: 1,
        elsewhere: 0,
        set: Set::Full,
        qd32_reads: QD32_READS,
    };
    let mut r = half(&mut run, 4 << 30, 1, plan, Half::Drawn).unwrap();
    r.extend(half(&mut run, 4 << 30, 1, plan, Half::Placed).unwrap());
    let counts: Vec<usize> = r.iter().map(|w| w.len()).collect();
    assert_eq!(counts, vec![300, QD32_READS, 64, 63]);
    let plan = Plan {
        set: Set::ReadOnly,
        ..plan
    };
    assert_eq!(
        half(&mut run, 4 << 30, 1, plan, Half::Placed)
            .unwrap()
            .iter()
            .map(|w| w.len())
            .collect::<Vec<_>>(),
        vec![63]
    );
}

/// More QD32 reads a round lengthen that workload alone, and its first reads are the
/// default set's: the same places, then more.
#[test]
fn more_qd32_reads_lengthen_that_workload_alone() {
    let short = scripts(1 << 30, 1, Set::Full, QD32_READS);
    let long = scripts(1 << 30, 1, Set::Full, 4 * QD32_READS);
    assert_eq!(short[1].steps.len(), QD32_READS);
    assert_eq!(long[1].steps.len(), 4 * QD32_READS);
    assert_eq!(long[1].counted.len(), 4 * QD32_READS);
    assert_eq!(long[1].steps[..QD32_READS], short[1].steps[..]);
    for w in [0, 2, 3] {
        assert_eq!(long[w].steps, short[w].steps);
    }
}

/// The read-only set is the full one less the burst, the same I/Os at the same places,
/// and none of them a write or a flush.
#[test]
fn the_read_only_set_leaves_out_the_burst_and_only_reads() {
    let full = scripts(1 << 30, 1, Set::Full, QD32_READS);
    let ro = scripts(1 << 30, 1, Set::ReadOnly, QD32_READS);
    let names = |s: &[Script]| s.iter().map(|s| s.name).collect::<Vec<_>>();
    assert_eq!(names(&ro), [WORKLOADS[0], WORKLOADS[1], WORKLOADS[3]]);
    assert_eq!(names(&full), WORKLOADS);
    for s in &ro {
        let same = full.iter().find(|f| f.name == s.name).unwrap();
        assert_eq!(s.steps, same.steps);
        assert!(s.steps.iter().all(|st| match st {
            Step::Io { op, .. } => *op == crate::engine::Op::Read,
            Step::Idle(_) | Step::Pause(_) => true,
        }));
    }
    assert_eq!(Set::ReadOnly.not_run(), [BURST]);
}

/// Read-only, the runners refuse any write: the set runs to its end on a model without
/// one, and its figures are the three reads'.
#[test]
fn a_read_only_validation_runs_the_reads_only() {
    static NEVER: AtomicBool = AtomicBool::new(false);
    let build = || {
        crate::emu::ModelSpec::parse("hdd,size=2GiB")
            .unwrap()
            .build()
            .unwrap()
    };
    let mut on_dev = Runner::on_model(build(), &NEVER);
    let mut on_twin = Runner::on_model(build(), &NEVER);
    (on_dev.writable, on_twin.writable) = (false, false);
    let plan = Plan {
        rounds: 3,
        elsewhere: 0,
        set: Set::ReadOnly,
        qd32_reads: QD32_READS,
    };
    let sides = alternated(
        &mut on_dev,
        &mut on_twin,
        2 << 30,
        plan,
        [None, None],
        &mut |_| {},
    )
    .unwrap();
    let v = compared("device", "twin", sides);
    let names: Vec<_> = v.figures.iter().map(|f| f.workload).collect();
    assert_eq!(names, [WORKLOADS[0], WORKLOADS[1], WORKLOADS[3]]);
    assert_eq!(v.not_run, [BURST]);
    for f in &v.figures {
        assert!(
            f.demerit_share < 1e-9,
            "{}: {}",
            f.workload,
            f.demerit_share
        );
    }
}

/// An SMR disk whose persistent cache random writes have just filled, against a fresh
/// image of the same model: waiting for its cleaning before each round brings the two to
/// the same state, so the round trip is the model against itself.
#[test]
fn a_drive_busy_cleaning_is_waited_for_before_its_rounds() {
    static NEVER: AtomicBool = AtomicBool::new(false);
    let spec = "smr,size=4GiB,cache=128MiB,band=16MiB,idle=0.5";
    let build = || crate::emu::ModelSpec::parse(spec).unwrap().build().unwrap();
    let mut on_dev = Runner::on_model(build(), &NEVER);
    let mut on_twin = Runner::on_model(build(), &NEVER);
    let mut d = Draw::new(9);
    let writes: Vec<Step> = (0..30_000)
        .map(|_| Step::write(d.aligned(0, (4 << 30) - K4, K4), K4))
        .collect();
    on_dev.run(&writes).unwrap();
    let cap = 4 << 30;
    let plan = Plan {
        rounds: 3,
        elsewhere: 0,
        set: Set::Full,
        qd32_reads: QD32_READS,
    };
    let sides = alternated(
        &mut on_dev,
        &mut on_twin,
        cap,
        plan,
        [None, None],
        &mut |_| {},
    )
    .unwrap();
    let v = compared("written", "fresh", sides);
    assert!(v.settled);
    assert!(
        v.busy_s[0] > 10.0 && v.busy_s[1] < 1.0,
        "busy: {:?}",
        v.busy_s
    );
    for f in &v.figures {
        assert!(
            f.demerit_share < 0.01,
            "{}: {:.2}% after the wait",
            f.workload,
            f.demerit_share * 100.0
        );
    }
}

#[test]
fn demerit_is_the_rms_horizontal_distance() {
    let a: Vec<f64> = (0..100).map(|i| i as f64).collect();
    assert!(demerit(&a, &a) < 1e-12);
    // Shifted by 3: every quantile 3 apart.
    let b: Vec<f64> = a.iter().map(|x| x + 3.0).collect();
    assert!((demerit(&a, &b) - 3.0).abs() < 1e-9);
    // Scaled by 2: the distance grows with the quantile; RMS of x over [0, 99].
    let c: Vec<f64> = a.iter().map(|x| 2.0 * x).collect();
    let rms = (a.iter().map(|x| x * x).sum::<f64>() / 100.0).sqrt();
    assert!(
        (demerit(&a, &c) / rms - 1.0).abs() < 0.02,
        "{}",
        demerit(&a, &c)
    );
}

/// Every half of every round is kept as a lap, in the order run: both sides' random reads,
/// then both sides' burst and pass, each with its workloads' means; then the rounds at other
/// offsets. A model against a fresh copy of itself has the same means on both sides.
#[test]
fn each_half_of_each_round_is_a_lap_in_the_order_run() {
    static NEVER: AtomicBool = AtomicBool::new(false);
    let build = || {
        crate::emu::ModelSpec::parse("hdd,size=2GiB")
            .unwrap()
            .build()
            .unwrap()
    };
    let mut on_dev = Runner::on_model(build(), &NEVER);
    let mut on_twin = Runner::on_model(build(), &NEVER);
    let plan = Plan {
        rounds: 3,
        elsewhere: 1,
        set: Set::Full,
        qd32_reads: QD32_READS,
    };
    // The twin's server, read once at each of its halves' start and end: each read finds 10
    // more replies, one more of them late by 0.5 ms.
    let reads = std::cell::Cell::new(0u64);
    let server = || {
        reads.set(reads.get() + 1);
        Some(ServerLate {
            replies: 10 * reads.get(),
            late: reads.get(),
            late_ms: 0.5 * reads.get() as f64,
        })
    };
    let servers: [ServerCount; 2] = [None, Some(&server)];
    let sides = alternated(
        &mut on_dev,
        &mut on_twin,
        2 << 30,
        plan,
        servers,
        &mut |_| {},
    )
    .unwrap();
    let v = compared("device", "twin", sides);
    for l in &v.laps {
        let want = (l.side == "twin").then_some(ServerLate {
            replies: 10,
            late: 1,
            late_ms: 0.5,
        });
        assert_eq!(l.server, want, "{l:?}");
    }
    assert_eq!(reads.get(), 12, "twice in each of the twin's six halves");
    let order: Vec<_> = v.laps.iter().map(|l| (l.side, l.round, l.half)).collect();
    let (r, b) = ("random reads", "burst and pass");
    assert_eq!(
        order,
        [
            ("device", 1, r),
            ("twin", 1, r),
            ("device", 1, b),
            ("twin", 1, b),
            ("twin", 2, r),
            ("device", 2, r),
            ("twin", 2, b),
            ("device", 2, b),
            ("device", 3, r),
            ("twin", 3, r),
            ("device", 3, b),
            ("twin", 3, b),
            ("device at other offsets", 1, r),
            ("device at other offsets", 1, b),
        ]
    );
    assert!(v.laps.windows(2).all(|w| w[0].started_s <= w[1].started_s));
    for l in &v.laps {
        let names: Vec<_> = l.means.iter().map(|m| m.workload).collect();
        let want = if l.half == r {
            &WORKLOADS[..2]
        } else {
            &WORKLOADS[2..]
        };
        assert_eq!(names, want);
        assert!(l.means.iter().all(|m| m.mean_ms > 0.0), "{l:?}");
    }
    for pair in v.laps[..12].chunks(2) {
        for (a, b) in pair[0].means.iter().zip(&pair[1].means) {
            assert!(
                (a.mean_ms / b.mean_ms - 1.0).abs() < 1e-9,
                "{:?} against {:?}",
                pair[0],
                pair[1]
            );
        }
    }
}
