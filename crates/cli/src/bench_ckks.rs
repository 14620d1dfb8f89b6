//! `tessera bench hmult|hrot|hoisted16`: CKKS operations at a parameter preset on the CPU
//! backend. Each measurement also decrypts its result and reports the precision against the
//! clear computation, so a fast but wrong result cannot go unnoticed.

use crate::bench::CkksBenchArgs;
use crate::bench::Word;
use crate::output::{emit, table};
use num_complex::Complex64;
use serde_json::json;
use std::io::IsTerminal;
use std::time::Instant;
use tessera_backend::{Backend, BackendChoice, Compute, Profiled};
use tessera_ckks::{
    decrypt, Ciphertext, CkksContext, CkksError, EvaluationKeys, Evaluator, KeyGenerator,
    Parameters, PrecisionStats, SecretKey,
};
use tessera_math::parallel;
use tessera_math::RnsPoly;

/// Which operation.
#[derive(Clone, Copy, Debug)]
pub enum CkksOp {
    /// Multiply, relinearise and rescale at the top level.
    HMult,
    /// One rotation (by one slot) at the top level.
    HRot,
    /// Sixteen rotations (by 1..16 slots) of one ciphertext, sharing one ModUp.
    Hoisted16,
}

impl CkksOp {
    fn name(self) -> &'static str {
        match self {
            CkksOp::HMult => "hmult",
            CkksOp::HRot => "hrot",
            CkksOp::Hoisted16 => "hoisted16",
        }
    }
}

fn progress(msg: &str) {
    if std::io::stderr().is_terminal() {
        eprintln!("{msg}");
    }
}

fn message(slots: usize) -> Vec<Complex64> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    (0..slots)
        .map(|_| {
            let mut next = || {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s as f64 / u64::MAX as f64) * 2.0 - 1.0
            };
            Complex64::new(next(), next())
        })
        .collect()
}

pub fn run(op: CkksOp, args: &CkksBenchArgs) -> Result<(), CkksError> {
    crate::bench::check_reps(args.reps)?;
    // A backend that cannot run here stops the benchmark before key generation.
    Compute::available(BackendChoice::process_default()?)?;
    let CkksBenchArgs {
        params,
        threads,
        reps,
        json,
        profile,
        level,
        dynamic,
        word,
    } = args;
    let (params, threads, reps, json, profile, level, dynamic) = (
        params.as_str(),
        *threads,
        *reps,
        *json,
        *profile,
        *level,
        *dynamic,
    );
    parallel::set_num_threads(threads)?;
    progress(&format!(
        "{}: building the ring and keys for '{params}'...",
        op.name()
    ));
    let ctx = CkksContext::new(Parameters::resolve(params)?)?;
    // Refused here, before the keys are made, when 32-bit words cannot hold the primes.
    let word = crate::bench::word_choice(word.as_deref(), ctx.ring())?;
    let mut kg = KeyGenerator::new(&ctx)?;
    let sk = kg.secret_key()?;
    let steps: Vec<i64> = match op {
        CkksOp::HMult => vec![],
        CkksOp::HRot => vec![1],
        CkksOp::Hoisted16 => (1..=16).collect(),
    };
    let top = ctx.params().max_level();
    let l = level.unwrap_or(top);
    if l == 0 || l > top {
        return Err(CkksError::InvalidParameter {
            name: "level",
            value: l.to_string(),
            allowed: format!("1 to L = {top} (HMult rescales, so level 0 cannot)"),
        });
    }
    let keys = parallel::install(|| -> Result<_, CkksError> {
        if dynamic {
            // Only the per-level keys of dynamic decomposition (h3.md 3.1) at this level.
            let mut keys = tessera_ckks::EvaluationKeys::default();
            kg.add_dynamic_keys(&mut keys, &sk, &[l], &steps, false)?;
            Ok(keys)
        } else {
            kg.evaluation_keys(&sk, &steps, false)
        }
    })?;
    let slots = ctx.params().max_slots();
    let scale = ctx.params().default_scale();
    let z = message(slots);
    let ct = kg.encrypt_sk(&ctx.encode(&z, slots, l, scale)?, &sk)?;
    let setup = Measured {
        op,
        params,
        threads,
        reps,
        json,
        profile,
        level: l,
        dynamic,
        word,
        ctx: &ctx,
        sk: &sk,
        keys: &keys,
        ct: &ct,
        z: &z,
        steps: &steps,
    };
    measure(setup, crate::bench::compute_for(word, ctx.ring().clone())?)
}

