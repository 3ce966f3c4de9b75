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

/// Waits until the drive is done with its background work. A calm check idles
/// [`CALM_IDLE`], then reads five random places: a drive that went back to work in the idle
/// (an SMR disk cleaning a band) answers the first read only once that piece of work is done,
/// several times later than the four after it. Two calm checks in a row end the wait.
/// A read that comes near the end of a band's cleaning waits little: a served SMR disk cleaning
/// 38 MiB bands was taken for calm with 328 bands still to clean (bench/README.md).
pub fn settle(run: &mut Runner, cap: u64, seed: u64) -> Result<Settled, CharError> {
    let mut d = Draw::new(seed);
    let (mut busy_s, mut calm_in_a_row) = (0.0, 0);
    while calm_in_a_row < 2 {
        let mut steps = vec![Step::Idle(CALM_IDLE)];
        steps.extend((0..5).map(|_| Step::read(d.aligned(0, cap - K4, K4), K4)));
        let t = run.run(&steps)?;
        let first = t[0].latency;
        let rest = median(&t[1..].iter().map(|t| t.latency).collect::<Vec<_>>());
        if first <= 3.0 * rest + 1e-3 {
            calm_in_a_row += 1;
        } else {
            calm_in_a_row = 0;
            busy_s += CALM_IDLE + t.iter().map(|t| t.latency).sum::<f64>();
            if busy_s > SETTLE_LIMIT {
                return Ok(Settled {
                    busy_s,
                    calm: false,
                });
            }
        }
    }
    Ok(Settled { busy_s, calm: true })
}
