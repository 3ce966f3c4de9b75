//! An application's schedule of frames: frame `k` is due `k / fps` seconds after the stream
//! starts and has a size that is a pure function of its index and the stream's seed, so the
//! live stream, a look ahead, and the analysis afterwards all see the same frames without
//! keeping any. Sizes are constant (the bitrate spread exactly over the frames), drawn from a
//! distribution with mean one frame of the bitrate, or a trace of frame sizes cycled and scaled
//! to the bitrate.

use std::sync::Arc;

/// How frame sizes vary around the mean the bitrate gives.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameSizes {
    /// Every frame the bitrate's share, to the byte (the remainders carried).
    Constant,
    /// Log-normal with mean 1 and this coefficient of variation.
    Lognormal { cv: f64 },
    /// Uniform with mean 1 and this coefficient of variation (at most 1/sqrt(3)).
    Uniform { cv: f64 },
    /// Exponential with mean 1 (coefficient of variation 1).
    Exponential,
    /// These sizes in turn, cycled, scaled so that their mean is the bitrate's frame.
    Trace(Arc<[u32]>),
}

impl FrameSizes {
    /// How result.json and the terminal name it: `constant`, `lognormal,cv=0.3`, `trace (900
    /// frames)`.
    pub fn describe(&self) -> String {
        match self {
            FrameSizes::Constant => "constant".into(),
            FrameSizes::Lognormal { cv } => format!("lognormal,cv={cv}"),
            FrameSizes::Uniform { cv } => format!("uniform,cv={cv}"),
            FrameSizes::Exponential => "exponential".into(),
            FrameSizes::Trace(t) => format!("trace ({} frames)", t.len()),
        }
    }
}

/// Frames of an application at a mean bitrate.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// Mean bytes per second.
    pub bytes_per_s: f64,
    /// Frames per second.
    pub fps: f64,
    pub sizes: FrameSizes,
    /// Mean of a trace's sizes (1 for the other kinds), to scale them by.
    trace_mean: f64,
}

