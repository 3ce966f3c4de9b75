//! The fio options iotrial does not honour, each with why: those it accepts and ignores because
//! they change nothing of the I/O it does or the figures it reports (`ignored`), those it
//! refuses (`refused`), and the options of fio's engines (`engine_options`): an engine's
//! options iotrial's own engines ignore, and those of engines it does not run.

mod engine_options;
mod ignored;
mod refused;

use super::Opt;
pub use engine_options::OTHER_ENGINE;

/// Every ignored or refused option.
pub fn options() -> impl Iterator<Item = &'static Opt> {
    ignored::OPTIONS
        .iter()
        .chain(refused::OPTIONS)
        .chain(engine_options::OPTIONS)
}
