//! A job under a power cut: what its writes carry and where the scan after the cut reads them.
//! A job that writes carries fio's verify header on every block, as dvr's and stream's blocks
//! do: its own `verify` when it has one, else an implied `verify=crc32c` with `do_verify=0`
//! (sealed, never read back, so the job's I/O is what it asked for). The header goes every
//! 4 KiB, or every smallest write where that does not divide the job's writes and offsets; a
//! job whose writes have no common size a header fits (`blocksize_unaligned`) cannot be
//! judged, and the scan says why. Files the job lays out are filled with sealed blocks too, so
//! what the run never rewrote reads back as the job's own older data. The scan judges a
//! clone's only file against its samples, block by block; a clone of several files (the
//! samples do not say which file an I/O went to) or a file other jobs share, by each block's
//! header alone.

use super::gen::place::{self, FilePlan};
use super::spec::{BlockSizes, Engine, JobSpec, VerifySpec};
use crate::engine::{Placement, WrittenFile};
use crate::verify::Checksum;

/// Bytes of the workloads' own seal interval (a filesystem block).
const WHOLE: u64 = crate::engine::Seal::INTERVAL as u64;

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The common divisor of the sizes `d` allows (0: none, unaligned sizes of a range).
fn sizes_gcd(d: &BlockSizes, unaligned: bool) -> u64 {
    match d {
        BlockSizes::Fixed(b) => *b,
        BlockSizes::Range { min, max } if unaligned && min != max => 1,
        BlockSizes::Range { min, .. } => *min,
        BlockSizes::Split(v) => v.iter().fold(0, |g, x| gcd(g, x.0)),
    }
}

/// The bytes every header of `j`'s writes covers under a power cut: 4 KiB when it divides
/// every write's size and place, else the common divisor; an error saying why no header fits.
pub fn interval(j: &JobSpec) -> Result<u64, String> {
    let align = |d: &BlockSizes, ba: u64| if ba > 0 { ba } else { d.min() };
    let mut g = sizes_gcd(&j.bs.write, j.bs_unaligned);
    if j.rw.reads() {
        // Random places are multiples of the smaller alignment of the two directions.
        g = gcd(g, align(&j.bs.read, j.blockalign.read));
    }
    g = gcd(g, align(&j.bs.write, j.blockalign.write));
    if !j.rw.random {
        // Sequential I/O skipping (or stepping back) bytes after each I/O.
        g = gcd(g, j.rw.modifier.unsigned_abs());
    }
    let min = Checksum::Crc32c.min_interval() as u64;
    match g {
        _ if g % WHOLE == 0 && g > 0 => Ok(WHOLE),
        _ if g >= min => Ok(g),
        _ => Err(format!(
            "job {}: its writes have no common size of {min} bytes or more (write sizes from {} to {} bytes), so they cannot carry fio's verify header",
            j.name,
            j.bs.write.min(),
            j.bs.write.max()
        )),
    }
}

/// Readies `j` for a power cut: marked, and sealing its writes (an implied verify) when it
/// writes without a verify of its own and a header fits.
pub fn ready(j: &mut JobSpec) {
    j.cut = true;
    if !j.rw.writes() || j.verify.is_some() {
        return;
    }
    if let Ok(interval) = interval(j) {
        j.verify = Some(VerifySpec {
            checksum: Checksum::Crc32c,
            interval,
            pattern: None,
            check: false,
            backlog: 0,
            fatal: false,
            implied: true,
            state_save: false,
            state_load: false,
            experimental: false,
        });
    }
}

