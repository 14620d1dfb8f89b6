//! Word-size modular arithmetic for moduli of up to 62 bits.
//!
//! Three multiplication methods, each where it pays:
//! * **Barrett** (`mul`, `reduce_u128`): general products of two variables; one 128-bit product
//!   and a precomputed `floor(2^128 / q)`.
//! * **Shoup** (`mul_shoup`, `mul_shoup_lazy`): products by a fixed operand `w` with the
//!   precomputed quotient `w' = floor(w * 2^64 / q)`; two 64-bit multiplies and no correction in
//!   the lazy form. This is what the NTT butterflies and the BConv scaling use.
//! * **Montgomery** ([`Montgomery`]): products in the Montgomery domain, for long chains of
//!   multiplications (exponentiation) where the domain conversion amortises.
//!
//! The 62-bit ceiling keeps `4q < 2^64`, which the lazy (Harvey) NTT butterflies need: values
//! are kept in `[0, 4q)` between stages and reduced only at the end.

use crate::error::{MathError, Result};

/// Largest supported modulus size in bits (lazy butterflies keep values below `4q < 2^64`).
pub const MAX_MODULUS_BITS: u32 = 62;
/// Smallest supported modulus size in bits.
pub const MIN_MODULUS_BITS: u32 = 2;

/// A word-size modulus with its Barrett constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Modulus {
    q: u64,
    /// `floor(2^128 / q)`, the Barrett ratio, split into low and high words.
    ratio_lo: u64,
    ratio_hi: u64,
    bits: u32,
}

impl Modulus {
    /// Builds a modulus; `q` must have between 2 and 62 bits. Primality is not required here
    /// (see [`crate::primes::is_prime`]); NTT plans check it.
    pub fn new(q: u64) -> Result<Self> {
        let bits = 64 - q.leading_zeros();
        if !(MIN_MODULUS_BITS..=MAX_MODULUS_BITS).contains(&bits) {
            return Err(MathError::ModulusOutOfRange {
                q,
                bits,
                min_bits: MIN_MODULUS_BITS,
                max_bits: MAX_MODULUS_BITS,
            });
        }
        // floor(2^128 / q) = floor((2^128 - 1) / q), plus one when q divides 2^128.
        let mut ratio = u128::MAX / q as u128;
        if (u128::MAX % q as u128) == q as u128 - 1 {
            ratio += 1;
        }
        Ok(Self {
            q,
            ratio_lo: ratio as u64,
            ratio_hi: (ratio >> 64) as u64,
            bits,
        })
    }

    /// The modulus value.
    #[inline(always)]
    pub fn value(&self) -> u64 {
        self.q
    }

