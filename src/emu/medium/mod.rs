//! The medium and what can happen to it: the image the data lives in (`backing`), the journal
//! of what reached the medium, the power cut that drops what had not, stale reads after it,
//! and injected read errors.

pub mod backing;
pub mod cut;
pub mod fault;
pub mod journal;
pub mod stale;

use super::model;
