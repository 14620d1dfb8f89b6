//! Scalar arithmetic modulo a prime below 2^30 on 32-bit words.
//!
//! Why 30 bits and not 31 or 32: the lazy (Harvey) butterflies of [`super::NttPlan32`] keep
//! values in `[0, 4q)` between stages, and the Shoup product `x * w - floor(x * w' / 2^32) * q`
//! lies in `[0, 2q)` for any 32-bit `x`; both need `4q <= 2^32`. Primes of up to 30 bits are
//! also what a 32-bit CKKS preset uses (double-prime rescaling by two ~28-bit primes per level,
//! see docs/benchmarks.md), so the ceiling costs nothing there and saves a correction per
//! butterfly that 31- or 32-bit primes would need.
//!
//! Two products, each where it pays (the same split as the 64-bit [`crate::Modulus`]):
//! * **Shoup** ([`Modulus32::mul_shoup`]) for a fixed operand with its precomputed quotient
//!   `w' = floor(w * 2^32 / q)`: NTT twiddles and constant products. One high and two low
//!   32-bit products.
//! * **Barrett** ([`Modulus32::mul`]) for two variables: `mu = floor(2^(2k) / q)` with `k` the
//!   bit length of `q` (HAC 14.42). No Montgomery domain, so limbs stay in the standard
//!   representation and a 32-bit limb means the same residue as a 64-bit one.

use crate::error::{MathError, Result};

/// Largest supported modulus size in bits (`4q <= 2^32`, see the module documentation).
pub const MAX_MODULUS_BITS32: u32 = 30;
/// Smallest supported modulus size in bits.
pub const MIN_MODULUS_BITS32: u32 = 2;

/// A modulus below 2^30 with its Barrett constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Modulus32 {
    q: u32,
    bits: u32,
    /// `floor(2^(2 bits) / q)`, below `2^(bits + 1) <= 2^31`.
    mu: u32,
}

impl Modulus32 {
    /// Builds a modulus of 2 to 30 bits. Primality is not required here; NTT plans check it.
    pub fn new(q: u64) -> Result<Self> {
        let bits = 64 - q.leading_zeros();
        if !(MIN_MODULUS_BITS32..=MAX_MODULUS_BITS32).contains(&bits) {
            return Err(MathError::ModulusOutOfRange {
                q,
                bits,
                min_bits: MIN_MODULUS_BITS32,
                max_bits: MAX_MODULUS_BITS32,
            });
        }
        let mu = ((1u64 << (2 * bits)) / q) as u32;
        Ok(Self {
            q: q as u32,
            bits,
            mu,
        })
    }

    /// The modulus value.
    #[inline(always)]
    pub fn value(&self) -> u32 {
        self.q
    }

    /// Bit length `k` of the modulus.
    #[inline(always)]
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The Barrett ratio `floor(2^(2k) / q)`.
    #[inline(always)]
    pub fn barrett_mu(&self) -> u32 {
        self.mu
    }

    /// `(a + b) mod q` for `a, b < q`.
    #[inline(always)]
    pub fn add(&self, a: u32, b: u32) -> u32 {
        let s = a + b;
        s.min(s.wrapping_sub(self.q))
    }

    /// `(a - b) mod q` for `a, b < q`.
    #[inline(always)]
    pub fn sub(&self, a: u32, b: u32) -> u32 {
        let d = a.wrapping_sub(b);
        d.min(d.wrapping_add(self.q))
    }

    /// `-a mod q` for `a < q`.
    #[inline(always)]
    pub fn neg(&self, a: u32) -> u32 {
        self.sub(0, a)
    }

    /// Barrett reduction of `x < 2^(2k)` (any product of two residues) to `[0, q)`.
    #[inline(always)]
    pub fn reduce_product(&self, x: u64) -> u32 {
        debug_assert!(x < 1u64 << (2 * self.bits));
        let q1 = x >> (self.bits - 1);
        let q3 = (q1 * self.mu as u64) >> (self.bits + 1);
        // HAC 14.42: x - q3 q < 3q < 2^32, so the low words suffice.
        let r = (x as u32).wrapping_sub((q3 as u32).wrapping_mul(self.q));
        let r = r.min(r.wrapping_sub(self.q));
        r.min(r.wrapping_sub(self.q))
    }

