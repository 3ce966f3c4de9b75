//! A disk twin's buffer hits set against the device's own, timed in turn. The twin's command
//! overhead and interface rate come from the device's buffer hits less the emulator's path,
//! measured on reference disks a minute before ([`super::hostpath`]); that path moves with the
//! host's state by more than a 64 KiB write's share of a few percent (bench/README.md). So the
//! twin is served here, beside the device, and both answer the same groups of reads, a few
//! groups on one then the same on the other: a 4 KiB read and its re-read, a 256 KiB read and its
//! re-read, once the device is calm (done with any background work, as `device validate`
//! waits for). Whatever the host adds at that moment, it adds to both. How long the host
//! waited before a hit adds to it too, so each side's hits are taken after the same wait
//! (the line of its hits against the wait before each, at the median wait of both). The
//! difference between their re-reads moves the twin's overhead and interface rate; a second pass on the twin so
//! corrected measures what is left, and half of it is taken too (the mean of two estimates).
//! Served by the emulator, the twin then answers a buffer hit as the device did on this host.

use super::calm::settle;
use super::stats::{median, robust_slope, Draw};
use super::twin::{mbs_text, ms_text, Twin};
use super::{CharError, Progress};
use crate::probe::script::{Runner, Step, Timed};
use crate::probe::{built_raw, released_after, ProbeError};
use crate::stack::ledger::Ledger;
use crate::stack::provision::BuildOptions;
use crate::stack::DeviceSpec;
use std::path::Path;
use std::sync::atomic::AtomicBool;

const K4: u64 = 4096;
const BIG: u64 = 256 << 10;
const MIB: u64 = 1 << 20;

/// Groups of reads on each side in a pass.
pub const GROUPS: usize = 160;

/// A twin's overhead and interface rate, seconds and bytes per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HitParams {
    pub overhead: f64,
    pub iface: f64,
}

impl HitParams {
    /// The twin's, from its spec's text (`0.1234ms`, `312.5`); none when either is missing.
    pub fn of(twin: &Twin) -> Option<HitParams> {
        HitParams::named(twin, "overhead", "iface_rate")
    }

    /// The twin's fixed cost named `fixed` (in ms) and rate named `rate` (in MB/s): a card's
    /// access and read rate move as a disk's overhead and interface rate do.
    pub fn named(twin: &Twin, fixed: &str, rate: &str) -> Option<HitParams> {
        let overhead = twin.get(fixed)?.strip_suffix("ms")?.parse::<f64>().ok()? / 1e3;
        let iface = twin.get(rate)?.parse::<f64>().ok()? * 1e6;
        (iface > 0.0).then_some(HitParams { overhead, iface })
    }

    /// Moved by `d`, the device's hits less the twin's; None when the interface would need a
    /// negative time per byte (the difference is not a twin's to take).
    pub fn moved(&self, d: Gap) -> Option<HitParams> {
        let per_byte = 1.0 / self.iface + d.per_byte();
        if per_byte <= 0.0 {
            return None;
        }
        Some(HitParams {
            overhead: (self.overhead + d.small - K4 as f64 * d.per_byte()).max(0.0),
            iface: 1.0 / per_byte,
        })
    }
}

/// The device's re-reads less the twin's, after the same wait, seconds of device time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gap {
    /// 4 KiB.
    pub small: f64,
    /// 256 KiB.
    pub large: f64,
}

impl Gap {
    /// Seconds per byte.
    pub fn per_byte(&self) -> f64 {
        (self.large - self.small) / (BIG - K4) as f64
    }

    fn scaled(&self, k: f64) -> Gap {
        Gap {
            small: self.small * k,
            large: self.large * k,
        }
    }
}

/// The `n` groups of one pass: a 4 KiB read and its re-read, a 256 KiB read and its re-read,
/// each group at a random place on a device of `cap` bytes.
pub fn groups(cap: u64, n: usize, draw: &mut Draw) -> Vec<Vec<Step>> {
    (0..n)
        .map(|_| {
            let x = draw.aligned(0, cap - 2 * MIB, MIB);
            vec![
                Step::read(x, K4),
                Step::read(x, K4),
                Step::read(x + BIG, BIG),
                Step::read(x + BIG, BIG),
            ]
        })
        .collect()
}

