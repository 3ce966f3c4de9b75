//! `iotrial device validate`: one validation set (300 QD1 and 320 QD32 random 4 KiB reads, or
//! as many QD32 reads as asked ([`Plan::qd32_reads`]), a burst of 64 sequential 64 KiB writes after a second of idle, a sequential pass of 64 MiB)
//! run on a device and on its twin, alternated round by round (in each round both sides'
//! random reads, then both sides' burst and pass, so that the two bursts run seconds apart),
//! and the Ruemmler-Wilkes
//! demerit of each workload: the RMS horizontal distance between the two response-time
//! distributions, in ms and as a share of the device's mean. Every round issues the same I/Os,
//! so each I/O's response time is taken as its median over the rounds: what the host did to
//! one round (a delayed wake-up, a busy CPU) is left out, what the device does every time is
//! kept. Beside it the demerit of all rounds pooled, and the device's demerit against itself
//! between its own rounds: the noise floor the twin is judged against; and the device against
//! itself at offsets drawn afresh, which says how much a figure depends on the places drawn
//! (what a twin, knowing the drive's mechanics but not its layout, cannot follow); and a
//! verdict on each demerit against 5% of the mean beside that spread ([`Verdict`]). Before
//! each round, each drive is let finish its background work (an SMR disk cleaning its
//! persistent cache), so that both start every round from the same state. A read-only set
//! ([`Set::ReadOnly`]) leaves the burst out and opens the device read-only.

use super::character::stats::{mean, median, quantile, Draw};
use super::character::{capacity, CharError};
use super::script::{Runner, Step};
use crate::analysis::compare::Estimate;
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::AtomicBool;

pub mod laps;
use laps::{Lap, Laps, ServerLate};

const K4: u64 = 4096;
const MIB: u64 = 1 << 20;

/// The workloads of the validation set.
pub const WORKLOADS: [&str; 4] = [
    "QD1 random 4 KiB reads",
    "QD32 random 4 KiB reads",
    BURST,
    "sequential pass (1 MiB reads)",
];

/// The one workload of the set that writes.
const BURST: &str = "write burst (64 KiB sequential, after idle)";

/// Which of the set's workloads run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Set {
    /// All four: the burst writes to the device.
    Full,
    /// The reads only (`--read-only`): the device is opened read-only and the burst is not
    /// run, on either side.
    ReadOnly,
}

impl Set {
    /// Whether the set writes.
    pub fn writes(self) -> bool {
        self == Set::Full
    }

    /// The workloads this set leaves out.
    pub fn not_run(self) -> &'static [&'static str] {
        match self {
            Set::Full => &[],
            Set::ReadOnly => &[BURST],
        }
    }
}

/// The Ruemmler-Wilkes demerit of two samples of response times: the root mean square of
/// the horizontal distance between their distribution functions (the difference of their
/// quantiles, over 1000 evenly spaced probabilities).
pub fn demerit(a: &[f64], b: &[f64]) -> f64 {
    let n = 1000;
    let mut sa = a.to_vec();
    let mut sb = b.to_vec();
    sa.sort_by(|x, y| x.total_cmp(y));
    sb.sort_by(|x, y| x.total_cmp(y));
    let q = |v: &[f64], p: f64| quantile(v, p);
    let s: f64 = (0..n)
        .map(|i| {
            let p = (i as f64 + 0.5) / n as f64;
            (q(&sa, p) - q(&sb, p)).powi(2)
        })
        .sum();
    (s / n as f64).sqrt()
}

/// The round trip's target: a twin's demerit at most this share of the device's mean.
pub const TARGET: f64 = 0.05;

/// A workload's demerit against [`TARGET`], beside how far the device is from itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// At most the target.
    Within,
    /// Over the target, but no further than the device was from itself: between its own
    /// rounds, or as far as one more set of places drawn afresh may take it (the upper end of
    /// the 95% prediction interval over its sets at other offsets). The set cannot tell this
    /// twin from the device's own spread, and longer workloads or more rounds may.
    OwnSpread,
    /// Over the target and further than the device was from itself.
    Over,
}

