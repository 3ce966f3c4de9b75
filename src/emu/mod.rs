//! Emulated devices: device models (a cheap function from request to service time) and the
//! FUSE server that serves a model to the kernel as a file, with a loop device on top.

pub mod model;
