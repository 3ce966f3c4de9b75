//! fio's latency histogram, as its json+ output writes it: nanoseconds in 29 groups of 64
//! buckets, each group twice as wide as the one before, so a value is kept to within 1/128 of
//! itself (values below 128 ns exactly); a bucket is written as the middle of its range.

/// Buckets per group: 2^6.
const BITS: u32 = 6;
const PER_GROUP: u64 = 1 << BITS;
/// Buckets in all.
pub const BUCKETS: usize = 29 * PER_GROUP as usize;

/// The bucket of a latency of `ns`.
pub fn bucket(ns: u64) -> usize {
    let msb = 63u32.saturating_sub(ns.leading_zeros());
    if ns == 0 || msb <= BITS {
        return ns as usize;
    }
    let error_bits = msb - BITS;
    let base = u64::from(error_bits + 1) << BITS;
    let offset = (PER_GROUP - 1) & (ns >> error_bits);
    ((base + offset) as usize).min(BUCKETS - 1)
}

/// The value fio writes for bucket `idx`: the middle of its range, ns.
pub fn value(idx: usize) -> u64 {
    let idx = idx as u64;
    if idx < (PER_GROUP << 1) {
        return idx;
    }
    let error_bits = (idx >> BITS) - 1;
    let base = 1u64 << (error_bits + u64::from(BITS));
    let k = idx % PER_GROUP;
    base + ((k as f64 + 0.5) * (1u64 << error_bits) as f64) as u64
}

/// Latencies of one data direction: the histogram and fio's summary figures.
#[derive(Debug, Clone)]
pub struct Lat {
    pub counts: Vec<u64>,
    pub n: u64,
    pub min: u64,
    pub max: u64,
    sum: f64,
    sum_sq: f64,
}

impl Default for Lat {
    fn default() -> Self {
        Lat {
            counts: vec![0; BUCKETS],
            n: 0,
            min: u64::MAX,
            max: 0,
            sum: 0.0,
            sum_sq: 0.0,
        }
    }
}

impl Lat {
    pub fn add(&mut self, ns: u64) {
        self.counts[bucket(ns)] += 1;
        self.n += 1;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += ns as f64;
        self.sum_sq += (ns as f64) * (ns as f64);
    }

    pub fn merge(&mut self, o: &Lat) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.n += o.n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.sum += o.sum;
        self.sum_sq += o.sum_sq;
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum / self.n as f64
        }
    }

    /// The sample standard deviation, as fio reports it.
    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as f64;
        ((self.sum_sq - self.sum * self.sum / n) / (n - 1.0))
            .max(0.0)
            .sqrt()
    }

    /// The latency at percentile `p` (%) as fio computes it from its buckets.
    pub fn percentile(&self, p: f64) -> u64 {
        let want = ((p / 100.0) * self.n as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= want {
                return value(i);
            }
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_keep_values_within_their_error() {
        for ns in [0u64, 5, 127, 128, 1000, 37_094, 3_344_588, 10_000_000_000] {
            let v = value(bucket(ns));
            let err = (v as f64 - ns as f64).abs() / ns.max(1) as f64;
            assert!(err <= 1.0 / 128.0 + 1e-9, "{ns} -> {v}");
        }
        assert!((1..BUCKETS).all(|i| value(i) > value(i - 1)), "ordered");
        // fio's own bins (from a json+ of fio 3.33): 37120 and 38144 are bucket values.
        assert_eq!(value(bucket(37_094)), 37_120);
        assert_eq!(value(bucket(38_100)), 38_144);
    }

    #[test]
    fn summary_and_percentiles() {
        let mut l = Lat::default();
        for ns in 1..=100u64 {
            l.add(ns);
        }
        assert_eq!((l.n, l.min, l.max), (100, 1, 100));
        assert!((l.mean() - 50.5).abs() < 1e-9);
        assert_eq!(l.percentile(50.0), 50);
        assert_eq!(l.percentile(99.0), 99);
    }
}
