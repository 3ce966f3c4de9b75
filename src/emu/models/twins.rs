//! Device twins: presets of the disk models standing for the seeds' real drives
//! (`emu:hdd,drive=wd80emaz`). A twin is calibrated on its seed's device-level figures only
//! (raw partitions, no filesystem); what a filesystem then does on it is a prediction. Every
//! value cites where it comes from; keys written beside the preset override it.
//!
//! **`wd80emaz`, seed 000's drive** (the shucked WD 8 TB white-label drive, "generally
//! comparable to the WD Red drives"):
//! - From the WD Red datasheet (8 TB, 256 MB cache model): 5400 rpm class, a sustained
//!   transfer rate up to 198 MB/s (the outer zone). The inner zone at 95 MB/s is about half the
//!   outer, the ratio of the zoned recording of drives of that generation.
//! - Calibrated on the seed's raw-partition row (8 record and 2 playback streams of 1 MiB at
//!   queue depth 1 each, the disk split in ten, mq-deadline, which passes the ten streams'
//!   requests straight to a drive that queues 32): a 5 s record window of ~200 ms, 1 MB reads
//!   of ~400 ms on average and ~750 ms at worst, and the playback streams taking twice as long
//!   as the record streams. The mechanism behind those figures is the drive's own queue: it
//!   serves the nearest command first (rotational position ordering, `queue_order=rpo`, see
//!   [`crate::emu::queued`]), so the reads at the platter's edges (the first and last tenth) wait
//!   while the writers' destages in the middle are nearer, until command aging sends them
//!   first. Three values are fitted to those four figures, nothing else:
//!   - `age_limit` 690 ms: how long a command may wait before it goes first; it sets the worst
//!     read (the limit plus the destage under way and the read itself).
//!   - `write_buffer` 8 MiB: the dirty data the write-back buffer holds. The more the
//!     writers keep buffered, the more destages compete with a read: it sets the reads' mean
//!     and so the playback/record time ratio. The datasheet's 256 MB is the whole cache (read
//!     segments included).
//!   - `avg_seek` 17 ms (full stroke 34 ms): with the reordering it sets the time per request
//!     and so the record window.
//! - Fitted on the kernel's stack (`iotrial run dvr --layout partitions --scheduler
//!   mq-deadline --set samples=2048 --set region_size=1500MiB`, scale 1, each stream drawing
//!   its own offsets, each run alone on the machine; docs/seeds.md has the runs): a 200 ms
//!   window, 385 ms reads on average, 771 ms at worst, the playback streams taking 2.14 times
//!   as long as the record streams, each within 10% of the seed's. The model alone in closed
//!   loop ([`super::closed_loop::hammer`]) gives 219, 457, 774 ms and 2.41 for the same values:
//!   the kernel's stack puts mq-deadline, the loop device and FUSE between the streams and the
//!   model, which the closed loop only approximates. So the closed loop checks the mechanism
//!   (the unit test below), and `cargo bench --bench seed_tables` checks the calibration on
//!   the kernel's stack.
//! - Logical capacity maps onto the full stroke, so the default 16 GiB seeks like the 8 TB disk.
//!
//! **`sata2-2tb`, seed 001's drives** (six "2Tb 7200 RPM drives", "all the SATA-2 drives that I
//! could scrounge up", each "fundamentally capable of streaming approximately 110Mb/sec"):
//! - The seed's figure: 115 MB/s at the outer edge, where its 60 s streaming test writes, so
//!   three RAID0 stripes take the seed's 330 MB/s; 60 MB/s at the inner edge, about half, as
//!   on drives of that generation.
//! - Not in the seed, the figures of 7200 rpm desktop drives of about 2010: 8.5 ms average
//!   and 17 ms full-stroke seeks, a 32 MiB buffer, a 300 MB/s SATA-2 link.
//! - Nothing is fitted: seed 001 measures streaming only, which the zone rates set.
//! - The seed's capacity, 2 TB (a sparse image holds only what is written): a minute of
//!   streaming then stays on the outer zones as on the seed's drives. At 16 GiB, which the
//!   logical capacity maps onto the whole stroke, the same minute spans a third of the stroke
//!   and the drives streamed 96 MB/s, not 110-115.
//! - It also stands for seed 003's "SATA disk" (Cacti's update in 32-45 s with jfs and
//!   deadline), a 7200 rpm SATA drive of the same years of which the seed gives nothing else.
//!
//! **`cmr-8tb`, seed 002's conventional disk**: the `hdd` model's 7200 rpm mechanics at 8 TB,
//! the same as the SMR twin's (see [`SHINGLED`]), so the two differ by the shingles alone.

