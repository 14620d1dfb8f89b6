//! Simulation as a stream (issue 25 item 1): the instructions go from their source straight
//! into the engine's lookahead window, so no whole-program `Vec<Instr>` is held.
//!
//! - A trace file is read one line at a time ([`TraceReader`]).
//! - A recording (a program or a built-in workload) runs on this thread with its recorder
//!   feeding a bounded channel ([`feeding`]); the engine consumes the channel on a second
//!   thread, so recording and simulation overlap and memory stays that of the recording's
//!   live objects plus the engine's window.
//!
//! The schedule equals the held trace's whenever every buffer's live range fits the window
//! (`tessera_sim::engine::DEFAULT_WINDOW`; see the engine's `lookahead` module).

use crate::error::Result;
use crate::request::{context, latency_options, latency_report, Outcome, Request};
use crate::source::{workload, Window};
use std::path::Path;
use std::sync::mpsc::sync_channel;
use tessera_backend::trace::{feeding, open_trace_file, Instr, TraceReader};
use tessera_programs::workloads::Workload;
use tessera_sim::arch::Arch;
use tessera_sim::engine::{self, Schedule};
use tessera_sim::machine::Machine;
use tessera_sim::SimError;

/// Instructions in flight between the recording thread and the simulating one: enough to
/// keep both busy, few enough to be a few MB.
const CHANNEL: usize = 1 << 12;

/// Simulates the workload of `r` on `arch` (a vector machine, latency mode) as a stream.
pub fn run(arch: Arch, r: &Request, progress: &dyn Fn(&str)) -> Result<Outcome> {
    let Arch::Vector(m) = &arch else {
        return Err(SimError::Unsupported(
            "streamed simulation on a single-PE model (its commands are simulated whole)".into(),
        )
        .into());
    };
    let start = std::time::Instant::now();
    let path = Path::new(&r.workload);
    let (w, window, s) = if !crate::source::is_program(&r.workload) && path.is_file() {
        let (w, s) = trace_file(m, r, path)?;
        (w, None, s)
    } else {
        recorded(m, r, &arch, progress)?
    };
    let (report, schedule) = latency_report(m, r, &w.label, s);
    Ok(Outcome {
        context: context(&arch, &w, window.as_ref()),
        report,
        additive: None,
        window,
        schedule,
        simulation_s: start.elapsed().as_secs_f64(),
        params: None,
        arch,
    })
}

/// A trace file, read and simulated one instruction at a time. The workload it returns
/// holds no instructions (only the label and slot count).
fn trace_file(m: &Machine, r: &Request, path: &Path) -> Result<(Workload, Schedule)> {
    let err = |e: String| SimError::Trace(format!("{}: {e}", r.workload));
    let reader: TraceReader<_> = open_trace_file(path).map_err(err)?;
    let slots = reader.header().n / 2;
    let s = engine::run_stream(m, reader.map(|i| i.map_err(err)), &latency_options(r))?;
    let w = Workload {
        label: r.workload.clone(),
        instrs: Vec::new(),
        slots,
        level: 0,
    };
    Ok((w, s))
}

/// A recording fed to the engine on a second thread as it is made. Should the recording not
/// have fed its recorder (a source that builds its trace by hand), the trace it returns is
/// simulated as held.
fn recorded(
    m: &Machine,
    r: &Request,
    arch: &Arch,
    progress: &dyn Fn(&str),
) -> Result<(Workload, Option<Window>, Schedule)> {
    let opts = latency_options(r);
    let (got, s) = std::thread::scope(|sc| {
        let (tx, rx) = sync_channel::<Instr>(CHANNEL);
        let opts = &opts;
        let sim = sc.spawn(move || engine::run_stream(m, rx.into_iter().map(Ok), opts));
        let got = feeding(Box::new(tx), false, || workload(r, arch, progress));
        let s = sim
            .join()
            .unwrap_or_else(|_| Err(SimError::Trace("the simulating thread panicked".into())));
        (got, s)
    });
    let (w, window) = got?;
    let s = if w.instrs.is_empty() {
        s?
    } else {
        engine::run_with(m, &w.instrs, &opts)?
    };
    Ok((w, window, s))
}
