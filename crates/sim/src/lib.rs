//! # tessera-sim
//!
//! A cycle-level architecture simulator for RNS-CKKS accelerators (design.md section 5). It
//! runs the instruction streams the trace backend records ([`tessera_backend::trace`]) on a
//! machine description ([`machine::Machine`], one TOML file per design in `configs/`, every
//! constant cited) and reports time, utilization, traffic, energy and area ([`report::Report`]).
//!
//! ```no_run
//! use tessera_sim::{machine::Machine, simulate, workload::{record, WorkloadSpec}};
//! let ark = Machine::load("ark").unwrap();
//! let w = record(&WorkloadSpec::new("hmult", "ark")).unwrap();
//! let r = simulate(&ark, &w.label, &w.instrs).unwrap();
//! println!("{:.1} us, {:.1} W", r.time_s * 1e6, r.avg_power_w);
//! ```

pub mod additive;
pub mod arch;
pub mod area;
pub mod cofhee;
pub mod cost;
pub mod engine;
pub mod error;
pub mod limits;
pub mod machine;
pub mod mapping;
pub mod plot;
pub mod report;
pub mod reproduce;
pub mod reservation;
pub mod residency;
pub mod sweep;
pub mod timeline;
pub mod topology;
pub mod workload;

pub use error::SimError;
pub use report::Report;
use tessera_backend::trace::Instr;

/// Simulates `instrs` on `m` and reports.
pub fn simulate(
    m: &machine::Machine,
    workload: &str,
    instrs: &[Instr],
) -> Result<Report, SimError> {
    let s = engine::run(m, instrs, false)?;
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
    let s = engine::run_with(m, instrs, &opts)?;
    Ok(report::Report {
        warm: true,
        ..report::report(m, workload, &s)
    })
}
