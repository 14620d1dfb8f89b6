//! # tessera-math
//!
//! The math layer of Tessera (see `shared/design.md` section 2): word-size modular arithmetic,
//! NTT-friendly primes, the negacyclic NTT in radix-2 and four-step forms, RNS bases with CRT
//! and fast base conversion (BConv), automorphisms, sampling, and the RNS polynomial type. It
//! knows nothing about CKKS.
//!
//! ```
//! use tessera_math::primes::generate_ntt_primes;
//! use tessera_math::{Representation, RingContext, RnsPoly};
//!
//! # fn main() -> tessera_math::Result<()> {
//! // A ring of degree 2^10 over three 50-bit NTT-friendly primes.
//! let n = 1 << 10;
//! let primes = generate_ntt_primes(50, n, 3, &[])?;
//! let ring = RingContext::new(n, &primes)?;
//! let limbs = [0, 1, 2];
//!
//! // (1 + X) * (1 - X) = 1 - X^2, computed through the NTT.
//! let mut a = vec![0i64; n];
//! a[0] = 1;
//! a[1] = 1;
//! let mut b = vec![0i64; n];
//! b[0] = 1;
//! b[1] = -1;
//! let mut pa = RnsPoly::from_signed(&ring, &limbs, &a)?;
//! let mut pb = RnsPoly::from_signed(&ring, &limbs, &b)?;
//! pa.ntt()?;
//! pb.ntt()?;
//! pa.mul_assign(&pb)?;
//! pa.intt()?;
//! let c = pa.to_centered_bigints()?;
//! assert_eq!(c[0], 1.into());
//! assert_eq!(c[2], (-1).into());
//! assert_eq!(pa.repr(), Representation::Coefficient);
//!
//! // Mismatched limb sets are errors, not garbage.
//! let other = RnsPoly::from_signed(&ring, &[0, 1], &a)?;
//! assert!(pa.add_assign(&other).is_err());
//! # Ok(())
//! # }
//! ```

pub mod aligned;
pub mod error;
pub mod modular;
pub mod ntt;
pub mod primes;

pub use aligned::AlignedVec;
pub use error::{MathError, Result};
pub use modular::{Modulus, Montgomery};
pub use ntt::{Kernel, NttPlan};
pub mod automorphism;
pub mod key_cache;
pub mod parallel;
pub mod pointwise;
pub mod poly;
pub mod rns;
pub mod sampling;
pub mod simd;
#[cfg(test)]
mod testutil;
pub mod wide;
pub mod word32;

pub use poly::{Representation, RingContext, RnsPoly};
pub use rns::{BaseConverter, ConversionMode, RnsBasis};
