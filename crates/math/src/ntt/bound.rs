//! Measured compute ceilings for the NTT on the running CPU.
//!
//! The butterfly-throughput bound of an N-point transform is `(N/2) * log2(N)` butterflies
//! divided by the register-resident butterfly rate of the kernel, which runs the exact
//! butterfly code of the transform with no memory traffic. A transform cannot be faster than
//! this, so the ratio of measured time to bound says how much is lost to loads, stores, shuffles
//! and loop overhead. The core clock is estimated from a chain of dependent 1-cycle additions.

use super::Kernel;
use crate::error::{MathError, Result};
use crate::modular::Modulus;
use std::time::Instant;

/// Butterflies per second of `kernel` for modulus `q`, in registers (best of `repeats` runs).
pub fn butterfly_rate(kernel: Kernel, q: u64, repeats: usize) -> Result<f64> {
    butterfly_rate_with(kernel, q, repeats, 200_000)
}

/// [`butterfly_rate`] with `iters` iterations of eight vector butterflies per run.
pub(crate) fn butterfly_rate_with(
    kernel: Kernel,
    q: u64,
    repeats: usize,
    iters: usize,
) -> Result<f64> {
    // A 64-lane transform is the smallest size every kernel supports.
    if !kernel.supports(q, 64) {
        return Err(MathError::OutOfRange {
            name: "kernel",
            value: kernel.name().into(),
            allowed: format!("a kernel this CPU supports for q = {q}"),
        });
    }
    let m = Modulus::new(q)?;
    let w = q / 3;
    let shoup_bits = if kernel == Kernel::Avx512Ifma && q < 1 << 50 {
        52
    } else {
        64
    };
    let ws = (((w as u128) << shoup_bits) / q as u128) as u64;
    let mut best = f64::INFINITY;
    let mut count = 0;
    for _ in 0..repeats.max(1) {
        let start = Instant::now();
        // SAFETY: `supports` checked the CPU features.
        let (acc, c) = unsafe {
            match kernel {
                Kernel::Scalar => {
                    super::lanes::butterfly_loop::<super::lanes::Scalar>(q, w, ws, iters)
                }
                // The transform's own choice: signed double-precision lanes below 2^50.
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 if q < 1 << 50 && crate::simd::avx2_fma() => {
                    let (wd, wsd) = ((w as f64).to_bits(), (w as f64 / q as f64).to_bits());
                    super::x86::butterflies_avx2_f64(q, wd, wsd, iters)
                }
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 => super::x86::butterflies_avx2(q, w, ws, iters),
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512 if q < 1 << 50 && crate::simd::avx2_fma() => {
                    let (wd, wsd) = ((w as f64).to_bits(), (w as f64 / q as f64).to_bits());
                    super::x86::butterflies_avx512_f64(q, wd, wsd, iters)
                }
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512 => super::x86::butterflies_avx512(q, w, ws, iters),
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512Ifma if q < 1 << 50 => super::x86::butterflies_ifma(q, w, ws, iters),
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512Ifma => super::x86::butterflies_ifma64(q, w, ws, iters),
                #[cfg(not(target_arch = "x86_64"))]
                _ => unreachable!(),
            }
        };
        best = best.min(start.elapsed().as_secs_f64());
        count = c;
        std::hint::black_box((acc, m));
    }
    Ok(count as f64 / best)
}

/// Lower bound on the time of one forward N-point transform with `kernel`, in seconds.
pub fn ntt_time_bound(kernel: Kernel, q: u64, n: usize) -> Result<f64> {
    let butterflies = (n / 2) as f64 * n.trailing_zeros() as f64;
    Ok(butterflies / butterfly_rate(kernel, q, 5)?)
}

/// Core clock estimate in Hz from a chain of dependent additions (one per cycle).
pub fn clock_hz() -> f64 {
    let iters: u64 = 4_000_000;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = Instant::now();
        let x = dependent_adds(iters);
        best = best.min(start.elapsed().as_secs_f64());
        std::hint::black_box(x);
    }
    (iters * 8) as f64 / best
}

/// `iters` loop iterations of eight dependent register additions: `8 * iters` cycles.
#[cfg(target_arch = "x86_64")]
fn dependent_adds(iters: u64) -> u64 {
    let mut x: u64 = 0;
    let mut n = iters;
    // SAFETY: pure register arithmetic.
    unsafe {
        std::arch::asm!(
            "2:",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "sub {n}, 1",
            "jnz 2b",
            x = inout(reg) x,
            n = inout(reg) n,
            options(nomem, nostack),
        );
    }
    std::hint::black_box(n);
    x
}

#[cfg(not(target_arch = "x86_64"))]
fn dependent_adds(iters: u64) -> u64 {
    let mut x = 0u64;
    for _ in 0..iters * 8 {
        x = std::hint::black_box(x + 1);
    }
    x
}
