//! Samples, from the hot path to the disk: one timed operation ([`sample::Sample`]), the
//! recorder each stream hands its samples to in bounded memory ([`record`]), the spill files a
//! long phase's samples go to (`spill`), and the set of a run's samples read back for analysis
//! ([`set::SampleSet`]).

pub mod record;
pub mod sample;
pub mod set;
pub(super) mod spill;
