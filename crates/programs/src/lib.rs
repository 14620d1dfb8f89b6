//! # tessera-programs
//!
//! The accelerator papers' applications (issue 20; workloads.md), each written once over
//! `tessera_ckks::Evaluator<B>` for any `tessera_backend::Backend`: computed on the CPU
//! backend and checked against a plaintext replica living beside it, or recorded on the trace
//! backend (same code path) for the simulator.
//!
//! A program declares its parameter set (a bootstrapping preset, [`setup::PARAMETER_SETS`])
//! and the rotations it needs ([`setup::Setup`]), prepares its plaintext inputs from the real
//! data ([`data`]), places its bootstrappings by one rule ([`levels::LevelBudget`]) and counts
//! its HE operations from the evaluator's operation markers ([`counter`]).
//!
//! Programs: [`helr`] (HELR256 / HELR1024 logistic-regression training) and [`lola`]
//! (CryptoNets-LoLa MNIST inference), [`logreg`] (REED's logistic regression on a stand-in set),
//! [`linreg`] (REED's linear regression on a stand-in set), [`sort`] (bitonic sorting of
//! `2^14` values with composite-polynomial comparisons).
//! [`dnn`] (REED's encrypted DNN training on MNIST).
//! In BFV, [`bfv_apps`] (CoFHEE's CryptoNets and LR inference, `tessera-bfv`).
//! The simulator's built-in workloads (bootstrapping, HE operations, CoFHEE's 128-bit
//! recordings) are recorded by [`workloads`].

pub mod bfv_apps;
pub mod counter;
pub mod data;
pub mod dnn;
pub mod error;
pub mod helr;
pub mod inference;
pub mod levels;
pub mod linreg;
pub mod logreg;
pub mod lola;
pub mod plain_memo;
pub mod registry;
pub mod report;
pub mod resnet;
pub mod setup;
pub mod sort;
pub mod tabular;
pub mod workloads;

pub use counter::{Counting, OpCounts};
pub use error::{ProgramError, Result};
pub use levels::LevelBudget;
pub use registry::{record, run, RunOptions, PROGRAMS};
pub use report::RunReport;
pub use setup::Setup;
