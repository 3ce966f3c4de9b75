//! Serving a model to the kernel: the FUSE file system and its connection, the request
//! threads and the reply timer, and what the server counts and logs while it serves.

pub(crate) mod conn;
pub(crate) mod counters;
pub(crate) mod fs;
mod fs_journal;
pub(crate) mod lateseries;
pub(crate) mod order;
pub(crate) mod replies;
pub(crate) mod reqlog;
pub(crate) mod rt;
pub(crate) mod server;
mod shared_timer;
pub(crate) mod timer;

use super::{backing, cut, error, fault, journal, model, stale};
