//! uFLIP-style probes of a flash card or SSD (each write pattern is timed write by write):
//! - the read rate and access time from reads of growing size;
//! - the allocation unit: after a write at a unit boundary, a write `S` further on costs a unit
//!   copy once it lands in another unit (with every open unit taken);
//! - the open units: round-robin writes over `P` units stay cheap while `P` are open;
//! - in-order units and their reorder window: a write behind an open unit's furthest;
//! - the write rate from sequential writes of growing size inside open units;
//! - the copy rate and the erase from the cost of closing units written to a quarter apart:
//!   the Theil-Sen line through the closings.

use super::hostpath::HostPath;
use super::stats::{line, median, medians_in_turn, robust_slope, Draw};
use super::twin::{mbs_text, ms_text, size_text, Twin};
use super::{CharError, Progress};
use crate::probe::script::{Runner, Step};

const K4: u64 = 4096;
const MIB: u64 = 1 << 20;
/// Units are looked for up to this size; fresh places are this far apart (so aligned to any
/// power-of-two unit up to it).
const UNIT_MAX: u64 = 64 * MIB;

/// Reads of growing size at random places: access time and read rate.
pub fn reads(
    run: &mut Runner,
    cap: u64,
    draw: &mut Draw,
    host: HostPath,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    let sizes = [4096u64, 16 << 10, 64 << 10, 256 << 10, MIB];
    let mut pts = Vec::new();
    for &s in &sizes {
        let offs: Vec<u64> = (0..12).map(|_| draw.aligned(0, cap - MIB, K4)).collect();
        pts.push((s as f64, median(&run.reads(&offs, s)?)));
    }
    let (access, per_byte) = line(&pts);
    let medians = pts
        .iter()
        .map(|&(s, l)| format!("{} {:.3} ms", size_text(s), l * 1e3))
        .collect::<Vec<_>>()
        .join(", ");
    // The line holds the host's path to the device; a twin served by the emulator has the
    // emulator's own path on top of its modeled access and transfer: that much less is
    // modeled.
    let rate = 1.0 / (per_byte - host.per_byte).max(1e-12);
    let access = access - host.fixed;
    say(&format!(
        "reads: {:.3} ms access, {:.2} MB/s (medians: {medians}; path {:.1} us)",
        access * 1e3,
        rate / 1e6,
        host.fixed * 1e6
    ));
    twin.set(
        "read_rate",
        mbs_text(rate),
        "slope of the median latency of random reads of 4 KiB to 1 MiB (12 each), less the emulator's own path per byte",
    );
    twin.set(
        "access",
        ms_text(access.max(0.0)),
        "intercept of the same line, less the emulator's own path per request (measured on a null device), which a twin served by it adds",
    );
    Ok(())
}

