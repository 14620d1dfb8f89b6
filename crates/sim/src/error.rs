//! Typed errors of the simulator: every message names the parameter and what is allowed.

/// What can go wrong loading a machine or a trace, or building a workload.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A machine description that does not parse.
    #[error("machine description '{origin}': {message}")]
    Config { origin: String, message: String },
    /// A value out of its range.
    #[error("invalid {name} '{value}': allowed {allowed}")]
    Invalid {
        name: &'static str,
        value: String,
        allowed: String,
    },
    /// A trace that does not parse or does not fit the machine.
    #[error("trace: {0}")]
    Trace(String),
    /// File I/O.
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    /// Building a workload failed in the CKKS layer.
    #[error(transparent)]
    Ckks(#[from] tessera_ckks::CkksError),
    /// A primary function failed (a malformed workload).
    #[error(transparent)]
    Math(#[from] tessera_math::MathError),
    /// A model that the simulator does not support.
    #[error("not supported: {0}")]
    Unsupported(String),
}
