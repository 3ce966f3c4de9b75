//! The build steps after the devices are attached: the volume over them (an MD array), the
//! filesystem made and mounted (or a ZFS pool), the streams' regions laid out (one file per
//! stream on it, or raw regions and partitions), and the dirty-data cap of buffered plans.

use super::attach::Devs;
use super::files::FileLayout;
use super::provision::Builder;
use super::{dirty, files, raw, volume};
use crate::engine::Placement;
use crate::stack::fs;
use crate::stack::{LayoutKind, StackError};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

/// The streams' regions, laid out.
pub(super) struct Laid {
    pub(super) placements: Vec<Placement>,
    pub(super) files: Option<FileLayout>,
    pub(super) mounted: Option<fs::Mounted>,
    pub(super) direct_ok: bool,
}

impl Builder<'_> {
    /// What the layout goes on: the MD array made of the data devices, or the devices.
    pub(super) fn volume(
        &mut self,
        devs: &Devs,
        as_built: &mut Json,
    ) -> Result<Vec<PathBuf>, StackError> {
        let data: Vec<PathBuf> = devs.data.iter().map(|d| d.path.clone()).collect();
        let Some(md) = self.spec.md_spec()? else {
            return Ok(data);
        };
        let (array, built) = volume::md_array(&md, &data, self.ledger, self.actions)?;
        as_built["md"] = built;
        Ok(vec![array])
    }

    /// The stack's filesystem made and mounted on `data` (with `log`): mkfs and mount, or a
    /// ZFS pool.
    pub(super) fn make_filesystem(
        &mut self,
        data: &[PathBuf],
        log: Option<&Path>,
        work: &Path,
        as_built: &mut Json,
    ) -> Result<fs::Mounted, StackError> {
        let spec = self.spec;
        // The stack's checks make sure a files layout on block devices names its filesystem.
        let fs_name = spec.fs.as_deref().unwrap_or_default();
        as_built["fs"] = json!(fs_name);
        if fs_name == "zfs" {
            let layout = spec.zpool_layout();
            let (mounted, built) = volume::zfs_pool(
                layout,
                data,
                log,
                &spec.mkfs,
                work,
                self.ledger,
                self.actions,
            )?;
            as_built["zpool"] = built;
            return Ok(mounted);
        }
        as_built["mkfs"] = fs::mkfs(fs_name, &spec.mkfs, data, log, self.plan.seed, self.actions)?;
        fs::mount(
            fs_name,
            &data[0],
            &spec.mount,
            log,
            work,
            self.ledger,
            self.actions,
        )
    }

    /// The `files` layout: the filesystem made and mounted, one file per stream in it.
    pub(super) fn files_layout(
        &mut self,
        data: &[PathBuf],
        log: Option<&Path>,
        work: &Path,
        as_built: &mut Json,
    ) -> Result<Laid, StackError> {
        let spec = self.spec;
        let mounted = self.make_filesystem(data, log, work, as_built)?;
        let mp = mounted.mountpoint.clone();
        let mut m = fs::applied_options(&mp);
        if m.is_object() {
            m["requested"] = json!(spec.mount);
        }
        as_built["mount"] = m;
        self.actions.note(format!(
            "a place per stream in {} (the plan's prepare phase makes the files: allocated, empty for appending streams, filled for reading ones)",
            mp.display()
        ));
        if self.actions.dry_run {
            return Ok(Laid {
                placements: vec![],
                files: None,
                mounted: Some(mounted),
                direct_ok: self.plan.direct,
            });
        }
        let layout = files::create(&mp, self.plan, self.ledger)?;
        Ok(Laid {
            placements: layout.placements.clone(),
            direct_ok: layout.direct_ok,
            files: Some(layout),
            mounted: Some(mounted),
        })
    }

    /// Caps the dirty page cache of the stack's writeback devices at the plan's limit (buffered
    /// plans with one).
    pub(super) fn limit_dirty(
        &mut self,
        laid: &Laid,
        volume: &[PathBuf],
        as_built: &mut Json,
        warnings: &mut Vec<String>,
    ) -> Result<(), StackError> {
        let Some(bytes) = self.plan.dirty_limit.filter(|_| !laid.direct_ok) else {
            return Ok(());
        };
        let stack = dirty::Stack {
            zfs: self.spec.fs.as_deref() == Some("zfs"),
            mounted: laid.mounted.as_ref(),
            volume,
        };
        if let Some(done) = dirty::cap(&stack, bytes, self.ledger, self.actions, warnings)? {
            as_built["dirty_limit"] = done;
        }
        Ok(())
    }

    /// A raw layout on `devs` (read streams' regions are filled by the plan's `prepare`
    /// phase).
    pub(super) fn raw_layout(
        &mut self,
        devs: &[PathBuf],
        kind: LayoutKind,
    ) -> Result<Laid, StackError> {
        let placements = raw::place(devs, self.plan, kind, self.actions)?;
        Ok(Laid {
            placements,
            files: None,
            mounted: None,
            direct_ok: self.plan.direct,
        })
    }
}
