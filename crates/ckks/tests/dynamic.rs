//! Per-level dynamic decomposition (h3.md section 3.1): keys made for the plan chosen at each
//! level give correct HMult, HRot and hoisted rotations against the clear computation, their
//! traces match the closed forms, and they serialise. Insecure test parameters (N = 2^12).

mod common;
use common::values;

use num_complex::Complex64;
use std::sync::Arc;
use tessera_backend::trace::TraceCounts;
use tessera_backend::{CpuBackend, TraceBackend};
use tessera_ckks::costs::key_switch_cost_plan;
use tessera_ckks::serialize::{switching_key_from_bytes, switching_key_to_bytes};
use tessera_ckks::*;
use tessera_math::sampling::Seed;

fn rotated(a: &[Complex64], r: i64) -> Vec<Complex64> {
    let s = a.len() as i64;
    (0..s).map(|j| a[(j + r).rem_euclid(s) as usize]).collect()
}

fn setup() -> (Arc<CkksContext>, KeyGenerator, SecretKey, EvaluationKeys) {
    let ctx = CkksContext::new(Parameters::preset("test-medium").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([42; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let mut keys = EvaluationKeys::default();
    let levels: Vec<usize> = (1..=ctx.params().max_level()).collect();
    kg.add_dynamic_keys(&mut keys, &sk, &levels, &[1, 2, 5], false)
        .unwrap();
    (ctx, kg, sk, keys)
}

#[test]
fn dynamic_keys_compute_correctly_at_every_level() {
    let (ctx, mut kg, sk, keys) = setup();
    let params = ctx.params();
    // The plans really differ from the fixed decomposition somewhere (else this tests little).
    let fixed = KeySwitchPlan::fixed(params);
    let differs = (1..=params.max_level()).any(|l| {
        let k = keys.relin_for(l).unwrap().plan();
        k.digits_at(l) != fixed.digits_at(l) || k.special != fixed.special
    });
    assert!(differs, "no level chose a different plan");
    let slots = params.max_slots();
    let scale = params.default_scale();
    let (a, b) = (values(7, slots), values(8, slots));
    let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
    for level in 1..=params.max_level() {
        assert_eq!(keys.relin_for(level).unwrap().plan().level, level);
        let ca = kg
            .encrypt_sk(&ctx.encode(&a, slots, level, scale).unwrap(), &sk)
            .unwrap();
        let cb = kg
            .encrypt_sk(&ctx.encode(&b, slots, level, scale).unwrap(), &sk)
            .unwrap();
        let (xa, xb) = (ev.load(&ca).unwrap(), ev.load(&cb).unwrap());
        let m = ev.mul_relin(&xa, &xb, &keys).unwrap();
        let m = ev.rescale(&m).unwrap();
        let want: Vec<Complex64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
        let got = ctx
            .decode(&decrypt(&ev.store(&m).unwrap(), &sk).unwrap())
            .unwrap();
        let err = PrecisionStats::new(&want, &got).max_error;
        assert!(err < 1e-6, "HMult at level {level}: max error {err}");
        let r = ev.rotate(&xa, 5, &keys).unwrap();
        let got = ctx
            .decode(&decrypt(&ev.store(&r).unwrap(), &sk).unwrap())
            .unwrap();
        let err = PrecisionStats::new(&rotated(&a, 5), &got).max_error;
        assert!(err < 1e-6, "HRot at level {level}: max error {err}");
        let hs = ev.rotate_hoisted(&xa, &[1, 2, 5], &keys).unwrap();
        for (h, r) in hs.iter().zip([1i64, 2, 5]) {
            let got = ctx
                .decode(&decrypt(&ev.store(h).unwrap(), &sk).unwrap())
                .unwrap();
            let err = PrecisionStats::new(&rotated(&a, r), &got).max_error;
            assert!(err < 1e-6, "hoisted {r} at level {level}: max error {err}");
        }
    }
    // A key made for a lower level cannot serve a higher one.
    let low = keys.relin_for(1).unwrap().clone();
    let only_low = EvaluationKeys {
        relin_by_level: [(1usize, low)].into_iter().collect(),
        ..Default::default()
    };
    let top = params.max_level();
    let ct = kg
        .encrypt_sk(&ctx.encode(&a, slots, top, scale).unwrap(), &sk)
        .unwrap();
    let x = ev.load(&ct).unwrap();
    assert!(matches!(
        ev.mul_relin(&x, &x, &only_low),
        Err(CkksError::MissingKey(_))
    ));
}

#[test]
fn dynamic_key_switch_traces_match_closed_forms_and_cost_less() {
    let (ctx, mut kg, sk, keys) = setup();
    let params = ctx.params();
    let scale = params.default_scale();
    let mut saved = 0.0;
    for level in 1..=params.max_level() {
        let key = keys.relin_for(level).unwrap();
        let ct = kg
            .encrypt_sk(&ctx.encode_real(&[0.5], 1, level, scale).unwrap(), &sk)
            .unwrap();
        let mut tr = Evaluator::new(&ctx, TraceBackend::trace(ctx.ring().clone())).unwrap();
        let x = tr.load(&ct).unwrap();
        let start = tr.backend().instructions().len();
        tr.key_switch(&x.c1, level, key).unwrap();
        let got = TraceCounts::from_instructions(&tr.backend().instructions()[start..]);
        assert_eq!(
            got,
            key_switch_cost_plan(params, key.plan(), level),
            "level {level}"
        );
        let fixed = KeySwitchPlan::fixed(params).cost(params, level);
        let dynamic = key.plan().cost(params, level);
        assert!(dynamic <= fixed + 1e-9);
        saved += fixed - dynamic;
    }
    assert!(
        saved > 0.0,
        "dynamic decomposition saved nothing on test-medium"
    );
}

#[test]
fn dynamic_keys_round_trip_and_bad_plans_are_refused() {
    let (ctx, _, _, keys) = setup();
    for k in keys.relin_by_level.values() {
        let bytes = switching_key_to_bytes(k, &ctx);
        let back = switching_key_from_bytes(&bytes, &ctx).unwrap();
        assert_eq!(back.plan(), k.plan());
        for i in 0..k.dnum() {
            assert_eq!(back.b(i), k.b(i));
            assert_eq!(back.seed(i), k.seed(i));
        }
    }
    // A plan naming a chain limb as special is refused (the deserialiser runs this check).
    let mut bad_plan = keys.relin_by_level.values().next().unwrap().plan().clone();
    bad_plan.special[0] = 0;
    assert!(bad_plan.validate(ctx.params()).is_err());
}
