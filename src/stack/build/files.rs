//! The `files` layout: a fresh subdirectory of the target directory, and in it one place per
//! stream: the path of its file, or a directory of its own for a stream doing its own
//! operations; a stream sharing an earlier stream's place gets the same. The files themselves
//! are made by the plan's `prepare` phase (the workload decides what they hold:
//! [`crate::engine::prepare`]). A stream without a region size gets an equal share of the free
//! space. Everything in the subdirectory is removed when the layout is dropped.

use crate::engine::buffer::AlignedBuf;
use crate::engine::{open_target, Op, Placement, Plan};
use crate::mountinfo;
use crate::stack::ledger::Ledger;
use crate::stack::release::resource::Resource;
use crate::stack::StackError;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Files made for one trial; removed on drop.
#[derive(Debug)]
pub struct FileLayout {
    dir: PathBuf,
    pub placements: Vec<Placement>,
    /// Whether O_DIRECT works on these files.
    pub direct_ok: bool,
    /// The filesystem type of the directory, as the kernel names it (`ext4`, `tmpfs`).
    pub fs_type: String,
    pub warnings: Vec<String>,
}

impl FileLayout {
    /// The directory holding the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for FileLayout {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Bytes free to an unprivileged writer on the filesystem holding `path`.
pub fn free_bytes(path: &Path) -> std::io::Result<u64> {
    let s = rustix::fs::statvfs(path).map_err(std::io::Error::from)?;
    Ok(s.f_bavail * s.f_frsize)
}

/// The filesystem type holding `path` (`ext4`, `tmpfs`), or `unknown`.
fn fs_type_of(path: &Path) -> String {
    mountinfo::mount_of(path).map_or_else(|| "unknown".into(), |m| m.fs_type)
}

/// A fresh, empty subdirectory of `parent` for one trial's files, in the ledger before it
/// exists (so a killed run's files are removed by its device server or `iotrial cleanup`).
/// Its name is the first free of `iotrial-0`, `iotrial-1`, ... and never the process's: ext4
/// puts a new directory at the top of a filesystem in the block group its name hashes to
/// (with the filesystem's hash seed, [`crate::stack::hash_seed`]), so on a filesystem the
/// stack has just made, the same workload's files land at the same place on the device in
/// every trial, whichever process runs it.
fn stream_dir(parent: &Path, spec: &str, ledger: &mut Ledger) -> Result<PathBuf, StackError> {
    for n in 0usize.. {
        let dir = parent.join(format!("iotrial-{n}"));
        if dir.exists() {
            continue;
        }
        let entry = Resource::TempDir { path: dir.clone() };
        ledger
            .record(entry.clone())
            .map_err(|e| StackError::io("write the ledger", e))?;
        return match std::fs::create_dir(&dir) {
            Ok(()) => Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // Another run made it between the check and here: it is theirs.
                ledger.forget(&entry);
                continue;
            }
            Err(e) => {
                ledger.forget(&entry);
                Err(StackError::Target {
                    spec: spec.to_string(),
                    message: format!("{} is not writable ({e})", parent.display()),
                })
            }
        };
    }
    unreachable!("some name is free")
}

