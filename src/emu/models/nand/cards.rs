//! The CompactFlash cards of seed 003 as presets of the [`super::flash`] model
//! (`emu:flash,card=lexar|transcend|duracell`). Each preset's access time and read rate give
//! the card's measured random access time (seeker: 4 KiB reads at random offsets), and its
//! write figures give the seed's 4 KiB random write rate; every value it sets can still be
//! overridden in the same spec (`emu:flash,card=lexar,size=1GiB`).
//!
//! Why these values (the seed measured only access time and random writes; the rest are the
//! cards' rated speeds and what cheap cards of that time were measured to do):
//! - `access` + 4 KiB / `read_rate` is the seeker time: Lexar 0.253 ms + 4096 B / 35 MB/s =
//!   0.370 ms; Transcend 2.025 ms + 4096 B / 20 MB/s = 2.230 ms; Duracell 0.509 ms + 4096 B /
//!   45 MB/s = 0.600 ms. `read_rate` is the card's rating (233x ≈ 35 MB/s, 133x = 20 MB/s,
//!   300x = 45 MB/s).
//! - Allocation unit 1 MiB and `in_order`: an open unit takes writes in ascending order, with a
//!   write buffer (`reorder`, 512 KiB) that absorbs writes a little behind the furthest one, so
//!   iozone's four interleaved sequential writers (ext2 lays their files out in ~384 KiB runs
//!   side by side) do not merge; a 4 KiB write further behind merges the unit (copy it at
//!   `copy_rate`, one erase). Random writes within a unit land that far behind one time in
//!   eight. Duracell: 0.645 ms per write plus an eighth of a 19 ms merge ≈ 3 ms, i.e. the seed's
//!   "nearly 1 MB/s" of random writes (iozone, four threads on four 1 MiB files), against
//!   ~6 MB/s of 4 KiB sequential writes. Writes scattered over a thousand files (Cacti's .rrd
//!   files) miss the open units and pay a merge each: ≈ 20 ms per 4 KiB, ~200 KB/s, towards
//!   the 350 KB/s the seed saw in real use.
//! - Open units: Lexar 8, Duracell 4, Transcend 2 (the card that did well in benchmarks and
//!   badly with real data: two open units hold iozone's files but thrash on scattered files).

use super::model::Preset;

/// The three cards of seed 003 (all 8 GB).
pub static CARDS: &[Preset] = &[
    Preset {
        name: "lexar",
        summary: "Lexar Professional 233x UDMA 8 GB: 0.37 ms random access",
        values: &[
            ("size", "8GiB"),
            ("au", "1MiB"),
            ("open_units", "8"),
            ("access", "0.253ms"),
            ("read_rate", "35"),
            ("write_rate", "25"),
            ("copy_rate", "80"),
            ("erase", "1.5ms"),
            ("in_order", "true"),
            ("reorder", "512KiB"),
        ],
    },
    Preset {
        name: "transcend",
        summary: "Transcend 133x 8 GB: 2.23 ms random access",
        values: &[
            ("size", "8GiB"),
            ("au", "1MiB"),
            ("open_units", "2"),
            ("access", "2.025ms"),
            ("read_rate", "20"),
            ("write_rate", "12"),
            ("copy_rate", "40"),
            ("erase", "3ms"),
            ("in_order", "true"),
            ("reorder", "256KiB"),
        ],
    },
    Preset {
        name: "duracell",
        summary: "Duracell (Dane-Elec) 300x UDMA 8 GB: 0.60 ms random access",
        values: &[
            ("size", "8GiB"),
            ("au", "1MiB"),
            ("open_units", "4"),
            ("access", "0.509ms"),
            ("read_rate", "45"),
            ("write_rate", "30"),
            ("copy_rate", "60"),
            ("erase", "1.5ms"),
            ("in_order", "true"),
            ("reorder", "512KiB"),
        ],
    },
];

#[cfg(test)]
mod tests {
    use crate::emu::ModelSpec;

    #[test]
    fn each_card_has_the_seeds_random_access_time() {
        for (card, ms) in [("lexar", 0.37), ("transcend", 2.23), ("duracell", 0.60)] {
            let s = ModelSpec::parse(&format!("flash,card={card}")).unwrap();
            let e = s.expectations(1 << 20).unwrap();
            assert!((e.random_read_ms / ms - 1.0).abs() < 0.005, "{card}: {e:?}");
            assert!(s.to_string().starts_with(&format!("flash,card={card},")));
            let again = ModelSpec::parse(&s.to_string()).unwrap();
            assert_eq!(again.to_string(), s.to_string());
        }
    }

    #[test]
    fn keys_after_a_card_override_it_and_unknown_cards_name_the_allowed() {
        let s = ModelSpec::parse("flash,size=1GiB,card=duracell").unwrap();
        assert_eq!(s.values.u64("size"), 1 << 30);
        assert_eq!(s.values.u64("open_units"), 4);
        let e = ModelSpec::parse("flash,card=sandisk")
            .unwrap_err()
            .to_string();
        assert!(e.contains("lexar, transcend, duracell"), "{e}");
        let e = ModelSpec::parse("hdd,card=lexar").unwrap_err().to_string();
        assert!(e.contains("card"), "{e}");
    }
}
