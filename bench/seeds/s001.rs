//! Seed 001, "Filesystem performance - btrfs, zfs, xfs, ntfs" (`study streaming`): the
//! throughput eight streaming writers settle at on each stack, and its share of what the
//! drives stream, beside the figures the seed's three posts give.

use super::claims::{Check, Claim};
use super::compare::{Comparison, Convert, Figure, SeedRow};
use super::context::Context;
use super::{no_extra, Seed, Shown};

pub const SEED: Seed = Seed {
    id: "001",
    study: "streaming",
    columns: |kind| match kind {
        "stream" => &["settled_mb_s", "raw_fraction", "total_mb_s"],
        _ => &[],
    },
    params: &["writers", "io_size", "duration", "bytes", "dirty_limit"],
    extra: no_extra,
    show,
};

use SeedRow as Row;

fn show(ctx: &Context) -> Shown {
    let w = ctx.summary.workload_of("stream");
    let settled = Comparison {
        title: "The throughput the writers settle at".into(),
        workload: w.clone(),
        column: "settled_mb_s",
        seed_unit: "MB/s",
        convert: Convert::Same,
        unit: "MB/s".into(),
        iotrial_unit: "MB/s".into(),
        factor: 1.0,
        rows: vec![
            Row::new("six drives raw (the seed gives one drive's rate)", "raw", Figure::None, "My experience with these hard drives as singletons is that they are fundamentally capable of streaming approximately 110Mb/sec to the platters"),
            Row::new("btrfs RAID10", "btrfs-raid10", Figure::Is(298.0), "After some time it settled down to approximately 298Mb/sec throughput to the RAID10 test volume"),
            Row::new("ZFS, three mirror pairs, log on the SSD", "zfs-mirrors-ssdlog", Figure::Is(275.0), "approximately 275Mb/sec throughput, or roughly 17% penalty compared to raw drive performance"),
            Row::new("ZFS, three mirror pairs, no log device", "zfs-mirrors", Figure::Is(275.0), "Again I was averaging 275Mb/sec throughput"),
            Row::new("MD RAID10 raw, native (one stream)", "md10-raw", Figure::Is(311.0), "Through the MD layer with a single full-speed stream I got 311Mb/sec"),
            Row::new("XFS on MD RAID10, log on the SSD, native", "xfs-md10-ssdlog", Figure::Is(303.0), "This time it settled down to 303Mb/sec, or roughly 8% overhead"),
            Row::new("XFS on MD RAID10, log inside, native (the seed's native XFS had its log on the SSD)", "xfs-md10", Figure::None, "So I created an XFS filesystem with the log device on the SSD and the filesystem proper on /dev/md10"),
            Row::new("MD RAID10 raw, KVM guest", "md10-raw-vm", Figure::Is(308.0), "I was getting 308Mb/sec, which is close enough to be no real difference"),
            Row::new("XFS on MD RAID10, KVM guest", "xfs-md10-vm", Figure::Is(280.0), "The final result was around 280mb/sec -- or barely faster than what I was getting from ZFS"),
            Row::new("XFS on MD RAID10, log on the SSD, KVM guest (the seed's guest had the array only)", "xfs-md10-ssdlog-vm", Figure::None, "pushed /dev/md10 (the 6-disk RAID10 array) into the virtual machine as a virtio device"),
        ],
        others: true,
        ratio: Ok(()),
        note: "The seed writes \"Mb/sec\" for dd's MB/s: its three RAID0 stripes of \"110Mb apiece\" make \"330Mbytes/sec\". MB is 10^6 bytes, as dd and iotrial count it. The seed's figure is what dd reported once the writers had settled; iotrial's is the writers' total once it settled (its first column). The seed's native MD row is \"a single full-speed stream\", where iotrial runs its eight writers; its guest rows ran KVM with hardware virtualization, and a guest row here runs the way this host can (see the table's note in the study's report).".into(),
    };
    let fraction = Comparison {
        title: "Each stack's share of what its drives stream".into(),
        workload: w.clone(),
        column: "raw_fraction",
        seed_unit: "% overhead",
        convert: Convert::Complement,
        unit: "fraction of the drives' rate".into(),
        iotrial_unit: "fraction of raw".into(),
        factor: 1.0,
        rows: vec![
            Row::new("btrfs RAID10", "btrfs-raid10", Figure::Is(10.0), "This infers approximately 10% overhead"),
            Row::new("ZFS, three mirror pairs, log on the SSD", "zfs-mirrors-ssdlog", Figure::Is(17.0), "roughly 17% penalty compared to raw drive performance"),
            Row::new("MD RAID10 raw, native (one stream)", "md10-raw", Figure::Is(6.0), "I got 311Mb/sec, or roughly 6% overhead caused by the Linux kernel and the RAID10 layer"),
            Row::new("XFS on MD RAID10, log on the SSD, native", "xfs-md10-ssdlog", Figure::Is(8.0), "This time it settled down to 303Mb/sec, or roughly 8% overhead"),
        ],
        others: false,
        ratio: Ok(()),
        note: "The seed's overhead is against its drives' rate as it reckons it (\"three RAID0 stripes on those drives should be 330Mbytes/sec\"); its share is 1 less the overhead. iotrial's \"of raw\" is against the larger of the stack's share of the raw stack's total and the raw stack's best drive times its data drives.".into(),
    };
    let mut body = settled.render(ctx);
    body.push('\n');
    body.push_str(&fraction.render(ctx));
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    let before = |(a, b): (String, String)| Check::Before {
        workload: w.clone(),
        column: "settled_mb_s",
        a,
        b,
    };
    let claims = vec![
        Claim {
            quote: "\"don't use ZFS for performance\"",
            what: "btrfs RAID10 before ZFS, with the SSD log and without".into(),
            checks: vec![
                before(pair("btrfs-raid10", "zfs-mirrors-ssdlog")),
                before(pair("btrfs-raid10", "zfs-mirrors")),
            ],
        },
        Claim {
            quote: "\"it is clear that XFS is the king of high-performance streaming I/O on Linux\"",
            what: "XFS on MD RAID10 (log on the SSD) natively not after btrfs RAID10".into(),
            checks: vec![Check::NotAfter {
                workload: w.clone(),
                column: "settled_mb_s",
                a: "xfs-md10-ssdlog".into(),
                b: "btrfs-raid10".into(),
            }],
        },
        Claim {
            quote: "\"The result was no performance difference\"",
            what: "ZFS with the SSD log level with ZFS without it".into(),
            checks: vec![Check::Level {
                workload: w.clone(),
                column: "settled_mb_s",
                a: "zfs-mirrors-ssdlog".into(),
                b: "zfs-mirrors".into(),
            }],
        },
        Claim {
            quote: "\"I was getting 308Mb/sec, which is close enough to be no real difference\"",
            what: "raw MD RAID10 in the guest level with it natively".into(),
            checks: vec![Check::Level {
                workload: w.clone(),
                column: "settled_mb_s",
                a: "md10-raw-vm".into(),
                b: "md10-raw".into(),
            }],
        },
        Claim {
            quote: "\"This proved to be somewhat disappointing. The final result was around 280mb/sec\"",
            what: "XFS in the guest after raw MD RAID10 in the guest and after XFS natively".into(),
            checks: vec![
                before(pair("md10-raw-vm", "xfs-md10-vm")),
                before(pair("xfs-md10-ssdlog", "xfs-md10-vm")),
            ],
        },
    ];
    Shown { body, claims }
}
