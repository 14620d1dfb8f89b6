//! The CUDA backend under the CKKS evaluator: HMult (with relinearisation and rescaling),
//! HRot, conjugation and additions give ciphertexts equal bit for bit to the CPU backend's.
//! Runs on the host emulator (the CUDA kernels compiled for the CPU) everywhere, and on the
//! GPU where one is present; without a GPU, `CudaBackend::new` is a typed error.
#![cfg(feature = "cuda")]

use std::sync::Arc;
use tessera_backend::{Backend, CpuBackend, CudaBackend};
use tessera_ckks::*;
use tessera_math::sampling::Seed;
use tessera_math::{MathError, RnsPoly};

/// HMult, HRot, conjugation and an addition on `backend`; the stored results.
fn circuit<B: Backend>(
    ctx: &Arc<CkksContext>,
    backend: B,
    cts: &[Ciphertext<RnsPoly>; 2],
    keys: &EvaluationKeys,
) -> Vec<Ciphertext<RnsPoly>> {
    let mut ev = Evaluator::new(ctx, backend).unwrap();
    let a = ev.load(&cts[0]).unwrap();
    let b = ev.load(&cts[1]).unwrap();
    let m = ev.mul_relin_rescale(&a, &b, keys).unwrap();
    let r = ev.rotate(&m, 1, keys).unwrap();
    let c = ev.conjugate(&r, keys).unwrap();
    let s = ev.add(&c, &m).unwrap();
    let r2 = ev.rotate(&s, 1, keys).unwrap(); // the rotation key again: a cache hit
    [m, r, c, s, r2]
        .iter()
        .map(|x| ev.store(x).unwrap())
        .collect()
}

fn setup() -> (Arc<CkksContext>, [Ciphertext<RnsPoly>; 2], EvaluationKeys) {
    setup_with(Parameters::preset("test-small").unwrap())
}

