//! Where a random job's next block falls: uniform, or skewed as fio's `random_distribution`
//! says: Zipf (Gray et al.'s generator, as fio's), Pareto (fio's power of a uniform draw),
//! normal (a Gaussian of `sigma` % of the file around its center), each rank hashed over the
//! file so the hot blocks are spread as fio spreads them; zoned (a share of the accesses to a
//! share of the file) and a fixed sequence of block indices.

use super::super::spec::Distribution;
use crate::engine::rng::SplitMix64;

/// fio's 64-bit hash of a rank, spreading hot ranks over the file.
fn hash(v: u64) -> u64 {
    // The multiplicative hash fio's hash.h uses (golden ratio, 64-bit).
    v.wrapping_mul(0x61C8_8646_80B5_83EB)
}

/// A uniform draw in [0, 1).
pub fn unit(r: &mut SplitMix64) -> f64 {
    (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A skewed block generator over `n` blocks.
#[derive(Debug, Clone)]
pub enum Skew {
    Zipf {
        n: u64,
        theta: f64,
        zeta2: f64,
        zetan: f64,
        alpha: f64,
        eta: f64,
        shift: u64,
    },
    Pareto {
        n: u64,
        pow: f64,
        shift: u64,
    },
    Normal {
        n: u64,
        sigma: f64,
        center: f64,
    },
}

/// ζ(n, θ) = Σ 1/i^θ for i in 1..=n, computed up to fio's bound of 10 M terms (the tail is
/// approximated by its integral).
fn zeta(n: u64, theta: f64) -> f64 {
    const EXACT: u64 = 10_000_000;
    let m = n.min(EXACT);
    let mut s = 0.0;
    for i in 1..=m {
        s += 1.0 / (i as f64).powf(theta);
    }
    if n > m {
        // ∫ x^-θ dx from m to n.
        let e = 1.0 - theta;
        s += ((n as f64).powf(e) - (m as f64).powf(e)) / e;
    }
    s
}

impl Skew {
    /// The generator of `d` over `n` blocks, `None` for the uniform and zoned ones.
    pub fn of(d: &Distribution, n: u64, seed: u64) -> Option<Skew> {
        let n = n.max(1);
        let shift = |c: f64| {
            if c < 0.0 {
                // No center given: fio puts the hot spot anywhere (a random rotation).
                SplitMix64::new(seed).below(n)
            } else {
                (c * n as f64) as u64
            }
        };
        match *d {
            Distribution::Zipf { theta, center } => {
                let zetan = zeta(n, theta);
                let zeta2 = zeta(2, theta);
                Some(Skew::Zipf {
                    n,
                    theta,
                    zeta2,
                    zetan,
                    alpha: 1.0 / (1.0 - theta),
                    eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
                    shift: shift(center),
                })
            }
            Distribution::Pareto { h, center } => Some(Skew::Pareto {
                n,
                pow: (h.ln() / (1.0 - h).ln()),
                shift: shift(center),
            }),
            Distribution::Normal { sigma, center } => Some(Skew::Normal {
                n,
                sigma: sigma / 100.0 * n as f64,
                center: center * n as f64,
            }),
            _ => None,
        }
    }

    /// The next block.
    pub fn next(&self, r: &mut SplitMix64) -> u64 {
        match *self {
            Skew::Zipf {
                n,
                theta,
                zeta2: _,
                zetan,
                alpha,
                eta,
                shift,
            } => {
                let u = unit(r);
                let uz = u * zetan;
                let rank = if uz < 1.0 {
                    0
                } else if uz < 1.0 + 0.5f64.powf(theta) {
                    1
                } else {
                    ((n as f64) * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                (hash(rank.min(n - 1)) % n + shift) % n
            }
            Skew::Pareto { n, pow, shift } => {
                let rank = ((n - 1) as f64 * unit(r).powf(pow)) as u64;
                (hash(rank.min(n - 1)) % n + shift) % n
            }
            Skew::Normal { n, sigma, center } => {
                // Box-Muller.
                let (u1, u2) = (unit(r).max(f64::MIN_POSITIVE), unit(r));
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                let x = (center + z * sigma).round();
                (x.max(0.0) as u64).min(n - 1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(d: Distribution, n: u64, draws: usize) -> Vec<u64> {
        let s = Skew::of(&d, n, 1).unwrap();
        let mut r = SplitMix64::new(7);
        let mut h = vec![0u64; n as usize];
        for _ in 0..draws {
            let b = s.next(&mut r);
            assert!(b < n);
            h[b as usize] += 1;
        }
        h.sort_unstable_by(|a, b| b.cmp(a));
        h
    }

    #[test]
    fn zipf_and_pareto_put_most_accesses_on_few_blocks() {
        let z = hits(
            Distribution::Zipf {
                theta: 1.2,
                center: -1.0,
            },
            1000,
            100_000,
        );
        let top: u64 = z[..10].iter().sum();
        assert!(
            top > 50_000,
            "zipf 1.2: the top 1% of blocks take most accesses: {top}"
        );
        let u: u64 = hits(
            Distribution::Zipf {
                theta: 0.5,
                center: -1.0,
            },
            1000,
            100_000,
        )[..10]
            .iter()
            .sum();
        assert!(u < top, "a smaller theta is less skewed");
        let p: u64 = hits(
            Distribution::Pareto {
                h: 0.3,
                center: -1.0,
            },
            1000,
            100_000,
        )[..100]
            .iter()
            .sum();
        assert!(p > 50_000, "pareto 0.3: {p}");
    }

    #[test]
    fn normal_centers_its_accesses() {
        let s = Skew::of(
            &Distribution::Normal {
                sigma: 10.0,
                center: 0.5,
            },
            1000,
            1,
        )
        .unwrap();
        let mut r = SplitMix64::new(3);
        let within = (0..10_000)
            .filter(|_| (300..700).contains(&s.next(&mut r)))
            .count();
        assert!(
            (9300..9700).contains(&within),
            "about 95% within 2 sigma: {within}"
        );
        assert!(Skew::of(&Distribution::Random, 10, 1).is_none());
    }
}
