//! Seed 000's hammering workload run against device models alone, in closed loop, without a
//! kernel (`emu::closed_loop::hammer`): how a twin's values were searched before being checked
//! on the kernel's stack. `TWIN_SPECS` is a `;`-separated list of model specs (default: the WD
//! twin, and the same drive serving its queue in arrival order); `TWIN_SAMPLES` the samples per
//! stream (default 2048, the seed's).
//!
//! ```sh
//! TWIN_SPECS="hdd,drive=wd80emaz;hdd,drive=wd80emaz,age_limit=600ms" cargo bench --bench twin_hammer
//! ```

use iotrial::emu::closed_loop::{hammer, Hammer};
use iotrial::emu::ModelSpec;

fn main() {
    let specs = std::env::var("TWIN_SPECS")
        .unwrap_or_else(|_| "hdd,drive=wd80emaz;hdd,drive=wd80emaz,queue_order=fifo".into());
    let samples = std::env::var("TWIN_SAMPLES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2048);
    println!(
        "seed 000 raw row: window ~200 ms, reads ~400 ms (worst ~750 ms), playback/record time 2.0"
    );
    for spec in specs.split(';').filter(|s| !s.is_empty()) {
        let s = match ModelSpec::parse(spec) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{spec}: {e}");
                std::process::exit(2);
            }
        };
        let mut m = (s.model.build)(&s.values).expect("the spec builds");
        let h = Hammer {
            samples,
            ..Hammer::seed_000()
        };
        let f = hammer(m.as_mut(), &h);
        println!(
            "{spec}: window {:.0} ms, reads {:.0} ms (worst {:.0}, worst pair {:.0}), playback/record time {:.2}",
            f.record_window_ms, f.read_mean_ms, f.read_worst_ms, f.read_pair_worst_ms, f.time_ratio
        );
        println!("    model: {}", m.stats());
    }
}
