//! The action phases: what the stack does between a plan's stream phases ([`action_phase`]:
//! sync, drop caches, unmount and mount), waiting for its devices to go idle ([`idle`]) and its
//! filesystem's own checker, run read-only and measured ([`checker`]). A power cut is
//! [`super::powercut`]'s.

pub mod action_phase;
pub mod checker;
pub mod idle;
