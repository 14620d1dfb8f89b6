//! `lr-inference`: logistic-regression inference in BFV (cofhee.md Table X's second
//! application, after Sarkar et al., Sci. Rep. 13:1661, 2023), on our stand-in data: the
//! breast-cancer set of the `logreg` program (`data/breast-cancer-18.csv`, 18 features, its
//! split and normalisation), a model trained in the clear on its 512 training rows (ours:
//! 200 full-batch gradient steps, rate 2), the 57 test rows classified encrypted.
//!
//! Both the features and the model are encrypted (the model owner's weights stay private, as
//! in the paper's setting, which is why its op mix is dominated by ct x ct products): one
//! ciphertext per feature with the rows across the slots, one per weight with the weight in
//! every slot. `z = w_0 + sum_j w_j x_j`, then the degree-3 sigmoid of the iDASH'17 solution
//! `0.5 + 0.15012 z - 0.001593 z^3`: three ct x ct levels.
//!
//! Quantisation (ours): features and weights `round(64 v)`, so `z` at scale 2^12; sigmoid
//! coefficients `round(2^12 c)`, the output at scale `2^12 (2^12)^3`; it reaches about 2^52,
//! so two 30-bit plaintext moduli recombined by CRT, as for [`super::cryptonets`].

use super::{exact_checks, plaintext_moduli, run_crt, Arith, Clear};
use crate::error::{ProgramError, Result};
use crate::logreg::{dataset, repo_data_dir, FEATURES};
use crate::report::{Check, RunReport};
use std::path::PathBuf;
use tessera_bfv::{BfvParams, OpMix};

/// Parameter sets (as [`super::cryptonets::PARAMETER_SETS`]).
pub const PARAMETER_SETS: &[&str] = &["lr-n13"];
/// Feature and weight scale.
pub const S: f64 = 64.0;
/// Sigmoid coefficient scale.
pub const SC: f64 = 4096.0;
/// `sigma(z) ~ C0 + C1 z + C3 z^3` (iDASH'17, as `logreg::SIGMOID` with the sign of z flipped).
pub const SIGMOID: [f64; 3] = [0.5, 0.15012, -0.001593];

/// CoFHEE Table X's logistic-regression op mix (cofhee.md V-C): 168,298 ct + ct, 49,500
/// ct x pt (encoding not stated: replayed as general plaintext products), 128,700 ct x ct with
/// relinearisation.
pub const TABLE_X: OpMix = OpMix {
    ct_add: 168_298,
    pt_add: 0,
    ct_pt_mul: 49_500,
    ct_scalar_mul: 0,
    ct_ct_mul: 128_700,
    relin: 128_700,
};

/// What to run.
#[derive(Clone, Debug)]
pub struct LrConfig {
    /// Parameter set ([`PARAMETER_SETS`]).
    pub params: String,
    /// Test rows classified (1 to 57).
    pub rows: usize,
    /// Data directory (default: the repository's `data/`).
    pub data_dir: Option<PathBuf>,
}

/// The parameter sets of `name`, one per plaintext modulus.
pub fn parameters(name: &str) -> Result<Vec<BfvParams>> {
    match name {
        "lr-n13" => plaintext_moduli(8192, 30, 2)?
            .into_iter()
            .map(|t| {
                let mut p = BfvParams::new(8192, 2, t)?;
                p.name = format!("{name} (t = {t})");
                Ok(p)
            })
            .collect(),
        _ => Err(ProgramError::Invalid {
            name: "params",
            value: name.into(),
            allowed: PARAMETER_SETS.join(", "),
        }),
    }
}

/// Gradient ascent on the log-likelihood of the rows `z = y' (1, x)`: the clear model.
pub fn train(rows: &[Vec<f64>], steps: usize, rate: f64) -> Vec<f64> {
    let d = 1 + FEATURES;
    let mut w = vec![0.0; d];
    for _ in 0..steps {
        let mut g = vec![0.0; d];
        for z in rows {
            let m: f64 = (0..d).map(|j| w[j] * z[j]).sum();
            let s = 1.0 / (1.0 + m.exp());
            for j in 0..d {
                g[j] += s * z[j];
            }
        }
        for j in 0..d {
            w[j] += rate * g[j] / rows.len() as f64;
        }
    }
    w
}

