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
use tessera_backend::{Compute, TraceBackend};
use tessera_ckks::{
    Ciphertext, CkksContext, EvaluationKeys, KeyGenerator, Parameters, ParametersLiteral, SecretKey,
};
use tessera_math::sampling::Seed;
use tessera_math::RnsPoly;

/// LoLa's parameter sets: `lola-n14` only.
pub const PARAMETER_SETS: &[&str] = &["lola-n14"];
/// Top-1 agreement with the float network required (issue 20).
pub const MIN_AGREEMENT: f64 = 0.995;

/// Our CKKS set for LoLa (workloads.md 4.4): N = 2^14, a 60-bit base prime and five 40-bit
/// levels (Delta = 2^40) for the five levels of the network, one 61-bit special prime with
/// dnum = 6 (one chain prime per digit); log2(PQ) ~ 321, under the 128-bit bound of 438 for
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
            "ours for LoLa (workloads.md 4.4): N = 2^14, 60 + 5 x 40 bits, P = 61 bits, dnum = 6",
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
    net: he::Network,
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
    let net = he::Network::new(&ctx, model)?;
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([0x10; 32]))?;
    let sk = kg.secret_key()?;
    let keys = kg.evaluation_keys(&sk, &net.rotations(), false)?;
    Ok(Prepared {
        ctx,
        kg,
        sk,
        keys,
        net,
        images,
        labels,
    })
}

impl Prepared {
    /// Ciphertexts to run: one per [`he::images_per_ct`] images.
    fn batches(&self) -> usize {
        self.images
            .len()
            .div_ceil(he::images_per_ct(self.ctx.params().max_slots()))
    }

    /// The images of ciphertext `i`.
    fn batch(&self, i: usize) -> &[Vec<f64>] {
        let per = he::images_per_ct(self.ctx.params().max_slots());
        &self.images[i * per..((i + 1) * per).min(self.images.len())]
    }

    /// The 25 input ciphertexts of batch `i` (encrypted when needed, so a run holds one
    /// batch's inputs at a time).
    fn encrypt(&mut self, i: usize) -> Result<Vec<Ciphertext<RnsPoly>>> {
        let slots = self.ctx.params().max_slots();
        let top = self.ctx.params().max_level();
        let scale = self.ctx.params().default_scale();
        he::input_vectors(self.batch(i), slots)
            .iter()
            .map(|v| {
                let pt = self.ctx.encode_real(v, slots, top, scale)?;
                Ok(self.kg.encrypt_sk(&pt, &self.sk)?)
            })
            .collect()
    }
}

/// The running check: agreement with the float network, accuracy on the labels and the
/// largest logit error, accumulated ciphertext by ciphertext.
#[derive(Default)]
struct Tally {
    agree: usize,
    correct: usize,
    max_err: f64,
    seen: usize,
}

impl Tally {
    /// Adds the decrypted slots `vals` of the ciphertext holding `images` (labels `labels`).
    fn add(&mut self, model: &Model, images: &[Vec<f64>], labels: &[u8], vals: &[f64]) {
        for (b, (img, &label)) in images.iter().zip(labels).enumerate() {
            let got: Vec<f64> = (0..CLASSES).map(|c| vals[b * he::BLOCK + c]).collect();
            let want = model.forward(img);
            let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let err = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs() / scale)
                .fold(0.0, f64::max);
            self.max_err = self.max_err.max(err);
            self.agree += usize::from(argmax(&got) == argmax(&want));
            self.correct += usize::from(argmax(&got) == label as usize);
            self.seen += 1;
        }
    }
}

/// Classifies `cfg.images` images encrypted on the CPU, streaming: each ciphertext of eight
/// images is encrypted, classified, decrypted and checked before the next, so memory does not
/// grow with the image count. Checks top-1 agreement with the float network.
pub fn run_cpu(
    cfg: &LolaConfig,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<RunReport> {
    let mut clock = Stopwatch::start();
    progress("keygen", 0, 1);
    let mut p = prepare(cfg)?;
    let keygen_s = clock.lap();
    let mut ev = crate::setup::evaluator(
        &p.ctx,
        Counting::new(Compute::from_default(p.ctx.ring().clone())?),
    )?;
    let n = p.batches();
    let per_ct = he::images_per_ct(p.ctx.params().max_slots());
    let (mut encrypt_s, mut compute_s, mut decrypt_s) = (0.0, 0.0, 0.0);
    let mut tally = Tally::default();
    progress("compute", 0, n);
    for i in 0..n {
        let inputs = p.encrypt(i)?;
        encrypt_s += clock.lap();
        let out = p.net.infer(&mut ev, &inputs, &p.keys)?;
        compute_s += clock.lap();
        let host = ev.store(&out)?;
        let pt = tessera_ckks::decrypt(&host, &p.sk)?;
        let vals: Vec<f64> = p.ctx.decode(&pt)?.iter().map(|z| z.re).collect();
        let (lo, hi) = (i * per_ct, (i * per_ct + per_ct).min(p.images.len()));
        tally.add(p.net.model(), p.batch(i), &p.labels[lo..hi], &vals);
        decrypt_s += clock.lap();
        progress("compute", i + 1, n);
    }
    let total = tally.seen as f64;
    Ok(RunReport {
        program: "lola".into(),
        params: cfg.params.clone(),
        size: p.images.len(),
        iterations: n,
        checks: vec![
            Check::at_least(
                "top-1 agreement with the float network",
                tally.agree as f64 / total,
                MIN_AGREEMENT,
            ),
            Check::info(
                "max |logit - float logit| / max |float logit|",
                tally.max_err,
            ),
            Check::info(
                "accuracy on the labels (training images)",
                tally.correct as f64 / total,
            ),
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
            "{} image(s) of {} in {n} ciphertext(s) of {per_ct}, streamed (encrypt, classify, decrypt one at a time); an iteration is one ciphertext; N = 2^14, no bootstrapping; dense layers by BSGS diagonals ({} rotation keys)",
            p.images.len(),
            model::IMAGES_FILE,
            p.net.rotations().len()
        )],
    })
}

/// Records the inference of `cfg.images` images on the trace backend (same code as
/// [`run_cpu`]); the window is one ciphertext per eight images.
pub fn record(cfg: &LolaConfig) -> Result<Recorded> {
    let mut p = prepare(cfg)?;
    let n = p.batches();
    let mut ev = crate::setup::evaluator(&p.ctx, TraceBackend::trace(p.ctx.ring().clone()))?;
    for i in 0..n {
        let inputs = p.encrypt(i)?;
        let o = p.net.infer(&mut ev, &inputs, &p.keys)?;
        let b = ev.backend_mut();
        b.record_store(&o.c0);
        b.record_store(&o.c1);
    }
    let instrs = ev.backend().instructions().to_vec();
    Ok(Recorded {
        label: format!(
            "lola@{} ({} image(s) in {n} ciphertext(s))",
            cfg.params,
            p.images.len(),
        ),
        counts: OpCounts::from_trace(&instrs),
        instrs,
        iterations: p.images.len(),
        unit: "image",
        per_run: None,
        window: format!(
            "{} image(s) in {n} ciphertext(s) of {}",
            p.images.len(),
            he::images_per_ct(p.ctx.params().max_slots())
        ),
        boots: 0,
        levels_per_boot: 0,
        slots: p.ctx.params().max_slots(),
    })
}
