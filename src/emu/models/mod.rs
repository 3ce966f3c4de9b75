//! The device models: what a request costs on each kind of device (the `ModelDescriptor`
//! registry, spinning and shingled disks and arrays in `disk`, flash cards and SSDs in
//! `nand`, the no-delay device), the seeds' twins as presets of them, and a model driven in
//! closed loop without the kernel (`closed_loop`), which checks them.

pub mod closed_loop;
pub mod disk;
pub mod model;
pub mod nand;
pub mod null;
pub mod twinfile;
pub mod twins;
