//! `linreg`: REED's linear-regression application (reed.md Table 5; workloads.md 6.1),
//! training by gradient descent and inference, on the HELR machinery ([`crate::helr::he`] with
//! [`Model::Linear`]): rows `(1, x, y)` of 10 features, the bias and the target padded to 16
//! slots, Nesterov's accelerated gradient (HELR's schedule) on the mean squared error with
//! learning rate 1, mini-batch 512, 16 iterations; four levels per iteration.
//!
//! Data (ours, a stand-in: REED's Kaggle "insurance" set is in no registry and its licence is
//! unconfirmed, workloads.md 6.1): scikit-learn's diabetes set (Efron et al., 2004: 442
//! patients, 10 baseline variables, a disease-progression score a year later), raw values, in
//! `data/diabetes.csv` (provenance in `data/README.md`); shuffled with a fixed seed, 398 rows
//! (90 %, as REED trains on 90 %) for training and 44 for the test; features and target
//! centred on the training means and divided by their largest centred magnitude.
//!
//! Inference: the test rows `(1, x, 0)` encrypted, `<(1, x), w>` by one HMult with the
//! encrypted weights and a rotate-and-sum per ciphertext (one level).
//!
//! Check: the weights and the test predictions within [`TOLERANCE`] of the replica's
//! ([`crate::helr::replica::train`] with the same model), and the test R^2 of both.

use crate::data::read_csv;
use crate::error::{ProgramError, Result};
use crate::helr::dataset::Dataset;
use crate::helr::he::Model;
use crate::helr::{record_task, replica, train_encrypted, HelrConfig, Task, Trained};
use crate::logreg::repo_data_dir;
use crate::report::max_diff;
use crate::report::{Check, Phases, Recorded, RunReport};
use crate::tabular::Split;
use std::path::Path;

/// The data file (in the repository's `data/`): target first, then the 10 features.
pub const DATA_FILE: &str = "diabetes.csv";
/// Features.
pub const FEATURES: usize = 10;
/// Row width: 1 + 10 + the target, padded to a power of two.
pub const WIDTH: usize = 16;
/// The target's slot in a row.
pub const TARGET: usize = FEATURES + 1;
/// Training rows (90 % of 442).
pub const TRAIN_ROWS: usize = 398;
/// The learning rate (the scaled data's largest Hessian eigenvalue is about 0.78 at batch 512).
pub const RATE: f64 = 1.0;
/// The model.
pub const MODEL: Model = Model::Linear {
    target: TARGET,
    rate: RATE,
};
/// Weights and predictions (in scaled units) must match the replica's within this.
pub const TOLERANCE: f64 = 1e-3;

/// The stand-in set, split and scaled: training rows `(1, x, y)` and test rows `(1, x, 0)`.
pub struct LinregData {
    /// The training rows (`ds.train`; the test fields are empty).
    pub ds: Dataset,
    /// Test rows `(1, x, 0)`, padded to [`WIDTH`].
    pub test_rows: Vec<Vec<f64>>,
    /// Test targets, scaled.
    pub test_y: Vec<f64>,
}

/// Reads the stand-in set from `dir` and splits and scales it.
pub fn dataset(dir: &Path) -> Result<LinregData> {
    let rows = read_csv(dir, DATA_FILE, 1 + FEATURES)?;
    if rows.len() <= TRAIN_ROWS {
        return Err(ProgramError::Shape {
            file: DATA_FILE.into(),
            message: format!("{} rows, need more than {TRAIN_ROWS}", rows.len()),
        });
    }
    // Scaled columns: the 10 features, then the target.
    let columns: Vec<usize> = (1..=FEATURES).chain([0]).collect();
    let split = Split::new(&rows, &columns, TRAIN_ROWS, 6);
    let row = |i: usize, with_target: bool| -> Vec<f64> {
        let s = split.scaled(&rows[i]);
        let mut v = vec![1.0];
        v.extend_from_slice(&s[..FEATURES]);
        v.push(if with_target { s[FEATURES] } else { 0.0 });
        v.resize(WIDTH, 0.0);
        v
    };
    Ok(LinregData {
        ds: Dataset {
            train: split.train.iter().map(|&i| row(i, true)).collect(),
            test_x: Vec::new(),
            test_y: Vec::new(),
        },
        test_rows: split.test.iter().map(|&i| row(i, false)).collect(),
        test_y: split
            .test
            .iter()
            .map(|&i| split.scaled(&rows[i])[FEATURES])
            .collect(),
    })
}

/// `<row, w>` for each row.
fn predict(rows: &[Vec<f64>], w: &[f64]) -> Vec<f64> {
    crate::inference::predict(rows, w, None)
}

/// The coefficient of determination of `pred` for `y`.
///
/// ```
/// use tessera_programs::linreg::r_squared;
/// assert_eq!(r_squared(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), 1.0);
/// ```
pub fn r_squared(pred: &[f64], y: &[f64]) -> f64 {
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    let ss_res: f64 = pred.iter().zip(y).map(|(p, t)| (p - t).powi(2)).sum();
    let ss_tot: f64 = y.iter().map(|t| (t - mean).powi(2)).sum();
    1.0 - ss_res / ss_tot
}

