//! The CPU backend against the slow reference backend, under every SIMD kernel this CPU has:
//! each primary function bit for bit equal to its definition (crates/backend/src/reference.rs)
//! on random inputs of degrees 2^4 to 2^12 with 28-, 49- and 60-bit primes.
//!
//! `TESSERA_SIMD` is read once per process, so each kernel runs in a child process (this test
//! binary re-run on one test with `TESSERA_SIMD` set); a kernel the CPU lacks is reported as
//! skipped on standard error, past the harness's capture.

use std::io::Write;
use std::process::Command;
use tessera_backend::conformance::{check_against, Config};
use tessera_backend::{CpuBackend, ReferenceBackend};
use tessera_math::Kernel;

/// Set in a child process: the kernel level it was started for.
const CHILD: &str = "TESSERA_CONFORMANCE_CHILD";

fn run(cfg: &Config) {
    let s = check_against(ReferenceBackend::new, |r| Ok(CpuBackend::new(r)), cfg)
        .unwrap_or_else(|f| panic!("CPU backend differs from the reference: {f}"));
    assert!(s.skipped.is_empty(), "{:?}", s.skipped);
    assert_eq!(s.rings.len(), cfg.rings.len());
    // Every primary of the trait was compared.
    assert!(s.unchecked().is_empty(), "unchecked: {:?}", s.unchecked());
}

/// Under the kernel in force (the CPU's best unless `TESSERA_SIMD` says otherwise), the full
/// degree range 2^4 ..= 2^12.
#[test]
fn cpu_backend_equals_the_reference() {
    let cfg = if std::env::var_os(CHILD).is_some() {
        // A child checks the degrees where every kernel's code paths (vector widths, the
        // scalar tails of small rings) are exercised, and stays fast.
        Config::degrees(4..=10)
    } else {
        Config::standard()
    };
    run(&cfg);
}

/// Every kernel level this CPU supports, each in its own process; AVX2 twice, with its
/// double-precision products for moduli below 2^50 (the default where the CPU has FMA) and
/// with `TESSERA_AVX2_FMA=0` (its integer products, what a CPU without FMA runs).
#[test]
fn cpu_backend_equals_the_reference_under_every_kernel() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let exe = std::env::current_exe().expect("test executable");
    let cases = Kernel::ALL.into_iter().flat_map(|k| {
        let fma: &[&str] = if k == Kernel::Avx2 {
            &["1", "0"]
        } else {
            &["1"]
        };
        fma.iter().map(move |&f| (k, f))
    });
    for (k, fma) in cases {
        if !k.cpu_supports() {
            let _ = writeln!(
                std::io::stderr(),
                "conformance: kernel {} skipped: CPU lacks {}",
                k.name(),
                k.name()
            );
            continue;
        }
        let out = Command::new(&exe)
            .args([
                "--exact",
                "cpu_backend_equals_the_reference",
                "--test-threads",
                "1",
            ])
            .env("TESSERA_SIMD", k.name())
            .env("TESSERA_AVX2_FMA", fma)
            .env(CHILD, k.name())
            .output()
            .expect("run the test binary");
        assert!(
            out.status.success(),
            "kernel {} (TESSERA_AVX2_FMA={fma}): {}\n{}",
            k.name(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // The child ran the test (not filtered out).
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("1 passed"),
            "kernel {}: {}",
            k.name(),
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
