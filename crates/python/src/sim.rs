//! The simulator from Python, split the way sweeps need it: record a workload once into a
//! `Trace` (picklable, so a Ray sweep ships it through the object store once), then simulate
//! that trace on any machine with any settings. Results cross as the simulator's serde JSON;
//! the Python layer (`tessera.sim`) turns them into `Report` objects, so a user never parses
//! JSON.

use crate::TesseraError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tessera_programs::workloads::Workload;
use tessera_sim::arch::Arch;
use tessera_sim::SimError;

fn sim(e: SimError) -> PyErr {
    TesseraError::new_err(e.to_string())
}

fn lab(e: tessera_lab::LabError) -> PyErr {
    TesseraError::new_err(e.to_string())
}

fn json_err(e: serde_json::Error) -> PyErr {
    TesseraError::new_err(format!("internal JSON error: {e}"))
}

/// A recorded instruction stream (a workload or a program's steady-state window), ready to be
/// simulated on any machine. Pickles (the instructions travel as the trace format's records).
#[pyclass(module = "tessera._native", frozen)]
pub(crate) struct Trace {
    w: Workload,
}

#[pymethods]
impl Trace {
    /// What was recorded (workload, parameters, level).
    #[getter]
    fn label(&self) -> &str {
        &self.w.label
    }

    /// Number of instructions.
    #[getter]
    fn instructions(&self) -> usize {
        self.w.instrs.len()
    }

    /// Slots of the recorded ciphertexts.
    #[getter]
    fn slots(&self) -> usize {
        self.w.slots
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let f = py.import("tessera._native")?.getattr("_trace_from_state")?;
        let body = serde_json::to_vec(&self.w.instrs).map_err(json_err)?;
        (
            f,
            (
                self.w.label.clone(),
                self.w.slots,
                self.w.level,
                PyBytes::new(py, &body),
            ),
        )
            .into_pyobject(py)
            .map(|t| t.into_any())
    }

    fn __repr__(&self) -> String {
        format!(
            "Trace('{}', {} instructions)",
            self.w.label,
            self.w.instrs.len()
        )
    }
}

/// Unpickles a [`Trace`].
#[pyfunction]
fn _trace_from_state(label: String, slots: usize, level: usize, body: &[u8]) -> PyResult<Trace> {
    let instrs = serde_json::from_slice(body)
        .map_err(|e| TesseraError::new_err(format!("not a pickled Trace: {e}")))?;
    Ok(Trace {
        w: Workload {
            label,
            instrs,
            slots,
            level,
        },
    })
}

/// Records `workload` at `params` (a built-in workload, a tessera-trace file, or a program
/// with its `size`) by the same code as `tessera simulate` (`tessera_lab::record`). Runs
/// without the GIL.
#[pyfunction]
#[pyo3(signature = (workload="hmult", params="ark", level=None, of_limb=false, min_ks=false, streamed_keyswitch=false, hoisting=true, size=None, double_hoisting=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn record(
    py: Python<'_>,
    workload: &str,
    params: &str,
    level: Option<usize>,
    of_limb: bool,
    min_ks: bool,
    streamed_keyswitch: bool,
    hoisting: bool,
    size: Option<usize>,
    double_hoisting: bool,
) -> PyResult<Trace> {
    let r = tessera_lab::Request {
        params: Some(params.to_string()),
        level,
        of_limb,
        min_ks,
        streamed_keyswitch,
        hoisting,
        double_hoisting,
        size,
        ..tessera_lab::Request::new("", workload)
    };
    let (w, _window) = py
        .detach(|| tessera_lab::record(&r, params, &|_| {}))
        .map_err(lab)?;
    Ok(Trace { w })
}

/// The engine's windows a simulation asks for (`None`: the defaults): the lookahead window
/// (`window=`, `--window`) and the issue window (`issue_window=`, `--issue-window`), both
/// checked by `tessera_lab::run` / `simulate` as the CLI's are.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Windows {
    pub(crate) lookahead: Option<usize>,
    pub(crate) issue: Option<usize>,
}

