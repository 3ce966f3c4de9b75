//! What the monitors share: a CSV file written a row at a time and flushed after each
//! sample (so a reader sees the series grow), and sums kept per phase in the order the
//! phases came.

use crate::timeline::Span;
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
    pub fn start(&mut self, t_s: f64, span: &Span) -> &mut String {
        self.line.clear();
        let _ = write!(self.line, "{t_s:.3},{}", field(span.phase().unwrap_or("")));
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

/// Values kept per phase (and for the time before the first phase and after the last), in the
/// order they came.
#[derive(Debug, Clone)]
pub struct PerPhase<T> {
    pub entries: Vec<(Span, T)>,
}

impl<T> Default for PerPhase<T> {
    fn default() -> Self {
        PerPhase {
            entries: Vec::new(),
        }
    }
}

impl<T: Default> PerPhase<T> {
    /// The value of `span`, made when it is new.
    pub fn get(&mut self, span: &Span) -> &mut T {
        let i = match self.entries.iter().position(|(p, _)| p == span) {
            Some(i) => i,
            None => {
                self.entries.push((span.clone(), T::default()));
                self.entries.len() - 1
            }
        };
        &mut self.entries[i].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::Outside;

    #[test]
    fn rows_are_written_and_phases_kept_in_order() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.csv");
        let mut f = CsvFile::create(&p, "t_s,phase,v").unwrap();
        f.start(1.23456, &Span::Phase("run,1".into()))
            .push_str(",7");
        f.end().unwrap();
        f.start(2.0, &Span::Outside(Outside::After)).push_str(",8");
        f.end().unwrap();
        f.flush().unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text, "t_s,phase,v\n1.235,\"run,1\",7\n2.000,,8\n");
        let mut pp: PerPhase<u32> = PerPhase::default();
        let (b, after) = (Span::Phase("b".into()), Span::Outside(Outside::After));
        *pp.get(&Span::Outside(Outside::Before)) += 5;
        *pp.get(&b) += 1;
        *pp.get(&after) += 2;
        *pp.get(&b) += 3;
        let order: Vec<_> = pp.entries.iter().map(|(p, v)| (p.clone(), *v)).collect();
        assert_eq!(
            order,
            vec![(Span::Outside(Outside::Before), 5), (b, 4), (after, 2)]
        );
    }
}
