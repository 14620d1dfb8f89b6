//! The circuits against the same computation in the clear, on the insecure `test-medium` set
//! (N = 2^12, 8 levels of 45 bits, Delta = 2^45).

mod common;

use num_complex::Complex64;
use std::sync::Arc;
use tessera_backend::CpuBackend;
use tessera_ckks::circuits::polynomial::{self, Parity, Polynomial};
use tessera_ckks::*;
use tessera_math::sampling::Seed;
use tessera_math::RnsPoly;

struct Setup {
    ctx: Arc<CkksContext>,
    kg: KeyGenerator,
    sk: SecretKey,
    keys: EvaluationKeys,
    ev: Evaluator<CpuBackend>,
}

fn setup(rotations: &[i64]) -> Setup {
    let ctx = CkksContext::new(Parameters::preset("test-medium").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([4; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let keys = kg.evaluation_keys(&sk, rotations, true).unwrap();
    let ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
    Setup {
        ctx,
        kg,
        sk,
        keys,
        ev,
    }
}

impl Setup {
    fn encrypt(&mut self, z: &[Complex64]) -> Ciphertext<RnsPoly> {
        let p = self.ctx.params();
        let pt = self
            .ctx
            .encode(z, z.len(), p.max_level(), p.default_scale())
            .unwrap();
        self.kg.encrypt_sk(&pt, &self.sk).unwrap()
    }

    /// Stores and decrypts an evaluator ciphertext.
    fn open(
        &mut self,
        ct: &Ciphertext<<CpuBackend as tessera_backend::Backend>::Poly>,
    ) -> Vec<Complex64> {
        let ct = self.ev.store(ct).unwrap();
        self.ctx.decode(&decrypt(&ct, &self.sk).unwrap()).unwrap()
    }
}

/// Pseudo-random reals in [-1, 1].
fn reals(seed: u64, n: usize) -> Vec<f64> {
    common::values(seed, n).iter().map(|z| z.re).collect()
}

#[test]
fn polynomials_of_degree_1_to_63_match_the_clear_in_both_bases() {
    let mut st = setup(&[]);
    let slots = 64;
    let top = st.ctx.params().max_level();
    let mut worst_bits = f64::INFINITY;
    for d in 1..=63usize {
        // Mixed, odd and even polynomials in turn; x in [-1, 1] (Chebyshev on [-1, 1] and,
        // every fourth degree, on [-2, 3] with the input spread over it).
        let mut c = reals(100 + d as u64, d + 1);
        match d % 3 {
            1 if d % 2 == 1 => c.iter_mut().step_by(2).for_each(|x| *x = 0.0),
            2 if d % 2 == 0 => c.iter_mut().skip(1).step_by(2).for_each(|x| *x = 0.0),
            _ => {}
        }
        let wide = d % 4 == 0;
        let polys = [
            Polynomial::power(c.clone()).unwrap(),
            if wide {
                Polynomial::chebyshev(c.clone(), -2.0, 3.0).unwrap()
            } else {
                Polynomial::chebyshev(c.clone(), -1.0, 1.0).unwrap()
            },
        ];
        for (i, p) in polys.iter().enumerate() {
            if p.parity() == Parity::Odd {
                assert!(c.iter().step_by(2).all(|&x| x == 0.0));
            }
            let xs: Vec<f64> = reals(7 * d as u64 + i as u64, slots)
                .into_iter()
                .map(|x| if i == 1 && wide { 0.5 + 2.5 * x } else { x })
                .collect();
            let z: Vec<Complex64> = xs.iter().map(|&x| Complex64::new(x, 0.0)).collect();
            let ct = st.encrypt(&z);
            let x = st.ev.load(&ct).unwrap();
            let y = polynomial::evaluate(&mut st.ev, &x, p, &st.keys).unwrap();
            // Depth consumed is the stated one, the output keeps the input's scale.
            assert_eq!(y.level, top - p.depth(), "degree {d}");
            assert_eq!(
                p.depth(),
                (d + 1).next_power_of_two().trailing_zeros() as usize + usize::from(i == 1 && wide)
            );
            assert!((y.scale / x.scale - 1.0).abs() < 1e-9);
            let got = st.open(&y);
            // Bound: 2^-25 times the polynomial's size (sum of |c_k|; |B_k| <= 1 on the
            // domain for Chebyshev, and |x^k| <= 1 for the power basis).
            let size: f64 = c.iter().map(|x| x.abs()).sum::<f64>().max(1.0);
            for (g, &x) in got.iter().zip(&xs) {
                let err = (g.re - p.eval_plain(x)).abs() / size;
                worst_bits = worst_bits.min(-err.log2());
                assert!(err < 2f64.powi(-25), "degree {d} basis {i}: error {err:e}");
            }
        }
    }
    eprintln!("worst relative precision over degrees 1..=63: {worst_bits:.1} bits");
}

#[test]
fn constant_polynomials_and_bad_budgets() {
    let mut st = setup(&[]);
    let ct = st.encrypt(&[Complex64::new(0.3, 0.0); 8]);
    let x = st.ev.load(&ct).unwrap();
    let p = Polynomial::power(vec![0.25, 0.0]).unwrap();
    assert_eq!(p.depth(), 0);
    let y = polynomial::evaluate(&mut st.ev, &x, &p, &st.keys).unwrap();
    assert_eq!(y.level, x.level);
    let got = st.open(&y);
    assert!((got[0].re - 0.25).abs() < 1e-9);
    let p = Polynomial::power(vec![0.0; 64].into_iter().chain([1.0]).collect()).unwrap();
    assert!(matches!(
        polynomial::evaluate_with(
            &mut st.ev,
            &x,
            &p,
            &st.keys,
            polynomial::EvalOptions {
                depth: Some(3),
                ..Default::default()
            }
        ),
        Err(CkksError::InvalidParameter { .. })
    ));
    // Degree 255 needs 8 levels: the ciphertext at level 7 is refused.
    let low = st.ev.drop_levels(&x, 1).unwrap();
    let p = Polynomial::power(vec![0.5; 256]).unwrap();
    assert!(matches!(
        polynomial::evaluate(&mut st.ev, &low, &p, &st.keys),
        Err(CkksError::OutOfLevels { .. })
    ));
}

#[test]
fn rotate_and_sum_and_replicate_match_the_clear() {
    use tessera_ckks::circuits::sums;
    let slots = 32;
    let mut rots = sums::rotations_for_rotate_and_sum(3, 8);
    rots.extend(sums::rotations_for_replicate(4, 8));
    assert_eq!(rots, vec![3, 6, 12, -4, -8, -16]);
    let mut st = setup(&rots);
    let z = common::values(11, slots);
    let ct = st.encrypt(&z);
    let x = st.ev.load(&ct).unwrap();
    let y = sums::rotate_and_sum(&mut st.ev, &x, 3, 8, &st.keys).unwrap();
    assert_eq!(y.level, x.level);
    let got = st.open(&y);
    for j in 0..slots {
        let want: Complex64 = (0..8).map(|t| z[(j + 3 * t) % slots]).sum();
        assert!((got[j] - want).norm() < 1e-6, "slot {j}");
    }
    // A block of 4 values, zeros elsewhere, replicated 8 times.
    let block: Vec<Complex64> = (0..slots)
        .map(|j| {
            if j < 4 {
                z[j]
            } else {
                Complex64::new(0.0, 0.0)
            }
        })
        .collect();
    let ct = st.encrypt(&block);
    let x = st.ev.load(&ct).unwrap();
    let y = sums::replicate(&mut st.ev, &x, 4, 8, &st.keys).unwrap();
    let got = st.open(&y);
    for j in 0..slots {
        assert!((got[j] - z[j % 4]).norm() < 1e-6, "slot {j}");
    }
    for bad in [0usize, 3, 64] {
        assert!(matches!(
            sums::rotate_and_sum(&mut st.ev, &x, 1, bad, &st.keys),
            Err(CkksError::InvalidParameter { .. })
        ));
    }
    assert!(sums::replicate(&mut st.ev, &x, 0, 2, &st.keys).is_err());
    // A missing key is an error, not a panic.
    assert!(matches!(
        sums::rotate_and_sum(&mut st.ev, &x, 5, 2, &st.keys),
        Err(CkksError::MissingKey(_))
    ));
}

#[test]
fn linear_transforms_match_the_dense_product() {
    use tessera_ckks::circuits::linear::{LinearOptions, LinearTransform};
    let s = 32;
    // A dense random matrix, and a banded one (diagonals 0, 1, 2, 30, 31).
    let dense: Vec<Vec<Complex64>> = (0..s).map(|i| common::values(50 + i as u64, s)).collect();
    let banded: Vec<Vec<Complex64>> = (0..s)
        .map(|i| {
            (0..s)
                .map(|j| {
                    let k = (j + s - i) % s;
                    if k <= 2 || k >= s - 2 {
                        dense[i][j]
                    } else {
                        Complex64::new(0.0, 0.0)
                    }
                })
                .collect()
        })
        .collect();
    let variants = [
        LinearOptions::default(),
        LinearOptions {
            hoisting: false,
            ..Default::default()
        },
        LinearOptions {
            of_limb: true,
            ..Default::default()
        },
        LinearOptions {
            min_ks: true,
            hoisting: false,
            of_limb: false,
            double_hoisting: false,
        },
        LinearOptions {
            double_hoisting: true,
            ..Default::default()
        },
        LinearOptions {
            double_hoisting: true,
            of_limb: true,
            ..Default::default()
        },
    ];
    let per = variants.len();
    let lts: Vec<LinearTransform> = [&dense, &banded]
        .iter()
        .flat_map(|m| {
            variants
                .iter()
                .map(|&o| LinearTransform::from_dense(m).unwrap().with_options(o))
        })
        .collect();
    assert_eq!(lts[per].matrix().diags.len(), 5);
    let mut rots: Vec<i64> = lts.iter().flat_map(|l| l.rotations()).collect();
    rots.sort_unstable();
    rots.dedup();
    let mut st = setup(&rots);
    let z = common::values(12, s);
    let ct = st.encrypt(&z);
    let x = st.ev.load(&ct).unwrap();
    for (i, lt) in lts.iter().enumerate() {
        let want: Vec<Complex64> = (0..s)
            .map(|r| {
                (0..s)
                    .map(|c| [&dense, &banded][i / per][r][c] * z[c])
                    .sum()
            })
            .collect();
        assert_eq!(lt.apply_clear(&z).len(), s);
        for _ in 0..2 {
            // The second run uses the cached plaintexts.
            let y = lt.apply(&mut st.ev, &x, &st.keys).unwrap();
            assert_eq!(y.level, x.level - 1);
            assert!((y.scale / x.scale - 1.0).abs() < 1e-9);
            let got = st.open(&y);
            let err = PrecisionStats::new(&want, &got[..s]).max_error;
            assert!(err < 1e-6, "variant {i}: max error {err:e}");
        }
        assert!(lt.plaintext_store().0 > 0);
    }
    // Bad shapes are errors.
    assert!(LinearTransform::from_dense(&dense[..3]).is_err());
    assert!(LinearTransform::new(32, [(32, vec![Complex64::new(1.0, 0.0); 32])].into()).is_err());
    assert!(LinearTransform::new(32, [(1, vec![Complex64::new(1.0, 0.0); 31])].into()).is_err());
    let small = st.encrypt(&z[..16]);
    let small = st.ev.load(&small).unwrap();
    assert!(lts[0].apply(&mut st.ev, &small, &st.keys).is_err());
}

#[test]
fn goldschmidt_inverse_matches_the_clear() {
    use tessera_ckks::circuits::inverse;
    let mut st = setup(&[]);
    let (lo, hi) = (0.25, 3.0);
    let d = 5;
    assert_eq!(inverse::depth(d), 7);
    let xs: Vec<f64> = reals(21, 64)
        .iter()
        .map(|r| lo + (hi - lo) * (r + 1.0) / 2.0)
        .collect();
    let z: Vec<Complex64> = xs.iter().map(|&x| Complex64::new(x, 0.0)).collect();
    let ct = st.encrypt(&z);
    let x = st.ev.load(&ct).unwrap();
    let y = inverse::inverse(&mut st.ev, &x, lo, hi, d, &st.keys).unwrap();
    assert_eq!(y.level, x.level - inverse::depth(d));
    assert_eq!(y.scale, x.scale);
    let got = st.open(&y);
    let mut worst = 0.0f64;
    for (g, &x) in got.iter().zip(&xs) {
        // Against the same iteration in the clear: CKKS noise only.
        let want = inverse::inverse_plain(x, hi, d);
        worst = worst.max((g.re - want).abs());
        // And against 1/x: the iteration's bound plus the noise.
        assert!((g.re * x - 1.0).abs() <= inverse::relative_error(lo, hi, d) + 1e-6);
    }
    eprintln!("Goldschmidt inverse: max |HE - replica| = {worst:e}");
    assert!(worst < 1e-6, "{worst}");
    assert!(inverse::inverse(&mut st.ev, &x, 0.0, 1.0, 3, &st.keys).is_err());
    assert!(matches!(
        inverse::inverse(&mut st.ev, &x, lo, hi, 7, &st.keys),
        Err(CkksError::OutOfLevels { .. })
    ));
}

/// An insecure set deep enough for the composite signs: N = 2^11, 16 levels of 40 bits.
fn deep() -> Setup {
    let mut lit = tessera_ckks::params::preset_literal("test-medium").unwrap();
    lit.name = "test-deep-circuits".into();
    lit.log_n = 11;
    lit.log_q = [vec![60], vec![40; 16]].concat();
    lit.log_p = vec![61; 3];
    lit.dnum = 6;
    lit.log_default_scale = 40;
    lit.dynamic_special = 0;
    let ctx = CkksContext::new(Parameters::new(lit).unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([6; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let keys = kg.evaluation_keys(&sk, &[], false).unwrap();
    let ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
    Setup {
        ctx,
        kg,
        sk,
        keys,
        ev,
    }
}

#[test]
fn ckk_comparison_matches_its_replica() {
    use tessera_ckks::circuits::sign::CompositeSign;
    let mut st = deep();
    let s = CompositeSign::ckk(3, 2, 2).unwrap();
    assert_eq!(s.depth(), 12);
    let n = 128;
    let a: Vec<f64> = reals(31, n).iter().map(|v| (v + 1.0) / 2.0).collect();
    let b: Vec<f64> = reals(32, n).iter().map(|v| (v + 1.0) / 2.0).collect();
    let enc = |st: &mut Setup, v: &[f64]| {
        let z: Vec<Complex64> = v.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        st.encrypt(&z)
    };
    let (ca, cb) = (enc(&mut st, &a), enc(&mut st, &b));
    let (xa, xb) = (st.ev.load(&ca).unwrap(), st.ev.load(&cb).unwrap());
    let y = s.compare(&mut st.ev, &xa, &xb, &st.keys).unwrap();
    assert_eq!(y.level, xa.level - 12);
    let got = st.open(&y);
    let mut worst = 0.0f64;
    for i in 0..n {
        let want = s.compare_plain(a[i], b[i]);
        worst = worst.max((got[i].re - want).abs());
        // Away from ties the comparison is decided.
        if (a[i] - b[i]).abs() > 0.1 {
            assert!((got[i].re - f64::from(u8::from(a[i] > b[i]))).abs() < 0.01);
        }
    }
    eprintln!("CKK compare (n = 3, d_f = d_g = 2): max |HE - replica| = {worst:e}");
    assert!(worst < 1e-6, "{worst}");
}

#[test]
fn lee_app_relu_matches_its_replica() {
    use tessera_ckks::circuits::sign::CompositeSign;
    let mut st = deep();
    let s = CompositeSign::lee_relu().unwrap();
    let bound = 40.0;
    let n = 128;
    let xs: Vec<f64> = reals(41, n).iter().map(|v| bound * v).collect();
    let z: Vec<Complex64> = xs.iter().map(|&x| Complex64::new(x, 0.0)).collect();
    let ct = st.encrypt(&z);
    let x = st.ev.load(&ct).unwrap();
    let y = s.app_relu(&mut st.ev, &x, bound, &st.keys).unwrap();
    assert_eq!(y.level, x.level - s.depth() - 2);
    assert_eq!(y.scale, x.scale);
    let got = st.open(&y);
    let (eps, err) = s.precision().unwrap();
    let mut worst = 0.0f64;
    for (g, &x) in got.iter().zip(&xs) {
        let want = s.app_relu_plain(x, bound);
        worst = worst.max((g.re - want).abs());
        if x.abs() >= eps * bound {
            assert!((g.re - x.max(0.0)).abs() <= x.abs() * err + 1e-3);
        }
    }
    eprintln!("AppReLU {{15, 15, 27}}: max |HE - replica| = {worst:e}");
    assert!(worst < 1e-5, "{worst}");
    // Not enough levels, a bad bound.
    let u = st.ev.drop_levels(&x, 3).unwrap();
    assert!(matches!(
        s.app_relu(&mut st.ev, &u, bound, &st.keys),
        Err(CkksError::OutOfLevels { .. })
    ));
    assert!(s.app_relu(&mut st.ev, &x, 0.0, &st.keys).is_err());
}

/// Double hoisting computes the same transform as single hoisting, within the precision of
/// either, with fewer inverse NTTs (ModDowns: one per giant step's `c1` and one pair at the
/// end, instead of a pair per baby and giant rotation), under both key-switch dataflows.
#[test]
fn double_hoisting_agrees_with_single_and_saves_mod_downs() {
    use tessera_backend::trace::Op;
    use tessera_backend::Recording;
    use tessera_ckks::circuits::linear::{LinearOptions, LinearTransform};
    let s = 32;
    let dense: Vec<Vec<Complex64>> = (0..s).map(|i| common::values(70 + i as u64, s)).collect();
    let single = LinearTransform::from_dense(&dense).unwrap();
    let double = LinearTransform::from_dense(&dense)
        .unwrap()
        .with_options(LinearOptions {
            double_hoisting: true,
            ..Default::default()
        });
    let plan = single.plan();
    assert!(plan.baby.len() > 2 && plan.giant.len() > 2, "{plan:?}");
    let st = setup(&single.rotations());
    let z = common::values(13, s);
    let mut st = st;
    let ct = st.encrypt(&z);
    let want = single.apply_clear(&z);
    for flow in [KeySwitchDataflow::Batched, KeySwitchDataflow::Streamed] {
        let mut got = Vec::new();
        let mut intts = Vec::new();
        for lt in [&single, &double] {
            let mut ev = Evaluator::new(
                &st.ctx,
                Recording::new(CpuBackend::new(st.ctx.ring().clone())),
            )
            .unwrap();
            ev.set_key_switch_dataflow(flow);
            let x = ev.load(&ct).unwrap();
            let y = lt.apply(&mut ev, &x, &st.keys).unwrap();
            let y = ev.store(&y).unwrap();
            let ins = ev.backend().instructions();
            intts.push(ins.iter().filter(|i| i.op == Op::Intt).count());
            let ext = ins
                .iter()
                .filter(|i| i.op == Op::Begin && i.name.as_deref() == Some("HRotHoistedExt"))
                .count();
            assert_eq!(ext > 0, std::ptr::eq(lt, &double), "{flow:?}");
            // Double hoisting sums each giant step's products in one PMultExtSum.
            let sums = ins
                .iter()
                .filter(|i| i.op == Op::Begin && i.name.as_deref() == Some("PMultExtSum"))
                .count();
            let want_sums = if std::ptr::eq(lt, &double) {
                plan.giant.len()
            } else {
                0
            };
            assert_eq!(sums, want_sums, "{flow:?}");
            assert!(
                ev.mul_plain_ext_sum(&[]).is_err(),
                "an empty sum is an error"
            );
            let out = ctx_decode(&st, &y);
            got.push(out);
        }
        for g in &got {
            let e = PrecisionStats::new(&want, &g[..s]).max_error;
            assert!(e < 1e-6, "{flow:?}: max error {e:e}");
        }
        let between = PrecisionStats::new(&got[0][..s], &got[1][..s]).max_error;
        assert!(between < 1e-6, "{flow:?}: {between:e}");
        // Baby steps b != 0 and giant steps g != 0 each took a ModDown pair under single
        // hoisting; double hoisting takes one ModDown per giant step g != 0 and one pair.
        let babies = plan.baby.iter().filter(|&&b| b != 0).count();
        let giants = plan.giant.keys().filter(|&&g| g != 0).count();
        assert!(intts[1] < intts[0], "{flow:?}: {intts:?}");
        assert!(
            intts[0] - intts[1] >= 2 * (babies + giants) - giants - 2,
            "{flow:?}: {intts:?}, {babies} baby and {giants} giant steps"
        );
    }
}

fn ctx_decode(st: &Setup, y: &Ciphertext<RnsPoly>) -> Vec<Complex64> {
    st.ctx.decode(&decrypt(y, &st.sk).unwrap()).unwrap()
}
