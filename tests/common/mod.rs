//! Helpers shared by the integration tests and the benchmarks: what a test needs from the host
//! (a missing need is a printed skip, and a failure when `CI` is set, so CI proves every test
//! ran), loop devices and mounts that release themselves even when a test fails, leftover
//! checks, the real binary started in the background, and tiny device models.

#![allow(dead_code, unused_imports)]

pub mod devices;
pub mod draws;
pub mod figures;
pub mod jobs;
pub mod keys;
pub mod models;
pub mod need;
pub mod outcome;
pub mod slurm;
pub mod spawn;

pub use devices::*;
pub use models::*;
pub use need::*;
pub use slurm::*;
pub use spawn::*;
