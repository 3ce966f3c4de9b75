//! fio's options of a job's files: which (`filename`, shared by every job naming it; else
//! `nrfiles` of the job's own), how big (`filesize`), which one the next I/O goes to
//! (`file_service_type`), how they are laid out before the job starts (`fallocate`,
//! `pre_read`, `fill_device`, `overwrite`, `create_fsync`, `invalidate`, `fadvise_hint`), what
//! happens to them at the end (`unlink`, `end_fsync`, `fsync_on_close`) and how writes reach
//! them (`sync`, `fdatasync`).

use crate::workload::job::options::values::{bytes, int, Arg};
use crate::workload::job::options::Opt;
use crate::workload::job::spec::{Fallocate, FileService, SyncMode};

fn filesize(v: &str) -> Result<(u64, u64), String> {
    match v.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (bytes(a)?, bytes(b)?);
            Ok((a.min(b), a.max(b)))
        }
        None => {
            let b = bytes(v)?;
            Ok((b, b))
        }
    }
}

fn service(a: &Arg) -> Result<FileService, String> {
    let v = a.need()?;
    let (kind, n) = v.split_once(':').unwrap_or((v, ""));
    let count = || -> Result<u64, String> {
        match n.trim() {
            "" => Ok(1),
            n => Ok(int(n).map_err(|e| format!("{}: {e}", a.key))?.max(1)),
        }
    };
    match kind {
        "roundrobin" => Ok(FileService::RoundRobin(count()?)),
        "sequential" => Ok(FileService::Sequential),
        "random" => Ok(FileService::Random),
        "zipf" | "pareto" | "normal" | "gauss" => Err(format!(
            "{}={v}: iotrial picks files in turn, one after the other or at random (roundrobin, sequential, random), not by {kind}",
            a.key
        )),
        o => Err(format!("{}={o}: expected roundrobin, sequential or random", a.key)),
    }
}