/// One side's re-reads of one size (`k`: 1 for 4 KiB, 3 for 256 KiB, in groups of four),
/// each with the wait before it: `(wait, hit)`, seconds. The host waited for the read just
/// before each re-read, and a hit's path through the host grows with how long the host sat
/// waiting (bench/README.md).
pub fn hits(t: &[Timed], k: usize) -> Vec<(f64, f64)> {
    t.chunks(4)
        .map(|g| (g[k - 1].latency, g[k].latency))
        .collect()
}

/// A side's hit after the wait `w`: its hits' Theil-Sen line against the wait before each,
/// there (a hit the host delayed does not move it).
pub fn hit_at(pts: &[(f64, f64)], w: f64) -> f64 {
    let slope = robust_slope(pts);
    let slope = if slope.is_finite() { slope } else { 0.0 };
    median(&pts.iter().map(|(x, y)| y - slope * x).collect::<Vec<_>>()) + slope * w
}

/// The device's hits less the twin's of one size, both taken after the same wait (the
/// median of every wait on both sides). A device whose reads wait longer than its twin's (an
/// SMR disk fetching dirty bands from its cache, a twin whose sectors sit at other angles)
/// would otherwise be found slower at its hits by what the longer wait costs the host.
pub fn gap_at(dev: &[(f64, f64)], twin: &[(f64, f64)]) -> f64 {
    let waits: Vec<f64> = dev.iter().chain(twin).map(|p| p.0).collect();
    let w = median(&waits);
    hit_at(dev, w) - hit_at(twin, w)
}

/// Groups run at once on one side before the other side's turn: each turn starts the
/// engine afresh, whose setup would otherwise come before every group.
pub const BLOCK: usize = 8;

/// Runs the groups on the device and on the twin in turns of [`BLOCK`] groups (the device
/// first in even turns, the twin in odd ones); each side's timings, group after group.
pub fn timed_in_turn(
    dev: &mut Runner,
    twin: &mut Runner,
    groups: &[Vec<Step>],
) -> Result<(Vec<Timed>, Vec<Timed>), CharError> {
    let (mut on_dev, mut on_twin) = (Vec::new(), Vec::new());
    for (i, turn) in groups.chunks(BLOCK).enumerate() {
        let steps: Vec<Step> = turn.concat();
        if i % 2 == 0 {
            on_dev.extend(dev.run(&steps)?);
            on_twin.extend(twin.run(&steps)?);
        } else {
            on_twin.extend(twin.run(&steps)?);
            on_dev.extend(dev.run(&steps)?);
        }
    }
    Ok((on_dev, on_twin))
}

/// [`timed_in_turn`]; the device's re-reads less the twin's, after the same wait
/// ([`gap_at`]).
pub fn in_turn(
    dev: &mut Runner,
    twin: &mut Runner,
    groups: &[Vec<Step>],
) -> Result<Gap, CharError> {
    let (on_dev, on_twin) = timed_in_turn(dev, twin, groups)?;
    Ok(Gap {
        small: gap_at(&hits(&on_dev, 1), &hits(&on_twin, 1)),
        large: gap_at(&hits(&on_dev, 3), &hits(&on_twin, 3)),
    })
}

/// Serves `twin`'s spec at `scale` beside a device of `dev_cap` bytes and runs `f` on it,
/// with the smaller of the two sizes. An error of `f` is passed on as it is.
pub fn beside<T>(
    twin: &Twin,
    scale: f64,
    dev_cap: u64,
    ledger: &mut Ledger,
    stop: &AtomicBool,
    f: impl FnOnce(&mut Runner, u64) -> Result<T, CharError>,
) -> Result<T, CharError> {
    let spec = if scale == 1.0 {
        twin.spec()
    } else {
        format!("{},scale={scale}", twin.spec())
    };
    let spec = DeviceSpec::parse(&spec).map_err(crate::stack::StackError::from)?;
    let mut inner = None;
    let r = released_after(ledger, |l| {
        let raw = built_raw(&spec, &BuildOptions::default(), l, stop)?;
        let cap = dev_cap.min(raw.capacity);
        let mut on_twin = Runner::new(&raw.path, scale, false, stop);
        f(&mut on_twin, cap).map_err(|e| {
            inner = Some(e);
            ProbeError::Interrupted
        })
    });
    match (r, inner) {
        (_, Some(e)) => Err(e),
        (Ok(g), None) => Ok(g),
        (Err(e), None) => Err(e.into()),
    }
}

