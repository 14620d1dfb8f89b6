//! # tessera-math
//!
//! The math layer of Tessera (see `shared/design.md` section 2): word-size modular arithmetic,
//! NTT-friendly primes, the negacyclic NTT in radix-2 and four-step forms, RNS bases with CRT
//! and fast base conversion (BConv), automorphisms, sampling, and the RNS polynomial type. It
//! knows nothing about CKKS.

pub mod error;
pub mod modular;
pub mod ntt;
pub mod primes;

pub use error::{MathError, Result};
pub use modular::{Modulus, Montgomery};
pub use ntt::{Kernel, NttPlan};
pub mod automorphism;
pub mod parallel;
pub mod poly;
pub mod rns;
pub mod sampling;

pub use poly::{Representation, RingContext, RnsPoly};
pub use rns::{BaseConverter, ConversionMode, RnsBasis};