use super::model::Preset;

/// The shingled drives of the seeds, as presets of `smr`.
///
/// **`dm-smr-8tb`, seed 002's drive-managed SMR disk** (the drives of the Vault 2017 talk on
/// ext4 for SMR, 8 TB):
/// - From the seed: 8 TB; "some drives they tested had 25GB of persistent cache"; cleaning
///   moves the cache's data to its bands "if there is idle time", and "once it fills up,
///   throughput drops off drastically" (cleaning in the foreground).
/// - Not in the seed, and kept at the `hdd` model's (so the CMR twin, `drive=cmr-8tb`, differs
///   from it by the shingles alone): the mechanics of a 7200 rpm drive, 32 MiB bands (the seed
///   says only that an STL hides zones that "might be 256M"; drive-managed bands are tens of
///   MiB), cleaning after 0.5 s of idle.
/// - Nothing is fitted: the seed gives no figure of the drive alone. A study at a smaller size
///   scales the cache with the capacity (25 GB of 8 TB is 0.3%).
pub static SHINGLED: &[Preset] = &[Preset {
    name: "dm-smr-8tb",
    summary: "seed 002's 8 TB drive-managed SMR disk: 25 GB persistent cache, 32 MiB bands",
    values: &[
        ("size", "8TB"),
        ("cache", "25GB"),
        ("band", "32MiB"),
        ("idle", "0.5s"),
    ],
}];

/// The storage arrays of the seeds, as presets of `array`.
///
/// **`sfa-38tb` and `sfa-72tb`, seed 004's volumes** ("38TB" and "72TB" xfs and ext4 file
/// systems on storage DDN lent, checked with xfs_repair and e2fsck):
/// - From the seed: the capacities, and the array's rate: "with the hardware from DDN that was
///   used, we could reach about 600,000 inodes/s or about 1 GB/s", the link's 1000 MB/s.
/// - Not in the seed, the disks of a 2011 array: 2 TB 7200 rpm drives (the figures of
///   `sata2-2tb`), so a volume stripes its capacity over 19 and 36 of them, in 128 KiB chunks.
/// - Not twinned, because the seed does not say: the array's controller cache and read-ahead,
///   its RAID-6 parity layout and how its LUNs were pooled. Writes cost the data disks only.
/// - Nothing is fitted: seed 004 gives no figure of the array alone beyond its rate.
pub static ARRAYS: &[Preset] = &[
    Preset {
        name: "sfa-38tb",
        summary: "seed 004's 38 TB volume: 19 striped 2 TB 7200 rpm disks behind a 1 GB/s link",
        values: &[
            ("size", "38TB"),
            ("drives", "19"),
            ("chunk", "128KiB"),
            ("link_rate", "1000"),
            ("rpm", "7200"),
            ("avg_seek", "8.5ms"),
            ("full_stroke", "17ms"),
            ("outer_rate", "115"),
            ("inner_rate", "60"),
            ("buffer", "32MiB"),
            ("iface_rate", "300"),
        ],
    },
    Preset {
        name: "sfa-72tb",
        summary: "seed 004's 72 TB volume: 36 striped 2 TB 7200 rpm disks behind a 1 GB/s link",
        values: &[
            ("size", "72TB"),
            ("drives", "36"),
            ("chunk", "128KiB"),
            ("link_rate", "1000"),
            ("rpm", "7200"),
            ("avg_seek", "8.5ms"),
            ("full_stroke", "17ms"),
            ("outer_rate", "115"),
            ("inner_rate", "60"),
            ("buffer", "32MiB"),
            ("iface_rate", "300"),
        ],
    },
];

/// The drives of the seeds, as presets of `hdd`.
pub static DRIVES: &[Preset] = &[
    Preset {
        name: "wd80emaz",
        summary:
            "WD 8 TB white label (WD80EMAZ, seed 000): 5400 rpm, calibrated on the seed's raw row",
        values: &[
            ("size", "16GiB"),
            ("rpm", "5400"),
            ("avg_seek", "17ms"),
            ("full_stroke", "34ms"),
            ("outer_rate", "198"),
            ("inner_rate", "95"),
            ("buffer", "256MiB"),
            ("write_back", "true"),
            ("write_buffer", "8MiB"),
            ("queue_depth", "32"),
            ("queue_order", "rpo"),
            ("age_limit", "690ms"),
        ],
    },
    Preset {
        name: "sata2-2tb",
        summary:
            "2 TB 7200 rpm SATA-2 drive of seed 001: 115 MB/s outer, 60 MB/s inner, 32 MiB buffer",
        values: &[
            ("size", "2TB"),
            ("rpm", "7200"),
            ("avg_seek", "8.5ms"),
            ("full_stroke", "17ms"),
            ("outer_rate", "115"),
            ("inner_rate", "60"),
            ("buffer", "32MiB"),
            ("iface_rate", "300"),
        ],
    },
    Preset {
        name: "cmr-8tb",
        summary: "seed 002's conventional 8 TB disk: the SMR twin's drive without shingles",
        values: &[("size", "8TB")],
    },
];