/// The write probes; `cap` bytes, all of which may be written.
pub fn writes(
    run: &mut Runner,
    cap: u64,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    if cap / UNIT_MAX < 64 {
        for p in [
            "au",
            "open_units",
            "write_rate",
            "copy_rate",
            "erase",
            "in_order",
            "reorder",
        ] {
            twin.unknown(
                p,
                "the device is too small for the write patterns (64 places 64 MiB apart)",
            );
        }
        return Ok(());
    }
    // Places never used before, in ascending order: UNIT_MAX apart until the unit is known,
    // two units apart after (`step`), wrapping round only at the end of the device.
    let step = std::cell::Cell::new(UNIT_MAX);
    let mut next = 0u64;
    let mut fresh = || {
        let s = step.get();
        next = next.div_ceil(s) * s + s;
        if next + s > cap {
            next = s;
        }
        next
    };
    // Fill every open unit with places of our own first.
    let mut steps: Vec<Step> = (0..20).map(|_| Step::write(fresh(), K4)).collect();
    run.run(&steps)?;
    // A cheap write: the second 4 KiB of a unit just opened.
    steps.clear();
    for _ in 0..6 {
        let x = fresh();
        steps.extend([Step::write(x, K4), Step::write(x + K4, K4)]);
    }
    let t = run.run(&steps)?;
    let cheap = median(
        &t.iter()
            .skip(1)
            .step_by(2)
            .map(|t| t.latency)
            .collect::<Vec<_>>(),
    );
    let costly = |l: f64| l > 3.0 * cheap + 0.3e-3;
    // The unit: smallest S with the write S past a fresh boundary costly.
    let mut far = |run: &mut Runner, s: u64| -> Result<(bool, f64), CharError> {
        let x = fresh();
        let t = run.run(&[Step::write(x, K4), Step::write(x + s, K4)])?;
        Ok((costly(t[1].latency), t[1].latency))
    };
    let mut s = 2 * K4;
    let mut close_small = f64::NAN;
    loop {
        let (c, l) = far(run, s)?;
        if c {
            close_small = l;
            break;
        }
        s *= 2;
        if s > UNIT_MAX {
            break;
        }
    }
    if s > UNIT_MAX {
        for p in [
            "au",
            "open_units",
            "copy_rate",
            "erase",
            "in_order",
            "reorder",
        ] {
            twin.unknown(
                p,
                "no write pattern cost a unit copy: needs patterns over units larger than 64 MiB",
            );
        }
        write_rate(run, &mut fresh, K4 * 64, cheap, twin)?;
        return Ok(());
    }
    // Between s/2 (cheap) and s (costly), to 4 KiB.
    let (mut lo, mut hi) = (s / 2, s);
    while hi - lo > K4 {
        let mid = (lo + hi) / 2 / K4 * K4;
        if far(run, mid)?.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let au = hi;
    step.set(2 * au);
    say(&format!("allocation unit: {}", size_text(au as f64)));
    twin.set(
        "au",
        size_text(au as f64),
        format!(
            "a 4 KiB write {} past a unit boundary costs {:.2} ms (a cheap one {:.3} ms); {} past it does not",
            size_text(au as f64),
            close_small * 1e3,
            cheap * 1e3,
            size_text(lo as f64)
        ),
    );
    // Open units: P units written round robin, three rounds; cheap while P are open.
    let mut round_robin = |run: &mut Runner, p: u64| -> Result<bool, CharError> {
        let units: Vec<u64> = (0..p).map(|_| fresh()).collect();
        let mut steps = Vec::new();
        for r in 0..3 {
            steps.extend(units.iter().map(|&u| Step::write(u + r * K4, K4)));
        }
        let t = run.run(&steps)?;
        let later: Vec<f64> = t[p as usize..].iter().map(|t| t.latency).collect();
        Ok(!costly(median(&later)))
    };
    let (mut lo, mut hi) = (1u64, 2u64);
    while hi <= 16 && round_robin(run, hi)? {
        lo = hi;
        hi *= 2;
    }
    let open = if hi > 16 {
        twin.unknown(
            "open_units",
            "more than 16 units stay open: the model holds at most 16",
        );
        16
    } else {
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if round_robin(run, mid)? {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        twin.set(
            "open_units",
            lo.to_string(),
            format!("4 KiB writes round robin over {lo} units stay cheap; over {} each costs a unit copy", lo + 1),
        );
        lo
    };
    say(&format!("open units: {open}"));
    // In order: a write behind an open unit's furthest write.
    let mut behind = |run: &mut Runner, d: u64| -> Result<bool, CharError> {
        let x = fresh();
        let t = run.run(&[Step::write(x + d, K4), Step::write(x, K4)])?;
        Ok(costly(t[1].latency))
    };
    if !behind(run, au - 2 * K4)? {
        twin.set(
            "in_order",
            "false",
            "a 4 KiB write at a unit's start after one at its end costs no copy",
        );
        twin.unknown("reorder", "units take writes in any order: does not apply");
    } else {
        let (mut lo, mut hi) = (0u64, au - 2 * K4);
        while hi - lo > K4 {
            let mid = (lo + hi) / 2 / K4 * K4;
            if behind(run, mid)? {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        twin.set(
            "in_order",
            "true",
            "a 4 KiB write at a unit's start after one at its end costs a unit copy",
        );
        twin.set(
            "reorder",
            size_text(hi as f64),
            format!("the shortest distance behind an open unit's furthest write that costs a copy ({} does not)", size_text(lo as f64)),
        );
    }
    write_rate(run, &mut fresh, au, cheap, twin)?;
    closings(run, &mut fresh, au, open, cheap, twin)
}

/// Fills at which a unit is closed: a quarter of the unit apart, from 4 KiB.
const CLOSE_FILLS: [f64; 4] = [0.0, 0.25, 0.5, 0.75];
/// The writes that fill a unit before it is closed. A larger one the kernel may split: a
/// 1 MiB O_DIRECT write whose pages are not contiguous goes as two 512 KiB requests (a loop
/// device takes 128 segments), in flight together, and a card whose driver reorders them
/// merges the unit (bench/README.md).
const FILL_IO: u64 = 256 << 10;

/// Closings timed at each fill (a single closing is one request, and the host delays one now
/// and then).
const CLOSE_REPEATS: usize = 4;

/// The copy rate and the erase: units written to a quarter apart, each closed by `open` fresh
/// units opened after it, four times over, the fills in turn. A closing costs
/// `(au - w) / copy + erase` beyond a cheap write, so the Theil-Sen line through the closings
/// falls by `1 / copy` per byte written and meets the erase at `w = au`.
fn closings(
    run: &mut Runner,
    fresh: &mut dyn FnMut() -> u64,
    au: u64,
    open: u64,
    cheap: f64,
    twin: &mut Twin,
) -> Result<(), CharError> {
    let fills: Vec<u64> = CLOSE_FILLS
        .iter()
        .map(|f| ((au as f64 * f) as u64 / K4 * K4).max(K4))
        .collect();
    let (mut steps, mut last) = (Vec::new(), Vec::new());
    for _ in 0..CLOSE_REPEATS {
        for &w in &fills {
            let y = fresh();
            let mut o = 0;
            while o < w {
                let n = (w - o).min(FILL_IO);
                steps.push(Step::write(y + o, n));
                o += n;
            }
            steps.extend((0..open).map(|_| Step::write(fresh(), K4)));
            last.push(steps.len() - 1);
        }
    }
    let t = run.run(&steps)?;
    let costs: Vec<f64> = last.iter().map(|&j| t[j].latency - cheap).collect();
    let xs: Vec<f64> = fills.iter().map(|&w| w as f64).collect();
    // Every closing a point: through the kernel a few cost tens of ms more than their fill's
    // others, which the Theil-Sen line leaves out where a line through the fills' medians
    // followed one fill's.
    let all: Vec<(f64, f64)> = costs
        .iter()
        .enumerate()
        .map(|(k, &c)| (xs[k % xs.len()], c))
        .collect();
    let slope = robust_slope(&all);
    let at0 = median(&all.iter().map(|(x, y)| y - slope * x).collect::<Vec<_>>());
    let pts = medians_in_turn(&xs, &costs);
    let costs = pts
        .iter()
        .map(|(w, c)| format!("{} {:.2} ms", size_text(*w), c * 1e3))
        .collect::<Vec<_>>()
        .join(", ");
    if slope < 0.0 {
        let copy = -1.0 / slope;
        let erase = (at0 + slope * au as f64).max(0.0);
        twin.set(
            "copy_rate",
            mbs_text(copy),
            format!(
                "closing a unit costs less the more of it was written (the median of {CLOSE_REPEATS} closings each, written to {costs}): one over the Theil-Sen slope of all of them"
            ),
        );
        twin.set(
            "erase",
            ms_text(erase),
            "the same line at a unit written whole: what a closing costs beyond the copy",
        );
    } else {
        twin.unknown(
            "copy_rate",
            format!("closing a unit cost no less the more of it was written ({costs}): needs more closings"),
        );
        twin.unknown("erase", "as copy_rate");
    }
    Ok(())
}

/// The write rate: sequential writes of growing size inside units just opened (the first
/// write of each unit, which opens it, left out).
fn write_rate(
    run: &mut Runner,
    fresh: &mut dyn FnMut() -> u64,
    au: u64,
    cheap: f64,
    twin: &mut Twin,
) -> Result<(), CharError> {
    let sizes: Vec<u64> = [K4, 16 << 10, 64 << 10, 256 << 10]
        .into_iter()
        .filter(|&s| 2 * s <= au)
        .collect();
    let mut pts = Vec::new();
    for &s in &sizes {
        let mut steps = Vec::new();
        for _ in 0..4 {
            let x = fresh();
            let n = (au / s - 1).min(3);
            steps.push(Step::write(x, K4));
            steps.extend((0..n).map(|i| Step::write(x + K4 + i * s, s)));
        }
        let t = run.run(&steps)?;
        let l: Vec<f64> = t
            .iter()
            .filter(|t| t.len == s && t.offset % UNIT_MAX != 0)
            .map(|t| t.latency)
            .collect();
        pts.push((s as f64, median(&l)));
    }
    if pts.len() < 2 {
        twin.unknown("write_rate", "units too small for writes of growing size");
        return Ok(());
    }
    let (_, per_byte) = line(&pts);
    twin.set(
        "write_rate",
        mbs_text(1.0 / per_byte),
        format!(
            "slope of the median latency of sequential writes of {} inside open units (a cheap 4 KiB write {:.3} ms)",
            sizes.iter().map(|s| size_text(*s as f64)).collect::<Vec<_>>().join(", "),
            cheap * 1e3
        ),
    );
    Ok(())
}
