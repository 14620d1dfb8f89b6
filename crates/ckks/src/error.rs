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
        /// The parameter.
        name: &'static str,
        /// The value given.
        value: String,
        /// Its allowed range.
        allowed: String,
    },

    /// The parameters do not reach 128-bit security and are not a `test-*` set.
    #[error(
        "parameter set '{name}' is not 128-bit secure: log2(PQ) = {log_qp:.1} exceeds the bound {bound} for N = {n} ({source_table}); only sets named test-* that ask for it (ParametersLiteral::allow_insecure) may be insecure"
    )]
    Insecure {
        /// The parameter set.
        name: String,
        /// Its ring degree.
        n: usize,
        /// Its log2(PQ), in bits.
        log_qp: f64,
        /// The largest log2(PQ) allowed at this N.
        bound: String,
        /// Where the bound comes from.
        source_table: &'static str,
    },

    /// A parameter file that does not parse or whose field is out of range: the file, the
    /// line the field is written on (when it is), and the field with its allowed range.
    #[error("{origin}{}: {message}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
    ParamsFile {
        /// The file (or preset) read.
        origin: String,
        /// The line the field is written on, when known.
        line: Option<usize>,
        /// What is wrong, with the allowed range.
        message: String,
    },

    /// No preset has this name.
    #[error("unknown parameter preset '{0}'; known presets: {1}")]
    UnknownPreset(String, String),

    /// A built-in parameter set that bootstrapping was asked for has no circuit: no
    /// `[bootstrap]` table and no `NAME-boot` preset.
    #[error(
        "parameter set '{0}' has no bootstrapping circuit (no [bootstrap] table and no \
         '{0}-boot' preset); bootstrapping presets: {1}"
    )]
    NoBootstrapCircuit(String, String),

    /// Operands at different levels.
    #[error(
        "{op}: operands are at different levels ({left} and {right}); drop the higher one first"
    )]
    LevelMismatch {
        /// The operation.
        op: &'static str,
        /// The first operand's level.
        left: usize,
        /// The second operand's level.
        right: usize,
    },

    /// Operands at different scales.
    #[error("{op}: operands have different scales (2^{left_log2:.3} and 2^{right_log2:.3})")]
    ScaleMismatch {
        /// The operation.
        op: &'static str,
        /// log2 of the first operand's scale.
        left_log2: f64,
        /// log2 of the second operand's scale.
        right_log2: f64,
    },

    /// An operation needs more levels than the ciphertext has.
    #[error("{op}: needs level >= {needed}, the ciphertext is at level {level}")]
    OutOfLevels {
        /// The operation.
        op: &'static str,
        /// The level it needs.
        needed: usize,
        /// The ciphertext's level.
        level: usize,
    },

    /// Bytes that do not decode to the requested object.
    #[error("cannot deserialise {what}: {reason}")]
    Deserialize {
        /// The object asked for.
        what: &'static str,
        /// Why the bytes do not decode.
        reason: String,
    },

    /// A needed evaluation key was not generated.
    #[error("missing evaluation key: {0}")]
    MissingKey(String),

    /// A feature this build does not implement.
    #[error("not supported: {0}")]
    Unsupported(String),

    /// Objects of two different key generations used together.
    #[error("{op}: objects of different key sets ({left} and {right}): they come from different key generations")]
    KeySetMismatch {
        /// The operation.
        op: &'static str,
        /// The first object's key set.
        left: String,
        /// The second object's key set.
        right: String,
    },

    /// Too many values for the slots available.
    #[error("{what}: {found} values do not fit in {slots} slots (slots must be a power of two up to N/2 = {max})")]
    TooManyValues {
        /// What was being encoded.
        what: &'static str,
        /// The number of values given.
        found: usize,
        /// The slots asked for.
        slots: usize,
        /// N/2, the most slots there are.
        max: usize,
    },
}

impl CkksError {
    /// The operands of `op` are at different levels.
    pub fn level_mismatch(op: &'static str, left: usize, right: usize) -> Self {
        CkksError::LevelMismatch { op, left, right }
    }
}

/// Convenience alias used across the CKKS layer.
pub type Result<T> = std::result::Result<T, CkksError>;
