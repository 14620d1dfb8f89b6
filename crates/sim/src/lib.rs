//! # tessera-sim
//!
//! A cycle-level architecture simulator for RNS-CKKS accelerators (design.md section 5). It
//! runs the instruction streams the trace backend records ([`tessera_backend::trace`]) on a
//! machine description ([`machine::Machine`], one TOML file per design in `configs/`, every
//! constant cited) and reports time, utilization, traffic, energy and area ([`report::Report`]).
//!
//! The simulator depends on the trace format only: the built-in workloads are recorded in
//! `tessera_programs::workloads`, and experiments that record and then simulate (one
//! `run(Request)`, `reproduce`) live in `tessera-lab` (docs/simulator.md, "Crate structure").
//!
//! ```
//! use tessera_backend::trace::read_trace;
//! use tessera_sim::{machine::Machine, simulate};
//! // A two-instruction trace: load a ciphertext limb and transform it.
//! let text = r#"{"format":"tessera-trace","version":2,"n":4096,"moduli":[40961]}
//! {"seq":0,"op":"load","dst":1,"srcs":[],"limbs":[0],"n":4096,"kind":"ciphertext"}
//! {"seq":1,"op":"ntt","dst":1,"srcs":[1],"limbs":[0],"n":4096,"kind":"ciphertext"}
//! "#;
//! let (_, instrs) = read_trace(text.as_bytes()).unwrap();
//! let r = simulate(&Machine::load("ark").unwrap(), "one NTT", &instrs).unwrap();
//! assert!(r.time_s > 0.0);
//! ```
#![warn(missing_docs)]

pub mod additive;
pub mod arch;
pub mod area;
pub mod cofhee;
pub mod cost;
pub mod dataflow;
pub mod engine;
pub mod error;
pub mod limits;
pub mod machine;
pub mod mapping;
pub mod origin;
pub mod plot;
pub mod report;
pub mod reservation;
pub mod residency;
pub mod schedule;
pub mod storage;
pub mod sweep;
pub mod timeline;
pub mod topology;

pub use error::SimError;
pub use report::Report;
use tessera_backend::trace::Instr;

/// Simulates `instrs` on `m` and reports.
pub fn simulate(
    m: &machine::Machine,
    workload: &str,
    instrs: &[Instr],
) -> Result<Report, SimError> {
    let s = engine::run(m, &schedule::apply(m, instrs), false)?;
    Ok(report::report(m, workload, &s))
}

/// [`simulate`] with the inputs already on chip and the results left there
/// ([`engine::RunOptions::warm`]): an operation's time inside a longer program.
pub fn simulate_warm(
    m: &machine::Machine,
    workload: &str,
    instrs: &[Instr],
) -> Result<Report, SimError> {
    let opts = engine::RunOptions {
        keep_slots: false,
        warm: true,
        ..Default::default()
    };
    let s = engine::run_with(m, &schedule::apply(m, instrs), &opts)?;
    Ok(report::Report {
        warm: true,
        ..report::report(m, workload, &s)
    })
}
