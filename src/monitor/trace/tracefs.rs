//! The block trace's own tracefs instance: tracefs is used where it is mounted, else mounted
//! on a private directory; the instance (its own ring buffer, clock and events, so other
//! users of tracefs are not disturbed) records `block_rq_issue` and `block_rq_complete` of
//! the traced disks only, on the CLOCK_MONOTONIC clock. The mount and the instance go into
//! the ledger before they are made, so they are released whatever ends the run.

use crate::mountinfo;
use crate::stack::ledger::Ledger;
use crate::stack::release::resource::Resource;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Ring buffer per CPU, kB: room for about 50,000 events while the reader catches up.
const BUFFER_KB: u32 = 4096;
/// The events traced.
pub const EVENTS: [&str; 2] = ["block_rq_issue", "block_rq_complete"];

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// A tracefs instance of this run.
pub struct Instance {
    pub dir: PathBuf,
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("write '{value}' to {}: {e}", path.display()))
}

fn ledger_err(e: std::io::Error) -> String {
    format!("write the ledger: {e}")
}

/// Prefix of the private mount points of tracefs.
const PRIVATE: &str = "iotrial-tracefs-";

/// Where tracefs is mounted, mounting it on a private directory (in the ledger) when it is
/// nowhere. Another run's private mount is never used: that run unmounts it when it ends.
fn root(ledger: &mut Ledger) -> Result<PathBuf, String> {
    let private = |p: &Path| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(PRIVATE))
    };
    let mounted = mountinfo::read()
        .into_iter()
        .find(|m| m.fs_type == "tracefs" && !private(&m.mount_point));
    if let Some(m) = mounted {
        return Ok(m.mount_point);
    }
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let mp = std::env::temp_dir().join(format!("{PRIVATE}{}-{n}", std::process::id()));
    ledger
        .record(Resource::TempDir { path: mp.clone() })
        .map_err(ledger_err)?;
    std::fs::create_dir_all(&mp).map_err(|e| format!("create {}: {e}", mp.display()))?;
    ledger
        .record(Resource::Mount { target: mp.clone() })
        .map_err(ledger_err)?;
    rustix::mount::mount(
        "nodev",
        &mp,
        "tracefs",
        rustix::mount::MountFlags::empty(),
        None,
    )
    .map_err(|e| format!("mount tracefs on {}: {e}", mp.display()))?;
    Ok(mp)
}

/// The `dev` value of a block device in trace event filters (the kernel's dev_t:
/// major << 20 | minor), from /sys/class/block/<name>/dev.
pub fn trace_dev(name: &str) -> Result<u64, String> {
    let path = format!("/sys/class/block/{name}/dev");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let (ma, mi) = text
        .trim()
        .split_once(':')
        .ok_or_else(|| format!("{path}: not major:minor"))?;
    let num = |s: &str| s.parse::<u64>().map_err(|e| format!("{path}: {e}"));
    Ok(num(ma)? << 20 | num(mi)?)
}

impl Instance {
    /// A fresh instance tracing the disks whose trace `devs` are given.
    pub fn create(ledger: &mut Ledger, devs: &[u64]) -> Result<Instance, String> {
        let root = root(ledger)?;
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = root
            .join("instances")
            .join(format!("iotrial-{}-{n}", std::process::id()));
        ledger
            .record(Resource::TraceInstance { path: dir.clone() })
            .map_err(ledger_err)?;
        std::fs::create_dir(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
        let inst = Instance { dir };
        inst.configure(devs)?;
        Ok(inst)
    }

    fn configure(&self, devs: &[u64]) -> Result<(), String> {
        let d = &self.dir;
        write(&d.join("tracing_on"), "0")?;
        write(&d.join("trace_clock"), "mono")?;
        write(&d.join("buffer_size_kb"), &BUFFER_KB.to_string())?;
        let filter: Vec<String> = devs.iter().map(|v| format!("dev == {v}")).collect();
        for e in EVENTS {
            let ev = d.join("events/block").join(e);
            write(&ev.join("filter"), &filter.join(" || "))?;
            write(&ev.join("enable"), "1")?;
        }
        write(&d.join("tracing_on"), "1")
    }

    /// Every CPU's binary ring buffer (`per_cpu/cpuN/trace_pipe_raw`), opened for reads
    /// that do not block, and the size of the pages they hand out.
    pub fn cpu_pipes(&self) -> Result<(Vec<std::fs::File>, usize), String> {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = self.dir.join("per_cpu");
        let mut pipes = Vec::new();
        for e in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let path = e.map_err(|e| e.to_string())?.path().join("trace_pipe_raw");
            let f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
                .open(&path)
                .map_err(|e| format!("open {}: {e}", path.display()))?;
            pipes.push(f);
        }
        Ok((pipes, self.page_size()))
    }

    /// The size of the pages the ring buffers hand out: the sub-buffer size where the kernel
    /// lets it grow, else the page header's size and its data's (`events/header_page`).
    fn page_size(&self) -> usize {
        let kb = std::fs::read_to_string(self.dir.join("buffer_subbuf_size_kb"))
            .ok()
            .and_then(|t| t.trim().parse::<usize>().ok());
        if let Some(kb) = kb {
            return kb * 1024;
        }
        let header =
            std::fs::read_to_string(self.dir.join("events/header_page")).unwrap_or_default();
        let data = header.lines().find(|l| l.contains(" data;")).and_then(|l| {
            let num = |key: &str| -> Option<usize> {
                let at = l.find(key)? + key.len();
                l[at..].split(';').next()?.trim().parse().ok()
            };
            Some(num("offset:")? + num("size:")?)
        });
        data.unwrap_or(4096)
    }

    /// Stops recording (what is in the buffer can still be read).
    pub fn off(&self) {
        let _ = std::fs::write(self.dir.join("tracing_on"), "0");
    }

    /// Events the ring buffer lost: overruns and dropped events, over every CPU.
    pub fn lost_events(&self) -> u64 {
        let cpus = std::fs::read_dir(self.dir.join("per_cpu"));
        cpus.into_iter()
            .flatten()
            .flatten()
            .filter_map(|c| std::fs::read_to_string(c.path().join("stats")).ok())
            .flat_map(|t| {
                t.lines()
                    .filter_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        matches!(k.trim(), "overrun" | "dropped events")
                            .then(|| v.trim().parse::<u64>().ok())?
                    })
                    .collect::<Vec<_>>()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_devs_are_the_kernels_dev_t() {
        let name = std::fs::read_dir("/sys/class/block")
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned());
        let Some(name) = name else { return };
        let text = std::fs::read_to_string(format!("/sys/class/block/{name}/dev")).unwrap();
        let (ma, mi) = text.trim().split_once(':').unwrap();
        let v = trace_dev(&name).unwrap();
        assert_eq!(
            (v >> 20, v & 0xfffff),
            (ma.parse().unwrap(), mi.parse().unwrap())
        );
        assert!(trace_dev("no-such-disk").is_err());
    }
}
