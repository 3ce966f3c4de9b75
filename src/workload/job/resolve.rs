//! What a job's options mean together, once every one of them is read: the block sizes of
//! `bs_is_seq_rand` (per sequential and random I/O, not per direction), a `verify_only` job
//! (its reads checking what an earlier run wrote), and a job replaying an iolog (`read_iolog`:
//! its directions and largest I/O are the log's).

use super::spec::{BlockSizes, JobSpec, PerDir, RwKind};
use crate::trace::TraceKind;

/// Settles `j` after its options.
pub fn resolve(j: &mut JobSpec) {
    if j.bs_is_seq_rand {
        // bs=SEQ,RAND: the job is one or the other.
        let b = if j.rw.random {
            j.bs.write.clone()
        } else {
            j.bs.read.clone()
        };
        j.bs = PerDir::all(b);
    }
    if j.verify_only {
        j.rw.kind = RwKind::Read;
        if let Some(v) = &mut j.verify {
            v.check = true;
        }
    }
    if !j.replay.logs.is_empty() {
        let (mut reads, mut writes, mut trims, mut largest) = (false, false, false, 0u64);
        for (_, t) in &j.replay.logs {
            for o in t.ops.iter().filter(|o| !j.replay.options.skips(o.kind)) {
                match o.kind {
                    TraceKind::Read => reads = true,
                    TraceKind::Write => writes = true,
                    TraceKind::Trim => trims = true,
                    _ => {}
                }
                // A trim moves no data: only reads and writes size the buffers.
                if matches!(o.kind, TraceKind::Read | TraceKind::Write) {
                    largest = largest.max(o.len);
                }
            }
        }
        j.rw.kind = match (reads, writes) {
            (true, true) => RwKind::Mixed,
            (false, true) => RwKind::Write,
            (false, false) if trims => RwKind::Trim,
            _ => RwKind::Read,
        };
        j.rw.random = false;
        j.bs = PerDir::all(BlockSizes::Fixed(largest.max(512)));
        j.size = super::spec::Amount::Bytes(0);
    }
}

#[cfg(test)]
mod tests {
    use super::super::options::apply;
    use super::*;

    #[test]
    fn sizes_per_sequential_or_random_and_a_replay_s_directions() {
        let mut j = JobSpec::new("j");
        for (k, v) in [
            ("bs", "4k,64k"),
            ("rw", "randread"),
            ("bs_is_seq_rand", "1"),
        ] {
            apply(&mut j, k, Some(v)).unwrap();
        }
        resolve(&mut j);
        assert_eq!(j.fixed_bs(), Some(65536));
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("t.log");
        std::fs::write(
            &log,
            "fio version 2 iolog\nf add\nf trim 0 1073741824\nf write 0 8192\n",
        )
        .unwrap();
        let mut j = JobSpec::new("j");
        apply(&mut j, "read_iolog", Some(log.to_str().unwrap())).unwrap();
        resolve(&mut j);
        assert_eq!((j.rw.kind, j.fixed_bs()), (RwKind::Write, Some(8192)));
    }
}
