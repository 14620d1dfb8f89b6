//! `lola`: H3's LeNet-5 = CryptoNets-LoLa MNIST inference (workloads.md 4), with the given
//! weights, in CKKS at N = 2^14 (our parameter set `lola-n14`, 4.4), eight images per
//! ciphertext; checked by top-1 agreement with the float network ([`model`]), reported in
//! images per minute.

pub mod he;
pub mod model;

use crate::counter::{Counting, OpCounts};
use crate::error::{ProgramError, Result};
use crate::report::{Check, Phases, Recorded, RunReport, Stopwatch};
use model::{argmax, Model, CLASSES};
use std::path::PathBuf;
use std::sync::Arc;
use tessera_backend::{Backend, Compute, TraceBackend};
use tessera_ckks::{
    Ciphertext, CkksContext, EvaluationKeys, Evaluator, KeyGenerator, Parameters,
    ParametersLiteral, SecretKey,
};
use tessera_math::sampling::Seed;
use tessera_math::RnsPoly;

/// LoLa's parameter sets: `lola-n14` only.
pub const PARAMETER_SETS: &[&str] = &["lola-n14"];
/// Top-1 agreement with the float network required (issue 20).
pub const MIN_AGREEMENT: f64 = 0.995;

/// Our CKKS set for LoLa (workloads.md 4.4): N = 2^14, a 60-bit base prime and seven 40-bit
/// levels (Delta = 2^40) for the seven levels of the network, one 61-bit special prime with
/// dnum = 8 (one chain prime per digit); log2(PQ) ~ 401, under the 128-bit bound of 438 for
/// N = 2^14 (checked by `Parameters::new`).
pub fn parameters(name: &str) -> Result<Parameters> {
    if !PARAMETER_SETS.contains(&name) {
        return Err(ProgramError::Invalid {
            name: "params",
            value: name.to_string(),
            allowed: format!(
                "{} (lola is not bootstrapped; its own N = 2^14 set)",
                PARAMETER_SETS.join(", ")
            ),
        });
    }
    let base = tessera_ckks::params::preset_literal("test-small").expect("a preset");
    Ok(Parameters::new(ParametersLiteral {
        name: name.into(),
        log_n: 14,
        log_q: [vec![60], vec![40; he::DEPTH]].concat(),
        log_p: vec![61],
        dnum: he::DEPTH + 1,
        log_default_scale: 40,
        source:
            "ours for LoLa (workloads.md 4.4): N = 2^14, 60 + 7 x 40 bits, P = 61 bits, dnum = 8",
        ..base
    })?)
}

/// What to run.
#[derive(Clone, Debug)]
pub struct LolaConfig {
    /// Parameter set ([`PARAMETER_SETS`]).
    pub params: String,
    /// Images to classify (the first of `mnist-10k.npz`), in ciphertexts of eight.
    pub images: usize,
    /// Data directory.
    pub data_dir: Option<PathBuf>,
}

struct Prepared {
    ctx: Arc<CkksContext>,
    kg: KeyGenerator,
    sk: SecretKey,
    keys: EvaluationKeys,
    model: Model,
    images: Vec<Vec<f64>>,
    labels: Vec<u8>,
}

fn prepare(cfg: &LolaConfig) -> Result<Prepared> {
    let params = parameters(&cfg.params)?;
    if cfg.images == 0 || cfg.images > 10_000 {
        return Err(ProgramError::Invalid {
            name: "size (LoLa images)",
            value: cfg.images.to_string(),
            allowed: "1 to 10000 (the images of mnist-10k.npz)".into(),
        });
    }
    let dir = crate::data::data_dir(cfg.data_dir.as_deref());
    let model = Model::load(&dir)?;
    let (images, labels) = model::images(&dir, cfg.images)?;
    let ctx = crate::setup::context(params)?;
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([0x10; 32]))?;
    let sk = kg.secret_key()?;
    let keys = kg.evaluation_keys(&sk, &he::rotations(), false)?;
    Ok(Prepared {
        ctx,
        kg,
        sk,
        keys,
        model,
        images,
        labels,
    })
}

/// Encrypts the 25 input ciphertexts of each batch of eight images.
fn encrypt(p: &mut Prepared) -> Result<Vec<Vec<Ciphertext<RnsPoly>>>> {
    let slots = p.ctx.params().max_slots();
    let top = p.ctx.params().max_level();
    let scale = p.ctx.params().default_scale();
    p.images
        .chunks(he::images_per_ct(slots))
        .map(|batch| {
            he::input_vectors(batch, slots)
                .iter()
                .map(|v| {
                    let pt = p.ctx.encode_real(v, slots, top, scale)?;
                    Ok(p.kg.encrypt_sk(&pt, &p.sk)?)
                })
                .collect()
        })
        .collect()
}

