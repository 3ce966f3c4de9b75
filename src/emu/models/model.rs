//! The device-model interface. A model is a pure, cheap function of its own state: a request
//! arrives at a time on the model's own timeline and the model answers when it completes,
//! keeping its own busy-until, head position, rotational phase and caches. Results therefore
//! do not depend on how promptly timers fire. Delays are in model nanoseconds; the server
//! divides them by the time-scale factor. Each model module exports one [`ModelDescriptor`].

use crate::params::{ParamSpec, Params};
use serde_json::Value as Json;

/// What the kernel asked of the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReqKind {
    Read,
    Write,
    /// Cache flush (fsync from the loop driver).
    Flush,
    /// Discard / TRIM (punch hole).
    Discard,
}

/// One request to a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub kind: ReqKind,
    /// Byte offset on the device (0 for a flush).
    pub offset: u64,
    /// Bytes (0 for a flush).
    pub len: u64,
}

/// The model's answer to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    /// Completion time on the model's timeline, ns (>= the arrival time).
    pub done_ns: u64,
    /// Fail the request with this errno (fault injection), or 0.
    pub errno: i32,
}

/// Names a request whose completion a model reports later ([`DeviceModel::submit`]).
pub type RequestId = u64;

/// A device model. `service` must be cheap (well under a microsecond) and must not block.
///
/// A model either fixes each request's completion when it arrives ([`DeviceModel::service`],
/// enough for most), or, like a drive that reorders its queue, decides it later, when a later
/// arrival can no longer change it: the server then hands it requests with
/// [`DeviceModel::submit`] and collects completions with [`DeviceModel::advance`], waking at
/// [`DeviceModel::next_event_ns`]. The defaults of those three serve a model of the first kind.
pub trait DeviceModel: Send {
    /// Model name (`hdd`, `smr`, `flash`, `null`).
    fn name(&self) -> &'static str;
    /// Logical capacity in bytes.
    fn capacity(&self) -> u64;
    /// Services `req` arriving at `now_ns`; requests arrive in non-decreasing `now_ns` order,
    /// and the model queues a request behind earlier ones it is still busy with.
    fn service(&mut self, now_ns: u64, req: Request) -> Response;
    /// State that explains results (cache occupancy, cleaning time, unit copies, cache hits).
    fn stats(&self) -> Json;
    /// Takes `req`, arriving at `now_ns` (never before an earlier arrival), as request `id`.
    /// Returns its response when the completion is known at once (the default, through
    /// [`DeviceModel::service`]); `None` when later arrivals may still change it, and the model
    /// reports it through [`DeviceModel::advance`].
    fn submit(&mut self, now_ns: u64, id: RequestId, req: Request) -> Option<Response> {
        let _ = id;
        Some(self.service(now_ns, req))
    }
    /// Runs the model's timeline to `now_ns` (never backwards) and hands `done` each submitted
    /// request whose completion became known, with its response (whose completion may lie
    /// after `now_ns`: it is known once the drive has started it).
    fn advance(&mut self, now_ns: u64, done: &mut dyn FnMut(RequestId, Response)) {
        let _ = (now_ns, done);
    }
    /// When the model must next be advanced to report a completion it still owes; `None` when
    /// it owes none.
    fn next_event_ns(&self) -> Option<u64> {
        None
    }
    /// No request has arrived since the last one the model serviced, and it is `now_ns`: does
    /// the background work due by then (SMR cleaning, write-back destaging, garbage
    /// collection) and says whether any is still pending and when the device last went idle.
    /// Like a request, `now_ns` never goes backwards. A model without background work is idle
    /// once its last request completed.
    fn background(&mut self, now_ns: u64) -> Background {
        Background {
            pending: false,
            idle_at_ns: now_ns,
            host_done_ns: now_ns,
            worked_ns: 0,
        }
    }

    /// The writes that are not durable at `now_ns` (no earlier than the last arrival; no
    /// request arrives after it, so a model may run its timeline to it): those the device
    /// acknowledged but still holds in its volatile write cache (not destaged; a flush it
    /// honours waits for them), and those it has not finished, each named by the id it was
    /// submitted with ([`DeviceModel::submit`]). What a power cut at `now_ns` loses; the one
    /// [`Unsettled::on_media`] is torn. The default, for a model without a volatile cache that
    /// acknowledges a write once it is on the media: none it can name, so the server treats
    /// every write it has not yet acknowledged as in flight.
    fn unsettled(&mut self, _now_ns: u64) -> Vec<Unsettled> {
        Vec::new()
    }
}

/// A write not yet durable at some moment ([`DeviceModel::unsettled`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsettled {
    /// The id the write was submitted with.
    pub write: RequestId,
    /// The device is executing it at that moment (its command started, the media not yet
    /// written to its end): a cut then leaves it whole, absent or torn. Otherwise it waits in
    /// the cache or the queue, and a cut loses it whole.
    pub on_media: bool,
    /// The bytes of the write this names, `(from, len)` from the write's start; `None` for all
    /// of it. A model that splits a write over several drives (an array) names each part a
    /// drive has not made durable, and the parts it does not name are durable.
    pub part: Option<(u64, u64)>,
}

