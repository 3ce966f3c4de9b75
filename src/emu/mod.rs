//! Emulated devices: device models (a cheap function from request to service time) and the
//! FUSE server that serves a model to the kernel as a file, with a loop device on top.

pub mod fault;
pub mod flash;
pub mod hdd;
pub mod model;
pub mod null;
pub mod smr;
pub mod spec;

pub use model::{DeviceModel, Expectations, ModelError, ReqKind, Request, Response};
pub use spec::{model_table, ModelKind, ModelParamRow, ModelSpec, ServerSettings, SpecError};
