//! One entry point for a simulation, [`run`]: the CLI's `tessera simulate` and Python's
//! `tessera.simulate` both build a [`Request`] and call it, so the dispatch (which workload,
//! which model, latency or throughput, warm, additive) exists once.

use crate::error::Result;
use crate::params_fit::{ParameterSet, ParamsLabel};
use crate::source::{workload, Window};
use serde_json::json;
use tessera_programs::workloads::Workload;
use tessera_sim::additive::Additive;
use tessera_sim::arch::Arch;
use tessera_sim::engine::{self, Schedule};
use tessera_sim::{report, Report, SimError};

/// How the workload occupies the machine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// One task over the whole machine.
    #[default]
    Latency,
    /// One task per cluster / tile / chiplet, reporting tasks per minute.
    Throughput,
}

impl Mode {
    /// The names `--mode` and `mode=` take.
    pub const NAMES: &'static [&'static str] = &["latency", "throughput"];

    /// Parses `latency` or `throughput`.
    ///
    /// ```
    /// use tessera_lab::Mode;
    /// assert_eq!(Mode::parse("throughput").unwrap(), Mode::Throughput);
    /// assert!(Mode::parse("sideways").unwrap_err().to_string().contains("mode"));
    /// ```
    pub fn parse(s: &str) -> std::result::Result<Self, SimError> {
        match s {
            "latency" => Ok(Mode::Latency),
            "throughput" => Ok(Mode::Throughput),
            _ => Err(SimError::Invalid {
                name: "mode",
                value: s.into(),
                allowed: Self::NAMES.join(", "),
            }),
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// What to simulate: a machine (with `--set` overrides), a workload and its options.
#[derive(Clone, Debug)]
pub struct Request {
    /// A built-in machine name or a TOML machine description.
    pub arch: String,
    /// `KEY=VALUE` overrides of the machine description.
    pub sets: Vec<String>,
    /// A program, a built-in workload or a trace file.
    pub workload: String,
    /// Parameter set (default: the program's, or `ark` / `cofhee-n12` by machine kind).
    pub params: Option<String>,
    /// Input level of an HE-operation workload.
    pub level: Option<usize>,
    /// Bootstrapping with OF-Limb plaintexts (ark.md IV-B).
    pub of_limb: bool,
    /// Bootstrapping with minimum key-switching (ark.md IV-A).
    pub min_ks: bool,
    /// Hoisted baby steps in bootstrapping's DFTs.
    pub hoisting: bool,
    /// Double hoisting in bootstrapping's DFTs (one ModDown per part per matrix).
    pub double_hoisting: bool,
    /// Key switching one digit at a time (reed.md Algorithm 3).
    pub streamed_keyswitch: bool,
    /// A program's size (HELR: mini-batch; LoLa: images).
    pub size: Option<usize>,
    /// A program's data directory.
    pub data: Option<std::path::PathBuf>,
    /// Latency or throughput.
    pub mode: Mode,
    /// Inputs on chip, results left there ([`engine::RunOptions::warm`]).
    pub warm: bool,
    /// Also the additive model ([`tessera_sim::additive`]).
    pub additive: bool,
    /// Keep the schedule's slots, for a timeline or a utilization plot.
    pub keep_schedule: bool,
    /// Write the recorded instruction stream to this tessera-trace file.
    pub save_trace: Option<String>,
    /// The engine's lookahead window in instructions ([`engine::RunOptions::window`]; `None`:
    /// [`engine::DEFAULT_WINDOW`]): 1 to [`engine::MAX_WINDOW`]. The figures equal the
    /// whole-stream schedule's when every buffer's live range is shorter than the window.
    pub window: Option<usize>,
    /// The engine's issue window in placed instructions
    /// ([`engine::RunOptions::issue_window`]; `None`: [`engine::DEFAULT_ISSUE_WINDOW`]): 1 to
    /// [`engine::MAX_WINDOW`]. It bounds the reservation table's memory; the report's
    /// `window_holds` says whether it changed the schedule (0: it did not).
    pub issue_window: Option<usize>,
}

impl Request {
    /// `workload` on `arch` with the defaults: no overrides, the default parameter set, top
    /// level, hoisting on, latency mode, cold.
    pub fn new(arch: &str, workload: &str) -> Self {
        Self {
            arch: arch.into(),
            sets: Vec::new(),
            workload: workload.into(),
            params: None,
            level: None,
            of_limb: false,
            min_ks: false,
            hoisting: true,
            double_hoisting: false,
            streamed_keyswitch: false,
            size: None,
            data: None,
            mode: Mode::Latency,
            warm: false,
            additive: false,
            keep_schedule: false,
            save_trace: None,
            window: None,
            issue_window: None,
        }
    }
}

/// What [`run`] found.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The machine, as loaded with its overrides.
    pub arch: Arch,
    pub report: Report,
    /// The additive model, when asked for.
    pub additive: Option<Additive>,
    /// A program's window (how many iterations or images the recording holds).
    pub window: Option<Window>,
    /// The schedule, when [`Request::keep_schedule`] (latency mode on a vector machine).
    pub schedule: Option<Schedule>,
    /// Seconds the simulation took (recording excluded).
    pub simulation_s: f64,
    /// The CKKS parameter set behind the workload, where it has one (security label).
    pub params: Option<ParamsLabel>,
    /// Word, policy, slots and L_eff (or level): what amortised figures are recomputed from.
    pub context: Vec<(&'static str, serde_json::Value)>,
}

impl Outcome {
    /// The report as JSON, with the additive model and the program window where present
    /// (what `tessera simulate --json` prints and `tessera.simulate` returns).
    pub fn to_json(&self) -> Result<serde_json::Value> {
        let mut v = serde_json::to_value(&self.report)
            .map_err(|e| SimError::Trace(format!("the report as JSON: {e}")))?;
        if let Some(a) = &self.additive {
            v["additive_s"] = json!(a.total_s);
            v["additive_by_op"] = json!(a.by_op);
        }
        for (k, x) in &self.context {
            v[*k] = x.clone();
        }
        if let Some(p) = &self.params {
            v["params"] = json!(p);
        }
        if let Some(w) = &self.window {
            v["window"] = json!(w.what);
            v["window_units"] = json!(w.units);
            v[format!("time_per_{}_s", w.unit)] = json!(self.report.time_s / w.units as f64);
            if let Some(p) = w.per_run {
                v["units_per_run"] = json!(p);
                v["time_per_run_s"] = json!(self.report.time_s / w.units as f64 * p as f64);
            }
        }
        Ok(v)
    }
}

/// Options that do not fit the machine or the mode, refused before anything is recorded.
fn check(r: &Request, arch: &Arch) -> Result<()> {
    let refuse = |what: String| Err(SimError::Unsupported(what).into());
    if let Some(w) = r.window {
        engine::check_window(w)?;
        if matches!(arch, Arch::Pe(_)) {
            return refuse(format!(
                "--window on '{}', a single-PE model (its commands are simulated whole, with no \
                 lookahead window)",
                arch.name()
            ));
        }
    }
    if let Some(w) = r.issue_window {
        engine::check_issue_window(w)?;
        if matches!(arch, Arch::Pe(_)) {
            return refuse(format!(
                "--issue-window on '{}', a single-PE model (its commands run one at a time, \
                 with no reservation table to bound)",
                arch.name()
            ));
        }
    }
    match (arch, r.mode) {
        (Arch::Vector(_), Mode::Throughput) => {
            if r.keep_schedule {
                return refuse(
                    "timelines and plots in throughput mode (run --mode latency)".into(),
                );
            }
            if r.warm {
                return refuse(
                    "--warm in throughput mode (independent tasks load their own inputs)".into(),
                );
            }
        }
        (Arch::Vector(_), Mode::Latency) => {}
        (Arch::Pe(_), mode) => {
            if mode == Mode::Throughput {
                return refuse(format!(
                    "--mode throughput on '{}', a single-PE model: it has no clusters to run \
                     tasks on side by side (run --mode latency)",
                    arch.name()
                ));
            }
            if r.warm {
                return refuse(
                    "--warm on single-PE models (their commands name every transfer)".into(),
                );
            }
            if r.keep_schedule {
                return refuse(
                    "timelines and plots of single-PE models (their commands run one at a time)"
                        .into(),
                );
            }
        }
    }
    Ok(())
}

/// Records (or reads) the workload of `r` and simulates it; `progress` is told what is
/// being recorded.
///
/// ```
/// use tessera_lab::{run, Request};
/// let mut r = Request::new("ark", "hadd");
/// r.params = Some("test-small".into());
/// let out = run(&r, &|_| {}).unwrap();
/// assert!(out.report.time_s > 0.0);
/// ```
pub fn run(r: &Request, progress: &dyn Fn(&str)) -> Result<Outcome> {
    let arch = Arch::load_with(&r.arch, &r.sets)?;
    check(r, &arch)?;
    if crate::bfv::is_bfv_program(&r.workload) {
        return crate::bfv::run(r, arch, progress);
    }
    let set = parameter_set(r, &arch)?;
    if let Some(s) = &set {
        s.check_word(&arch)?;
    }
    let mut out = if streams(r, &arch) {
        crate::stream::run(arch, r, progress)?
    } else {
        let (w, window) = workload(r, &arch, progress)?;
        if let Some(path) = &r.save_trace {
            save_trace(path, r, set.as_ref(), &w)?;
        }
        simulate(arch, r, &w, window)?
    };
    out.params = set.map(|s| s.label());
    Ok(out)
}

/// Whether `r` is simulated as a stream ([`crate::stream`]): a run on a vector machine whose
/// schedule is program order that does not save the trace (latency or throughput mode, with
/// or without the additive model: the same engine and the same sums as the held path).
fn streams(r: &Request, arch: &Arch) -> bool {
    // A scheduling pass other than program order reorders windows of a held stream
    // (`tessera_sim::schedule::apply`), so such a machine takes the held path.
    matches!(arch, Arch::Vector(m) if m.schedule.is_identity()) && r.save_trace.is_none()
}

/// The CKKS parameter set `r` names (its default where it names none), if it has one.
fn parameter_set(r: &Request, arch: &Arch) -> Result<Option<ParameterSet>> {
    let program = crate::source::is_program(&r.workload);
    let name = match (&r.params, program, arch) {
        (Some(p), _, _) => p.clone(),
        (None, true, _) => tessera_programs::registry::default_params(&r.workload).into(),
        (None, false, Arch::Vector(_)) => "ark".into(),
        (None, false, Arch::Pe(_)) => "cofhee-n12".into(),
    };
    ParameterSet::of_workload(&r.workload, &name, program)
}

/// Writes the trace that was simulated: a trace file as it was read, a recorded workload over
/// its parameter set's ring.
fn save_trace(path: &str, r: &Request, set: Option<&ParameterSet>, w: &Workload) -> Result<()> {
    let io = |e: std::io::Error| SimError::Io {
        path: path.to_string(),
        message: e.to_string(),
    };
    let header = match set {
        Some(s) => s.trace_header(),
        None if std::path::Path::new(&r.workload).is_file() => {
            tessera_backend::trace::read_trace_file(std::path::Path::new(&r.workload))
                .map_err(SimError::Trace)?
                .0
        }
        None => {
            return Err(SimError::Unsupported(format!(
                "--save-trace for '{}' at '{}' (its ring is not a parameter preset or file)",
                r.workload,
                r.params.as_deref().unwrap_or("its default set")
            ))
            .into())
        }
    };
    let f = std::fs::File::create(path).map_err(io)?;
    tessera_backend::trace::write_trace(std::io::BufWriter::new(f), &header, &w.instrs)
        .map_err(io)?;
    Ok(())
}

/// Word, policy, slots and L_eff of a simulation (or the input level of an HE operation).
pub(crate) fn context(
    arch: &Arch,
    w: &Workload,
    window: Option<&Window>,
) -> Vec<(&'static str, serde_json::Value)> {
    let (word, policy) = match arch {
        Arch::Vector(m) => (m.clock.word_bits, json!(m.chip.policy)),
        Arch::Pe(m) => (m.clock.word_bits, serde_json::Value::Null),
    };
    let mut v = vec![
        ("word_bits", json!(word)),
        ("policy", policy),
        ("slots", json!(w.slots)),
    ];
    if let Arch::Vector(m) = arch {
        v.push(("schedule", json!(m.schedule.policy)));
    }
    if let Some(win) = window {
        v.push(("l_eff", json!(win.levels_per_boot)));
    } else if w.label.starts_with("bootstrap") {
        v.push(("l_eff", json!(w.level)));
    } else if tessera_programs::workloads::WORKLOADS
        .contains(&w.label.split('@').next().unwrap_or(""))
    {
        v.push(("level", json!(w.level)));
    }
    v
}

/// The engine's windows that `r` asks for (lookahead and issue), every other option at its
/// default: what both modes start from.
pub(crate) fn window_options(r: &Request) -> engine::RunOptions {
    engine::RunOptions {
        window: r.window,
        issue_window: r.issue_window,
        ..Default::default()
    }
}

/// The engine's options for a latency run of `r`.
pub(crate) fn latency_options(r: &Request) -> engine::RunOptions {
    engine::RunOptions {
        keep_slots: r.keep_schedule,
        warm: r.warm,
        ..window_options(r)
    }
}

/// The report of a latency schedule `s` of `label`, and the schedule when `r` keeps it.
pub(crate) fn latency_report(
    m: &tessera_sim::machine::Machine,
    r: &Request,
    label: &str,
    s: Schedule,
) -> (Report, Option<Schedule>) {
    let rep = Report {
        warm: r.warm,
        ..report::report(m, label, &s)
    };
    (rep, r.keep_schedule.then_some(s))
}

/// Simulates an already recorded workload `w` on `arch` with the options of `r` (its mode,
/// `warm`, `additive`, `keep_schedule`; its workload fields are not read): the half of
/// [`run`] that a sweep repeats per design point over one recording.
pub fn simulate(arch: Arch, r: &Request, w: &Workload, window: Option<Window>) -> Result<Outcome> {
    check(r, &arch)?;
    let mut context = context(&arch, w, window.as_ref());
    let start = std::time::Instant::now();
    let mut schedule = None;
    let report = match (&arch, r.mode) {
        (Arch::Vector(m), Mode::Throughput) => {
            report::throughput_window(m, &w.label, &w.instrs, &window_options(r))?
        }
        (Arch::Vector(m), Mode::Latency) => {
            let (instrs, tiling) = tessera_sim::schedule::apply_with_stats(m, &w.instrs);
            if let Some(t) = tiling {
                context.push(("tiling", json!(t)));
            }
            let s = engine::run_with(m, &instrs, &latency_options(r))?;
            let (rep, kept) = latency_report(m, r, &w.label, s);
            schedule = kept;
            rep
        }
        (Arch::Pe(_), _) => arch.simulate(&w.label, &w.instrs)?,
    };
    let additive = if r.additive {
        Some(arch.sum_of_operations(r.mode.name(), &w.instrs)?)
    } else {
        None
    };
    Ok(Outcome {
        arch,
        report,
        additive,
        window,
        schedule,
        simulation_s: start.elapsed().as_secs_f64(),
        params: None,
        context,
    })
}