impl Verdict {
    /// The verdict on a demerit `share` of the device's mean, beside the device against itself
    /// between its rounds (`noise`) and at one more set of other places (`elsewhere_bound`,
    /// the upper end of its 95% prediction interval), shares of the mean too.
    pub fn of(share: f64, noise: f64, elsewhere_bound: Option<f64>) -> Verdict {
        let own = noise.max(elsewhere_bound.unwrap_or(0.0));
        if share <= TARGET {
            Verdict::Within
        } else if share <= own {
            Verdict::OwnSpread
        } else {
            Verdict::Over
        }
    }

    /// How the verdict is printed.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Within => "within",
            Verdict::OwnSpread => "over, as the device from itself",
            Verdict::Over => "over",
        }
    }
}

/// One workload's figures.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub workload: &'static str,
    /// Mean response time of the device and of the twin (each I/O's median over the rounds),
    /// ms.
    pub device_mean_ms: f64,
    pub twin_mean_ms: f64,
    /// Demerit of the twin against the device, each I/O's response time its median over the
    /// rounds: ms, and share of the device's mean.
    pub demerit_ms: f64,
    pub demerit_share: f64,
    /// Demerit of the twin against the device, every round's response times pooled.
    pub pooled_ms: f64,
    pub pooled_share: f64,
    /// The device against itself: the mean demerit between its rounds, ms and share.
    pub noise_ms: f64,
    pub noise_share: f64,
    /// For the random reads (drawn over the whole device), the device against itself at
    /// other offsets: the demerit between its rounds' per-I/O medians and each of the
    /// [`ELSEWHERE`] rounds of the same workload at offsets drawn afresh, their mean in ms and
    /// as a share, and the largest share. How much the figure depends on which places were
    /// drawn: a twin reproduces a drive's distribution of response times, not the angle each
    /// sector sits at. `None` for the burst and the pass, whose place is part of the workload.
    pub elsewhere_ms: Option<f64>,
    pub elsewhere_share: Option<f64>,
    pub elsewhere_max_share: Option<f64>,
    /// The upper end of the one-sided 95% prediction interval for the device's demerit at one
    /// more set of places drawn afresh (their demerits taken as normal: the mean plus t(0.95,
    /// n-1) standard deviations times sqrt(1 + 1/n)), as a share: how far a twin may be from
    /// the device before it is further than the places drawn explain. A twin exactly as far
    /// as the device is from itself at other places exceeds it one time in 20, where it would
    /// exceed the largest of 4 sets one time in 5. `None` where there is no such set.
    pub elsewhere_bound_share: Option<f64>,
    /// The demerit against [`TARGET`].
    pub verdict: Verdict,
}

/// Rounds the device runs at offsets drawn afresh, after the alternated ones (`validate`;
/// [`validate_models`] is told how many).
pub const ELSEWHERE: usize = 4;

/// QD32 reads in the set unless more are asked for. A drive whose QD32 reads switch between
/// two regimes (an RPO drive whose aging limit is about what a read waits behind the 31 others:
/// either few reads age, or nearly all of them do, each serving in arrival order and making the
/// next one age) stays in each for thousands of reads, so its distribution over 320 reads
/// depends on the places drawn more than any twin could follow; tens of thousands settle it
/// (docs/twins.md).
pub const QD32_READS: usize = 320;

/// How much of the set to run: rounds alternated on both, rounds on the device at other
/// offsets, which workloads, and how many QD32 reads.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub rounds: usize,
    pub elsewhere: usize,
    pub set: Set,
    pub qd32_reads: usize,
}

/// The workloads whose offsets are drawn over the whole device (the first two).
const DRAWN: usize = 2;

