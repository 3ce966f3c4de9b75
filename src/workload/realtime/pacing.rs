//! The real-time parameters (`pacing = "realtime"`, `bitrate`, `buffer`, `preroll`,
//! `playback_buffer`, `fps`, `frames`) turned into each stream's [`Realtime`] pacing
//! ([`pacing_of`]), checked first ([`check`]).

use crate::engine::realtime::{FrameSizes, Realtime, Role, Schedule};
use crate::engine::rng::SplitMix64;
use crate::engine::Pacing;
use crate::params::{ParamError, Params};
use std::sync::Arc;

/// `pacing`'s value for seed 000's hammering: each I/O as soon as the last one completes.
pub const MAX: &str = "max";
/// `pacing`'s value for streams in real time.
pub const REALTIME: &str = "realtime";
/// The words `pacing` takes.
pub const PACINGS: &[&str] = &[MAX, REALTIME];

/// Whether the streams run in real time.
pub fn is_realtime(p: &Params) -> bool {
    p.text("pacing") == REALTIME
}

/// Bytes a second of `bitrate` Mbit/s.
fn bytes_per_s(mbit: f64) -> f64 {
    mbit * 1e6 / 8.0
}

/// An amount of buffer: seconds of the bitrate (`5s`, `1500ms`) or bytes (`12MiB`, `4096`).
pub fn amount(p: &Params, key: &str) -> Result<u64, ParamError> {
    let text = p.text(key);
    let t = text.trim();
    let unit: String = t
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '_')
        .trim()
        .to_ascii_lowercase();
    let bad = |m: String| ParamError::invalid(key, m);
    if ["s", "sec", "ms", "us", "µs", "min", "h"].contains(&unit.as_str()) {
        let s = crate::units::parse_duration(t).map_err(|e| bad(e.0))?;
        if !(s >= 0.0 && s.is_finite()) {
            return Err(bad(format!("'{t}' is not a duration of 0 s or more")));
        }
        return Ok((s * bytes_per_s(p.f64("bitrate"))).round() as u64);
    }
    crate::units::parse_size(t).map_err(|e| {
        bad(format!(
            "{}; or seconds of the bitrate such as 5s or 1500ms",
            e.0
        ))
    })
}

/// The frame sizes `frames` names: `constant`, `lognormal,cv=X`, `uniform,cv=X`,
/// `exponential`, or `trace=PATH` (a file of one frame size in bytes a line; `#` comments).
pub fn frame_sizes(p: &Params) -> Result<FrameSizes, ParamError> {
    let text = p.text("frames");
    let bad = |m: String| ParamError::invalid("frames", m);
    let allowed = "constant, lognormal,cv=X, uniform,cv=X, exponential or trace=PATH";
    if let Some(path) = text.strip_prefix("trace=") {
        return read_trace(std::path::Path::new(path)).map_err(bad);
    }
    let mut parts = text.split(',').map(str::trim);
    let kind = parts.next().unwrap_or_default();
    let cv = |parts: &mut dyn Iterator<Item = &str>| -> Result<f64, ParamError> {
        let v = parts
            .next()
            .and_then(|kv| kv.strip_prefix("cv="))
            .ok_or_else(|| {
                bad(format!(
                    "'{text}': {kind} needs cv=X (its coefficient of variation)"
                ))
            })?;
        v.parse::<f64>()
            .map_err(|_| bad(format!("'{text}': cv '{v}' is not a number")))
    };
    let sizes = match kind {
        "constant" => FrameSizes::Constant,
        "exponential" => FrameSizes::Exponential,
        "lognormal" => FrameSizes::Lognormal {
            cv: cv(&mut parts)?,
        },
        "uniform" => FrameSizes::Uniform {
            cv: cv(&mut parts)?,
        },
        _ => return Err(bad(format!("'{text}' is not one of {allowed}"))),
    };
    if let Some(extra) = parts.next() {
        return Err(bad(format!(
            "'{text}': unexpected '{extra}'; expected {allowed}"
        )));
    }
    Ok(sizes)
}