impl Unsettled {
    /// All of write `write`, on the media or not.
    pub fn whole(write: RequestId, on_media: bool) -> Unsettled {
        Unsettled {
            write,
            on_media,
            part: None,
        }
    }
}

/// `req` served alone: submitted at `now_ns` and, for a model that decides completions later,
/// advanced until it reports it, as if nothing else arrived meanwhile (a probe's, a test's or a
/// closed-loop driver's single request).
pub fn service_alone(model: &mut dyn DeviceModel, now_ns: u64, req: Request) -> Response {
    const ALONE: RequestId = RequestId::MAX;
    if let Some(r) = model.submit(now_ns, ALONE, req) {
        return r;
    }
    let mut got = None;
    let mut t = now_ns;
    while got.is_none() {
        model.advance(t, &mut |id, r| {
            if id == ALONE {
                got = Some(r);
            }
        });
        match model.next_event_ns() {
            Some(next) if got.is_none() => t = next.max(t),
            _ => break,
        }
    }
    got.expect("a model that defers a request reports it once advanced past its completion")
}

/// A device's background work at one moment of its timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Background {
    /// Work is still to be done (or being done) without any request asking for it.
    pub pending: bool,
    /// When nothing is pending: when the device went idle (its last request or its last piece
    /// of background work completed), on the model's timeline; may be earlier than the query.
    /// While work is pending: when the work in progress completes.
    pub idle_at_ns: u64,
    /// When the host's last request completed (as the host saw it: a write the buffer
    /// acknowledged counts as done): the device has worked on its own since.
    pub host_done_ns: u64,
    /// Model time the device has spent on background work since it started, in all (an SMR
    /// disk's cleaning while no request waited); 0 for a model without any.
    pub worked_ns: u64,
}

/// A model's parameters do not describe a device it can model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{param}: {message}")]
pub struct ModelError {
    /// The parameter at fault, as a user writes it in a model spec.
    pub param: &'static str,
    pub message: String,
}

impl ModelError {
    pub fn new(param: &'static str, message: impl Into<String>) -> Self {
        ModelError {
            param,
            message: message.into(),
        }
    }
}

/// I/O size of the probe's random reads and writes.
pub const PROBE_RANDOM_IO: u64 = 4096;

/// What a seeker-style probe should measure on a model, derived analytically from its
/// parameters; printed beside the measurements. Infinite for the `null` model.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Expectations {
    /// QD1 random 4 KiB read access time, ms (uniform offsets over the whole capacity).
    pub random_read_ms: f64,
    /// QD1 sequential read throughput over the outer (first) 1% of the capacity, MB/s (10^6 B/s).
    pub seq_read_outer_mbs: f64,
    /// QD1 sequential read throughput over the inner (last) 1% of the capacity, MB/s.
    pub seq_read_inner_mbs: f64,
    /// QD1 random 4 KiB write rate, IOPS, in the model's steady state.
    pub random_write_iops: f64,
    /// QD1 sequential write throughput over the outer 1%, MB/s.
    pub seq_write_mbs: f64,
}

/// Everything iotrial knows of one kind of device model. Each model module exports one; the
/// list of them is [`crate::emu::spec::MODELS`], so adding a model is one module and one line there.
pub struct ModelDescriptor {
    /// The name users write after `emu:` (`hdd`).
    pub name: &'static str,
    /// One line saying what the model is.
    pub summary: &'static str,
    /// Its own parameters in groups (`smr` shares `hdd`'s), `size` first; not those every
    /// model accepts.
    pub params: &'static [&'static [ParamSpec]],
    /// A fresh model from resolved values of [`ModelDescriptor::params`].
    pub build: fn(&Params) -> Result<Box<dyn DeviceModel>, ModelError>,
    /// What a seeker-style probe should measure, with sequential transfers of the given bytes.
    pub expect: fn(&Params, u64) -> Result<Expectations, ModelError>,
    /// Named sets of parameter values (`card=lexar`), chosen with `preset_key`; empty for most.
    pub presets: &'static [Preset],
    /// The key that chooses a preset in a spec (`card` in `emu:flash,card=lexar`, `drive` in
    /// `emu:hdd,drive=wd80emaz`).
    pub preset_key: &'static str,
}

/// A named set of parameter values of one model: a spec naming it starts from these values,
/// and keys it also names override them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    /// One line saying which device it is.
    pub summary: &'static str,
    /// (parameter, value as a user writes it).
    pub values: &'static [(&'static str, &'static str)],
}

impl ModelDescriptor {
    /// Its own parameters, in declaration order.
    pub fn params(&self) -> impl Iterator<Item = &'static ParamSpec> {
        self.params.iter().flat_map(|group| group.iter())
    }
}

impl std::fmt::Debug for ModelDescriptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ModelDescriptor({})", self.name)
    }
}

/// Descriptors are one per model: equal when their names are.
impl PartialEq for ModelDescriptor {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
