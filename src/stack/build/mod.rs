//! Building a stack for one trial, step by step: attaching its devices, the volume between them
//! and the filesystem (an MD array or a ZFS pool), the filesystem itself (mkfs and mount), the I/O
//! scheduler and the dirty-data cap, and laying the streams' regions out (files on the
//! filesystem, or raw regions and partitions). [`provision`] runs the steps in order.

mod attach;
pub mod dirty;
pub mod files;
pub mod guard;
mod layout;
pub mod memimage;
pub mod provision;
pub mod raw;
pub mod volume;
