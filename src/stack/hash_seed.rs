//! The directory hash seed of ext2/3/4, drawn from the workload's seed. mke2fs picks a random
//! one for each filesystem; it decides the order `readdir` returns a directory's entries in (so
//! the order `rm -rf` visits a tree) and where ext4 puts the directories it spreads over the
//! disk. Drawn from the seed instead, two stacks built for the same workload hash their
//! directories alike, and a difference between them is the stack's, not mke2fs's dice. A
//! `hash_seed=` among the user's own `-E` options wins.

use crate::engine::rng::SplitMix64;

/// The mkfs arguments `extra` with `hash_seed=<uuid from seed>` among its `-E` options: added
/// to the last `-E` (mke2fs reads only the last), or as a new `-E`. Unchanged when `extra`
/// already gives a hash seed.
pub fn with_hash_seed(extra: &[String], seed: u64) -> Vec<String> {
    let mut args = extra.to_vec();
    let gives_seed = |o: &str| o.split(',').any(|kv| kv.starts_with("hash_seed="));
    // The index of the last -E's options: `-E opts` or `-Eopts`.
    let mut last: Option<(usize, usize)> = None;
    for (i, a) in args.iter().enumerate() {
        if a == "-E" && i + 1 < args.len() {
            last = Some((i + 1, 0));
        } else if a.starts_with("-E") && a.len() > 2 {
            last = Some((i, 2));
        }
    }
    let opt = format!("hash_seed={}", uuid_from(seed));
    match last {
        Some((i, skip)) if gives_seed(&args[i][skip..]) => {}
        Some((i, _)) => {
            let sep = if args[i].ends_with(',') { "" } else { "," };
            args[i] = format!("{}{sep}{opt}", args[i]);
        }
        None => args.extend(["-E".to_string(), opt]),
    }
    args
}

/// A version-4 UUID whose random bits come from `seed`.
pub fn uuid_from(seed: u64) -> String {
    let mut rng = SplitMix64::new(seed ^ 0x6861_7368_5f73_6565); // "hash_see"
    let (hi, lo) = (rng.next_u64(), rng.next_u64());
    let hi = (hi & !0xf000) | 0x4000; // version 4
    let lo = (lo & !(0xc << 60)) | (0x8 << 60); // RFC 4122 variant
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xffff,
        hi & 0xffff,
        lo >> 48,
        lo & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_seed_decides_the_uuid() {
        let u = uuid_from(1);
        assert_eq!(u, uuid_from(1));
        assert_ne!(u, uuid_from(2));
        let parts: Vec<&str> = u.split('-').collect();
        let lens: Vec<usize> = parts.iter().map(|p| p.len()).collect();
        assert_eq!(lens, [8, 4, 4, 4, 12], "{u}");
        assert!(parts[2].starts_with('4'), "version 4: {u}");
        assert!("89ab".contains(&parts[3][..1]), "variant: {u}");
    }

    #[test]
    fn a_new_e_option_when_there_is_none() {
        let a = with_hash_seed(&s(&["-b", "4096"]), 7);
        assert_eq!(
            a,
            s(&["-b", "4096", "-E", &format!("hash_seed={}", uuid_from(7))])
        );
    }

    #[test]
    fn joined_to_the_last_e_option_which_is_the_one_mke2fs_reads() {
        let h = format!("hash_seed={}", uuid_from(3));
        let a = with_hash_seed(&s(&["-E", "stride=4", "-E", "lazy_itable_init=0"]), 3);
        assert_eq!(
            a,
            s(&["-E", "stride=4", "-E", &format!("lazy_itable_init=0,{h}")])
        );
        let a = with_hash_seed(&s(&["-Epacked_meta_blocks=1"]), 3);
        assert_eq!(a, s(&[&format!("-Epacked_meta_blocks=1,{h}")]));
    }

    #[test]
    fn the_users_own_hash_seed_wins() {
        let own = s(&[
            "-E",
            "lazy_itable_init=0,hash_seed=00000000-0000-4000-8000-000000000001",
        ]);
        assert_eq!(with_hash_seed(&own, 3), own);
    }
}
