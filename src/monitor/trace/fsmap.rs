//! Where a filesystem keeps its journal and its fixed metadata, as its own tools report it,
//! for the block trace's classes: ext2/3/4 through `dumpe2fs` (journal inode or device, group
//! descriptors, bitmaps, inode tables) and `debugfs` (the journal inode's blocks); xfs
//! through `xfs_db` (the internal log, allocation group headers); an external log device is
//! journal as a whole. Filesystems without a journal of their own (btrfs) have none: their
//! metadata is told by the REQ_META flag of each request.

use crate::stack::sys;

/// A run of sectors `[start, end)` on the device named `device`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Area {
    pub device: String,
    pub start: u64,
    pub end: u64,
}

/// A filesystem's journal and metadata areas.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsMap {
    /// Sorted by device and start.
    pub journal: Vec<Area>,
    pub metadata: Vec<Area>,
    /// The command that located the journal.
    pub journal_source: Option<String>,
}

impl FsMap {
    /// Whether `[sector, sector + sectors)` on `device` starts in the journal.
    pub fn in_journal(&self, device: &str, sector: u64) -> bool {
        contains(&self.journal, device, sector)
    }

    /// Whether the request starts in a metadata area.
    pub fn in_metadata(&self, device: &str, sector: u64) -> bool {
        contains(&self.metadata, device, sector)
    }
}

fn contains(areas: &[Area], device: &str, sector: u64) -> bool {
    let i = areas.partition_point(|a| (a.device.as_str(), a.start) <= (device, sector));
    i > 0 && {
        let a = &areas[i - 1];
        a.device == device && sector < a.end
    }
}

/// Sorts areas and merges those that touch.
fn merged(mut areas: Vec<Area>) -> Vec<Area> {
    areas.sort_by(|a, b| (&a.device, a.start).cmp(&(&b.device, b.start)));
    let mut out: Vec<Area> = Vec::new();
    for a in areas {
        match out.last_mut() {
            Some(l) if l.device == a.device && a.start <= l.end => l.end = l.end.max(a.end),
            _ => out.push(a),
        }
    }
    out
}

/// Runs of consecutive block numbers of `text`, as sector areas of `device`.
fn block_runs(text: &str, device: &str, sectors_per_block: u64) -> Vec<Area> {
    let blocks = text
        .split_whitespace()
        .filter_map(|w| w.parse::<u64>().ok());
    let areas = blocks.map(|b| Area {
        device: device.to_string(),
        start: b * sectors_per_block,
        end: (b + 1) * sectors_per_block,
    });
    merged(areas.collect())
}

/// The value after `key` (`Block size:   4096`) in a `dumpe2fs -h` text.
fn header_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .map(str::trim)
}

/// A block range `12`, `12-40` at the start of `s`, as (first, last).
fn range(s: &str) -> Option<(u64, u64)> {
    let word = s.split([' ', ',']).next()?;
    match word.split_once('-') {
        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
        None => word.parse().ok().map(|a| (a, a)),
    }
}

/// The fixed metadata of an ext2/3/4 group listing (`dumpe2fs` without `-h`).
fn ext_metadata(text: &str, device: &str, spb: u64) -> Vec<Area> {
    let keys = [
        "superblock at ",
        "Group descriptors at ",
        "Reserved GDT blocks at ",
        "Block bitmap at ",
        "Inode bitmap at ",
        "Inode table at ",
    ];
    let mut areas = Vec::new();
    for line in text.lines() {
        for k in keys {
            for (i, _) in line.match_indices(k) {
                if let Some((a, b)) = range(&line[i + k.len()..]) {
                    areas.push(Area {
                        device: device.to_string(),
                        start: a * spb,
                        end: (b + 1) * spb,
                    });
                }
            }
        }
    }
    merged(areas)
}

fn run(program: &str, args: &[&str]) -> Result<String, String> {
    sys::run(program, &sys::args(args))
}

/// ext2/3/4 on `dev` (kernel name `name`); `log` is the external journal device's name.
fn ext(dev: &str, name: &str, log: Option<&str>) -> Result<FsMap, String> {
    let head = run("dumpe2fs", &["-h", dev])?;
    let bs: u64 = header_value(&head, "Block size:")
        .and_then(|v| v.parse().ok())
        .ok_or("dumpe2fs -h names no block size")?;
    let spb = bs / 512;
    let groups = run("dumpe2fs", &[dev])?;
    let mut map = FsMap {
        metadata: ext_metadata(&groups, name, spb),
        ..Default::default()
    };
    if let Some(inode) = header_value(&head, "Journal inode:") {
        let request = format!("blocks <{inode}>");
        let blocks = run("debugfs", &["-R", &request, dev])?;
        map.journal = block_runs(&blocks, name, spb);
        map.journal_source = Some(sys::display_command(
            "debugfs",
            &sys::args(&["-R", &request, dev]),
        ));
    } else if let (Some(_), Some(log)) = (header_value(&head, "Journal device:"), log) {
        map.journal_source = Some(format!("dumpe2fs -h {dev}: external journal device"));
        map.journal = whole(log);
    }
    Ok(map)
}

