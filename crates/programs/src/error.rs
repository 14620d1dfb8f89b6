//! Typed errors of the programs crate: bad input names the parameter and what is allowed.

use tessera_ckks::CkksError;

/// What can go wrong preparing, running or checking a program.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
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
    /// A data file that is missing or unreadable.
    #[error("data file {file}: {message} (data directory {dir}; set it with --data DIR or TESSERA_DATA; the files are described in shared/data/README.md)")]
    Data {
        /// The file name.
        file: String,
        /// The directory searched.
        dir: String,
        /// What went wrong.
        message: String,
    },
    /// A data file whose contents do not have the expected shape or type.
    #[error("data file {file} has the wrong shape: {message}")]
    Shape {
        /// The file name.
        file: String,
        /// What was expected and found.
        message: String,
    },
    /// A trace file that does not parse (a workload read from a file).
    #[error("trace: {0}")]
    Trace(String),
    /// Something the program does not implement.
    #[error("not supported: {0}")]
    Unsupported(String),
    /// An error of the BFV layer.
    #[error(transparent)]
    Bfv(#[from] tessera_bfv::BfvError),
    /// An error of the CKKS layer.
    #[error(transparent)]
    Ckks(#[from] CkksError),
}

impl From<tessera_math::MathError> for ProgramError {
    fn from(e: tessera_math::MathError) -> Self {
        ProgramError::Ckks(CkksError::from(e))
    }
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, ProgramError>;
