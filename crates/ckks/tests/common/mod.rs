//! Helpers shared by the integration tests.

use num_complex::Complex64;

/// `n` pseudo-random complex values in the unit square (xorshift64; test data only).
pub fn values(seed: u64, n: usize) -> Vec<Complex64> {
    let mut s = seed | 1;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s as f64 / u64::MAX as f64) * 2.0 - 1.0
    };
    (0..n).map(|_| Complex64::new(next(), next())).collect()
}

/// Issue 24 item 10: bootstraps `ct` twice through the same recording wrapper, once over the
/// CPU backend (computing) and once over the trace backend (computing nothing), and checks
/// that the two instruction streams are equal, instruction for instruction. Returns the CPU
/// result (stored to the host) and the stream length.
#[allow(dead_code)]
pub fn bootstrap_cpu_equals_trace(
    ctx: &std::sync::Arc<tessera_ckks::CkksContext>,
    boot: &tessera_ckks::bootstrap::Bootstrapper,
    keys: &tessera_ckks::bootstrap::BootstrapKeys,
    ct: &tessera_ckks::Ciphertext<tessera_math::RnsPoly>,
) -> (tessera_ckks::Ciphertext<tessera_math::RnsPoly>, usize) {
    use tessera_backend::{CpuBackend, Recording, TraceBackend};
    use tessera_ckks::Evaluator;
    let mut cpu = Evaluator::new(ctx, Recording::new(CpuBackend::new(ctx.ring().clone()))).unwrap();
    let x = cpu.load(ct).unwrap();
    let y = boot.bootstrap(&mut cpu, &x, keys).unwrap();
    let out = cpu.store(&y).unwrap();
    let mut tr = Evaluator::new(ctx, TraceBackend::trace(ctx.ring().clone())).unwrap();
    let x = tr.load(ct).unwrap();
    let y = boot.bootstrap(&mut tr, &x, keys).unwrap();
    tr.backend_mut().record_store(&y.c0);
    tr.backend_mut().record_store(&y.c1);
    let (a, b) = (cpu.backend().instructions(), tr.backend().instructions());
    if let Some(k) = a.iter().zip(b).position(|(x, y)| x != y) {
        panic!(
            "streams differ at instruction {k}:\n  cpu:   {:?}\n  trace: {:?}",
            a[k], b[k]
        );
    }
    assert_eq!(a.len(), b.len(), "stream lengths differ");
    assert!(a.len() > 1000, "{} instructions", a.len());
    (out, a.len())
}
