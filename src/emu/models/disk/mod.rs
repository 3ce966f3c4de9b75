//! Spinning disks: the mechanics (seek curve, rotation, zones), the drive's queue and its
//! read cache, and the models built on them (a conventional disk, a drive-managed shingled
//! disk, a striped array of disks behind one link).

pub mod array;
pub mod hdd;
pub mod mechanics;
pub mod queued;
pub(crate) mod readcache;
pub mod smr;

use super::{model, twins};
