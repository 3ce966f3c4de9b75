//! Server-side counters of the emulated device (requests by kind, bytes, errors, the most
//! requests in flight at once, how late replies went out) and the pool of read buffers, both
//! shared by the request threads and the timer thread without per-request allocation.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use serde_json::{json, Value as Json};

use super::lateseries::{LateSeries, LATE_NOTED_NS};
use super::model::ReqKind;
use super::order::Came;

/// Lock-free counters updated once per request.
#[derive(Debug, Default)]
pub struct Counters {
    reads: AtomicU64,
    writes: AtomicU64,
    flushes: AtomicU64,
    discards: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
    bytes_discarded: AtomicU64,
    /// Bytes of writes that were all zeros, kept as holes of the image.
    bytes_zero_holes: AtomicU64,
    errors: AtomicU64,
    in_flight: AtomicU64,
    in_flight_max: AtomicU64,
    late_ns_sum: AtomicU64,
    late_ns_max: AtomicU64,
    /// Replies late by more than [`LATE_NOTED_NS`]: one stall or many.
    late_over: AtomicU64,
    replies: AtomicU64,
    /// Service time each request was given (its due time minus its arrival, real ns after the
    /// time scale), summed by kind: read, write, flush, discard.
    service_ns_sum: [AtomicU64; 4],
    /// Lateness by who sent the reply: [0] the request thread (the reply was already due when
    /// the request had been handled: the host took longer than the modeled service time), [1]
    /// the timer thread (its wake-up, and the replies due before it). Each: sum ns, max ns,
    /// replies.
    late_by: [[AtomicU64; 3]; 2],
    /// How long writing a reply to the kernel took: sum ns, max ns.
    send_ns: [AtomicU64; 2],
    /// How long reading from the image ([0]) and storing into it ([1]) took, the request
    /// thread's own part of handling a read or a write: sum ns, max ns, requests.
    image_ns: [[AtomicU64; 3]; 2],
    /// Requests that waited for one the kernel queued before them, and those that gave up
    /// waiting (see `order`).
    order_waited: AtomicU64,
    order_gave_up: AtomicU64,
    /// The same lateness second by second, while the request log runs.
    pub series: LateSeries,
}

fn kind_index(kind: ReqKind) -> usize {
    match kind {
        ReqKind::Read => 0,
        ReqKind::Write => 1,
        ReqKind::Flush => 2,
        ReqKind::Discard => 3,
    }
}

impl Counters {
    /// A request of `kind` and `len` bytes arrived.
    pub fn arrive(&self, kind: ReqKind, len: u64) {
        let (n, bytes) = match kind {
            ReqKind::Read => (&self.reads, &self.bytes_read),
            ReqKind::Write => (&self.writes, &self.bytes_written),
            ReqKind::Flush => (&self.flushes, &self.bytes_discarded),
            ReqKind::Discard => (&self.discards, &self.bytes_discarded),
        };
        n.fetch_add(1, Relaxed);
        if kind != ReqKind::Flush {
            bytes.fetch_add(len, Relaxed);
        }
        let now = self.in_flight.fetch_add(1, Relaxed) + 1;
        self.in_flight_max.fetch_max(now, Relaxed);
    }

    /// How a request's turn came: a wait is counted, and a wait given up.
    pub fn came(&self, came: Came) {
        if came != Came::InOrder {
            self.order_waited.fetch_add(1, Relaxed);
        }
        if came == Came::GaveUp {
            self.order_gave_up.fetch_add(1, Relaxed);
        }
    }

    /// A write of `len` bytes of zeros was kept as a hole of the image.
    pub fn kept_as_hole(&self, len: u64) {
        self.bytes_zero_holes.fetch_add(len, Relaxed);
    }

    /// The model gave a request of `kind` `service_ns` (real time) of service, its reply due
    /// at `due_ns`.
    pub fn serviced(&self, kind: ReqKind, due_ns: u64, service_ns: u64) {
        self.service_ns_sum[kind_index(kind)].fetch_add(service_ns, Relaxed);
        self.series.serviced(due_ns, service_ns);
    }

