//! `tessera run resnet20` and its recording for `tessera simulate --workload resnet20`: the
//! same code ([`super::encrypted_forward`]) on the CPU backend, checked against the replica,
//! or on the trace backend.
//!
//! Size: the full network (32 x 32 images, 16 / 32 / 64 channels, three blocks per stage) in
//! 2^14 slots when the parameter set has them (`ark` and the other accelerator sets); on a
//! set with fewer slots (`test-program`: 512) the reduced network of [`REDUCED`], a reduction
//! of sizes, not of the algorithm (every layer type is kept), stated in the report.

use super::he::Encrypted;
use super::model::{argmax, images_from, Model, CLASSES};
use super::replica::{image_tensor, Tensor};
use super::{encrypted_forward, layers, packed_forward, packed_input, setup};
use crate::counter::{Counting, OpCounts};
use crate::error::{ProgramError, Result};
use crate::plain_memo::PlainMemo;
use crate::report::{Check, Phases, Recorded, RunReport, Stopwatch};
use crate::setup::Setup;
use std::path::PathBuf;
use tessera_backend::{Backend, Compute, TraceBackend};
use tessera_ckks::circuits::linear::LinearTransform;
use tessera_ckks::circuits::sign::CompositeSign;
use tessera_ckks::Evaluator;

/// Slots of the full network (stage 1: 16 channels of 32 x 32).
pub const FULL_SLOTS: usize = 1 << 14;
/// The reduced network for parameter sets with fewer slots: channels per stage, blocks per
/// stage, image side (top-left crop) and slots.
pub const REDUCED: ([usize; 3], usize, usize, usize) = ([2, 4, 8], 1, 8, 256);
/// The encrypted logits must be within this of the replica's (absolute; logits are O(10)).
pub const LOGIT_TOLERANCE: f64 = 1e-2;

/// What to run.
#[derive(Clone, Debug)]
pub struct ResnetConfig {
    /// Parameter set ([`crate::setup::PARAMETER_SETS`]).
    pub params: String,
    /// Images to classify, one ciphertext each: `images` images of `cifar10-test-head.npz`
    /// from index `first`.
    pub images: usize,
    /// Index of the first image.
    pub first: usize,
    /// Data directory.
    pub data_dir: Option<PathBuf>,
}

struct Prepared {
    setup: Setup,
    sign: &'static CompositeSign,
    model: Model,
    fc_m: LinearTransform,
    side: usize,
    slots: usize,
    images: Vec<Tensor>,
    labels: Vec<u8>,
    note: String,
}

fn prepare(cfg: &ResnetConfig) -> Result<Prepared> {
    let dir = crate::data::data_dir(cfg.data_dir.as_deref());
    let full = Model::load(&dir)?;
    let (imgs, labels) = images_from(&dir, cfg.first, cfg.images)?;
    let sign = CompositeSign::lee_relu()?;
    let (model, side, slots, note, setup) = match setup(&cfg.params, &full, 32, FULL_SLOTS, sign) {
        Ok(s) => (
            full,
            32,
            FULL_SLOTS,
            "full ResNet-20 (32 x 32, 16 / 32 / 64 channels, 3 blocks per stage) in 2^14 slots"
                .to_string(),
            s,
        ),
        Err(ProgramError::Invalid {
            name: "slots",
            allowed,
            ..
        }) => {
            let (ch, blocks, side, slots) = REDUCED;
            let model = full.reduced(ch, blocks)?;
            let s = setup(&cfg.params, &model, side, slots, sign)?;
            let note = format!(
                "REDUCED network: '{}' has fewer than 2^14 slots ({allowed}), so channels {ch:?}, {blocks} block(s) per stage, the top-left {side} x {side} of each image, {slots} slots (every layer type kept)",
                cfg.params
            );
            (model, side, slots, note, s)
        }
        Err(e) => return Err(e),
    };
    let fc_m = layers::fc_matrix(&model, slots)?;
    Ok(Prepared {
        setup,
        sign,
        fc_m,
        side,
        slots,
        images: imgs.iter().map(|i| image_tensor(i, side)).collect(),
        labels,
        model,
        note,
    })
}

/// The logits' ciphertexts, the bootstrappings and the evaluator (its counts or trace).
struct Inferred<B: Backend> {
    outs: Vec<tessera_ckks::Ciphertext<B::Poly>>,
    boots: usize,
    /// Bootstrappings by the slots of the circuit that ran them.
    boots_at: std::collections::BTreeMap<usize, usize>,
    ev: Evaluator<B>,
    /// Seconds of each image's inference (the first one encodes the plaintexts).
    seconds: Vec<f64>,
    /// The plaintext memo at the end: (hits, encodings, bytes kept).
    plains: (usize, usize, usize),
}

