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
    /// Time between the arrivals of one I/O's pieces, ns (the kernel sends them one after
    /// the other, not at once).
    pub piece_gap_ns: u64,
    /// The model's time when the streams start, ns (after whatever it served before).
    pub start_ns: u64,
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
            piece_gap_ns: 0,
            start_ns: 0,
            seed: 3,
        }
    }
}

/// Streams of the seed's protocol: eight writers between two readers.
const STREAMS: usize = 10;

/// The streams of a closed-loop run: each issues its next I/O once every piece of its last
/// one has completed.
struct Streams {
    /// When each issues next; None while its I/O is in the drive.
    next_issue: [Option<u64>; STREAMS],
    issued: [u64; STREAMS],
    /// Pieces of its I/O not yet reported.
    left: [u32; STREAMS],
    /// The latest completion of its pieces reported so far.
    done: [u64; STREAMS],
    lat: Vec<Vec<(u64, u64)>>,
    samples: usize,
    think_ns: u64,
}

impl Streams {
    /// A piece of stream `i`'s I/O completes at `d`.
    fn finish(&mut self, i: usize, d: u64) {
        self.done[i] = self.done[i].max(d);
        self.left[i] -= 1;
        if self.left[i] == 0 {
            if self.lat[i].len() < self.samples {
                self.lat[i].push((self.issued[i], self.done[i] - self.issued[i]));
            }
            self.next_issue[i] = Some(self.done[i] + self.think_ns);
        }
    }
}

/// Runs `h` on `model` (its capacity split in ten regions) and returns the seed's figures.
pub fn hammer(model: &mut dyn DeviceModel, h: &Hammer) -> HammerFigures {
    let (io, samples, seed) = (h.io, h.samples, h.seed);
    let region = model.capacity() / STREAMS as u64;
    let slots = (region / io).max(1);
    let mut rng = Rng(seed);
    let mut st = Streams {
        next_issue: [Some(h.start_ns); STREAMS],
        issued: [0; STREAMS],
        left: [0; STREAMS],
        done: [0; STREAMS],
        lat: (0..STREAMS).map(|_| Vec::with_capacity(samples)).collect(),
        samples,
        think_ns: h.think_ns,
    };
    let mut reported = Vec::new();
    // Pieces of I/Os already issued that arrive later: (arrival, stream, id, request).
    let mut later: Vec<(u64, usize, u64, Request)> = Vec::new();
    while st.lat.iter().any(|l| l.len() < samples) {
        let issue = st
            .next_issue
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.map(|t| (i, t)))
            .min_by_key(|&(_, t)| t);
        let piece = (0..later.len()).min_by_key(|&k| later[k].0);
        let first = match (issue, piece) {
            (Some((_, t)), Some(k)) if later[k].0 <= t => Some(later[k].0),
            (Some((_, t)), _) => Some(t),
            (None, Some(k)) => Some(later[k].0),
            (None, None) => None,
        };
        let now = match (first, model.next_event_ns()) {
            (Some(t), Some(e)) if e < t => e,
            (None, Some(e)) => e,
            (None, None) => panic!("every stream waits and the model owes nothing"),
            (Some(t), _) => {
                if let Some(k) = piece.filter(|&k| later[k].0 == t) {
                    let (_, i, id, req) = later.swap_remove(k);
                    if let Some(r) = model.submit(t, id, req) {
                        st.finish(i, r.done_ns);
                    }
                } else if let Some((i, _)) = issue {
                    let read = i == 0 || i == STREAMS - 1;
                    let kind = if read { ReqKind::Read } else { ReqKind::Write };
                    let offset = i as u64 * region + rng.below(slots) * io;
                    st.next_issue[i] = None;
                    st.issued[i] = t;
                    st.done[i] = t;
                    st.left[i] = io.div_ceil(h.piece) as u32;
                    let (mut at, mut n) = (0, 0u64);
                    while at < io {
                        let len = h.piece.min(io - at);
                        let req = Request {
                            kind,
                            offset: offset + at,
                            len,
                        };
                        let id = ((i as u64) << 32) | n;
                        if n > 0 && h.piece_gap_ns > 0 {
                            later.push((t + n * h.piece_gap_ns, i, id, req));
                        } else if let Some(r) = model.submit(t, id, req) {
                            st.finish(i, r.done_ns);
                        }
                        at += len;
                        n += 1;
                    }
                }
                t
            }
        };
        model.advance(now, &mut |id, r| reported.push((id, r.done_ns)));
        for (id, d) in reported.drain(..) {
            st.finish((id >> 32) as usize, d);
        }
    }
    let lat = st.lat;
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
