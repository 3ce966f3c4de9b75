//! What a run creates and how it is given back: the resources a ledger lists, each described
//! well enough to be released from another process ([`resource`]), and the release of what
//! runs that are gone left behind, from their ledger files ([`cleanup`]).

pub mod cleanup;
pub mod resource;