/// One uniform value in (0, 1) from `seed` and `k`, never 0 or 1.
fn unit(seed: u64, k: u64) -> f64 {
    let mut z = seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

impl Schedule {
    /// A schedule of `fps` frames a second at `bits_per_s`, sizes as `sizes` says.
    pub fn new(bits_per_s: f64, fps: f64, sizes: FrameSizes) -> Schedule {
        let trace_mean = match &sizes {
            FrameSizes::Trace(t) if !t.is_empty() => {
                t.iter().map(|&s| s as f64).sum::<f64>() / t.len() as f64
            }
            _ => 1.0,
        };
        Schedule {
            bytes_per_s: bits_per_s / 8.0,
            fps,
            sizes,
            trace_mean,
        }
    }

    /// Mean bytes per frame.
    pub fn mean_frame(&self) -> f64 {
        self.bytes_per_s / self.fps
    }

    /// A trace's own bitrate at this frame rate, bit/s (before scaling); `None` for the other
    /// kinds.
    pub fn trace_bits_per_s(&self) -> Option<f64> {
        matches!(self.sizes, FrameSizes::Trace(_)).then(|| self.trace_mean * self.fps * 8.0)
    }

    /// Checks what no stream could run with.
    pub fn check(&self) -> Result<(), String> {
        if !(self.bytes_per_s > 0.0 && self.bytes_per_s.is_finite()) {
            return Err("the bitrate must be greater than 0".into());
        }
        if !(self.fps > 0.0 && self.fps <= 100_000.0) {
            return Err("the frame rate must be greater than 0 and at most 100000".into());
        }
        match &self.sizes {
            FrameSizes::Lognormal { cv } if !(*cv >= 0.0 && *cv <= 10.0) => {
                Err("a log-normal's cv must be between 0 and 10".into())
            }
            FrameSizes::Uniform { cv } if !(*cv >= 0.0 && *cv <= 1.0 / 3f64.sqrt()) => {
                Err("a uniform's cv must be between 0 and 0.577 (sizes stay positive)".into())
            }
            FrameSizes::Trace(t) if t.is_empty() || self.trace_mean <= 0.0 => {
                Err("the frame trace has no frame of more than 0 bytes".into())
            }
            _ => Ok(()),
        }
    }

    /// When frame `k` is due, ns after the stream's start.
    #[inline]
    pub fn time_ns(&self, k: u64) -> u64 {
        (k as f64 * 1e9 / self.fps).round() as u64
    }

    /// The size of frame `k` of the stream seeded `seed`, bytes (at least 1).
    #[inline]
    pub fn size(&self, seed: u64, k: u64) -> u64 {
        let m = self.mean_frame();
        let x = match &self.sizes {
            FrameSizes::Constant => {
                let a = (k as f64 * m).floor();
                let b = ((k + 1) as f64 * m).floor();
                return ((b - a) as u64).max(1);
            }
            FrameSizes::Lognormal { cv } => {
                let s2 = (1.0 + cv * cv).ln();
                let (u1, u2) = (unit(seed, 2 * k), unit(seed, 2 * k + 1));
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                (z * s2.sqrt() - s2 / 2.0).exp()
            }
            FrameSizes::Uniform { cv } => 1.0 + cv * 3f64.sqrt() * (2.0 * unit(seed, k) - 1.0),
            FrameSizes::Exponential => -unit(seed, k).ln(),
            FrameSizes::Trace(t) => t[(k % t.len() as u64) as usize] as f64 / self.trace_mean,
        };
        ((m * x).round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_rate(s: &Schedule, seed: u64, frames: u64) -> f64 {
        let bytes: u64 = (0..frames).map(|k| s.size(seed, k)).sum();
        bytes as f64 / (frames as f64 / s.fps)
    }

    #[test]
    fn constant_frames_give_the_bitrate_to_the_byte() {
        // 19.4 Mbit/s at 30 fps: 80,833.3 bytes a frame.
        let s = Schedule::new(19.4e6, 30.0, FrameSizes::Constant);
        let bytes: u64 = (0..300).map(|k| s.size(1, k)).sum();
        assert_eq!(bytes, (300.0 * 19.4e6 / 8.0 / 30.0f64).floor() as u64);
        assert!((80_833..=80_834).contains(&s.size(1, 7)));
        assert_eq!(s.time_ns(30), 1_000_000_000);
        assert_eq!(s.time_ns(1), 33_333_333);
    }

    #[test]
    fn drawn_sizes_keep_the_mean_and_depend_only_on_seed_and_index() {
        for sizes in [
            FrameSizes::Lognormal { cv: 0.5 },
            FrameSizes::Uniform { cv: 0.3 },
            FrameSizes::Exponential,
        ] {
            let s = Schedule::new(8e6, 25.0, sizes.clone());
            let r = mean_rate(&s, 42, 200_000);
            assert!((r / 1e6 - 1.0).abs() < 0.01, "{sizes:?}: {r}");
            assert_eq!(s.size(42, 1234), s.size(42, 1234));
            assert_ne!(
                (0..10).map(|k| s.size(42, k)).collect::<Vec<_>>(),
                (0..10).map(|k| s.size(43, k)).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn a_trace_is_cycled_and_scaled_to_the_bitrate() {
        let t: Arc<[u32]> = vec![1000, 3000].into();
        let s = Schedule::new(8.0 * 2000.0 * 10.0 * 2.0, 10.0, FrameSizes::Trace(t));
        assert_eq!(s.trace_bits_per_s(), Some(2000.0 * 10.0 * 8.0));
        assert_eq!(
            (s.size(0, 0), s.size(0, 1), s.size(0, 2)),
            (2000, 6000, 2000)
        );
    }

    #[test]
    fn impossible_schedules_are_refused() {
        assert!(Schedule::new(0.0, 30.0, FrameSizes::Constant)
            .check()
            .unwrap_err()
            .contains("bitrate"));
        assert!(Schedule::new(1e6, 0.0, FrameSizes::Constant)
            .check()
            .is_err());
        assert!(Schedule::new(1e6, 30.0, FrameSizes::Uniform { cv: 0.9 })
            .check()
            .is_err());
        let empty: Arc<[u32]> = vec![0, 0].into();
        assert!(Schedule::new(1e6, 30.0, FrameSizes::Trace(empty))
            .check()
            .is_err());
    }
}
