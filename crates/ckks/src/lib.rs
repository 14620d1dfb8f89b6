//! # tessera-ckks
//!
//! The CKKS layer of Tessera (`shared/design.md` section 2). This is the start of the CKKS
//! issue: parameters with presets and the 128-bit security check, and the encoder. Keys,
//! encryption, the evaluator over a pluggable backend, key switching and traces follow.
//!
//! ```
//! use tessera_ckks::{Encoder, Parameters};
//!
//! # fn main() -> tessera_ckks::Result<()> {
//! let params = Parameters::preset("ark")?;
//! assert_eq!((params.n(), params.max_level(), params.dnum()), (1 << 16, 23, 4));
//! assert!(params.security().secure_128);
//!
//! let enc = Encoder::new(1 << 10)?;
//! let coeffs = enc.encode_real(&[0.5, -0.25, 1.0], 4, 2f64.powi(40))?;
//! let back = enc.decode(&coeffs.iter().map(|&c| c as f64).collect::<Vec<_>>(), 4, 2f64.powi(40))?;
//! assert!((back[2].re - 1.0).abs() < 1e-9);
//! # Ok(())
//! # }
//! ```

pub mod encoder;
pub mod error;
pub mod params;

pub use encoder::Encoder;
pub use error::{CkksError, Result};
pub use params::{Parameters, ParametersLiteral, Rescaling, SecretDistribution};
