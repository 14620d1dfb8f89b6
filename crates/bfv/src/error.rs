//! Typed errors of the BFV layer: bad input names the parameter and its allowed range.

use thiserror::Error;

/// What can go wrong building parameters or evaluating.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BfvError {
    /// A parameter outside its allowed range or set.
    #[error("{name} = {value} is invalid; allowed: {allowed}")]
    Invalid {
        /// The parameter.
        name: &'static str,
        /// The value given.
        value: String,
        /// What is allowed.
        allowed: String,
    },
    /// Operands that do not fit together (sizes, degrees).
    #[error("{what}: expected {expected}, found {found}")]
    Mismatch {
        /// What was compared.
        what: &'static str,
        /// The expected value.
        expected: String,
        /// The value found.
        found: String,
    },
    /// A computation whose result did not decrypt to the clear result (recording checks).
    #[error("check failed: {0}")]
    Check(String),
    /// An error of the math layer.
    #[error(transparent)]
    Math(#[from] tessera_math::MathError),
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, BfvError>;

/// Shorthand for [`BfvError::Invalid`].
pub(crate) fn invalid(
    name: &'static str,
    value: impl ToString,
    allowed: impl Into<String>,
) -> BfvError {
    BfvError::Invalid {
        name,
        value: value.to_string(),
        allowed: allowed.into(),
    }
}
