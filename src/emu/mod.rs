//! Emulated devices: device models (a cheap function from request to service time) and the
//! FUSE server that serves a model to the kernel as a file, with a loop device on top. The
//! models are in `models`, the server in `serve`, the image and what can happen to it (power
//! cuts, stale reads, faults) in `medium`; their modules keep their `emu::` paths.

pub mod autoscale;
mod error;
mod label;
pub mod medium;
pub mod models;
pub mod serve;
pub mod spec;

pub use medium::{backing, cut, fault, journal, stale};
pub use models::disk::{array, hdd, mechanics, queued, smr};
pub use models::nand::{cards, flash, ssd};
pub use models::{closed_loop, model, null, twinfile, twins};
use serve::{conn, fs, lateseries, reqlog, rt, server, timer};

pub use conn::{
    abort_connection, abort_minor, fuse_mounts_at, resolve_mountpoint, unmount_patiently,
    unmount_waiting, FuseMount,
};
pub use error::EmuError;
pub use fs::{DISK_NAME, MAX_BACKGROUND, MAX_IO};
pub use lateseries::LATE_NOTED_NS;
pub use reqlog::mono_now_ns;
pub(crate) use rt::{go_real_time, WORKER_PRIORITY};
pub use rt::{Placement, ONE_TIMER_ENV};
pub use server::{EmuServer, ReplyTimer, FSTYPE, SOURCE};
pub use timer::{Clock, TimerQueue, STANDBY_AFTER_NS};

pub use model::ModelDescriptor;
pub use model::{DeviceModel, Expectations, ModelError, ReqKind, Request, Response, Unsettled};
pub use spec::{
    find_model, model_table, ModelParamRow, ModelSpec, ServerSettings, SpecError, MODELS,
};
