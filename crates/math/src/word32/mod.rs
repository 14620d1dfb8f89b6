//! 32-bit words: arithmetic, NTT and element-wise primaries for primes below 2^30, stored as
//! `u32` (issue 22 item 3).
//!
//! Why: a 32-bit lane doubles the SIMD lanes of a 64-bit one (8 on AVX2, 16 on AVX-512) and
//! halves the memory traffic per limb, while AVX2 and AVX-512F multiply 32-bit words natively
//! (`vpmuludq`, `vpmulld`) instead of emulating 64-bit products from four 32-bit ones. A 60-bit
//! modulus costs two 30-bit limbs, so the word size pays when two 32-bit transforms beat one
//! 64-bit transform; docs/benchmarks.md ("32-bit words") records the measurement per kernel.
//!
//! Contents: [`Modulus32`], [`generate_ntt_primes32`], [`NttPlan32`], [`pointwise`], the
//! inner-product row [`dot::dot_row_u32`], [`automorphism`], the BConv row
//! [`bconv::mac_row_u32`] and the whole conversion [`BaseConverter32`]. `RnsPoly` stays on
//! 64-bit words; `tessera_backend::Cpu32Backend` computes every primary on these kernels,
//! narrowing on load and widening on store, and equals the 64-bit CPU backend bit for bit.
//!
//! Kernels follow `TESSERA_SIMD` ([`crate::simd`]) as every other primary does: scalar, AVX2
//! and AVX-512F (the IFMA setting runs the AVX-512F code, IFMA's 52-bit products add nothing for
//! 32-bit words). Every vector kernel equals the scalar one bit for bit.
//!
//! ```
//! use tessera_math::word32::{generate_ntt_primes32, NttPlan32};
//!
//! # fn main() -> tessera_math::Result<()> {
//! let n = 1 << 10;
//! let q = generate_ntt_primes32(28, n, 1, &[])?[0];
//! let plan = NttPlan32::new(n, q as u64)?;
//! let a: Vec<u32> = (0..n as u32).collect();
//! let mut b = a.clone();
//! plan.forward(&mut b)?;
//! plan.inverse(&mut b)?;
//! assert_eq!(a, b);
//! // Primes of 31 or more bits are refused: they need 64-bit words.
//! assert!(generate_ntt_primes32(31, n, 1, &[]).is_err());
//! # Ok(())
//! # }
//! ```

pub mod automorphism;
pub mod bconv;
pub mod dot;
mod lanes;
mod modulus;
mod ntt;
pub mod pointwise;
#[cfg(target_arch = "x86_64")]
mod x86;

pub use bconv::BaseConverter32;
pub use modulus::{Modulus32, MAX_MODULUS_BITS32, MIN_MODULUS_BITS32};
pub use ntt::{supports, NttPlan32};

use crate::error::{MathError, Result};
use crate::RingContext;

/// The first prime of `ring` that 32-bit words cannot hold (`2^30` or more), if any. A ring
/// without one runs on 32-bit words: the CPU's 32-bit backend, the CUDA backend's `_w32`
/// kernels (both keep lazy values below `4q < 2^32`).
///
/// ```
/// use tessera_math::{word32, RingContext};
/// let small = RingContext::new(16, &[998_244_353]).unwrap();
/// assert!(word32::prime_too_large(&small).is_none());
/// let large = RingContext::new(16, &[1_152_921_504_606_584_833]).unwrap();
/// assert_eq!(word32::prime_too_large(&large), Some(1_152_921_504_606_584_833));
/// ```
pub fn prime_too_large(ring: &RingContext) -> Option<u64> {
    ring.moduli()
        .iter()
        .map(|m| m.value())
        .find(|&q| q >> MAX_MODULUS_BITS32 != 0)
}

/// `Ok` when every prime of `ring` fits 32-bit words, else the refusal of a 32-bit word size
/// for it, naming the prime (what a `--word 32` or `TESSERA_WORD=32` request gets).
pub fn check_word_size(ring: &RingContext) -> Result<()> {
    match prime_too_large(ring) {
        None => Ok(()),
        Some(q) => Err(MathError::OutOfRange {
            name: "word size",
            value: "32".into(),
            allowed: format!("64 for this ring: its prime {q} is not below 2^{MAX_MODULUS_BITS32}"),
        }),
    }
}

/// `count` distinct NTT-friendly primes (`q = 1 mod 2N`) of exactly `bits <= 30` bits, as
/// [`crate::primes::generate_ntt_primes`] finds them (scanning down from `2^bits`,
/// deterministic), returned as 32-bit words.
pub fn generate_ntt_primes32(
    bits: u32,
    n: usize,
    count: usize,
    exclude: &[u32],
) -> Result<Vec<u32>> {
    if bits > MAX_MODULUS_BITS32 {
        let min = (64 - (2 * n as u64).leading_zeros()) + 1;
        return Err(MathError::PrimeBitsOutOfRange {
            bits,
            min,
            max: MAX_MODULUS_BITS32,
        });
    }
    let exclude: Vec<u64> = exclude.iter().map(|&q| q as u64).collect();
    let primes = crate::primes::generate_ntt_primes(bits, n, count, &exclude)?;
    Ok(primes.into_iter().map(|q| q as u32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_for_every_degree_up_to_2_17() {
        // A 2^16 preset needs tens of ~28-bit primes; 2^17 still has plenty of 30-bit ones.
        for (bits, n, count) in [
            (28u32, 1usize << 16, 40),
            (30, 1 << 17, 20),
            (25, 1 << 10, 8),
        ] {
            let ps = generate_ntt_primes32(bits, n, count, &[]).unwrap();
            assert_eq!(ps.len(), count);
            for &p in &ps {
                assert_eq!(32 - p.leading_zeros(), bits);
                crate::primes::check_ntt_prime(p as u64, n).unwrap();
            }
            let more = generate_ntt_primes32(bits, n, 2, &ps).unwrap();
            assert!(more.iter().all(|p| !ps.contains(p)));
        }
        assert!(matches!(
            generate_ntt_primes32(31, 1 << 10, 1, &[]),
            Err(MathError::PrimeBitsOutOfRange { max: 30, .. })
        ));
        assert!(generate_ntt_primes32(12, 1 << 12, 1, &[]).is_err());
    }
}
