//! Seed 002's study: the built-in `smr-metadata` study runs every stack on both drives (the
//! shingled one and the same drive without shingles), with the seed's 800,000 directories by
//! default and 20,000 with `--quick`; the dry run shows the mkfs commands it would run, the ext4
//! journal on the emulated SSD among them.

mod common;

use common::*;

#[test]
fn every_stack_runs_on_both_drives() {
    let work = tempfile::tempdir().unwrap();
    let (out, stacks) = dry_run_stacks(work.path(), "smr-metadata");
    let bases = [
        "ext4",
        "ext4-packed",
        "ext4-bigjournal",
        "ext4-ssdjournal",
        "xfs",
        "btrfs",
    ];
    let want: Vec<String> = bases
        .iter()
        .flat_map(|b| [format!("{b}-smr"), format!("{b}-cmr")])
        .collect();
    assert_eq!(stacks, want);
    assert!(out.contains("-O journal_dev -b 4096"), "{out}");
    assert!(out.contains("packed_meta_blocks=1"), "{out}");
    assert!(
        out.contains("emu:smr,drive=dm-smr-8tb,size=16GiB,cache=256MiB"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_dir(work.path()).unwrap().count(),
        0,
        "nothing made"
    );
}
