//! `dnn-train`: REED's encrypted DNN training on MNIST (reed.md 7, Fig. 13; workloads.md 6.3).
//! REED gives two hidden and one output layer, four images per batch and 12,500 batches; the
//! widths, activation, loss, learning rate and packing are ours ([`model`], [`packing`]):
//! 196 + 1 -> 32 -> 32 -> 10 on 14 x 14 averaged digits (the largest network whose every matrix,
//! replicated over the four images, fills one ciphertext of 2^15 slots), activation
//! `(z + 2)^2 / 8`, squared loss, SGD with rate 0.2.
//!
//! [`model`] is the network and its plaintext replica, [`packing`] the slot layout,
//! [`scales`] the fixed-scale arithmetic and the level rule, [`he`] one encrypted step;
//! [`run_cpu`] trains encrypted and checks the weights against the replica, [`record`] records
//! the same code on the trace backend; [`inference`] is the forward pass alone on test
//! batches through trained weights (REED Table 5's inference row).

pub mod he;
pub mod inference;
pub mod model;
pub mod packing;
pub mod scales;

use crate::counter::{Counting, OpCounts};
use crate::error::{ProgramError, Result};
use crate::report::{Check, Phases, Recorded, RunReport, Stopwatch};
use crate::setup::Setup;
use he::{Batch, State};
use model::{Digits, Dims};
use packing::Layout;
use std::path::PathBuf;
use tessera_backend::{Backend, Compute, CpuBackend, TraceBackend};
use tessera_ckks::{Ciphertext, Evaluator};
use tessera_math::RnsPoly;

/// The encrypted weights must match the replica's within this (issue 21).
pub const WEIGHT_TOLERANCE: f64 = 1e-3;
/// REED's training schedule: 12,500 batches of four images (reed.md 7).
pub const FULL_BATCHES: usize = 12_500;
/// The full network's image side (14 x 14 = 196 pixels).
pub const DEFAULT_SIDE: usize = 14;
/// Encrypted iterations by default.
pub const DEFAULT_ITERATIONS: usize = 2;

/// What to run.
#[derive(Clone, Debug)]
pub struct DnnConfig {
    /// Parameter set ([`crate::setup::PARAMETER_SETS`]).
    pub params: String,
    /// Image side ([`Dims::new`]): 14 (full), 7, 4, 2.
    pub side: usize,
    /// Encrypted SGD steps.
    pub iterations: usize,
    /// Data directory (default: [`crate::data::data_dir`]).
    pub data_dir: Option<PathBuf>,
}

fn check_iterations(iterations: usize) -> Result<()> {
    if iterations == 0 || iterations > FULL_BATCHES {
        return Err(ProgramError::Invalid {
            name: "iterations",
            value: iterations.to_string(),
            allowed: format!("1 to {FULL_BATCHES} (REED's schedule; encrypted runs take a few)"),
        });
    }
    Ok(())
}

/// The network and layout of `cfg`, validated against its parameter set.
fn shape(cfg: &DnnConfig) -> Result<(Dims, Layout)> {
    check_iterations(cfg.iterations)?;
    let dims = Dims::new(cfg.side)?;
    let (ctx, _) = crate::setup::parameter_set(&cfg.params, 16)?;
    let layout = Layout::new(&dims, ctx.params().max_slots())?;
    Ok((dims, layout))
}

/// Keys, the starting weights and the batches, encrypted at the top level.
struct Prepared {
    setup: Setup,
    digits: Digits,
    w0: model::Weights,
    state: [Ciphertext<RnsPoly>; 3],
    batches: Vec<Batch>,
}

/// Which images a run encrypts and from which weights: training batches from REED's
/// initial weights (dnn-train), or test batches through trained weights (dnn-inference).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    Train,
    Infer,
}

