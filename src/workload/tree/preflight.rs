//! Before the first phase: does the filesystem have the inodes the tree will take? Each
//! directory and file is an inode; ext4 fixes its inode count at mkfs time (one per 16 KiB by
//! default), so a small filesystem runs out long before its space does. Failing here, with
//! the numbers and the mkfs option that fixes it, beats failing an hour into the create phase.

use crate::params::{ParamError, Params};
use std::path::Path;

/// Inodes the workload makes at most at once: the tree's directories and files, each
/// thread's own directory, and the file server's working set (plus one file per thread in
/// flight).
pub fn inodes_needed(p: &Params) -> u64 {
    let (dirs, threads) = (p.u64("dirs"), p.u64("threads"));
    let tree = dirs + dirs * p.u64("files_per_dir");
    let own = threads + p.u64("remove_threads") + threads;
    let fileserver = match p.f64("fileserver_duration") > 0.0 {
        true => p.u64("fileserver_files") + threads,
        false => 0,
    };
    tree + own + fileserver
}

/// Fails when the filesystem holding `dir` has fewer free inodes than the workload needs.
/// Filesystems that make inodes as they go (btrfs reports no inode count) pass.
pub fn check(p: &Params, dir: &Path) -> Result<(), ParamError> {
    let Ok(st) = rustix::fs::statvfs(dir) else {
        return Ok(());
    };
    let needed = inodes_needed(p);
    if st.f_files == 0 || st.f_favail >= needed {
        return Ok(());
    }
    // Room for the tree twice over: e2fsck, lost+found and a second run fit too.
    let suggest = (st.f_files - st.f_favail + needed) * 2;
    let bytes = st.f_blocks.saturating_mul(st.f_frsize);
    let per_inode = (bytes / suggest.max(1)).clamp(1024, 1 << 16);
    let per_inode = 1u64 << (63 - per_inode.leading_zeros());
    Err(ParamError::invalid(
        "dirs",
        format!(
            "the filesystem at {} has {} free inodes ({} in all); this tree needs {needed} ({} directories, {} files, {} of the threads' own); make it with more inodes: for ext4 mkfs `-N {suggest}` (`--mkfs \"-N {suggest}\"`; or `-i {per_inode}`, bytes per inode), for xfs `-i maxpct=50`",
            dir.display(),
            st.f_favail,
            st.f_files,
            p.u64("dirs"),
            p.u64("dirs") * p.u64("files_per_dir"),
            needed - p.u64("dirs") * (1 + p.u64("files_per_dir")),
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;

    fn params(sets: &[(&str, &str)]) -> Params {
        let o: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Params::resolve("tree", super::super::params::PARAMS, &o).unwrap()
    }

    #[test]
    fn the_count_covers_the_tree_its_files_and_the_threads() {
        assert_eq!(
            inodes_needed(&params(&[("dirs", "20000")])),
            20000 + 8 + 1 + 8
        );
        let p = params(&[
            ("dirs", "100"),
            ("threads", "2"),
            ("files_per_dir", "3"),
            ("fileserver_duration", "1s"),
            ("fileserver_files", "10"),
        ]);
        assert_eq!(inodes_needed(&p), 100 + 300 + 2 + 1 + 2 + 10 + 2);
    }

    #[test]
    fn a_filesystem_with_room_passes() {
        let d = tempfile::tempdir().unwrap();
        assert!(check(&params(&[("dirs", "100")]), d.path()).is_ok());
        let e = check(&params(&[("dirs", "999999999999")]), d.path());
        if let Err(e) = e {
            let text = e.to_string();
            assert!(
                text.contains("free inodes") && text.contains("-N "),
                "{text}"
            );
        }
    }
}