/// Where a twin is served beside its device: the device, its scale, the ledger of what is
/// made for the twin, and the stop flag.
pub struct Beside<'a> {
    pub dev: &'a Path,
    pub scale: f64,
    pub ledger: &'a mut Ledger,
    pub stop: &'a AtomicBool,
}

/// Serves `twin`'s spec (at `scale`) beside the device `dev` and sets its overhead and
/// interface rate so that its buffer hits match the device's ([module docs](self)). A twin
/// without both (flash, or hits not identified) is left as it is.
pub fn match_hits(at: Beside, twin: &mut Twin, say: &mut Progress) -> Result<(), CharError> {
    match_beside(at, twin, say, &HITS, |on_dev, on_twin, cap, draw, say| {
        // A drive still at its own background work (an SMR disk cleaning) answers slower for it.
        let s = settle(on_dev, cap, 0x5e77)?;
        if !s.calm {
            say(&format!(
                "the device was still busy after {:.0} s; its hits timed anyway",
                s.busy_s
            ));
        }
        in_turn(on_dev, on_twin, &groups(cap, GROUPS, draw))
    })
}

/// Serves `twin` (at `scale`) beside the device `dev`, twice, each time `time` timing both;
/// its two parameters `w` names moved by what the passes found ([`matched_twice`]). A twin
/// without both is left as it is.
pub fn match_beside(
    at: Beside,
    twin: &mut Twin,
    say: &mut Progress,
    w: &Words,
    mut time: impl FnMut(
        &mut Runner,
        &mut Runner,
        u64,
        &mut Draw,
        &mut Progress,
    ) -> Result<Gap, CharError>,
) -> Result<(), CharError> {
    let Some(first) = HitParams::named(twin, w.names.0, w.names.1) else {
        return Ok(());
    };
    say(&format!(
        "the twin served beside the {}: their {} in turn",
        w.side, w.label
    ));
    let Beside {
        dev,
        scale,
        ledger,
        stop,
    } = at;
    let mut draw = Draw::new(w.seed);
    let dev_cap = super::capacity(dev)?;
    let mut on_dev = Runner::new(dev, scale, false, stop);
    let base = twin.clone();
    let mut pass = |p: HitParams, say: &mut Progress| -> Result<Gap, CharError> {
        let mut t = base.clone();
        t.set(w.names.0, ms_text(p.overhead), "");
        t.set(w.names.1, mbs_text(p.iface), "");
        beside(&t, scale, dev_cap, ledger, stop, |on_twin, cap| {
            time(&mut on_dev, on_twin, cap, &mut draw, say)
        })
    };
    matched_twice(twin, first, &mut pass, stop, say, w)
}

/// A disk's buffer hits.
const HITS: Words = Words {
    side: "device",
    reads: "re-reads",
    label: "buffer hits",
    from: "the reference disks",
    names: ("overhead", "iface_rate"),
    groups: GROUPS,
    wait: ", after the same wait",
    seed: 0x4d41_5443,
};

/// What a match is of, for what it says and writes in the twin's comments.
pub struct Words {
    /// The device: `device`, `card`.
    pub side: &'static str,
    /// What of its reads are timed: `re-reads`, `reads`.
    pub reads: &'static str,
    /// The same, on the progress line: `buffer hits`.
    pub label: &'static str,
    /// Where the first estimate came from: `the reference disks`.
    pub from: &'static str,
    /// The twin's fixed cost and rate: `overhead` and `iface_rate`.
    pub names: (&'static str, &'static str),
    /// Groups of each in a pass.
    pub groups: usize,
    /// How the two sides are compared, beyond their medians: `, after the same wait`, or none.
    pub wait: &'static str,
    /// The seed of the places drawn.
    pub seed: u64,
}

