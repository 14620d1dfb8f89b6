//! `tessera bench bootstrap`: full-slot CKKS bootstrapping at a preset on the CPU backend,
//! with its precision against the input (random complex slots, real and imaginary parts
//! uniform in [-1, 1]), levels left, key sizes, the DFT's rotation and plaintext counts, and
//! the failure-probability estimate. A progress bar on an interactive terminal.

use crate::bench::Word;
use crate::output::{emit, table};
use indicatif::{ProgressBar, ProgressStyle};
use num_complex::Complex64;
use serde_json::json;
use std::time::Instant;
use tessera_backend::trace::TraceCounts;
use tessera_backend::{Backend, BackendChoice, Compute, Profiled, TraceBackend};
use tessera_ckks::bootstrap::{linear::BsgsPlan, BootstrapKeys, BootstrapParameters, Bootstrapper};
use tessera_ckks::{
    decrypt, Ciphertext, CkksContext, CkksError, Evaluator, KeyGenerator, PrecisionStats, SecretKey,
};
use tessera_math::parallel;
use tessera_math::RnsPoly;

fn message(slots: usize) -> Vec<Complex64> {
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s as f64 / u64::MAX as f64) * 2.0 - 1.0
    };
    (0..slots).map(|_| Complex64::new(next(), next())).collect()
}

/// The switches of `bench bootstrap`.
pub struct Options {
    pub of_limb: bool,
    pub min_ks: bool,
    /// `--hoisting double|single`, else the parameter set's choice.
    pub double_hoisting: Option<bool>,
    pub meta_bts: Option<u32>,
    pub json: bool,
    pub profile: bool,
    /// `--word` (32 or 64), else [`Word::choose`]'s default.
    pub word: Option<String>,
}

pub fn run(params: &str, threads: usize, reps: usize, opts: Options) -> Result<(), CkksError> {
    crate::bench::check_reps(reps)?;
    // A backend that cannot run here stops the benchmark before key generation.
    Compute::available(BackendChoice::process_default()?)?;
    let Options {
        of_limb,
        min_ks,
        double_hoisting,
        meta_bts,
        json,
        profile,
        word,
    } = opts;
    parallel::set_num_threads(threads)?;
    // Hidden in --json mode, and unless stderr is a terminal (indicatif's default draw target).
    let bar = if json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(3 + reps as u64)
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .expect("valid template"),
    );
    bar.set_message(format!("building '{params}' and the circuit"));
    // The set's own circuit options stay on (cifher: minimum key-switching); flags add to them.
    let (ckks_params, mut bp) = tessera_ckks::params_file::resolve_bootstrap(params)?;
    bp.of_limb |= of_limb;
    bp.min_ks |= min_ks;
    bp.double_hoisting = double_hoisting.unwrap_or(bp.double_hoisting);
    bp.meta_log_scale = meta_bts.or(bp.meta_log_scale);
    let ctx = CkksContext::new(ckks_params)?;
    // Refused here, before the keys are made, when 32-bit words cannot hold the primes.
    let word = crate::bench::word_choice(word.as_deref(), ctx.ring())?;
    let boot = Bootstrapper::new(&ctx, bp.clone())?;
    bar.inc(1);
    bar.set_message(format!(
        "generating {} rotation keys",
        boot.rotations().len()
    ));
    let mut kg = KeyGenerator::new(&ctx)?;
    let sk = kg.secret_key()?;
    let keys = parallel::install(|| boot.keygen(&mut kg, &sk))?;
    bar.inc(1);
    let slots = ctx.params().max_slots();
    let z = message(slots);
    let ct = kg.encrypt_sk(
        &ctx.encode(
            &z,
            slots,
            ctx.params().base_level(),
            ctx.params().default_scale(),
        )?,
        &sk,
    )?;
    let m = Measured {
        params,
        threads,
        reps,
        json,
        profile,
        word,
        ctx: &ctx,
        boot: &boot,
        bp: &bp,
        keys: &keys,
        sk: &sk,
        ct: &ct,
        z: &z,
        bar,
    };
    measure(m, crate::bench::compute_for(word, ctx.ring().clone())?)
}