/// What validate found.
#[derive(Debug, Clone, Serialize)]
pub struct Validation {
    pub device: String,
    pub twin: String,
    pub rounds: usize,
    /// The QD32 reads of each round.
    pub qd32_reads: usize,
    pub figures: Vec<Figures>,
    /// Which workloads ran: all, or the reads only.
    pub set: Set,
    /// The workloads of the set not run (the burst, read-only).
    pub not_run: &'static [&'static str],
    /// The longest time the device and the twin were busy with background work before a
    /// round: seconds of device time over the calm checks that found it busy, their idle
    /// included.
    pub busy_s: [f64; 2],
    /// Whether both finished their background work within [`SETTLE_LIMIT`] before every
    /// round (the rounds ran anyway when not).
    pub settled: bool,
    /// Each half of each round as it ran, in the order run ([`laps`]).
    pub laps: Vec<Lap>,
}

use super::character::calm::settle;
pub use super::character::calm::{CALM_IDLE, SETTLE_LIMIT};

/// One workload of the set: its name, its steps, its queue depth, and which of its I/Os'
/// response times count.
struct Script {
    name: &'static str,
    steps: Vec<Step>,
    depth: u32,
    counted: Vec<bool>,
}

/// The validation set's scripts over `cap` bytes (those of `set`), each with its queue depth
/// and the steps whose response times count: the same offsets for device and twin and in
/// every round (each round reads more places than a drive's buffer holds, so a round finds
/// nothing of the last one there). The burst's flush and the pass's first read (a
/// positioning) are left out of their workloads' distributions.
fn scripts(cap: u64, seed: u64, set: Set, qd32_reads: usize) -> Vec<Script> {
    let mut d = Draw::new(seed);
    let mut rand = |n: usize| -> Vec<Step> {
        (0..n)
            .map(|_| Step::read(d.aligned(0, cap - K4, K4), K4))
            .collect()
    };
    let qd1 = rand(300);
    let qd32 = rand(qd32_reads);
    let mut d = Draw::new(seed ^ 0x5eed);
    let mut burst = vec![Step::flush(), Step::Idle(1.0)];
    let at = d.aligned(0, cap - 8 * MIB, MIB);
    burst.extend((0..64).map(|i| Step::write(at + i * (64 << 10), 64 << 10)));
    burst.push(Step::flush());
    let start = d.aligned(0, cap - 80 * MIB, MIB);
    let seq: Vec<Step> = (0..64).map(|i| Step::read(start + i * MIB, MIB)).collect();
    let all = |steps: &[Step]| vec![true; steps.iter().filter(|s| is_io(s)).count()];
    let writes: Vec<bool> = burst
        .iter()
        .filter(|s| is_io(s))
        .map(|s| {
            matches!(
                s,
                Step::Io {
                    op: crate::engine::Op::Write,
                    ..
                }
            )
        })
        .collect();
    let mut streaming = all(&seq);
    streaming[0] = false;
    let [q1, q32, b, pass] = WORKLOADS;
    let script = |name, steps, depth, counted| Script {
        name,
        steps,
        depth,
        counted,
    };
    let mut out = vec![
        script(q1, qd1.clone(), 1, all(&qd1)),
        script(q32, qd32.clone(), 32, all(&qd32)),
        script(b, burst, 1, writes),
        script(pass, seq, 1, streaming),
    ];
    out.retain(|s| !set.not_run().contains(&s.name));
    out
}

fn is_io(s: &Step) -> bool {
    matches!(s, Step::Io { .. })
}

/// The two parts of a round: the random reads drawn over the whole device, then the
/// workloads with a place of their own (the burst and the pass).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Half {
    Drawn,
    Placed,
}

impl Half {
    /// The half's name in a [`Lap`]: the burst and the pass, or the pass alone when the set
    /// leaves the burst out.
    fn text(self, set: Set) -> &'static str {
        match (self, set.writes()) {
            (Half::Drawn, _) => "random reads",
            (Half::Placed, true) => "burst and pass",
            (Half::Placed, false) => "pass",
        }
    }
}

