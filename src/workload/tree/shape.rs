//! The shape of the tree one creating thread makes: `dirs` directories in exactly `depth`
//! levels below the thread's own directory. Every level but the last has the same fan-out `f`,
//! the largest for which a full tree of that fan-out and depth holds no more than `dirs`; the
//! last level holds what is left, spread evenly over its parents. The directories are visited
//! depth first, parents before their children (as a recursive `mkdir` makes them), in memory
//! proportional to the depth, whatever the count.

use crate::params::Params;
use serde::{Deserialize, Serialize};

/// Directories thread `t` creates: an equal share, the first threads one more.
pub fn share(p: &Params, t: u64) -> u64 {
    let (d, n) = (p.u64("dirs"), p.u64("threads").max(1));
    d / n + u64::from(t < d % n)
}

/// One thread's tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// Directories in all.
    pub dirs: u64,
    /// Children of each directory, per level: `fan_out[0]` for the thread's own directory,
    /// `fan_out[depth - 1]` the most a parent of the last level has (some have one fewer).
    pub fan_out: Vec<u64>,
    /// Directories on each level, from the first.
    pub per_level: Vec<u64>,
}

/// Directories in a full tree of fan-out `f` and `levels` levels (saturating).
fn full(f: u64, levels: u64) -> u64 {
    let (mut sum, mut level) = (0u64, 1u64);
    for _ in 0..levels {
        level = level.saturating_mul(f);
        sum = sum.saturating_add(level);
    }
    sum
}

impl Shape {
    /// The shape of `dirs` directories in `depth` levels; `None` unless `depth <= dirs` and
    /// `depth >= 1` (each level needs a directory).
    pub fn new(dirs: u64, depth: u64) -> Option<Shape> {
        if depth == 0 || dirs < depth {
            return None;
        }
        let mut f = 1;
        while full(f + 1, depth) <= dirs {
            f += 1;
        }
        let mut per_level: Vec<u64> = (1..depth).map(|l| f.pow(l as u32)).collect();
        let above: u64 = per_level.iter().sum();
        let parents = per_level.last().copied().unwrap_or(1);
        let last = dirs - above;
        per_level.push(last);
        let mut fan_out = vec![f; depth as usize - 1];
        fan_out.push(last.div_ceil(parents));
        Some(Shape {
            dirs,
            fan_out,
            per_level,
        })
    }

    /// Children of the `j`-th directory (in visiting order) of level `level` (0: the thread's
    /// own directory).
    fn children(&self, level: usize, j: u64) -> u64 {
        let depth = self.per_level.len();
        if level + 1 < depth {
            return self.fan_out[level];
        }
        if level + 1 > depth {
            return 0;
        }
        // The last level's directories spread evenly: the first `extra` parents have one more.
        let parents = if level == 0 {
            1
        } else {
            self.per_level[level - 1]
        };
        let (base, extra) = (
            self.per_level[level] / parents,
            self.per_level[level] % parents,
        );
        base + u64::from(j < extra)
    }

    /// The directories in the order they are made.
    pub fn walk(&self) -> Walk {
        Walk {
            shape: self.clone(),
            stack: Vec::with_capacity(self.per_level.len()),
            seen: vec![0; self.per_level.len() + 1],
            started: false,
            path: String::new(),
        }
    }
}

/// The directories of a [`Shape`], depth first; each is a relative path such as `d0/d2/d1`.
pub struct Walk {
    shape: Shape,
    /// Per level entered: (children it has, children visited so far).
    stack: Vec<(u64, u64)>,
    /// Directories of each level visited so far (level 0: the thread's own directory).
    seen: Vec<u64>,
    started: bool,
    path: String,
}

impl Walk {
    /// The next directory's path, relative to the thread's directory; `None` when done.
    pub fn next_path(&mut self) -> Option<&str> {
        if !self.started {
            self.started = true;
            self.stack.push((self.shape.children(0, 0), 0));
            self.seen[0] = 1;
        }
        loop {
            let level = self.stack.len();
            let (n, done) = self.stack.last_mut()?;
            if *done == *n {
                self.stack.pop();
                self.pop_component();
                continue;
            }
            let index = *done;
            *done += 1;
            let j = self.seen[level];
            self.seen[level] += 1;
            if !self.path.is_empty() {
                self.path.push('/');
            }
            self.path.push('d');
            self.path.push_str(&index.to_string());
            self.stack.push((self.shape.children(level, j), 0));
            return Some(&self.path);
        }
    }

    /// Drops the last component of the path (a directory whose children are all made).
    fn pop_component(&mut self) {
        let cut = self.path.rfind('/').unwrap_or(0);
        self.path.truncate(cut);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(s: &Shape) -> Vec<String> {
        let mut w = s.walk();
        let mut out = Vec::new();
        while let Some(p) = w.next_path() {
            out.push(p.to_string());
        }
        out
    }

    #[test]
    fn the_seed_s_tree_has_its_count_and_depth() {
        // Seed 002: 800,000 directories by 8 threads, depth 10: 100,000 each.
        let s = Shape::new(100_000, 10).unwrap();
        assert_eq!(s.fan_out[..9], [3; 9]);
        assert_eq!(s.per_level.iter().sum::<u64>(), 100_000);
        assert_eq!(s.per_level.len(), 10);
        let paths = all(&s);
        assert_eq!(paths.len(), 100_000);
        let deepest = paths.iter().map(|p| p.split('/').count()).max();
        assert_eq!(deepest, Some(10));
        let unique: std::collections::HashSet<&String> = paths.iter().collect();
        assert_eq!(unique.len(), paths.len());
    }

    #[test]
    fn parents_come_before_their_children() {
        for (dirs, depth) in [(2500, 10), (10, 10), (7, 1), (100, 3), (1000, 2)] {
            let s = Shape::new(dirs, depth).unwrap();
            let paths = all(&s);
            assert_eq!(paths.len() as u64, dirs, "{dirs} in {depth}");
            let mut made = std::collections::HashSet::new();
            for p in &paths {
                if let Some((parent, _)) = p.rsplit_once('/') {
                    assert!(made.contains(parent), "{p} before {parent}");
                }
                made.insert(p.clone());
            }
            let per_level: Vec<u64> = (1..=depth)
                .map(|l| {
                    paths
                        .iter()
                        .filter(|p| p.split('/').count() as u64 == l)
                        .count() as u64
                })
                .collect();
            assert_eq!(per_level, s.per_level, "{dirs} in {depth}");
        }
    }

    #[test]
    fn impossible_shapes_are_refused() {
        assert_eq!(Shape::new(5, 10), None);
        assert_eq!(Shape::new(5, 0), None);
        let chain = Shape::new(4, 4).unwrap();
        assert_eq!(chain.fan_out, [1, 1, 1, 1]);
        assert_eq!(all(&chain), ["d0", "d0/d0", "d0/d0/d0", "d0/d0/d0/d0"]);
    }
}
