//! fio's `verify` for a job: every write carries fio's header at the start of each
//! `verify_interval` (the offset it was meant for, the writer, its sequence number, when, and
//! the data's crc32c or md5, or the `verify_pattern` in its data), and the job reads what it
//! wrote back: after each pass, or every `verify_backlog` writes; a job that only reads checks
//! every block it reads (another job wrote them). A block whose header is missing, damaged,
//! names another offset, or whose data no longer matches its checksum or pattern is a
//! mismatch: the read fails with fio's EILSEQ and the mismatch is kept with its offset and
//! what is wrong (the first [`KEPT`] of them), for the phase's record.

use super::super::spec::VerifySpec;
use crate::verify::{inspect, seal_block, BlockHeader, Checksum};
use serde_json::{json, Value as Json};
use std::collections::VecDeque;

/// Mismatches kept with their offsets (every one is counted).
pub const KEPT: usize = 64;

/// fio's errno of a verify failure.
pub const EILSEQ: i32 = libc::EILSEQ;

/// One mismatch: where, and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Index of the file among the clone's, and the byte offset of the damaged interval in it
    /// (or in the device, on a raw layout).
    pub file: usize,
    pub offset: u64,
    pub what: String,
}

/// Per file, which verify intervals of its region hold a header this job wrote.
#[derive(Debug, Clone)]
struct Written {
    bits: Vec<u64>,
    /// Where the region starts (offsets are absolute) and how long it is.
    start: u64,
    len: u64,
}

/// Whether bit `k` of `bits` is set.
fn bit(bits: &[u64], k: u64) -> bool {
    bits.get((k / 64) as usize)
        .is_some_and(|word| word & (1 << (k % 64)) != 0)
}

impl Written {
    fn new(start: u64, len: u64, interval: u64) -> Written {
        Written {
            bits: vec![0; (len / interval).div_ceil(64) as usize + 1],
            start,
            len,
        }
    }
}

/// A job's verifying: sealing its writes, and what it found.
#[derive(Debug, Clone)]
pub struct Verifier {
    pub spec: VerifySpec,
    interval: u64,
    written: Vec<Written>,
    /// The intervals whose writes completed.
    done: Vec<Written>,
    /// Writes since the last backlog check, with where they went.
    backlog: VecDeque<(usize, u64, u32)>,
    /// Sealed writes so far (each header's `numberio`).
    numberio: u64,
    thread: u16,
    seed: u64,
    /// Intervals checked, mismatches, and the first ones.
    pub checked: u64,
    pub mismatches: u64,
    pub found: Vec<Finding>,
    /// A loaded state (`verify_state_load`): only the intervals it lists are checked.
    allowed: Option<Vec<Written>>,
    /// Intervals read but not checked: the state says no write completed there.
    pub not_written: u64,
    /// The state file saved or loaded, if any.
    pub state: Option<String>,
}

/// The first line of iotrial's verify state file.
const STATE_HEADER: &str = "iotrial verify state 1";

/// The path of job `job`'s clone `clone`'s state file: fio's name, in the working directory.
pub fn state_path(job: &str, clone: u64) -> std::path::PathBuf {
    std::path::PathBuf::from(format!(
        "local-{}-{clone}-verify.state",
        job.replace('/', ".")
    ))
}

impl Verifier {
    /// A verifier for files of `regions` (absolute start, length), writing headers every
    /// `interval` bytes as `thread` with `seed`.
    pub fn new(
        spec: VerifySpec,
        interval: u64,
        regions: &[(u64, u64)],
        thread: u16,
        seed: u64,
    ) -> Verifier {
        let bits: Vec<Written> = regions
            .iter()
            .map(|&(s, l)| Written::new(s, l, interval.max(1)))
            .collect();
        Verifier {
            done: bits.clone(),
            written: bits,
            interval: interval.max(1),
            backlog: VecDeque::new(),
            numberio: 0,
            thread,
            seed,
            checked: 0,
            mismatches: 0,
            found: Vec::new(),
            allowed: None,
            not_written: 0,
            state: None,
            spec,
        }
    }