#[cfg(test)]
mod tests {
    use crate::emu::closed_loop::{hammer, Hammer};
    use crate::emu::ModelSpec;

    fn within(x: f64, seed: f64, tol: f64) -> bool {
        (x / seed - 1.0).abs() <= tol
    }

    fn hammered(spec: &str) -> crate::emu::closed_loop::HammerFigures {
        let s = ModelSpec::parse(spec).unwrap();
        let mut m = (s.model.build)(&s.values).unwrap();
        hammer(m.as_mut(), &Hammer::seed_000())
    }

    /// The mechanism the WD twin is calibrated through, checked on the model alone: reads wait
    /// behind the writers' buffered destages, and command aging bounds the wait. Its figures
    /// on the kernel's stack, the calibration itself, are checked by `cargo bench --bench
    /// seed_tables` (the raw row within 10% of the seed's four figures).
    #[test]
    fn the_wd_twin_makes_reads_wait_behind_the_writers_destages() {
        let twin = hammered("hdd,drive=wd80emaz");
        // Reads take about twice a write's window and the players twice the recorders' time,
        // the seed's raw row; the closed loop's own figures are 219, 457 ms and 2.41.
        assert!(twin.read_mean_ms > 1.8 * twin.record_window_ms, "{twin:?}");
        assert!(twin.time_ratio > 1.8, "{twin:?}");
        // The worst read waited the aging limit (690 ms), then a destage and itself.
        assert!(
            (690.0..690.0 + 150.0).contains(&twin.read_worst_ms),
            "{twin:?}"
        );
        // Without the write-back buffer the writers wait for the platter instead, and the
        // reads no longer queue behind their destages.
        let through = hammered("hdd,drive=wd80emaz,write_back=false");
        assert!(
            through.record_window_ms > 2.0 * twin.record_window_ms,
            "{through:?} {twin:?}"
        );
        assert!(through.time_ratio < twin.time_ratio - 0.5, "{through:?}");
        let s = ModelSpec::parse("hdd,drive=wd80emaz").unwrap();
        assert!(s.to_string().starts_with("hdd,drive=wd80emaz,"), "{s}");
    }

    #[test]
    fn the_seed_001_drive_streams_at_the_seeds_rate() {
        let s = ModelSpec::parse("hdd,drive=sata2-2tb").unwrap();
        let e = s.expectations(1 << 20).unwrap();
        // Three RAID0 stripes of these drives: the seed's 330 MB/s, within the link's rate.
        assert!(within(3.0 * e.seq_write_mbs, 330.0, 0.05), "{e:?}");
    }

    #[test]
    fn seed_004s_arrays_stream_at_the_seeds_rate_and_seek_like_one_disk() {
        for name in ["sfa-38tb", "sfa-72tb"] {
            let s = ModelSpec::parse(&format!("array,drive={name}")).unwrap();
            // Transfers that span every disk fill the link (the seed's 1 GB/s); a 4 KiB read is
            // one disk's.
            let e = s.expectations(8 << 20).unwrap();
            assert!(within(e.seq_read_outer_mbs, 1000.0, 0.01), "{name}: {e:?}");
            let disk = ModelSpec::parse("hdd,drive=sata2-2tb,size=2TB").unwrap();
            let one = disk.expectations(1 << 20).unwrap();
            assert!(
                within(e.random_read_ms, one.random_read_ms, 0.01),
                "{e:?} {one:?}"
            );
        }
    }

    #[test]
    fn drive_keys_override_the_preset_and_unknown_drives_name_the_allowed() {
        let s = ModelSpec::parse("hdd,size=1GiB,drive=wd80emaz").unwrap();
        assert_eq!(s.values.u64("size"), 1 << 30);
        assert_eq!(s.values.u64("write_buffer"), 8 << 20);
        let e = ModelSpec::parse("hdd,drive=st8000")
            .unwrap_err()
            .to_string();
        assert!(e.contains("wd80emaz"), "{e}");
    }
}
