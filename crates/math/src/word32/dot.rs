//! The inner product row on 32-bit limbs: `out[k] = sum_i xs[i][k] ys[i][k] mod q`, the
//! 32-bit counterpart of [`crate::pointwise::dot_row`] (key switching's multiply-accumulate).
//!
//! As in [`super::bconv`]: a product of two residues below `q < 2^30` is below 2^60, so
//! [`TERMS`] products sum in a 64-bit accumulator with no reduction (one `vpmuludq` for the
//! even lanes, one for the odd lanes), and each chunk's sum is folded once from its two 32-bit
//! halves. Canonical output, so every kernel writes the same words.

use super::bconv::{fold, Fold, Wide32, TERMS};
use super::lanes::small_mod;
use super::modulus::Modulus32;
use super::ntt::word32;
use crate::error::{MathError, Result};
use crate::ntt::Kernel;

/// The vector body over `out[..whole]`, `whole` a multiple of `S::L`; returns `whole`. With
/// `accumulate`, `out`'s words (residues below `q`) are added to the sums.
#[inline(always)]
pub(crate) unsafe fn dot_row<S: Wide32>(
    xs: &[&[u32]],
    ys: &[&[u32]],
    m: &Modulus32,
    out: &mut [u32],
    accumulate: bool,
) -> usize {
    let whole = out.len() - out.len() % S::L;
    let f = Fold::new(m);
    let q = S::splat(m.value());
    let mut k = 0;
    while k < whole {
        let mut acc = if accumulate {
            S::load(out.as_ptr().add(k))
        } else {
            S::splat(0)
        };
        for (xc, yc) in xs.chunks(TERMS).zip(ys.chunks(TERMS)) {
            let (mut even, mut odd) = (S::splat(0), S::splat(0));
            for (x, y) in xc.iter().zip(yc) {
                let a = S::load(x.as_ptr().add(k));
                let b = S::load(y.as_ptr().add(k));
                even = S::add64(even, S::mul_even(a, b));
                odd = S::add64(odd, S::mul_odd_pair(a, b));
            }
            let (lo, hi) = S::low_high(even, odd);
            acc = small_mod::<S>(S::add(acc, fold::<S>(lo, hi, &f, q)), q);
        }
        S::store(out.as_mut_ptr().add(k), acc);
        k += S::L;
    }
    whole
}

/// Scalar row over `out[from..]`: the same chunked 64-bit sums, reduced with `%`.
fn dot_row_scalar(
    xs: &[&[u32]],
    ys: &[&[u32]],
    m: &Modulus32,
    out: &mut [u32],
    from: usize,
    accumulate: bool,
) {
    let q = m.value() as u64;
    for (k, o) in out.iter_mut().enumerate().skip(from) {
        let mut acc = if accumulate { *o as u64 } else { 0 };
        for (xc, yc) in xs.chunks(TERMS).zip(ys.chunks(TERMS)) {
            let s: u64 = xc
                .iter()
                .zip(yc)
                .map(|(x, y)| x[k] as u64 * y[k] as u64)
                .sum();
            acc = (acc + s % q) % q;
        }
        *o = acc as u32;
    }
}

/// `out[k] = sum_i xs[i][k] ys[i][k] mod q` on `kernel` (`None`: the `TESSERA_SIMD` limit).
/// Requires every input word below `q` (checked in debug builds only: a larger word gives a
/// wrong row, never undefined behaviour) and every input at least as long as `out`.
pub fn dot_row_u32(
    kernel: Option<Kernel>,
    xs: &[&[u32]],
    ys: &[&[u32]],
    m: &Modulus32,
    out: &mut [u32],
) -> Result<()> {
    row(kernel, xs, ys, m, out, false)
}

/// `acc[k] = acc[k] + a[k] b[k] mod q` (multiply-accumulate, reduced once), on `kernel`; every
/// word below `q`, `a` and `b` at least as long as `acc`.
pub fn mul_acc_row_u32(
    kernel: Option<Kernel>,
    a: &[u32],
    b: &[u32],
    m: &Modulus32,
    acc: &mut [u32],
) -> Result<()> {
    debug_assert!(acc.iter().all(|&v| v < m.value()));
    row(kernel, &[a], &[b], m, acc, true)
}

