//! The bitonic network with flip masks (workloads.md 5.2), shared by the encrypted program and
//! its replica: the compare-exchange steps and the per-slot masks of each.
//!
//! Bitonic sort of `n = 2^k` values: stages `i = 0..k`, sub-steps at distances
//! `j = 2^i, 2^(i-1), .., 1`, so `k (k + 1) / 2` steps (105 at `2^14`). In a step, slot `p`
//! with bit `j` of `p` clear (a *left* slot) is compared with slot `p + j`; the pair is put in
//! ascending order if bit `i + 1` of `p` is clear, in descending order otherwise.
//!
//! **Flips without levels (ours).** Descending pairs are handled as ascending pairs of negated
//! values (Cheddar multiplies the state by a `+-1` mask before and after each step, two levels).
//! With the flip `f = +-1` of the pair, `a` the left and `b` the right value, `d = a - b` and
//! `c = (f sgn(d) + 1) / 2` the (flipped) comparison, the exchanged pair is
//! `(a - c d, b + c d)` for both directions, and since the composite sign is odd the flip
//! enters only through `c`: `c d = sgn(d) (f d / 2) + d / 2`, two plaintext products of `d` by
//! the masks [`Step::half_flip`] and [`Step::half`] that the step needs anyway. So a step
//! consumes the comparison's levels plus one.

/// One compare-exchange step: stage `stage`, distance `distance`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The stage `i` (blocks of `2^(i + 1)` values are merged).
    pub stage: usize,
    /// The distance `j` between compared slots.
    pub distance: usize,
}

/// The steps of the network on `2^log_n` values, in order.
///
/// ```
/// use tessera_programs::sort::network::steps;
/// assert_eq!(steps(14).len(), 105);
/// let s = steps(2);
/// assert_eq!(s.iter().map(|s| s.distance).collect::<Vec<_>>(), [1, 2, 1]);
/// ```
pub fn steps(log_n: usize) -> Vec<Step> {
    (0..log_n)
        .flat_map(|stage| {
            (0..=stage).rev().map(move |b| Step {
                stage,
                distance: 1 << b,
            })
        })
        .collect()
}

impl Step {
    /// Whether slot `p` is the left slot of a pair.
    pub fn is_left(&self, p: usize) -> bool {
        p & self.distance == 0
    }

    /// The pair's flip: `+1` (ascending) or `-1` (descending) for the left slot `p`.
    pub fn flip(&self, p: usize) -> f64 {
        if p & (2 << self.stage) == 0 {
            1.0
        } else {
            -1.0
        }
    }

    /// The left-slot mask: 1 at left slots, 0 elsewhere.
    pub fn left(&self, n: usize) -> Vec<f64> {
        (0..n)
            .map(|p| f64::from(u8::from(self.is_left(p))))
            .collect()
    }

    /// `1/2` at left slots, 0 elsewhere.
    pub fn half(&self, n: usize) -> Vec<f64> {
        self.left(n).iter().map(|m| m / 2.0).collect()
    }

    /// `f / 2` at left slots (`f` the pair's flip), 0 elsewhere.
    pub fn half_flip(&self, n: usize) -> Vec<f64> {
        (0..n)
            .map(|p| {
                if self.is_left(p) {
                    self.flip(p) / 2.0
                } else {
                    0.0
                }
            })
            .collect()
    }
}

/// The rotations the network uses on `2^log_n` slots: left and right by `1, 2, .., 2^(k-1)`
/// (28 keys at `2^14`, workloads.md 5.2).
pub fn rotations(log_n: usize) -> Vec<i64> {
    let d: Vec<i64> = (0..log_n).map(|b| 1i64 << b).collect();
    d.iter().copied().chain(d.iter().map(|s| -s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The network with exact comparisons sorts every input of 8 and 16 values drawn from a
    /// fixed generator, and every 0/1 input of 8 (the 0-1 principle).
    #[test]
    fn exact_network_sorts() {
        let exact = |x: &mut Vec<f64>, log_n: usize| {
            let n = x.len();
            for s in steps(log_n) {
                for p in (0..n).filter(|&p| s.is_left(p)) {
                    let (a, b) = (x[p], x[p + s.distance]);
                    let c = if s.flip(p) * (a - b) > 0.0 { 1.0 } else { 0.0 };
                    x[p] = a - c * (a - b);
                    x[p + s.distance] = b + c * (a - b);
                }
            }
        };
        for bits in 0u32..256 {
            let mut x: Vec<f64> = (0..8).map(|i| f64::from((bits >> i) & 1)).collect();
            let mut want = x.clone();
            want.sort_by(f64::total_cmp);
            exact(&mut x, 3);
            assert_eq!(x, want, "{bits:08b}");
        }
        let mut x: Vec<f64> = (0..16).map(|i| ((i * 7919 + 13) % 31) as f64).collect();
        let mut want = x.clone();
        want.sort_by(f64::total_cmp);
        exact(&mut x, 4);
        assert_eq!(x, want);
    }

    #[test]
    fn masks_and_keys() {
        let s = Step {
            stage: 1,
            distance: 2,
        };
        assert_eq!(s.left(8), [1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0]);
        assert_eq!(s.half_flip(8), [0.5, 0.5, 0.0, 0.0, -0.5, -0.5, 0.0, 0.0]);
        assert_eq!(rotations(14).len(), 28);
    }
}
