//! Model evaluation time per request: how long `DeviceModel::service` takes for each model on
//! typical request streams (aim: well under 1 us). Run with `cargo bench --bench model_eval`.

use iotrial::emu::{ModelSpec, ReqKind, Request};
use iotrial::engine::rng::SplitMix64;
use std::hint::black_box;
use std::time::Instant;

const REQUESTS: usize = 1 << 20;

/// A request stream: random 4 KiB reads, random 4 KiB writes, a 70/30 random mix with a flush
/// every 64 requests, sequential 1 MiB reads, or 2 GiB discards over the whole device.
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
                // mkfs discarding the whole device, 2 GiB per request as the loop driver
                // splits it.
                "discard" => Request {
                    kind: ReqKind::Discard,
                    offset: (i as u64 * (2 << 30)) % (capacity / (2 << 30) * (2 << 30)).max(1),
                    len: (2u64 << 30).min(capacity),
                },
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
        "array,drive=sfa-38tb",
        "array,drive=sfa-72tb",
    ] {
        let spec = ModelSpec::parse(text).expect("built-in spec");
        for pattern in ["randread", "randwrite", "mixed", "seqread", "discard"] {
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
        // A writeback burst: random 4 KiB writes from a host keeping 32 in flight (a
        // filesystem's sync through the loop driver), each issued as the oldest completes,
        // through `submit` as the server issues them; the worst request too, since one slow
        // evaluation is one late reply.
        let reqs = requests("randwrite", spec.settings.capacity);
        let mut model = spec.build().expect("built-in spec");
        let mut inflight = [0u64; 32];
        let (mut worst, start) = (0u128, Instant::now());
        for (i, &req) in reqs.iter().enumerate() {
            let slot = i % inflight.len();
            let one = Instant::now();
            let r = model.submit(inflight[slot], i as u64, black_box(req));
            worst = worst.max(one.elapsed().as_nanos());
            inflight[slot] = r.map_or(inflight[slot], |r| r.done_ns) + 1_000;
        }
        let ns = start.elapsed().as_nanos() as f64 / reqs.len() as f64;
        let label = format!("{text} / writeburst (worst {:.1} us)", worst as f64 / 1e3);
        println!("{label:<48} {:>8} {ns:>12.1}", reqs.len());
    }
}
