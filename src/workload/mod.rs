//! Workloads: one module per kind. A workload owns both halves of its kind: it turns
//! parameters into an engine [`Plan`](crate::engine::Plan) (its streams and its phases) and
//! turns the samples of a run into its [`Outcome`] (per-stream figures and the verdict, in the
//! user's terms, which become result.json's `streams` and `verdict`). Its part of the report
//! (verdict columns declared once, figures read back from result.json, charts) is a
//! [`KindReport`](crate::present::KindReport) built from [`crate::present`]'s types; the report
//! reaches it through [`report_of`], handed in by the caller.
//!
//! What a kind is lives in [`kind`] ([`Workload`]), what its analysis produces in [`outcome`],
//! and the list of kinds apart, in [`registry`]: the kinds name the first two, the registry
//! names the kinds, and nothing in here names the folder above it. The real-time figures and
//! the capacity search that `dvr` and `stream` share are [`realtime`]'s.

pub mod burst;
pub mod dvr;
pub mod error;
pub mod fsck;
pub mod job;
pub mod kind;
pub mod outcome;
pub mod place;
pub mod powercut;
pub mod realtime;
pub mod reference;
pub mod registry;
pub mod replay;
pub mod smallrand;
pub mod stream;
pub mod tree;

pub use error::AnalysisError;
pub use kind::{stream_phase, Seen, Workload};
pub use outcome::{figures_of, streams_json, verdict_json, Outcome};
pub use realtime::capacity::{CapacityKind, Estimate};
pub use reference::{Reference, WriteInterval};
pub use registry::{all, find, report_of, UnknownWorkload};