/// The workloads of `set` that run in the half `which`, in the order [`half`] returns their
/// response times.
fn half_names(set: Set, which: Half) -> Vec<&'static str> {
    WORKLOADS
        .iter()
        .filter(|w| !set.not_run().contains(w))
        .enumerate()
        .filter(|(w, _)| (*w < DRAWN) == (which == Half::Drawn))
        .map(|(_, &n)| n)
        .collect()
}

/// Response times of one half of a round of `set`, per workload and I/O (seconds of device
/// time).
fn half(
    run: &mut Runner,
    cap: u64,
    seed: u64,
    plan: Plan,
    which: Half,
) -> Result<Vec<Vec<f64>>, CharError> {
    let mut out = Vec::new();
    let all = scripts(cap, seed, plan.set, plan.qd32_reads);
    for (w, s) in all.into_iter().enumerate() {
        if (w < DRAWN) != (which == Half::Drawn) {
            continue;
        }
        let t = run.run_at(&s.steps, s.depth)?;
        out.push(
            t.iter()
                .zip(&s.counted)
                .filter(|(_, &c)| c)
                .map(|(t, _)| t.latency)
                .collect(),
        );
    }
    Ok(out)
}

/// Which side runs: the device (0) or the twin (1).
type Side = usize;

/// The order of the alternated rounds: in each, both sides' random reads, then both sides'
/// burst and pass, the device first in odd rounds and the twin first in even ones. The
/// burst's 64 KiB writes are short enough (a quarter of a millisecond on a disk's buffer)
/// that the host's path is a visible part of them, and that path moves over minutes; run
/// this way, the two sides' bursts are seconds apart, where one side's 25,600 QD32 reads
/// between them put them more than five minutes apart.
fn schedule(rounds: usize) -> Vec<(Side, Half)> {
    let mut out = Vec::new();
    for r in 0..rounds {
        let order: [Side; 2] = if r % 2 == 0 { [0, 1] } else { [1, 0] };
        for h in [Half::Drawn, Half::Placed] {
            out.extend(order.map(|side| (side, h)));
        }
    }
    out
}

/// Each I/O's median over `rounds` (all of one workload, I/O by I/O in the same order).
fn per_io_medians(rounds: &[Vec<f64>]) -> Vec<f64> {
    let n = rounds.iter().map(|r| r.len()).min().unwrap_or(0);
    (0..n)
        .map(|i| median(&rounds.iter().map(|r| r[i]).collect::<Vec<_>>()))
        .collect()
}