fn row(
    kernel: Option<Kernel>,
    xs: &[&[u32]],
    ys: &[&[u32]],
    m: &Modulus32,
    out: &mut [u32],
    accumulate: bool,
) -> Result<()> {
    if xs.is_empty() || xs.len() != ys.len() {
        return Err(MathError::LengthMismatch {
            what: "32-bit dot product operands",
            expected: xs.len().max(1),
            found: ys.len(),
        });
    }
    if let Some(short) = xs
        .iter()
        .chain(ys)
        .map(|y| y.len())
        .filter(|&l| l < out.len())
        .min()
    {
        return Err(MathError::LengthMismatch {
            what: "32-bit dot product input",
            expected: out.len(),
            found: short,
        });
    }
    debug_assert!(xs
        .iter()
        .chain(ys)
        .all(|y| y[..out.len()].iter().all(|&v| v < m.value())));
    let kernel = word32(kernel.unwrap_or_else(crate::simd::active));
    if !kernel.cpu_supports() {
        return Err(MathError::Unsupported(format!(
            "kernel {} for 32-bit dot products on this CPU",
            kernel.name()
        )));
    }
    // SAFETY: the kernel's CPU features were checked, and every input covers `out`.
    let done = unsafe {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => super::x86::dot_row_avx2(xs, ys, m, out, accumulate),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => super::x86::dot_row_avx512(xs, ys, m, out, accumulate),
            _ => 0,
        }
    };
    dot_row_scalar(xs, ys, m, out, done, accumulate);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Every kernel equals the u128 reference (so the vector kernels equal the scalar one),
        /// across chunk boundaries (15 terms) and vector tails.
        #[test]
        fn kernels_match_the_u128_reference(
            qi in 0usize..4, terms in 1usize..40, n in 0usize..70, seed in any::<u64>()
        ) {
            let q = [97u32, 786_433, 268_369_921, (1 << 30) - 35][qi];
            let m = Modulus32::new(q as u64).unwrap();
            let mut r = crate::testutil::XorShift::new(seed);
            let mut v = || -> Vec<Vec<u32>> {
                (0..terms)
                    .map(|i| (0..n).map(|k| if (i + k) % 5 == 0 { q - 1 } else {
                        (r.next_u64() % q as u64) as u32 }).collect())
                    .collect()
            };
            let (xs, ys) = (v(), v());
            let want: Vec<u32> = (0..n)
                .map(|k| {
                    let s: u128 = (0..terms).map(|i| xs[i][k] as u128 * ys[i][k] as u128).sum();
                    (s % q as u128) as u32
                })
                .collect();
            let xr: Vec<&[u32]> = xs.iter().map(|v| v.as_slice()).collect();
            let yr: Vec<&[u32]> = ys.iter().map(|v| v.as_slice()).collect();
            let acc0: Vec<u32> = xs[0].iter().rev().copied().collect();
            let want_acc: Vec<u32> = (0..n)
                .map(|k| ((acc0[k] as u128 + xs[0][k] as u128 * ys[0][k] as u128) % q as u128) as u32)
                .collect();
            for kernel in crate::simd::kernels_for_tests("dot32") {
                let mut out = vec![0u32; n];
                dot_row_u32(Some(kernel), &xr, &yr, &m, &mut out).unwrap();
                prop_assert_eq!(&out, &want, "kernel {}", kernel.name());
                let mut acc = acc0.clone();
                mul_acc_row_u32(Some(kernel), &xs[0], &ys[0], &m, &mut acc).unwrap();
                prop_assert_eq!(&acc, &want_acc, "mul_acc kernel {}", kernel.name());
            }
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let m = Modulus32::new(97).unwrap();
        let mut out = vec![0u32; 4];
        let y = [1u32; 4];
        assert!(dot_row_u32(None, &[], &[], &m, &mut out).is_err());
        assert!(dot_row_u32(None, &[&y], &[&y, &y], &m, &mut out).is_err());
        assert!(dot_row_u32(None, &[&y[..3]], &[&y], &m, &mut out).is_err());
    }
}
