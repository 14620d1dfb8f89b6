//! Typed errors of the simulator: every message names the parameter and what is allowed.

/// What can go wrong loading a machine or a trace, or building a workload.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A machine description that does not parse.
    #[error("machine description '{origin}': {message}")]
    Config {
        /// The file or built-in read.
        origin: String,
        /// What does not parse.
        message: String,
    },
    /// A value out of its range.
    #[error("invalid {name} '{value}': allowed {allowed}")]
    Invalid {
        /// The parameter (option or field).
        name: &'static str,
        /// The value given.
        value: String,
        /// The allowed range.
        allowed: String,
    },
    /// A numeric field of a machine description (or a `--set` value) out of its range: where
    /// it came from (a file and, where the value is in that file, its line; or the `--set`
    /// that gave it), the field's dotted path, the value and the allowed range.
    #[error("{}invalid {name} '{value}': allowed {allowed}", at(origin, line))]
    Field {
        /// The file or built-in read.
        origin: String,
        /// The line of the file, when known.
        line: Option<usize>,
        /// The field's dotted path.
        name: String,
        /// The value given.
        value: String,
        /// The allowed range.
        allowed: String,
    },
    /// A cycle, word or byte count that does not fit its type (or is not finite): the
    /// inputs are within their ranges one by one but too large together.
    #[error("arithmetic overflow: {0}")]
    Overflow(String),
    /// A trace that does not parse or does not fit the machine.
    #[error("trace: {0}")]
    Trace(String),
    /// File I/O.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// A primary function failed (a malformed workload).
    #[error(transparent)]
    Math(#[from] tessera_math::MathError),
    /// A model that the simulator does not support.
    #[error("not supported: {0}")]
    Unsupported(String),
}

/// `origin line N: ` (or less, as far as known) before a field error.
fn at(origin: &str, line: &Option<usize>) -> String {
    match (origin.is_empty(), line) {
        (true, _) => String::new(),
        (false, Some(l)) => format!("{origin} line {l}: "),
        (false, None) => format!("{origin}: "),
    }
}