    /// Bit length of the modulus.
    #[inline(always)]
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// `(a + b) mod q` for `a, b < q`.
    #[inline(always)]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        let s = a + b;
        if s >= self.q {
            s - self.q
        } else {
            s
        }
    }

    /// `(a - b) mod q` for `a, b < q`.
    #[inline(always)]
    pub fn sub(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            a - b
        } else {
            a + self.q - b
        }
    }

    /// `-a mod q` for `a < q`.
    #[inline(always)]
    pub fn neg(&self, a: u64) -> u64 {
        if a == 0 {
            0
        } else {
            self.q - a
        }
    }

    /// Barrett reduction of a 128-bit value: `x mod q`.
    #[inline(always)]
    pub fn reduce_u128(&self, x: u128) -> u64 {
        let x0 = x as u64;
        let x1 = (x >> 64) as u64;
        // Estimate floor(x * ratio / 2^128) from the four 64x64 partial products; the dropped
        // low part makes the estimate at most 2 too small, fixed by the corrections below.
        let carry = ((x0 as u128 * self.ratio_lo as u128) >> 64) as u64;
        let m0 = x0 as u128 * self.ratio_hi as u128 + carry as u128;
        let m1 = x1 as u128 * self.ratio_lo as u128 + (m0 as u64) as u128;
        let q_est = x1
            .wrapping_mul(self.ratio_hi)
            .wrapping_add((m0 >> 64) as u64)
            .wrapping_add((m1 >> 64) as u64);
        let mut r = x0.wrapping_sub(q_est.wrapping_mul(self.q));
        while r >= self.q {
            r -= self.q;
        }
        r
    }

    /// Reduces one word: `x mod q`.
    #[inline(always)]
    pub fn reduce(&self, x: u64) -> u64 {
        // One word needs only the high part of the ratio: with ratio = floor(2^128 / q),
        // x/q - x*ratio_hi/2^64 < 2, so the estimate is at most 2 short (two multiplies
        // instead of the five of `reduce_u128`).
        let q_est = ((x as u128 * self.ratio_hi as u128) >> 64) as u64;
        let mut r = x.wrapping_sub(q_est.wrapping_mul(self.q));
        while r >= self.q {
            r -= self.q;
        }
        r
    }

    /// Reduces a signed integer into `[0, q)`.
    #[inline(always)]
    pub fn reduce_i64(&self, x: i64) -> u64 {
        let r = self.reduce(x.unsigned_abs());
        if x < 0 {
            self.neg(r)
        } else {
            r
        }
    }

    /// Barrett product `a * b mod q` for any `a, b < 2^64`.
    #[inline(always)]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128)
    }

    /// `a * b + c mod q`.
    #[inline(always)]
    pub fn mul_add(&self, a: u64, b: u64, c: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128 + c as u128)
    }

    /// Shoup's precomputed quotient `floor(w * 2^64 / q)` for a fixed operand `w < q`.
    #[inline(always)]
    pub fn shoup(&self, w: u64) -> u64 {
        debug_assert!(w < self.q);
        (((w as u128) << 64) / self.q as u128) as u64
    }

    /// Lazy Shoup product: returns a value congruent to `x * w` in `[0, 2q)` for any `x < 2^64`.
    #[inline(always)]
    pub fn mul_shoup_lazy(&self, x: u64, w: u64, w_shoup: u64) -> u64 {
        let qhat = ((x as u128 * w_shoup as u128) >> 64) as u64;
        x.wrapping_mul(w).wrapping_sub(qhat.wrapping_mul(self.q))
    }

    /// Shoup product `x * w mod q` in `[0, q)`.
    #[inline(always)]
    pub fn mul_shoup(&self, x: u64, w: u64, w_shoup: u64) -> u64 {
        let r = self.mul_shoup_lazy(x, w, w_shoup);
        if r >= self.q {
            r - self.q
        } else {
            r
        }
    }

    /// `base^exp mod q` by square-and-multiply in the Montgomery domain.
    pub fn pow(&self, base: u64, exp: u64) -> u64 {
        Montgomery::new(*self).pow(self.reduce(base), exp)
    }

    /// Multiplicative inverse of `a` modulo a prime `q` (Fermat); `None` for `a = 0 mod q`.
    pub fn inv(&self, a: u64) -> Option<u64> {
        let a = self.reduce(a);
        if a == 0 {
            return None;
        }
        let r = self.pow(a, self.q - 2);
        (self.mul(r, a) == 1).then_some(r)
    }

    /// Centered lift of `a in [0, q)` to `(-q/2, q/2]`.
    #[inline(always)]
    pub fn center(&self, a: u64) -> i64 {
        if a > self.q / 2 {
            a as i64 - self.q as i64
        } else {
            a as i64
        }
    }
}

/// Montgomery arithmetic with `R = 2^64` for an odd modulus.
#[derive(Clone, Copy, Debug)]
pub struct Montgomery {
    m: Modulus,
    /// `-q^{-1} mod 2^64`.
    q_neg_inv: u64,
    /// `R^2 mod q`, to enter the domain with one Montgomery product.
    r2: u64,
}