/// What [`measure`] times: the set, its keys and input, and the report's switches.
struct Measured<'a> {
    op: CkksOp,
    params: &'a str,
    threads: usize,
    reps: usize,
    json: bool,
    profile: bool,
    level: usize,
    dynamic: bool,
    word: Word,
    ctx: &'a std::sync::Arc<CkksContext>,
    sk: &'a SecretKey,
    keys: &'a EvaluationKeys,
    ct: &'a Ciphertext<RnsPoly>,
    z: &'a [Complex64],
    steps: &'a [i64],
}

/// Times the operation on `backend` (the word size's CPU backend) and reports it.
fn measure<B>(m: Measured<'_>, backend: B) -> Result<(), CkksError>
where
    B: Backend + Send,
    B::Poly: Send + Sync,
{
    let Measured {
        op,
        params,
        threads,
        reps,
        json,
        profile,
        level: l,
        dynamic,
        word,
        ctx,
        sk,
        keys,
        ct,
        z,
        steps,
    } = m;
    let slots = ctx.params().max_slots();
    // With --profile each primary is timed between device waits (on a GPU; no-op on a CPU).
    let mut ev = Evaluator::new(ctx, Profiled::new(backend).synchronizing(profile))?;
    let x = ev.load(ct)?;
    ev.backend_mut().reset();
    progress(&format!(
        "{}: measuring {reps} runs with {threads} thread(s)...",
        op.name()
    ));
    let mut times = Vec::with_capacity(reps);
    let mut last = None;
    // One untimed warm-up run first (page-ins, buffer pool, converter caches).
    for rep in 0..=reps {
        if rep == 1 {
            ev.backend_mut().reset();
        }
        let start = Instant::now();
        let out = parallel::install(|| -> Result<_, CkksError> {
            Ok(match op {
                CkksOp::HMult => {
                    vec![ev.mul_relin_rescale(&x, &x, keys)?]
                }
                CkksOp::HRot => vec![ev.rotate(&x, 1, keys)?],
                CkksOp::Hoisted16 => ev.rotate_hoisted(&x, steps, keys)?,
            })
        })?;
        // A GPU's work is asynchronous: the run ends when the device has finished it.
        ev.backend_mut().synchronize()?;
        if rep > 0 {
            times.push(start.elapsed().as_secs_f64());
        }
        // Keep only the last result (for the precision check): holding each run's output
        // while the next one runs would make every run allocate fresh memory.
        if rep == reps {
            last = Some(out);
        }
    }
    let (median, min) = crate::bench::median_min(&times);
    // Check the result of the last run against the clear computation.
    let out = last.expect("at least one run");
    let want: Vec<Complex64> = match op {
        CkksOp::HMult => z.iter().map(|v| v * v).collect(),
        CkksOp::HRot => (0..slots).map(|j| z[(j + 1) % slots]).collect(),
        CkksOp::Hoisted16 => (0..slots).map(|j| z[(j + 16) % slots]).collect(),
    };
    // Per-primary times, averaged per run (taken before the decryption check below).
    let prims = primary_times(ev.backend(), reps);
    let got = ctx.decode(&decrypt(&ev.store(out.last().expect("one output"))?, sk)?)?;
    let st = PrecisionStats::new(&want, &got);
    // Evaluation-key storage: seeded (b halves + seeds) against both halves stored.
    let key_bytes = keys.all().fold((0usize, 0usize), |(s, e), k| {
        (s + k.stored_bytes(), e + k.expanded_bytes())
    });
    if json {
        let mut line = json!({
            "op": op.name(), "params": params, "threads": threads, "median_s": median,
            "min_s": min, "reps": reps, "n": ctx.params().n(), "level": l,
            "decomposition": if dynamic { "dynamic" } else { "fixed" },
            "dnum": ctx.params().dnum(), "precision_bits": st.mean_precision_bits(),
            "evk_stored_bytes": key_bytes.0, "evk_expanded_bytes": key_bytes.1,
            "max_error_bits": st.max_error_bits(), "word_bits": word.bits(),
        });
        if let Some(d) = ev.backend().device_report() {
            line["device"] = device_json(&d);
        }
        crate::bench::bench_json(line);
        if profile {
            emit_profile(op.name(), &prims, median, true);
        }
    } else {
        emit(&format!(
            "{} at '{params}' (N = {}, level {l}, dnum = {}{}), {}, {}-bit words, kernel {}, {threads} thread(s), median of {reps}",
            op.name(),
            ctx.params().n(),
            ctx.params().dnum(),
            if dynamic {
                ", dynamic decomposition"
            } else {
                ""
            },
            backend_label(ev.backend().device_report().as_ref()),
            word.bits(),
            crate::bench::kernel_label()?
        ));
        table(
            &[
                "op",
                "median_ms",
                "min_ms",
                "precision_bits",
                "max_error_bits",
                "evk_MB_seeded/full",
            ],
            &[vec![
                op.name().to_string(),
                format!("{:.2}", median * 1e3),
                format!("{:.2}", min * 1e3),
                format!("{:.1}", st.mean_precision_bits()),
                format!("{:.1}", st.max_error_bits()),
                format!(
                    "{:.1}/{:.1}",
                    key_bytes.0 as f64 / 1e6,
                    key_bytes.1 as f64 / 1e6
                ),
            ]],
        );
        if let Some(d) = ev.backend().device_report() {
            emit(&device_line(&d));
        }
        if profile {
            emit_profile(op.name(), &prims, median, false);
        }
    }
    Ok(())
}

/// Per-primary times of a profiled backend, averaged per run: (name, seconds, calls).
/// "CPU backend", or the CUDA backend and its device, for a report's heading.
pub(crate) fn backend_label(d: Option<&tessera_backend::DeviceReport>) -> String {
    match d {
        Some(d) => format!("CUDA backend on {}", d.name),
        None => "CPU backend".into(),
    }
}

/// One line on an accelerator's memory: held now and at the peak, of its capacity.
pub(crate) fn device_line(d: &tessera_backend::DeviceReport) -> String {
    format!(
        "device memory: {:.2} GB held, peak {:.2} GB of {:.1} GB",
        d.bytes_in_use as f64 / 1e9,
        d.peak_bytes as f64 / 1e9,
        d.capacity_bytes as f64 / 1e9
    )
}

/// The `device` object of a bench line: an accelerator and its memory use (absent on CPUs).
pub(crate) fn device_json(d: &tessera_backend::DeviceReport) -> serde_json::Value {
    json!({"name": d.name, "capacity_bytes": d.capacity_bytes,
           "bytes_in_use": d.bytes_in_use, "peak_bytes": d.peak_bytes})
}

pub(crate) fn primary_times<B: Backend>(b: &Profiled<B>, reps: usize) -> Vec<(String, f64, f64)> {
    b.times()
        .iter()
        .map(|(k, t)| {
            (
                k.clone(),
                t.total.as_secs_f64() / reps as f64,
                t.calls as f64 / reps as f64,
            )
        })
        .collect()
}

/// Reports per-primary times: one JSON line each, or a table sorted by time with each
/// primary's share of the median run.
pub(crate) fn emit_profile(op: &str, prims: &[(String, f64, f64)], median: f64, json: bool) {
    if json {
        for (name, secs, calls) in prims {
            crate::bench::bench_json(
                json!({"op": op, "primary": name, "mean_s": secs, "calls": calls}),
            );
        }
        return;
    }
    let total: f64 = prims.iter().map(|p| p.1).sum();
    let mut sorted = prims.to_vec();
    sorted.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut rows: Vec<Vec<String>> = sorted
        .iter()
        .map(|(name, secs, calls)| {
            vec![
                name.clone(),
                format!("{calls:.0}"),
                format!("{:.2}", secs * 1e3),
                format!("{:.1}", 100.0 * secs / median),
            ]
        })
        .collect();
    rows.push(vec![
        "(primaries total)".into(),
        String::new(),
        format!("{:.2}", total * 1e3),
        format!("{:.1}", 100.0 * total / median),
    ]);
    emit("time per primary function, mean per run:");
    table(&["primary", "calls", "ms", "% of median"], &rows);
}
