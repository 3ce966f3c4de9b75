//! Random reads at a slower time scale. The emulator's own cost per request (the kernel's loop
//! device and FUSE round trip, about 65–80 µs on this project's 2-core reference machine) adds
//! to every modeled access time; divided by the time scale, it vanishes in an HDD's 12 ms but is
//! a fifth of a flash card's 0.37 ms. When the model's random read would last less than
//! [`HOST_PATH_US`] / [`HOST_PATH_SHARE`] of wall time, the probe measures random reads on a
//! second instance of the device at a scale (1, 2 or 5 times a power of ten) that makes it
//! last at least that long, and says so beside the figure. Only the random reads: they are
//! few, while the sequential phases would take minutes at that scale.

use super::{figure, phase, Phase, ProbeError, ProbeFigure, ProbeOptions, RANDOM_IO};
use crate::emu::autoscale::nice_floor;
use crate::emu::Expectations;
use crate::engine::{Op, Pattern};
use crate::stack::DeviceSpec;
use std::path::Path;
use std::sync::atomic::AtomicBool;

pub use crate::emu::autoscale::HOST_PATH_US;
/// The largest share of a random read's modeled time that cost may be.
pub const HOST_PATH_SHARE: f64 = 0.02;

/// A device like the probed one, at a slower scale.
#[derive(Debug)]
pub struct Slower {
    pub device: DeviceSpec,
    pub scale: f64,
}

/// The emulated `device` at the scale its random reads need, or `None` when its own scale will
/// do (or it is not emulated).
pub fn slower_device(
    device: &DeviceSpec,
    expect: Option<&Expectations>,
) -> Result<Option<Slower>, ProbeError> {
    let (DeviceSpec::Emu { text, model }, Some(e)) = (device, expect) else {
        return Ok(None);
    };
    let modeled_s = e.random_read_ms / 1e3;
    let want_s = HOST_PATH_US * 1e-6 / HOST_PATH_SHARE;
    if !modeled_s.is_finite() || modeled_s <= 0.0 || modeled_s / model.settings.scale >= want_s {
        return Ok(None);
    }
    let scale = nice_floor(modeled_s / want_s);
    let mut parts: Vec<String> = text
        .split(',')
        .filter(|p| !p.starts_with("scale="))
        .map(String::from)
        .collect();
    parts.push(format!("scale={scale}"));
    let device = DeviceSpec::parse(&format!("emu:{}", parts.join(",")))
        .map_err(crate::stack::StackError::from)?;
    Ok(Some(Slower { device, scale }))
}

/// Mean random 4 KiB read access time on the block device `dev` of `cap` bytes, wall seconds.
pub fn random_read(
    dev: &Path,
    cap: u64,
    opts: &ProbeOptions,
    stop: &AtomicBool,
) -> Result<f64, ProbeError> {
    let ph = Phase {
        op: Op::Read,
        pattern: Pattern::Random,
        io: RANDOM_IO,
        offset: 0,
        len: cap - cap % RANDOM_IO,
        n: opts.random_ios,
    };
    Ok(phase(dev, ph, opts.seed, stop)?.0)
}

/// The random read figure from `wall_s` measured at `scale`.
pub fn figure_at(wall_s: f64, expected_ms: Option<f64>, scale: f64) -> ProbeFigure {
    let mut f = figure(
        "random 4KiB read access time",
        "ms",
        wall_s * scale * 1e3,
        expected_ms,
        wall_s,
        Op::Read,
        RANDOM_IO,
    );
    f.time_scale = scale;
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expect(ms: f64) -> Expectations {
        Expectations {
            random_read_ms: ms,
            seq_read_outer_mbs: 0.0,
            seq_read_inner_mbs: 0.0,
            random_write_iops: 0.0,
            seq_write_mbs: 0.0,
        }
    }

    #[test]
    fn quick_random_reads_get_a_slower_device_and_slow_ones_keep_theirs() {
        let card = DeviceSpec::parse("emu:flash,card=lexar,scale=1").unwrap();
        let s = slower_device(&card, Some(&expect(0.37))).unwrap().unwrap();
        assert_eq!(s.scale, 0.05);
        assert_eq!(s.device.time_scale(), 0.05);
        assert!(s.device.to_string().contains("card=lexar"), "{}", s.device);
        let hdd = DeviceSpec::parse("emu:hdd,scale=1").unwrap();
        assert!(slower_device(&hdd, Some(&expect(12.8))).unwrap().is_none());
        // At scale 10 an HDD's 12.8 ms is 1.28 ms of wall time: too short.
        let fast = DeviceSpec::parse("emu:hdd,scale=10").unwrap();
        assert_eq!(
            slower_device(&fast, Some(&expect(12.8)))
                .unwrap()
                .unwrap()
                .scale,
            2.0
        );
        let image = DeviceSpec::parse("image:size=1GiB").unwrap();
        assert!(slower_device(&image, None).unwrap().is_none());
    }
}
