//! What the monitors share: a CSV file written a row at a time and flushed after each
//! sample (so a reader sees the series grow), and sums kept per phase in the order the
//! phases came.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

/// A CSV file of one monitor's series.
pub struct CsvFile {
    out: std::io::BufWriter<std::fs::File>,
    line: String,
}

impl CsvFile {
    /// Creates `path` with the `header` line.
    pub fn create(path: &Path, header: &str) -> std::io::Result<CsvFile> {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        writeln!(out, "{header}")?;
        out.flush()?;
        Ok(CsvFile {
            out,
            line: String::new(),
        })
    }

    /// Starts a row with `t_s` (ms precision) and the phase (empty outside every phase).
    pub fn start(&mut self, t_s: f64, phase: Option<&str>) -> &mut String {
        self.line.clear();
        let _ = write!(self.line, "{t_s:.3},{}", field(phase.unwrap_or("")));
        &mut self.line
    }

    /// Ends the row started last.
    pub fn end(&mut self) -> std::io::Result<()> {
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())
    }

    /// Writes what is buffered.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A text field of a CSV row, quoted when it holds a comma, a quote or a line break.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Values kept per phase (`None`: outside every phase), in the order the phases came.
#[derive(Debug, Clone)]
pub struct PerPhase<T> {
    pub entries: Vec<(Option<String>, T)>,
}

impl<T> Default for PerPhase<T> {
    fn default() -> Self {
        PerPhase {
            entries: Vec::new(),
        }
    }
}

impl<T: Default> PerPhase<T> {
    /// The value of `phase`, made when the phase is new.
    pub fn get(&mut self, phase: Option<&str>) -> &mut T {
        let i = match self.entries.iter().position(|(p, _)| p.as_deref() == phase) {
            Some(i) => i,
            None => {
                self.entries.push((phase.map(str::to_string), T::default()));
                self.entries.len() - 1
            }
        };
        &mut self.entries[i].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_written_and_phases_kept_in_order() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.csv");
        let mut f = CsvFile::create(&p, "t_s,phase,v").unwrap();
        f.start(1.23456, Some("run,1")).push_str(",7");
        f.end().unwrap();
        f.start(2.0, None).push_str(",8");
        f.end().unwrap();
        f.flush().unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text, "t_s,phase,v\n1.235,\"run,1\",7\n2.000,,8\n");
        let mut pp: PerPhase<u32> = PerPhase::default();
        *pp.get(Some("b")) += 1;
        *pp.get(None) += 2;
        *pp.get(Some("b")) += 3;
        let order: Vec<_> = pp.entries.iter().map(|(p, v)| (p.clone(), *v)).collect();
        assert_eq!(order, vec![(Some("b".into()), 4), (None, 2)]);
    }
}
