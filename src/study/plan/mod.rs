//! What a study is and how it becomes trials: the study file ([`mod@file`], its errors placed
//! at a line and column, its `set` tables as [`super::Assignments`]), sweeps ([`sweep`]), expansion
//! into the ordered list of trials ([`mod@expand`]), the names every machine gives them
//! ([`identity`]), the part one run takes ([`shard`]), and how many repeats each stack gets
//! ([`repeats`], [`adaptive`]).

pub mod adaptive;
pub(super) mod assign;
pub mod expand;
pub mod file;
pub mod identity;
pub(super) mod locate;
pub mod repeats;
pub mod shard;
pub mod sweep;
