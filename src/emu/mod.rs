//! Emulated devices: device models (a cheap function from request to service time) and the
//! FUSE server that serves a model to the kernel as a file, with a loop device on top.

pub mod autoscale;
pub mod backing;
mod conn;
mod counters;
pub mod cut;
mod error;
mod fs;
mod fs_journal;
pub mod journal;
mod label;
mod lateseries;
pub mod model;
mod readcache;
mod replies;
mod reqlog;
mod rt;
mod server;
mod shared_timer;
mod timer;

pub use conn::{
    abort_connection, abort_minor, fuse_mounts_at, resolve_mountpoint, unmount_patiently, FuseMount,
};
pub use error::EmuError;
pub use fs::{DISK_NAME, MAX_BACKGROUND, MAX_IO};
pub use lateseries::LATE_NOTED_NS;
pub use reqlog::mono_now_ns;
pub use rt::{Placement, ONE_TIMER_ENV};
pub use server::{EmuServer, ReplyTimer, FSTYPE, SOURCE};
pub use timer::{Clock, TimerQueue, STANDBY_AFTER_NS};
pub mod array;
pub mod cards;
pub mod closed_loop;
pub mod fault;
pub mod flash;
pub mod hdd;
pub mod mechanics;
pub mod null;
pub mod queued;
pub mod smr;
pub mod spec;
pub mod ssd;
pub mod stale;
pub mod twins;

pub use model::ModelDescriptor;
pub use model::{DeviceModel, Expectations, ModelError, ReqKind, Request, Response, Unsettled};
pub use spec::{
    find_model, model_table, ModelParamRow, ModelSpec, ServerSettings, SpecError, MODELS,
};
