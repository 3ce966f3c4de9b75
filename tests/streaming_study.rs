//! Seed 001's study: the built-in `streaming` study lists the seed's stacks in the seed's order,
//! the MD ones also in a guest, and shows the MD and ZFS commands it would run; a small study of the same shape runs for
//! real on emulated drives (root): the raw stack, btrfs RAID10, xfs with its log on an emulated
//! SSD, MD and ZFS stacks skipped with the kernel feature they lack named, and the other stacks'
//! raw fraction relative to the raw stack.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn the_built_in_study_has_the_seeds_stacks_in_its_order() {
    let work = tempfile::tempdir().unwrap();
    let (out, stacks) = dry_run_stacks(work.path(), "streaming");
    assert_eq!(
        stacks,
        [
            "raw",
            "btrfs-raid10",
            "zfs-mirrors-ssdlog",
            "zfs-mirrors",
            "xfs-md10-ssdlog",
            "xfs-md10-ssdlog-vm",
            "xfs-md10",
            "xfs-md10-vm",
            "md10-raw",
            "md10-raw-vm",
            "xfs-1drive",
            "xfs-1drive-ssdlog"
        ]
    );
    // The MD stacks run in a guest too, where this host's lack of MD does not matter.
    let guest = out
        .split("# stack ")
        .find(|s| s.starts_with("xfs-md10-vm "))
        .expect("the guest row");
    assert!(guest.contains("# in a guest"), "{guest}");
    assert!(!guest.contains("this host cannot build it"), "{guest}");
    assert!(guest.contains("--level=10 --raid-devices=6"), "{guest}");
    assert!(
        out.contains("--level=10 --raid-devices=6 --assume-clean"),
        "{out}"
    );
    assert!(out.contains("zfs set compression=off"), "{out}");
    assert!(out.contains("mkfs.btrfs -f -d raid10 -m raid10"), "{out}");
    // The seed's drives' twin, its preset values written out.
    assert!(out.contains("hdd,drive=sata2-2tb,size=8GiB,"), "{out}");
    assert!(out.contains(",outer_rate=115,inner_rate=60,"), "{out}");
    assert_eq!(
        std::fs::read_dir(work.path()).unwrap().count(),
        0,
        "nothing made"
    );
}

const STUDY: &str = r#"name = "small-streaming"
description = "seed 001's shape, small"
[devices]
drive = "emu:hdd,size=1GiB,outer_rate=115,inner_rate=60,scale=4"
ssd = "emu:ssd,size=256MiB,scale=4"
[[workloads]]
kind = "stream"
set = { writers = "4", bytes = "8MiB", io_size = "256KiB", interval = "50ms", settle_window = "100ms" }
[[stacks]]
name = "raw"
devices = ["drive", "drive", "drive", "drive"]
layout = "regions"
baseline = true
[[stacks]]
name = "btrfs-raid10"
devices = ["drive", "drive", "drive", "drive"]
fs = "btrfs"
mkfs = ["-d", "raid10", "-m", "raid10"]
[[stacks]]
name = "zfs-mirrors-ssdlog"
devices = ["drive", "drive", "drive", "drive"]
fs = "zfs"
zpool = "mirror"
logdev = "ssd"
[[stacks]]
name = "xfs-md10"
devices = ["drive", "drive", "drive", "drive"]
md = "raid10"
fs = "xfs"
[[stacks]]
name = "xfs-1drive-ssdlog"
devices = ["drive"]
fs = "xfs"
logdev = "ssd"
"#;

#[test]
fn a_small_streaming_study_skips_md_and_zfs_by_name_and_relates_to_raw() {
    if !ready_to_emulate(
        "a_small_streaming_study_skips_md_and_zfs_by_name_and_relates_to_raw",
        &["mkfs.btrfs", "mkfs.xfs", "losetup"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let study = files.path().join("small.toml");
    std::fs::write(&study, STUDY).unwrap();
    let out = files.path().join("out");
    let said = study_succeeds(work.path(), &study, &out);
    let root = only_entry(&out);
    let m = read_json(&root.join("manifest.json"));
    let status = |id: &str| {
        let t = m["trials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap();
        (
            t["status"].as_str().unwrap().to_string(),
            t["reason"].as_str().unwrap_or("").to_string(),
        )
    };
    for (stack, feature, here) in [
        (
            "zfs-mirrors-ssdlog",
            "ZFS",
            std::path::Path::new("/sys/module/zfs").exists(),
        ),
        (
            "xfs-md10",
            "MD RAID",
            std::path::Path::new("/proc/mdstat").exists(),
        ),
    ] {
        let (s, why) = status(&format!("{stack}/stream/r1"));
        if !here {
            assert_eq!(s, "skipped", "{stack}: {why}");
            assert!(why.contains(feature) && why.contains("kernel"), "{why}");
            assert!(
                said.contains(&format!("skipped {stack}: {feature}")),
                "{said}"
            );
        }
    }
    for stack in ["raw", "btrfs-raid10", "xfs-1drive-ssdlog"] {
        assert_eq!(status(&format!("{stack}/stream/r1")).0, "done", "{stack}");
    }
    let btrfs = read_json(&root.join("trials/btrfs-raid10/stream/r1/result.json"));
    assert_eq!(btrfs["stack"]["devices"].as_array().unwrap().len(), 4);
    let raw = read_json(&root.join("trials/raw/stream/r1/result.json"));
    // What the raw stack sustained: its settled level, or its total with the sync.
    let v = &raw["verdict"];
    let raw_level = v["settled_mb_s"]
        .as_f64()
        .or(v["total_mb_s"].as_f64())
        .unwrap();
    // A RAID10 of the raw stack's drives can use half of what they stream, or two drives'
    // worth of the best one when that is more, which no interval of the raw trial's diskstats
    // can be below.
    let peak = figures::peak_device_write_mb_s(&root.join("trials/raw/stream/r1"), &raw);
    let within = |x: &Value, share: f64, drives: f64| {
        let (got, total) = (x.as_f64().unwrap(), raw_level * share);
        got >= total * (1.0 - 1e-12) && got <= total.max(drives * peak) * (1.0 + 1e-12)
    };
    assert!(within(&btrfs["params"]["raw_mb_s"], 0.5, 2.0), "{btrfs}");
    assert!(btrfs["verdict"]["raw_fraction"].as_f64().is_some());
    let w = btrfs["warnings"].as_array().unwrap();
    assert!(
        w.iter()
            .any(|x| x.as_str().unwrap().contains("relative to stack raw")),
        "{w:?}"
    );
    let xfs = read_json(&root.join("trials/xfs-1drive-ssdlog/stream/r1/result.json"));
    assert!(within(&xfs["params"]["raw_mb_s"], 0.25, 1.0), "{xfs}");
    assert!(xfs["stack"]["mkfs"]["command"]
        .as_str()
        .unwrap()
        .contains("-l logdev="));
    assert!(xfs["stack"]["logdev"]["model"]
        .as_str()
        .unwrap()
        .contains("SSD"));
    assert!(
        raw["verdict"]["raw_fraction"].is_null(),
        "the raw stack is the reference"
    );
    assert_cleaned_up(work.path(), &[]);
}
