//! Typed errors of the CKKS layer.

use tessera_math::MathError;
use thiserror::Error;

/// Errors raised by the CKKS layer.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CkksError {
    /// An error from the math layer (ring degree, primes, limb sets, ...).
    #[error(transparent)]
    Math(#[from] MathError),

    /// A parameter is outside its allowed range.
    #[error("parameter {name} = {value} is invalid: {allowed}")]
    InvalidParameter {
        name: &'static str,
        value: String,
        allowed: String,
    },

    /// The parameters do not reach 128-bit security and are not a `test-*` set.
    #[error(
        "parameter set '{name}' is not 128-bit secure: log2(PQ) = {log_qp:.1} exceeds the bound {bound} for N = {n} ({source_table}); only sets named test-* may be insecure"
    )]
    Insecure {
        name: String,
        n: usize,
        log_qp: f64,
        bound: String,
        source_table: &'static str,
    },

    /// No preset has this name.
    #[error("unknown parameter preset '{0}'; known presets: {1}")]
    UnknownPreset(String, String),

    /// Too many values for the slots available.
    #[error("{what}: {found} values do not fit in {slots} slots (slots must be a power of two up to N/2 = {max})")]
    TooManyValues {
        what: &'static str,
        found: usize,
        slots: usize,
        max: usize,
    },
}

/// Convenience alias used across the CKKS layer.
pub type Result<T> = std::result::Result<T, CkksError>;