fn infer<B: Backend>(
    p: &mut Prepared,
    ev: Evaluator<B>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Inferred<B>> {
    let top = p.setup.boot.output_level();
    let cts = p
        .images
        .iter()
        .map(|t| {
            let v = packed_input(t, p.slots)?;
            p.setup.encrypt(&v, p.slots, top)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut enc = Encrypted::new(&p.setup, ev, p.sign);
    enc.plains = PlainMemo::from_env(cts.len())?;
    let mut outs = Vec::with_capacity(cts.len());
    let mut seconds = Vec::with_capacity(cts.len());
    let per = 2 * p.model.blocks.len() + 2;
    let total = per * cts.len();
    for (i, ct) in cts.iter().enumerate() {
        let mut clock = Stopwatch::start();
        let x = enc.ev.load(ct)?;
        let y = encrypted_forward(&mut enc, &p.model, &p.fc_m, &x, p.side, &mut |d, _| {
            progress(i * per + d, total)
        })?;
        enc.ev.backend_mut().synchronize()?;
        seconds.push(clock.lap());
        outs.push(y);
    }
    let plains = (enc.plains.hits(), enc.plains.misses(), enc.plains.bytes());
    Ok(Inferred {
        outs,
        boots: enc.boots,
        boots_at: enc.boots_at,
        ev: enc.ev,
        seconds,
        plains,
    })
}

/// Classifies `cfg.images` images encrypted on the CPU; checks that each image's logits are
/// within [`LOGIT_TOLERANCE`] of the replica's and its top-1 class is the replica's.
pub fn run_cpu(
    cfg: &ResnetConfig,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<RunReport> {
    let mut clock = Stopwatch::start();
    progress("keygen", 0, 1);
    let mut p = prepare(cfg)?;
    let keygen_s = clock.lap();
    let ev = crate::setup::evaluator(
        &p.setup.ctx,
        Counting::new(Compute::from_default(p.setup.ctx.ring().clone())?),
    )?;
    progress("compute", 0, 1);
    let Inferred {
        outs,
        boots,
        boots_at,
        mut ev,
        seconds,
        plains,
    } = infer(&mut p, ev, &mut |d, t| progress("compute", d, t))?;
    let compute_s = clock.lap();
    progress("decrypt", 0, 1);
    let (mut same, mut correct, mut replica_correct, mut max_err) = (0usize, 0, 0, 0.0f64);
    for ((out, img), &label) in outs.iter().zip(&p.images).zip(&p.labels) {
        let got = p.setup.decrypt(&ev.store(out)?)?;
        let got = &got[..CLASSES];
        let (want, _) = packed_forward(&p.model, img, p.slots, p.sign)?;
        let err = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        max_err = max_err.max(err);
        same += usize::from(argmax(got) == argmax(&want));
        correct += usize::from(argmax(got) == label as usize);
        replica_correct += usize::from(argmax(&want) == label as usize);
    }
    let decrypt_s = clock.lap();
    let n = p.images.len() as f64;
    let mut checks = vec![
        Check::at_least(
            "top-1 equal to the replica's (fraction of images)",
            same as f64 / n,
            1.0,
        ),
        Check::at_most("max |logit - replica logit|", max_err, LOGIT_TOLERANCE),
        Check::info("accuracy on the labels (encrypted)", correct as f64 / n),
        Check::info(
            "accuracy on the labels (replica)",
            replica_correct as f64 / n,
        ),
        Check::info("seconds per image (compute)", compute_s / n),
        Check::info(
            "seconds of the first image (it encodes the plaintexts)",
            seconds.first().copied().unwrap_or(0.0),
        ),
        Check::info("bootstrappings per image", boots as f64 / n),
    ];
    if seconds.len() > 1 {
        let rest = &seconds[1..];
        checks.push(Check::info(
            "seconds per image after the first (plaintexts from the memo)",
            rest.iter().sum::<f64>() / rest.len() as f64,
        ));
    }
    let (hits, encoded, kept) = plains;
    checks.push(Check::info("plaintexts encoded", encoded as f64));
    checks.push(Check::info("plaintexts from the memo", hits as f64));
    checks.push(Check::info("plaintext memo (GB)", kept as f64 / 1e9));
    checks.extend(Check::device(ev.backend().device_report()));
    for (slots, count) in &boots_at {
        checks.push(Check::info(
            &format!("bootstrappings per image at {slots} slots"),
            *count as f64 / n,
        ));
    }
    Ok(RunReport {
        program: "resnet20".into(),
        params: cfg.params.clone(),
        size: p.images.len(),
        iterations: p.images.len(),
        checks,
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
        notes: vec![
            format!(
                "{} image(s) of {} from index {}, one ciphertext each; {}; AppReLU x (1 + p(x / 40)) / 2, p = composite minimax sign {{15, 15, 27}}, alpha = 13; real-message bootstrapping by the level rule with the sparse circuit of each layout's period (circuits at {} slots); encryption is timed in compute",
                p.images.len(),
                super::model::IMAGES_FILE,
                cfg.first,
                p.note,
                p.setup
                    .circuits()
                    .map(|b| b.slots().to_string())
                    .collect::<Vec<_>>()
                    .join(" / ")
            ),
        ],
    })
}

/// Records the inference of `cfg.images` images on the trace backend (the same code as
/// [`run_cpu`]).
pub fn record(cfg: &ResnetConfig) -> Result<Recorded> {
    if cfg.images == 0 {
        return Err(ProgramError::Invalid {
            name: "images",
            value: "0".into(),
            allowed: "at least 1".into(),
        });
    }
    let mut p = prepare(cfg)?;
    let ev = crate::setup::evaluator(
        &p.setup.ctx,
        TraceBackend::trace(p.setup.ctx.ring().clone()),
    )?;
    let Inferred {
        outs,
        boots,
        mut ev,
        ..
    } = infer(&mut p, ev, &mut |_, _| {})?;
    for o in &outs {
        let b = ev.backend_mut();
        b.record_store(&o.c0);
        b.record_store(&o.c1);
    }
    let instrs = ev.backend().instructions().to_vec();
    Ok(Recorded {
        label: format!(
            "resnet20@{}{} ({} image(s))",
            cfg.params,
            crate::setup::circuit_suffix(&p.setup.boot),
            p.images.len()
        ),
        counts: OpCounts::from_trace(&instrs),
        instrs,
        iterations: p.images.len(),
        unit: "image",
        // One run is one inference (one image): time per run = time per image.
        per_run: Some(1),
        window: format!("{} image(s); {}", p.images.len(), p.note),
        boots,
        levels_per_boot: p.setup.budget().after_boot,
        slots: p.setup.ctx.params().max_slots(),
    })
}