/// A test set whose primes all fit 32-bit words (below 2^30): `test-double`'s shape with
/// 28-bit chain primes and 29-bit special primes, double-prime rescaling.
fn params_32_bit_words() -> Parameters {
    let lit = Parameters::preset("test-double").unwrap().literal().clone();
    let dir = std::env::temp_dir().join(format!("tessera-cuda-ckks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("test-w32.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"test-w32\"\nsource = \"test only: 32-bit words (INSECURE)\"\n\
             security = \"test\"\nlog_n = {}\nchain = [{{ bits = 28, count = 7 }}]\n\
             special = [{{ bits = 29, count = 2 }}]\ndnum = {}\ndynamic_special = 0\n\
             log_scale = 56\nrescaling = \"double\"\nsecret = \"ternary\"\nsigma = 3.2\n",
            lit.log_n, lit.dnum
        ),
    )
    .unwrap();
    let p = Parameters::resolve(path.to_str().unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    p
}

fn setup_with(params: Parameters) -> (Arc<CkksContext>, [Ciphertext<RnsPoly>; 2], EvaluationKeys) {
    let ctx = CkksContext::new(params).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([3; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let keys = kg.evaluation_keys(&sk, &[1], true).unwrap();
    let (l, scale) = (ctx.params().max_level(), ctx.params().default_scale());
    let z: Vec<f64> = (0..512)
        .map(|i| ((i * 37 % 101) as f64 / 101.0) - 0.5)
        .collect();
    let pa = ctx.encode_real(&z, 512, l, scale).unwrap();
    let zb: Vec<f64> = z.iter().rev().copied().collect();
    let pb = ctx.encode_real(&zb, 512, l, scale).unwrap();
    let cts = [
        kg.encrypt_sk(&pa, &sk).unwrap(),
        kg.encrypt_sk(&pb, &sk).unwrap(),
    ];
    (ctx, cts, keys)
}

fn assert_same(want: &[Ciphertext<RnsPoly>], got: &[Ciphertext<RnsPoly>]) {
    assert_eq!(want.len(), got.len());
    for (k, (w, g)) in want.iter().zip(got).enumerate() {
        assert_eq!(w.level, g.level, "result {k}");
        assert_eq!(w.c0, g.c0, "result {k}: c0");
        assert_eq!(w.c1, g.c1, "result {k}: c1");
    }
}

#[test]
fn emulated_cuda_evaluator_equals_cpu() {
    let (ctx, cts, keys) = setup();
    let want = circuit(&ctx, CpuBackend::new(ctx.ring().clone()), &cts, &keys);
    if let Err(e) = tessera_cuda::host_compiler_available() {
        return println!("skipped: {e}");
    }
    let cuda = CudaBackend::emulated(ctx.ring().clone()).unwrap_or_else(|e| panic!("{e}"));
    let dev = cuda.device_ring().clone();
    assert_same(&want, &circuit(&ctx, cuda, &cts, &keys));
    let (hits, misses, _) = dev.cache_stats();
    assert!(
        hits > 0 && misses > 0,
        "keys are uploaded once: {hits} hits, {misses} misses"
    );
}

/// The same circuit with the CUDA backend in 32-bit words (the `_w32` kernels) against the
/// 64-bit CPU backend: the same ciphertexts, bit for bit.
#[test]
fn emulated_cuda_evaluator_in_32_bit_words_equals_cpu() {
    if let Err(e) = tessera_cuda::host_compiler_available() {
        return println!("skipped: {e}");
    }
    let (ctx, cts, keys) = setup_with(params_32_bit_words());
    let want = circuit(&ctx, CpuBackend::new(ctx.ring().clone()), &cts, &keys);
    let cuda = CudaBackend::emulated(ctx.ring().clone()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cuda.word(), tessera_backend::Word::W32);
    assert_same(&want, &circuit(&ctx, cuda, &cts, &keys));
    // And 64-bit words on the same ring.
    let cuda64 = CudaBackend::emulated_with_word(ctx.ring().clone(), tessera_backend::Word::W64)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_same(&want, &circuit(&ctx, cuda64, &cts, &keys));
}

#[test]
fn gpu_cuda_evaluator_equals_cpu() {
    let (ctx, cts, keys) = setup();
    let cuda = match CudaBackend::new(ctx.ring().clone()) {
        Ok(b) => b,
        Err(e) => return println!("skipped: {e}"),
    };
    println!("device: {}", cuda.device().name());
    let want = circuit(&ctx, CpuBackend::new(ctx.ring().clone()), &cts, &keys);
    assert_same(&want, &circuit(&ctx, cuda, &cts, &keys));
}

/// Without a driver the constructor is `MathError::Unsupported` with the reason.
#[test]
fn new_without_gpu_is_unsupported() {
    let ctx = CkksContext::new(Parameters::preset("test-small").unwrap()).unwrap();
    match CudaBackend::new(ctx.ring().clone()) {
        Ok(b) => println!("a GPU is present: {}", b.device().name()),
        Err(MathError::Unsupported(reason)) => {
            assert!(reason.contains("CUDA"), "{reason}");
            println!("no GPU: {reason}");
        }
        Err(other) => panic!("expected Unsupported, got {other}"),
    }
}

#[test]
fn gpu_cuda_evaluator_in_32_bit_words_equals_cpu() {
    let (ctx, cts, keys) = setup_with(params_32_bit_words());
    let cuda = match CudaBackend::new(ctx.ring().clone()) {
        Ok(b) => b,
        Err(e) => return println!("skipped: {e}"),
    };
    assert_eq!(cuda.word(), tessera_backend::Word::W32);
    let want = circuit(&ctx, CpuBackend::new(ctx.ring().clone()), &cts, &keys);
    assert_same(&want, &circuit(&ctx, cuda, &cts, &keys));
}

/// The circuit at the 128-bit-secure 32-bit-word preset `w32-boot` (N = 2^16, 48 chain and 12
/// special primes below 2^30, dnum = 4, double-prime rescaling) on the emulated CUDA backend in
/// 32-bit words, against the CPU backend: the device layer's full-size path (two-pass NTTs,
/// four-digit ModUp assembled in place, the paired inner products): about 15 s in a release
/// build.
#[test]
fn emulated_cuda_evaluator_at_w32_boot_equals_cpu() {
    if let Err(e) = tessera_cuda::host_compiler_available() {
        return println!("skipped: {e}");
    }
    let (ctx, cts, keys) = setup_with(Parameters::preset("w32-boot").unwrap());
    let want = circuit(&ctx, CpuBackend::new(ctx.ring().clone()), &cts, &keys);
    let cuda = CudaBackend::emulated(ctx.ring().clone()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cuda.word(), tessera_backend::Word::W32);
    assert_same(&want, &circuit(&ctx, cuda, &cts, &keys));
}

#[test]
fn gpu_cuda_evaluator_at_w32_boot_equals_cpu() {
    // Probed on a small ring first, so that a machine without a GPU skips before the keys.
    let probe = CkksContext::new(Parameters::preset("test-small").unwrap()).unwrap();
    if let Err(e) = CudaBackend::new(probe.ring().clone()) {
        return println!("skipped: {e}");
    }
    let (ctx, cts, keys) = setup_with(Parameters::preset("w32-boot").unwrap());
    let cuda = CudaBackend::new(ctx.ring().clone()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cuda.word(), tessera_backend::Word::W32);
    let want = circuit(&ctx, CpuBackend::new(ctx.ring().clone()), &cts, &keys);
    assert_same(&want, &circuit(&ctx, cuda, &cts, &keys));
}
