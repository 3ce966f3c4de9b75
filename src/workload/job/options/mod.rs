//! fio's options as iotrial reads them: one table ([`table`]) of every option of fio's HOWTO
//! (the fio release iotrial follows, [`FIO_VERSION`]) and the later ones iotrial reads, each
//! with what iotrial does with it ([`Status`]): honoured, honoured with a difference (said),
//! accepted and ignored as harmless (why), or refused (why). The parser decides by it
//! ([`apply`]), and `iotrial list fio-options` and docs/fio-options.md are printed from it
//! ([`rows`]). An option iotrial honours sets a field of a [`JobSpec`] (the tables of `topics`, by
//! topic), each option made with [`opt`]'s words; [`others`] holds those it ignores or refuses, [`engines`] says which `ioengine`s
//! run and why the others do not.

/// An honoured [`Opt`] whose setter is one statement: `opt!(["size"], |j, a| j.size = a.amount()?)`.
macro_rules! opt {
    ([$($name:literal),+], |$j:ident, $a:ident| $body:expr) => {
        $crate::workload::job::options::honoured(&[$($name),+], |$j, $a| {
            $body;
            Ok(())
        })
    };
}

pub mod engines;
pub mod opt;
pub mod others;
pub(crate) mod topics;
pub mod values;

use super::spec::JobSpec;
pub use opt::{honoured, ignored, refused, Opt, Setter, Status, FIO_VERSION};
pub use topics::sched::cpus_of as sched_cpus;
pub use values::Arg;

/// Every option iotrial knows, honoured first (by topic), then ignored and refused.
pub fn table() -> impl Iterator<Item = &'static Opt> {
    topics::core::OPTIONS
        .iter()
        .chain(topics::io::OPTIONS)
        .chain(topics::files::OPTIONS)
        .chain(topics::verify::OPTIONS)
        .chain(topics::outputs::OPTIONS)
        .chain(topics::control::OPTIONS)
        .chain(topics::prio::OPTIONS)
        .chain(topics::sched::OPTIONS)
        .chain(topics::replay::OPTIONS)
        .chain(topics::zones::OPTIONS)
        .chain(topics::steady::OPTIONS)
        .chain(others::options())
}

/// The option named `key` (or one of its aliases).
pub fn find(key: &str) -> Option<&'static Opt> {
    table().find(|o| o.names.contains(&key))
}

/// Whether option names `a` and `b` name the same option (one may be an alias).
pub fn same_option(a: &str, b: &str) -> bool {
    a == b || find(a).is_some_and(|o| o.names.contains(&b))
}

/// Applies fio option `key` = `value` to `job`. `Ok(Some(note))` for an option accepted
/// without effect (and for `filename`, which never names the path iotrial uses); `Err` says
/// why iotrial does not run it.
pub fn apply(job: &mut JobSpec, key: &str, value: Option<&str>) -> Result<Option<String>, String> {
    let arg = Arg { key, value };
    let Some(o) = find(key) else {
        let near = nearest(key)
            .map(|n| format!("; did you mean {n}?"))
            .unwrap_or_default();
        return Err(format!(
            "fio option '{key}' is not supported by iotrial: it is not an option of fio {FIO_VERSION} nor of a later fio iotrial reads (`iotrial list fio-options` lists them all, with what iotrial does with each){near}"
        ));
    };
    if let Some(set) = o.set {
        set(job, &arg)?;
        job.options.retain(|(k, _)| k != key);
        job.options
            .push((key.to_string(), value.unwrap_or("").to_string()));
    }
    match o.status {
        Status::Honoured => Ok(None),
        Status::Differs(_) if o.name() == "filename" => {
            // Never the named path: a job file saying filename=/dev/sdb must not touch it.
            Ok(Some(format!(
                "{key}: iotrial does its I/O in a file of this name on the stack's target (its raw region on a raw layout), never on {}",
                value.unwrap_or("")
            )))
        }
        // The table says how the others differ; a run does not repeat it.
        Status::Differs(_) => Ok(None),
        Status::Ignored(why) => Ok(Some(format!("{key}: {why}"))),
        Status::Refused(why) if why == others::OTHER_ENGINE => {
            let e = o.engines.first().copied().unwrap_or("");
            Err(format!(
                "fio option '{key}' cannot be honoured: it is an option of fio's {} engine{}, which iotrial does not run ({})",
                o.engines.join(" and "),
                if o.engines.len() > 1 { "s" } else { "" },
                engines::why_not(e).unwrap_or("not an engine of a plain Linux machine")
            ))
        }
        Status::Refused(why) => Err(format!("fio option '{key}' cannot be honoured: {why}")),
    }
}

/// The option name closest to `key` (at most two edits away), if any.
fn nearest(key: &str) -> Option<&'static str> {
    let distance = |a: &str, b: &str| {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (k, cb) in b.iter().enumerate() {
                let cur = row[k + 1];
                row[k + 1] = (prev + usize::from(ca != *cb)).min(row[k] + 1).min(cur + 1);
                prev = cur;
            }
        }
        row[b.len()]
    };
    table()
        .flat_map(|o| o.names.iter().copied())
        .map(|n| (distance(key, n), n))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, n)| n)
}

/// One row of the option table, as `iotrial list fio-options` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub option: String,
    pub aliases: String,
    pub status: &'static str,
    pub engines: String,
    /// The difference, or why ignored or refused; a default that differs; a later fio's.
    pub what: String,
}

/// The table's rows, sorted by option name.
pub fn rows() -> Vec<Row> {
    let mut out: Vec<Row> = table()
        .map(|o| {
            let mut what = o.status.why().to_string();
            if let Some(d) = o.default {
                if !what.is_empty() {
                    what.push_str("; ");
                }
                what.push_str("default: ");
                what.push_str(d);
            }
            if o.unlisted {
                if !what.is_empty() {
                    what.push(' ');
                }
                what.push_str(&format!("(not in fio {FIO_VERSION}'s HOWTO)"));
            }
            Row {
                option: o.name().to_string(),
                aliases: o.names[1..].join(", "),
                status: o.status.word(),
                engines: o.engines.join(", "),
                what,
            }
        })
        .collect();
    out.sort_by(|a, b| a.option.cmp(&b.option));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_known_once_and_says_how() {
        let mut names: Vec<&str> = table().flat_map(|o| o.names.iter().copied()).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "an option is declared twice");
        for o in table() {
            let honours = matches!(o.status, Status::Honoured | Status::Differs(_));
            assert_eq!(
                honours,
                o.set.is_some(),
                "{}: a setter iff honoured",
                o.name()
            );
            assert!(
                o.status == Status::Honoured || !o.status.why().is_empty(),
                "{} says why",
                o.name()
            );
        }
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
            e.contains("not supported") && e.contains("list fio-options"),
            "{e}"
        );
        let e = apply(&mut j, "iodepht", Some("4")).unwrap_err();
        assert!(e.ends_with("did you mean iodepth?"), "{e}");
        let e = apply(&mut j, "exec_prerun", Some("rm -rf /")).unwrap_err();
        assert!(e.contains("cannot be honoured"), "{e}");
    }
}