/// The two passes of a match, `pass` timing the twin served with the parameters it is given
/// beside the device, their gap: the first with `first`, the second moved by the first's gap,
/// and the twin's parameters set to the second moved by half of what the second pass found
/// left (the mean of two estimates). A twin that cannot be served, or moved, keeps `first`,
/// and why is said.
pub fn matched_twice(
    twin: &mut Twin,
    first: HitParams,
    mut pass: impl FnMut(HitParams, &mut Progress) -> Result<Gap, CharError>,
    stop: &AtomicBool,
    say: &mut Progress,
    w: &Words,
) -> Result<(), CharError> {
    let (fixed, rate) = w.names;
    let side = w.side;
    // A twin the emulator cannot build (a spec a loaded host's figures made that the model
    // refuses) keeps what the first estimate gave; an interruption stops characterize.
    let gap1 = match served(pass(first, say), stop)? {
        Ok(g) => g,
        Err(e) => {
            say(&format!(
                "the twin could not be served beside the {side} ({e}): its {fixed} and {rate} are kept from {}",
                w.from
            ));
            return Ok(());
        }
    };
    let Some(second) = first.moved(gap1) else {
        say(&format!(
            "the twin's {} could not be matched (the {side}'s 256 KiB {} {:.1} µs from the twin's, its 4 KiB {:.1} µs): {fixed} and {rate} kept",
            w.reads,
            w.reads,
            gap1.large * 1e6,
            gap1.small * 1e6
        ));
        return Ok(());
    };
    let gap2 = match served(pass(second, say), stop)? {
        Ok(g) => g,
        Err(e) => {
            say(&format!(
                "the twin could not be served again ({e}): the first pass's gap is taken alone"
            ));
            Gap::default()
        }
    };
    let last = second.moved(gap2.scaled(0.5)).unwrap_or(second);
    let us = |s: f64| s * 1e6;
    say(&format!(
        "{}, {side} less twin: {:+.1} µs (4 KiB) and {:+.1} µs (256 KiB) with the twin from {}, {:+.1} and {:+.1} µs after the first correction",
        w.label,
        us(gap1.small),
        us(gap1.large),
        w.from,
        us(gap2.small),
        us(gap2.large)
    ));
    let (reads, groups, wait) = (w.reads, w.groups, w.wait);
    twin.set(
        rate,
        mbs_text(last.iface),
        format!(
            "{}; then set so that the twin, served beside the {side}, answers 256 KiB {reads} as much after 4 KiB ones as the {side} does, {groups} groups of each in turn, twice{wait} (the {side}'s less the twin's: {:+.1} µs, then {:+.1} µs, of which half taken; was {} MB/s)",
            twin.how(rate).unwrap_or_default(),
            us(gap1.large - gap1.small),
            us(gap2.large - gap2.small),
            mbs_text(first.iface)
        ),
    );
    twin.set(
        fixed,
        ms_text(last.overhead),
        format!(
            "{}; then set so that the twin, served beside the {side}, answers 4 KiB {reads} as fast, {groups} groups of each in turn, twice{wait} (the {side}'s less the twin's: {:+.1} µs, then {:+.1} µs, of which half taken; was {})",
            twin.how(fixed).unwrap_or_default(),
            us(gap1.small),
            us(gap2.small),
            ms_text(first.overhead)
        ),
    );
    Ok(())
}

/// A pass's gap, or why the twin could not be served (a spec a loaded host's figures made
/// that the model refuses); an interruption stops characterize.
fn served(
    pass: Result<Gap, CharError>,
    stop: &AtomicBool,
) -> Result<Result<Gap, CharError>, CharError> {
    match pass {
        Ok(g) => Ok(Ok(g)),
        Err(CharError::Interrupted) => Err(CharError::Interrupted),
        Err(_) if stop.load(std::sync::atomic::Ordering::Relaxed) => Err(CharError::Interrupted),
        Err(e) => Ok(Err(e)),
    }
}

