//! Model evaluation time per request: how long `DeviceModel::service` takes for each model on
//! typical request streams (aim: well under 1 us). Run with `cargo bench --bench model_eval`.

use iotrial::emu::{ModelSpec, ReqKind, Request};
use iotrial::engine::rng::SplitMix64;
use std::hint::black_box;
use std::time::Instant;

const REQUESTS: usize = 1 << 20;

/// A request stream: random 4 KiB reads, random 4 KiB writes, a 70/30 random mix with a flush
/// every 64 requests, or sequential 1 MiB reads.
fn requests(pattern: &str, capacity: u64) -> Vec<Request> {
    let mut r = SplitMix64::new(42);
    let blocks = capacity / 4096;
    (0..REQUESTS)
        .map(|i| {
            let random = |kind, r: &mut SplitMix64| Request {
                kind,
                offset: r.below(blocks) * 4096,
                len: 4096,
            };
            match pattern {
                "randread" => random(ReqKind::Read, &mut r),
                "randwrite" => random(ReqKind::Write, &mut r),
                "mixed" if i % 64 == 63 => Request {
                    kind: ReqKind::Flush,
                    offset: 0,
                    len: 0,
                },
                "mixed" if r.below(10) < 3 => random(ReqKind::Write, &mut r),
                "mixed" => random(ReqKind::Read, &mut r),
                _ => Request {
                    kind: ReqKind::Read,
                    offset: (i as u64 * (1 << 20)) % capacity,
                    len: 1 << 20,
                },
            }
        })
        .collect()
}

fn main() {
    println!(
        "{:<48} {:>8} {:>12}",
        "model / pattern", "requests", "ns/request"
    );
    for text in [
        "null",
        "hdd",
        "hdd,write_back=false",
        "smr",
        "smr,cache=256MiB",
        "flash",
        "hdd,fail_prob=0.001,fail_range=1GiB-2GiB",
    ] {
        let spec = ModelSpec::parse(text).expect("built-in spec");
        for pattern in ["randread", "randwrite", "mixed", "seqread"] {
            let reqs = requests(pattern, spec.settings.capacity);
            let mut model = spec.build().expect("built-in spec");
            let start = Instant::now();
            let mut now = 0u64;
            for &req in &reqs {
                // QD1 with a 20 us think time between a completion and the next request.
                now = black_box(model.service(now, black_box(req))).done_ns + 20_000;
            }
            let ns = start.elapsed().as_nanos() as f64 / reqs.len() as f64;
            black_box(model.stats());
            let label = format!("{text} / {pattern}");
            println!("{label:<48} {:>8} {ns:>12.1}", reqs.len());
        }
    }
}
