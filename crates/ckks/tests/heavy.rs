//! Checks at N = 2^16 (the `ark` preset and the bootstrapping presets). Two run in CI (issue 24
//! item 9: one of each kind at real parameters): `ark` HMult/HRot precision and one `ark`
//! bootstrapping with on-demand rotation keys and OF-Limb plaintexts (memory about 2 GB). The
//! others are heavy and run on request:
//! `cargo test --release -p tessera-ckks --test heavy -- --ignored`.

mod common;

use num_complex::Complex64;
use tessera_backend::CpuBackend;
use tessera_ckks::bootstrap::{BootstrapParameters, Bootstrapper};
use tessera_ckks::*;
use tessera_math::sampling::Seed;

#[test]
fn ark_preset_hmult_hrot_rescale_match_the_clear() {
    let ctx = CkksContext::new(Parameters::preset("ark").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([42; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let keys = kg.evaluation_keys(&sk, &[1, -7], true).unwrap();
    let slots = ctx.params().max_slots();
    let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
    let z: Vec<Complex64> = (0..slots)
        .map(|k| {
            Complex64::new(
                ((k * 7919) % 1000) as f64 / 1000.0 - 0.5,
                ((k * 104729) % 1000) as f64 / 1000.0 - 0.5,
            )
        })
        .collect();
    let ct = kg
        .encrypt_sk(&ctx.encode(&z, slots, l, scale).unwrap(), &sk)
        .unwrap();
    let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
    let x = ev.load(&ct).unwrap();
    let sq = ev.mul_relin(&x, &x, &keys).unwrap();
    let sq = ev.rescale(&sq).unwrap();
    let r = ev.rotate(&sq, -7, &keys).unwrap();
    let c = ev.conjugate(&r, &keys).unwrap();
    let got = ctx
        .decode(&decrypt(&ev.store(&c).unwrap(), &sk).unwrap())
        .unwrap();
    let want: Vec<Complex64> = (0..slots)
        .map(|j| (z[(j + slots - 7) % slots] * z[(j + slots - 7) % slots]).conj())
        .collect();
    let st = PrecisionStats::new(&want, &got);
    // Delta = 2^50: mean precision above 30 bits, worst slot above 25 bits.
    assert!(
        st.mean_precision_bits() > 30.0 && st.max_error_bits() > 25.0,
        "{st:?}"
    );
    let rlk = keys.relin.as_ref().unwrap();
    assert_eq!(
        rlk.stored_bytes() * 2,
        rlk.expanded_bytes() + 2 * 32 * rlk.dnum()
    );
}

/// One full-slot bootstrapping of random slots at a bootstrapping preset, on the CPU:
/// (mean precision bits, worst-slot error bits, levels left).
fn bootstrap_once(name: &str, of_limb: bool, min_ks: bool) -> (f64, f64, usize) {
    bootstrap_with(name, |bp| BootstrapParameters {
        of_limb,
        min_ks,
        ..bp
    })
}

/// Bootstrapping at `ark` with the rotation keys made on first use (one held at a time) and
/// OF-Limb plaintexts: what CI can afford at N = 2^16.
fn ark_light() -> Setup {
    setup(
        "ark",
        |bp| BootstrapParameters {
            of_limb: true,
            ..bp
        },
        true,
    )
}

/// Bootstraps random slots at the bootstrapping preset `name` with its circuit changed by
/// `circuit`: (mean precision bits, worst-slot bits, levels left).
fn bootstrap_with(
    name: &str,
    circuit: impl FnOnce(BootstrapParameters) -> BootstrapParameters,
) -> (f64, f64, usize) {
    run(&setup(name, circuit, false))
}

/// A bootstrapping preset's context, circuit, keys (made eagerly or on demand) and an
/// encryption of random full-slot values at the base level.
struct Setup {
    ctx: std::sync::Arc<CkksContext>,
    boot: Bootstrapper,
    sk: SecretKey,
    keys: tessera_ckks::bootstrap::BootstrapKeys,
    z: Vec<Complex64>,
    ct: Ciphertext<tessera_math::RnsPoly>,
}

fn setup(
    name: &str,
    circuit: impl FnOnce(BootstrapParameters) -> BootstrapParameters,
    on_demand: bool,
) -> Setup {
    let (ckks, bp) = BootstrapParameters::preset(name).unwrap();
    let ctx = CkksContext::new(Parameters::preset(ckks).unwrap()).unwrap();
    let boot = Bootstrapper::new(&ctx, circuit(bp)).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([3; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let keys = if on_demand {
        boot.keygen_on_demand(&mut kg, &sk).unwrap()
    } else {
        boot.keygen(&mut kg, &sk).unwrap()
    };
    let slots = ctx.params().max_slots();
    let z = common::values(5, slots);
    let ct = kg
        .encrypt_sk(
            &ctx.encode(
                &z,
                slots,
                ctx.params().base_level(),
                ctx.params().default_scale(),
            )
            .unwrap(),
            &sk,
        )
        .unwrap();
    Setup {
        ctx,
        boot,
        sk,
        keys,
        z,
        ct,
    }
}

/// Bootstraps the setup's ciphertext on the CPU: (mean precision bits, worst-slot bits,
/// levels left).
fn run(s: &Setup) -> (f64, f64, usize) {
    let mut ev = Evaluator::new(&s.ctx, CpuBackend::new(s.ctx.ring().clone())).unwrap();
    let x = ev.load(&s.ct).unwrap();
    let y = s.boot.bootstrap(&mut ev, &x, &s.keys).unwrap();
    assert_eq!(y.level, s.boot.output_level());
    precision(s, &ev.store(&y).unwrap())
}

fn precision(s: &Setup, out: &Ciphertext<tessera_math::RnsPoly>) -> (f64, f64, usize) {
    let got = s.ctx.decode(&decrypt(out, &s.sk).unwrap()).unwrap();
    let p = PrecisionStats::new(&s.z, &got);
    eprintln!(
        "{}: mean {:.2} bits, worst {:.2}, {} levels left",
        s.ctx.params().name(),
        p.mean_precision_bits(),
        p.max_error_bits(),
        s.boot.levels_left()
    );
    (
        p.mean_precision_bits(),
        p.max_error_bits(),
        s.boot.levels_left(),
    )
}

/// Bootstrapping at `ark` in CI (issue 24 item 9): at least 20 bits of mean precision and 8
/// levels left, with on-demand keys and OF-Limb plaintexts to stay within CI's memory.
#[test]
fn ark_bootstrapping_in_ci_meets_its_precision_and_levels() {
    let (mean, _, levels) = run(&ark_light());
    assert!(levels >= 8);
    assert!(mean >= 20.0, "{mean} bits");
}

/// Issue 24 item 10 at `ark`: the bootstrapping program the CPU executes equals the trace
/// backend's stream, instruction for instruction (the on-demand keys are made twice, once per
/// run). Several minutes on 2 cores: run with `--ignored`.
#[test]
#[ignore = "N = 2^16 bootstrapping twice: run with --ignored"]
fn ark_bootstrapping_executes_exactly_its_trace() {
    let s = ark_light();
    let (out, len) = common::bootstrap_cpu_equals_trace(&s.ctx, &s.boot, &s.keys, &s.ct);
    eprintln!("ark-boot: {len} instructions equal");
    let (mean, _, _) = precision(&s, &out);
    assert!(mean >= 20.0, "{mean} bits");
}

/// Bootstrapping at `ark` (N = 2^16, full slots): at least 20 bits of mean precision and 8
/// levels left. About a minute and 6 GB: run with `--ignored`.
#[test]
#[ignore = "N = 2^16 bootstrapping: run with --ignored"]
fn ark_bootstrapping_meets_its_precision_and_levels() {
    let (mean, _, levels) = bootstrap_once("ark", true, false);
    assert!(levels >= 8);
    assert!(mean >= 20.0, "{mean} bits");
}

/// Bootstrapping at `h3` (h3-boot: H3's 30 levels, wider primes): measured 10.9 bits mean
/// and 9.1 worst with 15 levels left; the bound leaves a bit of margin and checks that no
/// slot is far off (docs/bootstrapping.md: a too-small P once caused outliers). About 4 GB.
#[test]
#[ignore = "N = 2^16 bootstrapping: run with --ignored"]
fn h3_bootstrapping_is_uniformly_precise() {
    let (mean, worst, levels) = bootstrap_once("h3", false, false);
    assert_eq!(levels, 15);
    assert!(mean >= 10.0 && worst >= 8.0, "{mean} / {worst} bits");
}

/// Bootstrapping at `reed` (reed-boot: L = 30, dnum = 31, K = 1) with minimum key-switching,
/// as the simulator records it: measured 14.9 bits mean and 13.1 worst with 15 levels left.
/// About 3.5 minutes and 15 GB.
#[test]
#[ignore = "N = 2^16 bootstrapping, 15 GB: run with --ignored"]
fn reed_bootstrapping_restores_fifteen_levels() {
    let (mean, worst, levels) = bootstrap_once("reed", false, true);
    assert_eq!(levels, 15);
    assert!(mean >= 14.0 && worst >= 12.0, "{mean} / {worst} bits");
}

/// Bootstrapping at `cifher` (cifher-boot: double-prime rescaling, 32-bit primes, minimum
/// key-switching as cifher.md V-B adopts it): measured 17.0 bits mean and 15.1 worst with
/// the nine usable levels of cifher.md VI-B. About 1.5 minutes and 12 GB.
#[test]
#[ignore = "N = 2^16 bootstrapping, 12 GB: run with --ignored"]
fn cifher_bootstrapping_keeps_nine_levels() {
    let (mean, worst, levels) = bootstrap_once("cifher", false, true);
    assert_eq!(levels, 9);
    assert!(mean >= 16.0 && worst >= 14.0, "{mean} / {worst} bits");
}

/// META-BTS at `ark`: measured 36.1 bits mean and 33.4 worst with 7 levels left (one
/// bootstrapping: 20.95 / 19.15 bits, 8 levels). About 2 minutes and 6 GB.
#[test]
#[ignore = "N = 2^16 bootstrapping twice: run with --ignored"]
fn ark_meta_bts_reaches_thirty_bits() {
    let (mean, worst, levels) = bootstrap_with("ark", |bp| BootstrapParameters {
        of_limb: true,
        meta_log_scale: Some(16),
        ..bp
    });
    assert_eq!(levels, 7);
    assert!(mean >= 30.0 && worst >= 28.0, "{mean} / {worst} bits");
}
