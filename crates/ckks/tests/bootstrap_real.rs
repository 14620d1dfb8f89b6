//! Real-message and merged two-real bootstrapping on the insecure `test-boot` set (N = 2^10),
//! at sparse and full slot counts, against the clear messages.

mod common;
use common::values;

use num_complex::Complex64;
use tessera_backend::CpuBackend;
use tessera_ckks::bootstrap::{BootstrapParameters, Bootstrapper};
use tessera_ckks::*;
use tessera_math::sampling::Seed;

#[test]
fn real_and_two_real_bootstrapping_restore_real_messages() {
    let ctx = CkksContext::new(Parameters::preset("test-boot").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([12; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
    let scale = ctx.params().default_scale();
    for slots in [64usize, 512] {
        let boot = Bootstrapper::new(
            &ctx,
            BootstrapParameters {
                slots: Some(slots),
                ..BootstrapParameters::preset("test-boot").unwrap().1
            },
        )
        .unwrap();
        let keys = boot.keygen(&mut kg, &sk).unwrap();
        let real = |seed: u64| -> Vec<Complex64> {
            values(seed, slots)
                .iter()
                .map(|z| Complex64::new(z.re, 0.0))
                .collect()
        };
        let (v, w) = (real(70 + slots as u64), real(71 + slots as u64));
        let mut enc = |m: &[Complex64]| {
            let ct = kg
                .encrypt_sk(&ctx.encode(m, slots, 0, scale).unwrap(), &sk)
                .unwrap();
            ev.load(&ct).unwrap()
        };
        let (cv, cw) = (enc(&v), enc(&w));
        let open = |ev: &mut Evaluator<CpuBackend>, y: &Ciphertext<_>| {
            ctx.decode(&decrypt(&ev.store(y).unwrap(), &sk).unwrap())
                .unwrap()[..slots]
                .to_vec()
        };
        // The ordinary bootstrapping, for reference.
        let plain = boot.bootstrap(&mut ev, &cv, &keys).unwrap();
        let p_plain = PrecisionStats::new(&v, &open(&mut ev, &plain));
        // Real message: the same real-part precision, no imaginary part left.
        let y = boot.bootstrap_real(&mut ev, &cv, &keys).unwrap();
        assert_eq!((y.level, y.slots), (plain.level, slots));
        assert!((y.scale / cv.scale - 1.0).abs() < 1e-9);
        let got = open(&mut ev, &y);
        let p_real = PrecisionStats::new(&v, &got);
        let worst_im = got.iter().map(|z| z.im.abs()).fold(0.0, f64::max);
        let plain_im = open(&mut ev, &plain)
            .iter()
            .map(|z| z.im.abs())
            .fold(0.0, f64::max);
        // Merged: one bootstrapping for both.
        let (yv, yw) = boot.bootstrap_two_real(&mut ev, &cv, &cw, &keys).unwrap();
        assert_eq!((yv.level, yw.level), (plain.level, plain.level));
        let p_v = PrecisionStats::new(&v, &open(&mut ev, &yv));
        let p_w = PrecisionStats::new(&w, &open(&mut ev, &yw));
        eprintln!(
            "{slots} slots: plain {:.1} bits (worst {:.1}, imaginary up to {plain_im:.1e}); real {:.1} (worst {:.1}, imaginary up to {worst_im:.1e}); two-real {:.1} / {:.1} (worst {:.1} / {:.1})",
            p_plain.mean_precision_bits(),
            p_plain.max_error_bits(),
            p_real.mean_precision_bits(),
            p_real.max_error_bits(),
            p_v.mean_precision_bits(),
            p_w.mean_precision_bits(),
            p_v.max_error_bits(),
            p_w.max_error_bits(),
        );
        // The imaginary part is the ciphertext noise only (encryption at the new level).
        assert!(worst_im < 1e-6 && worst_im < plain_im / 4.0);
        // Within a bit of the ordinary bootstrapping (the real part's error is the same
        // error; PrecisionStats counts the imaginary error too, so it can only gain).
        assert!(p_real.mean_precision_bits() > p_plain.mean_precision_bits() - 1.0);
        for p in [&p_real, &p_v, &p_w] {
            assert!(
                p.mean_precision_bits() > 20.0,
                "{}",
                p.mean_precision_bits()
            );
            assert!(p.max_error_bits() > 14.0, "{}", p.max_error_bits());
        }
        // Bad input: different slot counts.
        if slots == 64 {
            let other = kg
                .encrypt_sk(&ctx.encode(&v[..32], 32, 0, scale).unwrap(), &sk)
                .unwrap();
            let other = ev.load(&other).unwrap();
            assert!(matches!(
                boot.bootstrap_two_real(&mut ev, &cv, &other, &keys),
                Err(CkksError::InvalidParameter { .. })
            ));
        }
    }
    // META-BTS is refused, not mixed in.
    let meta = Bootstrapper::new(
        &ctx,
        BootstrapParameters {
            meta_log_scale: Some(10),
            ..BootstrapParameters::preset("test-boot").unwrap().1
        },
    );
    if let Ok(meta) = meta {
        let keys = meta.keygen(&mut kg, &sk).unwrap();
        let m = values(5, ctx.params().max_slots());
        let ct = kg
            .encrypt_sk(&ctx.encode(&m, m.len(), 0, scale).unwrap(), &sk)
            .unwrap();
        let x = ev.load(&ct).unwrap();
        assert!(matches!(
            meta.bootstrap_real(&mut ev, &x, &keys),
            Err(CkksError::Unsupported(_))
        ));
    }
}