/// The files clone `clone` of `j` writes sealed blocks to on `placement`, for the scan after
/// the cut; `scans`: the clone is the one that reads them back (a file several clones use is
/// read once, by the first that writes it), `shared`: other clones use them too.
pub fn written(
    j: &JobSpec,
    clone: u64,
    files: &FilePlan,
    (scans, shared): (bool, bool),
    placement: &Placement,
) -> Result<Vec<WrittenFile>, String> {
    // The null engine moves no data and makes no file.
    if !j.rw.writes() || !scans || j.ioengine == Engine::Null {
        return Ok(Vec::new());
    }
    let Some(v) = &j.verify else {
        return Err(interval(j)
            .err()
            .unwrap_or_else(|| format!("job {}: its writes carry no verify header", j.name)));
    };
    let interval = match v.interval {
        0 => j.bs.write.min(),
        n => n,
    };
    let block = match j.bs.write {
        BlockSizes::Fixed(b) if b % interval == 0 => b,
        _ => interval,
    };
    let placed = place::files(j, clone, files, placement).map_err(|e| e.to_string())?;
    let one = placed.len() == 1;
    Ok(placed
        .into_iter()
        .map(|f| WrittenFile {
            path: f.path,
            base: f.base + f.start,
            len: f.len,
            block,
            interval,
            by_samples: one && !shared,
            shared,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::super::spec::{Rw, RwKind};
    use super::*;

    fn job(bs: BlockSizes) -> JobSpec {
        let mut j = JobSpec::new("j");
        j.rw = Rw {
            kind: RwKind::Write,
            random: true,
            modifier: 0,
        };
        j.bs.write = bs;
        j
    }

    #[test]
    fn headers_go_every_4k_where_that_divides_every_write() {
        assert_eq!(interval(&job(BlockSizes::Fixed(64 << 10))), Ok(4096));
        let split = BlockSizes::Split(vec![(8192, 50), (65536, 50)]);
        assert_eq!(interval(&job(split)), Ok(4096));
        let r = BlockSizes::Range {
            min: 4096,
            max: 131072,
        };
        assert_eq!(interval(&job(r)), Ok(4096));
    }

    #[test]
    fn else_every_common_size_and_none_below_a_header() {
        let split = BlockSizes::Split(vec![(512, 50), (65536, 50)]);
        assert_eq!(interval(&job(split)), Ok(512));
        let mut j = job(BlockSizes::Range {
            min: 512,
            max: 65536,
        });
        j.bs_unaligned = true;
        let e = interval(&j).unwrap_err();
        assert!(e.contains("cannot carry fio's verify header"), "{e}");
    }

    #[test]
    fn a_writing_job_is_sealed_without_reading_back_and_a_readers_is_not() {
        let mut j = job(BlockSizes::Fixed(4096));
        ready(&mut j);
        let v = j.verify.clone().expect("sealed");
        assert!(v.implied && !v.check, "{v:?}");
        assert_eq!((v.checksum, v.interval), (Checksum::Crc32c, 4096));
        let mut r = job(BlockSizes::Fixed(4096));
        r.rw.kind = RwKind::Read;
        ready(&mut r);
        assert!(r.cut && r.verify.is_none());
    }

    /// A job's 1 MiB placement in `dir`.
    fn placed(dir: &std::path::Path) -> Placement {
        Placement {
            path: dir.to_path_buf(),
            offset: 0,
            len: 1 << 20,
        }
    }

    fn plan(names: &[&str]) -> FilePlan {
        FilePlan {
            owner: true,
            names: names.iter().map(|n| n.to_string()).collect(),
            sizes: Vec::new(),
            fill: false,
        }
    }

    #[test]
    fn the_scan_reads_a_clones_files_judging_an_only_unshared_one_by_samples() {
        let dir = tempfile::tempdir().unwrap();
        let place = placed(dir.path());
        let mut j = job(BlockSizes::Fixed(16384));
        j.size = super::super::spec::Amount::Bytes(1 << 20);
        ready(&mut j);
        let one = written(&j, 0, &plan(&["a"]), (true, false), &place).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].path, dir.path().join("a"));
        assert_eq!((one[0].block, one[0].interval), (16384, 4096));
        assert!(one[0].by_samples && !one[0].shared);
        let two = written(&j, 0, &plan(&["a", "b"]), (true, false), &place).unwrap();
        assert!(two.iter().all(|f| !f.by_samples && !f.shared), "{two:?}");
        let shared = written(&j, 0, &plan(&["a"]), (true, true), &place).unwrap();
        assert!(!shared[0].by_samples && shared[0].shared);
        // Another clone reads a shared file back; the null engine makes none.
        assert!(written(&j, 0, &plan(&["a"]), (false, true), &place)
            .unwrap()
            .is_empty());
        j.ioengine = Engine::Null;
        assert!(written(&j, 0, &plan(&["a"]), (true, false), &place)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_job_no_header_fits_is_named_with_why() {
        let dir = tempfile::tempdir().unwrap();
        let place = placed(dir.path());
        let mut j = job(BlockSizes::Range {
            min: 512,
            max: 65536,
        });
        j.bs_unaligned = true;
        ready(&mut j);
        assert!(j.verify.is_none());
        let e = written(&j, 0, &plan(&["a"]), (true, false), &place).unwrap_err();
        assert!(e.contains("cannot carry fio's verify header"), "{e}");
    }
}
