//! The device-model interface. A model is a pure, cheap function of its own state: a request
//! arrives at a time on the model's own timeline and the model answers when it completes,
//! keeping its own busy-until, head position, rotational phase and caches. Results therefore
//! do not depend on how promptly timers fire. Delays are in model nanoseconds; the server
//! divides them by the time-scale factor.

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

/// A device model. `service` must be cheap (well under a microsecond) and must not block.
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
}