/// Places the streams of `plan` in a new subdirectory of `parent` (their files are made by
/// the plan's `prepare` phase).
pub fn create(parent: &Path, plan: &Plan, ledger: &mut Ledger) -> Result<FileLayout, StackError> {
    let spec = format!("dir:{}", parent.display());
    let meta = std::fs::metadata(parent).map_err(|e| StackError::Target {
        spec: spec.clone(),
        message: format!(
            "{} does not exist or cannot be read ({e})",
            parent.display()
        ),
    })?;
    if !meta.is_dir() {
        return Err(StackError::Target {
            spec,
            message: format!("{} is not a directory", parent.display()),
        });
    }
    let dir = stream_dir(parent, &spec, ledger)?;
    let mut layout = FileLayout {
        dir: dir.clone(),
        placements: Vec::new(),
        direct_ok: plan.direct,
        fs_type: fs_type_of(&dir),
        warnings: Vec::new(),
    };
    let free =
        free_bytes(&dir).map_err(|e| StackError::io(format!("statvfs {}", dir.display()), e))?;
    let lens = region_lengths(plan, free).map_err(|needed| StackError::NoSpace {
        path: parent.display().to_string(),
        needed,
        free,
    })?;
    for (i, (s, &len)) in plan.streams.iter().zip(&lens).enumerate() {
        if let Some(owner) = s.io.share {
            let p = layout.placements.get(owner).cloned().ok_or_else(|| {
                StackError::Invalid(format!(
                    "stream {} shares the place of stream {owner}, which does not come before it",
                    s.name
                ))
            })?;
            layout.placements.push(p);
            continue;
        }
        if s.source.is_some() {
            // A stream doing its own operations gets an empty directory of its own.
            let path = dir.join(format!("{i:02}-{}", s.name));
            std::fs::create_dir(&path)
                .map_err(|e| StackError::io(format!("mkdir {}", path.display()), e))?;
            layout.placements.push(Placement {
                path,
                offset: 0,
                len,
            });
            continue;
        }
        layout.placements.push(Placement {
            path: dir.join(format!("{i:02}-{}.dat", s.name)),
            offset: 0,
            len,
        });
    }
    if plan.direct && !direct_works_in(&dir)? {
        layout.direct_ok = false;
        layout.warnings.push(format!(
            "{} refuses O_DIRECT; falling back to buffered I/O (access times include the page cache)",
            layout.fs_type
        ));
    }
    Ok(layout)
}

/// Each stream's region: its own size, or for those without one, an equal share of what `free`
/// bytes leave after the others (whole I/Os). 1% + 64 MiB of `free` is kept as headroom for the
/// filesystem's own metadata. Err(bytes needed) when they do not fit.
/// A stream doing its own operations takes its `region_len` (what it will write, 0 when it
/// does not say) and no share.
pub fn region_lengths(plan: &Plan, free: u64) -> Result<Vec<u64>, u64> {
    let own = |s: &&crate::engine::StreamPlan| s.io.share.is_none();
    let fixed: u64 = plan.streams.iter().filter(own).map(|s| s.region_len).sum();
    // Streams of block I/O (their own generator's or not) without a size share what is free.
    let block = |s: &crate::engine::StreamPlan| s.source.as_ref().is_none_or(|x| x.is_block());
    let shares =
        |s: &&crate::engine::StreamPlan| s.region_len == 0 && block(s) && s.io.share.is_none();
    let sharing = plan.streams.iter().filter(shares).count() as u64;
    let headroom = |n: u64| n / 100 + (64 << 20);
    if fixed + headroom(fixed) > free {
        return Err(fixed + headroom(fixed));
    }
    let share = free
        .saturating_sub(fixed + headroom(free))
        .checked_div(sharing)
        .unwrap_or(0);
    plan.streams
        .iter()
        .map(|s| match s.region_len {
            _ if s.io.share.is_some() => Ok(0),
            0 if !block(s) => Ok(0),
            0 if share < s.io_size => Err(fixed + headroom(free) + sharing * s.io_size),
            0 => Ok(share - share % s.io_size),
            n => Ok(n),
        })
        .collect()
}

/// Whether O_DIRECT reads work in `dir`, tried on a 4 KiB file made there and removed.
fn direct_works_in(dir: &Path) -> Result<bool, StackError> {
    let probe = dir.join(".direct-probe");
    crate::engine::prepare::allocate(&probe, 4096)
        .map_err(|e| StackError::io(format!("create {}", probe.display()), e))?;
    let ok = direct_works(&probe);
    let _ = std::fs::remove_file(&probe);
    Ok(ok)
}