impl Montgomery {
    /// Montgomery context for an odd modulus.
    pub fn new(m: Modulus) -> Self {
        let q = m.value();
        assert!(q & 1 == 1, "Montgomery arithmetic needs an odd modulus");
        // Newton iteration for q^{-1} mod 2^64: each step doubles the number of correct bits.
        let mut inv: u64 = q;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(q.wrapping_mul(inv)));
        }
        let r_mod = ((1u128 << 64) % q as u128) as u64;
        let r2 = m.mul(r_mod, r_mod);
        Self {
            m,
            q_neg_inv: inv.wrapping_neg(),
            r2,
        }
    }

    /// Montgomery reduction: `t * R^{-1} mod q` for `t < q * 2^64`.
    #[inline(always)]
    pub fn redc(&self, t: u128) -> u64 {
        let q = self.m.value();
        let m = (t as u64).wrapping_mul(self.q_neg_inv);
        let u = ((t + m as u128 * q as u128) >> 64) as u64;
        if u >= q {
            u - q
        } else {
            u
        }
    }

    /// Montgomery product `a * b * R^{-1} mod q`.
    #[inline(always)]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        self.redc(a as u128 * b as u128)
    }

    /// Maps `a` into the Montgomery domain (`a * R mod q`).
    #[inline(always)]
    pub fn to_mont(&self, a: u64) -> u64 {
        self.mul(a, self.r2)
    }

    /// Maps out of the Montgomery domain.
    #[inline(always)]
    pub fn from_mont(&self, a: u64) -> u64 {
        self.redc(a as u128)
    }

    /// `base^exp mod q` (inputs and output in the normal domain).
    pub fn pow(&self, base: u64, exp: u64) -> u64 {
        let mut result = self.to_mont(1);
        let mut b = self.to_mont(base);
        let mut e = exp;
        while e > 0 {
            if e & 1 == 1 {
                result = self.mul(result, b);
            }
            b = self.mul(b, b);
            e >>= 1;
        }
        self.from_mont(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Primes of 2 to 62 bits: the largest primes below 2^60, 2^61 and 2^62.
    const QS: [u64; 5] = [3, 65537, (1 << 60) - 93, (1 << 61) - 1, (1 << 62) - 57];

    #[test]
    fn rejects_out_of_range() {
        assert!(Modulus::new(1).is_err());
        assert!(Modulus::new(1 << 62).is_err());
        assert!(Modulus::new((1 << 62) - 1).is_ok());
    }

    #[test]
    fn one_word_reduction_at_the_edges() {
        for &q in QS.iter().chain(&[2u64, 3, (1 << 62) - 57, (1 << 32) + 15]) {
            let Ok(m) = Modulus::new(q) else { continue };
            for x in [
                0,
                1,
                q - 1,
                q,
                q + 1,
                2 * q,
                u64::MAX,
                u64::MAX - q,
                u64::MAX / q * q,
            ] {
                assert_eq!(m.reduce(x), x % q, "x = {x}, q = {q}");
            }
        }
    }

    proptest! {
        #[test]
        fn barrett_matches_u128(a in any::<u64>(), b in any::<u64>(), qi in 0usize..5) {
            let m = Modulus::new(QS[qi]).unwrap();
            let q = QS[qi] as u128;
            prop_assert_eq!(m.mul(a, b) as u128, (a as u128 * b as u128) % q);
            prop_assert_eq!(m.reduce(a) as u128, a as u128 % q);
            let x = ((a as u128) << 64) | b as u128;
            prop_assert_eq!(m.reduce_u128(x) as u128, x % q);
        }

        #[test]
        fn shoup_matches_u128(x in any::<u64>(), w in any::<u64>(), qi in 0usize..5) {
            let m = Modulus::new(QS[qi]).unwrap();
            let q = QS[qi];
            let w = w % q;
            let ws = m.shoup(w);
            let lazy = m.mul_shoup_lazy(x, w, ws);
            prop_assert!(lazy < 2 * q);
            prop_assert_eq!(m.mul_shoup(x, w, ws) as u128, (x as u128 * w as u128) % q as u128);
        }

        #[test]
        fn montgomery_matches_u128(a in any::<u64>(), b in any::<u64>(), qi in 0usize..5) {
            let m = Modulus::new(QS[qi]).unwrap();
            let mt = Montgomery::new(m);
            let (a, b) = (a % QS[qi], b % QS[qi]);
            let prod = mt.from_mont(mt.mul(mt.to_mont(a), mt.to_mont(b)));
            prop_assert_eq!(prod, m.mul(a, b));
        }

        #[test]
        fn inverse_is_inverse(a in 1u64.., qi in 1usize..5) {
            let m = Modulus::new(QS[qi]).unwrap();
            if let Some(inv) = m.inv(a) {
                prop_assert_eq!(m.mul(inv, a), 1);
            } else {
                prop_assert_eq!(a % QS[qi], 0);
            }
        }
    }
}
