//! Streams paced in real time through a modeled application buffer. A *record* stream's
//! application makes data on a schedule of frames (a bitrate: constant, drawn from a
//! distribution, or a trace of frame sizes) into a buffer of fixed size, and the stream writes
//! it out one I/O-sized chunk at a time as chunks become ready; what the application makes
//! while the buffer is full is dropped (an *overflow*). A *playback* stream reads chunks into
//! its buffer whenever there is room for one, and its application consumes frames on the same
//! kind of schedule once the buffer holds its pre-roll; a frame due with too little buffered
//! is an *underrun*, and playback stalls until the pre-roll is buffered again.
//!
//! The stream's schedule is the clock, never the I/O's completion: a slow device shows as a
//! fuller (or emptier) buffer and a later issue against the time the I/O was wanted (each
//! sample's `lag_ns`), never as a slower application. The same [`model`] runs live in the
//! stream's thread (`run`, which decides when to issue) and again over the samples afterwards
//! (the analysis), so every figure of a buffer can be derived from samples.csv.

pub mod model;
pub(super) mod run;
pub mod schedule;

pub use model::{Crossings, Model, Observer, Playback, Record, Tally};
pub use schedule::{FrameSizes, Schedule};

/// What the application on the far side of a stream's buffer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// It makes data into the buffer; the stream writes full chunks out.
    Record,
    /// The stream reads chunks into the buffer; it consumes frames from it.
    Playback,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Record => "record",
            Role::Playback => "playback",
        }
    }
}

/// A stream paced in real time: its role, its application's schedule of frames and its buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct Realtime {
    pub role: Role,
    pub schedule: Schedule,
    /// Bytes the application's buffer holds.
    pub buffer: u64,
    /// Playback: bytes buffered before playback starts, and again before it resumes after a
    /// stall (at least one frame is always waited for).
    pub preroll: u64,
    /// Record: the fraction of one chunk (0 to 1) already buffered when the stream starts, so
    /// streams started together do not all have a chunk ready at the same instant. The bytes
    /// count as made by the application.
    pub prefill: f64,
}

impl Realtime {
    /// Bytes buffered when a record stream doing `io`-byte writes starts.
    pub fn prefill_bytes(&self, io: u64) -> u64 {
        match self.role {
            Role::Record => ((self.prefill.clamp(0.0, 1.0) * io as f64) as u64).min(self.buffer),
            Role::Playback => 0,
        }
    }

    /// Entries a [`Crossings`] ring of this stream needs at I/O size `io`: the most chunks
    /// that can be ready (or reads allowed) and not yet issued.
    pub fn ring_len(&self, io: u64) -> usize {
        (self.buffer / io.max(1)) as usize + 2
    }

    /// Checks what no run could do: an empty buffer or one smaller than one I/O, a playback
    /// buffer without room for its pre-roll and one I/O more, a rate or frame rate of zero.
    pub fn check(&self, io: u64) -> Result<(), String> {
        self.schedule.check()?;
        if self.buffer < io {
            return Err(format!(
                "the buffer ({} bytes) is smaller than one I/O ({io} bytes)",
                self.buffer
            ));
        }
        if self.buffer / io.max(1) > 1 << 20 {
            return Err(format!(
                "the buffer ({} bytes) holds more than 2^20 I/Os of {io} bytes",
                self.buffer
            ));
        }
        // A stalled playback holds less than its pre-roll and must have room for one more
        // read to ever play again.
        if self.role == Role::Playback && self.preroll + io > self.buffer {
            return Err(format!(
                "the pre-roll ({} bytes) and one I/O more ({io} bytes) do not fit the playback buffer ({} bytes)",
                self.preroll, self.buffer
            ));
        }
        Ok(())
    }
}
