//! `scale=auto`: the time scale a device server can keep up with. The emulator's own cost per
//! request (the kernel's loop device and FUSE round trip, about 65–80 µs on this project's
//! 2-core reference machine) runs beside every modeled delay; once a modeled delay divided by
//! the scale is shorter than that, the replies come late and the figures measure the host, not
//! the model. `auto` picks the largest scale (1, 2 or 5 times a power of ten, at most
//! [`SCALE_MAX`]) at which the model's shortest 4 KiB request (random or sequential, read or
//! write, from its own expectations) still lasts [`HEADROOM`] times [`HOST_PATH_US`] of real
//! time.

use super::model::Expectations;
use std::fmt;

/// The emulator's cost per request through the loop device and FUSE, µs (measured here: 65–80
/// µs; see bench/README.md).
pub const HOST_PATH_US: f64 = 80.0;
/// How many times the emulator's cost per request the shortest request must last: the cost
/// grows when the host is busy.
pub const HEADROOM: f64 = 2.0;
/// The largest scale `auto` picks: past it, the kernel's own timers (a journal's 5 s commit,
/// 30 s dirty expiry) would fall in a stretch of the model's time too long to be comparable.
pub const SCALE_MAX: f64 = 100.0;
/// The request size `auto` sizes the scale for.
pub const AUTO_IO: u64 = 4096;

/// What `scale=auto` chose, and why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutoScale {
    pub scale: f64,
    /// The model's shortest 4 KiB request, µs of the model's time.
    pub shortest_us: f64,
    /// Which request that is.
    pub what: &'static str,
}

impl fmt::Display for AutoScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "scale=auto chose {}: the model's shortest 4 KiB request ({}) takes {:.0} µs, and the emulator needs about {HOST_PATH_US:.0} µs of the host per request (with headroom {HEADROOM})",
            self.scale, self.what, self.shortest_us
        )
    }
}

/// The largest of 1, 2 and 5 times a power of ten that is at most `x` (1 for `x` not above 0).
pub fn nice_floor(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&v| v <= x * (1.0 + 1e-9))
        .unwrap_or(p)
}

/// The scale for a model whose expectations with 4 KiB sequential transfers are `e`.
pub fn pick(e: &Expectations) -> AutoScale {
    let io = AUTO_IO as f64;
    let candidates = [
        (e.random_read_ms * 1e3, "random read"),
        (1e6 / e.random_write_iops, "random write"),
        (io / e.seq_read_outer_mbs, "sequential read"),
        (io / e.seq_write_mbs, "sequential write"),
    ];
    let (shortest_us, what) = candidates
        .into_iter()
        .filter(|(us, _)| us.is_finite() && *us >= 0.0)
        .fold(
            (f64::INFINITY, "none"),
            |a, b| if b.0 < a.0 { b } else { a },
        );
    let scale = if shortest_us.is_finite() {
        nice_floor(shortest_us / (HEADROOM * HOST_PATH_US)).clamp(1.0, SCALE_MAX)
    } else {
        1.0
    };
    AutoScale {
        scale,
        shortest_us,
        what,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expect(rr_ms: f64, rw_iops: f64, seq_r: f64, seq_w: f64) -> Expectations {
        Expectations {
            random_read_ms: rr_ms,
            seq_read_outer_mbs: seq_r,
            seq_read_inner_mbs: seq_r / 2.0,
            random_write_iops: rw_iops,
            seq_write_mbs: seq_w,
        }
    }

    #[test]
    fn nice_floor_steps_one_two_five() {
        assert_eq!(nice_floor(0.0925), 0.05);
        assert_eq!(nice_floor(0.15), 0.1);
        assert_eq!(nice_floor(0.3), 0.2);
        assert_eq!(nice_floor(1.0), 1.0);
        assert_eq!(nice_floor(1.9), 1.0);
        assert_eq!(nice_floor(4.99), 2.0);
        assert_eq!(nice_floor(7.5), 5.0);
        assert_eq!(nice_floor(10.0), 10.0);
        assert_eq!(nice_floor(499.0), 200.0);
    }

    #[test]
    fn the_shortest_request_decides_and_the_scale_is_capped() {
        // 107 µs cache writes (an SMR disk): scale 1.
        let a = pick(&expect(12.0, 9300.0, 200.0, 200.0));
        assert_eq!((a.scale, a.what), (1.0, "sequential read"));
        let a = pick(&expect(12.0, 9300.0, 4.0, 4.0));
        assert_eq!((a.scale, a.what), (1.0, "random write"));
        // 0.6 ms random reads, 1 MB/s: scale 2 (600 / 160 = 3.75).
        let a = pick(&expect(0.6, 250.0, 5.0, 1.0));
        assert_eq!((a.scale, a.what), (2.0, "random read"));
        assert!((a.shortest_us - 600.0).abs() < 1e-9);
        // Slow everything: the cap.
        assert_eq!(pick(&expect(500.0, 1.0, 0.001, 0.001)).scale, SCALE_MAX);
        // Nothing finite: no stretching.
        let a = pick(&expect(f64::NAN, 0.0, 0.0, 0.0));
        assert_eq!(a.scale, 1.0);
        assert!(a.to_string().contains("scale=auto chose 1"));
    }
}