/// The options of this module.
pub static OPTIONS: &[Opt] = &[
    opt!(["filename"], |j, a| {
        let v = a.need()?;
        j.filename = Some(v.to_string());
    })
    .differs(
        "iotrial does its I/O in a file of this name on the stack's target (its raw region on a raw layout), never on the path named; a job that reads lays its file out afresh, where fio keeps an existing file big enough (a job that verifies what it reads keeps it too)",
    ),
    opt!(["filename_format"], |j, a| j.filename_format =
        Some(a.need()?.to_string())),
    opt!(["lockfile"], |_j, a| {
        let v = a.need()?;
        if !v.starts_with("none") {
            return Err(format!(
                "{}={v}: iotrial does not lock files between jobs (lockfile=none, fio's default, is all it takes)",
                a.key
            ));
        }
    })
    .differs("only none, fio's default: exclusive and readwrite locking is refused"),
    opt!(["create_only"], |j, a| j.create_only = a.flag()?),
    opt!(["write_hint"], |j, a| {
        j.write_hint = match a.choice(&["none", "short", "medium", "long", "extreme"])? {
            "none" => None,
            "short" => Some(2),
            "medium" => Some(3),
            "long" => Some(4),
            _ => Some(5),
        }
    }),
    opt!(["iomem", "mem"], |_j, a| {
        let v = a.need()?;
        let kind = v.split(':').next().unwrap_or(v);
        if !["malloc", "shm", "shmhuge", "mmap", "mmaphuge", "mmapshared"].contains(&kind) {
            return Err(format!(
                "{}={v}: iotrial's I/O buffers are in host memory (malloc, shm, shmhuge, mmap, mmaphuge, mmapshared all take it); {kind} is not",
                a.key
            ));
        }
    })
    .differs("every type takes iotrial's own page-aligned buffers (one of 128 KiB or more on transparent huge pages, whatever the type): no hugetlbfs, no shared memory; cudamalloc is refused"),
    opt!(["iomem_align", "mem_align"], |_j, a| {
        let n = a.bytes()?;
        if n > 4096 || (n != 0 && !n.is_power_of_two()) {
            return Err(format!(
                "{}={n}: iotrial's buffers are aligned to 4096 bytes; a power of 2 up to 4096 is what it can honour",
                a.key
            ));
        }
    })
    .differs("iotrial's buffers are aligned to 4096 bytes: any power of 2 up to it is met, a larger one refused"),
    opt!(["thp"], |_j, a| {
        if a.flag()? {
            return Err(format!(
                "{}=1: iotrial's mmap engine maps files with the kernel's default pages, not transparent huge pages",
                a.key
            ));
        }
    })
    .of(&["mmap"])
    .unlisted()
    .differs("only 0, fio's default: transparent huge pages are refused"),
    opt!(["stat_type"], |_j, a| {
        a.choice(&["stat", "lstat", "statx"])?;
    })
    .of(&["filestat", "dirstat"])
    .differs("iotrial's filestat and dirstat call stat(2) for every type"),
    opt!(["nrfiles", "nr_files"], |j, a| {
        j.nrfiles = a.int()?;
        if j.nrfiles == 0 {
            return Err("nrfiles must be at least 1".into());
        }
    }),
    opt!(["filesize"], |j, a| j.filesize = Some(
        filesize(a.need()?).map_err(|e| format!("{}: {e}", a.key))?
    )),
    opt!(["file_service_type"], |j, a| j.file_service = service(a)?),
    opt!(["fallocate"], |j, a| {
        j.fallocate = match a.choice(&["none", "native", "posix", "keep", "truncate", "0", "1"])? {
            "none" | "0" => Fallocate::None,
            "posix" => Fallocate::Posix,
            "keep" => Fallocate::Keep,
            "truncate" => Fallocate::Truncate,
            _ => Fallocate::Native,
        }
    }),
    opt!(["pre_read"], |j, a| j.pre_read = a.flag()?),
    opt!(["fill_device", "fill_fs"], |j, a| j.fill_device =
        a.flag()?),
    opt!(["invalidate"], |j, a| j.invalidate = a.flag()?),
    opt!(["overwrite"], |j, a| j.overwrite = a.flag()?),
    opt!(["create_fsync"], |j, a| j.create_fsync = a.flag()?),
    opt!(["unlink"], |j, a| j.unlink = a.flag()?),
    opt!(["create_on_open"], |j, a| j.create_on_open = a.flag()?),
    opt!(["fdatasync"], |j, a| j.fdatasync = a.int()?),
    opt!(["end_fsync"], |j, a| j.end_fsync = a.flag()?),
    opt!(["fsync_on_close"], |j, a| j.fsync_on_close = a.flag()?),
    opt!(["sync"], |j, a| {
        j.sync = match a.choice(&["none", "0", "sync", "1", "dsync"])? {
            "sync" | "1" => SyncMode::Sync,
            "dsync" => SyncMode::Dsync,
            _ => SyncMode::None,
        }
    }),
    opt!(["fadvise_hint"], |j, a| {
        // fio takes 0/1 or the advice to give; iotrial gives the access pattern's.
        j.fadvise = !matches!(
            a.value.map(str::trim),
            Some("0") | Some("false") | Some("off")
        );
    }),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::job::options::apply;
    use crate::workload::job::spec::JobSpec;

    #[test]
    fn files_and_their_layout() {
        let mut j = JobSpec::new("j");
        for (k, v) in [
            ("filename", "fio-rand-RW"),
            ("nrfiles", "30"),
            ("filesize", "4k"),
            ("file_service_type", "roundrobin:4"),
            ("fallocate", "none"),
            ("sync", "dsync"),
        ] {
            apply(&mut j, k, Some(v)).unwrap();
        }
        assert_eq!(j.filename.as_deref(), Some("fio-rand-RW"));
        assert_eq!((j.nrfiles, j.filesize), (30, Some((4096, 4096))));
        assert_eq!(j.file_service, FileService::RoundRobin(4));
        assert_eq!((j.fallocate, j.sync), (Fallocate::None, SyncMode::Dsync));
        apply(&mut j, "filesize", Some("1k-8k")).unwrap();
        assert_eq!(j.filesize, Some((1024, 8192)));
        assert!(apply(&mut j, "file_service_type", Some("zipf:1.1"))
            .unwrap_err()
            .contains("roundrobin"));
        assert!(apply(&mut j, "nrfiles", Some("0")).is_err());
    }
}
