//! fio's options as iotrial reads them: every option it honours sets a field of a
//! [`JobSpec`] (`core` and the tables after it), options that only change how fio reports
//! or names its target are accepted with a note ([`NOTED`]), and options iotrial knows but
//! cannot honour are refused saying why (`refused`). [`apply`] reads one `key=value` into a
//! job; [`engines`] says which `ioengine`s run and why the others do not.

/// An [`Opt`] whose setter is one statement: `opt!(["size"], |j, a| j.size = a.amount()?)`.
macro_rules! opt {
    ([$($name:literal),+], |$j:ident, $a:ident| $body:expr) => {
        $crate::workload::job::options::Opt {
            names: &[$($name),+],
            set: |$j, $a| {
                $body;
                Ok(())
            },
        }
    };
}

mod control;
mod core;
pub mod engines;
mod files;
mod io;
mod outputs;
mod prio;
mod refused;
mod steady;
pub mod values;
mod verify;
mod zones;

use super::spec::JobSpec;
pub use values::Arg;

/// One option iotrial honours: its fio names (the first is the option's, the rest aliases)
/// and how it sets a job.
pub struct Opt {
    pub names: &'static [&'static str],
    pub set: fn(&mut JobSpec, &Arg) -> Result<(), String>,
}

/// fio options accepted with a note: they name the target (iotrial runs on its stack's), or
/// only change how fio reports or runs its threads, not the I/O.
pub const NOTED: &[(&str, &str)] = &[
    (
        "directory",
        "iotrial does its I/O on the stack's target, not in this directory",
    ),
    ("thread", "iotrial runs every job as a thread"),
    (
        "openfiles",
        "iotrial keeps every file of a job open while it runs",
    ),
    (
        "allow_file_create",
        "iotrial lays out its jobs' files on the stack's target itself",
    ),
    (
        "create_serialize",
        "iotrial lays out the jobs' files one job after the other",
    ),
    (
        "threads",
        "an option of fio's tiobench profile, which fio ignores without profile=tiobench",
    ),
    (
        "gtod_reduce",
        "iotrial still times every I/O (fio would skip most clock reads and report no latency)",
    ),
    (
        "fixedbufs",
        "iotrial's io_uring registers its buffers whenever the kernel allows",
    ),
    (
        "registerfiles",
        "iotrial's io_uring registers its files whenever the kernel allows",
    ),
    (
        "verify_async",
        "iotrial checks what it reads back in the job's own thread",
    ),
    (
        "verify_dump",
        "iotrial names each mismatch's offset and what is wrong in result.json instead of dumping the blocks to files",
    ),
    (
        "verify_state_save",
        "iotrial keeps no verify state file",
    ),
    (
        "verify_backlog_batch",
        "iotrial reads back every block of a backlog",
    ),
    (
        "log_prio",
        "iotrial counts each stream's I/Os per priority in result.json (`streams[].prio_ios`) rather than in its log lines",
    ),
    (
        "error_dump",
        "iotrial keeps every I/O's errno in samples.csv",
    ),
    (
        "flow_watermark",
        "iotrial keeps a job's flow share at every I/O",
    ),
    (
        "userspace_reap",
        "iotrial's libaio reaps its completions with io_getevents",
    ),
    (
        "iodepth_batch_complete_max",
        "a wait takes every completion there is, up to the queue depth",
    ),
    (
        "io_submit_mode",
        "iotrial issues a paced job's I/O on its schedule from the job's own thread whatever the completions, as long as its queue has room (fio's offload does it from other threads)",
    ),
];

/// Every option iotrial honours, in the order `supported()` lists them.
fn table() -> impl Iterator<Item = &'static Opt> {
    core::OPTIONS
        .iter()
        .chain(io::OPTIONS)
        .chain(files::OPTIONS)
        .chain(verify::OPTIONS)
        .chain(outputs::OPTIONS)
        .chain(control::OPTIONS)
        .chain(prio::OPTIONS)
        .chain(zones::OPTIONS)
        .chain(steady::OPTIONS)
}

/// The option named `key` (or one of its aliases).
pub fn find(key: &str) -> Option<&'static Opt> {
    table().find(|o| o.names.contains(&key))
}

/// Whether option names `a` and `b` name the same option (one may be an alias).
pub fn same_option(a: &str, b: &str) -> bool {
    a == b || find(a).is_some_and(|o| o.names.contains(&b))
}

/// The names of the options iotrial honours, then those it accepts with a note.
pub fn supported() -> (Vec<&'static str>, Vec<&'static str>) {
    (
        table().map(|o| o.names[0]).collect(),
        NOTED.iter().map(|n| n.0).collect(),
    )
}

/// Applies fio option `key` = `value` to `job`. `Ok(Some(note))` for an option accepted
/// without effect; `Err` says why iotrial does not run it.
pub fn apply(job: &mut JobSpec, key: &str, value: Option<&str>) -> Result<Option<String>, String> {
    let arg = Arg { key, value };
    if let Some(o) = find(key) {
        (o.set)(job, &arg)?;
        job.options.retain(|(k, _)| k != key);
        job.options
            .push((key.to_string(), value.unwrap_or("").to_string()));
        if o.names[0] == "filename" {
            // Never the named path: a job file saying filename=/dev/sdb must not touch it.
            return Ok(Some(format!(
                "{key}: iotrial does its I/O in a file of this name on the stack's target (its raw region on a raw layout), never on {}",
                value.unwrap_or("")
            )));
        }
        return Ok(None);
    }
    if let Some((_, why)) = NOTED.iter().find(|(k, _)| *k == key) {
        return Ok(Some(format!("{key}: {why}")));
    }
    if let Some(why) = refused::why(key, value) {
        return Err(format!("fio option '{key}' cannot be honoured: {why}"));
    }
    let (ok, noted) = supported();
    Err(format!(
        "fio option '{key}' is not supported by iotrial; supported: {} (and, without effect on the I/O: {})",
        ok.join(", "),
        noted.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_known_once() {
        let mut names: Vec<&str> = table().flat_map(|o| o.names.iter().copied()).collect();
        names.extend(NOTED.iter().map(|n| n.0));
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "an option is declared twice");
    }

    #[test]
    fn apply_sets_notes_and_refuses() {
        let mut j = JobSpec::new("j");
        assert_eq!(apply(&mut j, "bs", Some("8k")), Ok(None));
        assert_eq!(j.fixed_bs(), Some(8192));
        assert!(apply(&mut j, "thread", None)
            .unwrap()
            .unwrap()
            .contains("thread"));
        let e = apply(&mut j, "bogus", Some("1")).unwrap_err();
        assert!(
            e.contains("not supported") && e.contains("rwmixread"),
            "{e}"
        );
    }
}
