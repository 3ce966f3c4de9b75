//! The subcommands that run on one stack described by flags: `run` (one trial) and `capacity`
//! (a search of many runs), with the flags that describe that stack and its monitors
//! ([`stack_args`]).

pub mod capacity;
pub mod run;
pub mod stack_args;
