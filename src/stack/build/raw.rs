//! The raw layouts, I/O straight to block devices without a filesystem: `regions` (consecutive
//! offset ranges from 1 MiB, in stream order; over several devices, stream i on device i mod n)
//! and `partitions` (a GPT on one device with one partition per stream, in stream order). A
//! stream without a region size gets an equal share of what its device has left.

use crate::engine::{Placement, Plan};
use crate::stack::actions::Actions;
use crate::stack::{sys, LayoutKind, StackError};
use std::path::{Path, PathBuf};

const MIB: u64 = 1 << 20;

/// `x` rounded up to a whole MiB: how much of the device a region of `x` bytes takes.
pub fn round_mib(x: u64) -> u64 {
    x.div_ceil(MIB) * MIB
}

/// Places `plan`'s streams on the block devices `devs` with the raw layout `kind`; a stream
/// sharing an earlier stream's place gets the same region.
pub fn place(
    devs: &[PathBuf],
    plan: &Plan,
    kind: LayoutKind,
    actions: &mut Actions,
) -> Result<Vec<Placement>, StackError> {
    let owners: Vec<usize> = (0..plan.streams.len())
        .filter(|&i| plan.streams[i].io.share.is_none())
        .collect();
    let own = Plan {
        streams: owners.iter().map(|&i| plan.streams[i].clone()).collect(),
        ..plan.clone()
    };
    let placed = match kind {
        LayoutKind::Partitions => partitions(&devs[0], &own, actions)?,
        _ => regions(devs, &own, actions)?,
    };
    let mut out: Vec<Placement> = Vec::with_capacity(plan.streams.len());
    let mut next = placed.into_iter();
    for s in &plan.streams {
        let p = match s.io.share {
            Some(owner) => out.get(owner).cloned().ok_or_else(|| {
                StackError::Invalid(format!(
                    "stream {} shares the place of stream {owner}, which does not come before it",
                    s.name
                ))
            })?,
            None => next.next().expect("one place per owner"),
        };
        out.push(p);
    }
    Ok(out)
}

/// One stream's region: which device, where, how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub device: usize,
    pub offset: u64,
    pub len: u64,
}

/// Where `plan`'s streams go on devices of `sizes` bytes (`None`: unknown, a dry run): stream i
/// on device i mod n, each device's streams in order from 1 MiB, each region rounded up to whole
/// MiB; a stream without a size gets an equal share of what its device has left (whole MiB,
/// whole I/Os). Err((device, bytes needed)) when they do not fit.
pub fn region_plan(sizes: &[Option<u64>], plan: &Plan) -> Result<Vec<Region>, (usize, u64)> {
    let n = sizes.len();
    let mut out = Vec::with_capacity(plan.streams.len());
    let mut shares = vec![0; n];
    for (d, size) in sizes.iter().enumerate() {
        let mine = plan.streams.iter().skip(d).step_by(n);
        let fixed: u64 = mine.clone().map(|s| round_mib(s.region_len)).sum();
        let sharing = mine.filter(|s| s.region_len == 0).count() as u64;
        let needed = MIB + fixed + sharing * MIB;
        match size {
            Some(size) if needed > *size => return Err((d, needed)),
            _ => {}
        }
        let left = size.map_or(0, |s| s - MIB - fixed);
        shares[d] = left.checked_div(sharing).unwrap_or(0) / MIB * MIB;
    }
    let mut offsets = vec![MIB; n];
    for (i, s) in plan.streams.iter().enumerate() {
        let d = i % n;
        let len = match s.region_len {
            0 => shares[d] - shares[d] % s.io_size.max(1),
            n => n,
        };
        out.push(Region {
            device: d,
            offset: offsets[d],
            len,
        });
        offsets[d] += round_mib(len.max(1));
    }
    Ok(out)
}

/// The sizes of `devs`, unknown in a dry run.
fn sizes(devs: &[PathBuf], dry: bool) -> Vec<Option<u64>> {
    devs.iter()
        .map(|d| {
            if dry {
                None
            } else {
                Some(device_size(d).unwrap_or(0))
            }
        })
        .collect()
}

/// Consecutive regions of `devs` in stream order, from offset 1 MiB.
fn regions(
    devs: &[PathBuf],
    plan: &Plan,
    actions: &mut Actions,
) -> Result<Vec<Placement>, StackError> {
    let sizes = sizes(devs, actions.dry_run);
    let regions = region_plan(&sizes, plan).map_err(|(d, needed)| StackError::NoSpace {
        path: devs[d].display().to_string(),
        needed,
        free: sizes[d].unwrap_or(0),
    })?;
    let names: Vec<String> = devs.iter().map(|d| d.display().to_string()).collect();
    actions.note(format!(
        "regions of {} in stream order from offset 1MiB{}",
        names.join(", "),
        if devs.len() > 1 {
            " (stream i on device i mod n)"
        } else {
            ""
        }
    ));
    Ok(regions
        .into_iter()
        .map(|r| Placement {
            path: devs[r.device].clone(),
            offset: r.offset,
            len: r.len,
        })
        .collect())
}

