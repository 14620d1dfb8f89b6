//! `helr`: HELR256 / HELR1024, logistic-regression training on MNIST 3 vs 8 (Han et al.,
//! AAAI'19; workloads.md 2), as the accelerator papers run it: 14 x 14 digits, Nesterov's
//! accelerated gradient with the degree-3 sigmoid, 32 iterations, mini-batches of 256 or 1024,
//! the Cheddar packing, merged two-real bootstrapping of the weights.
//!
//! [`dataset`] rebuilds the data, [`replica`] is the computation in f64, [`he`] the encrypted
//! one; [`run_cpu`] computes and checks it, [`record`] records it for the simulator.

pub mod dataset;
pub mod he;
pub mod replica;

use crate::counter::{Counting, OpCounts};
use crate::error::{ProgramError, Result};
use crate::report::{Check, Phases, Recorded, RunReport, Stopwatch};
use crate::setup::Setup;
use dataset::{Dataset, PADDED};
use std::path::PathBuf;
use tessera_backend::{Compute, TraceBackend};
use tessera_ckks::Evaluator;

/// The weights must match the replica's within this (workloads.md 2.9; issue 20).
pub const WEIGHT_TOLERANCE: f64 = 1e-3;
/// The test accuracy the full-size run must reach (issue 20).
pub const MIN_ACCURACY: f64 = 0.955;

/// What to run.
#[derive(Clone, Debug)]
pub struct HelrConfig {
    /// Parameter set ([`crate::setup::PARAMETER_SETS`]).
    pub params: String,
    /// Mini-batch size `m` (HELR256: 256, HELR1024: 1024).
    pub batch: usize,
    /// NAG iterations (32 in CiFHER and the original, 30 in ARK).
    pub iterations: usize,
    /// Data directory (default: [`crate::data::data_dir`]).
    pub data_dir: Option<PathBuf>,
}

impl HelrConfig {
    /// HELR at `params` with batch `batch` and 32 iterations.
    pub fn new(params: &str, batch: usize) -> Self {
        Self {
            params: params.into(),
            batch,
            iterations: 32,
            data_dir: None,
        }
    }
}

/// Checks the batch: a power of two from 2 to 1024 (the papers' sizes are 256 and 1024).
fn check_batch(batch: usize) -> Result<()> {
    if !batch.is_power_of_two() || !(2..=1024).contains(&batch) {
        return Err(ProgramError::Invalid {
            name: "size (mini-batch)",
            value: batch.to_string(),
            allowed: "a power of two from 2 to 1024; HELR's sizes are 256 and 1024".into(),
        });
    }
    Ok(())
}

fn check_iterations(iterations: usize) -> Result<()> {
    if iterations == 0 || iterations > 1000 {
        return Err(ProgramError::Invalid {
            name: "iterations",
            value: iterations.to_string(),
            allowed: "1 to 1000 (the papers run 30 or 32)".into(),
        });
    }
    Ok(())
}

/// A logistic-regression training task on the HELR machinery: its data (rows of a power-of-two
/// width: `z = y' (1, x)` for a logistic model, `(1, x, y)` for a linear one), its model, and
/// what it reports.
pub struct Task {
    /// Program name.
    pub program: &'static str,
    /// The data.
    pub ds: Dataset,
    /// The model: HELR's and logreg's are [`he::Model::Logistic`] with their sigmoid.
    pub model: he::Model,
    /// Where the data come from (a note in the report).
    pub data_note: String,
    /// The test accuracy the encrypted weights must reach at full size, and what full size
    /// is (`(accuracy, min batch, min iterations)`).
    pub min_accuracy: Option<(f64, usize, usize)>,
}

/// Keys and parameters for `cfg` and rows of `width` features, validated.
pub(crate) fn prepare(
    cfg: &HelrConfig,
    program: &str,
    width: usize,
    model: &he::Model,
) -> Result<Setup> {
    check_iterations(cfg.iterations)?;
    check_batch(cfg.batch)?;
    let (ctx, _) = crate::setup::parameter_set(&cfg.params, width)?;
    let setup = Setup::new(
        &cfg.params,
        width,
        &he::rotations(ctx.params().max_slots(), width),
    )?;
    setup
        .budget()
        .check_stage(program, &cfg.params, model.levels())?;
    Ok(setup)
}