/// The inference over any [`Arith`]: `inputs[0..18]` the features (rows across slots),
/// `inputs[18..37]` the weights `w_0..w_18` (each in every slot). Returns the scaled sigmoid.
pub fn network<A: Arith>(a: &mut A, inputs: &[Option<A::V>]) -> Result<Vec<A::V>> {
    let get = |i: usize| {
        inputs
            .get(i)
            .and_then(Option::as_ref)
            .ok_or_else(|| ProgramError::Unsupported(format!("input {i} of lr-inference missing")))
    };
    let mut z = a.scale(get(FEATURES)?, S as i64)?; // w_0 * 1 at the scale of w_j x_j
    for j in 0..FEATURES {
        let p = a.mul(get(FEATURES + 1 + j)?, get(j)?)?;
        z = a.add(&z, &p)?;
    }
    let z2 = a.mul(&z, &z)?;
    let z3 = a.mul(&z2, &z)?;
    let s = S * S;
    // SIGMOID = [c0, c1, c3].
    let c = |k: usize| (SIGMOID[k] * SC).round() as i64;
    let lin = a.scale(&z, c(1) * (s * s) as i64)?;
    let cub = a.scale(&z3, c(2))?;
    let y = a.add(&lin, &cub)?;
    Ok(vec![a.add_const(&y, c(0) as i128 * (s * s * s) as i128)?])
}

/// Classifies `cfg.rows` test rows encrypted and checks the decrypted outputs against the
/// integer replica slot for slot.
pub fn run_cpu(cfg: &LrConfig, progress: &mut dyn FnMut(&str, usize, usize)) -> Result<RunReport> {
    let params = parameters(&cfg.params)?;
    let dir = cfg.data_dir.clone().unwrap_or_else(repo_data_dir);
    let ds = dataset(&dir)?;
    if cfg.rows == 0 || cfg.rows > ds.test_x.len() {
        return Err(ProgramError::Invalid {
            name: "rows",
            value: cfg.rows.to_string(),
            allowed: format!("1 to {} (the test rows)", ds.test_x.len()),
        });
    }
    let w = train(&ds.train, 200, 2.0);
    let rows = &ds.test_x[..cfg.rows];
    let q = |v: f64| (v * S).round() as i128;
    let mut inputs: Vec<Option<Vec<i128>>> = (1..=FEATURES)
        .map(|j| Some(rows.iter().map(|r| q(r[j])).collect()))
        .collect();
    inputs.extend(w.iter().map(|&wj| Some(vec![q(wj); cfg.rows])));
    let replica = network(&mut Clear, &inputs)?;
    let run = run_crt(&params, &inputs, cfg.rows, &|a, x| network(a, x), progress)?;
    let mut checks = exact_checks(&run, &replica, &params);
    let half = (SIGMOID[0] * SC).round() * (S * S).powi(3);
    let (mut agree, mut correct, mut float_correct) = (0usize, 0usize, 0usize);
    for (s, r) in rows.iter().enumerate() {
        let pred = run.outputs[0][s] as f64 > half;
        let z: f64 = (0..=FEATURES).map(|j| w[j] * r[j]).sum();
        agree += usize::from(pred == (z > 0.0));
        correct += usize::from(pred == (ds.test_y[s] == 1));
        float_correct += usize::from((z > 0.0) == (ds.test_y[s] == 1));
    }
    let k = cfg.rows as f64;
    checks.push(Check::info(
        "agreement with the float model's predictions",
        agree as f64 / k,
    ));
    checks.push(Check::info("accuracy (encrypted)", correct as f64 / k));
    checks.push(Check::info(
        "accuracy (float model)",
        float_correct as f64 / k,
    ));
    let notes = vec![
        format!(
            "BFV n = 2^13, two 109-bit towers ({}); {} test row(s) of the stand-in breast-cancer set, one per slot; features and weights encrypted",
            params[0].security().label(),
            cfg.rows
        ),
        format!(
            "counts are totals over the {} plaintext moduli (an iteration is one modulus: the network runs once under each, and the slots are recombined by CRT)",
            params.len()
        ),
        format!(
            "CoFHEE Table X op mix (simulated, not computed): {} ct+ct, {} ct x pt, {} ct x ct + relin",
            TABLE_X.ct_add, TABLE_X.ct_pt_mul, TABLE_X.ct_ct_mul
        ),
    ];
    Ok(run.report(
        "lr-inference",
        &cfg.params,
        cfg.rows,
        params.len(),
        checks,
        notes,
    ))
}