/// A GPT on `dev` with one partition per stream, in stream order.
fn partitions(
    dev: &Path,
    plan: &Plan,
    actions: &mut Actions,
) -> Result<Vec<Placement>, StackError> {
    // Room for the GPT at both ends: 1 MiB at the start, 1 MiB kept at the end.
    let size = sizes(&[dev.to_path_buf()], actions.dry_run)[0].map(|s| s.saturating_sub(MIB));
    let regions = region_plan(&[size], plan).map_err(|(_, needed)| StackError::NoSpace {
        path: dev.display().to_string(),
        needed: needed + MIB,
        free: size.unwrap_or(0) + MIB,
    })?;
    let mut script = String::from("label: gpt\n");
    for (s, r) in plan.streams.iter().zip(&regions) {
        script.push_str(&format!(
            "size={}, name={}\n",
            round_mib(r.len) / 512,
            s.name
        ));
    }
    let disk = dev.display().to_string();
    actions.run_with_input(
        "sfdisk",
        &sys::args(&["--quiet", "--wipe", "always", &disk]),
        &script,
    )?;
    let parts: Vec<PathBuf> = (1..=plan.streams.len())
        .map(|i| partition_path(dev, i))
        .collect();
    if !actions.dry_run {
        wait_for_partitions(dev, &parts, actions)?;
    }
    Ok(parts
        .into_iter()
        .zip(&regions)
        .map(|(path, r)| Placement {
            path,
            offset: 0,
            len: r.len,
        })
        .collect())
}

/// Waits for the partitions sfdisk made to appear. Some kernels ignore the re-read sfdisk asks
/// for on loop devices; then they are added one by one (BLKPG) instead.
fn wait_for_partitions(
    dev: &Path,
    parts: &[PathBuf],
    actions: &mut Actions,
) -> Result<(), StackError> {
    if wait_for(parts, 1) {
        return Ok(());
    }
    actions.run(
        "partx",
        &sys::args(&["--update", &dev.display().to_string()]),
    )?;
    if !wait_for(parts, 10) {
        return Err(StackError::Command(format!(
            "partitions of {} did not appear",
            dev.display()
        )));
    }
    Ok(())
}

/// Waits up to `secs` seconds for every path to exist.
fn wait_for(paths: &[PathBuf], secs: u64) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !paths.iter().all(|p| p.exists()) {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    true
}

/// The path of partition `n` (1-based) of `disk_path`.
pub fn partition_path(disk_path: &Path, n: usize) -> PathBuf {
    let s = disk_path.display().to_string();
    if s.ends_with(|c: char| c.is_ascii_digit()) {
        PathBuf::from(format!("{s}p{n}"))
    } else {
        PathBuf::from(format!("{s}{n}"))
    }
}

/// Size in bytes of the block device at `path`, from sysfs.
pub fn device_size(path: &Path) -> Option<u64> {
    let name = path
        .canonicalize()
        .ok()?
        .file_name()?
        .to_string_lossy()
        .into_owned();
    sys::read_sysfs(Path::new(&format!("/sys/class/block/{name}/size")))?
        .parse::<u64>()
        .ok()
        .map(|s| s * 512)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::engine::{Op, Pacing, Pattern, StreamPlan};

    fn plan(lens: &[u64]) -> Plan {
        let streams = lens
            .iter()
            .enumerate()
            .map(|(i, &len)| StreamPlan {
                name: format!("w{i}"),
                role: "w".into(),
                op: Op::Write,
                region_len: len,
                io_size: MIB,
                pattern: Pattern::Append,
                pacing: Pacing::Max,
                samples: 0,
                io: Default::default(),
                source: None,
            })
            .collect();
        Plan::sampled("run", streams, false, 1)
    }

    #[test]
    fn regions_spread_over_devices_and_share_what_is_left() {
        let gib = 1u64 << 30;
        let sizes = [Some(gib), Some(gib), Some(gib)];
        let r = region_plan(&sizes, &plan(&[0, 0, 0, 0, 4 * MIB])).unwrap();
        let at: Vec<(usize, u64, u64)> = r.iter().map(|r| (r.device, r.offset, r.len)).collect();
        let half = (gib - MIB) / 2 / MIB * MIB;
        assert_eq!(
            at,
            [
                (0, MIB, half),
                (1, MIB, gib - 5 * MIB),
                (2, MIB, gib - MIB),
                (0, MIB + half, half),
                (1, gib - 4 * MIB, 4 * MIB),
            ]
        );
        let one = region_plan(&[Some(gib)], &plan(&[3 * MIB / 2, MIB])).unwrap();
        assert_eq!(
            (one[1].offset, one[1].len),
            (3 * MIB, MIB),
            "regions start on whole MiB"
        );
        assert_eq!(
            region_plan(&[Some(4 * MIB)], &plan(&[8 * MIB])),
            Err((0, 9 * MIB))
        );
        assert_eq!(
            region_plan(&[None], &plan(&[0])).unwrap()[0].len,
            0,
            "unknown in a dry run"
        );
    }

    #[test]
    fn partition_names() {
        assert_eq!(
            partition_path(Path::new("/dev/loop3"), 2),
            PathBuf::from("/dev/loop3p2")
        );
        assert_eq!(
            partition_path(Path::new("/dev/sdb"), 10),
            PathBuf::from("/dev/sdb10")
        );
        assert_eq!(
            partition_path(Path::new("/dev/nvme0n1"), 1),
            PathBuf::from("/dev/nvme0n1p1")
        );
    }
}
