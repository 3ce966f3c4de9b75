//! Analysis shared by workloads: latency statistics, moving windows, consecutive sums,
//! fairness, steady state, a device's figure against its twin's (ratio and equivalence), per-interval time series, real-time streams' buffers replayed from
//! their samples, comparisons across repeats and stacks (intervals, tests, rank groups, when
//! to stop repeating), and downsampling for charts. Functions over samples, which a sample set
//! may read from its spill files.

pub mod buffer;
pub mod compare;
pub mod downsample;
pub mod fairness;
pub mod fit;
pub mod groups;
pub mod ratio;
pub mod stats;
pub mod steady;
pub mod stopping;
pub mod timeseries;
pub mod window;
