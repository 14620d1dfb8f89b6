//! Heavy checks at the N = 2^16 `ark` preset, run on request:
//! `cargo test --release -p tessera-ckks --test heavy -- --ignored`.

mod common;

use num_complex::Complex64;
use tessera_backend::CpuBackend;
use tessera_ckks::*;
use tessera_math::sampling::Seed;

#[test]
#[ignore = "N = 2^16: run with --ignored"]
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

/// Bootstrapping at `ark` (N = 2^16, full slots): at least 20 bits of mean precision and 8
/// levels left. About a minute and 6 GB: run with `--ignored`.
#[test]
#[ignore = "N = 2^16 bootstrapping: run with --ignored"]
fn ark_bootstrapping_meets_its_precision_and_levels() {
    use tessera_ckks::bootstrap::{BootstrapParameters, Bootstrapper};
    let (name, bp) = BootstrapParameters::preset("ark").unwrap();
    let ctx = CkksContext::new(Parameters::preset(name).unwrap()).unwrap();
    let boot = Bootstrapper::new(
        &ctx,
        BootstrapParameters {
            of_limb: true,
            ..bp
        },
    )
    .unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([3; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let keys = boot.keygen(&mut kg, &sk).unwrap();
    let slots = ctx.params().max_slots();
    let z = common::values(5, slots);
    let ct = kg
        .encrypt_sk(
            &ctx.encode(&z, slots, 0, ctx.params().default_scale())
                .unwrap(),
            &sk,
        )
        .unwrap();
    let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
    let x = ev.load(&ct).unwrap();
    let y = boot.bootstrap(&mut ev, &x, &keys).unwrap();
    assert!(y.level >= 8);
    let got = ctx
        .decode(&decrypt(&ev.store(&y).unwrap(), &sk).unwrap())
        .unwrap();
    let p = PrecisionStats::new(&z, &got);
    assert!(
        p.mean_precision_bits() >= 20.0,
        "{} bits",
        p.mean_precision_bits()
    );
}
