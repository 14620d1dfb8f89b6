//! `dnn-inference`: the forward pass of the `dnn-train` network ([`super::he::forward`], steps
//! 1-4) on encrypted test batches of four images, for REED Table 5's DNN inference row
//! (reed.md 7, which does not state the batch of an inference; ours is the training batch).
//!
//! The weights are the replica's after REED's full schedule ([`trained_weights`]: 12,500
//! plaintext SGD steps from the initial weights) and are encrypted too, so the computation is
//! the training's forward pass, operation for operation, without the derivatives `f'` that
//! only the backward pass reads. Each batch starts from the weights and inputs at the top
//! level (every batch is alike: one batch is the steady state). The decrypted outputs are
//! checked against the replica's [`model::forward`] on the same weights and images.

use super::model::{self, Digits, Dims, Weights, BATCH, CLASSES};
use super::packing::Layout;
use super::{he, prepare, scales, shape, DnnConfig, Prepared, Purpose, FULL_BATCHES};
use crate::counter::{Counting, OpCounts};
use crate::error::Result;
use crate::lola::model::argmax;
use crate::report::{max_diff, Check, Phases, Recorded, RunReport, Stopwatch};
use tessera_backend::{Backend, Compute, TraceBackend};
use tessera_ckks::{Ciphertext, Evaluator};

/// The decrypted outputs must match the replica's within this (absolute; the outputs fit
/// one-hot targets, so they are O(1)).
pub const OUTPUT_TOLERANCE: f64 = 1e-3;

/// The weights inference runs with: the replica trained on REED's full schedule.
pub fn trained_weights(digits: &Digits, dims: &Dims) -> Weights {
    model::train(digits, &model::initial_weights(dims), 0, FULL_BATCHES)
}

/// The outputs' ciphertexts (one per batch) and the bootstrappings.
fn infer<B: Backend>(
    p: &Prepared,
    ev: &mut Evaluator<B>,
    dims: &Dims,
    layout: &Layout,
    progress: &mut dyn FnMut(usize),
) -> Result<(Vec<Ciphertext<B::Poly>>, usize)> {
    let mut ar = scales::Arith::new(&p.setup, ev);
    let mut outs = Vec::with_capacity(p.batches.len());
    for (t, batch) in p.batches.iter().enumerate() {
        let mut w1 = ar.ev.load(&p.state[0])?;
        let mut w2 = ar.ev.load(&p.state[1])?;
        let mut w3 = ar.ev.load(&p.state[2])?;
        let x = ar.ev.load(&batch.x)?;
        let f = he::forward(&mut ar, dims, layout, [&mut w1, &mut w2, &mut w3], x, false)?;
        outs.push(f.z3);
        progress(t);
    }
    Ok((outs, ar.boots))
}

/// Classifies `cfg.iterations` encrypted test batches on the CPU and checks every output
/// against the replica's.
pub fn run_cpu(cfg: &DnnConfig, progress: &mut dyn FnMut(&str, usize, usize)) -> Result<RunReport> {
    let (dims, layout) = shape(cfg)?;
    let mut clock = Stopwatch::start();
    progress("keygen", 0, 1);
    let p = prepare(cfg, &dims, &layout, cfg.iterations, Purpose::Infer)?;
    let keygen_s = clock.lap();
    let mut ev = crate::setup::evaluator(
        &p.setup.ctx,
        Counting::new(Compute::from_default(p.setup.ctx.ring().clone())?),
    )?;
    progress("compute", 0, cfg.iterations);
    let (outs, boots) = infer(&p, &mut ev, &dims, &layout, &mut |t| {
        progress("compute", t + 1, cfg.iterations)
    })?;
    let compute_s = clock.lap();
    progress("decrypt", 0, 1);
    let (mut err, mut same, mut correct, mut replica_correct) = (0.0f64, 0usize, 0usize, 0usize);
    for (t, out) in outs.iter().enumerate() {
        let slots = p.setup.decrypt(&ev.store(out)?)?;
        let (xs, ys) = p.digits.test_batch(t)?;
        for (b, (x, &y)) in xs.iter().zip(&ys).enumerate() {
            let got: Vec<f64> = (0..CLASSES).map(|c| slots[layout.slot(b, c, 0)]).collect();
            let want = &model::forward(&p.w0, x)[2];
            err = err.max(max_diff(&got, want));
            let (g, w) = (argmax(&got), argmax(want));
            same += usize::from(g == w);
            correct += usize::from(g == y as usize);
            replica_correct += usize::from(w == y as usize);
        }
    }
    let images = (outs.len() * BATCH) as f64;
    let decrypt_s = clock.lap();
    Ok(RunReport {
        program: "dnn-inference".into(),
        params: cfg.params.clone(),
        size: cfg.side,
        iterations: cfg.iterations,
        checks: vec![
            Check::at_most("max |z3 - z3_replica|", err, OUTPUT_TOLERANCE),
            Check::at_least(
                "top-1 equal to the replica's (fraction of images)",
                same as f64 / images,
                1.0,
            ),
            Check::info("accuracy on the labels (encrypted)", correct as f64 / images),
            Check::info("accuracy on the labels (replica)", replica_correct as f64 / images),
            Check::info(
                "test accuracy of the weights, replica (all test images)",
                model::accuracy(&p.w0, &p.digits),
            ),
            Check::info("seconds per batch (compute)", compute_s / outs.len() as f64),
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
            "forward pass of the dnn-train network (ours) {}-{}-{}-{} on {}x{} averaged digits, weights trained by the replica for {FULL_BATCHES} batches and encrypted; {} test batch(es) of {BATCH} images ({} to {}); keygen includes the replica's training and the encryption of weights and batches",
            dims.inputs,
            dims.h1,
            dims.h2,
            CLASSES,
            dims.side,
            dims.side,
            cfg.iterations,
            model::TRAIN_IMAGES,
            model::TRAIN_IMAGES + BATCH * cfg.iterations - 1,
        )],
    })
}

/// Records the inference on the trace backend: `cfg.iterations` batches, or with `steady`
/// one batch (every batch starts from the top, so one batch is the steady state and time
/// per batch is the window's time).
pub fn record(cfg: &DnnConfig, steady: bool) -> Result<Recorded> {
    let cfg = &DnnConfig {
        iterations: if steady { 1 } else { cfg.iterations },
        ..cfg.clone()
    };
    let (dims, layout) = shape(cfg)?;
    let p = prepare(cfg, &dims, &layout, cfg.iterations, Purpose::Infer)?;
    let mut ev = crate::setup::evaluator(
        &p.setup.ctx,
        TraceBackend::trace(p.setup.ctx.ring().clone()),
    )?;
    let (outs, boots) = infer(&p, &mut ev, &dims, &layout, &mut |_| {})?;
    let b = ev.backend_mut();
    for ct in &outs {
        b.record_store(&ct.c0);
        b.record_store(&ct.c1);
    }
    let instrs = ev.backend().instructions().to_vec();
    Ok(Recorded {
        label: format!(
            "dnn-inference{}@{} ({} batch(es) of {BATCH})",
            cfg.side, cfg.params, cfg.iterations
        ),
        counts: OpCounts::from_trace(&instrs),
        instrs,
        iterations: cfg.iterations,
        unit: "batch",
        // Inference is a stream of batches: no fixed run.
        per_run: None,
        window: format!(
            "{} batch(es) of {BATCH} images from the top level{}",
            cfg.iterations,
            if steady { ": steady state" } else { "" }
        ),
        boots,
        levels_per_boot: p.setup.budget().after_boot,
        slots: p.setup.ctx.params().max_slots(),
    })
}
