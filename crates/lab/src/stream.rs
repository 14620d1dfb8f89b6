//! Simulation as a stream (issue 25 item 1): the instructions go from their source straight
//! into the engine's lookahead window, so no whole-program `Vec<Instr>` is held.
//!
//! - A trace file is read one line at a time ([`TraceReader`]).
//! - A recording (a program or a built-in workload) runs on this thread with its recorder
//!   feeding a bounded channel ([`feeding`]); the engine consumes the channel on a second
//!   thread, so recording and simulation overlap and memory stays that of the recording's
//!   live objects plus the engine's window.
//! - Latency and throughput mode run the same engine (throughput on one cluster's slice,
//!   [`Throughput`]), and the additive model ([`Operations`]) takes each instruction beside
//!   it, so all three give the held trace's report.
//!
//! The schedule equals the held trace's whenever every buffer's live range fits the window
//! (`tessera_sim::engine::DEFAULT_WINDOW` or `--window`; see the engine's `lookahead`
//! module): the held path runs the same windowed engine over a slice.

use crate::error::Result;
use crate::request::{
    context, latency_options, latency_report, window_options, Mode, Outcome, Request,
};
use crate::source::{workload, Window};
use std::path::Path;
use std::sync::mpsc::sync_channel;
use tessera_backend::trace::{feeding, open_trace_file, Instr, TraceReader};
use tessera_programs::workloads::Workload;
use tessera_sim::additive::{Additive, Operations};
use tessera_sim::arch::Arch;
use tessera_sim::engine::{self, RunOptions, Schedule};
use tessera_sim::machine::Machine;
use tessera_sim::report::Throughput;
use tessera_sim::{Report, SimError};

/// Instructions in flight between the recording thread and the simulating one: enough to
/// keep both busy, few enough to be a few MB.
const CHANNEL: usize = 1 << 12;

/// What the simulating side runs: the engine on the machine (in throughput mode on one
/// cluster's slice), and the additive model beside it when asked.
struct Sim<'a> {
    m: &'a Machine,
    throughput: Option<Throughput>,
    opts: RunOptions,
    additive: bool,
}

impl<'a> Sim<'a> {
    fn of(m: &'a Machine, r: &Request) -> Result<Self> {
        if r.additive && r.mode != Mode::Latency {
            // The same refusal as the held path's (`Arch::sum_of_operations`).
            Arch::Vector(m.clone()).sum_of_operations(r.mode.name(), &[])?;
        }
        let throughput =
            (r.mode == Mode::Throughput).then(|| Throughput::of(m, &window_options(r)));
        Ok(Self {
            m,
            opts: throughput
                .as_ref()
                .map_or_else(|| latency_options(r), |t| t.options),
            throughput,
            additive: r.additive,
        })
    }

    /// Runs `src` through the engine, and through the additive model when asked.
    fn run<I>(&self, src: I) -> std::result::Result<(Schedule, Option<Additive>), SimError>
    where
        I: Iterator<Item = std::result::Result<Instr, SimError>>,
    {
        let mut ops = self.additive.then(|| Operations::new(self.m));
        let fed = src.map(|i| {
            if let (Ok(ins), Some(o)) = (&i, ops.as_mut()) {
                o.push(ins)?;
            }
            i
        });
        let on = self.throughput.as_ref().map_or(self.m, |t| &t.slice);
        let s = engine::run_stream(on, fed, &self.opts)?;
        let additive = ops.map(Operations::finish).transpose()?;
        Ok((s, additive))
    }

    /// The report of schedule `s` of `label`, and the schedule when `r` keeps it.
    fn report(&self, r: &Request, label: &str, s: Schedule) -> (Report, Option<Schedule>) {
        match &self.throughput {
            Some(t) => (t.report(label, &s), None),
            None => latency_report(self.m, r, label, s),
        }
    }
}

/// Simulates the workload of `r` on `arch` (a vector machine whose schedule is program
/// order) as a stream, in latency or throughput mode, with the additive model if asked.
pub fn run(arch: Arch, r: &Request, progress: &dyn Fn(&str)) -> Result<Outcome> {
    let Arch::Vector(m) = &arch else {
        return Err(SimError::Unsupported(
            "streamed simulation on a single-PE model (its commands are simulated whole)".into(),
        )
        .into());
    };
    let sim = Sim::of(m, r)?;
    let start = std::time::Instant::now();
    let path = Path::new(&r.workload);
    let (w, window, (s, additive)) = if !crate::source::is_program(&r.workload) && path.is_file() {
        let (w, s) = trace_file(&sim, r, path)?;
        (w, None, s)
    } else {
        recorded(&sim, r, &arch, progress)?
    };
    let (report, schedule) = sim.report(r, &w.label, s);
    Ok(Outcome {
        context: context(&arch, &w, window.as_ref()),
        report,
        additive,
        window,
        schedule,
        simulation_s: start.elapsed().as_secs_f64(),
        params: None,
        arch,
    })
}

/// What the simulating side gives back.
type Simulated = (Schedule, Option<Additive>);

/// A trace file, read and simulated one instruction at a time. The workload it returns
/// holds no instructions (only the label and slot count).
fn trace_file(sim: &Sim, r: &Request, path: &Path) -> Result<(Workload, Simulated)> {
    let err = |e: String| SimError::Trace(format!("{}: {e}", r.workload));
    let reader: TraceReader<_> = open_trace_file(path).map_err(err)?;
    let slots = reader.header().n / 2;
    let s = sim.run(reader.map(|i| i.map_err(err)))?;
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
    sim: &Sim,
    r: &Request,
    arch: &Arch,
    progress: &dyn Fn(&str),
) -> Result<(Workload, Option<Window>, Simulated)> {
    let (got, s) = std::thread::scope(|sc| {
        let (tx, rx) = sync_channel::<Instr>(CHANNEL);
        let simulating = sc.spawn(move || sim.run(rx.into_iter().map(Ok)));
        let got = feeding(Box::new(tx), false, || workload(r, arch, progress));
        let s = simulating
            .join()
            .unwrap_or_else(|_| Err(SimError::Trace("the simulating thread panicked".into())));
        (got, s)
    });
    let (w, window) = got?;
    let s = if w.instrs.is_empty() {
        s?
    } else {
        sim.run(w.instrs.iter().cloned().map(Ok))?
    };
    Ok((w, window, s))
}
