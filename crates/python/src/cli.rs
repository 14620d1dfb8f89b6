//! The `tessera` command line inside the extension: `python -m tessera COMMAND ...` runs the
//! CLI's own code (`tessera_cli::main_with_args`), so a plain `pip install ./crates/python`
//! has every command without a separate binary.

use pyo3::prelude::*;

/// Runs `tessera ARGV...` (argv without the program name) and returns its exit status: 0 on
/// success, 2 on an error (the message is on stderr). Output goes to the process's stdout
/// and stderr (file descriptors 1 and 2), so Python's own buffers are flushed first. Runs
/// without the GIL.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> PyResult<i32> {
    let sys = py.import("sys")?;
    for stream in ["stdout", "stderr"] {
        let s = sys.getattr(stream)?;
        if !s.is_none() {
            s.call_method0("flush")?;
        }
    }
    let args: Vec<String> = std::iter::once("tessera".to_string()).chain(argv).collect();
    Ok(py.detach(|| tessera_cli::main_with_args(args)))
}

/// Adds `cli_main` to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cli_main, m)?)
}
