//! A flash twin's reads set against the card's own, timed in turn. The twin's access and read
//! rate come from the card's reads less the emulator's path, measured on a reference card a
//! minute before ([`super::hostpath`]). That reference answers in 0.5 ms; the emulator's path
//! grows with how long the host sat waiting for a reply, and a card answers a 4 KiB read in
//! 0.4-0.6 ms at scale 1 but in 4-6 ms of wall time at scale 0.1, so the reference's path
//! misses the card's by tens of µs of its time, more than its access's 5% (bench/README.md).
//! So the twin is served here, beside the card and at its scale, and both answer the same
//! groups of reads at random places, a few groups on one then the same on the other: 4 KiB
//! and 256 KiB reads, each twice. The card's median read of each size less the twin's moves
//! the twin's access and read rate (as a disk's buffer hits move its overhead and interface
//! rate, [`super::matched`]); a second pass on the twin so corrected measures what is left,
//! and half of it is taken too (the mean of two estimates). Served by the emulator, the twin
//! then answers a read as the card did on this host.

use super::matched::{groups, match_beside, timed_in_turn, Beside, Gap, Words};
use super::stats::median;
use super::twin::Twin;
use super::{CharError, Progress};
use crate::probe::script::Timed;

const K4: u64 = 4096;
const BIG: u64 = 256 << 10;

/// Groups of reads on each side in a pass (four reads each: 192 reads of each size a pass).
pub const GROUPS: usize = 48;

/// The card's reads of each size less the twin's, medians of each side's, seconds.
pub fn read_gap(card: &[Timed], twin: &[Timed]) -> Gap {
    let of = |t: &[Timed], len: u64| {
        median(
            &t.iter()
                .filter(|t| t.len == len)
                .map(|t| t.latency)
                .collect::<Vec<_>>(),
        )
    };
    Gap {
        small: of(card, K4) - of(twin, K4),
        large: of(card, BIG) - of(twin, BIG),
    }
}

/// Serves `twin` (at `scale`) beside the card `dev` and sets its access and read rate so
/// that its reads match the card's ([module docs](self)). A twin without both (a disk's) is
/// left as it is.
pub fn match_reads(at: Beside, twin: &mut Twin, say: &mut Progress) -> Result<(), CharError> {
    match_beside(at, twin, say, &READS, |on_dev, on_twin, cap, draw, _| {
        let (card, twin) = timed_in_turn(on_dev, on_twin, &groups(cap, GROUPS, draw))?;
        Ok(read_gap(&card, &twin))
    })
}

/// A card's reads.
const READS: Words = Words {
    side: "card",
    reads: "reads",
    label: "reads",
    from: "the reference card",
    names: ("access", "read_rate"),
    groups: GROUPS,
    wait: "",
    seed: 0x4341_5244,
};

#[cfg(test)]
mod tests {
    use super::super::matched::HitParams;
    use super::super::stats::Draw;
    use super::super::twin::{mbs_text, ms_text};
    use super::*;

    /// A twin's access and read rate.
    fn params(twin: &Twin) -> Option<HitParams> {
        HitParams::named(twin, READS.names.0, READS.names.1)
    }

    /// On models' own timelines, a twin card with another access and read rate than the
    /// card's is brought to the card's by the medians of one pass of groups in turn.
    #[test]
    fn reads_in_turn_find_what_the_twin_card_lacks() {
        let (mut card, mut twin) = super::super::matched::on_models(
            "flash,size=8GiB,access=0.345ms,read_rate=35.9",
            "flash,size=8GiB,access=0.3ms,read_rate=40",
        );
        let mut draw = Draw::new(7);
        let (c, t) =
            timed_in_turn(&mut card, &mut twin, &groups(8 << 30, GROUPS, &mut draw)).unwrap();
        let gap = read_gap(&c, &t);
        let m = HitParams {
            overhead: 0.3e-3,
            iface: 40e6,
        }
        .moved(gap)
        .unwrap();
        assert!((m.overhead - 0.345e-3).abs() < 0.1e-6, "{m:?} {gap:?}");
        assert!((m.iface / 35.9e6 - 1.0).abs() < 1e-4, "{m:?} {gap:?}");
    }

    /// A card's reads that the host delayed now and then do not move the gap: each size's
    /// is the difference of the medians.
    #[test]
    fn a_few_delayed_reads_leave_the_gap_alone() {
        let timed = |len: u64, latency: f64| Timed {
            op: crate::engine::Op::Read,
            offset: 0,
            len,
            issue: 0.0,
            latency,
        };
        let read = |len: u64| 0.3e-3 + len as f64 / 40e6;
        let mut card = Vec::new();
        let mut twin = Vec::new();
        for i in 0..100 {
            for len in [K4, BIG] {
                let delayed = if i % 17 == 0 { 2e-3 } else { 0.0 };
                card.push(timed(len, read(len) + 20e-6 + delayed));
                twin.push(timed(len, read(len)));
            }
        }
        let g = read_gap(&card, &twin);
        assert!((g.small - 20e-6).abs() < 1e-12, "{g:?}");
        assert!((g.large - 20e-6).abs() < 1e-12, "{g:?}");
        assert!(g.per_byte().abs() < 1e-18, "{g:?}");
    }

    /// A disk's twin has no access nor read rate: nothing to match.
    #[test]
    fn only_a_card_twin_has_reads_to_match() {
        let mut t = Twin::new("hdd", "");
        t.set("overhead", ms_text(0.1e-3), "");
        t.set("iface_rate", mbs_text(550e6), "");
        assert_eq!(params(&t), None);
        let mut c = Twin::new("flash", "");
        c.set("access", ms_text(0.345e-3), "");
        c.set("read_rate", mbs_text(35.9e6), "");
        let p = params(&c).unwrap();
        assert!((p.overhead - 0.345e-3).abs() < 1e-12, "{p:?}");
        assert!((p.iface - 35.9e6).abs() < 1.0, "{p:?}");
    }
}
