//! Homomorphic results against the same computation in the clear, on the insecure `test-small`
//! set (N = 2^10, Delta = 2^36). Precision bounds are stated per test.

mod common;
use common::values;

use num_complex::Complex64;
use std::sync::Arc;
use tessera_backend::CpuBackend;
use tessera_ckks::*;
use tessera_math::sampling::Seed;
use tessera_math::RnsPoly;

fn setup(seed: u8) -> (Arc<CkksContext>, KeyGenerator, SecretKey) {
    let ctx = CkksContext::new(Parameters::preset("test-small").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([seed; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    (ctx, kg, sk)
}

fn evaluator(ctx: &Arc<CkksContext>) -> Evaluator<CpuBackend> {
    Evaluator::new(ctx, CpuBackend::new(ctx.ring().clone())).unwrap()
}

#[test]
fn encryption_round_trip_precision() {
    let (ctx, mut kg, sk) = setup(1);
    let pk = kg.public_key(&sk).unwrap();
    let z = values(7, 512);
    let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
    let pt = ctx.encode(&z, 512, l, scale).unwrap();
    // Secret-key encryption: error e only, |e_k| <= 6 sigma, so max slot error < 2^-18 here.
    let ct = kg.encrypt_sk(&pt, &sk).unwrap();
    let got = ctx.decode(&decrypt(&ct, &sk).unwrap()).unwrap();
    let st = PrecisionStats::new(&z, &got);
    assert!(st.max_error < 2f64.powi(-18), "sk: {st:?}");
    // Public-key encryption adds u*e + e0 + e1*s: max slot error < 2^-14 here.
    let ct = kg.encrypt_pk(&pt, &pk).unwrap();
    let got = ctx.decode(&decrypt(&ct, &sk).unwrap()).unwrap();
    let st = PrecisionStats::new(&z, &got);
    assert!(st.max_error < 2f64.powi(-14), "pk: {st:?}");
    assert!(st.mean_precision_bits() > 18.0, "pk: {st:?}");
    // A key of another key generation is refused (it would decrypt to garbage).
    let other = KeyGenerator::from_seed(&ctx, &Seed([9; 32]))
        .unwrap()
        .secret_key()
        .unwrap();
    assert!(matches!(
        decrypt(&ct, &other),
        Err(CkksError::KeySetMismatch { .. })
    ));
}

#[test]
fn additions_match_the_clear() {
    let (ctx, mut kg, sk) = setup(2);
    let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
    let (a, b) = (values(1, 512), values(2, 512));
    let pa = ctx.encode(&a, 512, l, scale).unwrap();
    let pb = ctx.encode(&b, 512, l, scale).unwrap();
    let (ca, cb) = (
        kg.encrypt_sk(&pa, &sk).unwrap(),
        kg.encrypt_sk(&pb, &sk).unwrap(),
    );
    let mut ev = evaluator(&ctx);
    let (xa, xb) = (ev.load(&ca).unwrap(), ev.load(&cb).unwrap());
    let dec = |c: &Ciphertext<RnsPoly>| ctx.decode(&decrypt(c, &sk).unwrap()).unwrap();
    let sum = ev.add(&xa, &xb).unwrap();
    let diff = ev.sub(&xa, &xb).unwrap();
    let neg = ev.neg(&xa).unwrap();
    let padd = ev.add_plain(&xa, &pb).unwrap();
    for (c, f) in [
        (
            sum,
            Box::new(|x: Complex64, y: Complex64| x + y)
                as Box<dyn Fn(Complex64, Complex64) -> Complex64>,
        ),
        (diff, Box::new(|x, y| x - y)),
        (neg, Box::new(|x: Complex64, _| -x)),
        (padd, Box::new(|x, y| x + y)),
    ] {
        let host = ev.store(&c).unwrap();
        let got = dec(&host);
        let want: Vec<Complex64> = a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect();
        let st = PrecisionStats::new(&want, &got);
        assert!(st.max_error < 2f64.powi(-17), "{st:?}");
    }
}

#[test]
fn plaintext_multiplication_and_rescale_match_the_clear() {
    let (ctx, mut kg, sk) = setup(3);
    let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
    let (a, b) = (values(3, 512), values(4, 512));
    let pa = ctx.encode(&a, 512, l, scale).unwrap();
    let pb = ctx.encode(&b, 512, l, scale).unwrap();
    let ca = kg.encrypt_sk(&pa, &sk).unwrap();
    let mut ev = evaluator(&ctx);
    let x = ev.load(&ca).unwrap();
    let prod = ev.mul_plain(&x, &pb).unwrap();
    let r = ev.rescale(&prod).unwrap();
    assert_eq!(r.level, l - 1);
    assert!((r.scale - scale * scale / ctx.params().q()[l] as f64).abs() < 1e-6 * r.scale);
    let got = ctx
        .decode(&decrypt(&ev.store(&r).unwrap(), &sk).unwrap())
        .unwrap();
    let want: Vec<Complex64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    // Product error ~ |m| * e / Delta plus the rescale rounding: max slot error < 2^-14.
    let st = PrecisionStats::new(&want, &got);
    assert!(st.max_error < 2f64.powi(-14), "{st:?}");
    // Level drop keeps the message.
    let d = ev.drop_levels(&x, 2).unwrap();
    let got = ctx
        .decode(&decrypt(&ev.store(&d).unwrap(), &sk).unwrap())
        .unwrap();
    assert!(PrecisionStats::new(&a, &got).max_error < 2f64.powi(-17));
}

#[test]
fn rescale_on_the_backend_equals_the_math_layer_rescale() {
    let (ctx, mut kg, sk) = setup(4);
    let l = ctx.params().max_level();
    let pt = ctx
        .encode(&values(5, 512), 512, l, ctx.params().default_scale())
        .unwrap();
    let ct = kg.encrypt_sk(&pt, &sk).unwrap();
    let mut ev = evaluator(&ctx);
    let loaded = ev.load(&ct).unwrap();
    let r = ev.rescale(&loaded).unwrap();
    for (part, got) in [(&ct.c0, &r.c0), (&ct.c1, &r.c1)] {
        let mut want = part.clone();
        want.divide_round_by_last().unwrap();
        assert_eq!(&want, got);
    }
}

#[test]
fn mismatches_are_errors() {
    let (ctx, mut kg, sk) = setup(5);
    let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
    let pt = ctx.encode(&values(1, 8), 8, l, scale).unwrap();
    let ct = kg.encrypt_sk(&pt, &sk).unwrap();
    let mut ev = evaluator(&ctx);
    let x = ev.load(&ct).unwrap();
    let lower = ev.drop_levels(&x, 1).unwrap();
    assert!(matches!(
        ev.add(&x, &lower),
        Err(CkksError::LevelMismatch { .. })
    ));
    let squared = ev.mul_plain(&x, &pt).unwrap();
    assert!(matches!(
        ev.add(&x, &squared),
        Err(CkksError::ScaleMismatch { .. })
    ));
    let pt_low = ctx.encode(&values(1, 8), 8, l - 1, scale).unwrap();
    assert!(matches!(
        ev.mul_plain(&x, &pt_low),
        Err(CkksError::LevelMismatch { .. })
    ));
    let bottom = ev.drop_levels(&x, l).unwrap();
    assert!(matches!(
        ev.rescale(&bottom),
        Err(CkksError::OutOfLevels { .. })
    ));
    assert!(ev.drop_levels(&x, l + 1).is_err());
    assert!(ctx.encode(&values(1, 8), 8, l + 1, scale).is_err());
    // An evaluator over another ring is refused.
    let other = CkksContext::new(Parameters::preset("test-small").unwrap()).unwrap();
    assert!(Evaluator::new(&ctx, CpuBackend::new(other.ring().clone())).is_err());
    assert_eq!(format!("{sk:?}"), "SecretKey(<redacted>)");
}

#[test]
fn seeded_key_generation_is_reproducible() {
    let (ctx, mut kg1, sk1) = setup(6);
    let mut kg2 = KeyGenerator::from_seed(&ctx, &Seed([6; 32])).unwrap();
    let sk2 = kg2.secret_key().unwrap();
    let pt = ctx
        .encode(&values(1, 8), 8, 1, ctx.params().default_scale())
        .unwrap();
    let (c1, c2) = (
        kg1.encrypt_sk(&pt, &sk1).unwrap(),
        kg2.encrypt_sk(&pt, &sk2).unwrap(),
    );
    assert_eq!(c1.c0, c2.c0);
    assert_eq!(c1.c1, c2.c1);
    // Objects from two separately built contexts do not mix.
    let (_, mut kg3, _) = setup(6);
    assert!(matches!(
        kg3.encrypt_sk(&pt, &sk1),
        Err(CkksError::Math(
            tessera_math::MathError::RingMismatch { .. }
        ))
    ));
}

/// Decrypts `c` and checks every slot against `want` within `2^bound_log2`.
fn check(
    ctx: &CkksContext,
    sk: &SecretKey,
    c: &Ciphertext<RnsPoly>,
    want: &[Complex64],
    bound_log2: i32,
    what: &str,
) {
    let got = ctx.decode(&decrypt(c, sk).unwrap()).unwrap();
    let st = PrecisionStats::new(want, &got);
    assert!(st.max_error < 2f64.powi(bound_log2), "{what}: {st:?}");
}

#[test]
fn multiplication_with_relinearisation_matches_the_clear() {
    for preset in ["test-small", "test-medium"] {
        let ctx = CkksContext::new(Parameters::preset(preset).unwrap()).unwrap();
        let mut kg = KeyGenerator::from_seed(&ctx, &Seed([11; 32])).unwrap();
        let sk = kg.secret_key().unwrap();
        let keys = kg.evaluation_keys(&sk, &[], false).unwrap();
        let slots = ctx.params().max_slots();
        let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
        let (a, b) = (values(21, slots), values(22, slots));
        let ca = kg
            .encrypt_sk(&ctx.encode(&a, slots, l, scale).unwrap(), &sk)
            .unwrap();
        let cb = kg
            .encrypt_sk(&ctx.encode(&b, slots, l, scale).unwrap(), &sk)
            .unwrap();
        let mut ev = evaluator(&ctx);
        let (xa, xb) = (ev.load(&ca).unwrap(), ev.load(&cb).unwrap());
        // a*b, then (a*b)*a one level lower: key switching with fewer digits.
        let prod = ev.mul_relin(&xa, &xb, &keys).unwrap();
        let ab = ev.rescale(&prod).unwrap();
        let want: Vec<Complex64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
        let host = ev.store(&ab).unwrap();
        check(&ctx, &sk, &host, &want, -12, preset);
        let a_low = ev.drop_levels(&xa, 1).unwrap();
        let a_low = Ciphertext {
            scale: ab.scale,
            ..a_low
        };
        let prod = ev.mul_relin(&ab, &a_low, &keys).unwrap();
        let aba = ev.rescale(&prod).unwrap();
        let want2: Vec<Complex64> = want.iter().zip(&a).map(|(x, y)| x * y).collect();
        let host = ev.store(&aba).unwrap();
        // The scale of a_low was relabelled (a ~2^-5 relative change in the second factor's
        // scale for test-small), so compare against the exact relabelled product.
        let ratio = xa.scale / ab.scale;
        let want2: Vec<Complex64> = want2.iter().map(|z| z * ratio).collect();
        check(&ctx, &sk, &host, &want2, -8, preset);
    }
}

#[test]
fn rotations_and_conjugation_match_the_clear() {
    let ctx = CkksContext::new(Parameters::preset("test-medium").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([12; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let steps = [1i64, 5, -3, 1000];
    let keys = kg.evaluation_keys(&sk, &steps, true).unwrap();
    let slots = ctx.params().max_slots();
    let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
    let a = values(31, slots);
    let ca = kg
        .encrypt_sk(&ctx.encode(&a, slots, l, scale).unwrap(), &sk)
        .unwrap();
    let mut ev = evaluator(&ctx);
    let x = ev.load(&ca).unwrap();
    for &r in &steps {
        let y = ev.rotate(&x, r, &keys).unwrap();
        let want: Vec<Complex64> = (0..slots)
            .map(|j| a[(j as i64 + r).rem_euclid(slots as i64) as usize])
            .collect();
        let host = ev.store(&y).unwrap();
        check(&ctx, &sk, &host, &want, -15, &format!("rotate {r}"));
    }
    let y = ev.conjugate(&x, &keys).unwrap();
    let want: Vec<Complex64> = a.iter().map(|z| z.conj()).collect();
    let host = ev.store(&y).unwrap();
    check(&ctx, &sk, &host, &want, -15, "conjugate");
    // A rotation at a lower level uses fewer digits of the same key.
    let low = ev.drop_levels(&x, 5).unwrap();
    let y = ev.rotate(&low, 1, &keys).unwrap();
    let want: Vec<Complex64> = (0..slots).map(|j| a[(j + 1) % slots]).collect();
    let host = ev.store(&y).unwrap();
    check(&ctx, &sk, &host, &want, -15, "rotate at level L-5");
    // Missing keys are errors.
    assert!(matches!(
        ev.rotate(&x, 2, &keys),
        Err(CkksError::MissingKey(_))
    ));
    assert!(matches!(
        ev.mul_relin(&x, &x, &EvaluationKeys::default()),
        Err(CkksError::MissingKey(_))
    ));
}

#[test]
fn seeded_keys_halve_storage() {
    let ctx = CkksContext::new(Parameters::preset("test-medium").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([13; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let rlk = kg.relin_key(&sk).unwrap();
    assert_eq!(rlk.dnum(), 3);
    let (stored, full) = (rlk.stored_bytes(), rlk.expanded_bytes());
    // dnum * (L+1+K) * N words per half: 3 * 12 * 4096 * 8 bytes.
    assert_eq!(full, 2 * 3 * 12 * 4096 * 8);
    assert_eq!(stored, full / 2 + 3 * 32);
}

/// HMult with ModDown fused into the rescale equals HMult then rescale: same level and scale,
/// decryptions within the two-step result's own error, on single- and double-prime chains and
/// with both key-switch dataflows.
#[test]
fn fused_mul_rescale_equals_mul_then_rescale() {
    for preset in ["test-small", "test-medium", "test-double"] {
        let ctx = CkksContext::new(Parameters::preset(preset).unwrap()).unwrap();
        let mut kg = KeyGenerator::from_seed(&ctx, &Seed([12; 32])).unwrap();
        let sk = kg.secret_key().unwrap();
        let keys = kg.evaluation_keys(&sk, &[], false).unwrap();
        let slots = ctx.params().max_slots();
        let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
        let (a, b) = (values(31, slots), values(32, slots));
        let ca = kg
            .encrypt_sk(&ctx.encode(&a, slots, l, scale).unwrap(), &sk)
            .unwrap();
        let cb = kg
            .encrypt_sk(&ctx.encode(&b, slots, l, scale).unwrap(), &sk)
            .unwrap();
        let want: Vec<Complex64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
        for dataflow in [KeySwitchDataflow::default(), KeySwitchDataflow::Streamed] {
            let mut ev = evaluator(&ctx);
            ev.set_key_switch_dataflow(dataflow);
            let (xa, xb) = (ev.load(&ca).unwrap(), ev.load(&cb).unwrap());
            let two_step = ev.mul_relin(&xa, &xb, &keys).unwrap();
            let two_step = ev.rescale(&two_step).unwrap();
            let fused = ev.mul_relin_rescale(&xa, &xb, &keys).unwrap();
            assert_eq!(fused.level, two_step.level, "{preset}");
            assert!(
                (fused.scale / two_step.scale - 1.0).abs() < 1e-12,
                "{preset}"
            );
            let (hf, h2) = (ev.store(&fused).unwrap(), ev.store(&two_step).unwrap());
            check(&ctx, &sk, &hf, &want, -12, preset);
            let z2 = ctx.decode(&decrypt(&h2, &sk).unwrap()).unwrap();
            let zf = ctx.decode(&decrypt(&hf, &sk).unwrap()).unwrap();
            let err2 = PrecisionStats::new(&want, &z2).max_error;
            let diff = PrecisionStats::new(&z2, &zf).max_error;
            assert!(
                diff <= 2.0 * err2,
                "{preset} {dataflow:?}: {diff} vs {err2}"
            );
            // The level check of the fused op.
            let bottom = ev.drop_levels(&xa, l).unwrap();
            assert!(ev.mul_relin_rescale(&bottom, &bottom, &keys).is_err());
        }
    }
}

/// PMult accumulated in place equals PMult then addition exactly (same residues), for full
/// and OF-Limb plaintexts; mismatched levels and scales are errors.
#[test]
fn accumulated_plaintext_products_equal_products_then_additions() {
    let (ctx, mut kg, sk) = setup(13);
    let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
    let (a, b, c) = (values(41, 512), values(42, 512), values(43, 512));
    let ca = kg
        .encrypt_sk(&ctx.encode(&a, 512, l, scale).unwrap(), &sk)
        .unwrap();
    let cb = kg
        .encrypt_sk(&ctx.encode(&b, 512, l, scale).unwrap(), &sk)
        .unwrap();
    let pc = ctx.encode(&c, 512, l, scale).unwrap();
    let oc = ctx.encode_oflimb(&c, 512, l, scale).unwrap();
    let mut ev = evaluator(&ctx);
    let (x, y) = (ev.load(&ca).unwrap(), ev.load(&cb).unwrap());
    let first = ev.mul_plain(&x, &pc).unwrap();
    let second = ev.mul_plain(&y, &pc).unwrap();
    let want = ev.add(&first, &second).unwrap();
    let mut acc = first.clone();
    ev.mul_plain_acc(&mut acc, &y, &pc).unwrap();
    let (got, exp) = (ev.store(&acc).unwrap(), ev.store(&want).unwrap());
    assert_eq!((&got.c0, &got.c1), (&exp.c0, &exp.c1));
    let first = ev.mul_plain_oflimb(&x, &oc).unwrap();
    let second = ev.mul_plain_oflimb(&y, &oc).unwrap();
    let want = ev.add(&first, &second).unwrap();
    let mut acc = first.clone();
    ev.mul_plain_oflimb_acc(&mut acc, &y, &oc).unwrap();
    let (got, exp) = (ev.store(&acc).unwrap(), ev.store(&want).unwrap());
    assert_eq!((&got.c0, &got.c1), (&exp.c0, &exp.c1));
    // PAdd: the OF-Limb plaintext extends to the full one's residues exactly.
    let (full, of) = (
        ev.add_plain(&x, &pc).unwrap(),
        ev.add_plain_oflimb(&x, &oc).unwrap(),
    );
    let (full, of) = (ev.store(&full).unwrap(), ev.store(&of).unwrap());
    assert_eq!((&of.c0, &of.c1), (&full.c0, &full.c1));
    assert!(
        ev.add_plain_oflimb(&first, &oc).is_err(),
        "scale mismatch refused"
    );
    // The accumulator must hold products of the same level and scale.
    let mut wrong_scale = x.clone();
    assert!(ev.mul_plain_acc(&mut wrong_scale, &y, &pc).is_err());
    let mut low = ev.drop_levels(&first, 1).unwrap();
    assert!(ev.mul_plain_acc(&mut low, &y, &pc).is_err());
}
