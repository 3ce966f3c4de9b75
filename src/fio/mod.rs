//! fio job files, in and out. [`parse`] reads fio's INI format (`[global]`, job sections,
//! `${VAR}` from the environment, sizes as fio reads them) into the parameters of the `job`
//! workload, refusing any option iotrial does not model by its name and line; [`export`]
//! writes the fio job that does what a finished `job` or `dvr` trial did, so its figures can be
//! checked with fio itself; [`table`] prints what iotrial does with each of fio's options.

pub mod export;
pub mod parse;
pub mod table;

pub use export::{export_trial, ExportError};
pub use parse::{parse_file, parse_text, FioError, JobFile};

/// The prefix that names a fio job file where a workload kind is expected (`fio:PATH`).
pub const PREFIX: &str = "fio:";
