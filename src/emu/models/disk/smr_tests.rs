//! Tests of the `smr` model: cleaning when the cache fills and when idle, its cost with
//! scattered bands, background work reported until the cache is clean, sequential band writes
//! in place, and the probe's expectations.
use super::*;
use crate::emu::model::{DeviceModel, ReqKind, Request};
use crate::engine::rng::SplitMix64;

fn params(cache: u64) -> (HddParams, SmrParams) {
    let s = SmrParams {
        cache,
        ..SmrParams::default()
    };
    (HddParams::default(), s)
}

fn write(d: &mut Smr, now: u64, offset: u64, len: u64) -> u64 {
    let req = Request {
        kind: ReqKind::Write,
        offset,
        len,
    };
    d.service(now, req).done_ns
}

/// Back-to-back 4 KiB writes at offsets from `pick`; returns (model ns, disk).
fn run(cache: u64, n: u64, mut pick: impl FnMut(u64) -> u64) -> (u64, Smr) {
    let (p, s) = params(cache);
    let mut d = new(&p, &s).unwrap();
    let mut now = 0;
    for i in 0..n {
        now = write(&mut d, now, pick(i), 4096);
    }
    (now, d)
}

#[test]
fn cleaning_starts_when_the_cache_fills() {
    let mut r = SplitMix64::new(1);
    let blocks = HddParams::default().capacity / 4096;
    let (_, d) = run(64 << 20, 15_000, |_| r.below(blocks) * 4096);
    assert_eq!(d.translation().bands_cleaned(), 0, "64 MiB not yet full");
    assert!(d.translation().occupancy() > 50 << 20);
    let mut r = SplitMix64::new(1);
    let (_, d) = run(64 << 20, 20_000, |_| r.below(blocks) * 4096);
    assert!(d.translation().bands_cleaned() > 0);
    assert!(d.translation().occupancy() <= 64 << 20);
    assert!(d.stats()["bands_cleaned_foreground"].as_u64().unwrap() > 0);
}

#[test]
fn cleaning_cost_grows_with_scattered_bands() {
    // The same number of 4 KiB writes into 4 bands or scattered over the disk.
    let n = 40_000;
    let band = SmrParams::default().band;
    let blocks_per_band = band / 4096;
    let mut r = SplitMix64::new(2);
    let (t_few, few) = run(64 << 20, n, |_| {
        r.below(4) * band * 100 + r.below(blocks_per_band) * 4096
    });
    let mut r = SplitMix64::new(2);
    let blocks = HddParams::default().capacity / 4096;
    let (t_many, many) = run(64 << 20, n, |_| r.below(blocks) * 4096);
    let (few, many) = (few.translation(), many.translation());
    assert!(many.bands_cleaned() > 10 * few.bands_cleaned().max(1));
    assert!(many.cleaning_ns() > 10 * few.cleaning_ns().max(1));
    assert!(t_many > 5 * t_few);
}

#[test]
fn background_cleaning_after_idle_empties_the_cache() {
    let mut r = SplitMix64::new(3);
    let blocks = HddParams::default().capacity / 4096;
    let (now, mut d) = run(2 << 30, 2000, |_| r.below(blocks) * 4096);
    assert!(d.translation().occupancy() > 0);
    let later = now + 3_600_000_000_000;
    let req = Request {
        kind: ReqKind::Read,
        offset: 0,
        len: 4096,
    };
    d.service(later, req);
    assert_eq!(d.translation().occupancy(), 0);
    assert_eq!(d.stats()["bands_cleaned_foreground"], 0);
    assert!(d.translation().bands_cleaned() > 1000);
}

/// Asks `d` about its background work every `step` ns from `from` until it is idle;
/// returns when it went idle.
fn poll_until_idle(d: &mut dyn DeviceModel, from: u64, step: u64) -> u64 {
    let mut now = from;
    loop {
        let b = d.background(now);
        if !b.pending {
            return b.idle_at_ns;
        }
        now += step;
    }
}

#[test]
fn background_work_is_pending_until_the_cache_is_clean() {
    let mut r = SplitMix64::new(5);
    let blocks = HddParams::default().capacity / 4096;
    let (now, mut d) = run(2 << 30, 500, |_| r.below(blocks) * 4096);
    let b = d.background(now);
    assert!(b.pending, "{b:?}");
    // Polled often or once much later, cleaning ends at the same model time.
    let mut once = {
        let mut r = SplitMix64::new(5);
        run(2 << 30, 500, |_| r.below(blocks) * 4096).1
    };
    let coarse = poll_until_idle(&mut once, now + 3_600_000_000_000, 1);
    let fine = poll_until_idle(&mut d, now, 10_000_000);
    assert_eq!(fine, coarse);
    let t = d.translation();
    assert_eq!(t.occupancy(), 0);
    // The cleaning began an idle time after the write-back buffer was destaged, and took
    // the model's cleaning time.
    let idle_ns = (SmrParams::default().idle * 1e9) as u64;
    assert_eq!(fine - b.idle_at_ns, idle_ns + t.cleaning_ns());
    assert_eq!(
        d.stats()["cleaning_rewritten_bytes"],
        t.bands_cleaned() * SmrParams::default().band
    );
    let cleaning_ns = t.cleaning_ns();
    let b = d.background(fine + 1);
    assert!(!b.pending);
    assert_eq!(b.worked_ns, cleaning_ns, "all of it in the background");
}

#[test]
fn sequential_band_writes_bypass_the_cache() {
    let (now, d) = run(2 << 30, 0, |_| 0);
    assert_eq!(now, 0);
    let (p, s) = params(2 << 30);
    let mut d2 = new(&p, &s).unwrap();
    let mut t = 0;
    for i in 0..64u64 {
        t = write(&mut d2, t, (10 * s.band) + i * (1 << 20), 1 << 20);
    }
    assert_eq!(d2.translation().occupancy(), 0);
    assert_eq!(d2.stats()["in_place_write_bytes"], 64u64 << 20);
    drop(d);
}

#[test]
fn expectations_match_the_model_with_an_empty_cache() {
    let (p, s) = params(2 << 30);
    let e = expect(&p, &s, 1 << 20).unwrap();
    let mut r = SplitMix64::new(4);
    let blocks = p.capacity / 4096;
    let n = 5000;
    let (t, _) = run(2 << 30, n, |_| r.below(blocks) * 4096);
    let iops = n as f64 / t as f64 * 1e9;
    assert!(
        (iops / e.random_write_iops - 1.0).abs() < 0.05,
        "{iops} vs {e:?}"
    );
    let mut d = new(&p, &s).unwrap();
    let (mut now, mut sum) = (0u64, 0u64);
    for _ in 0..30_000 {
        let req = Request {
            kind: ReqKind::Read,
            offset: r.below(blocks) * 4096,
            len: 4096,
        };
        let done = d.service(now, req).done_ns;
        sum += done - now;
        now = done + 1_000_000;
    }
    let ms = sum as f64 / 30_000.0 * 1e-6;
    assert!((ms / e.random_read_ms - 1.0).abs() < 0.02, "{ms} vs {e:?}");
}
