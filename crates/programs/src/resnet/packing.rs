//! Multiplexed packing (workloads.md 3.3, FHE-MP-CNN's `TensorCipher`): where each value of
//! a `(c, h, w)` tensor sits in a vector of `n` slots.
//!
//! With gap `k`, `k^2` channels interleave per 2-D position: channel
//! `ch = k^2 u3 + k a + b` (`a, b < k`) at spatial `(i, j)` goes to slot
//! `k^2 h w u3 + k w (k i + a) + (k j + b)`, `u3 < t = ceil(c / k^2)`. The block of `k^2 h w t`
//! slots is repeated `p = 2^floor(log2(n / (k^2 h w t)))` times, `n / p` slots apart. Every
//! other slot holds 0.
//!
//! In this layout one spatial row is `k^2 w` slots and one spatial column `k` slots whatever
//! the channel, which is what lets a 3x3 convolution work with 8 rotations of the whole
//! ciphertext, and a stride-2 output is again multiplexed with gap `2k` without moving the
//! surviving values' row and column strides ([`super::layers`]).

use super::replica::Tensor;
use crate::error::{ProgramError, Result};

/// A multiplexed layout `(k, h, w, c, t, p)` in `n` slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Gap: `k^2` channels per 2-D position.
    pub k: usize,
    /// Height of each channel.
    pub h: usize,
    /// Width of each channel.
    pub w: usize,
    /// Channels.
    pub c: usize,
    /// Slots of the vector.
    pub n: usize,
}

impl Shape {
    /// The layout of `c` channels of `h x w` with gap `k` in `n` slots, checked: `k`, `h`,
    /// `w` and `n` powers of two, and the block fits.
    pub fn new(k: usize, h: usize, w: usize, c: usize, n: usize) -> Result<Self> {
        let s = Self { k, h, w, c, n };
        let pow2 = [k, h, w, n].iter().all(|v| v.is_power_of_two());
        if !pow2 || c == 0 || s.block() > n {
            return Err(ProgramError::Invalid {
                name: "multiplexed shape",
                value: format!("k = {k}, h = {h}, w = {w}, c = {c}, n = {n}"),
                allowed: "k, h, w, n powers of two, c >= 1, k^2 h w ceil(c / k^2) <= n".into(),
            });
        }
        Ok(s)
    }

    /// `t = ceil(c / k^2)`: blocks of `k^2` channels.
    pub fn t(&self) -> usize {
        self.c.div_ceil(self.k * self.k)
    }

    /// Slots of one block, `k^2 h w t`.
    pub fn block(&self) -> usize {
        self.k * self.k * self.h * self.w * self.t()
    }

    /// Copies of the block, `p = 2^floor(log2(n / block))`.
    pub fn p(&self) -> usize {
        let q = self.n / self.block();
        1 << (usize::BITS - 1 - q.leading_zeros())
    }

    /// Slots from one copy to the next, `n / p`.
    pub fn region(&self) -> usize {
        self.n / self.p()
    }

    /// Slot of channel `ch` at `(i, j)` in the first copy.
    pub fn slot(&self, ch: usize, i: usize, j: usize) -> usize {
        let k = self.k;
        let (u3, a, b) = (ch / (k * k), (ch % (k * k)) / k, ch % k);
        k * k * self.h * self.w * u3 + k * self.w * (k * i + a) + (k * j + b)
    }

    /// Slots one spatial row down (`k^2 w`).
    pub fn row(&self) -> usize {
        self.k * self.k * self.w
    }

    /// The layout after a stride-`s` operation to `c` channels: gap `s k`, `h / s x w / s`.
    pub fn strided(&self, s: usize, c: usize) -> Result<Self> {
        Self::new(self.k * s, self.h / s, self.w / s, c, self.n)
    }