    /// Writes which intervals of each file (named `names`) its completed writes covered to
    /// `path`, synced: iotrial's verify state.
    pub fn save_state(&mut self, path: &std::path::Path, names: &[String]) -> std::io::Result<()> {
        use std::io::Write;
        let mut t = format!("{STATE_HEADER}\ninterval {}\n", self.interval);
        for (w, name) in self.done.iter().zip(names) {
            let file = std::path::Path::new(name)
                .file_name()
                .map_or(name.clone(), |f| f.to_string_lossy().to_string());
            t.push_str(&format!("file {file} {} {}\n", w.start, w.len));
            let end = w.len / self.interval;
            let mut k = 0;
            while k < end {
                if bit(&w.bits, k) {
                    let from = k;
                    while k < end && bit(&w.bits, k) {
                        k += 1;
                    }
                    t.push_str(&format!("written {from} {k}\n"));
                }
                k += 1;
            }
        }
        let mut f = std::fs::File::create(path)?;
        f.write_all(t.as_bytes())?;
        f.sync_all()?;
        self.state = Some(path.display().to_string());
        Ok(())
    }

    /// Reads the state at `path` for files named `names`: from now on only the intervals it
    /// lists as written are checked.
    pub fn load_state(&mut self, path: &std::path::Path, names: &[String]) -> Result<(), String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("verify_state_load: cannot read {}: {e}", path.display()))?;
        let bad = |n: usize, m: &str| format!("verify_state_load: {}:{n}: {m}", path.display());
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        if lines.next().map(|l| l.1) != Some(STATE_HEADER) {
            return Err(bad(
                1,
                &format!("not iotrial's verify state (a first line '{STATE_HEADER}')"),
            ));
        }
        let mut allowed: Vec<Written> = Vec::new();
        for (n, l) in lines {
            let f: Vec<&str> = l.split_whitespace().collect();
            let num = |k: usize| -> Result<u64, String> {
                f.get(k)
                    .and_then(|x| x.parse().ok())
                    .ok_or_else(|| bad(n, &format!("'{l}': a number expected")))
            };
            match f.first().copied() {
                Some("interval") if num(1)? != self.interval => {
                    return Err(bad(
                        n,
                        &format!(
                        "the state was saved with a verify interval of {} bytes, the job checks {}",
                        num(1)?,
                        self.interval
                    ),
                    ))
                }
                Some("interval") => {}
                Some("file") => {
                    let k = allowed.len();
                    let own = names.get(k).map(|p| {
                        std::path::Path::new(p)
                            .file_name()
                            .map_or(p.clone(), |x| x.to_string_lossy().to_string())
                    });
                    if own.as_deref() != f.get(1).copied() {
                        return Err(bad(
                            n,
                            &format!(
                                "the state names file {}, the job's file {} is {}",
                                f.get(1).unwrap_or(&""),
                                k + 1,
                                own.unwrap_or_default()
                            ),
                        ));
                    }
                    allowed.push(Written::new(num(2)?, num(3)?, self.interval));
                }
                Some("written") => {
                    let w = allowed
                        .last_mut()
                        .ok_or_else(|| bad(n, "'written' before any 'file' line"))?;
                    for k in num(1)?..num(2)?.min(w.len / self.interval) {
                        w.bits[(k / 64) as usize] |= 1 << (k % 64);
                    }
                }
                _ => return Err(bad(n, &format!("'{l}' is not a line of a verify state"))),
            }
        }
        self.allowed = Some(allowed);
        self.state = Some(path.display().to_string());
        Ok(())
    }

    /// Fills `buf` (a write of `len` bytes to `offset` of file `file`) with its data and seals
    /// it with a header every interval, stamped `now_ns`; remembers it for checking.
    pub fn seal(&mut self, file: usize, offset: u64, buf: &mut [u8], now_ns: u64) {
        if let Some(p) = self.spec.pattern.as_deref().filter(|p| !p.is_empty()) {
            for (i, b) in buf.iter_mut().enumerate() {
                *b = p[i % p.len()];
            }
        }
        let base = BlockHeader {
            len: 0,
            rand_seed: self.seed,
            offset,
            time_sec: (now_ns / 1_000_000_000) as u32,
            time_nsec: (now_ns % 1_000_000_000) as u32,
            thread: self.thread,
            numberio: self.numberio as u16,
        };
        seal_block(buf, self.interval as usize, &base, self.spec.checksum);
        self.numberio += 1;
        if let Some(w) = self.written.get_mut(file) {
            let first = offset.saturating_sub(w.start) / self.interval;
            let n = (buf.len() as u64).div_ceil(self.interval);
            for k in first..first + n {
                if let Some(word) = w.bits.get_mut((k / 64) as usize) {
                    *word |= 1 << (k % 64);
                }
            }
        }
        if self.spec.backlog > 0 {
            self.backlog.push_back((file, offset, buf.len() as u32));
        }
    }

    /// Marks the intervals a write of `n` bytes at `offset` of file `file` covered as
    /// completed (what `verify_state_save` saves).
    pub fn completed(&mut self, file: usize, offset: u64, n: u64) {
        let interval = self.interval;
        if let Some(w) = self.done.get_mut(file) {
            let first = offset.saturating_sub(w.start) / interval;
            for k in first..first + n / interval {
                if let Some(word) = w.bits.get_mut((k / 64) as usize) {
                    *word |= 1 << (k % 64);
                }
            }
        }
    }

    /// Whether a backlog of writes is due for checking.
    pub fn backlog_due(&self) -> bool {
        self.spec.backlog > 0 && self.backlog.len() as u64 >= self.spec.backlog
    }

    /// The next write of the backlog to read back, if any is left.
    pub fn next_backlog(&mut self) -> Option<(usize, u64, u32)> {
        self.backlog.pop_front()
    }

    /// Whether interval `k` of file `file`'s region was written by this job.
    fn was_written(&self, file: usize, k: u64) -> bool {
        self.written.get(file).is_some_and(|w| bit(&w.bits, k))
    }

    /// The next run of written intervals of file `file` at or after `from` (absolute), at most
    /// `max` bytes: its offset and length; `None` when none is left.
    pub fn next_written(&self, file: usize, from: u64, max: u64) -> Option<(u64, u64)> {
        let w = self.written.get(file)?;
        let end = w.len / self.interval;
        let mut k = from.saturating_sub(w.start).div_ceil(self.interval);
        while k < end && !self.was_written(file, k) {
            k += 1;
        }
        if k >= end {
            return None;
        }
        let per = (max / self.interval).max(1);
        let mut n = 1;
        while n < per && k + n < end && self.was_written(file, k + n) {
            n += 1;
        }
        Some((w.start + k * self.interval, n * self.interval))
    }

    /// Checks what a read of file `file` at `offset` brought back (`data`): every interval in
    /// it (only those this job wrote, when `own` says it checks its own writes). The first
    /// mismatch's errno (EILSEQ), or Ok.
    pub fn check(&mut self, file: usize, offset: u64, data: &[u8], own: bool) -> Result<(), i32> {
        let mut bad = false;
        let pattern = self.spec.pattern.clone();
        for (k, piece) in data.chunks(self.interval as usize).enumerate() {
            let at = offset + k as u64 * self.interval;
            if own {
                let w = &self.written[file];
                if !self.was_written(file, at.saturating_sub(w.start) / self.interval) {
                    continue;
                }
            }
            if piece.len() < self.spec.checksum.min_interval() {
                continue;
            }
            if let Some(allowed) = &self.allowed {
                let listed = allowed
                    .get(file)
                    .is_some_and(|w| at >= w.start && bit(&w.bits, (at - w.start) / self.interval));
                if !listed {
                    self.not_written += 1;
                    continue;
                }
            }
            self.checked += 1;
            let what = match inspect(piece, pattern.as_deref()) {
                Err(m) => Some(m.to_string()),
                Ok(s) if s.header.offset != at => Some(format!(
                    "the header names offset {}: a block written for another place",
                    s.header.offset
                )),
                Ok(_) if self.spec.checksum == Checksum::Meta => {
                    pattern.as_deref().filter(|p| !p.is_empty()).and_then(|p| {
                        let data = &piece[Checksum::Meta.prefix_len()..];
                        let start = Checksum::Meta.prefix_len();
                        data.iter()
                            .enumerate()
                            .find(|(i, &b)| b != p[(start + i) % p.len()])
                            .map(|(i, _)| format!("verify_pattern differs at +{}", start + i))
                    })
                }
                Ok(_) => None,
            };
            if let Some(what) = what {
                bad = true;
                self.mismatches += 1;
                if self.found.len() < KEPT {
                    self.found.push(Finding {
                        file,
                        offset: at,
                        what,
                    });
                }
            }
        }
        if bad {
            Err(EILSEQ)
        } else {
            Ok(())
        }
    }

    /// What it found, for the phase's record (`names` are the files' paths).
    pub fn report(&self, names: &[String]) -> Json {
        json!({
            "checksum": self.spec.checksum.name(),
            "interval": self.interval,
            "checked": self.checked,
            "mismatches": self.mismatches,
            "not_written": self.not_written,
            "state": self.state,
            "first": self.found.iter().map(|f| json!({
                "file": names.get(f.file).cloned().unwrap_or_default(),
                "offset": f.offset,
                "what": f.what,
            })).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(checksum: Checksum) -> VerifySpec {
        VerifySpec {
            checksum,
            interval: 0,
            pattern: None,
            check: true,
            backlog: 0,
            fatal: false,
            implied: false,
            state_save: false,
            state_load: false,
            experimental: false,
        }
    }

    #[test]
    fn what_it_wrote_reads_back_whole_and_damage_is_named_by_offset() {
        let mut v = Verifier::new(spec(Checksum::Crc32c), 4096, &[(1 << 20, 1 << 20)], 3, 7);
        let mut buf = vec![0x5Au8; 16384];
        v.seal(0, (1 << 20) + 8192, &mut buf, 123);
        assert_eq!(
            v.next_written(0, 0, 1 << 20),
            Some(((1 << 20) + 8192, 16384))
        );
        assert_eq!(v.check(0, (1 << 20) + 8192, &buf, true), Ok(()));
        assert_eq!(v.checked, 4);
        buf[4096 + 100] ^= 1;
        assert_eq!(v.check(0, (1 << 20) + 8192, &buf, true), Err(EILSEQ));
        assert_eq!(v.mismatches, 1);
        assert_eq!(
            v.found[0].offset,
            (1 << 20) + 12288,
            "the damaged interval, by its offset"
        );
        assert!(v.found[0].what.contains("crc32c"), "{:?}", v.found[0]);
        // Read back at another offset: the header names where it was meant to go.
        let mut other = vec![0u8; 4096];
        other.copy_from_slice(&buf[..4096]);
        assert_eq!(v.check(0, 1 << 20, &other, false), Err(EILSEQ));
        assert!(
            v.found[1].what.contains("another place"),
            "{:?}",
            v.found[1]
        );
        // Zeros: never written.
        assert_eq!(v.check(0, 1 << 20, &[0u8; 4096], false), Err(EILSEQ));
        assert!(v.found[2].what.contains("all zeros"));
    }

    #[test]
    fn meta_with_a_pattern_checks_the_pattern() {
        let mut s = spec(Checksum::Meta);
        s.pattern = Some(vec![0xaa, 0x55, 0x5a, 0xa5]);
        let mut v = Verifier::new(s, 512, &[(0, 1 << 16)], 0, 1);
        let mut buf = vec![0u8; 4096];
        v.seal(0, 0, &mut buf, 1);
        assert_eq!(v.check(0, 0, &buf, false), Ok(()));
        buf[600] ^= 0xff;
        assert_eq!(v.check(0, 0, &buf, false), Err(EILSEQ));
        assert_eq!(v.found[0].offset, 512);
    }
}
