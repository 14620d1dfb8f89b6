//! The BConv multiply-accumulate row on 32-bit limbs: `out[k] = sum_i ys[i][k] c[i] mod p`,
//! the 32-bit counterpart of [`crate::ntt::mac_shoup_row`] (fast base conversion's inner loop).
//!
//! Why it is cheap on 32-bit words: a product of a residue below 2^30 and a constant below
//! `p < 2^30` is below 2^60, so up to [`TERMS`] products sum in a 64-bit accumulator without
//! any reduction, one native `vpmuludq` each. Only the sum is reduced, from its two 32-bit
//! halves: `s = h 2^32 + l = h (2^32 mod p) + l`, two Shoup products and two corrections.

use super::lanes::{small_mod, Lanes32};
use super::modulus::Modulus32;
use super::ntt::word32;
use crate::error::{MathError, Result};
use crate::ntt::Kernel;

/// Products summed per 64-bit accumulator: `15 (2^60 - 1) < 2^64`.
pub const TERMS: usize = 15;

/// Lane primitives for 64-bit accumulation of 32 x 32-bit products.
///
/// # Safety
/// As [`Lanes32`].
pub(crate) trait Wide32: Lanes32 {
    /// 64-bit products of the even 32-bit lanes of `y` by the broadcast `c`.
    unsafe fn mul_even(y: Self::V, c: Self::V) -> Self::V;
    /// 64-bit products of the odd 32-bit lanes of `y` by the broadcast `c`.
    unsafe fn mul_odd(y: Self::V, c: Self::V) -> Self::V;
    /// 64-bit lane sum.
    unsafe fn add64(a: Self::V, b: Self::V) -> Self::V;
    /// From the even and odd lanes' 64-bit sums, the low and the high 32-bit words in lane
    /// order.
    unsafe fn low_high(even: Self::V, odd: Self::V) -> (Self::V, Self::V);
}

/// Reduction constants: `r = 2^32 mod p` and the Shoup quotients of `r` and of 1.
#[derive(Clone, Copy)]
struct Fold {
    r: u32,
    rs: u32,
    one_s: u32,
}

impl Fold {
    fn new(m: &Modulus32) -> Self {
        let r = ((1u64 << 32) % m.value() as u64) as u32;
        Self {
            r,
            rs: m.shoup(r),
            one_s: m.shoup(1),
        }
    }
}

/// `(h 2^32 + l) mod p` in `[0, p)`: each Shoup product is below `2p`, their sum below
/// `4p < 2^32`.
#[inline(always)]
unsafe fn fold<S: Lanes32>(lo: S::V, hi: S::V, f: &Fold, q: S::V) -> S::V {
    let a = S::mul_shoup_bcast(hi, S::splat(f.r), S::splat(f.rs), q);
    let b = S::mul_shoup_bcast(lo, S::splat(1), S::splat(f.one_s), q);
    let q2 = S::add(q, q);
    small_mod::<S>(small_mod::<S>(S::add(a, b), q2), q)
}

