//! iotrial: runs an application's disk workload on candidate storage stacks, times every I/O,
//! and reports side by side what each stack guarantees. The binary (`main.rs`) is a thin CLI
//! over this library; the modules follow the data flow of DESIGN.md:
//! study -> trial -> stack -> engine -> analysis -> result (result.json and the CSV files) ->
//! report. What a workload hands the report (figures, tables, charts, the comparison of
//! stacks) lives in `present`, which both use.

pub mod analysis;
pub mod capacity;
pub mod cause;
pub mod durability;
pub mod emu;
pub mod engine;
pub mod fio;
pub mod guest;
pub mod launch;
pub mod monitor;
pub mod mountinfo;
pub mod params;
pub mod present;
pub mod probe;
pub mod report;
pub mod result;
pub mod stack;
pub mod study;
pub mod timeline;
pub mod trace;
pub mod trial;
pub mod units;
pub mod utc;
pub mod verify;
pub mod vm;
pub mod workload;
