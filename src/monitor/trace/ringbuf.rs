//! The kernel's trace ring buffer as `per_cpu/cpuN/trace_pipe_raw` hands it out: binary
//! pages of events, read without the kernel formatting them as text. A page is a time stamp,
//! the length of its data, then events, each a 32-bit header (type and time delta) and its
//! data (tracefs' `events/header_page` and `header_event`). Event fields are found at the
//! offsets the event's `format` file gives, so no kernel's layout is assumed.

use super::blockreq::Event;
use std::path::Path;

/// Event header types (`type_len`): longer data, padding, time extension, absolute time.
const TYPE_DATA_LONG: u32 = 0;
const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
/// Bits of the time delta in an event header.
const TS_SHIFT: u32 = 27;
/// Flags in a page's length word.
const LENGTH_MASK: u64 = (1 << 30) - 1;
const MISSED_EVENTS: u64 = 1 << 31;

/// (offset, size) of a field in an event's data.
type Field = (usize, usize);

/// Where the fields of one block event are.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub id: u16,
    dev: Field,
    sector: Field,
    nr_sector: Field,
    bytes: Option<Field>,
    rwbs: Field,
}

/// The `format` text of an event, as its id and fields (name -> (offset, size)).
fn fields(text: &str) -> (Option<u16>, Vec<(String, Field)>) {
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix("ID:"))
        .and_then(|v| v.trim().parse().ok());
    let fields = text
        .lines()
        .filter_map(|l| {
            let decl = l.trim().strip_prefix("field:")?.split(';').next()?;
            let name = decl
                .split_whitespace()
                .last()?
                .split('[')
                .next()?
                .to_string();
            let num = |key: &str| -> Option<usize> {
                let at = l.find(key)? + key.len();
                l[at..].split(';').next()?.trim().parse().ok()
            };
            Some((name, (num("offset:")?, num("size:")?)))
        })
        .collect();
    (id, fields)
}

impl Layout {
    /// The layout of a block event from its `format` text.
    pub fn parse(text: &str) -> Result<Layout, String> {
        let (id, f) = fields(text);
        let get = |n: &str| f.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        let need = |n: &str| get(n).ok_or_else(|| format!("the event format has no field {n}"));
        Ok(Layout {
            id: id.ok_or("the event format has no ID")?,
            dev: need("dev")?,
            sector: need("sector")?,
            nr_sector: need("nr_sector")?,
            bytes: get("bytes"),
            rwbs: need("rwbs")?,
        })
    }

    /// The layout of `event` of the tracefs instance at `dir`.
    pub fn read(dir: &Path, event: &str) -> Result<Layout, String> {
        let path = dir.join("events/block").join(event).join("format");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Layout::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

fn uint(data: &[u8], (off, size): Field) -> Option<u64> {
    let b = data.get(off..off + size)?;
    Some(match size {
        1 => u64::from(b[0]),
        2 => u64::from(u16::from_le_bytes(b.try_into().ok()?)),
        4 => u64::from(u32::from_le_bytes(b.try_into().ok()?)),
        8 => u64::from_le_bytes(b.try_into().ok()?),
        _ => return None,
    })
}

fn u32_at(page: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(page.get(at..at + 4)?.try_into().ok()?))
}

/// The issue and complete layouts, and what a page of them reads as.
#[derive(Debug, Clone)]
pub struct Decoder {
    pub issue: Layout,
    pub complete: Layout,
}

impl Decoder {
    /// One event's data at `ts_ns` as an [`Event`], if it is one of ours.
    fn event(&self, ts_ns: u64, data: &[u8]) -> Option<Event> {
        let id = uint(data, (0, 2))? as u16;
        let (l, complete) = if id == self.issue.id {
            (&self.issue, false)
        } else if id == self.complete.id {
            (&self.complete, true)
        } else {
            return None;
        };
        let dev = uint(data, l.dev)?;
        let raw = data.get(l.rwbs.0..l.rwbs.0 + l.rwbs.1)?;
        let end = raw.iter().position(|&c| c == 0).unwrap_or(raw.len());
        Some(Event {
            ts: ts_ns as f64 / 1e9,
            complete,
            dev: ((dev >> 20) as u32, (dev & 0xfffff) as u32),
            rwbs: String::from_utf8_lossy(&raw[..end]).into_owned(),
            sector: uint(data, l.sector)?,
            sectors: uint(data, l.nr_sector)?,
            bytes: if complete {
                None
            } else {
                l.bytes.and_then(|f| uint(data, f))
            },
        })
    }

