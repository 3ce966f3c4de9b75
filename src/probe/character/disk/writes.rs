//! The write-back buffer of a conventional disk: whether writes are acknowledged from it,
//! how many commands and how many bytes it holds (bursts after idle until writes wait), and
//! whether a cache flush waits for it.

use super::{Disk, K4, MIB};
use crate::probe::character::stats::{median, Draw};
use crate::probe::character::twin::{size_text, Twin};
use crate::probe::character::{CharError, Progress};
use crate::probe::script::{Runner, Step, Timed};

/// What the shingle test left behind on a conventional disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// Its writes were made durable one by one, slowly: nothing is left in a buffer.
    Nothing,
    /// Its writes were fast though each was flushed, then a long burst of `writes` filled a
    /// buffer: a write buffer that a flush does not wait for, still destaging them.
    Destaging { writes: usize },
}

/// The write probes of a conventional disk: the write-back buffer's commands and bytes, and
/// flushes. `left`: what the shingle test left in a buffer that flushes do not wait for.
pub fn writes(
    run: &mut Runner,
    d: &mut Disk,
    draw: &mut Draw,
    left: Left,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    d.access = d.random_read - K4 as f64 / d.mean_rate();
    // Each burst starts from an empty buffer: a flush, then half a second of idle. A drive
    // that does not wait for the flush is still destaging what came before (its 4 KiB burst
    // found 46 slots of 199 on the model's timeline): the idle then lasts as long as those
    // writes could take to destage, a random access each.
    let (access, rate) = (d.access, d.mean_rate());
    let (ignored, before) = match left {
        Left::Destaging { writes } => (true, writes),
        Left::Nothing => (false, 0),
    };
    let drain = |writes: usize, size: u64| match ignored {
        true => 0.5 + writes as f64 * (access + size as f64 / rate),
        false => 0.5,
    };
    let idle0 = drain(before, 64 << 10);
    // Commands: scattered 4 KiB writes after idle until one waits.
    let n = 600;
    let mut steps = vec![Step::flush(), Step::Idle(idle0)];
    steps.extend((0..n).map(|_| Step::write(draw.aligned(0, d.cap - MIB, K4), K4)));
    let t = run.run(&steps)?;
    let w = &t[1..];
    let first = w[0].latency;
    if first > d.hit4 + 2e-3 {
        twin.set(
            "write_back",
            "false",
            format!(
                "the first write after idle took {:.3} ms, as long as a read from the platter",
                first * 1e3
            ),
        );
        for p in ["write_buffer", "write_slots", "flush"] {
            twin.unknown(p, "no write-back: does not apply");
        }
    } else {
        twin.set(
            "write_back",
            "true",
            format!(
                "writes after idle are acknowledged in {:.3} ms, before the platter could hold them",
                first * 1e3
            ),
        );
        match waited(w, d.hit4) {
            Some(i) => {
                let destaged = ((w[i].issue - w[0].issue) / d.access).floor() as usize;
                let slots = i.saturating_sub(destaged).max(1);
                twin.set(
                    "write_slots",
                    slots.to_string(),
                    format!("the {}th scattered 4 KiB write after idle waited; {destaged} were on the platter by then", i + 1),
                );
            }
            None => twin.unknown(
                "write_slots",
                format!("{n} scattered 4 KiB writes never waited: more commands, or a drive that destages as fast as they come (needs a longer burst)"),
            ),
        }
        // Bytes: scattered 1 MiB writes after idle until one waits. What a 1 MiB write
        // answered from the buffer takes: a buffer hit and the rest of the MiB at the
        // interface rate. A burst whose first writes already take three times that and a
        // millisecond found the buffer not empty after the flush and the idle gap (in two
        // runs of five on a served drive, the first four as slow as a destage): it is run
        // again after a longer gap, up to twice.
        let m = 96;
        let answer = d.hit4 + (MIB - K4) as f64 / d.iface;
        let mut idle = drain(n, K4);
        let mut again = Vec::new();
        let t = loop {
            let mut steps = vec![Step::flush(), Step::Idle(idle)];
            steps.extend((0..m).map(|_| Step::write(draw.aligned(0, d.cap - 2 * MIB, K4), MIB)));
            steps.push(Step::flush());
            let t = run.run(&steps)?;
            let first = median(&t[1..5].iter().map(|t| t.latency).collect::<Vec<_>>());
            if first <= 3.0 * answer + 1e-3 || again.len() == 2 {
                break t;
            }
            again.push(first);
            say(&format!(
                "write-back: the first 1 MiB writes after {idle} s idle took {:.3} ms at the median, where the buffer answers in {:.3} ms: again after {} s",
                first * 1e3,
                answer * 1e3,
                idle * 4.0
            ));
            idle *= 4.0;
        };
        let w = &t[1..t.len() - 1];
        let retried = if again.is_empty() {
            String::new()
        } else {
            format!(
                " (run {} times: the first writes of the bursts before took {} ms at the median, the buffer not yet empty)",
                again.len() + 1,
                again
                    .iter()
                    .map(|f| format!("{:.3}", f * 1e3))
                    .collect::<Vec<_>>()
                    .join(" and ")
            )
        };
        // Not the first write's own time as the bar: one the host held up would set it above
        // what a wait for the platter adds.
        match waited(w, answer) {
            Some(i) => {
                // Once full, the buffer takes a write per destage: the destage time is the
                // interval between the acknowledgements after the wait.
                let acks: Vec<f64> = w[i..].iter().map(|t| t.done()).collect();
                let gaps: Vec<f64> = acks.windows(2).map(|p| p[1] - p[0]).collect();
                let destage = if gaps.len() >= 8 {
                    median(&gaps)
                } else {
                    d.access + MIB as f64 / d.mean_rate()
                };
                let destaged = ((w[i].issue - w[0].issue) / destage).floor() as usize;
                let held = i.saturating_sub(destaged) as f64 + 0.5;
                let slots = twin.get("write_slots").and_then(|s| s.parse::<f64>().ok());
                if slots.is_some_and(|s| held >= s - 1.0) {
                    twin.unknown(
                        "write_buffer",
                        format!("at least {}: the buffer ran out of commands first (needs writes larger than 1 MiB, which the kernel splits)", size_text(held * MIB as f64)),
                    );
                } else {
                    twin.set(
                        "write_buffer",
                        size_text(held * MIB as f64),
                        format!("the {}th scattered 1 MiB write after idle waited; {destaged} were on the platter by then{retried}", i + 1),
                    );
                }
            }
            None => {
                let lat: Vec<f64> = w.iter().map(|t| t.latency).collect();
                twin.unknown(
                    "write_buffer",
                    format!(
                        "{m} scattered 1 MiB writes never waited (more than {m} MiB, or destaged as fast as they come): needs a longer burst (the first four took {:.3} ms at the median, the slowest of all {:.3} ms, the median of all {:.3} ms){retried}",
                        median(&lat[..4.min(lat.len())]) * 1e3,
                        lat.iter().copied().fold(0.0, f64::max) * 1e3,
                        median(&lat) * 1e3
                    ),
                );
            }
        }
        let destage = d.access + MIB as f64 / d.mean_rate();
        // Flush: 4 scattered 1 MiB writes buffered, then a flush.
        let mut steps = vec![Step::flush(), Step::Idle(drain(m, MIB))];
        steps.extend((0..4).map(|_| Step::write(draw.aligned(0, d.cap - 2 * MIB, K4), MIB)));
        steps.push(Step::flush());
        let t = run.run(&steps)?;
        let f = t[t.len() - 1].latency;
        let honoured = f > d.hit4 + 2.0 * d.access;
        twin.set(
            "flush",
            if honoured { "honour" } else { "ignore" },
            format!(
                "a flush after 4 scattered 1 MiB writes took {:.3} ms ({} their destage of about {:.1} ms)",
                f * 1e3,
                if honoured { "waiting for" } else { "not waiting for" },
                4.0 * destage * 1e3
            ),
        );
    }
    say(&format!(
        "write-back: {}; flush {}",
        twin.get("write_buffer").unwrap_or("?"),
        twin.get("flush").unwrap_or("-")
    ));
    Ok(())
}

/// The first write of a burst that waited: its latency, and the next two's, more than three
/// times the median of the first four (the buffer's own answer time, or `base` if that is
/// more) and a millisecond more. Once the buffer is full every write waits, so one write the
/// host delayed is not taken for it.
pub fn waited(w: &[Timed], base: f64) -> Option<usize> {
    let b = median(
        &w[..4.min(w.len())]
            .iter()
            .map(|t| t.latency)
            .collect::<Vec<_>>(),
    )
    .max(base);
    let slow = |t: &Timed| t.latency > 3.0 * b + 1e-3;
    (0..w.len().saturating_sub(2)).find(|&i| w[i..i + 3].iter().all(slow))
}
