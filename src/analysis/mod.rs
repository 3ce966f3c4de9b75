//! Analysis shared by workloads: latency statistics, moving windows, consecutive sums,
//! fairness, and per-second time series. Pure functions over samples; no I/O.

pub mod fairness;
pub mod stats;
pub mod timeseries;
pub mod window;
