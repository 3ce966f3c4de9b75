//! Analysis shared by workloads: latency statistics, moving windows, consecutive sums,
//! fairness, per-second time series, comparisons across repeats and stacks, and downsampling
//! for charts. Pure functions over samples; no I/O.

pub mod compare;
pub mod downsample;
pub mod fairness;
pub mod fit;
pub mod stats;
pub mod timeseries;
pub mod window;