/// The models `device` and `twin` (specs without `emu:`), each on its own timeline.
#[cfg(test)]
pub fn on_models(device: &str, twin: &str) -> (Runner<'static>, Runner<'static>) {
    static NEVER: AtomicBool = AtomicBool::new(false);
    let model = |s: &str| {
        crate::emu::ModelSpec::parse(s)
            .and_then(|s| s.build())
            .unwrap()
    };
    (
        Runner::on_model(model(device), &NEVER),
        Runner::on_model(model(twin), &NEVER),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A twin whose hits are short of the device's by a fixed cost and a cost per byte is
    /// moved by exactly those: its overhead by the fixed cost, its time per byte by the other.
    #[test]
    fn the_gap_moves_the_overhead_and_the_time_per_byte() {
        let p = HitParams {
            overhead: 100e-6,
            iface: 500e6,
        };
        // The device: 10 µs more per request, 2 ns more per byte.
        let extra = |len: u64| 10e-6 + 2e-9 * len as f64;
        let gap = Gap {
            small: extra(K4),
            large: extra(BIG),
        };
        let m = p.moved(gap).unwrap();
        assert!((m.overhead - 110e-6).abs() < 1e-12, "{m:?}");
        assert!((1.0 / m.iface - (2e-9 + 2e-9)).abs() < 1e-15, "{m:?}");
        // A hit of any size on the moved twin is the device's.
        for len in [K4, 64 << 10, BIG] {
            let hit = |q: HitParams| q.overhead + len as f64 / q.iface;
            assert!((hit(m) - hit(p) - extra(len)).abs() < 1e-12, "{len}");
        }
        // No time per byte left: not a twin's.
        let gone = Gap {
            small: 0.0,
            large: -((BIG - K4) as f64) * 3e-9,
        };
        assert_eq!(p.moved(gone), None);
        // The overhead does not go below nothing.
        let less = Gap {
            small: -1e-3,
            large: -1e-3,
        };
        assert_eq!(p.moved(less).unwrap().overhead, 0.0);
    }

    /// Groups timed on a host whose hits cost 2 µs more per ms the host waited before them: a
    /// device whose reads wait 10 ms longer than its twin's and whose hits are 10 µs longer at
    /// the same wait is found 10 µs slower, not the 30 µs its medians differ by; a few hits the
    /// host delayed by a millisecond do not move it.
    #[test]
    fn hits_are_compared_after_the_same_wait() {
        let timed = |wait_ms: f64, extra: f64, delayed: bool| -> Vec<Timed> {
            let hit = |len: u64| {
                100e-6 + len as f64 / 500e6 + 2e-6 * wait_ms + extra + f64::from(delayed) * 1e-3
            };
            [(K4, wait_ms), (K4, -1.0), (BIG, wait_ms), (BIG, -1.0)]
                .iter()
                .map(|&(len, w)| Timed {
                    op: crate::engine::Op::Read,
                    offset: 0,
                    len,
                    issue: 0.0,
                    latency: if w < 0.0 { hit(len) } else { w * 1e-3 },
                })
                .collect()
        };
        let (mut dev, mut twin) = (Vec::new(), Vec::new());
        for i in 0..GROUPS {
            let wait = 5.0 + (i * 37 % 101) as f64 * 0.2;
            dev.extend(timed(wait + 10.0, 10e-6, i % 23 == 0));
            twin.extend(timed(wait, 0.0, i % 29 == 0));
        }
        for k in [1, 3] {
            let plain = median(&hits(&dev, k).iter().map(|p| p.1).collect::<Vec<_>>())
                - median(&hits(&twin, k).iter().map(|p| p.1).collect::<Vec<_>>());
            assert!((plain - 30e-6).abs() < 1e-6, "{plain}");
            let gap = gap_at(&hits(&dev, k), &hits(&twin, k));
            assert!((gap - 10e-6).abs() < 1e-9, "{k}: {gap}");
        }
    }

    /// The twin's values are read back from its spec's text.
    #[test]
    fn a_twins_hit_parameters_are_read_from_its_spec() {
        let mut t = Twin::new("hdd", "");
        assert_eq!(HitParams::of(&t), None);
        t.set("overhead", ms_text(123.4e-6), "");
        t.set("iface_rate", mbs_text(312.5e6), "");
        let p = HitParams::of(&t).unwrap();
        assert!((p.overhead - 123.4e-6).abs() < 1e-12, "{p:?}");
        assert!((p.iface - 312.5e6).abs() < 1.0, "{p:?}");
    }

    /// On models' own timelines, a twin with another overhead and interface rate than the
    /// device's is brought to the device's by one pass of groups in turn.
    #[test]
    fn groups_in_turn_find_what_the_twin_lacks() {
        let (mut dev, mut twin) = on_models(
            "hdd,size=8GiB,overhead=0.13ms,iface_rate=400",
            "hdd,size=8GiB,overhead=0.1ms,iface_rate=550",
        );
        let mut draw = Draw::new(7);
        let gap = in_turn(&mut dev, &mut twin, &groups(8 << 30, GROUPS, &mut draw)).unwrap();
        let m = HitParams {
            overhead: 0.1e-3,
            iface: 550e6,
        }
        .moved(gap)
        .unwrap();
        assert!((m.overhead - 0.13e-3).abs() < 0.5e-6, "{m:?} {gap:?}");
        assert!((m.iface / 400e6 - 1.0).abs() < 1e-3, "{m:?} {gap:?}");
    }
}
