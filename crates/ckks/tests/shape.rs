//! Shape-only contexts (`CkksContext::shape_only`): keys and plaintexts without data, for
//! recording. Their instruction streams are checked against recordings of data in the
//! programs crate (`workloads::tests` and `tests/registry.rs`); here: what they refuse.

use tessera_backend::CpuBackend;
use tessera_ckks::{CkksContext, Evaluator, KeyGenerator, Parameters};
use tessera_math::sampling::Seed;

/// A shape-only plaintext or key has the size of the real one, cannot be decoded, and a
/// computing backend refuses it with a typed error instead of computing garbage.
#[test]
fn shape_only_objects_have_their_size_and_compute_nowhere() {
    let data = CkksContext::new(Parameters::preset("test-small").unwrap()).unwrap();
    let shape = CkksContext::shape_only(Parameters::preset("test-small").unwrap()).unwrap();
    assert!(shape.is_shape_only() && !data.is_shape_only());
    let (l, scale) = (data.params().max_level(), data.params().default_scale());

    let pt = shape.encode_real(&[0.5, 0.25], 4, l, scale).unwrap();
    let s = pt.shape.as_ref().expect("a shape-only plaintext");
    assert_eq!(s.limbs, shape.chain_limbs(l));
    assert!(shape
        .decode(&pt)
        .unwrap_err()
        .to_string()
        .contains("shape-only"));
    // The checks that need no encoding still run.
    assert!(shape.encode_real(&[f64::NAN], 4, l, scale).is_err());
    assert!(shape.encode_real(&[0.5], 3, l, scale).is_err());
    assert!(shape.encode_real(&[0.5], 4, l + 1, scale).is_err());

    let mut kg = KeyGenerator::from_seed(&shape, &Seed([1; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let keys = kg.evaluation_keys(&sk, &[1], false).unwrap();
    let rk = keys.relin.as_ref().unwrap();
    assert!(rk.is_shape_only());
    let mut kg_data = KeyGenerator::from_seed(&data, &Seed([1; 32])).unwrap();
    let sk_data = kg_data.secret_key().unwrap();
    let rk_data = kg_data.relin_key(&sk_data).unwrap();
    assert!(!rk_data.is_shape_only());
    assert_eq!(rk.stored_bytes(), rk_data.stored_bytes());
    assert_eq!(rk.expanded_bytes(), rk_data.expanded_bytes());
    assert!(
        kg.galois_key(&sk, 4).is_err(),
        "an even Galois element is refused"
    );

    // Ciphertexts are real (an encryption of a shape encrypts zero); the CPU refuses the
    // shapes it is asked to multiply with.
    let ct = kg.encrypt_sk(&pt, &sk).unwrap();
    let mut ev = Evaluator::new(&shape, CpuBackend::new(shape.ring().clone())).unwrap();
    let x = ev.load(&ct).unwrap();
    let e = ev.mul_plain(&x, &pt).unwrap_err().to_string();
    assert!(e.contains("shape-only"), "{e}");
    let e = ev.rotate(&x, 1, &keys).unwrap_err().to_string();
    assert!(e.contains("shape-only"), "{e}");
}
