//! Key switching for every dnum, hoisting, constants, double-prime rescaling and seeded keys,
//! against the clear computation. Insecure test parameters (N = 2^12).

mod common;
use common::values;

use num_complex::Complex64;
use std::sync::Arc;
use tessera_backend::{Backend, CpuBackend, Kind};
use tessera_ckks::params::preset_literal;
use tessera_ckks::*;
use tessera_math::sampling::Seed;
use tessera_math::RnsPoly;

fn max_err(ctx: &CkksContext, sk: &SecretKey, c: &Ciphertext<RnsPoly>, want: &[Complex64]) -> f64 {
    let got = ctx.decode(&decrypt(c, sk).unwrap()).unwrap();
    PrecisionStats::new(want, &got).max_error
}

fn galois(r: i64, ctx: &CkksContext) -> u64 {
    tessera_math::automorphism::galois_element(r, ctx.params().n()).unwrap()
}

fn rotated(a: &[Complex64], r: i64) -> Vec<Complex64> {
    let s = a.len() as i64;
    (0..s).map(|j| a[(j + r).rem_euclid(s) as usize]).collect()
}

/// HMult and HRot at the top level and two levels down, for dnum = 1 .. L+1 (L+1 = 9).
#[test]
fn every_dnum_from_one_to_l_plus_one() {
    for dnum in 1..=9usize {
        let alpha = 9usize.div_ceil(dnum);
        // P must exceed the largest digit (up to 55 + 45 (alpha - 1) bits).
        let k = (55 + 45 * (alpha - 1)).div_ceil(60) + 1;
        let lit = ParametersLiteral {
            name: format!("test-dnum{dnum}"),
            dnum,
            log_p: vec![60; k],
            ..preset_literal("test-medium").unwrap()
        };
        let ctx = CkksContext::new(Parameters::new(lit).unwrap()).unwrap();
        assert_eq!(ctx.params().dnum(), dnum);
        let mut kg = KeyGenerator::from_seed(&ctx, &Seed([dnum as u8; 32])).unwrap();
        let sk = kg.secret_key().unwrap();
        let keys = kg.evaluation_keys(&sk, &[3], false).unwrap();
        let slots = ctx.params().max_slots();
        let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
        let (a, b) = (values(1, slots), values(2, slots));
        let ca = kg
            .encrypt_sk(&ctx.encode(&a, slots, l, scale).unwrap(), &sk)
            .unwrap();
        let cb = kg
            .encrypt_sk(&ctx.encode(&b, slots, l, scale).unwrap(), &sk)
            .unwrap();
        let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
        let (xa, xb) = (ev.load(&ca).unwrap(), ev.load(&cb).unwrap());
        for drop in [0usize, 2] {
            let (ya, yb) = (
                ev.drop_levels(&xa, drop).unwrap(),
                ev.drop_levels(&xb, drop).unwrap(),
            );
            let m = ev.mul_relin(&ya, &yb, &keys).unwrap();
            let m = ev.rescale(&m).unwrap();
            let want: Vec<Complex64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
            let e = max_err(&ctx, &sk, &ev.store(&m).unwrap(), &want);
            assert!(
                e < 2f64.powi(-12),
                "dnum {dnum}, drop {drop}: HMult error {e}"
            );
            let r = ev.rotate(&ya, 3, &keys).unwrap();
            let e = max_err(&ctx, &sk, &ev.store(&r).unwrap(), &rotated(&a, 3));
            assert!(
                e < 2f64.powi(-15),
                "dnum {dnum}, drop {drop}: HRot error {e}"
            );
        }
    }
}