fn infer_all<B: Backend>(
    p: &Prepared,
    ev: &mut Evaluator<B>,
    batches: &[Vec<Ciphertext<RnsPoly>>],
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<Ciphertext<B::Poly>>> {
    let net = he::Network {
        ctx: &p.ctx,
        keys: &p.keys,
        model: &p.model,
    };
    batches
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let r = net.infer(ev, b);
            progress(i + 1);
            r
        })
        .collect()
}

/// Classifies `cfg.images` images encrypted on the CPU; checks top-1 agreement with the float
/// network.
pub fn run_cpu(
    cfg: &LolaConfig,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<RunReport> {
    let mut clock = Stopwatch::start();
    progress("keygen", 0, 1);
    let mut p = prepare(cfg)?;
    let keygen_s = clock.lap();
    progress("encrypt", 0, 1);
    let batches = encrypt(&mut p)?;
    let encrypt_s = clock.lap();
    let mut ev = Evaluator::new(
        &p.ctx,
        Counting::new(Compute::from_default(p.ctx.ring().clone())?),
    )?;
    let n = batches.len();
    progress("compute", 0, n);
    let outs = infer_all(&p, &mut ev, &batches, &mut |i| progress("compute", i, n))?;
    let compute_s = clock.lap();
    progress("decrypt", 0, 1);
    let per_ct = he::images_per_ct(p.ctx.params().max_slots());
    let (mut agree, mut correct, mut max_err) = (0usize, 0usize, 0.0f64);
    for (bi, out) in outs.iter().enumerate() {
        let host = ev.store(out)?;
        let pt = tessera_ckks::decrypt(&host, &p.sk)?;
        let vals = p.ctx.decode(&pt)?;
        for b in 0..per_ct {
            let i = bi * per_ct + b;
            let Some(img) = p.images.get(i) else { break };
            let got: Vec<f64> = (0..CLASSES).map(|c| vals[b * he::BLOCK + c].re).collect();
            let want = p.model.forward(img);
            let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let err = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs() / scale)
                .fold(0.0, f64::max);
            max_err = max_err.max(err);
            agree += usize::from(argmax(&got) == argmax(&want));
            correct += usize::from(argmax(&got) == p.labels[i] as usize);
        }
    }
    let decrypt_s = clock.lap();
    let total = p.images.len() as f64;
    Ok(RunReport {
        program: "lola".into(),
        params: cfg.params.clone(),
        size: p.images.len(),
        iterations: n,
        checks: vec![
            Check::at_least(
                "top-1 agreement with the float network",
                agree as f64 / total,
                MIN_AGREEMENT,
            ),
            Check::info("max |logit - float logit| / max |float logit|", max_err),
            Check::info("accuracy on the labels (training images)", correct as f64 / total),
            Check::info("images per minute (compute)", total / compute_s * 60.0),
        ],
        phases: Phases {
            keygen_s,
            encrypt_s,
            compute_s,
            decrypt_s,
        },
        counts: ev.backend().counts().clone(),
        boots: 0,
        levels_per_boot: 0,
        keys_on_demand: false,
        notes: vec![format!(
            "{} image(s) of {} in {n} ciphertext(s) of {per_ct}; an iteration is one ciphertext; N = 2^14, no bootstrapping",
            p.images.len(),
            model::IMAGES_FILE
        )],
    })
}

/// Records the inference of `cfg.images` images on the trace backend (same code as
/// [`run_cpu`]); the window is one ciphertext per eight images.
pub fn record(cfg: &LolaConfig) -> Result<Recorded> {
    let mut p = prepare(cfg)?;
    let batches = encrypt(&mut p)?;
    let mut ev = Evaluator::new(&p.ctx, TraceBackend::trace(p.ctx.ring().clone()))?;
    let outs = infer_all(&p, &mut ev, &batches, &mut |_| {})?;
    for o in &outs {
        let b = ev.backend_mut();
        b.record_store(&o.c0);
        b.record_store(&o.c1);
    }
    let instrs = ev.backend().instructions().to_vec();
    Ok(Recorded {
        label: format!(
            "lola@{} ({} image(s) in {} ciphertext(s))",
            cfg.params,
            p.images.len(),
            batches.len()
        ),
        counts: OpCounts::from_trace(&instrs),
        instrs,
        iterations: p.images.len(),
        unit: "image",
        per_run: None,
        window: format!(
            "{} image(s) in {} ciphertext(s) of {}",
            p.images.len(),
            batches.len(),
            he::images_per_ct(p.ctx.params().max_slots())
        ),
        boots: 0,
        levels_per_boot: 0,
        slots: p.ctx.params().max_slots(),
    })
}