    /// Appends the events of one page to `out`; returns whether the kernel marked events as
    /// lost before it.
    pub fn page(&self, page: &[u8], out: &mut Vec<Event>) -> bool {
        let (Some(ts0), Some(commit)) = (
            page.get(0..8)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap())),
            page.get(8..16)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap())),
        ) else {
            return false;
        };
        let end = (16 + (commit & LENGTH_MASK) as usize).min(page.len());
        let mut ts = ts0;
        let mut p = 16;
        while p + 4 <= end {
            let Some(h) = u32_at(page, p) else { break };
            let (kind, delta) = (h & 0x1f, u64::from(h >> 5));
            let array0 = u64::from(u32_at(page, p + 4).unwrap_or(0));
            let (data, next) = match kind {
                TYPE_PADDING if delta == 0 => break,
                TYPE_PADDING => {
                    ts += delta;
                    (None, p + 4 + array0 as usize)
                }
                TYPE_TIME_EXTEND => {
                    ts += (array0 << TS_SHIFT) + delta;
                    (None, p + 8)
                }
                TYPE_TIME_STAMP => {
                    let abs = (array0 << TS_SHIFT) | delta;
                    ts = abs | (ts0 & !((1u64 << 59) - 1));
                    (None, p + 8)
                }
                TYPE_DATA_LONG => {
                    ts += delta;
                    let len = (array0.saturating_sub(4) as usize + 3) & !3;
                    (page.get(p + 8..p + 8 + len), p + 8 + len)
                }
                n => {
                    ts += delta;
                    let len = n as usize * 4;
                    (page.get(p + 4..p + 4 + len), p + 4 + len)
                }
            };
            if let Some(e) = data.and_then(|d| self.event(ts, d)) {
                out.push(e);
            }
            if next <= p {
                break;
            }
            p = next;
        }
        commit & MISSED_EVENTS != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUE: &str = "name: block_rq_issue
ID: 2104
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;
\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;
\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;
\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;

print fmt: \"...\"
";

    fn decoder() -> Decoder {
        let issue = Layout::parse(ISSUE).unwrap();
        let mut complete = issue.clone();
        complete.id = 2107;
        complete.bytes = None;
        Decoder { issue, complete }
    }

    /// An issue event's data: `dev` 7,3, sector, 8 sectors, 4096 bytes, rwbs.
    fn data(id: u16, sector: u64, rwbs: &str) -> Vec<u8> {
        let mut d = vec![0u8; 60];
        d[0..2].copy_from_slice(&id.to_le_bytes());
        d[8..12].copy_from_slice(&((7u32 << 20) | 3).to_le_bytes());
        d[16..24].copy_from_slice(&sector.to_le_bytes());
        d[24..28].copy_from_slice(&8u32.to_le_bytes());
        d[28..32].copy_from_slice(&4096u32.to_le_bytes());
        d[34..34 + rwbs.len()].copy_from_slice(rwbs.as_bytes());
        d
    }

    #[test]
    fn formats_give_the_layout() {
        let l = Layout::parse(ISSUE).unwrap();
        assert_eq!(
            (l.id, l.dev, l.sector, l.bytes, l.rwbs),
            (2104, (8, 4), (16, 8), Some((28, 4)), (34, 10))
        );
        assert!(Layout::parse("ID: 5\nformat:\n")
            .unwrap_err()
            .contains("no field dev"));
    }

    #[test]
    fn a_page_of_events_is_read_with_its_times() {
        let mut page = vec![0u8; 16];
        page[0..8].copy_from_slice(&1_000_000_000u64.to_le_bytes());
        let ev = data(2104, 2048, "WS");
        // A short event: type_len 15 (60 bytes), delta 500 ns.
        page.extend((15u32 | (500 << 5)).to_le_bytes());
        page.extend(&ev);
        // A time extension of 2^27 + 7 ns.
        page.extend((TYPE_TIME_EXTEND | (7 << 5)).to_le_bytes());
        page.extend(1u32.to_le_bytes());
        // A long event (type_len 0, length in the next word), delta 3 ns: a completion.
        let done = data(2107, 2048, "WS");
        page.extend((3u32 << 5).to_le_bytes());
        page.extend((done.len() as u32 + 4).to_le_bytes());
        page.extend(&done);
        // An event of another id, then padding to the end of the page.
        page.extend((15u32 | (1 << 5)).to_le_bytes());
        page.extend(data(99, 0, "R"));
        let len = page.len() as u64 - 16;
        page[8..16].copy_from_slice(&(len | MISSED_EVENTS).to_le_bytes());
        page.extend(TYPE_PADDING.to_le_bytes());
        page.resize(4096, 0);
        let mut out = Vec::new();
        assert!(decoder().page(&page, &mut out), "events were missed");
        assert_eq!(out.len(), 2);
        assert_eq!(
            (out[0].complete, out[0].dev, out[0].sector, out[0].bytes),
            (false, (7, 3), 2048, Some(4096))
        );
        assert_eq!(out[0].rwbs, "WS");
        assert_eq!(out[0].ts, 1.0000005);
        assert!(out[1].complete && out[1].bytes.is_none());
        let ns = ((out[1].ts - 1.0) * 1e9).round() as u64;
        assert_eq!(ns, 500 + (1 << 27) + 7 + 3);
    }
}
