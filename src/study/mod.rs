//! Studies: workloads x stacks x repeats, and the results directory they write.

pub mod results;