/// A trace of frame sizes: one whole number of bytes a line, blank lines and `#` comments
/// left out.
fn read_trace(path: &std::path::Path) -> Result<FrameSizes, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the frame trace {}: {e}", path.display()))?;
    let mut sizes = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.split('#').next().unwrap_or_default().trim();
        if l.is_empty() {
            continue;
        }
        let n = l.parse::<u32>().map_err(|_| {
            format!(
                "{}:{}: '{l}' is not a frame size in bytes (a whole number up to 4294967295)",
                path.display(),
                i + 1
            )
        })?;
        sizes.push(n);
    }
    if sizes.is_empty() {
        return Err(format!("the frame trace {} has no frame", path.display()));
    }
    Ok(FrameSizes::Trace(Arc::from(sizes)))
}

/// The application's schedule every real-time stream follows.
pub fn schedule(p: &Params) -> Result<Schedule, ParamError> {
    let s = Schedule::new(p.f64("bitrate") * 1e6, p.f64("fps"), frame_sizes(p)?);
    s.check().map_err(|m| {
        let key = if m.contains("bitrate") {
            "bitrate"
        } else if m.contains("frame rate") {
            "fps"
        } else {
            "frames"
        };
        ParamError::invalid(key, m)
    })?;
    Ok(s)
}

/// Checks every real-time parameter (whatever `pacing` says, so a bad value is found before a
/// study runs it) against `io`-byte I/Os.
pub fn check(p: &Params, io: u64) -> Result<(), ParamError> {
    if p.f64("bitrate") <= 0.0 {
        return Err(ParamError::invalid(
            "bitrate",
            format!("{} Mbit/s: must be greater than 0", p.f64("bitrate")),
        ));
    }
    let s = schedule(p)?;
    let rec = Realtime {
        role: Role::Record,
        schedule: s.clone(),
        buffer: amount(p, "buffer")?,
        preroll: 0,
        prefill: 0.0,
    };
    rec.check(io)
        .map_err(|m| ParamError::invalid("buffer", m))?;
    let play = playback(p, s, io)?;
    play.check(io).map_err(|m| {
        let key = if m.contains("pre-roll") {
            "preroll"
        } else {
            "playback_buffer"
        };
        ParamError::invalid(key, m)
    })?;
    if is_realtime(p) && p.f64("duration") <= 0.0 {
        return Err(ParamError::invalid("duration", "must be greater than 0"));
    }
    Ok(())
}

/// A playback stream's pacing: its pre-roll, and its buffer (by default the pre-roll in whole
/// I/Os plus one I/O, so it reads ahead while holding its pre-roll).
fn playback(p: &Params, schedule: Schedule, io: u64) -> Result<Realtime, ParamError> {
    let preroll = amount(p, "preroll")?;
    let given = amount(p, "playback_buffer")?;
    let buffer = if given == 0 {
        (preroll.div_ceil(io).max(1) + 1) * io
    } else {
        given
    };
    Ok(Realtime {
        role: Role::Playback,
        schedule,
        buffer,
        preroll,
        prefill: 0.0,
    })
}

