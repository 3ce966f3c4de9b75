//! Tests of stack building that need no device: MD arrays and ZFS pools in a dry run (the
//! commands and the ledger's order), and a host without their kernel support.

use super::*;
use crate::cause::{Cause, HasCause};
use crate::engine::{Op, Pacing, Pattern, StreamPlan};
use crate::stack::release::resource::Resource;

fn plan() -> Plan {
    let s = StreamPlan {
        name: "writer0".into(),
        role: "writer".into(),
        op: Op::Write,
        region_len: 0,
        io_size: 1 << 20,
        pattern: Pattern::Append,
        pacing: Pacing::Max,
        samples: 0,
        io: Default::default(),
        source: None,
    };
    Plan::sampled("stream", vec![s], false, 1)
}

fn six_drives(fs: &str) -> StackSpec {
    StackSpec {
        name: "s".into(),
        devices: vec!["emu:hdd,size=1GiB".into(); 6],
        fs: Some(fs.into()),
        logdev: Some("emu:ssd,size=1GiB".into()),
        ..Default::default()
    }
}

/// Builds `spec` in a dry run: the commands it would run and the ledger it would keep.
fn dry(spec: &StackSpec) -> (Vec<String>, Vec<Resource>) {
    let devices: Vec<DeviceSpec> = spec
        .devices
        .iter()
        .map(|d| DeviceSpec::parse(d).unwrap())
        .collect();
    let mut actions = Actions::new(true);
    let mut ledger = Ledger::detached();
    let opts = BuildOptions {
        dry_run: true,
        ..Default::default()
    };
    let stop = AtomicBool::new(false);
    build(
        spec,
        &devices,
        &plan(),
        &opts,
        &mut ledger,
        &mut actions,
        &stop,
    )
    .unwrap();
    (actions.log, ledger.resources().to_vec())
}

fn position(ledger: &[Resource], f: impl Fn(&Resource) -> bool) -> usize {
    ledger.iter().position(f).expect("in the ledger")
}

/// Whether `r` is the filesystem's mount (not the tmpfs holding emulated devices' images).
fn fs_mount(r: &Resource) -> bool {
    matches!(r, Resource::Mount { target } if target.ends_with("mnt"))
}

#[test]
fn an_md_array_is_made_of_the_drives_and_stopped_after_the_unmount() {
    if let Err(e) = fs::mkfs_program("xfs") {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
        assert!(!ci, "{e}, and CI is set");
        eprintln!("skipped an_md_array_is_made_of_the_drives_and_stopped_after_the_unmount: {e}");
        return;
    }
    let spec = StackSpec {
        md: Some("raid10".into()),
        ..six_drives("xfs")
    };
    let (log, ledger) = dry(&spec);
    let text = log.join("\n");
    assert!(
        text.contains(" --level=10 --raid-devices=6 --assume-clean /dev/loopN0 "),
        "{text}"
    );
    assert!(
        text.contains("mkfs.xfs -f -l logdev=/dev/loopN6 /dev/md"),
        "{text}"
    );
    let array = position(&ledger, |r| matches!(r, Resource::MdArray { .. }));
    let mount = position(&ledger, fs_mount);
    let drive = position(&ledger, |r| matches!(r, Resource::Loop { .. }));
    assert!(
        drive < array && array < mount,
        "released in reverse: {ledger:?}"
    );
    // Seven 1 GiB images fit in memory unless other runs' image tmpfs (tests running beside
    // this one) have taken the room: then they go on disk and the log says why. In memory,
    // their tmpfs is recorded before the devices on it, so it is unmounted after they are
    // released.
    let images = ledger
        .iter()
        .position(|r| matches!(r, Resource::Mount { target } if target.ends_with("images")));
    match images {
        Some(images) => {
            assert!(images < drive, "{ledger:?}");
            assert!(
                text.contains("mount -t tmpfs -o size=7517241344,mode=0700"),
                "{text}"
            );
        }
        None => assert!(!text.contains("mount -t tmpfs"), "{text}"),
    }
}

#[test]
fn a_zfs_pool_of_mirror_pairs_takes_the_ssd_as_its_log() {
    let spec = StackSpec {
        zpool: Some("mirror".into()),
        ..six_drives("zfs")
    };
    let (log, ledger) = dry(&spec);
    let text = log.join("\n");
    assert!(
        text.contains(" mirror /dev/loopN0 /dev/loopN1 mirror /dev/loopN2 /dev/loopN3 mirror /dev/loopN4 /dev/loopN5 log /dev/loopN6"),
        "{text}"
    );
    assert!(text.contains("zfs set compression=off iotrial"), "{text}");
    let pool = position(&ledger, |r| matches!(r, Resource::ZfsPool { .. }));
    let mount = position(&ledger, fs_mount);
    assert!(
        pool < mount,
        "unmounted before the pool is destroyed: {ledger:?}"
    );
}

#[test]
fn without_the_kernel_feature_nothing_is_made_and_the_feature_is_named() {
    let (md, zfs) = (md::available(), zfs::available());
    for (spec, got, feature) in [
        (
            StackSpec {
                md: Some("raid10".into()),
                ..six_drives("xfs")
            },
            md,
            "MD RAID",
        ),
        (six_drives("zfs"), zfs, "ZFS"),
    ] {
        if got.is_ok() {
            continue;
        }
        let devices: Vec<DeviceSpec> = spec
            .devices
            .iter()
            .map(|d| DeviceSpec::parse(d).unwrap())
            .collect();
        let mut ledger = Ledger::detached();
        let stop = AtomicBool::new(false);
        let opts = BuildOptions::default();
        let e = build(
            &spec,
            &devices,
            &plan(),
            &opts,
            &mut ledger,
            &mut Actions::new(false),
            &stop,
        )
        .err()
        .expect("refused");
        assert_eq!(e.why(), Cause::Host, "{e}");
        assert!(e.to_string().contains(feature), "{e}");
        assert!(ledger.is_empty(), "nothing made");
    }
}
