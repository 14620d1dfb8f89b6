//! `linreg-inference` and `logreg-inference`: REED Table 5's inference rows (reed.md 7) as
//! programs of their own, so that the simulator records inference alone (the `linreg` and
//! `logreg` programs record their training).
//!
//! The scenario (ours; REED states none): a model trained elsewhere is held encrypted and
//! applied to encrypted test rows. The weights are the plaintext replica's trained weights
//! ([`crate::helr::replica::train`] with the training program's defaults: mini-batch 512,
//! 16 iterations for linreg, 8 for logreg), encrypted as one `width`-slot ciphertext at the
//! top level after bootstrapping; the test rows `(1, x)` are packed `N / 2 / width` to a
//! ciphertext. One inference is one ciphertext of rows: `<(1, x), w>` by one HMult and a
//! rotate-and-sum within each row (one level), and for logreg the iDASH'17 sigmoid
//! `0.5 + 0.15012 t - 0.001593 t^3` on top (the power-basis circuit, two levels). No
//! bootstrapping: the weights enter fresh.
//!
//! Check: every decrypted prediction within [`TOLERANCE`] of the replica's (the same
//! arithmetic in f64), plus the test R^2 (linreg) or accuracy (logreg) of both.

use crate::counter::{Counting, OpCounts};
use crate::error::{ProgramError, Result};
use crate::helr::he::{rotate_sum, row_steps, Model};
use crate::helr::{replica, HelrConfig};
use crate::report::max_diff;
use crate::report::{Check, Phases, Recorded, RunReport, Stopwatch};
use crate::setup::{bootstrap_real, drop_to, Setup};
use crate::{linreg, logreg};
use tessera_backend::{Backend, Compute, TraceBackend};
use tessera_ckks::circuits::polynomial::{evaluate, Polynomial};
use tessera_ckks::{Ciphertext, Evaluator};

/// Predictions must match the replica's within this.
pub const TOLERANCE: f64 = 1e-3;
/// Mini-batch of the replica's training (as the training programs' default).
pub const TRAIN_BATCH: usize = 512;

/// Which model is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// `linreg`'s linear model: the prediction is `<(1, x), w>`.
    Linear,
    /// `logreg`'s logistic model: the prediction is `sigma(<(1, x), w>)`.
    Logistic,
}

impl Which {
    /// The program's name.
    pub fn program(self) -> &'static str {
        match self {
            Which::Linear => "linreg-inference",
            Which::Logistic => "logreg-inference",
        }
    }

    /// The sigmoid `sigma(t) = c0 + c1 t + c3 t^3` of a logistic model (logreg's
    /// [`logreg::SIGMOID`] is `sigma(-t)`'s coefficients).
    pub fn sigmoid(self) -> Option<[f64; 4]> {
        match self {
            Which::Linear => None,
            Which::Logistic => {
                let [c0, c1, c3] = logreg::SIGMOID;
                Some([c0, -c1, 0.0, -c3])
            }
        }
    }

    /// Levels one inference takes: the HMult, and the sigmoid's two.
    pub fn levels(self) -> usize {
        1 + if self.sigmoid().is_some() { 2 } else { 0 }
    }
}

/// A model and its test rows, in the clear.
struct Problem {
    width: usize,
    /// The replica's trained weights (`width` values).
    w: Vec<f64>,
    /// Test rows `(1, x, 0...)`, `width` values each.
    rows: Vec<Vec<f64>>,
    /// Linreg: scaled targets; logreg: labels 0 / 1.
    truth: Vec<f64>,
    data_note: String,
}