/// The vector body over `out[..whole]`, `whole` a multiple of `S::L`.
#[inline(always)]
pub(crate) unsafe fn mac_row<S: Wide32>(
    ys: &[&[u32]],
    c: &[u32],
    m: &Modulus32,
    out: &mut [u32],
) -> usize {
    let whole = out.len() - out.len() % S::L;
    let f = Fold::new(m);
    let q = S::splat(m.value());
    let mut k = 0;
    while k < whole {
        let mut acc = S::splat(0);
        for (yc, cc) in ys.chunks(TERMS).zip(c.chunks(TERMS)) {
            let (mut even, mut odd) = (S::splat(0), S::splat(0));
            for (y, &ci) in yc.iter().zip(cc) {
                let v = S::load(y.as_ptr().add(k));
                let cv = S::splat(ci);
                even = S::add64(even, S::mul_even(v, cv));
                odd = S::add64(odd, S::mul_odd(v, cv));
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
fn mac_row_scalar(ys: &[&[u32]], c: &[u32], m: &Modulus32, out: &mut [u32], from: usize) {
    let p = m.value() as u64;
    let out = &mut out[from..];
    out.fill(0);
    // Input by input over the whole row (unit-stride loops the compiler can vectorise), the
    // 64-bit sums of each chunk of `TERMS` inputs kept in one buffer.
    let mut sums = vec![0u64; out.len()];
    for (yc, cc) in ys.chunks(TERMS).zip(c.chunks(TERMS)) {
        sums.fill(0);
        for (y, &ci) in yc.iter().zip(cc) {
            for (s, &v) in sums.iter_mut().zip(&y[from..]) {
                *s = s.wrapping_add(v as u64 * ci as u64);
            }
        }
        for (o, &s) in out.iter_mut().zip(&sums) {
            *o = ((*o as u64 + s % p) % p) as u32;
        }
    }
}

/// `out[k] = sum_i ys[i][k] c[i] mod p` on `kernel` (`None`: the `TESSERA_SIMD` limit).
/// Requires every `ys[i][k] < 2^30` (residues modulo other 32-bit-word primes; checked in
/// debug builds only), `c[i] < p`, and each `ys[i]` at least as long as `out`.
pub fn mac_row_u32(
    kernel: Option<Kernel>,
    ys: &[&[u32]],
    c: &[u32],
    m: &Modulus32,
    out: &mut [u32],
) -> Result<()> {
    if c.len() != ys.len() || c.iter().any(|&x| x >= m.value()) {
        return Err(MathError::OutOfRange {
            name: "BConv row constants",
            value: format!("{} inputs, {} constants", ys.len(), c.len()),
            allowed: format!("one constant below p = {} per input", m.value()),
        });
    }
    if let Some(short) = ys.iter().map(|y| y.len()).filter(|&l| l < out.len()).min() {
        return Err(MathError::LengthMismatch {
            what: "32-bit BConv row input",
            expected: out.len(),
            found: short,
        });
    }
    // Not checked in release builds (a second pass over every input): larger words could
    // overflow the 64-bit sums and give a wrong row, never undefined behaviour.
    debug_assert!(ys
        .iter()
        .all(|y| y[..out.len()].iter().all(|&v| v >> 30 == 0)));
    let kernel = word32(kernel.unwrap_or_else(crate::simd::active));
    if !kernel.cpu_supports() {
        return Err(MathError::Unsupported(format!(
            "kernel {} for 32-bit BConv rows on this CPU",
            kernel.name()
        )));
    }
    // SAFETY: the kernel's CPU features were checked, and every input covers `out`.
    let done = unsafe {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => super::x86::mac_row_avx2(ys, c, m, out),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => super::x86::mac_row_avx512(ys, c, m, out),
            _ => 0,
        }
    };
    mac_row_scalar(ys, c, m, out, done);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_match_the_u128_reference() {
        let mut rng = crate::testutil::XorShift::new(0xb0c);
        for p in [97u32, 786_433, (1 << 30) - 35] {
            let m = Modulus32::new(p as u64).unwrap();
            for (terms, n) in [
                (1usize, 8usize),
                (6, 64),
                (15, 40),
                (16, 33),
                (31, 17),
                (40, 5),
            ] {
                let ys: Vec<Vec<u32>> = (0..terms)
                    .map(|i| {
                        (0..n)
                            .map(|k| match (i + k) % 5 {
                                0 => (1 << 30) - 1, // any word below 2^30 is a valid input
                                1 => 0,
                                _ => (rng.next_u64() >> 34) as u32,
                            })
                            .collect()
                    })
                    .collect();
                let yr: Vec<&[u32]> = ys.iter().map(|v| v.as_slice()).collect();
                let c: Vec<u32> = (0..terms)
                    .map(|i| {
                        if i == 0 {
                            p - 1
                        } else {
                            (rng.next_u64() % p as u64) as u32
                        }
                    })
                    .collect();
                let want: Vec<u32> = (0..n)
                    .map(|k| {
                        let s: u128 = (0..terms).map(|i| ys[i][k] as u128 * c[i] as u128).sum();
                        (s % p as u128) as u32
                    })
                    .collect();
                for kernel in crate::simd::kernels_for_tests("bconv32") {
                    let mut out = vec![0u32; n];
                    mac_row_u32(Some(kernel), &yr, &c, &m, &mut out).unwrap();
                    assert_eq!(out, want, "{} p {p} terms {terms} n {n}", kernel.name());
                }
            }
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let m = Modulus32::new(97).unwrap();
        let mut out = vec![0u32; 4];
        let y = [1u32; 4];
        assert!(mac_row_u32(None, &[&y], &[97], &m, &mut out).is_err());
        assert!(mac_row_u32(None, &[&y], &[1, 2], &m, &mut out).is_err());
        assert!(mac_row_u32(None, &[&y[..3]], &[1], &m, &mut out).is_err());
    }
}