/// Runs `rounds` rounds of `set` (with `qd32_reads` QD32 reads) on the device `dev` and the
/// twin's device `twin_dev`, alternated (device first in odd rounds, twin first in even ones),
/// over the smaller of their sizes, then [`ELSEWHERE`] rounds on the device at other offsets.
/// The device is opened read-only unless the set writes. `twin_server` counts the twin's
/// server's replies and late ones ([`ServerLate`]), read at each half's start and end.
#[allow(clippy::too_many_arguments)]
pub fn validate(
    device: &str,
    dev: &Path,
    dev_scale: f64,
    twin: &str,
    (twin_dev, twin_server): (&Path, ServerCount<'_>),
    twin_scale: f64,
    (rounds, set, qd32_reads): (usize, Set, usize),
    stop: &AtomicBool,
    say: &mut dyn FnMut(&str),
) -> Result<Validation, CharError> {
    let cap = capacity(dev)?.min(capacity(twin_dev)?) / MIB * MIB;
    if cap < super::character::MIN_CAPACITY {
        return Err(CharError::TooSmall {
            device: device.to_string(),
            size: cap,
        });
    }
    let mut on_dev = Runner::new(dev, dev_scale, set.writes(), stop);
    let mut on_twin = Runner::new(twin_dev, twin_scale, set.writes(), stop);
    let plan = Plan {
        rounds,
        elsewhere: ELSEWHERE,
        set,
        qd32_reads,
    };
    let sides = alternated(
        &mut on_dev,
        &mut on_twin,
        cap,
        plan,
        [None, twin_server],
        say,
    )?;
    Ok(compared(device, twin, sides))
}

/// Reads a served side's server counts, when that side is served here.
pub type ServerCount<'a> = Option<&'a dyn Fn() -> Option<ServerLate>>;

/// [`validate`] of the model `device` against the model `twin`, each in this process on its
/// own timeline (no device, no host between them but a fixed gap): the round trip as the
/// models themselves answer it, whatever the host's load; `elsewhere` rounds at other offsets,
/// `qd32_reads` QD32 reads a round.
pub fn validate_models(
    device: Box<dyn crate::emu::DeviceModel>,
    twin: Box<dyn crate::emu::DeviceModel>,
    rounds: usize,
    elsewhere: usize,
    qd32_reads: usize,
) -> Result<Validation, CharError> {
    static NEVER: AtomicBool = AtomicBool::new(false);
    let cap = device.capacity().min(twin.capacity()) / MIB * MIB;
    let (d_name, t_name) = (device.name().to_string(), twin.name().to_string());
    let mut on_dev = Runner::on_model(device, &NEVER);
    let mut on_twin = Runner::on_model(twin, &NEVER);
    let plan = Plan {
        rounds,
        elsewhere,
        set: Set::Full,
        qd32_reads,
    };
    let sides = alternated(
        &mut on_dev,
        &mut on_twin,
        cap,
        plan,
        [None, None],
        &mut |_| {},
    )?;
    Ok(compared(&d_name, &t_name, sides))
}

/// Per round, workload and I/O.
type Rounds = Vec<Vec<Vec<f64>>>;

/// The plan's rounds on `on_dev` and `on_twin`, alternated as [`schedule`] orders them (each
/// side let settle before its random reads), then its rounds on the device at other offsets.
fn alternated(
    on_dev: &mut Runner,
    on_twin: &mut Runner,
    cap: u64,
    plan: Plan,
    servers: [ServerCount<'_>; 2],
    say: &mut dyn FnMut(&str),
) -> Result<Sides, CharError> {
    let (rounds, elsewhere_rounds) = (plan.rounds, plan.elsewhere);
    let mut dev_rounds = Vec::new();
    let mut twin_rounds = Vec::new();
    let seed = 1000;
    let mut busy = Busy {
        s: [0.0; 2],
        settled: true,
    };
    let mut laps = Laps::start();
    let mut one = |run: &mut Runner,
                   (which, side): (usize, &'static str),
                   out: &mut Rounds,
                   at: u64,
                   h: Half,
                   say: &mut dyn FnMut(&str)|
     -> Result<(), CharError> {
        if h == Half::Drawn {
            let s = settle(run, cap, seed + 1 + out.len() as u64)?;
            busy.s[which] = busy.s[which].max(s.busy_s);
            busy.settled &= s.calm;
        }
        let count = || servers[which].and_then(|f| f());
        laps.begin(count());
        let times = half(run, cap, at, plan, h)?;
        let names = half_names(plan.set, h);
        let round = out.len() + usize::from(h == Half::Drawn);
        let lap = laps.end((side, round, h.text(plan.set)), &names, &times, count());
        if lap.disturbed {
            say(&laps::warning(lap));
        }
        match out.last_mut() {
            Some(last) if h == Half::Placed => last.extend(times),
            _ => out.push(times),
        }
        Ok(())
    };
    for (k, (side, h)) in schedule(rounds).into_iter().enumerate() {
        if side == 0 {
            one(on_dev, (0, "device"), &mut dev_rounds, seed, h, say)?;
        } else {
            one(on_twin, (1, "twin"), &mut twin_rounds, seed, h, say)?;
        }
        if k % 4 == 3 {
            say(&format!("round {} of {rounds} done on both", k / 4 + 1));
        }
    }
    let mut elsewhere = Vec::new();
    for k in 0..elsewhere_rounds {
        let at = seed + 7919 * (k as u64 + 1);
        let side = (0, "device at other offsets");
        one(on_dev, side, &mut elsewhere, at, Half::Drawn, say)?;
        one(on_dev, side, &mut elsewhere, at, Half::Placed, say)?;
        say(&format!(
            "round {} of {elsewhere_rounds} at other offsets done on the device",
            k + 1
        ));
    }
    if busy.s.iter().any(|&s| s > 0.0) {
        say(&format!(
            "busy before a round, at most: the device {:.0} s, the twin {:.0} s{}",
            busy.s[0],
            busy.s[1],
            if busy.settled {
                ""
            } else {
                " (not calm within the limit: the rounds ran anyway)"
            }
        ));
    }
    Ok(Sides {
        device: dev_rounds,
        twin: twin_rounds,
        elsewhere,
        busy,
        plan,
        laps: laps.laps,
    })
}

/// What the rounds found: the device's and the twin's rounds, the device's rounds at other
/// offsets, and the background work waited for.
struct Sides {
    device: Rounds,
    twin: Rounds,
    elsewhere: Rounds,
    busy: Busy,
    plan: Plan,
    laps: Vec<Lap>,
}

/// Background work waited for before the rounds.
struct Busy {
    s: [f64; 2],
    settled: bool,
}

/// Each workload's figures from the device's and the twin's rounds.
fn compared(device: &str, twin: &str, sides: Sides) -> Validation {
    let (dev_rounds, twin_rounds, busy) = (&sides.device, &sides.twin, sides.busy);
    let names = WORKLOADS
        .iter()
        .filter(|w| !sides.plan.set.not_run().contains(w));
    let figures = names
        .enumerate()
        .map(|(w, name)| {
            let of = |rs: &[Vec<Vec<f64>>]| -> Vec<Vec<f64>> {
                rs.iter().map(|r| r[w].clone()).collect()
            };
            let (d_rounds, t_rounds) = (of(dev_rounds), of(twin_rounds));
            let (d, t) = (per_io_medians(&d_rounds), per_io_medians(&t_rounds));
            let (dp, tp) = (d_rounds.concat(), t_rounds.concat());
            let m = mean(&d);
            let dm = demerit(&d, &t);
            let pooled = demerit(&dp, &tp);
            let mut noise = Vec::new();
            for i in 0..d_rounds.len() {
                for j in i + 1..d_rounds.len() {
                    noise.push(demerit(&d_rounds[i], &d_rounds[j]));
                }
            }
            let nm = mean(&noise);
            let elsewhere: Vec<f64> = of(&sides.elsewhere)
                .iter()
                .map(|r| demerit(&d, r))
                .collect();
            let drawn = (w < DRAWN && !elsewhere.is_empty()).then_some(());
            let est = drawn.and_then(|_| Estimate::of(&elsewhere));
            let em = est.map(|e| e.mean);
            let emax = drawn.map(|_| elsewhere.iter().copied().fold(0.0, f64::max) / m);
            let ebound = est.map(|e| e.upper_prediction95() / m);
            Figures {
                workload: name,
                device_mean_ms: m * 1e3,
                twin_mean_ms: mean(&t) * 1e3,
                demerit_ms: dm * 1e3,
                demerit_share: dm / m,
                pooled_ms: pooled * 1e3,
                pooled_share: pooled / mean(&dp),
                noise_ms: nm * 1e3,
                noise_share: nm / mean(&dp),
                elsewhere_ms: em.map(|e| e * 1e3),
                elsewhere_share: em.map(|e| e / m),
                elsewhere_max_share: emax,
                elsewhere_bound_share: ebound,
                verdict: Verdict::of(dm / m, nm / mean(&dp), ebound),
            }
        })
        .collect();
    Validation {
        device: device.to_string(),
        twin: twin.to_string(),
        rounds: dev_rounds.len(),
        qd32_reads: sides.plan.qd32_reads,
        figures,
        set: sides.plan.set,
        not_run: sides.plan.set.not_run(),
        busy_s: busy.s,
        settled: busy.settled,
        laps: sides.laps,
    }
}

#[cfg(test)]
mod tests;
