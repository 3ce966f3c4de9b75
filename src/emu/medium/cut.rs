//! Power cuts of emulated devices: a device's [`Power`] (on, or off since an instant of its
//! server's clock), the [`Circuit`] that cuts the devices of one stack together (at a
//! CLOCK_MONOTONIC instant, or as the N-th write reaches any of them) and what a cut does to a
//! write the device is executing ([`InFlight`]), or to a write split over several drives whose
//! parts fare differently (`split_loss`). Once a device's power is off, every request
//! that arrives fails with EIO without reaching its model, and every reply that was due later
//! fails too: the model keeps the state it had at the cut, which [`super::journal`] then
//! asks it about.

use super::model::Unsettled;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The unit a write tears at: the physical sector of a 512e or 4Kn drive. A write is never
/// torn inside one.
pub const SECTOR: u64 = 4096;

pub use crate::engine::InFlight;

/// How many bytes from its start of a `len`-byte write the device was executing the media
/// holds after a cut that treats it as `in_flight` says; a torn write tears where the cut's
/// `seed` and the write's number draw (a one-sector write is whole or absent).
pub fn kept(in_flight: InFlight, len: u64, seed: u64, write: u64) -> u64 {
    match in_flight {
        InFlight::Whole => len,
        InFlight::None => 0,
        InFlight::Torn => {
            let sectors = len.div_ceil(SECTOR);
            let mut rng = crate::engine::rng::SplitMix64::new(
                seed ^ write.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            );
            if sectors < 2 {
                return if rng.below(2) == 0 { 0 } else { len };
            }
            (1 + rng.below(sectors - 1)) * SECTOR
        }
    }
}

