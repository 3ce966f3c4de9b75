//! Seed 000's hammering workload run against a device model directly, without a kernel: ten
//! threads at queue depth 1 each (eight writing 1 MiB at random in the middle eight tenths of
//! the disk, two reading the first and last tenth), every thread issuing its next request the
//! moment the last completes. What the seed measured on raw partitions is then a property of
//! the drive alone, so this is where a twin's mechanism is checked against it (the twin tests)
//! and how the command queue's effect is unit-tested.

use super::model::{DeviceModel, ReqKind, Request};
use crate::analysis::window::moving_average;

/// The seed's figures of one closed-loop run.
#[derive(Debug, Clone, Copy)]
pub struct HammerFigures {
    /// Peak 5 s moving average of write access time over the record streams, ms.
    pub record_window_ms: f64,
    /// Mean read access time, ms.
    pub read_mean_ms: f64,
    /// Longest read access time, ms.
    pub read_worst_ms: f64,
    /// Longest mean of two consecutive reads of one stream (a 2 MB playback read in two
    /// fragments; the seed's "worst case" for playback), ms.
    pub read_pair_worst_ms: f64,
    /// Time the playback streams took to collect their samples over the record streams'.
    pub time_ratio: f64,
}

/// SplitMix64, for reproducible offsets.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// How the I/Os are made.
#[derive(Debug, Clone, Copy)]
pub struct Hammer {
    /// Bytes per I/O.
    pub io: u64,
    /// Largest request the device gets: an I/O is split into requests of this size, issued
    /// together, and completes with the last (the kernel's block layer and FUSE split 1 MiB
    /// into two here).
    pub piece: u64,
    /// Sampled I/Os per stream.
    pub samples: usize,
    /// The host's time between a completion and the stream's next request, ns.
    pub think_ns: u64,
    pub seed: u64,
}

impl Hammer {
    /// Seed 000's protocol: 2048 I/Os of 1 MiB per stream, in 512 KiB requests.
    pub fn seed_000() -> Hammer {
        Hammer {
            io: 1 << 20,
            piece: 512 << 10,
            samples: 2048,
            think_ns: 30_000,
            seed: 3,
        }
    }
}

/// Runs `h` on `model` (its capacity split in ten regions) and returns the seed's figures.
pub fn hammer(model: &mut dyn DeviceModel, h: &Hammer) -> HammerFigures {
    let (io, samples, seed) = (h.io, h.samples, h.seed);
    const STREAMS: usize = 10;
    let region = model.capacity() / STREAMS as u64;
    let slots = (region / io).max(1);
    let mut rng = Rng(seed);
    let mut next_issue = [0u64; STREAMS];
    let mut lat: Vec<Vec<(u64, u64)>> = (0..STREAMS).map(|_| Vec::with_capacity(samples)).collect();
    while lat.iter().any(|l| l.len() < samples) {
        let (i, &now) = next_issue
            .iter()
            .enumerate()
            .min_by_key(|(_, t)| **t)
            .unwrap_or((0, &0));
        let read = i == 0 || i == STREAMS - 1;
        let kind = if read { ReqKind::Read } else { ReqKind::Write };
        let offset = i as u64 * region + rng.below(slots) * io;
        let mut done = now;
        let mut at = 0;
        while at < io {
            let len = h.piece.min(io - at);
            let req = Request {
                kind,
                offset: offset + at,
                len,
            };
            done = done.max(model.service(now, req).done_ns);
            at += len;
        }
        if lat[i].len() < samples {
            lat[i].push((now, done - now));
        }
        next_issue[i] = done + h.think_ns;
    }
    let span = |l: &[(u64, u64)]| l.last().map_or(0, |&(t, d)| t + d) as f64;
    let (mut record_window, mut record_span, mut play_span) = (0f64, 0f64, 0f64);
    let (mut read_sum, mut read_n, mut read_worst, mut pair) = (0u64, 0u64, 0u64, 0u64);
    for (i, l) in lat.iter().enumerate() {
        if i == 0 || i == STREAMS - 1 {
            read_sum += l.iter().map(|s| s.1).sum::<u64>();
            read_n += l.len() as u64;
            read_worst = read_worst.max(l.iter().map(|s| s.1).max().unwrap_or(0));
            pair = pair.max(l.windows(2).map(|w| w[0].1 + w[1].1).max().unwrap_or(0));
            play_span = play_span.max(span(l));
        } else {
            let (w, _) = moving_average(l, 5_000_000_000);
            record_window = w.iter().map(|p| p.mean_ns).fold(record_window, f64::max);
            record_span = record_span.max(span(l));
        }
    }
    HammerFigures {
        record_window_ms: record_window * 1e-6,
        read_mean_ms: read_sum as f64 / read_n.max(1) as f64 * 1e-6,
        read_worst_ms: read_worst as f64 * 1e-6,
        read_pair_worst_ms: pair as f64 * 0.5e-6,
        time_ratio: play_span / record_span.max(1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emu::hdd::{Hdd, HddParams};

    fn run(queue_depth: u64) -> HammerFigures {
        let p = HddParams {
            queue_depth,
            ..HddParams::default()
        };
        let h = Hammer {
            samples: 512,
            ..Hammer::seed_000()
        };
        hammer(&mut Hdd::new(&p).unwrap(), &h)
    }

    #[test]
    fn with_command_queueing_reads_wait_behind_buffered_writes() {
        // Queue depth 1: the drive takes one command at a time, so a write cannot enter the
        // buffer while a read waits for the media and the buffer drains behind every read:
        // reads and writes take about as long. With NCQ the writers keep the buffer full and a
        // read waits for every write buffered before it: reads take far longer than writes.
        let one = run(1);
        let ncq = run(32);
        let r1 = one.read_mean_ms / one.record_window_ms;
        let rq = ncq.read_mean_ms / ncq.record_window_ms;
        assert!(r1 < 1.3, "{one:?}");
        assert!(rq > 1.5, "{ncq:?}");
        assert!(
            ncq.time_ratio > 1.5 && one.time_ratio < 1.3,
            "{one:?} {ncq:?}"
        );
    }
}