    /// A vector with `f(ch, i, j)` at every copy of every valid position, 0 elsewhere.
    pub fn fill(&self, f: impl Fn(usize, usize, usize) -> f64) -> Vec<f64> {
        let mut v = vec![0.0; self.n];
        for ch in 0..self.c {
            for i in 0..self.h {
                for j in 0..self.w {
                    let x = f(ch, i, j);
                    for u in 0..self.p() {
                        v[u * self.region() + self.slot(ch, i, j)] = x;
                    }
                }
            }
        }
        v
    }

    /// `x` packed (its shape must be `(c, h, w)`).
    pub fn pack(&self, x: &Tensor) -> Result<Vec<f64>> {
        if (x.c, x.h, x.w) != (self.c, self.h, self.w) {
            return Err(ProgramError::Invalid {
                name: "tensor shape",
                value: format!("({}, {}, {})", x.c, x.h, x.w),
                allowed: format!("({}, {}, {}) for this layout", self.c, self.h, self.w),
            });
        }
        Ok(self.fill(|ch, i, j| x.at(ch, i, j)))
    }

    /// The tensor in the first copy of `v`.
    pub fn unpack(&self, v: &[f64]) -> Tensor {
        let mut t = Tensor::zeros(self.c, self.h, self.w);
        for ch in 0..self.c {
            for i in 0..self.h {
                for j in 0..self.w {
                    t.data[(ch * self.h + i) * self.w + j] = v[self.slot(ch, i, j)];
                }
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_table_of_workloads_3_3() {
        // n = 2^15 as in FHE-MP-CNN: (k, h, c) -> (t, block, p).
        for (k, h, c, t, block, p) in [
            (1, 32, 3, 3, 3072, 8),
            (1, 32, 16, 16, 16384, 2),
            (2, 16, 32, 8, 8192, 4),
            (4, 8, 64, 4, 4096, 8),
        ] {
            let s = Shape::new(k, h, h, c, 1 << 15).unwrap();
            assert_eq!((s.t(), s.block(), s.p()), (t, block, p), "k = {k}");
        }
        assert!(Shape::new(1, 32, 32, 17, 1 << 14).is_err());
        assert!(Shape::new(3, 8, 8, 4, 1 << 14).is_err());
    }

    #[test]
    fn slots_of_the_spec_formula() {
        let s = Shape::new(2, 4, 4, 8, 256).unwrap();
        // ch = 4 u3 + 2 a + b at (i, j) -> 4 * 16 * u3 + 2 * 4 * (2 i + a) + 2 j + b.
        assert_eq!(s.slot(0, 0, 0), 0);
        assert_eq!(s.slot(1, 0, 0), 1);
        assert_eq!(s.slot(2, 0, 0), 8);
        assert_eq!(s.slot(4, 0, 0), 64);
        assert_eq!(s.slot(7, 3, 2), 64 + 8 * 7 + 5);
        assert_eq!(s.row(), 16);
    }

    proptest! {
        /// Packing is injective: every value lands on its own slot of every copy, the rest are
        /// zero, and unpacking returns the tensor.
        #[test]
        fn pack_unpack_round_trip(lk in 0u32..3, lh in 1u32..4, c in 1usize..20, seed in 0u64..1000) {
            let (k, h) = (1usize << lk, 1usize << lh);
            let n = (k * k * h * h * c.div_ceil(k * k)).next_power_of_two() * 2;
            let s = Shape::new(k, h, h, c, n).unwrap();
            let x = Tensor {
                c, h, w: h,
                data: (0..c * h * h).map(|i| ((i as u64 * 7919 + seed) % 1000) as f64 + 1.0).collect(),
            };
            let v = s.pack(&x).unwrap();
            prop_assert_eq!(s.unpack(&v), x.clone());
            prop_assert_eq!(v.iter().filter(|&&a| a != 0.0).count(), c * h * h * s.p());
            for u in 0..s.p() {
                prop_assert_eq!(s.unpack(&v[u * s.region()..]), x.clone());
            }
        }
    }
}