/// HELR's task: the MNIST 3-vs-8 data of workloads.md 2.2 and HELR's sigmoid.
fn helr_task(cfg: &HelrConfig) -> Result<Task> {
    let ds = Dataset::load(&crate::data::data_dir(cfg.data_dir.as_deref()))?;
    Ok(Task {
        program: "helr",
        data_note: format!(
            "training: {} rows rebuilt from {} (workloads.md 2.2), {} block(s) of {}; test: {} rows of {}",
            ds.train.len(),
            dataset::TRAIN_FILE,
            ds.blocks(cfg.batch),
            cfg.batch,
            ds.test_x.len(),
            dataset::TEST_FILE
        ),
        ds,
        model: he::Model::Logistic(replica::SIGMOID),
        min_accuracy: Some((MIN_ACCURACY, 256, 30)),
    })
}

/// Trains HELR encrypted on the CPU backend and checks the weights and the test accuracy
/// against the replica. `progress(phase, done, total)` reports as it goes.
pub fn run_cpu(
    cfg: &HelrConfig,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<RunReport> {
    // Bad parameters fail before the data are read.
    check_iterations(cfg.iterations)?;
    check_batch(cfg.batch)?;
    crate::setup::parameter_set(&cfg.params, PADDED)?;
    let task = helr_task(cfg)?;
    train_cpu(&task, cfg, progress)
}

/// An encrypted NAG training run on the CPU backend (keys, encrypted mini-batches, the
/// iterations), with the phase times so far: what HELR, logreg and linreg all start with.
pub(crate) struct Trained {
    pub setup: Setup,
    pub ev: Evaluator<Counting<Compute>>,
    pub out: he::Outcome<<Compute as tessera_backend::Backend>::Poly>,
    pub clock: Stopwatch,
    pub keygen_s: f64,
    pub encrypt_s: f64,
    pub compute_s: f64,
}

/// Runs `cfg.iterations` of `task`'s training encrypted on the CPU over rows of `width`.
pub(crate) fn train_encrypted(
    task: &Task,
    cfg: &HelrConfig,
    width: usize,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<Trained> {
    let ds = &task.ds;
    let mut clock = Stopwatch::start();
    progress("keygen", 0, 1);
    let mut setup = prepare(cfg, task.program, width, &task.model)?;
    let keygen_s = clock.lap();
    progress("encrypt", 0, 1);
    let blocks = ds.blocks(cfg.batch).min(cfg.iterations);
    let inputs = he::encrypt(&mut setup, ds, cfg.batch, blocks, &task.model)?;
    let encrypt_s = clock.lap();
    let mut ev = crate::setup::evaluator(
        &setup.ctx,
        Counting::new(Compute::from_default(setup.ctx.ring().clone())?),
    )?;
    let plan = he::Plan {
        m: cfg.batch,
        iterations: cfg.iterations,
        boot_after_last: false,
        model: task.model,
    };
    progress("compute", 0, cfg.iterations);
    let out = he::run(&setup, &mut ev, &inputs, &plan, &mut |t| {
        progress("compute", t + 1, cfg.iterations)
    })?;
    let compute_s = clock.lap();
    Ok(Trained {
        setup,
        ev,
        out,
        clock,
        keygen_s,
        encrypt_s,
        compute_s,
    })
}

/// Trains `task` encrypted on the CPU backend and checks it against the replica.
pub fn train_cpu(
    task: &Task,
    cfg: &HelrConfig,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<RunReport> {
    let ds = &task.ds;
    let width = ds.width();
    let Trained {
        setup,
        mut ev,
        out,
        mut clock,
        keygen_s,
        encrypt_s,
        compute_s,
    } = train_encrypted(task, cfg, width, progress)?;
    progress("decrypt", 0, 1);
    let w_ct = ev.store(&out.w)?;
    let w: Vec<f64> = setup.decrypt(&w_ct)?[..width].to_vec();
    let w_ref = replica::train(ds, cfg.batch, cfg.iterations, &task.model);
    let err = w
        .iter()
        .zip(&w_ref)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let (acc, acc_ref) = (ds.accuracy(&w), ds.accuracy(&w_ref));
    let decrypt_s = clock.lap();
    let mut checks = vec![
        Check::at_most("max |w - w_replica|", err, WEIGHT_TOLERANCE),
        Check::info("test accuracy, replica", acc_ref),
    ];
    let mut notes = vec![task.data_note.clone()];
    match task.min_accuracy {
        Some((min, batch, iterations)) if cfg.batch >= batch && cfg.iterations >= iterations => {
            checks.push(Check::at_least("test accuracy, encrypted", acc, min))
        }
        other => {
            checks.push(Check::info("test accuracy, encrypted", acc));
            if let Some((min, batch, iterations)) = other {
                notes.push(format!(
                    "accuracy bound {min} applies to the papers' size (batch >= {batch}, >= {iterations} iterations)"
                ));
            }
        }
    }
    checks.extend(Check::device(tessera_backend::Backend::device_report(
        ev.backend(),
    )));
    Ok(RunReport {
        program: task.program.into(),
        params: cfg.params.clone(),
        size: cfg.batch,
        iterations: cfg.iterations,
        checks,
        phases: Phases {
            keygen_s,
            encrypt_s,
            compute_s,
            decrypt_s,
        },
        counts: ev.backend().counts().clone(),
        boots: out.boots,
        levels_per_boot: setup.budget().after_boot,
        keys_on_demand: setup.keys_on_demand,
        notes,
    })
}

/// Records HELR on the trace backend (the same code as [`run_cpu`]). `steady`: one
/// steady-state window, the iterations between two bootstrappings and that bootstrapping
/// (`floor(levels / 5)` iterations), so that time per iteration = window time / iterations;
/// otherwise `cfg.iterations` from the start, as [`run_cpu`] runs them.
pub fn record(cfg: &HelrConfig, steady: bool) -> Result<Recorded> {
    check_iterations(cfg.iterations)?;
    check_batch(cfg.batch)?;
    crate::setup::parameter_set(&cfg.params, PADDED)?;
    record_task(&helr_task(cfg)?, cfg, steady)
}

/// Records `task` on the trace backend (see [`record`]).
pub fn record_task(task: &Task, cfg: &HelrConfig, steady: bool) -> Result<Recorded> {
    let ds = &task.ds;
    let mut setup = prepare(cfg, task.program, ds.width(), &task.model)?;
    let per_boot = setup.budget().stages_per_boot(task.model.levels()).max(1);
    let iterations = if steady { per_boot } else { cfg.iterations };
    let blocks = ds.blocks(cfg.batch).min(iterations);
    let inputs = he::encrypt(&mut setup, ds, cfg.batch, blocks, &task.model)?;
    let mut ev =
        crate::setup::evaluator(&setup.ctx, TraceBackend::trace(setup.ctx.ring().clone()))?;
    let plan = he::Plan {
        m: cfg.batch,
        iterations,
        boot_after_last: steady,
        model: task.model,
    };
    let out = he::run(&setup, &mut ev, &inputs, &plan, &mut |_| {})?;
    let b = ev.backend_mut();
    b.record_store(&out.w.c0);
    b.record_store(&out.w.c1);
    let instrs = ev.backend().instructions().to_vec();
    Ok(Recorded {
        label: format!(
            "{}{}@{} ({} iteration(s){})",
            task.program,
            cfg.batch,
            cfg.params,
            iterations,
            if steady {
                " + their bootstrapping: steady state"
            } else {
                ""
            }
        ),
        counts: OpCounts::from_trace(&instrs),
        instrs,
        iterations,
        unit: "iteration",
        per_run: Some(cfg.iterations),
        window: if steady {
            format!("steady state: {iterations} iteration(s) + their bootstrapping")
        } else {
            format!("{iterations} iteration(s) from the start")
        },
        boots: out.boots,
        levels_per_boot: setup.budget().after_boot,
        slots: setup.ctx.params().max_slots(),
    })
}
