//! Where a request's instructions come from: a program of the programs registry (recorded on
//! the trace backend, one steady-state window), a built-in workload (HE operations,
//! bootstrapping, CoFHEE's 128-bit recordings) or a tessera-trace file.

use crate::error::Result;
use crate::request::Request;
use tessera_programs::workloads::{load, Workload, WorkloadSpec, WORKLOADS};
use tessera_sim::arch::Arch;
use tessera_sim::SimError;

/// What a program's recording holds: `units` of `unit` (iterations, images), e.g. HELR's
/// steady-state window of the iterations between two bootstrappings and that bootstrapping.
#[derive(Clone, Debug)]
pub struct Window {
    pub units: usize,
    pub unit: &'static str,
    pub what: String,
    /// Levels between bootstrappings (L_eff).
    pub levels_per_boot: usize,
    /// Units in one whole run of the program (sort: its steps), where a run has a fixed size.
    pub per_run: Option<usize>,
    /// Bootstrappings in the recording.
    pub boots: usize,
}

impl Window {
    /// What the steady-state recording `r` of a program holds.
    pub fn of(r: &tessera_programs::report::Recorded) -> Self {
        Self {
            units: r.iterations,
            unit: r.unit,
            what: r.window.clone(),
            levels_per_boot: r.levels_per_boot,
            per_run: r.per_run,
            boots: r.boots,
        }
    }
}

/// Whether `name` is a registered program.
pub fn is_program(name: &str) -> bool {
    tessera_programs::PROGRAMS.contains(&name)
}

/// Records or reads the workload of `r` for `arch` (whose kind picks the default parameter
/// set of a built-in workload: `ark` on vector machines, `cofhee-n12` on single-PE ones).
/// `progress` is told what is being recorded.
pub fn workload(
    r: &Request,
    arch: &Arch,
    progress: &dyn Fn(&str),
) -> Result<(Workload, Option<Window>)> {
    let default_params = match arch {
        Arch::Vector(_) => "ark",
        Arch::Pe(_) => "cofhee-n12",
    };
    record(r, default_params, progress)
}

/// Records or reads the workload of `r` (`r.arch` is not read); a built-in workload without
/// `r.params` is recorded at `default_params`. Python's `tessera.record` calls this, so a
/// sweep records once and simulates the recording per design point ([`crate::simulate`]).
pub fn record(
    r: &Request,
    default_params: &str,
    progress: &dyn Fn(&str),
) -> Result<(Workload, Option<Window>)> {
    if is_program(&r.workload) {
        let (w, n) = program(r, progress)?;
        return Ok((w, Some(n)));
    }
    if r.size.is_some() || r.data.is_some() {
        return Err(SimError::Unsupported(format!(
            "--size and --data apply to programs ({}), not to '{}'",
            tessera_programs::PROGRAMS.join(", "),
            r.workload
        ))
        .into());
    }
    let params = r.params.clone().unwrap_or_else(|| default_params.into());
    let mut spec = WorkloadSpec::new(&r.workload, &params);
    spec.level = r.level;
    spec.of_limb = r.of_limb;
    spec.min_ks = r.min_ks;
    spec.hoisting = r.hoisting;
    spec.double_hoisting = r.double_hoisting;
    spec.dataflow = tessera_ckks::KeySwitchDataflow::streamed_if(r.streamed_keyswitch);
    if WORKLOADS.contains(&r.workload.as_str()) {
        progress(&format!(
            "recording the '{}' workload at '{params}'",
            r.workload
        ));
    }
    Ok((load(&spec)?, None))
}

/// A program recorded on the trace backend (`tessera_programs::record`, steady state).
fn program(r: &Request, progress: &dyn Fn(&str)) -> Result<(Workload, Window)> {
    for (flag, set) in [
        ("--level", r.level.is_some()),
        ("--no-hoisting", !r.hoisting),
    ] {
        if set {
            return Err(SimError::Unsupported(format!(
                "{flag} with the program '{}' (programs run their parameter set's own circuit, with --min-ks / --of-limb / --streamed-keyswitch added)",
                r.workload
            ))
            .into());
        }
    }
    let opts = tessera_programs::RunOptions {
        params: r.params.clone(),
        size: r.size,
        iterations: None,
        data_dir: r.data.clone(),
        first: None,
    };
    progress(&format!(
        "recording the program '{}' at '{}' (keys, encryption and the trace backend)",
        r.workload,
        opts.params
            .as_deref()
            .unwrap_or(tessera_programs::registry::default_params(&r.workload))
    ));
    // ARK's techniques in the program's bootstrapping circuit (`--min-ks`, `--of-limb`).
    let circuit = tessera_programs::setup::CircuitOptions {
        min_ks: r.min_ks,
        of_limb: r.of_limb,
        double_hoisting: r.double_hoisting,
        dataflow: tessera_ckks::KeySwitchDataflow::streamed_if(r.streamed_keyswitch),
    };
    // The program's own typed error ("not supported: ...", "invalid size ..."), once.
    let rec = tessera_programs::registry::record_with_circuit(&r.workload, &opts, true, circuit)?;
    let window = Window::of(&rec);
    Ok((
        Workload {
            label: rec.label,
            instrs: rec.instrs,
            slots: rec.slots,
            level: 0,
        },
        window,
    ))
}
