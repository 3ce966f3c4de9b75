//! Device drives drawn at random (seeded) for characterize's known answers, shared by
//! `tests/characterize.rs` and `cargo bench --bench characterize`: specs of each model the
//! model accepts, and the value characterize found for a parameter beside the drawn one.

use iotrial::engine::rng::SplitMix64;
use serde_json::Value;

/// A uniform draw in [lo, hi).
pub fn pick(r: &mut SplitMix64, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * (r.below(1 << 30) as f64 / (1u64 << 30) as f64)
}

/// A drawn hdd (or smr with `smr`): a spec the model accepts.
pub fn draw_disk(seed: u64, order: &str) -> String {
    let mut r = SplitMix64::new(seed);
    loop {
        let avg = pick(&mut r, 6.0, 12.0);
        let outer = pick(&mut r, 150.0, 280.0);
        let ra = [512u64, 1024, 2048, 4096][r.below(4) as usize];
        let segments = 8 + r.below(25);
        let spec = format!(
            "hdd,size=32GiB,rpm={:.0},track_to_track={:.2}ms,avg_seek={avg:.2}ms,full_stroke={:.2}ms,outer_rate={outer:.1},inner_rate={:.1},zones={},readahead={ra}KiB,segments={segments},buffer={}MiB,write_buffer={}MiB,write_slots={},queue_order={order},age_limit={}ms",
            pick(&mut r, 5000.0, 10500.0),
            pick(&mut r, 0.5, 1.5),
            avg * pick(&mut r, 1.8, 2.2),
            outer * pick(&mut r, 0.45, 0.65),
            8 + r.below(23),
            segments * (ra / 1024 + 2),
            4 + r.below(29),
            32 + r.below(225),
            400 + r.below(600),
        );
        if iotrial::emu::ModelSpec::parse(&spec)
            .and_then(|s| s.build())
            .is_ok()
        {
            return spec;
        }
    }
}

pub fn draw_smr(seed: u64) -> String {
    let mut r = SplitMix64::new(seed);
    format!(
        "smr,size=16GiB,cache={}MiB,band={}MiB,idle={}ms",
        128 + r.below(257),
        8 + r.below(41),
        200 + r.below(800)
    )
}

pub fn draw_flash(seed: u64) -> String {
    let mut r = SplitMix64::new(seed);
    let in_order = r.below(2) == 1;
    format!(
        "flash,size=8GiB,au={}MiB,open_units={},read_rate={:.1},write_rate={:.1},access={:.3}ms,in_order={in_order},reorder={}KiB,copy_rate={:.1},erase={:.2}ms",
        1u64 << r.below(4),
        1 + r.below(16),
        pick(&mut r, 20.0, 80.0),
        pick(&mut r, 10.0, 40.0),
        pick(&mut r, 0.2, 0.6),
        [128u64, 256, 512][r.below(3) as usize],
        pick(&mut r, 30.0, 150.0),
        pick(&mut r, 1.0, 20.0),
    )
}

/// The value characterize found for `name`, as a number in the spec's unit (sizes in bytes,
/// durations in seconds).
pub fn found(v: &Value, name: &str) -> Option<String> {
    v["twin"]["found"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .map(|f| f["value"].as_str().unwrap().to_string())
}

pub fn number(kind: &str, text: &str) -> f64 {
    match kind {
        "size" => iotrial::units::parse_size(text).unwrap() as f64,
        "duration" => iotrial::units::parse_duration(text).unwrap(),
        _ => text.parse().unwrap(),
    }
}

/// The drawn value of `name` in `spec`.
pub fn drawn(spec: &str, name: &str) -> String {
    spec.split(',')
        .find_map(|p| p.strip_prefix(&format!("{name}=")))
        .unwrap()
        .to_string()
}

/// The drawn and the found value of `name` (a number in the spec's unit: bytes, seconds;
/// text compared as text), and the relative error (0 or 1 for text).
pub fn compare(v: &Value, spec: &str, name: &str, kind: &str) -> (String, Option<String>, f64) {
    let truth = drawn(spec, name);
    let got = found(v, name);
    let err = match (&got, kind) {
        (None, _) => f64::NAN,
        (Some(g), "text") => f64::from(u8::from(*g != truth)),
        (Some(g), _) => number(kind, g) / number(kind, &truth) - 1.0,
    };
    (truth, got, err)
}
