//! Typed errors of experiments: the simulator's, the programs', and those of a target file.

use tessera_programs::ProgramError;
use tessera_sim::SimError;

/// What can go wrong recording and simulating, or reading the targets.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// Loading a machine or simulating.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// Recording a workload.
    #[error(transparent)]
    Program(ProgramError),
    /// A target file that does not parse or names what does not exist: the file, the row
    /// (1-based, in file order) and its item where known.
    #[error("target file {file}{}: {message}", row_at(*row, item))]
    Target {
        file: String,
        row: Option<usize>,
        item: String,
        message: String,
    },
}

fn row_at(row: Option<usize>, item: &str) -> String {
    match row {
        Some(r) if item.is_empty() => format!(" row {r}"),
        Some(r) => format!(" row {r} ('{item}')"),
        None => String::new(),
    }
}

/// A parameter out of its set keeps the simulator's wording ("invalid workload 'x': allowed
/// ..."), which the CLI printed before the workloads moved to the programs crate.
impl From<ProgramError> for LabError {
    fn from(e: ProgramError) -> Self {
        match e {
            ProgramError::Invalid {
                name,
                value,
                allowed,
            } => LabError::Sim(SimError::Invalid {
                name,
                value,
                allowed,
            }),
            e => LabError::Program(e),
        }
    }
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, LabError>;
