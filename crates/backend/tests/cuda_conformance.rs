//! The conformance suite (crates/backend/src/conformance.rs) for the CUDA backend: every
//! primary function equal to the CPU backend's bit for bit, and the same refusals.
//!
//! * On the host emulator (the CUDA kernel sources compiled for this CPU), everywhere: the
//!   kernels' arithmetic, index maps and the launch sequences, at degrees 2^4 ..= 2^10.
//! * On the GPU (device 0 or `TESSERA_CUDA_DEVICE`) when one is present, with the full-size
//!   N = 2^16 rings added; without one it prints "skipped: <reason>" and returns.
#![cfg(feature = "cuda")]

use tessera_backend::conformance::{check, Config, Summary};
use tessera_backend::CudaBackend;

fn assert_complete(s: &Summary, cfg: &Config) {
    assert!(s.skipped.is_empty(), "{:?}", s.skipped);
    assert_eq!(s.rings.len(), cfg.rings.len());
    assert!(s.unchecked().is_empty(), "unchecked: {:?}", s.unchecked());
}

#[test]
fn emulated_cuda_backend_conforms() {
    if let Err(e) = tessera_cuda_emulator_available() {
        return println!("skipped: {e}");
    }
    let cfg = Config::degrees(4..=10);
    let s = check(CudaBackend::emulated, &cfg)
        .unwrap_or_else(|f| panic!("emulated CUDA backend differs from the CPU: {f}"));
    assert_complete(&s, &cfg);
    println!("{} checks on {} rings", s.checks, s.rings.len());
}

#[test]
fn gpu_cuda_backend_conforms() {
    let probe = Config::quick().rings[0].ring().unwrap();
    if let Err(e) = CudaBackend::new(probe) {
        return println!("skipped: {e}");
    }
    let cfg = Config::standard().with_large();
    let s = check(CudaBackend::new, &cfg)
        .unwrap_or_else(|f| panic!("CUDA backend differs from the CPU: {f}"));
    assert_complete(&s, &cfg);
    println!("{} checks on {} rings", s.checks, s.rings.len());
}

/// Whether the host emulator can run here: it needs a host C++ compiler. With one, the
/// emulator must build (kernels the compiler rejects fail the test, not skip it).
fn tessera_cuda_emulator_available() -> Result<(), String> {
    tessera_cuda::host_compiler_available()?;
    let ring = Config::quick().rings[0].ring().map_err(|e| e.to_string())?;
    CudaBackend::emulated(ring)
        .map(|_| ())
        .unwrap_or_else(|e| panic!("the host compiler is there but the emulator failed: {e}"));
    Ok(())
}