/// The whole device `name` as one area.
fn whole(name: &str) -> Vec<Area> {
    vec![Area {
        device: name.to_string(),
        start: 0,
        end: u64::MAX,
    }]
}

/// `name = value` lines of `xfs_db -c print`.
fn xfs_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(" = ")?;
        (k.trim() == key).then(|| v.trim().parse().ok())?
    })
}

/// xfs on `dev` (kernel name `name`); `log` is the external log device's name.
fn xfs(dev: &str, name: &str, log: Option<&str>) -> Result<FsMap, String> {
    let fields = "blocksize agblocks agblklog agcount logstart logblocks sectsize";
    let print = format!("print {fields}");
    let args = ["-r", "-c", "sb 0", "-c", &print, dev];
    let text = run("xfs_db", &args)?;
    let v = |k: &str| xfs_value(&text, k).ok_or_else(|| format!("xfs_db printed no {k}"));
    let (bs, agblocks, agblklog, agcount) = (
        v("blocksize")?,
        v("agblocks")?,
        v("agblklog")?,
        v("agcount")?,
    );
    let spb = bs / 512;
    let header = 4 * v("sectsize")? / 512;
    let metadata = (0..agcount)
        .map(|ag| Area {
            device: name.to_string(),
            start: ag * agblocks * spb,
            end: ag * agblocks * spb + header,
        })
        .collect();
    let logstart = v("logstart")?;
    let journal = match (logstart, log) {
        (0, Some(log)) => whole(log),
        (0, None) => Vec::new(),
        (s, _) => {
            let block = (s >> agblklog) * agblocks + (s & ((1 << agblklog) - 1));
            vec![Area {
                device: name.to_string(),
                start: block * spb,
                end: (block + v("logblocks")?) * spb,
            }]
        }
    };
    Ok(FsMap {
        journal,
        metadata: merged(metadata),
        journal_source: Some(sys::display_command("xfs_db", &sys::args(&args))),
    })
}

/// The journal and metadata of filesystem `fs` made on the device at `dev` (kernel name
/// `name`), with its external log device named `log`. Filesystems the tools cannot map have
/// an empty map (metadata then comes from REQ_META alone).
pub fn read(fs: &str, dev: &str, name: &str, log: Option<&str>) -> Result<FsMap, String> {
    match fs {
        "ext2" | "ext3" | "ext4" => ext(dev, name, log),
        "xfs" => xfs(dev, name, log),
        _ => Ok(FsMap::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROUPS: &str = "Group 0: (Blocks 0-32767) csum 0xea03
  Primary superblock at 0, Group descriptors at 1-1
  Reserved GDT blocks at 2-64
  Block bitmap at 65 (+65), csum 0x2017f43c
  Inode bitmap at 69 (+69), csum 0xde6d01cf
  Inode table at 73-584 (+73)
  Free blocks: 2127-32767
Group 1: (Blocks 32768-65535) csum 0xfc39 [INODE_UNINIT, BLOCK_UNINIT]
  Backup superblock at 32768, Group descriptors at 32769-32769
  Block bitmap at 66 (bg #0 + 66), csum 0x00000000
";

    #[test]
    fn ext_groups_give_metadata_areas() {
        let m = ext_metadata(GROUPS, "loop3", 8);
        let spans: Vec<(u64, u64)> = m.iter().map(|a| (a.start, a.end)).collect();
        // Blocks 0-66 touch (superblock, descriptors, reserved GDT, both block bitmaps), then
        // the inode bitmap 69, the inode table 73-584, the backup at 32768-32769.
        assert_eq!(
            spans,
            [
                (0, 67 * 8),
                (69 * 8, 70 * 8),
                (73 * 8, 585 * 8),
                (32768 * 8, 32770 * 8)
            ]
        );
        let map = FsMap {
            metadata: m,
            journal: block_runs("debugfs 1.47\n100 101 102 200\n", "loop3", 8),
            journal_source: None,
        };
        assert_eq!(map.journal.len(), 2);
        assert!(map.in_journal("loop3", 800) && map.in_journal("loop3", 823));
        assert!(!map.in_journal("loop3", 824) && !map.in_journal("loop4", 800));
        assert!(map.in_metadata("loop3", 73 * 8) && !map.in_metadata("loop3", 585 * 8));
    }

    #[test]
    fn xfs_values_are_read() {
        let t = "blocksize = 4096\nagblocks = 32768\nlogstart = 65542\n";
        assert_eq!(xfs_value(t, "logstart"), Some(65542));
        assert_eq!(xfs_value(t, "agcount"), None);
        assert_eq!(range("73-584 (+73)"), Some((73, 584)));
        assert_eq!(range("0, Group"), Some((0, 0)));
        assert!(contains(&whole("loop9"), "loop9", 1 << 40));
    }
}