    /// Reduces any 64-bit word (`x mod q`); not on a hot path.
    #[inline(always)]
    pub fn reduce_u64(&self, x: u64) -> u32 {
        (x % self.q as u64) as u32
    }

    /// Barrett product `a * b mod q` for `a, b < q`.
    #[inline(always)]
    pub fn mul(&self, a: u32, b: u32) -> u32 {
        self.reduce_product(a as u64 * b as u64)
    }

    /// Shoup's precomputed quotient `floor(w * 2^32 / q)` for a fixed operand `w < q`.
    #[inline(always)]
    pub fn shoup(&self, w: u32) -> u32 {
        debug_assert!(w < self.q);
        (((w as u64) << 32) / self.q as u64) as u32
    }

    /// Lazy Shoup product: a value congruent to `x * w` in `[0, 2q)` for any `x < 2^32`.
    #[inline(always)]
    pub fn mul_shoup_lazy(&self, x: u32, w: u32, w_shoup: u32) -> u32 {
        let qhat = ((x as u64 * w_shoup as u64) >> 32) as u32;
        x.wrapping_mul(w).wrapping_sub(qhat.wrapping_mul(self.q))
    }

    /// Shoup product `x * w mod q` in `[0, q)`.
    #[inline(always)]
    pub fn mul_shoup(&self, x: u32, w: u32, w_shoup: u32) -> u32 {
        let r = self.mul_shoup_lazy(x, w, w_shoup);
        r.min(r.wrapping_sub(self.q))
    }

    /// `base^exp mod q` by square-and-multiply.
    pub fn pow(&self, base: u32, mut exp: u64) -> u32 {
        let (mut r, mut b) = (1 % self.q, base % self.q);
        while exp > 0 {
            if exp & 1 == 1 {
                r = self.mul(r, b);
            }
            b = self.mul(b, b);
            exp >>= 1;
        }
        r
    }

    /// Multiplicative inverse modulo a prime `q` (Fermat); `None` for `a = 0 mod q`.
    pub fn inv(&self, a: u32) -> Option<u32> {
        let a = a % self.q;
        if a == 0 {
            return None;
        }
        let r = self.pow(a, self.q as u64 - 2);
        (self.mul(r, a) == 1).then_some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Moduli of 2 to 30 bits: small primes, a composite, and the largest 30-bit prime.
    const QS: [u32; 6] = [3, 97, 12289, 65537, 1_000_000, (1 << 30) - 35];

    #[test]
    fn rejects_out_of_range() {
        assert!(Modulus32::new(1).is_err());
        assert!(Modulus32::new(1 << 30).is_err());
        assert!(Modulus32::new(u64::MAX).is_err());
        assert!(Modulus32::new((1 << 30) - 1).is_ok());
    }

    #[test]
    fn barrett_at_the_edges() {
        for q in QS {
            let m = Modulus32::new(q as u64).unwrap();
            for (a, b) in [(0, 0), (q - 1, q - 1), (q - 1, 1), (q / 2, q - 1)] {
                assert_eq!(m.mul(a, b) as u64, a as u64 * b as u64 % q as u64);
            }
        }
    }

    proptest! {
        #[test]
        fn products_match_u64(a in any::<u32>(), b in any::<u32>(), x in any::<u32>(), qi in 0usize..6) {
            let q = QS[qi];
            let m = Modulus32::new(q as u64).unwrap();
            let (a, b) = (a % q, b % q);
            let want = (a as u64 * b as u64 % q as u64) as u32;
            prop_assert_eq!(m.mul(a, b), want);
            let lazy = m.mul_shoup_lazy(x, b, m.shoup(b));
            prop_assert!(lazy < 2 * q);
            prop_assert_eq!(m.mul_shoup(x, b, m.shoup(b)) as u64, x as u64 * b as u64 % q as u64);
            prop_assert_eq!(m.add(a, b), ((a as u64 + b as u64) % q as u64) as u32);
            prop_assert_eq!(m.sub(a, b), ((a as u64 + q as u64 - b as u64) % q as u64) as u32);
            prop_assert_eq!(m.add(m.neg(a), a), 0);
            if crate::primes::is_prime(q as u64) && a != 0 {
                prop_assert_eq!(m.mul(m.inv(a).unwrap(), a), 1);
            }
        }
    }
}
