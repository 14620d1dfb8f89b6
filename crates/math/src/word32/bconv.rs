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
    /// 64-bit products of the odd 32-bit lanes of `a` and `b` (both varying per lane).
    unsafe fn mul_odd_pair(a: Self::V, b: Self::V) -> Self::V;
    /// 64-bit lane sum.
    unsafe fn add64(a: Self::V, b: Self::V) -> Self::V;
    /// From the even and odd lanes' 64-bit sums, the low and the high 32-bit words in lane
    /// order.
    unsafe fn low_high(even: Self::V, odd: Self::V) -> (Self::V, Self::V);
}

/// Reduction constants: `r = 2^32 mod p` and the Shoup quotients of `r` and of 1.
#[derive(Clone, Copy)]
pub(crate) struct Fold {
    r: u32,
    rs: u32,
    one_s: u32,
}

impl Fold {
    pub(crate) fn new(m: &Modulus32) -> Self {
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
pub(crate) unsafe fn fold<S: Lanes32>(lo: S::V, hi: S::V, f: &Fold, q: S::V) -> S::V {
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

/// Coefficients per block of the blocked conversion (4 KiB per 32-bit limb), as in the 64-bit
/// BConv: a block's inputs stay in cache while every output limb reads them.
const BLOCK: usize = 1024;

/// The 32-bit-word plan of a [`crate::BaseConverter`]: its constants narrowed to `u32`, every
/// modulus below 2^30. [`BaseConverter32::convert`] writes exactly the residues that
/// [`crate::BaseConverter::convert`] writes for the same input (both modes): step 1 and step 2
/// are exact modular arithmetic with canonical results, and the exact mode's overflow count
/// `v = round(sum_i y_i / q_i)` is computed from the same `y_i` with the same IEEE products and
/// sums in the same order.
#[derive(Clone, Debug)]
pub struct BaseConverter32 {
    from: Vec<Modulus32>,
    to: Vec<Modulus32>,
    /// `[qhat_i^-1]_(q_i)`.
    qhat_inv: Vec<u32>,
    /// `[qhat_i]_(p_j)`, one row per output limb.
    rows: Vec<Vec<u32>>,
    /// `[v Q]_(p_j)` for `v = 0..=l_in`, one table per output limb.
    tables: Vec<Vec<u32>>,
    q_inv_f64: Vec<f64>,
}

impl BaseConverter32 {
    /// Narrows `conv`; a modulus of 30 or more bits is refused (typed error naming it).
    pub fn new(conv: &crate::BaseConverter) -> Result<Self> {
        let narrow = |b: &crate::RnsBasis| -> Result<Vec<Modulus32>> {
            b.values().into_iter().map(Modulus32::new).collect()
        };
        let (from, to) = (narrow(conv.from_basis())?, narrow(conv.to_basis())?);
        let l_in = from.len() as u64;
        let tables = to
            .iter()
            .zip(conv.q_mod_p())
            .map(|(p, &q)| {
                (0..=l_in)
                    .map(|v| (v * q % p.value() as u64) as u32)
                    .collect()
            })
            .collect();
        Ok(Self {
            qhat_inv: conv
                .qhat_inv_mod_q()
                .into_iter()
                .map(|x| x as u32)
                .collect(),
            rows: conv
                .qhat_mod_p()
                .iter()
                .map(|r| r.iter().map(|&x| x as u32).collect())
                .collect(),
            tables,
            q_inv_f64: conv.q_inv_f64().to_vec(),
            from,
            to,
        })
    }

    /// Converts `input` (`l_in` limbs of `n` coefficients, limb-major, residues below their
    /// moduli) into `output` (`l_out` limbs) on `kernel` (`None`: the `TESSERA_SIMD` limit),
    /// coefficient blocks in parallel on the calling rayon pool.
    pub fn convert(
        &self,
        kernel: Option<Kernel>,
        input: &[u32],
        output: &mut [u32],
        n: usize,
        mode: crate::ConversionMode,
    ) -> Result<()> {
        use rayon::prelude::*;
        let kernel = word32(kernel.unwrap_or_else(crate::simd::active));
        if !kernel.cpu_supports() {
            return Err(MathError::Unsupported(format!(
                "kernel {} for 32-bit BConv on this CPU",
                kernel.name()
            )));
        }
        for (len, limbs, what) in [
            (input.len(), self.from.len(), "32-bit BConv input"),
            (output.len(), self.to.len(), "32-bit BConv output"),
        ] {
            if n == 0 || len != limbs * n {
                return Err(MathError::LengthMismatch {
                    what,
                    expected: limbs * n,
                    found: len,
                });
            }
        }
        let mut y = input.to_vec();
        y.par_chunks_mut(n)
            .zip(self.from.par_iter().zip(&self.qhat_inv))
            .try_for_each(|(yl, (m, &c))| super::pointwise::mul_scalar(Some(kernel), m, yl, c))?;
        let exact = mode == crate::ConversionMode::ExactCentered;
        let mut blocks: Vec<Vec<&mut [u32]>> = (0..n.div_ceil(BLOCK))
            .map(|_| Vec::with_capacity(self.to.len()))
            .collect();
        for limb in output.chunks_mut(n) {
            for (b, chunk) in limb.chunks_mut(BLOCK).enumerate() {
                blocks[b].push(chunk);
            }
        }
        blocks
            .into_par_iter()
            .enumerate()
            .try_for_each(|(b, outs)| -> Result<()> {
                let start = b * BLOCK;
                let len = outs.first().map_or(0, |o| o.len());
                let ys: Vec<&[u32]> = y.chunks(n).map(|l| &l[start..start + len]).collect();
                let mut v = [0u32; BLOCK];
                let v = &mut v[..len];
                if exact {
                    self.overflow_counts(kernel, &ys, v);
                }
                for (j, out) in outs.into_iter().enumerate() {
                    mac_row_u32(Some(kernel), &ys, &self.rows[j], &self.to[j], out)?;
                    if exact {
                        subtract_multiples(kernel, &self.tables[j], self.to[j].value(), v, out);
                    }
                }
                Ok(())
            })
    }

    /// `v_k = min(floor(sum_i y_ik (1 / q_i) + 1/2), l_in)`: the 64-bit BConv's count, from the
    /// same values in the same order (a `u32` converts to `f64` exactly, as its `u64` does),
    /// on `kernel` (every kernel writes the same counts: the same IEEE operations in the same
    /// order, no fused multiply-add).
    fn overflow_counts(&self, kernel: Kernel, ys: &[&[u32]], v: &mut [u32]) {
        let l = self.from.len() as u32;
        // SAFETY: `convert` checked that the CPU supports `kernel`.
        let done = unsafe {
            match kernel {
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512 => super::x86::overflow_counts_avx512(ys, &self.q_inv_f64, l, v),
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 => super::x86::overflow_counts_avx2(ys, &self.q_inv_f64, l, v),
                _ => 0,
            }
        };
        for (k, o) in v.iter_mut().enumerate().skip(done) {
            let mut a = 0f64;
            for (y, &qi) in ys.iter().zip(&self.q_inv_f64) {
                a += y[k] as f64 * qi;
            }
            *o = ((a + 0.5).floor() as u64).min(l as u64) as u32;
        }
    }
}

/// `out[k] = out[k] - table[v[k]] mod p` (both below `p`): the vector kernels hold the table
/// in one register (AVX-512: up to 16 entries, AVX2: up to 8), else the scalar loop.
fn subtract_multiples(kernel: Kernel, table: &[u32], p: u32, v: &[u32], out: &mut [u32]) {
    // SAFETY: the caller checked the CPU; the table sizes are checked here.
    let done = unsafe {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 if table.len() <= 16 => {
                super::x86::subtract_multiples_avx512(table, p, v, out)
            }
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 if table.len() <= 8 => {
                super::x86::subtract_multiples_avx2(table, p, v, out)
            }
            _ => 0,
        }
    };
    for (o, &u) in out.iter_mut().zip(v).skip(done) {
        let d = o.wrapping_sub(table[u as usize]);
        *o = d.min(d.wrapping_add(p));
    }
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

    /// The 32-bit plan writes the 64-bit converter's residues, both modes, every kernel.
    #[test]
    fn converter_equals_the_64_bit_one() {
        use crate::{BaseConverter, ConversionMode, RnsBasis};
        let n = 1 << 11; // two blocks
        let ps = super::super::generate_ntt_primes32(30, n, 20, &[]).unwrap();
        let ps: Vec<u64> = ps.into_iter().map(u64::from).collect();
        let mut rng = crate::testutil::XorShift::new(0xc0);
        for (from, to) in [
            (&ps[..3], &ps[3..9]),
            (&ps[..8], &ps[8..]),
            (&ps[2..3], &ps[..2]),
        ] {
            let conv =
                BaseConverter::new(&RnsBasis::new(from).unwrap(), &RnsBasis::new(to).unwrap())
                    .unwrap();
            let c32 = BaseConverter32::new(&conv).unwrap();
            let input: Vec<u64> = from
                .iter()
                .flat_map(|&q| {
                    (0..n)
                        .map(move |k| (k as u64 * 7919 + q) % q)
                        .collect::<Vec<_>>()
                })
                .zip(0..)
                .map(|(x, i): (u64, usize)| {
                    if i % 3 == 0 {
                        (rng.next_u64()) % from[i / n]
                    } else {
                        x
                    }
                })
                .collect();
            let in32: Vec<u32> = input.iter().map(|&x| x as u32).collect();
            for mode in [ConversionMode::Approximate, ConversionMode::ExactCentered] {
                let mut want = vec![0u64; to.len() * n];
                conv.convert(&input, &mut want, n, mode).unwrap();
                for kernel in crate::simd::kernels_for_tests("bconv32") {
                    let mut out = vec![0u32; to.len() * n];
                    c32.convert(Some(kernel), &in32, &mut out, n, mode).unwrap();
                    assert!(
                        out.iter().zip(&want).all(|(&o, &w)| o as u64 == w),
                        "{mode:?} {} {} -> {}",
                        kernel.name(),
                        from.len(),
                        to.len()
                    );
                }
            }
            let mut short = vec![0u32; n];
            assert!(c32
                .convert(None, &in32, &mut short, n, ConversionMode::Approximate)
                .is_err());
        }
        // 60-bit primes need 64-bit words.
        let big = crate::primes::generate_ntt_primes(60, n, 2, &[]).unwrap();
        let conv = BaseConverter::new(
            &RnsBasis::new(&big[..1]).unwrap(),
            &RnsBasis::new(&big[1..]).unwrap(),
        )
        .unwrap();
        assert!(matches!(
            BaseConverter32::new(&conv),
            Err(MathError::ModulusOutOfRange { .. })
        ));
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