#[test]
fn hoisted_rotations_equal_direct_rotations() {
    let ctx = CkksContext::new(Parameters::preset("test-medium").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([3; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let steps: Vec<i64> = (1..=16).collect();
    let keys = kg.evaluation_keys(&sk, &steps, false).unwrap();
    let slots = ctx.params().max_slots();
    let a = values(5, slots);
    let ct = kg
        .encrypt_sk(
            &ctx.encode(
                &a,
                slots,
                ctx.params().max_level(),
                ctx.params().default_scale(),
            )
            .unwrap(),
            &sk,
        )
        .unwrap();
    let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
    let x = ev.load(&ct).unwrap();
    let hoisted = ev.rotate_hoisted(&x, &steps, &keys).unwrap();
    for (&r, h) in steps.iter().zip(&hoisted) {
        let direct = ev.rotate(&x, r, &keys).unwrap();
        let (dh, dd) = (
            ctx.decode(&decrypt(&ev.store(h).unwrap(), &sk).unwrap())
                .unwrap(),
            ctx.decode(&decrypt(&ev.store(&direct).unwrap(), &sk).unwrap())
                .unwrap(),
        );
        // Both are the rotation within 2^-15, and they agree with each other within 2^-16.
        assert!(PrecisionStats::new(&rotated(&a, r), &dh).max_error < 2f64.powi(-15));
        assert!(
            PrecisionStats::new(&dd, &dh).max_error < 2f64.powi(-16),
            "step {r}"
        );
    }
    assert!(matches!(
        ev.rotate_hoisted(&x, &[17], &keys),
        Err(CkksError::MissingKey(_))
    ));
}

/// Keys made on first use: the same rotations as stored keys, one key made per distinct
/// rotation of a hoisted batch, the most recent reused, undeclared elements missing, and the
/// secret never printed.
#[test]
fn on_demand_galois_keys_rotate_like_stored_ones() {
    let ctx = CkksContext::new(Parameters::preset("test-medium").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([8; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let steps: Vec<i64> = vec![1, 2, 5, -3];
    let keys = kg.evaluation_keys_on_demand(&sk, &steps, true).unwrap();
    assert!(keys.galois.is_empty(), "no Galois key is made up front");
    let factory = keys.on_demand.clone().unwrap();
    let slots = ctx.params().max_slots();
    let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
    let a = values(9, slots);
    let ct = kg
        .encrypt_sk(&ctx.encode(&a, slots, l, scale).unwrap(), &sk)
        .unwrap();
    let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
    let x = ev.load(&ct).unwrap();
    let hoisted = ev.rotate_hoisted(&x, &steps, &keys).unwrap();
    assert_eq!(factory.keys_made(), steps.len());
    for (&r, h) in steps.iter().zip(&hoisted) {
        let e = max_err(&ctx, &sk, &ev.store(h).unwrap(), &rotated(&a, r));
        assert!(e < 2f64.powi(-15), "hoisted step {r}: error {e}");
    }
    // The last key made (-3) is reused; a different one is made again.
    let r = ev.rotate(&x, -3, &keys).unwrap();
    assert_eq!(factory.keys_made(), steps.len());
    let e = max_err(&ctx, &sk, &ev.store(&r).unwrap(), &rotated(&a, -3));
    assert!(e < 2f64.powi(-15), "rotation by -3: error {e}");
    let r = ev.rotate(&x, 2, &keys).unwrap();
    assert_eq!(factory.keys_made(), steps.len() + 1);
    let e = max_err(&ctx, &sk, &ev.store(&r).unwrap(), &rotated(&a, 2));
    assert!(e < 2f64.powi(-15), "rotation by 2: error {e}");
    let c = ev.conjugate(&x, &keys).unwrap();
    let want: Vec<Complex64> = a.iter().map(|z| z.conj()).collect();
    let e = max_err(&ctx, &sk, &ev.store(&c).unwrap(), &want);
    assert!(e < 2f64.powi(-15), "conjugation: error {e}");
    // Relinearisation is made up front.
    let m = ev.mul_relin(&x, &x, &keys).unwrap();
    let want: Vec<Complex64> = a.iter().map(|z| z * z).collect();
    let m = ev.rescale(&m).unwrap();
    let e = max_err(&ctx, &sk, &ev.store(&m).unwrap(), &want);
    assert!(e < 2f64.powi(-12), "HMult: error {e}");
    // Undeclared rotations are missing keys, directly and hoisted.
    assert!(matches!(
        ev.rotate(&x, 7, &keys),
        Err(CkksError::MissingKey(_))
    ));
    assert!(matches!(
        ev.rotate_hoisted(&x, &[1, 7], &keys),
        Err(CkksError::MissingKey(_))
    ));
    // A key made again is the same key.
    let again = factory.key(galois(2, &ctx)).unwrap();
    let _ = factory.key(galois(1, &ctx)).unwrap();
    let third = factory.key(galois(2, &ctx)).unwrap();
    assert_eq!(again.b(0).data(), third.b(0).data());
    assert_eq!(again.seed(0), third.seed(0));
    let shown = format!("{keys:?}");
    assert!(shown.contains("<redacted>"), "{shown}");
}

/// A shape-only context's on-demand keys (what recordings for the simulator run on) are
/// shapes, no key material, each made once however the rotations alternate; a computing
/// context's factory keeps only the most recent key (the test above).
#[test]
fn shape_only_on_demand_keys_are_made_once() {
    let ctx = CkksContext::shape_only(Parameters::preset("test-medium").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([8; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let steps: Vec<i64> = vec![1, 2, 5, -3];
    let keys = kg.evaluation_keys_on_demand(&sk, &steps, true).unwrap();
    let factory = keys.on_demand.clone().unwrap();
    let first: Vec<_> = steps
        .iter()
        .map(|&r| factory.key(galois(r, &ctx)).unwrap())
        .collect();
    for _ in 0..3 {
        for (&r, k) in steps.iter().zip(&first).rev() {
            let again = factory.key(galois(r, &ctx)).unwrap();
            assert!(
                again.is_shape_only(),
                "step {r}: a shape-only context made key data"
            );
            assert_eq!(again.seed(0), k.seed(0), "step {r}: another key");
        }
    }
    assert_eq!(factory.keys_made(), steps.len());
    assert!(matches!(
        factory.key(galois(7, &ctx)),
        Err(CkksError::MissingKey(_))
    ));
}

#[test]
fn constants_match_the_clear() {
    let ctx = CkksContext::new(Parameters::preset("test-medium").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([4; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let slots = 64;
    let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
    let a = values(6, slots);
    let ct = kg
        .encrypt_sk(&ctx.encode(&a, slots, l, scale).unwrap(), &sk)
        .unwrap();
    let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
    let x = ev.load(&ct).unwrap();
    let s = ev.add_const(&x, -0.75).unwrap();
    let want: Vec<Complex64> = a.iter().map(|z| z - 0.75).collect();
    assert!(max_err(&ctx, &sk, &ev.store(&s).unwrap(), &want) < 2f64.powi(-17));
    let m = ev.mul_const(&x, 1.5, ctx.params().q()[l] as f64).unwrap();
    let m = ev.rescale(&m).unwrap();
    let want: Vec<Complex64> = a.iter().map(|z| z * 1.5).collect();
    assert!(max_err(&ctx, &sk, &ev.store(&m).unwrap(), &want) < 2f64.powi(-15));
    let k = ev.mul_int(&x, -3).unwrap();
    let want: Vec<Complex64> = a.iter().map(|z| z * -3.0).collect();
    assert!(max_err(&ctx, &sk, &ev.store(&k).unwrap(), &want) < 2f64.powi(-15));
    assert!(ev.add_const(&x, f64::NAN).is_err());
    assert!(ev.mul_const(&x, 1.0, 0.5).is_err());
}

#[test]
fn double_prime_rescaling() {
    let ctx = CkksContext::new(Parameters::preset("test-double").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([5; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let keys = kg.evaluation_keys(&sk, &[], false).unwrap();
    let slots = 256;
    let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
    let (a, b) = (values(7, slots), values(8, slots));
    let ca = kg
        .encrypt_sk(&ctx.encode(&a, slots, l, scale).unwrap(), &sk)
        .unwrap();
    let cb = kg
        .encrypt_sk(&ctx.encode(&b, slots, l, scale).unwrap(), &sk)
        .unwrap();
    let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
    let (xa, xb) = (ev.load(&ca).unwrap(), ev.load(&cb).unwrap());
    let m = ev.mul_relin(&xa, &xb, &keys).unwrap();
    let m = ev.rescale(&m).unwrap();
    assert_eq!(m.level, l - 2, "a double-prime rescale consumes two limbs");
    let q = ctx.params().q();
    assert!((m.scale - scale * scale / (q[l] as f64 * q[l - 1] as f64)).abs() < 1e-6 * m.scale);
    let want: Vec<Complex64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    assert!(max_err(&ctx, &sk, &ev.store(&m).unwrap(), &want) < 2f64.powi(-20));
    let bottom = ev.drop_levels(&xa, l - 1).unwrap();
    assert!(matches!(
        ev.rescale(&bottom),
        Err(CkksError::OutOfLevels { .. })
    ));
}

/// The `a` half regenerated from a key's seed is the one the key was made with: decrypting
/// `(b_i, a_i)` leaves exactly `P * 1_(D_i) * s'` plus a small error.
#[test]
fn seeded_keys_equal_explicit_keys() {
    let ctx: Arc<CkksContext> =
        CkksContext::new(Parameters::preset("test-medium").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([6; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let rlk = kg.relin_key(&sk).unwrap();
    let mut cpu = CpuBackend::new(ctx.ring().clone());
    let all = rlk.plan().qp_limbs(rlk.plan().level);
    let s = sk.poly().select_limbs(&all).unwrap();
    let mut s2 = s.clone();
    s2.mul_assign(&s).unwrap();
    let p_big: num_bigint::BigInt = ctx
        .params()
        .p()
        .iter()
        .map(|&p| num_bigint::BigInt::from(p))
        .product();
    for (i, digit) in ctx.params().digits().into_iter().enumerate() {
        let a = cpu.expand_seed(&rlk.seed(i), &all, Kind::EvalKey).unwrap();
        let mut e = rlk.b(i).clone();
        e.mul_acc(&a, &s).unwrap(); // b + a s = e + P 1_D s'
        let mut g = s2.clone();
        let factors: Vec<u64> = all
            .iter()
            .map(|&j| {
                let q = ctx.ring().moduli()[j].value();
                if digit.contains(&j) {
                    let r = &p_big % q;
                    u64::try_from(r).unwrap()
                } else {
                    0
                }
            })
            .collect();
        g.mul_scalar_limbs(&factors).unwrap();
        e.sub_assign(&g).unwrap();
        e.intt().unwrap();
        let max = e
            .to_centered_bigints()
            .unwrap()
            .iter()
            .map(|c| c.magnitude().clone())
            .max()
            .unwrap();
        assert!(
            max <= num_bigint::BigUint::from(20u32),
            "digit {i}: residual {max}"
        );
    }
}

/// ark.md Eq. 8 and Eq. 9: multi-hop (Algorithms 4 and 5) equals the direct rotation sums, and
/// needs only the key for `r`.
#[test]
fn multi_hop_equals_direct_rotation_sums() {
    let ctx = CkksContext::new(Parameters::preset("test-medium").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([9; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let (r, m) = (3i64, 4usize);
    let all_steps: Vec<i64> = (1..=m as i64).map(|i| i * r).collect();
    let all_keys = kg.evaluation_keys(&sk, &all_steps, false).unwrap();
    let one_key = kg.evaluation_keys(&sk, &[r], false).unwrap();
    let slots = ctx.params().max_slots();
    let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
    let xs: Vec<Vec<Complex64>> = (0..=m).map(|i| values(40 + i as u64, slots)).collect();
    let pts: Vec<Plaintext> = (0..=m)
        .map(|i| {
            ctx.encode(&values(60 + i as u64, slots), slots, l, scale)
                .unwrap()
        })
        .collect();
    let cts: Vec<_> = xs
        .iter()
        .map(|x| {
            kg.encrypt_sk(&ctx.encode(x, slots, l, scale).unwrap(), &sk)
                .unwrap()
        })
        .collect();
    let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
    let loaded: Vec<_> = cts.iter().map(|c| ev.load(c).unwrap()).collect();

    // Eq. 8 in the clear: sum_i rot(x_0, i r) * p_i.
    let p_clear: Vec<Vec<Complex64>> = (0..=m).map(|i| values(60 + i as u64, slots)).collect();
    let want8: Vec<Complex64> = (0..slots)
        .map(|j| {
            (0..=m)
                .map(|i| xs[0][(j + i * r as usize) % slots] * p_clear[i][j])
                .sum()
        })
        .collect();
    let hop = ev
        .rotate_pmult_sum(&loaded[0], r, &pts, &one_key, true)
        .unwrap();
    let direct = ev
        .rotate_pmult_sum(&loaded[0], r, &pts, &all_keys, false)
        .unwrap();
    for c in [&hop, &direct] {
        let c = ev.rescale(c).unwrap();
        assert!(max_err(&ctx, &sk, &ev.store(&c).unwrap(), &want8) < 2f64.powi(-12));
    }
    assert!(matches!(
        ev.rotate_pmult_sum(&loaded[0], r, &pts, &one_key, false),
        Err(CkksError::MissingKey(_))
    ));

    // Eq. 9 in the clear: sum_i rot(x_i, i r).
    let want9: Vec<Complex64> = (0..slots)
        .map(|j| (0..=m).map(|i| xs[i][(j + i * r as usize) % slots]).sum())
        .collect();
    let hop = ev.rotate_sum(&loaded, r, &one_key, true).unwrap();
    let direct = ev.rotate_sum(&loaded, r, &all_keys, false).unwrap();
    for c in [&hop, &direct] {
        assert!(max_err(&ctx, &sk, &ev.store(c).unwrap(), &want9) < 2f64.powi(-14));
    }
    assert!(matches!(
        ev.rotate_sum(&loaded, r, &one_key, false),
        Err(CkksError::MissingKey(_))
    ));
}

/// The streamed key-switch dataflow (one extended digit at a time, accumulated: reed.md
/// Algorithm 3) computes exactly what the batched one does, for several dnum and levels.
#[test]
fn streamed_key_switching_equals_batched() {
    for dnum in [1usize, 3, 9] {
        let alpha = 9usize.div_ceil(dnum);
        let k = (55 + 45 * (alpha - 1)).div_ceil(60) + 1;
        let lit = ParametersLiteral {
            name: format!("test-stream{dnum}"),
            dnum,
            log_p: vec![60; k],
            ..preset_literal("test-medium").unwrap()
        };
        let ctx = CkksContext::new(Parameters::new(lit).unwrap()).unwrap();
        let mut kg = KeyGenerator::from_seed(&ctx, &Seed([7 + dnum as u8; 32])).unwrap();
        let sk = kg.secret_key().unwrap();
        let keys = kg.evaluation_keys(&sk, &[3], false).unwrap();
        let z = values(11, 16);
        let top = ctx.params().max_level();
        let pt = ctx
            .encode(&z, 16, top, ctx.params().default_scale())
            .unwrap();
        let ct = kg.encrypt_sk(&pt, &sk).unwrap();
        let run = |flow: KeySwitchDataflow| {
            let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
            ev.set_key_switch_dataflow(flow);
            let x = ev.load(&ct).unwrap();
            let m = ev.mul_relin(&x, &x, &keys).unwrap();
            let low = ev.drop_levels(&x, 2).unwrap();
            let r = ev.rotate(&low, 3, &keys).unwrap();
            (ev.store(&m).unwrap(), ev.store(&r).unwrap())
        };
        let (m1, r1) = run(KeySwitchDataflow::Batched);
        let (m2, r2) = run(KeySwitchDataflow::Streamed);
        assert_eq!(m1.c0, m2.c0, "dnum {dnum}");
        assert_eq!(m1.c1, m2.c1, "dnum {dnum}");
        assert_eq!(r1.c0, r2.c0, "dnum {dnum}");
        assert_eq!(r1.c1, r2.c1, "dnum {dnum}");
    }
}

/// Issue 24 item 2: `switching_key_for` at `h3` with the fixed digits and every special prime
/// of the dynamic pool would make a key of about 1,980 bits, over the 1,772-bit bound for
/// N = 2^16: it is refused before any sampling, as is a plan whose P does not cover a digit.
#[test]
fn switching_key_for_refuses_over_budget_plans_at_h3() {
    let ctx = CkksContext::new(Parameters::preset("h3").unwrap()).unwrap();
    let params = ctx.params();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([24; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let first = params.q().len();
    let over = KeySwitchPlan {
        special: (first..first + params.p().len() + params.p_extra().len()).collect(),
        ..KeySwitchPlan::fixed(params)
    };
    assert!(over.log_qp_bits(params, over.level) > 1772.0);
    let e = kg
        .switching_key_for(&sk, sk.poly(), &over)
        .unwrap_err()
        .to_string();
    assert!(e.contains("budget"), "{e}");
    let short = KeySwitchPlan {
        special: vec![first],
        ..KeySwitchPlan::fixed(params)
    };
    assert!(kg.switching_key_for(&sk, sk.poly(), &short).is_err());
}
