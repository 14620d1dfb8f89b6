//! The programs (`tessera_programs::registry`) as Python functions: run one encrypted on the
//! CPU, decrypt, check against its plaintext replica, and return the checks, the time per
//! phase and the HE-operation counts (`tessera.programs.run` wraps the result in an object).

use crate::TesseraError;
use pyo3::prelude::*;
use tessera_programs::{registry, RunOptions, PROGRAMS};

/// Runs `program` (see `tessera.programs.run`) and returns its report as JSON text, parsed by
/// the Python wrapper. `progress(phase, done, total)` is called as the program advances (with
/// the GIL taken back for each call). Runs without the GIL otherwise.
// One argument per keyword of `tessera.programs.run`.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (program, params=None, size=None, iterations=None, data=None, progress=None, first=None, min_ks=false, of_limb=false, double_hoisting=false, streamed_keyswitch=false))]
fn _run_program_json(
    py: Python<'_>,
    program: &str,
    params: Option<String>,
    size: Option<usize>,
    iterations: Option<usize>,
    data: Option<std::path::PathBuf>,
    progress: Option<Py<PyAny>>,
    first: Option<usize>,
    min_ks: bool,
    of_limb: bool,
    double_hoisting: bool,
    streamed_keyswitch: bool,
) -> PyResult<String> {
    let opts = RunOptions {
        params,
        size,
        iterations,
        data_dir: data,
        first,
    };
    let r = py.detach(|| {
        let mut tick = |phase: &str, done: usize, total: usize| {
            if let Some(cb) = &progress {
                Python::attach(|py| {
                    // A failing callback must not stop the program; it is reported once below.
                    let _ = cb.call1(py, (phase, done, total));
                });
            }
        };
        let circuit = tessera_programs::setup::CircuitOptions {
            min_ks,
            of_limb,
            double_hoisting,
            dataflow: tessera_ckks::KeySwitchDataflow::streamed_if(streamed_keyswitch),
        };
        registry::run_with_circuit(program, &opts, circuit, &mut tick)
    });
    let r = r.map_err(|e| TesseraError::new_err(e.to_string()))?;
    let mut v = serde_json::to_value(&r).map_err(|e| TesseraError::new_err(e.to_string()))?;
    v["passed"] = serde_json::json!(r.passed());
    Ok(v.to_string())
}

/// The programs `tessera.programs.run` knows.
#[pyfunction]
fn _program_names() -> Vec<&'static str> {
    PROGRAMS.to_vec()
}

/// Adds the program functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_run_program_json, m)?)?;
    m.add_function(wrap_pyfunction!(_program_names, m)?)?;
    Ok(())
}