fn task(cfg: &HelrConfig) -> Result<(Task, LinregData)> {
    let dir = cfg.data_dir.clone().unwrap_or_else(repo_data_dir);
    let data = dataset(&dir)?;
    let task = Task {
        program: "linreg",
        data_note: format!(
            "stand-in data: {DATA_FILE} (scikit-learn diabetes, {FEATURES} features), {} training rows in {} block(s) of {}, {} test rows",
            data.ds.train.len(),
            data.ds.blocks(cfg.batch),
            cfg.batch,
            data.test_rows.len()
        ),
        ds: data.ds.clone(),
        model: MODEL,
        min_accuracy: None,
    };
    Ok((task, data))
}

/// Trains and infers encrypted on the CPU and checks both against the replica.
pub fn run_cpu(
    cfg: &HelrConfig,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<RunReport> {
    crate::setup::parameter_set(&cfg.params, WIDTH)?;
    let (task, data) = task(cfg)?;
    let ds = &task.ds;
    let Trained {
        mut setup,
        mut ev,
        out,
        mut clock,
        keygen_s,
        encrypt_s,
        compute_s,
    } = train_encrypted(&task, cfg, WIDTH, progress)?;
    let training = ev.backend().counts().clone();
    progress("inference", 0, 1);
    let (preds, infer_boots) =
        crate::inference::infer(&mut setup, &mut ev, &data.test_rows, &out.w, None)?;
    let infer_s = clock.lap();
    let inference = ev.backend().counts().since(&training);
    progress("decrypt", 0, 1);
    let w: Vec<f64> = setup.decrypt(&ev.store(&out.w)?)?[..WIDTH].to_vec();
    let per_ct = setup.ctx.params().max_slots() / WIDTH;
    let mut pred = Vec::with_capacity(data.test_rows.len());
    for ct in &preds {
        let v = setup.decrypt(&ev.store(ct)?)?;
        pred.extend((0..per_ct).map(|j| v[j * WIDTH]));
    }
    pred.truncate(data.test_rows.len());
    let w_ref = replica::train(ds, cfg.batch, cfg.iterations, &task.model);
    let pred_ref = predict(&data.test_rows, &w_ref);
    let decrypt_s = clock.lap();
    let mse = |p: &[f64]| {
        p.iter()
            .zip(&data.test_y)
            .map(|(a, b)| (a - b).powi(2))
            .sum::<f64>()
            / p.len() as f64
    };
    Ok(RunReport {
        program: task.program.into(),
        params: cfg.params.clone(),
        size: cfg.batch,
        iterations: cfg.iterations,
        checks: vec![
            Check::at_most("max |w - w_replica|", max_diff(&w, &w_ref), TOLERANCE),
            Check::at_most(
                "max |prediction - replica's| (test rows)",
                max_diff(&pred, &pred_ref),
                TOLERANCE,
            ),
            Check::info("test R^2, encrypted", r_squared(&pred, &data.test_y)),
            Check::info("test R^2, replica", r_squared(&pred_ref, &data.test_y)),
            Check::info("test MSE (scaled target), encrypted", mse(&pred)),
            Check::info("test MSE (scaled target), replica", mse(&pred_ref)),
        ],
        phases: Phases {
            keygen_s,
            encrypt_s,
            compute_s,
            decrypt_s,
        },
        counts: training,
        boots: out.boots,
        levels_per_boot: setup.budget().after_boot,
        keys_on_demand: setup.keys_on_demand,
        notes: vec![
            task.data_note,
            format!(
                "inference of the {} test rows in {} ciphertext(s): {infer_s:.3} s, {} bootstrapping(s) of the weights, operations {:?} (not in the counts above, which are the training's)",
                data.test_rows.len(),
                preds.len(),
                infer_boots,
                inference.0
            ),
        ],
    })
}

/// Records the training on the trace backend (`steady`: one steady-state window, as
/// [`crate::helr::record`]).
pub fn record(cfg: &HelrConfig, steady: bool) -> Result<Recorded> {
    crate::setup::parameter_set(&cfg.params, WIDTH)?;
    record_task(&task(cfg)?.0, cfg, steady)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stand-in set's shape, and the replica's fit next to least squares' (R^2 about 0.5
    /// on the test rows for both).
    #[test]
    fn replica_fits_the_diabetes_set() {
        let d = dataset(&repo_data_dir()).unwrap();
        assert_eq!((d.ds.train.len(), d.test_rows.len()), (398, 44));
        assert!(d.ds.train.iter().all(|r| r.len() == WIDTH && r[0] == 1.0));
        assert!(d.test_rows.iter().all(|r| r[TARGET] == 0.0));
        let w = replica::train(&d.ds, 512, 16, &MODEL);
        assert!((w[TARGET] + 1.0).abs() < 1e-12, "{}", w[TARGET]);
        let r2 = r_squared(&predict(&d.test_rows, &w), &d.test_y);
        assert!(r2 > 0.45 && r2 < 0.6, "{r2}");
    }

    #[test]
    fn r_squared_of_a_perfect_and_a_mean_prediction() {
        let y = [1.0, 2.0, 3.0];
        assert_eq!(r_squared(&y, &y), 1.0);
        assert_eq!(r_squared(&[2.0; 3], &y), 0.0);
    }
}
