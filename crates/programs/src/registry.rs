//! The programs by name: one entry point to run each on the CPU and one to record it, so the
//! CLI, Python and the simulator name programs the same way.

use crate::error::{ProgramError, Result};
use crate::helr;
use crate::report::{Recorded, RunReport};
use std::path::PathBuf;

/// The programs `tessera run` and `tessera simulate --workload` know.
pub const PROGRAMS: &[&str] = &["helr"];

/// What to run, for any program; `None` takes the program's default.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Parameter set ([`crate::setup::PARAMETER_SETS`]).
    pub params: Option<String>,
    /// Program size (HELR: the mini-batch).
    pub size: Option<usize>,
    /// Iterations (HELR: NAG iterations).
    pub iterations: Option<usize>,
    /// Data directory.
    pub data_dir: Option<PathBuf>,
}

/// The defaults: HELR256 at `ark`, 32 iterations.
pub const DEFAULT_PARAMS: &str = "ark";

fn unknown(name: &str) -> ProgramError {
    ProgramError::Invalid {
        name: "program",
        value: name.to_string(),
        allowed: PROGRAMS.join(", "),
    }
}

fn helr_config(o: &RunOptions) -> helr::HelrConfig {
    let mut c = helr::HelrConfig::new(
        o.params.as_deref().unwrap_or(DEFAULT_PARAMS),
        o.size.unwrap_or(256),
    );
    if let Some(i) = o.iterations {
        c.iterations = i;
    }
    c.data_dir = o.data_dir.clone();
    c
}

/// Runs `program` encrypted on the CPU and checks it against its replica.
pub fn run(
    program: &str,
    o: &RunOptions,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<RunReport> {
    match program {
        "helr" => helr::run_cpu(&helr_config(o), progress),
        _ => Err(unknown(program)),
    }
}

/// Records `program` on the trace backend (`steady`: one steady-state window, see
/// [`helr::record`]).
pub fn record(program: &str, o: &RunOptions, steady: bool) -> Result<Recorded> {
    match program {
        "helr" => helr::record(&helr_config(o), steady),
        _ => Err(unknown(program)),
    }
}
