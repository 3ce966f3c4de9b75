//! The table of fio's options as iotrial treats them, printed from the parser's own table
//! ([`crate::workload::job::options::rows`]): for the terminal (`iotrial list fio-options`) and
//! as docs/fio-options.md (`iotrial list fio-options --markdown`, checked current by a test).

use crate::workload::job::options::{self, Row, FIO_VERSION};

/// How many options the table holds: those of fio's HOWTO and the others, and per status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub listed: usize,
    pub unlisted: usize,
    pub honoured: usize,
    pub differs: usize,
    pub ignored: usize,
    pub refused: usize,
}

/// The table's counts.
pub fn counts() -> Counts {
    let mut c = Counts::default();
    for o in options::table() {
        if o.unlisted {
            c.unlisted += 1;
        } else {
            c.listed += 1;
        }
        match o.status {
            options::Status::Honoured => c.honoured += 1,
            options::Status::Differs(_) => c.differs += 1,
            options::Status::Ignored(_) => c.ignored += 1,
            options::Status::Refused(_) => c.refused += 1,
        }
    }
    c
}

/// The sentence that heads the table.
fn summary() -> String {
    let c = counts();
    format!(
        "iotrial follows fio {FIO_VERSION}: the {} options of its HOWTO, and {} more that other fio releases or fio {FIO_VERSION}'s own help know. Of all {}: {} honoured as fio does, {} honoured with a difference (said), {} accepted and ignored as harmless (why said), {} refused (why said).",
        c.listed,
        c.unlisted,
        c.listed + c.unlisted,
        c.honoured,
        c.differs,
        c.ignored,
        c.refused
    )
}

/// The options whose default differs from fio's, with how.
fn defaults() -> Vec<(&'static str, &'static str)> {
    let mut d: Vec<(&str, &str)> = options::table()
        .filter_map(|o| o.default.map(|how| (o.name(), how)))
        .collect();
    d.sort();
    d
}

/// An option with its aliases.
fn names(r: &Row) -> String {
    if r.aliases.is_empty() {
        r.option.clone()
    } else {
        format!("{} ({})", r.option, r.aliases)
    }
}

/// The table for the terminal: one block per option.
pub fn text() -> String {
    let mut out = summary();
    out.push_str("\n\nWhere iotrial's default differs from fio's:\n");
    for (name, how) in defaults() {
        out.push_str(&format!("  {name}: {how}\n"));
    }
    out.push('\n');
    for r in options::rows() {
        out.push_str(&format!("{:<34} {}", names(&r), r.status));
        if !r.engines.is_empty() {
            out.push_str(&format!(" [{}]", r.engines));
        }
        out.push('\n');
        if !r.what.is_empty() {
            out.push_str(&format!("    {}\n", r.what));
        }
    }
    out
}

/// docs/fio-options.md.
pub fn markdown() -> String {
    let mut out = format!(
        "# fio's options in iotrial\n\n\
         A fio job file runs with `iotrial run fio:FILE` (or `kind = \"fio:FILE\"` in a study). \
         Every option below is read as the parser's table says, the same table this page is \
         printed from (`iotrial list fio-options --markdown`; a test keeps this page current). \
         An option not in it is refused by name, like a refused one, with the file and line, \
         before anything is made on the target.\n\n{}\n\n",
        summary()
    );
    out.push_str("Where iotrial's default differs from fio's (every other option's default is fio's own; `invalidate=1`, fio's, drops a buffered job's cached pages before it starts and at each new pass):\n\n");
    for (name, how) in defaults() {
        out.push_str(&format!("- `{name}`: {how}\n"));
    }
    out.push('\n');
    out.push_str("| option | status | engines | the difference, or why |\n");
    out.push_str("|---|---|---|---|\n");
    for r in options::rows() {
        let aliases: Vec<String> = r
            .aliases
            .split(", ")
            .filter(|a| !a.is_empty())
            .map(|a| format!("`{a}`"))
            .collect();
        let name = match aliases.is_empty() {
            true => format!("`{}`", r.option),
            false => format!("`{}` ({})", r.option, aliases.join(", ")),
        };
        out.push_str(&format!(
            "| {name} | {} | {} | {} |\n",
            r.status,
            r.engines,
            r.what.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_covers_300_of_fios_options_each_with_its_status() {
        let c = counts();
        assert!(c.listed >= 300, "{c:?}");
        assert_eq!(
            c.honoured + c.differs + c.ignored + c.refused,
            c.listed + c.unlisted
        );
        let md = markdown();
        assert!(md.contains("| `verify` | honoured, differs |"), "{md}");
        assert!(md.contains("| `exec_prerun` | refused |"));
        assert!(text().contains("readwrite"));
        assert!(md.contains("- `size`: 256 MiB per clone"), "{md}");
    }
}