    /// Lateness of a reply due at `due_ns` sent by the timer thread (`timer`) or the request
    /// thread.
    pub fn late_path(&self, timer: bool, due_ns: u64, late_ns: u64) {
        let c = &self.late_by[usize::from(timer)];
        c[0].fetch_add(late_ns, Relaxed);
        c[1].fetch_max(late_ns, Relaxed);
        c[2].fetch_add(1, Relaxed);
        if !timer {
            self.series.inline(due_ns, late_ns);
        }
    }

    /// Reading from the image (`write` false) or storing into it took `ns`.
    pub fn imaged(&self, write: bool, ns: u64) {
        let c = &self.image_ns[usize::from(write)];
        c[0].fetch_add(ns, Relaxed);
        c[1].fetch_max(ns, Relaxed);
        c[2].fetch_add(1, Relaxed);
    }

    /// Writing the reply due at `due_ns` took `ns`.
    pub fn sent(&self, due_ns: u64, ns: u64) {
        self.series.sent(due_ns, ns);
        self.send_ns[0].fetch_add(ns, Relaxed);
        self.send_ns[1].fetch_max(ns, Relaxed);
    }

    /// A reply went out `late_ns` after its due time `due_ns`; `failed` if it carried an
    /// error.
    pub fn replied(&self, due_ns: u64, late_ns: u64, failed: bool) {
        self.series.replied(due_ns, late_ns);
        self.in_flight.fetch_sub(1, Relaxed);
        self.replies.fetch_add(1, Relaxed);
        self.late_ns_sum.fetch_add(late_ns, Relaxed);
        self.late_ns_max.fetch_max(late_ns, Relaxed);
        if late_ns > LATE_NOTED_NS {
            self.late_over.fetch_add(1, Relaxed);
        }
        if failed {
            self.errors.fetch_add(1, Relaxed);
        }
    }

    /// Requests currently in flight.
    pub fn in_flight(&self) -> u64 {
        self.in_flight.load(Relaxed)
    }

    /// The counters as JSON. `service_us_mean` is the mean service time the model gave each
    /// kind of request (real µs: multiply by the time scale for the model's); `late_us_*` how
    /// long after its due time a reply went out, split by who sent it (`late_inline_*`: the
    /// request thread, already late when the request had been handled; `late_timer_*`: the
    /// timer thread); `send_us_*` how long writing a reply to the kernel took; `image_read_us_*`
    /// and `image_write_us_*` how long a read from the image and a store into it took;
    /// `late_series_beyond` the replies due after the last second the per-second series keeps;
    /// `order_waited` the requests that waited for one the kernel had queued before them, and
    /// `order_gave_up` those that stopped waiting for one that never came.
    pub fn to_json(&self) -> Json {
        let g = |a: &AtomicU64| a.load(Relaxed);
        let replies = g(&self.replies);
        let counts = [&self.reads, &self.writes, &self.flushes, &self.discards].map(g);
        let mean_us = |sum: u64, n: u64| {
            if n == 0 {
                0.0
            } else {
                sum as f64 / 1e3 / n as f64
            }
        };
        let service: Vec<u64> = self.service_ns_sum.iter().map(g).collect();
        let by_kind = |i: usize| mean_us(service[i], counts[i]);
        json!({
            "requests": {
                "read": counts[0],
                "write": counts[1],
                "flush": counts[2],
                "discard": counts[3],
            },
            "bytes_read": g(&self.bytes_read),
            "bytes_written": g(&self.bytes_written),
            "bytes_discarded": g(&self.bytes_discarded),
            "bytes_zero_holes": g(&self.bytes_zero_holes),
            "errors": g(&self.errors),
            "in_flight": self.in_flight(),
            "in_flight_max": g(&self.in_flight_max),
            "service_us_mean": {
                "all": mean_us(service.iter().sum(), counts.iter().sum()),
                "read": by_kind(0),
                "write": by_kind(1),
                "flush": by_kind(2),
                "discard": by_kind(3),
            },
            "late_us_max": g(&self.late_ns_max) as f64 / 1e3,
            "late_over_5ms": g(&self.late_over),
            "late_inline_us_mean": mean_us(g(&self.late_by[0][0]), g(&self.late_by[0][2])),
            "late_inline_us_max": g(&self.late_by[0][1]) as f64 / 1e3,
            "replies_inline": g(&self.late_by[0][2]),
            "late_timer_us_mean": mean_us(g(&self.late_by[1][0]), g(&self.late_by[1][2])),
            "late_timer_us_max": g(&self.late_by[1][1]) as f64 / 1e3,
            "replies_timer": g(&self.late_by[1][2]),
            "send_us_mean": mean_us(g(&self.send_ns[0]), replies),
            "send_us_max": g(&self.send_ns[1]) as f64 / 1e3,
            "image_read_us_mean": mean_us(g(&self.image_ns[0][0]), g(&self.image_ns[0][2])),
            "image_read_us_max": g(&self.image_ns[0][1]) as f64 / 1e3,
            "image_write_us_mean": mean_us(g(&self.image_ns[1][0]), g(&self.image_ns[1][2])),
            "image_write_us_max": g(&self.image_ns[1][1]) as f64 / 1e3,
            "late_us_mean": mean_us(g(&self.late_ns_sum), replies),
            "replies": replies,
            "late_series_beyond": self.series.beyond(),
            "order_waited": g(&self.order_waited),
            "order_gave_up": g(&self.order_gave_up),
        })
    }
}

