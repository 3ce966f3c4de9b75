//! Waiting for a drive to be done with its background work (an SMR disk cleaning its
//! persistent cache, a disk destaging its write buffer) before it is timed, so that what is
//! timed starts from a calm state: before each round of `device validate`, and before
//! characterize times a disk's buffer hits beside its twin's.

use super::stats::{median, Draw};
use super::CharError;
use crate::probe::script::{Runner, Step};

const K4: u64 = 4096;

/// The idle a calm check leaves before its first read, seconds: longer than a drive waits
/// before it starts background work.
pub const CALM_IDLE: f64 = 1.5;

/// The longest a drive is waited for before a round, seconds of device time.
pub const SETTLE_LIMIT: f64 = 1800.0;

/// How long a drive stayed busy before it was calm: seconds of device time, and whether it
/// came calm within [`SETTLE_LIMIT`].
pub struct Settled {
    pub busy_s: f64,
    pub calm: bool,
}

/// Idle-then-read tries in one calm check.
pub const CALM_TRIES: usize = 3;

/// Waits until the drive is done with its background work. A calm check idles [`CALM_IDLE`]
/// and reads a random place, [`CALM_TRIES`] times, then reads four more places at once: a
/// drive that went back to work in an idle (an SMR disk cleaning a band) answers the read
/// after it only once that piece of work is done, several times later than the four. A read
/// that comes near the end of a band's cleaning waits little, so one try could pass for calm:
/// a served SMR disk cleaning 38 MiB bands was taken for calm with 328 bands still to clean
/// when a check had one try (bench/README.md). Every try must be answered at once, in two
/// checks in a row, to end the wait.
pub fn settle(run: &mut Runner, cap: u64, seed: u64) -> Result<Settled, CharError> {
    settle_within(run, cap, seed, SETTLE_LIMIT)
}

/// [`settle`], giving up once the drive has been busy for `limit` seconds of device time.
pub fn settle_within(
    run: &mut Runner,
    cap: u64,
    seed: u64,
    limit: f64,
) -> Result<Settled, CharError> {
    let mut d = Draw::new(seed);
    let (mut busy_s, mut calm_in_a_row) = (0.0, 0);
    while calm_in_a_row < 2 {
        let mut steps = Vec::new();
        for _ in 0..CALM_TRIES {
            steps.push(Step::Idle(CALM_IDLE));
            steps.push(Step::read(d.aligned(0, cap - K4, K4), K4));
        }
        steps.extend((0..4).map(|_| Step::read(d.aligned(0, cap - K4, K4), K4)));
        let t = run.run(&steps)?;
        let rest = median(
            &t[CALM_TRIES..]
                .iter()
                .map(|t| t.latency)
                .collect::<Vec<_>>(),
        );
        if t[..CALM_TRIES]
            .iter()
            .all(|t| t.latency <= 3.0 * rest + 1e-3)
        {
            calm_in_a_row += 1;
        } else {
            calm_in_a_row = 0;
            busy_s += CALM_TRIES as f64 * CALM_IDLE + t.iter().map(|t| t.latency).sum::<f64>();
            if busy_s > limit {
                return Ok(Settled {
                    busy_s,
                    calm: false,
                });
            }
        }
    }
    Ok(Settled { busy_s, calm: true })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// Drives that wait from 300 ms to 1.25 s before they clean, their caches nearly full:
    /// none is taken for calm before its cache is empty, whatever the drive's idle time is
    /// against the check's own idle (the model's own figure, not the reads, says so).
    #[test]
    fn no_drive_passes_for_calm_while_it_cleans_whatever_its_idle_time() {
        static NEVER: AtomicBool = AtomicBool::new(false);
        let cap = 16u64 << 30;
        for (i, idle) in (300..=1250).step_by(50).enumerate() {
            let model = crate::emu::ModelSpec::parse(&format!(
                "smr,size=16GiB,cache=334MiB,band=38MiB,idle={idle}ms"
            ))
            .and_then(|s| s.build())
            .unwrap();
            let mut run = Runner::on_model(model, &NEVER);
            let mut d = Draw::new(100 + i as u64);
            let w: Vec<Step> = (0..5000)
                .map(|_| Step::write(d.aligned(0, cap - (1 << 20), K4), 64 << 10))
                .collect();
            run.run(&w).unwrap();
            let s = settle(&mut run, cap, 1).unwrap();
            let left = run.model_stats().unwrap()["cache_occupancy_bytes"]
                .as_u64()
                .unwrap();
            assert!(s.calm, "idle {idle} ms");
            assert!(s.busy_s > 60.0, "idle {idle} ms: calm after {} s", s.busy_s);
            assert_eq!(left, 0, "idle {idle} ms: calm after {} s", s.busy_s);
        }
    }

    /// An SMR disk with its cache full of scattered writes is not calm until it has cleaned
    /// them: once the wait ends, no idle sets it back to work (each read after an idle is
    /// answered as fast as the reads after it).
    #[test]
    fn an_smr_disk_is_calm_only_once_its_cache_is_clean() {
        static NEVER: AtomicBool = AtomicBool::new(false);
        let model =
            crate::emu::ModelSpec::parse("smr,size=16GiB,cache=334MiB,band=38MiB,idle=658ms")
                .and_then(|s| s.build())
                .unwrap();
        let mut run = Runner::on_model(model, &NEVER);
        let cap = 16 << 30;
        let mut d = Draw::new(9);
        let w: Vec<Step> = (0..4000)
            .map(|_| Step::write(d.aligned(0, cap - (1 << 20), K4), 64 << 10))
            .collect();
        run.run(&w).unwrap();
        let s = settle(&mut run, cap, 1).unwrap();
        assert!(s.calm && s.busy_s > 60.0, "{}", s.busy_s);
        for i in 0..20 {
            let t = run
                .run(&[
                    Step::Idle(CALM_IDLE),
                    Step::read(d.aligned(0, cap - K4, K4), K4),
                    Step::read(d.aligned(0, cap - K4, K4), K4),
                ])
                .unwrap();
            assert!(t[0].latency < 3.0 * t[1].latency + 1e-3, "try {i}: {t:?}");
        }
    }
}