/// What a cut loses of a `len`-byte write split over several drives, `parts` the parts they
/// had not made durable (the others are): a part waiting in a cache is lost, one being
/// executed is whole, absent or torn as `in_flight` says. The bytes lost, `[a, b)` from its
/// start, in order and apart, and whether a drive was executing a part of it.
pub(super) fn split_loss(
    len: u64,
    write: u64,
    parts: &[&Unsettled],
    in_flight: InFlight,
    seed: u64,
) -> (Vec<(u64, u64)>, bool) {
    let mut lost: Vec<(u64, u64)> = Vec::new();
    let mut executing = false;
    for u in parts {
        let (from, n) = u.part.unwrap_or((0, len));
        let from = from.min(len);
        let n = n.min(len - from);
        let k = if u.on_media {
            executing = true;
            // Each part tears where its own draw says (the part's start salts the write's).
            kept(in_flight, n, seed, write ^ from.rotate_left(32)).min(n)
        } else {
            0
        };
        if k < n {
            lost.push((from + k, from + n));
        }
    }
    lost.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(lost.len());
    for (a, b) in lost {
        match merged.last_mut() {
            Some(m) if a <= m.1 => m.1 = m.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    (merged, executing)
}

/// The bytes of a `len`-byte write outside `lost` (`[a, b)` ranges from its start, in order
/// and apart): what reached the media.
pub(super) fn landed(len: u64, lost: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::with_capacity(lost.len() + 1);
    let mut at = 0;
    for &(a, b) in lost {
        if a > at {
            out.push((at, a));
        }
        at = at.max(b);
    }
    if at < len {
        out.push((at, len));
    }
    out
}

/// A device's power: on, or off since an instant of its server's clock.
#[derive(Debug, Default)]
pub struct Power {
    /// When it went off, ns of the server's clock (at least 1); 0 while on.
    off_at: AtomicU64,
}

impl Power {
    /// When the power went off, on the server's clock; `None` while it is on.
    pub fn off_at(&self) -> Option<u64> {
        match self.off_at.load(Ordering::Acquire) {
            0 => None,
            t => Some(t),
        }
    }

    /// Whether a reply due at `due_ns` (server clock) comes after the power went: it then
    /// fails, whatever the model said.
    #[inline]
    pub fn fails_reply(&self, due_ns: u64) -> bool {
        let off = self.off_at.load(Ordering::Acquire);
        off != 0 && due_ns > off
    }

    /// Turns it off at `at` (server clock), unless it is off already.
    fn switch_off(&self, at: u64) {
        let _ = self
            .off_at
            .compare_exchange(0, at.max(1), Ordering::AcqRel, Ordering::Acquire);
    }

    /// Turns it on again (a fresh model serves from now on).
    pub fn switch_on(&self) {
        self.off_at.store(0, Ordering::Release);
    }
}

/// One device on a circuit: its power and the CLOCK_MONOTONIC instant of its server clock's
/// zero.
#[derive(Debug, Clone)]
pub struct Member {
    pub power: Arc<Power>,
    pub mono_base_ns: u64,
}

/// The devices of one stack, cut together: when an instant passes, or as the N-th write
/// reaches any of them, or when told.
#[derive(Debug)]
pub struct Circuit {
    members: Vec<Member>,
    /// The instant it cuts at (CLOCK_MONOTONIC ns); `u64::MAX` for none.
    at_mono_ns: u64,
    /// The write that cuts it (counted over every member); `u64::MAX` for none.
    after_writes: u64,
    writes: AtomicU64,
    /// When it was cut (CLOCK_MONOTONIC ns); 0 while not.
    cut_mono_ns: AtomicU64,
}

impl Circuit {
    /// A circuit over `members` that cuts at `at_mono_ns` or as write number `after_writes`
    /// (1 for the first) arrives, whichever comes first.
    pub fn new(members: Vec<Member>, at_mono_ns: Option<u64>, after_writes: Option<u64>) -> Self {
        Circuit {
            members,
            at_mono_ns: at_mono_ns.unwrap_or(u64::MAX),
            after_writes: after_writes.filter(|&n| n > 0).unwrap_or(u64::MAX),
            writes: AtomicU64::new(0),
            cut_mono_ns: AtomicU64::new(0),
        }
    }

    /// A request arrives at `mono_ns` at one of the members: whether the power is off for
    /// it. The deadline passing cuts the circuit at the deadline. The write that reaches the
    /// count is serviced, and the power goes as it arrives: it is in flight at the cut.
    #[inline]
    pub fn arrive(&self, mono_ns: u64, write: bool) -> bool {
        let cut = self.cut_mono_ns.load(Ordering::Acquire);
        if cut != 0 {
            return mono_ns >= cut;
        }
        if mono_ns >= self.at_mono_ns {
            return mono_ns >= self.cut(self.at_mono_ns);
        }
        if write
            && self.after_writes != u64::MAX
            && self.writes.fetch_add(1, Ordering::AcqRel) + 1 == self.after_writes
        {
            self.cut(mono_ns);
        }
        false
    }

    /// Cuts the circuit at its deadline when `mono_ns` is past it (time went by with no
    /// request to notice).
    pub fn expire(&self, mono_ns: u64) {
        if mono_ns >= self.at_mono_ns {
            self.cut(self.at_mono_ns);
        }
    }

    /// Cuts every member at `mono_ns` unless it is cut already; returns the instant it was
    /// cut at.
    pub fn cut(&self, mono_ns: u64) -> u64 {
        let at = mono_ns.max(1);
        match self
            .cut_mono_ns
            .compare_exchange(0, at, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => {
                for m in &self.members {
                    m.power.switch_off(at.saturating_sub(m.mono_base_ns));
                }
                at
            }
            Err(prev) => prev,
        }
    }

    /// When it was cut (CLOCK_MONOTONIC ns), if it was.
    pub fn cut_at(&self) -> Option<u64> {
        match self.cut_mono_ns.load(Ordering::Acquire) {
            0 => None,
            t => Some(t),
        }
    }

    /// Writes counted so far toward `after_writes`.
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(base: u64) -> Member {
        Member {
            power: Arc::new(Power::default()),
            mono_base_ns: base,
        }
    }

    #[test]
    fn a_deadline_cuts_every_member_at_the_deadline_on_its_own_clock() {
        let (a, b) = (member(1_000), member(5_000));
        let c = Circuit::new(vec![a.clone(), b.clone()], Some(100_000), None);
        assert!(!c.arrive(99_999, true));
        assert_eq!(c.cut_at(), None);
        // The first request after the deadline finds the power off since the deadline.
        assert!(c.arrive(150_000, false));
        assert_eq!(c.cut_at(), Some(100_000));
        assert_eq!(a.power.off_at(), Some(99_000));
        assert_eq!(b.power.off_at(), Some(95_000));
        // A reply due before the cut goes out; one due after fails.
        assert!(!a.power.fails_reply(99_000) && a.power.fails_reply(99_001));
        // A second cut changes nothing.
        assert_eq!(c.cut(200_000), 100_000);
        a.power.switch_on();
        assert!(!a.power.fails_reply(u64::MAX));
    }

    #[test]
    fn the_nth_write_is_serviced_and_cuts_as_it_arrives() {
        let a = member(0);
        let c = Circuit::new(vec![a.clone()], None, Some(3));
        assert!(!c.arrive(10, true));
        assert!(!c.arrive(20, false), "reads do not count");
        assert!(!c.arrive(30, true));
        assert!(!c.arrive(40, true), "the third write is serviced");
        assert_eq!(c.cut_at(), Some(40));
        assert!(c.arrive(40, true) && c.arrive(41, false));
        assert_eq!(c.writes(), 3);
    }

    #[test]
    fn a_torn_write_keeps_whole_sectors_drawn_from_the_seed() {
        let len = 64 * SECTOR;
        let kept: Vec<u64> = (0..64).map(|w| kept(InFlight::Torn, len, 7, w)).collect();
        assert!(kept.iter().all(|&k| k > 0 && k < len && k % SECTOR == 0));
        assert!(kept.iter().any(|&k| k != kept[0]), "spread: {kept:?}");
        assert_eq!(kept[5], super::kept(InFlight::Torn, len, 7, 5), "seeded");
        assert_eq!(super::kept(InFlight::Whole, len, 7, 1), len);
        assert_eq!(super::kept(InFlight::None, len, 7, 1), 0);
        let one: Vec<u64> = (0..32)
            .map(|w| super::kept(InFlight::Torn, 512, 3, w))
            .collect();
        assert!(one.iter().all(|&k| k == 0 || k == 512));
        assert!(one.contains(&0) && one.contains(&512));
        for w in InFlight::NAMES {
            assert!(InFlight::parse(w).is_some());
        }
    }
}