/// Reusable read buffers, so a read does not allocate once the pool is warm.
#[derive(Debug)]
pub struct BufPool {
    free: Mutex<Vec<Vec<u8>>>,
    size: usize,
}

impl BufPool {
    /// A pool of buffers of at least `size` bytes.
    pub fn new(size: usize) -> Self {
        BufPool {
            free: Mutex::new(Vec::with_capacity(256)),
            size,
        }
    }

    /// A buffer of at least `len` bytes (its contents are stale).
    pub fn take(&self, len: usize) -> Vec<u8> {
        let buf = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut buf = buf.unwrap_or_else(|| vec![0; self.size]);
        if buf.len() < len {
            buf.resize(len, 0);
        }
        buf
    }

    /// Returns a buffer to the pool.
    pub fn give(&self, buf: Vec<u8>) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        if free.len() < 256 {
            free.push(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_flight_max_tracks_the_peak() {
        let c = Counters::default();
        c.arrive(ReqKind::Read, 4096);
        c.serviced(ReqKind::Read, 3_000, 3_000);
        c.arrive(ReqKind::Write, 8192);
        c.serviced(ReqKind::Write, 1_000, 1_000);
        c.replied(0, 6_000_010, false);
        c.arrive(ReqKind::Flush, 0);
        c.replied(0, 30, true);
        c.replied(0, 20, false);
        let j = c.to_json();
        assert_eq!(j["in_flight_max"], 2);
        assert_eq!(j["bytes_read"], 4096);
        assert_eq!(j["bytes_written"], 8192);
        assert_eq!(j["errors"], 1);
        assert_eq!(j["requests"]["flush"], 1);
        assert_eq!(j["service_us_mean"]["read"], 3.0);
        assert_eq!(j["service_us_mean"]["all"], 4.0 / 3.0);
        assert!((j["late_us_mean"].as_f64().unwrap() - 2000.02).abs() < 1e-6);
        assert_eq!(j["late_over_5ms"], 1, "the one reply over 5 ms");
        assert_eq!(j["replies"], 3);
        assert_eq!(c.in_flight(), 0);
    }

    #[test]
    fn image_time_is_kept_apart_for_reads_and_writes() {
        let c = Counters::default();
        c.imaged(false, 2_000);
        c.imaged(true, 10_000);
        c.imaged(true, 30_000);
        let j = c.to_json();
        assert_eq!(j["image_read_us_mean"], 2.0);
        assert_eq!(j["image_read_us_max"], 2.0);
        assert_eq!(j["image_write_us_mean"], 20.0);
        assert_eq!(j["image_write_us_max"], 30.0);
    }

    #[test]
    fn pool_reuses_buffers() {
        let p = BufPool::new(16);
        let b = p.take(8);
        let ptr = b.as_ptr();
        p.give(b);
        let again = p.take(16);
        assert_eq!(again.as_ptr(), ptr);
        assert!(p.take(32).len() >= 32);
    }
}