fn prepare(
    cfg: &DnnConfig,
    dims: &Dims,
    layout: &Layout,
    batches: usize,
    purpose: Purpose,
) -> Result<Prepared> {
    let digits = Digits::load(&crate::data::data_dir(cfg.data_dir.as_deref()), dims)?;
    if purpose == Purpose::Infer {
        // The last test batch must exist; checked before the keys are made.
        digits.test_batch(batches.saturating_sub(1))?;
    }
    let mut setup = Setup::new(&cfg.params, layout.slots(), &layout.rotations(dims))?;
    // The activation's two levels are the largest stage.
    setup
        .budget()
        .check_stage(purpose.program(), &cfg.params, 2)?;
    let ladder = scales::ladder(&setup);
    let top = setup.boot.output_level();
    let w0 = match purpose {
        Purpose::Train => model::initial_weights(dims),
        Purpose::Infer => inference::trained_weights(&digits, dims),
    };
    let packed = layout.pack_weights(&w0);
    let mut enc = |v: &[f64]| scales::Arith::<CpuBackend>::encrypt(&mut setup, &ladder, v, top);
    let state = [enc(&packed[0])?, enc(&packed[1])?, enc(&packed[2])?];
    let batches = (0..batches)
        .map(|t| {
            let (xs, ys) = match purpose {
                Purpose::Train => digits.batch(t),
                Purpose::Infer => digits.test_batch(t)?,
            };
            Ok(Batch {
                x: enc(&layout.pack_inputs(dims, &xs))?,
                y: enc(&layout.pack_labels(&ys))?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Prepared {
        setup,
        digits,
        w0,
        state,
        batches,
    })
}

impl Purpose {
    fn program(self) -> &'static str {
        match self {
            Purpose::Train => "dnn-train",
            Purpose::Infer => "dnn-inference",
        }
    }
}

/// Runs the steps on `ev`; returns the weights and the bootstrappings. Between two steps the
/// weights are refreshed ([`scales::Arith::refresh`]: the next step is a stage that needs
/// every level), so every step starts from the top and all steps are alike; with
/// `boot_after_last` the last step's weights are refreshed too (a steady-state window).
fn train<B: Backend>(
    p: &Prepared,
    ev: &mut Evaluator<B>,
    dims: &Dims,
    layout: &Layout,
    boot_after_last: bool,
    progress: &mut dyn FnMut(usize),
) -> Result<(State<B::Poly>, usize)> {
    let mut ar = scales::Arith::new(&p.setup, ev);
    let mut w = [
        ar.ev.load(&p.state[0])?,
        ar.ev.load(&p.state[1])?,
        ar.ev.load(&p.state[2])?,
    ];
    for (t, batch) in p.batches.iter().enumerate() {
        w = he::step(&mut ar, dims, layout, &w, batch)?;
        if t + 1 < p.batches.len() || boot_after_last {
            for wi in &mut w {
                ar.refresh(wi)?;
            }
        }
        progress(t);
    }
    Ok((w, ar.boots))
}

/// Trains encrypted on the CPU for `cfg.iterations` batches and checks the decrypted weights
/// against the replica's; also reports the replica's test accuracy after REED's full
/// schedule of 12,500 batches.
pub fn run_cpu(cfg: &DnnConfig, progress: &mut dyn FnMut(&str, usize, usize)) -> Result<RunReport> {
    let (dims, layout) = shape(cfg)?;
    let mut clock = Stopwatch::start();
    progress("keygen", 0, 1);
    let p = prepare(cfg, &dims, &layout, cfg.iterations, Purpose::Train)?;
    let keygen_s = clock.lap();
    let mut ev = crate::setup::evaluator(
        &p.setup.ctx,
        Counting::new(Compute::from_default(p.setup.ctx.ring().clone())?),
    )?;
    progress("compute", 0, cfg.iterations);
    let (w, boots) = train(&p, &mut ev, &dims, &layout, false, &mut |t| {
        progress("compute", t + 1, cfg.iterations)
    })?;
    let compute_s = clock.lap();
    progress("decrypt", 0, 1);
    let mut slots: [Vec<f64>; 3] = Default::default();
    for (s, ct) in slots.iter_mut().zip(&w) {
        *s = p.setup.decrypt(&ev.store(ct)?)?;
    }
    let replica = model::train(&p.digits, &p.w0, 0, cfg.iterations);
    let mut err = 0.0f64;
    for b in 0..model::BATCH {
        let got = layout.unpack_weights(&dims, &slots, b);
        for (gm, rm) in got.iter().zip(&replica) {
            for (gr, rr) in gm.iter().zip(rm) {
                for (g, r) in gr.iter().zip(rr) {
                    err = err.max((g - r).abs());
                }
            }
        }
    }
    let w_enc = layout.unpack_weights(&dims, &slots, 0);
    let full = model::train(&p.digits, &p.w0, 0, FULL_BATCHES);
    let decrypt_s = clock.lap();
    Ok(RunReport {
        program: "dnn-train".into(),
        params: cfg.params.clone(),
        size: cfg.side,
        iterations: cfg.iterations,
        checks: vec![
            Check::at_most("max |W - W_replica|", err, WEIGHT_TOLERANCE),
            Check::info(
                "test accuracy, encrypted weights",
                model::accuracy(&w_enc, &p.digits),
            ),
            Check::info(
                "test accuracy, replica (same iterations)",
                model::accuracy(&replica, &p.digits),
            ),
            Check::info(
                "test accuracy, replica after 12,500 batches",
                model::accuracy(&full, &p.digits),
            ),
        ],
        phases: Phases {
            keygen_s,
            encrypt_s: 0.0,
            compute_s,
            decrypt_s,
        },
        counts: ev.backend().counts().clone(),
        boots,
        levels_per_boot: p.setup.budget().after_boot,
        keys_on_demand: p.setup.keys_on_demand,
        notes: vec![format!(
            "network (ours) {}-{}-{}-{} on {}x{} averaged digits, activation (z+2)^2/8, squared loss, SGD rate {}, batch {}; layout {} x {} x {} slots; {} training and {} test images of {}; keygen includes encrypting the weights and batches",
            dims.inputs,
            dims.h1,
            dims.h2,
            model::CLASSES,
            dims.side,
            dims.side,
            model::RATE,
            model::BATCH,
            model::BATCH,
            layout.rows,
            layout.cols,
            p.digits.train_x.len(),
            p.digits.test_x.len(),
            model::IMAGES_FILE
        )],
    })
}

/// Records the same training on the trace backend. `steady`: one step and the refresh of its
/// weights (every step starts from the top, so one step is the steady state and time per
/// iteration is the window's time); otherwise `cfg.iterations` steps as [`run_cpu`] runs them.
pub fn record(cfg: &DnnConfig, steady: bool) -> Result<Recorded> {
    let cfg = &DnnConfig {
        iterations: if steady { 1 } else { cfg.iterations },
        ..cfg.clone()
    };
    let (dims, layout) = shape(cfg)?;
    let p = prepare(cfg, &dims, &layout, cfg.iterations, Purpose::Train)?;
    let mut ev = crate::setup::evaluator(
        &p.setup.ctx,
        TraceBackend::trace(p.setup.ctx.ring().clone()),
    )?;
    let (w, boots) = train(&p, &mut ev, &dims, &layout, steady, &mut |_| {})?;
    let b = ev.backend_mut();
    for ct in &w {
        b.record_store(&ct.c0);
        b.record_store(&ct.c1);
    }
    let instrs = ev.backend().instructions().to_vec();
    Ok(Recorded {
        label: format!(
            "dnn-train{}@{} ({} iteration(s){})",
            cfg.side,
            cfg.params,
            cfg.iterations,
            if steady {
                " + the weights' bootstrapping: steady state"
            } else {
                ""
            }
        ),
        counts: OpCounts::from_trace(&instrs),
        instrs,
        iterations: cfg.iterations,
        unit: "iteration",
        per_run: Some(FULL_BATCHES),
        window: if steady {
            "steady state: 1 iteration + the bootstrapping of its weights".into()
        } else {
            format!("{} iteration(s) from the start", cfg.iterations)
        },
        boots,
        levels_per_boot: p.setup.budget().after_boot,
        slots: p.setup.ctx.params().max_slots(),
    })
}
