//! The write-back buffer of a conventional disk: whether writes are acknowledged from it,
//! how many commands and how many bytes it holds (bursts after idle until writes wait), and
//! whether a cache flush waits for it.

use super::write_buffer::{self, burst, destage, fill, finer, Fill, FINER, SLOTS_BURST};
use super::{Disk, K4, MIB};
use crate::probe::character::stats::{median, Draw};
use crate::probe::character::twin::{ordinal, size_text, Twin};
use crate::probe::character::{CharError, Progress};
use crate::probe::script::{Runner, Step};

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
    let n = SLOTS_BURST;
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
        match write_buffer::waited(w, d.hit4) {
            Some(i) => {
                let destaged = ((w[i].issue - w[0].issue) / d.access).floor() as usize;
                let slots = i.saturating_sub(destaged).max(1);
                twin.set(
                    "write_slots",
                    slots.to_string(),
                    format!("the {} scattered 4 KiB write after idle waited; {destaged} were on the platter by then", ordinal(i + 1)),
                );
            }
            None => twin.unknown(
                "write_slots",
                format!("{n} scattered 4 KiB writes never waited: more commands, or a drive that destages as fast as they come (needs a longer burst)"),
            ),
        }
        let slots = twin
            .get("write_slots")
            .and_then(|s| s.parse::<usize>().ok());
        let last = bytes(run, d, draw, (&drain, (n, K4), slots, !ignored), twin, say)?;
        let destage = destage(d, MIB);
        // Flush: 4 scattered 1 MiB writes buffered, then a flush.
        let mut steps = vec![Step::flush(), Step::Idle(drain(last.0, last.1))];
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

/// The idle before a burst, for the count and size of the writes before it.
type Drain<'a> = &'a dyn Fn(usize, u64) -> f64;

/// The write-back buffer's bytes: a burst of 96 scattered 1 MiB writes until one waits, then, where a smaller write size places the buffer's edge more finely
/// without running out of the drive's `slots` commands first, [`FINER`] bursts of that size
/// (their median). Each burst starts after the idle `drain` gives for the writes before it
/// (`first`, their count and size); `flush_waits`: whether a flush waits for the buffer
/// (the shingle test found none that did not). Returns the last burst's count and size.
fn bytes(
    run: &mut Runner,
    d: &Disk,
    draw: &mut Draw,
    (drain, first, slots, flush_waits): (Drain, (usize, u64), Option<usize>, bool),
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(usize, u64), CharError> {
    let m = 96;
    let b = burst(run, d, draw, (MIB, m), drain(first.0, first.1), say)?;
    let (w, again) = (&b.writes, &b.again);
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
    let out_of_commands = |f: &Fill| slots.is_some_and(|s| f.held + 1 >= s);
    // Not the first write's own time as the bar: one the host held up would set it above
    // what a wait for the platter adds.
    let Some(coarse) = fill(
        &b,
        write_buffer::answer(d, MIB),
        destage(d, MIB),
        flush_waits,
    ) else {
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
        return Ok((m, MIB));
    };
    if out_of_commands(&coarse) {
        twin.unknown(
            "write_buffer",
            format!("at least {}: the buffer ran out of commands first (needs writes larger than 1 MiB, which the kernel splits)", size_text(coarse.bytes(MIB))),
        );
        return Ok((m, MIB));
    }
    let said = |f: &Fill, size: u64| {
        format!(
            "the {} scattered {} write after idle waited, {} destaged by then",
            ordinal(f.waited + 1),
            size_text(size as f64),
            f.destaged
        )
    };
    let mut value = coarse.bytes(MIB);
    let mut how = format!("{}{retried}", said(&coarse, MIB));
    let mut last = (m, MIB);
    if let Some(size) = finer(value, slots) {
        // Long enough for a buffer four times what the 1 MiB burst found, up to the commands
        // the drive takes: a host that held up three of its writes in a row makes it stop
        // short (a served drive's 18 MiB taken for 10.5 once), and a finer burst that never
        // waits leaves the short answer standing.
        let commands = slots.unwrap_or(SLOTS_BURST);
        let count = ((value * 4.0 / size as f64).ceil() as usize).min(commands) + 32;
        let mut found = Vec::new();
        for _ in 0..FINER {
            let b = burst(run, d, draw, (size, count), drain(last.0, last.1), say)?;
            last = (count, size);
            match fill(
                &b,
                write_buffer::answer(d, size),
                destage(d, size),
                flush_waits,
            ) {
                Some(f) if !out_of_commands(&f) => found.push(f),
                _ => {}
            }
        }
        if found.len() * 2 > FINER {
            found.sort_by_key(|f| f.held);
            let mid = found[found.len() / 2];
            value = mid.bytes(size);
            how = format!(
                "{} (the median of {} bursts, which held {} {} writes; a 1 MiB burst first: {})",
                said(&mid, size),
                found.len(),
                found
                    .iter()
                    .map(|f| f.held.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                size_text(size as f64),
                how
            );
        }
    }
    twin.set("write_buffer", size_text(value), how);
    Ok(last)
}
