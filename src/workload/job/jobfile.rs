//! fio's job-file syntax, read as fio 3.33 reads it: `[section]` headers (a name starting with
//! `global` is a global section, whose options apply to every job after it), `key=value` or
//! bare `key` lines, and comments: a line whose first character is `;` or `#`, and anything
//! from the first `;` or `#` of a line on (`runtime=3600  # 1 hour` is `runtime=3600`). The
//! job workload reads its `groups` parameter with it; `crate::fio` adds reading a file and
//! `${VAR}` from the environment.

/// One `key=value` (or bare `key`) line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assign {
    pub key: String,
    /// `None` for a bare key (`time_based`); an empty string for `key=`.
    pub value: Option<String>,
    /// Its line in the text, from 1 (0 for options that come from elsewhere: `--set`).
    pub line: usize,
}

impl Assign {
    /// An option given outside any file (`--set key=value`).
    pub fn set(key: &str, value: &str) -> Assign {
        Assign {
            key: key.to_string(),
            value: Some(value.to_string()),
            line: 0,
        }
    }

    /// The option as a job file line.
    pub fn text(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={v}", self.key),
            None => self.key.clone(),
        }
    }
}

/// One `[section]` with its options in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    /// A `[global...]` section.
    pub global: bool,
    pub line: usize,
    pub options: Vec<Assign>,
}

/// A syntax error at a line of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    pub line: usize,
    pub message: String,
}

impl At {
    pub fn new(line: usize, message: impl Into<String>) -> At {
        At {
            line,
            message: message.into(),
        }
    }
}

/// fio's `strip_blank_end`: the line cut at its first `;` and first `#`, trailing blanks gone.
pub fn strip_comment(line: &str) -> &str {
    let cut = line.find([';', '#']).unwrap_or(line.len());
    line[..cut].trim_end_matches(|c: char| c.is_whitespace() || c.is_control())
}

/// Whether fio skips the line: empty, blank, or a comment.
fn is_empty_or_comment(line: &str) -> bool {
    for c in line.chars() {
        if c == ';' || c == '#' {
            return true;
        }
        if !c.is_whitespace() && !c.is_control() {
            return false;
        }
    }
    true
}

/// The sections of job-file `text`, in order.
pub fn sections(text: &str) -> Result<Vec<Section>, At> {
    let mut out: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        if is_empty_or_comment(raw) {
            continue;
        }
        let line = strip_comment(raw.trim_start());
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest.strip_suffix(']').ok_or_else(|| {
                At::new(
                    n,
                    format!("'{line}' is not a section header such as [job1]"),
                )
            })?;
            if name.trim().is_empty() {
                return Err(At::new(n, "an empty section name []; name the job: [job1]"));
            }
            out.push(Section {
                name: name.to_string(),
                global: name.starts_with("global"),
                line: n,
                options: Vec::new(),
            });
            continue;
        }
        let Some(section) = out.last_mut() else {
            return Err(At::new(
                n,
                format!("option '{line}' comes before any section; put it under [global] or a job section"),
            ));
        };
        if line.starts_with("include ") || line == "include" {
            return Err(At::new(
                n,
                "include: iotrial reads one job file; paste the included options into it",
            ));
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (line.trim(), None),
        };
        if key.is_empty() {
            return Err(At::new(
                n,
                format!("'{line}' has no option name before '='"),
            ));
        }
        section.options.push(Assign {
            key: key.to_string(),
            value,
            line: n,
        });
    }
    Ok(out)
}

/// The sections as job-file text again (comments gone, one option a line).
pub fn text_of(sections: &[Section]) -> String {
    let mut t = String::new();
    for s in sections {
        t.push_str(&format!("[{}]\n", s.name));
        for o in &s.options {
            t.push_str(&o.text());
            t.push('\n');
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_go_as_fio_strips_them() {
        let text = "; fio-rand-read.job\n[global]\nname=fio-rand-read\nruntime=3600  # Max runtime\nsize=102404k ; 100Mb+4k\nnumjobs=4\t; 4 threads\n  # indented comment\ntime_based\n\n[punch hole-fuzzer]\nbs=4k\n";
        let s = sections(text).unwrap();
        assert_eq!(s.len(), 2);
        assert!(s[0].global && !s[1].global);
        assert_eq!(s[1].name, "punch hole-fuzzer");
        let kv: Vec<String> = s[0].options.iter().map(Assign::text).collect();
        assert_eq!(
            kv,
            [
                "name=fio-rand-read",
                "runtime=3600",
                "size=102404k",
                "numjobs=4",
                "time_based"
            ]
        );
        assert_eq!(s[0].options[1].line, 4);
        assert_eq!(sections(&text_of(&s)).unwrap()[1].options, {
            let mut o = s[1].options.clone();
            o[0].line = 8;
            o
        });
    }

    #[test]
    fn what_is_not_a_job_file_names_its_line() {
        let e = sections("rw=read\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("before any section"));
        let e = sections("[a]\n[b\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(sections("[a]\n=3\n")
            .unwrap_err()
            .message
            .contains("no option name"));
        assert!(sections("[global-x]\n").unwrap()[0].global);
    }
}