/// Simulates `w` on `m` in `mode` (`tessera_lab::simulate`, the simulation half of `tessera
/// simulate`) and returns the report as a JSON value, with `additive_s` / `additive_by_op`
/// when `additive`, and `utilization_series` (busy fraction per unit class in
/// `timeline_bins` time bins) when asked.
pub(crate) fn simulate_workload(
    m: &Arch,
    w: &Workload,
    mode: &str,
    warm: bool,
    additive: bool,
    timeline_bins: Option<usize>,
    windows: Windows,
) -> Result<serde_json::Value, PyErr> {
    let r = tessera_lab::Request {
        mode: tessera_lab::Mode::parse(mode).map_err(sim)?,
        warm,
        additive,
        window: windows.lookahead,
        issue_window: windows.issue,
        keep_schedule: timeline_bins.is_some(),
        ..tessera_lab::Request::new(m.name(), &w.label)
    };
    let out = tessera_lab::simulate(m.clone(), &r, w, None).map_err(lab)?;
    let mut v = out.to_json().map_err(lab)?;
    if let (Some(bins), Some(s), Arch::Vector(vm)) = (timeline_bins, &out.schedule, m) {
        let map: serde_json::Map<String, serde_json::Value> =
            tessera_sim::timeline::utilization_series(vm, s, bins.max(1))
                .into_iter()
                .map(|(k, xs)| (k.to_string(), serde_json::json!(xs)))
                .collect();
        v["utilization_series"] = serde_json::Value::Object(map);
    }
    Ok(v)
}

/// Simulates a recorded `trace` on `arch` (built-in name or TOML file) with `sets` overrides;
/// the report as JSON text for the Python layer. Runs without the GIL.
#[pyfunction]
#[pyo3(signature = (arch, sets, trace, mode="latency", warm=false, additive=false, timeline_bins=None, window=None, issue_window=None))]
#[allow(clippy::too_many_arguments)]
fn _simulate_trace_json(
    py: Python<'_>,
    arch: &str,
    sets: Vec<String>,
    trace: &Trace,
    mode: &str,
    warm: bool,
    additive: bool,
    timeline_bins: Option<usize>,
    window: Option<usize>,
    issue_window: Option<usize>,
) -> PyResult<String> {
    py.detach(|| {
        let m = Arch::load_with(arch, &sets).map_err(sim)?;
        let windows = Windows {
            lookahead: window,
            issue: issue_window,
        };
        let v = simulate_workload(&m, &trace.w, mode, warm, additive, timeline_bins, windows)?;
        Ok(v.to_string())
    })
}

/// Loads and validates `arch` with `sets` applied (as `--arch A --set K=V` would) and returns
/// its description as JSON text for the Python `Machine` object.
#[pyfunction]
fn _machine_json(arch: &str, sets: Vec<String>) -> PyResult<String> {
    let m = Arch::load_with(arch, &sets).map_err(sim)?;
    let v = match &m {
        Arch::Vector(v) => serde_json::to_value(v),
        Arch::Pe(p) => serde_json::to_value(p),
    }
    .map_err(json_err)?;
    Ok(serde_json::json!({"name": m.name(), "model": match m {
        Arch::Vector(_) => "vector", Arch::Pe(_) => "pe" }, "description": v})
    .to_string())
}

/// The built-in machine names.
#[pyfunction]
fn machines() -> Vec<&'static str> {
    tessera_sim::arch::BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// Adds the simulator functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Trace>()?;
    m.add_function(wrap_pyfunction!(_trace_from_state, m)?)?;
    m.add_function(wrap_pyfunction!(record, m)?)?;
    m.add_function(wrap_pyfunction!(_simulate_trace_json, m)?)?;
    m.add_function(wrap_pyfunction!(_machine_json, m)?)?;
    m.add_function(wrap_pyfunction!(machines, m)?)?;
    Ok(())
}