fn direct_works(path: &Path) -> bool {
    let Ok(f) = open_target(path, Op::Read, true) else {
        return false;
    };
    let mut b = AlignedBuf::new(4096);
    f.read_at(b.as_mut_slice(), 0).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cause::{Cause, HasCause};
    use crate::engine::{Pacing, Pattern, StreamPlan};

    fn plan(region: u64) -> Plan {
        let s = |name: &str, op| StreamPlan {
            name: name.into(),
            role: "x".into(),
            op,
            region_len: region,
            io_size: 4096,
            pattern: Pattern::Random,
            pacing: Pacing::Max,
            samples: 1,
            io: Default::default(),
            source: None,
        };
        let streams = vec![s("playback0", Op::Read), s("record0", Op::Write)];
        Plan::sampled("run", streams, true, 1)
    }

    #[test]
    fn places_shares_and_removes() {
        let tmp = tempfile::tempdir().unwrap();
        let made;
        {
            let mut p = plan(1 << 20);
            let mut shared = p.streams[1].clone();
            shared.io.share = Some(0);
            p.streams.push(shared);
            let l = create(tmp.path(), &p, &mut Ledger::detached()).unwrap();
            made = l.dir.clone();
            assert_eq!(l.placements.len(), 3);
            assert!(l.placements[0]
                .path
                .to_string_lossy()
                .contains("00-playback0"));
            assert_eq!(l.placements[2], l.placements[0], "the same place");
            assert!(
                !l.placements[0].path.exists(),
                "the prepare phase makes the files"
            );
        }
        assert!(!made.exists(), "layout removed on drop");
    }

    /// ext4 places a top-level directory by the hash of its name: the trial's directory is
    /// named alike in every process, and the next free name where another run holds one.
    #[test]
    fn the_trials_directory_is_named_alike_in_every_process() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let mut ledger = Ledger::detached();
        let la = create(a.path(), &plan(4096), &mut ledger).unwrap();
        assert_eq!(la.dir(), a.path().join("iotrial-0"));
        assert_eq!(
            ledger.resources(),
            [Resource::TempDir {
                path: la.dir().to_path_buf()
            }]
        );
        std::fs::create_dir(b.path().join("iotrial-0")).unwrap();
        let mut other = Ledger::detached();
        let lb = create(b.path(), &plan(4096), &mut other).unwrap();
        assert_eq!(
            lb.dir(),
            b.path().join("iotrial-1"),
            "iotrial-0 is another's"
        );
        assert_eq!(
            other.resources(),
            [Resource::TempDir {
                path: lb.dir().to_path_buf()
            }],
            "only its own directory is in its ledger"
        );
        drop(lb);
        assert!(b.path().join("iotrial-0").exists(), "another's is left");
    }

    #[test]
    fn streams_without_a_size_share_the_free_space() {
        let mut p = plan(1 << 20);
        p.streams[1].region_len = 0;
        let free = 1 << 30;
        let lens = region_lengths(&p, free).unwrap();
        let share = free - (1 << 20) - (free / 100 + (64 << 20));
        assert_eq!(lens, [1 << 20, share - share % 4096]);
        assert!(region_lengths(&p, 65 << 20).is_err());
        let mut shared = p.streams[0].clone();
        shared.io.share = Some(0);
        p.streams.push(shared);
        assert_eq!(
            region_lengths(&p, free).unwrap(),
            [1 << 20, share - share % 4096, 0]
        );
    }

    #[test]
    fn filesystem_type_comes_from_mountinfo() {
        assert_eq!(fs_type_of(Path::new("/proc/self")), "proc");
        assert_eq!(fs_type_of(Path::new("/no/such/path")), "unknown");
    }

    #[test]
    fn refuses_what_does_not_fit() {
        let tmp = tempfile::tempdir().unwrap();
        let e = create(tmp.path(), &plan(1 << 60), &mut Ledger::detached()).unwrap_err();
        assert!(e.to_string().contains("region_size"), "{e}");
        assert_eq!(
            std::fs::read_dir(tmp.path()).unwrap().count(),
            0,
            "nothing left on disk"
        );
        let e = create(
            &tmp.path().join("nope"),
            &plan(4096),
            &mut Ledger::detached(),
        )
        .unwrap_err();
        assert!(
            e.why() == Cause::Input && e.to_string().contains("does not exist"),
            "{e}"
        );
    }
}