/// The pacing of stream `index` of a kind's plan doing `io`-byte I/Os in `role`: the
/// kind's `max` pacing, or real time with the parameters' schedule and buffers. A record
/// stream starts with a fraction of one chunk already buffered, drawn from the plan's seed
/// and its index, so streams started together do not all have a chunk ready at once.
pub fn pacing_of(p: &Params, role: Role, io: u64, index: usize) -> Result<Pacing, ParamError> {
    if !is_realtime(p) {
        return Ok(Pacing::Max);
    }
    let schedule = schedule(p)?;
    Ok(Pacing::Realtime(match role {
        Role::Record => {
            let mut r = SplitMix64::new(p.u64("seed") ^ 0x5EED_F111 ^ (index as u64) << 20);
            Realtime {
                role,
                schedule,
                buffer: amount(p, "buffer")?,
                preroll: 0,
                prefill: (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64,
            }
        }
        Role::Playback => playback(p, schedule, io)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Kind, ParamSpec};

    static SPECS: &[ParamSpec] = &[
        ParamSpec::new("pacing", Kind::Choice(PACINGS), "realtime", ""),
        ParamSpec::new("bitrate", Kind::Float, "19.4", ""),
        ParamSpec::new("buffer", Kind::Text, "5s", ""),
        ParamSpec::new("preroll", Kind::Text, "1.5s", ""),
        ParamSpec::new("playback_buffer", Kind::Text, "0", ""),
        ParamSpec::new("fps", Kind::Float, "30", ""),
        ParamSpec::new("frames", Kind::Text, "constant", ""),
        ParamSpec::new("duration", Kind::Duration, "60s", ""),
        ParamSpec::new("seed", Kind::Count, "1", ""),
    ];

    fn params(over: &[(&str, &str)]) -> Params {
        let o: Vec<(String, String)> = over
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Params::resolve("t", SPECS, &o).unwrap()
    }

    const MIB: u64 = 1 << 20;

    #[test]
    fn buffers_are_seconds_of_the_bitrate_or_bytes() {
        let p = params(&[]);
        assert_eq!(amount(&p, "buffer").unwrap(), 12_125_000);
        assert_eq!(amount(&p, "preroll").unwrap(), 3_637_500);
        let p = params(&[("buffer", "12MiB"), ("preroll", "1500ms")]);
        assert_eq!(amount(&p, "buffer").unwrap(), 12 * MIB);
        assert_eq!(amount(&p, "preroll").unwrap(), 3_637_500);
        let e = amount(&params(&[("buffer", "lots")]), "buffer").unwrap_err();
        assert!(
            e.to_string().contains("buffer") && e.to_string().contains("5s"),
            "{e}"
        );
    }

    #[test]
    fn a_playback_buffer_holds_its_preroll_and_one_io_more() {
        let p = params(&[]);
        let Pacing::Realtime(rt) = pacing_of(&p, Role::Playback, MIB, 0).unwrap() else {
            panic!("realtime")
        };
        assert_eq!((rt.preroll, rt.buffer), (3_637_500, 5 * MIB));
        let Pacing::Realtime(r0) = pacing_of(&p, Role::Record, MIB, 0).unwrap() else {
            panic!("realtime")
        };
        let Pacing::Realtime(r1) = pacing_of(&p, Role::Record, MIB, 1).unwrap() else {
            panic!("realtime")
        };
        assert!(r0.prefill != r1.prefill && (0.0..1.0).contains(&r0.prefill));
        assert_eq!(
            pacing_of(&params(&[("pacing", "max")]), Role::Record, MIB, 0),
            Ok(Pacing::Max)
        );
    }

    #[test]
    fn what_no_run_could_do_is_refused_naming_the_key() {
        for (k, v, key, needle) in [
            ("bitrate", "0", "bitrate", "greater than 0"),
            ("bitrate", "-3", "bitrate", "greater than 0"),
            ("buffer", "100ms", "buffer", "smaller than one I/O"),
            ("buffer", "512KiB", "buffer", "smaller than one I/O"),
            ("preroll", "3s", "preroll", "pre-roll"),
            ("fps", "0", "fps", "frame rate"),
            ("frames", "gamma", "frames", "lognormal"),
            ("frames", "lognormal", "frames", "cv="),
            ("frames", "trace=/nonexistent/t", "frames", "cannot read"),
        ] {
            let mut over = vec![(k, v)];
            if k == "preroll" {
                over.push(("playback_buffer", "2MiB"));
            }
            let e = check(&params(&over), MIB).unwrap_err();
            let ParamError::Invalid { name, message } = &e else {
                panic!("{e}")
            };
            assert_eq!(name, key, "{k}={v}: {e}");
            assert!(message.contains(needle), "{k}={v}: {e}");
        }
        assert!(check(&params(&[]), MIB).is_ok());
    }

    #[test]
    fn a_trace_file_is_read_with_its_comments() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("t");
        std::fs::write(&f, "# sizes\n1000\n\n3000 # an I frame\n").unwrap();
        let p = params(&[("frames", &format!("trace={}", f.display()))]);
        assert_eq!(
            frame_sizes(&p).unwrap(),
            FrameSizes::Trace(vec![1000, 3000].into())
        );
        std::fs::write(&f, "1000\nbig\n").unwrap();
        let e = frame_sizes(&p).unwrap_err().to_string();
        assert!(e.contains(":2:") && e.contains("'big'"), "{e}");
    }
}