fn problem(which: Which, cfg: &HelrConfig, rows: Option<usize>) -> Result<Problem> {
    let dir = cfg.data_dir.clone().unwrap_or_else(logreg::repo_data_dir);
    let mut p = match which {
        Which::Linear => {
            let d = linreg::dataset(&dir)?;
            Problem {
                width: linreg::WIDTH,
                w: replica::train(&d.ds, TRAIN_BATCH, cfg.iterations, &linreg::MODEL),
                rows: d.test_rows,
                truth: d.test_y,
                data_note: format!(
                    "weights: the replica's linreg training ({} iterations, batch {TRAIN_BATCH}) on {}",
                    cfg.iterations,
                    linreg::DATA_FILE
                ),
            }
        }
        Which::Logistic => {
            let ds = logreg::dataset(&dir)?;
            let model = Model::Logistic(logreg::SIGMOID);
            Problem {
                width: logreg::WIDTH,
                w: replica::train(&ds, TRAIN_BATCH, cfg.iterations, &model),
                rows: ds.test_x.clone(),
                truth: ds.test_y.iter().map(|&y| f64::from(y)).collect(),
                data_note: format!(
                    "weights: the replica's logreg training ({} iterations, batch {TRAIN_BATCH}) on {}",
                    cfg.iterations,
                    logreg::DATA_FILE
                ),
            }
        }
    };
    if let Some(n) = rows {
        if n == 0 || n > p.rows.len() {
            return Err(ProgramError::Invalid {
                name: "size (test rows)",
                value: n.to_string(),
                allowed: format!("1 to {} for {}", p.rows.len(), which.program()),
            });
        }
        p.rows.truncate(n);
        p.truth.truncate(n);
    }
    p.w.truncate(p.width);
    Ok(p)
}

/// The predictions of `rows` (packed `N / 2 / width` to a ciphertext) under the encrypted
/// weights `w` (a `width`-slot ciphertext), at slot `width j` of each output ciphertext, and
/// the bootstrappings of `w` this took (one if `w` has too few levels left). The `linreg`
/// program's inference after its training is this with `sigmoid = None`.
pub fn infer<B: Backend>(
    setup: &mut Setup,
    ev: &mut Evaluator<B>,
    rows: &[Vec<f64>],
    w: &Ciphertext<B::Poly>,
    sigmoid: Option<[f64; 4]>,
) -> Result<(Vec<Ciphertext<B::Poly>>, usize)> {
    let slots = setup.ctx.params().max_slots();
    let width = w.slots;
    let levels = 1 + if sigmoid.is_some() { 2 } else { 0 };
    let mut boots = 0;
    let w = if setup.budget().must_boot(w.level, levels) {
        boots += 1;
        bootstrap_real(setup, ev, w)?
    } else {
        w.clone()
    };
    let sigma = sigmoid.map(|c| Polynomial::power(c.to_vec())).transpose()?;
    let top = setup.boot.output_level();
    let mut out = Vec::new();
    for chunk in rows.chunks(slots / width) {
        let flat: Vec<f64> = chunk.iter().flatten().copied().collect();
        let ct = setup.encrypt(&flat, slots, top)?;
        let ct = ev.load(&ct)?;
        let ct = drop_to(ev, &ct, w.level)?;
        let p = ev.mul_relin_rescale(&ct, &w, &setup.keys.eval)?;
        let t = rotate_sum(setup, ev, &p, row_steps(width))?;
        out.push(match &sigma {
            Some(s) => evaluate(ev, &t, s, &setup.keys.eval)?,
            None => t,
        });
    }
    Ok((out, boots))
}

/// The replica of [`infer`]: `<row, w>`, through the sigmoid where there is one.
pub fn predict(rows: &[Vec<f64>], w: &[f64], sigmoid: Option<[f64; 4]>) -> Vec<f64> {
    rows.iter()
        .map(|r| {
            let t: f64 = r.iter().zip(w).map(|(a, b)| a * b).sum();
            match sigmoid {
                Some([c0, c1, c2, c3]) => c0 + t * (c1 + t * (c2 + t * c3)),
                None => t,
            }
        })
        .collect()
}

fn prepare(which: Which, cfg: &HelrConfig) -> Result<Setup> {
    let width = match which {
        Which::Linear => linreg::WIDTH,
        Which::Logistic => logreg::WIDTH,
    };
    crate::setup::parameter_set(&cfg.params, width)?;
    let setup = Setup::new(&cfg.params, width, &row_steps(width))?;
    setup
        .budget()
        .check_stage(which.program(), &cfg.params, which.levels())?;
    Ok(setup)
}

