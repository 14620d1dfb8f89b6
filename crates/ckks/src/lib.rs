//! # tessera-ckks
//!
//! The CKKS layer of Tessera (`shared/design.md` section 2): parameters with presets and the
//! 128-bit security check, the encoder, keys, encryption and decryption, precision statistics,
//! and the evaluator written once over a `tessera_backend::Backend`. Work in progress for the
//! CKKS issue: multiplication with relinearisation, hybrid key switching, rotations, hoisting,
//! the trace backend and the Python package come next.
//!
//! ```
//! use std::sync::Arc;
//! use tessera_backend::CpuBackend;
//! use tessera_ckks::{decrypt, CkksContext, Evaluator, KeyGenerator, Parameters, PrecisionStats};
//! use tessera_math::sampling::Seed;
//!
//! # fn main() -> tessera_ckks::Result<()> {
//! let ctx = CkksContext::new(Parameters::preset("test-small")?)?;
//! let mut keygen = KeyGenerator::new(&ctx)?;
//! let sk = keygen.secret_key()?;
//! let pk = keygen.public_key(&sk)?;
//!
//! let x = [0.5, -0.25, 0.125, 1.0];
//! let level = ctx.params().max_level();
//! let scale = ctx.params().default_scale();
//! let pt = ctx.encode_real(&x, 4, level, scale)?;
//! let ct = keygen.encrypt_pk(&pt, &pk)?;
//!
//! // x * x on the CPU backend, then rescale.
//! let mut eval = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone()))?;
//! let c = eval.load(&ct)?;
//! let sq = eval.mul_plain(&c, &pt)?;
//! let sq = eval.rescale(&sq)?;
//! let out = ctx.decode(&decrypt(&eval.store(&sq)?, &sk)?)?;
//! for (o, v) in out.iter().zip(x) {
//!     assert!((o.re - v * v).abs() < 1e-4);
//! }
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

pub mod bootstrap;
pub mod circuits;
pub mod context;
pub mod costs;
pub mod decomposition;
pub mod encoder;
pub mod error;
pub mod evaluator;
pub mod key_factory;
pub mod keys;
pub mod params;
pub mod params_file;
pub mod precision;
pub mod serialize;
mod shape;

pub use context::{CkksContext, OfLimbPlaintext, Plaintext};
pub use decomposition::KeySwitchPlan;
pub use encoder::Encoder;
pub use error::{CkksError, Result};
pub use evaluator::{Evaluator, ExtCiphertext, ExtFactor, KeySwitchDataflow};
pub use key_factory::{GaloisKeyFactory, KeyRef};
pub use keys::{
    decrypt, Ciphertext, EvaluationKeys, KeyGenerator, KeySetId, PublicKey, SecretKey, SwitchingKey,
};
pub use params::{KeySwitching, Parameters, ParametersLiteral, Rescaling, SecretDistribution};
pub use precision::PrecisionStats;
