//! # tessera-lab
//!
//! Experiments: record a workload and simulate it. The simulator (`tessera-sim`) depends on
//! the trace format only and the programs crate (`tessera-programs`) records traces; this
//! crate sits above both (docs/simulator.md, "Crate structure"):
//!
//! - [`run`] takes a [`Request`] (machine, workload, parameter set, options) and returns an
//!   [`Outcome`]: the one entry point of `tessera simulate` and Python's `tessera.simulate`;
//! - [`reproduce`] runs the papers' targets, read from `configs/targets/*.toml`
//!   ([`targets`]), each row's measure mapped to a simulation by [`measure`].

pub mod bfv;
pub mod error;
pub mod measure;
pub mod params_fit;
pub mod reproduce;
pub mod request;
pub mod source;
pub mod stream;
pub mod targets;

pub use error::{LabError, Result};
pub use request::{run, simulate, Mode, Outcome, Request};
pub use source::{record, workload, Window};