/// Infers encrypted on the CPU and checks the predictions against the replica's; `rows`
/// limits the test rows (default: all).
pub fn run_cpu(
    which: Which,
    cfg: &HelrConfig,
    rows: Option<usize>,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<RunReport> {
    let mut clock = Stopwatch::start();
    let p = problem(which, cfg, rows)?;
    progress("keygen", 0, 1);
    let mut setup = prepare(which, cfg)?;
    let keygen_s = clock.lap();
    progress("encrypt", 0, 1);
    let w = setup.encrypt_top(&p.w)?;
    let encrypt_s = clock.lap();
    let mut ev = crate::setup::evaluator(
        &setup.ctx,
        Counting::new(Compute::from_default(setup.ctx.ring().clone())?),
    )?;
    progress("compute", 0, 1);
    let w = ev.load(&w)?;
    let (outs, boots) = infer(&mut setup, &mut ev, &p.rows, &w, which.sigmoid())?;
    let compute_s = clock.lap();
    progress("decrypt", 0, 1);
    let per_ct = setup.ctx.params().max_slots() / p.width;
    let mut got = Vec::with_capacity(p.rows.len());
    for ct in &outs {
        let v = setup.decrypt(&ev.store(ct)?)?;
        got.extend((0..per_ct).map(|j| v[j * p.width]));
    }
    got.truncate(p.rows.len());
    let want = predict(&p.rows, &p.w, which.sigmoid());
    let decrypt_s = clock.lap();
    let mut checks = vec![Check::at_most(
        "max |prediction - replica's|",
        max_diff(&got, &want),
        TOLERANCE,
    )];
    match which {
        Which::Linear => {
            checks.push(Check::info(
                "test R^2, encrypted",
                linreg::r_squared(&got, &p.truth),
            ));
            checks.push(Check::info(
                "test R^2, replica",
                linreg::r_squared(&want, &p.truth),
            ));
        }
        Which::Logistic => {
            let acc = |pred: &[f64]| {
                pred.iter()
                    .zip(&p.truth)
                    .filter(|(q, y)| f64::from(u8::from(**q > 0.5)) == **y)
                    .count() as f64
                    / pred.len() as f64
            };
            checks.push(Check::info("test accuracy, encrypted", acc(&got)));
            checks.push(Check::info("test accuracy, replica", acc(&want)));
        }
    }
    Ok(RunReport {
        program: which.program().into(),
        params: cfg.params.clone(),
        size: p.rows.len(),
        iterations: outs.len(),
        checks,
        phases: Phases {
            keygen_s,
            encrypt_s,
            compute_s,
            decrypt_s,
        },
        counts: ev.backend().counts().clone(),
        boots,
        levels_per_boot: setup.budget().after_boot,
        keys_on_demand: setup.keys_on_demand,
        notes: vec![
            p.data_note,
            format!(
                "{} test row(s) in {} ciphertext(s) of {per_ct} rows; an iteration is one inference (one ciphertext)",
                p.rows.len(),
                outs.len()
            ),
        ],
    })
}

/// Records the same inference on the trace backend: the weights loaded, then one inference
/// per ciphertext of test rows (the test set fits one ciphertext at every parameter set of
/// [`crate::setup::PARAMETER_SETS`]), and the predictions stored.
pub fn record(which: Which, cfg: &HelrConfig, rows: Option<usize>) -> Result<Recorded> {
    let p = problem(which, cfg, rows)?;
    let mut setup = prepare(which, cfg)?;
    let w = setup.encrypt_top(&p.w)?;
    let mut ev =
        crate::setup::evaluator(&setup.ctx, TraceBackend::trace(setup.ctx.ring().clone()))?;
    let w = ev.load(&w)?;
    let (outs, boots) = infer(&mut setup, &mut ev, &p.rows, &w, which.sigmoid())?;
    for o in &outs {
        let b = ev.backend_mut();
        b.record_store(&o.c0);
        b.record_store(&o.c1);
    }
    let instrs = ev.backend().instructions().to_vec();
    let what = format!(
        "{} test row(s) in {} ciphertext(s) of {} rows (one inference each)",
        p.rows.len(),
        outs.len(),
        setup.ctx.params().max_slots() / p.width
    );
    Ok(Recorded {
        label: format!("{}@{} ({what})", which.program(), cfg.params),
        counts: OpCounts::from_trace(&instrs),
        instrs,
        iterations: outs.len(),
        unit: "inference",
        per_run: Some(outs.len()),
        window: what,
        boots,
        levels_per_boot: setup.budget().after_boot,
        slots: setup.ctx.params().max_slots(),
    })
}