/// What [`measure`] runs: the set, circuit, keys and input, and the report's switches.
struct Measured<'a> {
    params: &'a str,
    threads: usize,
    reps: usize,
    json: bool,
    profile: bool,
    word: Word,
    ctx: &'a std::sync::Arc<CkksContext>,
    boot: &'a Bootstrapper,
    bp: &'a BootstrapParameters,
    keys: &'a BootstrapKeys,
    sk: &'a SecretKey,
    ct: &'a Ciphertext<RnsPoly>,
    z: &'a [Complex64],
    bar: ProgressBar,
}

/// Times bootstrapping on `backend` (the word size's CPU backend) and reports it.
fn measure<B>(m: Measured<'_>, backend: B) -> Result<(), CkksError>
where
    B: Backend + Send,
    B::Poly: Send + Sync,
{
    let Measured {
        params,
        threads,
        reps,
        json,
        profile,
        word,
        ctx,
        boot,
        bp,
        keys,
        sk,
        ct,
        z,
        bar,
    } = m;
    let slots = ctx.params().max_slots();
    let mut ev = Evaluator::new(ctx, Profiled::new(backend).synchronizing(profile))?;
    let x = ev.load(ct)?;
    bar.inc(1);
    // One untimed run first: it encodes the DFT diagonals, which the circuit keeps (ARK's
    // "plaintexts prepared" for every H-(I)DFT).
    bar.set_message("warm-up run (encodes the DFT plaintexts)");
    parallel::install(|| boot.bootstrap(&mut ev, &x, keys))?;
    ev.backend_mut().reset();
    let mut times = Vec::with_capacity(reps);
    let mut last = None;
    for rep in 0..reps {
        bar.set_message(format!("bootstrapping, run {} of {reps}", rep + 1));
        let start = Instant::now();
        let out = parallel::install(|| boot.bootstrap(&mut ev, &x, keys))?;
        // A GPU's work is asynchronous: the run ends when the device has finished it.
        ev.backend_mut().synchronize()?;
        times.push(start.elapsed().as_secs_f64());
        last = Some(out);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let (median, min) = crate::bench::median_min(&times);
    let out = last.expect("at least one run");
    let prims = crate::bench_ckks::primary_times(ev.backend(), reps);
    // Rescales left before the base modulus (levels of two primes with double-prime rescaling).
    let levels_left = (out.level - ctx.params().base_level()) / ctx.params().primes_per_rescale();
    // The same circuit on the trace backend (no arithmetic): its memory traffic.
    let mut tr = Evaluator::new(ctx, TraceBackend::trace(ctx.ring().clone()))?;
    let tx = tr.load(ct)?;
    boot.bootstrap(&mut tr, &tx, keys)?;
    let counts = TraceCounts::from_instructions(tr.backend().instructions());
    let got = ctx.decode(&decrypt(&ev.store(&out)?, sk)?)?;
    let st = PrecisionStats::new(z, &got);
    let key_bytes: usize = keys.eval.all().map(|k| k.stored_bytes()).sum::<usize>()
        + keys
            .encapsulation
            .iter()
            .map(|(a, b)| a.stored_bytes() + b.stored_bytes())
            .sum::<usize>();
    let (cts, stc) = boot.matrices();
    let count = |ms: &[tessera_ckks::encoder::DiagonalMatrix]| {
        ms.iter().fold((0usize, 0usize), |(r, p), m| {
            (
                r + BsgsPlan::new_for(m, bp.min_ks).hrot_count(bp.min_ks),
                p + m.diags.len(),
            )
        })
    };
    let (cts_rot, cts_pm) = count(&cts);
    let (stc_rot, stc_pm) = count(&stc);
    if json {
        let mut line = json!({
            "op": "bootstrap", "params": params, "ckks_params": ctx.params().name(), "threads": threads, "word_bits": word.bits(), "median_s": median,
            "min_s": min, "reps": reps, "times_s": times,
            "precision_bits": st.mean_precision_bits(), "max_error_bits": st.max_error_bits(),
            "levels_left": levels_left, "failure_log2": boot.failure_log2(),
            "key_bytes_stored": key_bytes, "rotation_keys": boot.rotations().len(),
            "key_cache_bytes": tessera_math::key_cache::bytes(),
            "cts": {"levels": bp.cts_levels, "hrot": cts_rot, "pmult": cts_pm},
            "stc": {"levels": bp.stc_levels, "hrot": stc_rot, "pmult": stc_pm},
            "evalmod": {"k": bp.k_bound, "degree": bp.cheb_degree, "double_angle": bp.double_angle},
            "encapsulation_h": bp.encapsulation, "of_limb": bp.of_limb, "min_ks": bp.min_ks, "double_hoisting": bp.double_hoisting, "meta_bts": bp.meta_log_scale,
            "dft_plaintexts": boot.plaintext_store().0, "dft_plaintext_bytes": boot.plaintext_store().1,
            "trace": {"key_bytes_loaded": counts.key_bytes_loaded,
                      "distinct_key_objects": counts.distinct_key_objects,
                      "distinct_key_bytes": counts.distinct_key_bytes,
                      "plaintext_bytes_loaded": counts.plaintext_bytes_loaded,
                      "prng_words": counts.prng_words, "ntt_limbs": counts.ntt_limbs,
                      "intt_limbs": counts.intt_limbs, "bconv_macs": counts.bconv_macs,
                      "elementwise_mults": counts.elementwise_mults},
        });
        if let Some(d) = ev.backend().device_report() {
            line["device"] = crate::bench_ckks::device_json(&d);
        }
        crate::bench::bench_json(line);
        if profile {
            crate::bench_ckks::emit_profile("bootstrap", &prims, median, true);
        }
    } else {
        emit(&format!(
            "bootstrapping at '{params}' (CKKS set '{}', N = {}, {slots} slots, L = {}, depth {}), {}, {}-bit words, kernel {}, {threads} thread(s), {reps} run(s)",
            ctx.params().name(),
            ctx.params().n(),
            ctx.params().max_level(),
            bp.depth(),
            crate::bench_ckks::backend_label(ev.backend().device_report().as_ref()),
            word.bits(),
            crate::bench::kernel_label()?
        ));
        table(
            &[
                "median_s",
                "min_s",
                "precision_bits",
                "max_error_bits",
                "levels_left",
                "log2 P(fail)",
                "keys MB",
                "DFT pt MB",
            ],
            &[vec![
                format!("{median:.2}"),
                format!("{:.2}", min),
                format!("{:.1}", st.mean_precision_bits()),
                format!("{:.1}", st.max_error_bits()),
                levels_left.to_string(),
                format!("{:.1}", boot.failure_log2()),
                format!("{:.0}", key_bytes as f64 / 1e6),
                format!("{:.0}", boot.plaintext_store().1 as f64 / 1e6),
            ]],
        );
        emit(&format!(
            "DFT: CoeffToSlot {cts_rot} HRot / {cts_pm} PMult over {} levels; SlotToCoeff {stc_rot} HRot / {stc_pm} PMult over {} levels; {} hoisting",
            bp.cts_levels,
            bp.stc_levels,
            if bp.min_ks || !bp.hoisting {
                "no"
            } else if bp.double_hoisting {
                "double"
            } else {
                "single"
            }
        ));
        emit(&format!(
            "trace of the circuit ({}): {:.0} MB of keys ({} distinct key digits, {:.0} MB distinct) and {:.0} MB of plaintexts loaded, {} limb NTTs",
            if bp.meta_log_scale.is_some() {
                "two bootstrappings, META-BTS"
            } else {
                "one bootstrapping"
            },
            counts.key_bytes_loaded as f64 / 1e6,
            counts.distinct_key_objects,
            counts.distinct_key_bytes as f64 / 1e6,
            counts.plaintext_bytes_loaded as f64 / 1e6,
            counts.ntt_limbs + counts.intt_limbs
        ));
        if let Some(d) = ev.backend().device_report() {
            emit(&crate::bench_ckks::device_line(&d));
        }
        if profile {
            crate::bench_ckks::emit_profile("bootstrap", &prims, median, false);
        }
    }
    Ok(())
}
