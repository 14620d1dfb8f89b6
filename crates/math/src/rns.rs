//! RNS bases: CRT decomposition and reconstruction, and fast base conversion (BConv).
//!
//! An integer `x mod Q`, `Q = q_0 ... q_(l-1)`, is held as its residues `x_i = x mod q_i`.
//! BConv to another basis `{p_j}` is the two-step procedure of the accelerator papers:
//! 1. per-limb scaling `y_i = [x_i * qhat_i^{-1}]_(q_i)`, with `qhat_i = Q / q_i`;
//! 2. an `(l_out x l_in) * (l_in x N)` multiply-accumulate `z_j = sum_i y_i * [qhat_i]_(p_j)`,
//!    with the constants' Shoup quotients precomputed, so every term is a lazy Shoup product
//!    in `[0, 2p)` and the sum stays in `[0, 2p)` (vectorised: `ntt::mac_shoup_row`, AVX-512 /
//!    AVX2 / scalar, bit-identical).
//!
//! The result is `x + u*Q (mod p_j)` for some `0 <= u < l_in` (the *fast*, approximate
//! conversion, enough for ModUp). The *exact* variant subtracts `v*Q` with
//! `v = round(sum_i y_i / q_i)`, computed in double precision, and yields the centered
//! representative of `x` in `(-Q/2, Q/2)`: what ModDown's division by `P` needs. The double
//! rounding can only go wrong when `x` is within about `l_in * 2^-52 * Q` of `+-Q/2`.

use crate::error::{MathError, Result};
use crate::modular::Modulus;
use crate::ntt::Kernel;
use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};
use rayon::prelude::*;

/// A set of distinct word-size primes with their CRT constants.
#[derive(Clone, Debug)]
pub struct RnsBasis {
    moduli: Vec<Modulus>,
    product: BigUint,
    /// `Q / q_i`.
    qhat: Vec<BigUint>,
    /// `(Q / q_i)^{-1} mod q_i` and its Shoup quotient.
    qhat_inv: Vec<(u64, u64)>,
}

impl RnsBasis {
    /// A basis of distinct primes (each 2 to 62 bits).
    pub fn new(primes: &[u64]) -> Result<Self> {
        if primes.is_empty() {
            return Err(MathError::OutOfRange {
                name: "number of RNS moduli",
                value: "0".into(),
                allowed: "at least 1".into(),
            });
        }
        let mut moduli = Vec::with_capacity(primes.len());
        for (i, &q) in primes.iter().enumerate() {
            if primes[..i].contains(&q) {
                return Err(MathError::OutOfRange {
                    name: "RNS modulus",
                    value: q.to_string(),
                    allowed: "pairwise distinct primes".into(),
                });
            }
            if !crate::primes::is_prime(q) {
                return Err(MathError::NotPrime { q });
            }
            moduli.push(Modulus::new(q)?);
        }
        let product: BigUint = primes.iter().map(|&q| BigUint::from(q)).product();
        let qhat: Vec<BigUint> = primes.iter().map(|&q| &product / q).collect();
        let qhat_inv = moduli
            .iter()
            .zip(&qhat)
            .map(|(m, qh)| {
                let r = (qh % m.value()).to_u64().expect("residue fits a word");
                let inv = m.inv(r).expect("distinct primes are coprime");
                (inv, m.shoup(inv))
            })
            .collect();
        Ok(Self {
            moduli,
            product,
            qhat,
            qhat_inv,
        })
    }

    /// Number of moduli.
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// Always false: a basis has at least one modulus.
    pub fn is_empty(&self) -> bool {
        self.moduli.is_empty()
    }

    /// The moduli.
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// The modulus values.
    pub fn values(&self) -> Vec<u64> {
        self.moduli.iter().map(|m| m.value()).collect()
    }

    /// `Q`, the product of the moduli.
    pub fn product(&self) -> &BigUint {
        &self.product
    }

    /// Residues of an integer (any sign): `x mod q_i` in `[0, q_i)`.
    pub fn decompose(&self, x: &BigInt) -> Vec<u64> {
        self.moduli
            .iter()
            .map(|m| {
                let r = x.mod_floor(&BigInt::from(m.value()));
                r.to_u64().expect("residue fits a word")
            })
            .collect()
    }

    /// CRT reconstruction in `[0, Q)`: `sum_i [x_i * qhat_i^{-1}]_(q_i) * qhat_i mod Q`.
    pub fn reconstruct(&self, residues: &[u64]) -> Result<BigUint> {
        if residues.len() != self.len() {
            return Err(MathError::LengthMismatch {
                what: "CRT residues",
                expected: self.len(),
                found: residues.len(),
            });
        }
        let mut acc = BigUint::zero();
        for ((m, &(inv, inv_s)), (qh, &x)) in self
            .moduli
            .iter()
            .zip(&self.qhat_inv)
            .zip(self.qhat.iter().zip(residues))
        {
            let y = m.mul_shoup(m.reduce(x), inv, inv_s);
            acc += qh * y;
        }
        Ok(acc % &self.product)
    }

    /// CRT reconstruction to the centered representative in `(-Q/2, Q/2]`.
    pub fn reconstruct_centered(&self, residues: &[u64]) -> Result<BigInt> {
        let x = self.reconstruct(residues)?;
        let half = &self.product >> 1u32;
        Ok(if x > half {
            BigInt::from_biguint(Sign::Plus, x)
                - BigInt::from_biguint(Sign::Plus, self.product.clone())
        } else {
            BigInt::from_biguint(Sign::Plus, x)
        })
    }
}

/// How BConv treats the overflow multiple `u*Q`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConversionMode {
    /// Fast conversion: the result may carry `+u*Q`, `0 <= u < l_in` (ModUp).
    Approximate,
    /// Exact centered conversion with floating-point rounding of `u` (ModDown).
    ExactCentered,
}

/// Precomputed fast base conversion from one basis to another.
#[derive(Clone, Debug)]
pub struct BaseConverter {
    from: RnsBasis,
    to: RnsBasis,
    /// `[qhat_i]_(p_j)`, row `j` holds the `l_in` entries for output limb `j`.
    qhat_mod_p: Vec<Vec<u64>>,
    /// `[Q]_(p_j)`.
    q_mod_p: Vec<u64>,
    /// `1 / q_i` in double precision.
    q_inv_f64: Vec<f64>,
    /// Shoup constants `floor(qhat_mod_p * 2^64 / p_j)` of `qhat_mod_p`.
    qhat_mod_p_shoup: Vec<Vec<u64>>,
    /// Which inputs are at or above 2^50: the double-precision rows take them as two terms,
    /// `y mod 2^31` and `y >> 31` (`pointwise::avx2_fma::terms`).
    wide_inputs: Vec<bool>,
    /// Per output limb below 2^50, the constants of its double-precision row, one per term:
    /// `[qhat_i]_(p_j)`, and for a wide input also `[qhat_i 2^31]_(p_j)`. Used where
    /// [`BaseConverter::split_pays`].
    term_consts: Vec<Option<Vec<f64>>>,
}

impl BaseConverter {
    /// Plans the conversion `from -> to` (an invalid `TESSERA_SIMD` is an error here, see
    /// [`crate::simd`]).
    pub fn new(from: &RnsBasis, to: &RnsBasis) -> Result<Self> {
        crate::simd::limit()?;
        let qhat_mod_p = to
            .moduli
            .iter()
            .map(|p| {
                from.qhat
                    .iter()
                    .map(|qh| (qh % p.value()).to_u64().expect("fits"))
                    .collect()
            })
            .collect();
        let q_mod_p = to
            .moduli
            .iter()
            .map(|p| (&from.product % p.value()).to_u64().expect("fits"))
            .collect();
        let qhat_mod_p_shoup = to
            .moduli
            .iter()
            .zip(&qhat_mod_p)
            .map(|(p, row): (&Modulus, &Vec<u64>)| row.iter().map(|&c| p.shoup(c)).collect())
            .collect();
        let wide_inputs: Vec<bool> = from.moduli.iter().map(|m| m.value() >= 1 << 50).collect();
        let term_consts = to
            .moduli
            .iter()
            .zip(&qhat_mod_p)
            .map(|(p, row): (&Modulus, &Vec<u64>)| {
                (p.value() < 1 << 50).then(|| {
                    let shift = p.reduce(1 << 31);
                    row.iter()
                        .zip(&wide_inputs)
                        .flat_map(|(&c, &wide)| {
                            let hi = wide.then(|| p.mul(c, shift) as f64);
                            std::iter::once(c as f64).chain(hi)
                        })
                        .collect()
                })
            })
            .collect();
        Ok(Self {
            from: from.clone(),
            to: to.clone(),
            qhat_mod_p,
            q_mod_p,
            q_inv_f64: from.moduli.iter().map(|m| 1.0 / m.value() as f64).collect(),
            qhat_mod_p_shoup,
            wide_inputs,
            term_consts,
        })
    }

    /// Whether the AVX2 rows of output moduli below 2^50 run in double precision, each input
    /// at or above 2^50 split in two terms ([`crate::pointwise::avx2_fma::terms`]), rather than
    /// as integer columns. With `w` wide inputs among `t`, the double rows take `t + w` terms
    /// and the integer rows `t`: splitting pays where `t + w < 2 r t`, `r` being the ratio of
    /// the two forms' times on six wide inputs measured on this CPU ([`wide_split_ratio`]),
    /// and always where at most a quarter of the inputs are wide (ModUp's first digit at
    /// `ark`: one 60-bit `q_0` among six, 7 double terms against 6 integer ones).
    ///
    /// Why measured: ModDown's six 61-bit inputs as 12 double terms measured 1.4x slower than
    /// integer columns on Zen 4 but 1.2x faster on Zen 5 (`bconv_shapes`, session 49). Both
    /// forms give the same bits.
    fn split_pays(&self) -> bool {
        let t = self.wide_inputs.len();
        let w = self.wide_inputs.iter().filter(|&&w| w).count();
        4 * w <= t || ((t + w) as f64) < 2.0 * wide_split_ratio() * t as f64
    }

    /// Source basis.
    pub fn from_basis(&self) -> &RnsBasis {
        &self.from
    }

    /// Target basis.
    pub fn to_basis(&self) -> &RnsBasis {
        &self.to
    }

    /// `[qhat_i^-1]_(q_i)` per source limb: the constants of step 1 (another word size's
    /// BConv, e.g. [`crate::word32`]'s, reuses them to give exactly this converter's output).
    pub fn qhat_inv_mod_q(&self) -> Vec<u64> {
        self.from.qhat_inv.iter().map(|&(inv, _)| inv).collect()
    }

    /// `[qhat_i]_(p_j)`: row `j` holds the `l_in` constants of output limb `j` (step 2).
    pub fn qhat_mod_p(&self) -> &[Vec<u64>] {
        &self.qhat_mod_p
    }

    /// `[Q]_(p_j)` per output limb (the exact correction subtracts multiples of it).
    pub fn q_mod_p(&self) -> &[u64] {
        &self.q_mod_p
    }

    /// `1 / q_i` in double precision per source limb: the exact mode rounds
    /// `sum_i y_i (1 / q_i)`, summed in limb order with no fused multiply-add.
    pub fn q_inv_f64(&self) -> &[f64] {
        &self.q_inv_f64
    }

    /// Step 1: `y_i = [x_i * qhat_i^{-1}]_(q_i)`, limb-parallel. `input` is `l_in` limbs of
    /// `n` coefficients each, limb-major.
    pub fn scale(&self, input: &[u64], n: usize) -> Result<Vec<u64>> {
        Ok(self
            .scale_with(crate::pointwise::best_kernel(), input, n)?
            .to_vec())
    }

    /// [`BaseConverter::scale`] on `kernel`, into a pooled buffer: every word is written, so
    /// it is neither zeroed nor freshly allocated (a page-faulting allocation per BConv
    /// otherwise; ModUp's digits are 3 MB at `ark`).
    fn scale_with(&self, kernel: Kernel, input: &[u64], n: usize) -> Result<crate::AlignedVec> {
        self.check(input.len(), self.from.len(), n, "BConv input")?;
        let kernel = crate::simd::word64_products(kernel);
        let mut y = crate::AlignedVec::for_overwrite(input.len());
        y.par_chunks_mut(n)
            .zip(input.par_chunks(n))
            .zip(self.from.moduli.par_iter().zip(&self.from.qhat_inv))
            .try_for_each(|((yl, xl), (m, &(inv, inv_s)))| {
                let mut done = 0;
                #[cfg(target_arch = "x86_64")]
                if kernel == Kernel::Avx2
                    && crate::pointwise::avx2_fma::fits(m)
                    && xl.len() >= yl.len()
                {
                    // SAFETY: AVX2 and FMA detected (`fits`); inputs below q < 2^50, inv < q.
                    done =
                        unsafe { crate::pointwise::avx2_fma::mul_const_to(xl, inv, yl, m.value()) };
                }
                // A one-term multiply-accumulate row is the vector Shoup product.
                let k = if done > 0 { Kernel::Scalar } else { kernel };
                crate::ntt::mac_shoup_row(
                    Some(k),
                    &[&xl[done..]],
                    &[inv],
                    &[inv_s],
                    m.value(),
                    &mut yl[done..],
                )
            })?;
        Ok(y)
    }

    fn check(&self, len: usize, limbs: usize, n: usize, what: &'static str) -> Result<()> {
        if n == 0 || len != limbs * n {
            return Err(MathError::LengthMismatch {
                what,
                expected: limbs * n,
                found: len,
            });
        }
        Ok(())
    }

    /// Converts `input` (`l_in` limbs of `n` coefficients, coefficient representation) into
    /// `output` (`l_out` limbs).
    pub fn convert(
        &self,
        input: &[u64],
        output: &mut [u64],
        n: usize,
        mode: ConversionMode,
    ) -> Result<()> {
        self.convert_with(crate::pointwise::best_kernel(), input, output, n, mode)
    }

    /// [`BaseConverter::convert`] on `kernel` (the scalar kernel is the reference the vector
    /// paths are tested against). An IFMA kernel runs the AVX-512F/DQ code.
    pub fn convert_with(
        &self,
        kernel: Kernel,
        input: &[u64],
        output: &mut [u64],
        n: usize,
        mode: ConversionMode,
    ) -> Result<()> {
        self.check(output.len(), self.to.len(), n, "BConv output")?;
        self.convert_rows_with(kernel, input, output.chunks_mut(n).collect(), n, mode)
    }

    /// [`BaseConverter::convert`] into one slice per output limb, wherever each lies: a
    /// caller assembling a larger polynomial (ModUp's extended digit, whose own limbs sit
    /// between the converted ones) has the conversion written in place instead of copying it
    /// there afterwards. Same values as [`BaseConverter::convert`], bit for bit.
    pub fn convert_rows(
        &self,
        input: &[u64],
        rows: Vec<&mut [u64]>,
        n: usize,
        mode: ConversionMode,
    ) -> Result<()> {
        self.convert_rows_with(crate::pointwise::best_kernel(), input, rows, n, mode)
    }

    /// [`BaseConverter::convert_rows`] on `kernel`.
    pub fn convert_rows_with(
        &self,
        kernel: Kernel,
        input: &[u64],
        rows: Vec<&mut [u64]>,
        n: usize,
        mode: ConversionMode,
    ) -> Result<()> {
        self.convert_rows_split(kernel, input, rows, n, mode, None)
    }

    /// [`BaseConverter::convert_rows_with`], with the AVX2 rows' form forced (`split`: double
    /// terms where the output modulus allows them, or integer columns) instead of chosen by
    /// [`BaseConverter::split_pays`]; the tests run both.
    fn convert_rows_split(
        &self,
        kernel: Kernel,
        input: &[u64],
        rows: Vec<&mut [u64]>,
        n: usize,
        mode: ConversionMode,
        split: Option<bool>,
    ) -> Result<()> {
        if rows.len() != self.to.len() || rows.iter().any(|r| r.len() != n) {
            return Err(MathError::LengthMismatch {
                what: "BConv output rows",
                expected: self.to.len() * n,
                found: rows.iter().map(|r| r.len()).sum(),
            });
        }
        if !kernel.cpu_supports() {
            return Err(MathError::Unsupported(format!(
                "kernel {} for BConv on this CPU",
                kernel.name()
            )));
        }
        // The multiply-accumulate rows take IFMA's quotients where they pay; the rest runs
        // 64-bit-word code.
        let rows_kernel = crate::simd::word64_products(kernel);
        let kernel = crate::simd::word64(kernel);
        let y = self.scale_with(rows_kernel, input, n)?;
        let exact = mode == ConversionMode::ExactCentered;
        let l_in = self.from.len();
        // On AVX2 with FMA, the rows of output moduli below 2^50 run in double precision over
        // the block's inputs converted once (wide inputs split in two terms); the others, and
        // every row of the other kernels, sum integer products.
        let f64_rows = kernel == Kernel::Avx2
            && crate::simd::avx2_fma()
            && self.term_consts.iter().any(Option::is_some)
            && split.unwrap_or_else(|| self.split_pays());
        let n_terms = l_in + self.wide_inputs.iter().filter(|&&w| w).count();
        // Exact mode subtracts v_k * Q with v_k = round(sum_i y_ik / q_i) in [0, l_in]: one
        // table lookup per output coefficient instead of a modular product.
        // `[v * Q]_(p_j)` for every possible v, per output limb.
        let tables: Vec<Vec<u64>> = self
            .to
            .moduli
            .iter()
            .zip(&self.q_mod_p)
            .map(|(p, &q)| (0..=l_in as u64).map(|u| p.mul(u, q)).collect())
            .collect();
        // The vector correction holds the table in registers (at most 16 entries: ModDown
        // fused with rescaling converts from `P q_l`, eight limbs with seven special primes).
        let vector = if exact && l_in < MAX_VECTOR_TABLE {
            kernel
        } else {
            Kernel::Scalar
        };
        // Blocked over coefficients, all output limbs per block: the block's inputs (l_in x
        // 8 KiB) stay in the L1/L2 cache while every output limb reads them, and the exact
        // correction runs on each output block while it is still in cache.
        let mut blocks: Vec<Vec<&mut [u64]>> = (0..n.div_ceil(BCONV_BLOCK))
            .map(|_| Vec::with_capacity(self.to.len()))
            .collect();
        for limb in rows {
            for (b, chunk) in limb.chunks_mut(BCONV_BLOCK).enumerate() {
                blocks[b].push(chunk);
            }
        }
        blocks
            .into_par_iter()
            .enumerate()
            .try_for_each(|(b, outs)| -> Result<()> {
                let start = b * BCONV_BLOCK;
                let len = outs.first().map_or(0, |o| o.len());
                let ys: Vec<&[u64]> = y.chunks(n).map(|l| &l[start..start + len]).collect();
                let mut v = [0u64; BCONV_BLOCK];
                let v = &mut v[..len];
                if exact {
                    self.overflow_counts(&ys, v, vector);
                }
                let mut terms = Vec::new();
                if f64_rows {
                    terms = vec![0f64; n_terms * len];
                    // SAFETY: AVX2 detected (f64_rows); one row of `len` per term; inputs
                    // hold `len` words.
                    #[cfg(target_arch = "x86_64")]
                    unsafe {
                        crate::pointwise::avx2_fma::terms(&ys, &self.wide_inputs, len, &mut terms)
                    };
                }
                let xs: Vec<&[f64]> = terms.chunks(len.max(1)).collect();
                for (j, out) in outs.into_iter().enumerate() {
                    let (row, row_shoup) = (&self.qhat_mod_p[j], &self.qhat_mod_p_shoup[j]);
                    let pv = self.to.moduli[j].value();
                    let mut done = 0;
                    #[cfg(target_arch = "x86_64")]
                    if let (true, Some(c)) = (f64_rows, &self.term_consts[j]) {
                        // SAFETY: AVX2 and FMA detected; every term is an integer below 2^50
                        // (`terms`), every constant below `pv < 2^50`; rows hold `len` words.
                        done = unsafe { crate::pointwise::avx2_fma::mac_terms(&xs, c, out, pv) };
                    }
                    if done < out.len() {
                        let tail: Vec<&[u64]> = ys.iter().map(|y| &y[done..]).collect();
                        let k = if done > 0 {
                            Kernel::Scalar
                        } else {
                            rows_kernel
                        };
                        crate::ntt::mac_shoup_row(
                            Some(k),
                            &tail,
                            row,
                            row_shoup,
                            pv,
                            &mut out[done..],
                        )?;
                    }
                    if exact {
                        subtract_multiples(&tables[j], pv, v, out, vector);
                    }
                }
                Ok(())
            })?;
        Ok(())
    }

    /// `v_k = round(sum_i y_ik / q_i)` for one block of coefficients (`floor(s + 1/2)`, the
    /// same IEEE operations in the same order on both paths): the multiple of `Q` to subtract
    /// for the centered exact result.
    fn overflow_counts(&self, ys: &[&[u64]], v: &mut [u64], vector: Kernel) {
        let l = self.from.len() as u64;
        let mut done = 0;
        // SAFETY: `convert_with` checked that the CPU supports `vector`.
        #[cfg(target_arch = "x86_64")]
        match vector {
            Kernel::Avx512 => {
                done = unsafe { exact_avx512::overflow_counts(ys, &self.q_inv_f64, l, v) }
            }
            Kernel::Avx2 => {
                done = unsafe { exact_avx2::overflow_counts(ys, &self.q_inv_f64, l, v) }
            }
            _ => {}
        }
        let _ = vector;
        for (k, o) in v.iter_mut().enumerate().skip(done) {
            let mut a = 0f64;
            for (y, &qi) in ys.iter().zip(&self.q_inv_f64) {
                a += y[k] as f64 * qi;
            }
            // 0 <= a < l_in, so the rounded value indexes the (l_in + 1)-entry table.
            *o = ((a + 0.5).floor() as u64).min(l);
        }
    }
}

/// Coefficients per block of the blocked BConv (8 KiB per limb).
const BCONV_BLOCK: usize = 1024;

/// Most entries (`l_in + 1`) of the exact correction's table that the vector kernels hold in
/// registers (two AVX-512 registers, four AVX2 ones); a larger table takes the scalar loop.
const MAX_VECTOR_TABLE: usize = 16;

/// The exact correction's table zero-padded to [`MAX_VECTOR_TABLE`] entries, for loading into
/// whole registers (the caller checked its length).
#[cfg(target_arch = "x86_64")]
fn padded_table(table: &[u64]) -> [u64; MAX_VECTOR_TABLE] {
    let mut padded = [0u64; MAX_VECTOR_TABLE];
    padded[..table.len()].copy_from_slice(table);
    padded
}

/// How much longer an AVX2 BConv row of six inputs of 61 bits to a 50-bit modulus takes as
/// integer columns (`pointwise::avx2::mac_const`) than as twelve double-precision terms
/// (`pointwise::avx2_fma::mac_terms`, the terms converted beforehand as they are once for all
/// of a block's rows) on this CPU: the better of five alternated runs of each on 2048
/// L1-resident words, measured once per process (well under a
/// millisecond), or 0 where the double form cannot run (no AVX2 and FMA, or
/// `TESSERA_AVX2_FMA=0`). [`BaseConverter::split_pays`] reads it.
pub fn wide_split_ratio() -> f64 {
    static RATIO: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *RATIO.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        if crate::simd::avx2_fma() && Kernel::Avx2.cpu_supports() {
            return measure_wide_split();
        }
        0.0
    })
}

#[cfg(target_arch = "x86_64")]
fn measure_wide_split() -> f64 {
    use std::time::Instant;
    const LEN: usize = 2048;
    const P61: u64 = 2_305_843_009_213_554_689; // a 61-bit prime (any odd modulus would do)
    const P50: u64 = 1_125_899_906_826_241; // a 50-bit prime
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let ys: Vec<Vec<u64>> = (0..6)
        .map(|_| (0..LEN).map(|_| next() % P61).collect())
        .collect();
    let ys: Vec<&[u64]> = ys.iter().map(|y| &y[..]).collect();
    let p = Modulus::new(P50).expect("a valid modulus");
    let c: Vec<u64> = (0..6).map(|_| next() % P50).collect();
    let cs: Vec<u64> = c.iter().map(|&c| p.shoup(c)).collect();
    let shift = p.reduce(1 << 31);
    let cf: Vec<f64> = c
        .iter()
        .flat_map(|&c| [c as f64, p.mul(c, shift) as f64])
        .collect();
    let wide = [true; 6];
    let mut terms = vec![0f64; 12 * LEN];
    let mut out = vec![0u64; LEN];
    // The terms are converted once per block for every output row (24 rows in ModDown at
    // `ark`), so only the rows are timed.
    // SAFETY: AVX2 detected (`wide_split_ratio`); 12 rows of LEN doubles, inputs LEN long.
    unsafe { crate::pointwise::avx2_fma::terms(&ys, &wide, LEN, &mut terms) };
    let xs: Vec<&[f64]> = terms.chunks(LEN).collect();
    let mut best = [f64::INFINITY; 2];
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..4 {
            crate::ntt::mac_shoup_row(Some(Kernel::Avx2), &ys, &c, &cs, P50, &mut out)
                .expect("valid operands");
            std::hint::black_box(&mut out);
        }
        best[0] = best[0].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for _ in 0..4 {
            // SAFETY: AVX2 and FMA detected (`wide_split_ratio`); every term below 2^50 and
            // every constant below P50 < 2^50; rows LEN long.
            unsafe { crate::pointwise::avx2_fma::mac_terms(&xs, &cf, &mut out, P50) };
            std::hint::black_box(&mut out);
        }
        best[1] = best[1].min(t.elapsed().as_secs_f64());
    }
    if best[1] > 0.0 {
        best[0] / best[1]
    } else {
        1.0
    }
}

/// `out[k] = out[k] - table[v[k]] mod p` (both below p). A vector `kernel` needs a table of at
/// most [`MAX_VECTOR_TABLE`] entries and a CPU that supports it.
fn subtract_multiples(table: &[u64], p: u64, v: &[u64], out: &mut [u64], vector: Kernel) {
    let mut done = 0;
    // SAFETY: the caller checked the CPU and the table size.
    #[cfg(target_arch = "x86_64")]
    match vector {
        Kernel::Avx512 => done = unsafe { exact_avx512::subtract_multiples(table, p, v, out) },
        Kernel::Avx2 => done = unsafe { exact_avx2::subtract_multiples(table, p, v, out) },
        _ => {}
    }
    let _ = vector;
    for (o, &u) in out.iter_mut().zip(v).skip(done) {
        let t = table[u as usize];
        // Branch-free `o - t mod p`.
        *o = o
            .wrapping_sub(t)
            .wrapping_add(p & 0u64.wrapping_sub((*o < t) as u64));
    }
}

#[cfg(target_arch = "x86_64")]
mod exact_avx512 {
    use core::arch::x86_64::*;

    /// The vector part of `BaseConverter::overflow_counts`; returns how many it did.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn overflow_counts(
        ys: &[&[u64]],
        q_inv: &[f64],
        l: u64,
        v: &mut [u64],
    ) -> usize {
        let full = v.len() - v.len() % 8;
        let (half, lv) = (_mm512_set1_pd(0.5), _mm512_set1_epi64(l as i64));
        let mut k = 0;
        while k < full {
            let mut a = _mm512_setzero_pd();
            for (y, &qi) in ys.iter().zip(q_inv) {
                let yv =
                    _mm512_cvtepu64_pd(_mm512_loadu_si512(y.as_ptr().add(k) as *const __m512i));
                a = _mm512_add_pd(a, _mm512_mul_pd(yv, _mm512_set1_pd(qi)));
            }
            let r = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(
                _mm512_add_pd(a, half),
            );
            let r = _mm512_min_epu64(_mm512_cvttpd_epu64(r), lv);
            _mm512_storeu_si512(v.as_mut_ptr().add(k) as *mut __m512i, r);
            k += 8;
        }
        full
    }

    /// The vector part of `subtract_multiples`: the table (at most 16 entries) sits in two
    /// registers and each lookup is one two-source lane permutation (entry `i` is lane
    /// `i mod 8` of the first register for `i < 8`, of the second above).
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn subtract_multiples(
        table: &[u64],
        p: u64,
        v: &[u64],
        out: &mut [u64],
    ) -> usize {
        let padded = super::padded_table(table);
        let t_lo = _mm512_loadu_si512(padded.as_ptr() as *const __m512i);
        let t_hi = _mm512_loadu_si512(padded.as_ptr().add(8) as *const __m512i);
        let pv = _mm512_set1_epi64(p as i64);
        let full = out.len() - out.len() % 8;
        let mut k = 0;
        while k < full {
            let idx = _mm512_loadu_si512(v.as_ptr().add(k) as *const __m512i);
            let o = _mm512_loadu_si512(out.as_ptr().add(k) as *const __m512i);
            let d = _mm512_sub_epi64(o, _mm512_permutex2var_epi64(t_lo, idx, t_hi));
            let r = _mm512_min_epu64(d, _mm512_add_epi64(d, pv));
            _mm512_storeu_si512(out.as_mut_ptr().add(k) as *mut __m512i, r);
            k += 8;
        }
        full
    }
}

#[cfg(target_arch = "x86_64")]
mod exact_avx2 {
    use core::arch::x86_64::*;

    /// `x as f64` for any 64-bit `x`, rounded to nearest even like the scalar cast: both
    /// 32-bit halves are placed exactly into the mantissas of `2^84 + hi * 2^32` and
    /// `2^52 + lo`, and the one rounding is that of the final sum (AVX2 has no 64-bit
    /// integer conversion).
    #[inline(always)]
    unsafe fn u64_to_f64(x: __m256i) -> __m256d {
        const TWO_84: f64 = 19342813113834066795298816.0;
        const TWO_52: f64 = 4503599627370496.0;
        let hi = _mm256_or_si256(
            _mm256_srli_epi64::<32>(x),
            _mm256_castpd_si256(_mm256_set1_pd(TWO_84)),
        );
        let lo = _mm256_blend_epi32::<0b1010_1010>(x, _mm256_castpd_si256(_mm256_set1_pd(TWO_52)));
        let hi = _mm256_sub_pd(_mm256_castsi256_pd(hi), _mm256_set1_pd(TWO_84 + TWO_52));
        _mm256_add_pd(hi, _mm256_castsi256_pd(lo))
    }

    /// The vector part of `BaseConverter::overflow_counts`: the same IEEE products and sums
    /// in the same order as the scalar loop (no fused multiply-add). Returns how many it did.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn overflow_counts(
        ys: &[&[u64]],
        q_inv: &[f64],
        l: u64,
        v: &mut [u64],
    ) -> usize {
        let full = v.len() - v.len() % 4;
        let (half, lv) = (_mm256_set1_pd(0.5), _mm_set1_epi32(l as i32));
        let mut k = 0;
        while k < full {
            let mut a = _mm256_setzero_pd();
            for (y, &qi) in ys.iter().zip(q_inv) {
                let yv = u64_to_f64(_mm256_loadu_si256(y.as_ptr().add(k) as *const __m256i));
                a = _mm256_add_pd(a, _mm256_mul_pd(yv, _mm256_set1_pd(qi)));
            }
            let r = _mm256_round_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(
                _mm256_add_pd(a, half),
            );
            // 0 <= r <= l < 16 here (`super::MAX_VECTOR_TABLE`), so 32-bit integers hold it.
            let r = _mm_min_epi32(_mm256_cvttpd_epi32(r), lv);
            _mm256_storeu_si256(
                v.as_mut_ptr().add(k) as *mut __m256i,
                _mm256_cvtepi32_epi64(r),
            );
            k += 4;
        }
        full
    }

    /// The vector part of `subtract_multiples`: the table (at most 16 entries) sits in four
    /// registers of four entries; each lookup is a 32-bit lane permutation of each register
    /// in use and blends on the entry's register. A table of up to 8 entries reads two.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn subtract_multiples(
        table: &[u64],
        p: u64,
        v: &[u64],
        out: &mut [u64],
    ) -> usize {
        if table.len() <= 8 {
            subtract_multiples_from::<false>(table, p, v, out)
        } else {
            subtract_multiples_from::<true>(table, p, v, out)
        }
    }

    /// [`subtract_multiples`] with registers 2 and 3 of the table read when `WIDE`.
    #[inline(always)]
    unsafe fn subtract_multiples_from<const WIDE: bool>(
        table: &[u64],
        p: u64,
        v: &[u64],
        out: &mut [u64],
    ) -> usize {
        let padded = super::padded_table(table);
        let regs: [__m256i; 4] = core::array::from_fn(|r| {
            _mm256_loadu_si256(padded.as_ptr().add(4 * r) as *const __m256i)
        });
        let s = |x: i64| _mm256_set1_epi64x(x);
        let (pv, one, three, seven, eleven) = (s(p as i64), s(1), s(3), s(7), s(11));
        let full = out.len() - out.len() % 4;
        let mut k = 0;
        while k < full {
            let idx = _mm256_loadu_si256(v.as_ptr().add(k) as *const __m256i);
            // 32-bit lane indices (2i, 2i + 1) of entry i; the permutation reads them mod 8,
            // so it picks entry i mod 4 of a register.
            let d = _mm256_slli_epi64::<1>(idx);
            let pair = _mm256_or_si256(d, _mm256_slli_epi64::<32>(_mm256_add_epi64(d, one)));
            let pick = |r: __m256i| _mm256_permutevar8x32_epi32(r, pair);
            let mut t =
                _mm256_blendv_epi8(pick(regs[0]), pick(regs[1]), _mm256_cmpgt_epi64(idx, three));
            if WIDE {
                let upper = _mm256_blendv_epi8(
                    pick(regs[2]),
                    pick(regs[3]),
                    _mm256_cmpgt_epi64(idx, eleven),
                );
                t = _mm256_blendv_epi8(t, upper, _mm256_cmpgt_epi64(idx, seven));
            }
            let o = _mm256_loadu_si256(out.as_ptr().add(k) as *const __m256i);
            // o, t < p < 2^62: the difference is negative exactly when it needs + p.
            let d = _mm256_castsi256_pd(_mm256_sub_epi64(o, t));
            let r = _mm256_blendv_pd(
                d,
                _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(d), pv)),
                d,
            );
            _mm256_storeu_si256(
                out.as_mut_ptr().add(k) as *mut __m256i,
                _mm256_castpd_si256(r),
            );
            k += 4;
        }
        full
    }
}

/// `floor(x / d + 1/2)` for integers and `d > 0` (the exact reference for rescaling).
pub fn div_round(x: &BigInt, d: &BigInt) -> BigInt {
    let two = BigInt::from(2);
    let (q, r) = x.div_mod_floor(d);
    if &r * &two >= *d {
        q + BigInt::one()
    } else {
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::generate_ntt_primes;
    use proptest::prelude::*;

    fn basis(bits: u32, count: usize, exclude: &[u64]) -> RnsBasis {
        RnsBasis::new(&generate_ntt_primes(bits, 64, count, exclude).unwrap()).unwrap()
    }

    /// A pseudo-random integer below `bound` from a xorshift stream (test inputs only).
    fn big_below(bound: &BigUint, seed: u64) -> BigUint {
        let mut r = crate::testutil::XorShift::new(seed);
        let words = bound.bits() as usize / 64 + 2;
        let mut x = BigUint::zero();
        for _ in 0..words {
            x = (x << 64u32) + BigUint::from(r.next_u64());
        }
        x % bound
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn crt_round_trip(count in 1usize..12, bits in prop::sample::select(vec![30u32, 45, 60, 62]), seed in any::<u64>(), neg in any::<bool>()) {
            let b = basis(bits, count, &[]);
            let x = big_below(b.product(), seed);
            prop_assert_eq!(b.reconstruct(&b.decompose(&BigInt::from(x.clone()))).unwrap(), x.clone());
            // Centered round trip of a value in (-Q/2, Q/2].
            let half = b.product() >> 1u32;
            let xc = BigInt::from(x.clone() % &half) * if neg { -1 } else { 1 };
            prop_assert_eq!(b.reconstruct_centered(&b.decompose(&xc)).unwrap(), xc);
        }

        /// Every vector kernel's conversion, exact correction included, equals the scalar one
        /// (2051 coefficients: two full blocks and a tail, every lane of the vector loops;
        /// source bases whose tables fill two, four or more than four AVX2 registers (up to 8,
        /// up to 16, and more entries: the scalar correction); output moduli below 2^50, where
        /// the AVX2 kernel's rows run on the FMA units when every input modulus is too, and
        /// above).
        #[test]
        fn vector_bconv_equals_scalar(l_in in 1usize..18, bits in prop::sample::select(vec![28u32, 50, 61, 62]), out_bits in prop::sample::select(vec![36u32, 50, 60]), seed in any::<u64>(),
                                    n in prop::sample::select(vec![2051usize, 2060])) {
            // 2051 ends in a 3-word block (scalar tail only), 2060 in a 12-word one: a pair of
            // vectors summed side by side, then one alone.
            let from = basis(bits, l_in, &[]);
            let to = basis(out_bits, 5, &from.values());
            let conv = BaseConverter::new(&from, &to).unwrap();
            let input: Vec<u64> = from.values().iter().enumerate().flat_map(|(i, &q)| {
                crate::testutil::random_residues(n, q, seed ^ (i as u64) << 20)
            }).collect();
            for mode in [ConversionMode::ExactCentered, ConversionMode::Approximate] {
                let mut want = vec![0u64; 5 * n];
                conv.convert_with(Kernel::Scalar, &input, &mut want, n, mode).unwrap();
                for kernel in crate::simd::kernels_for_tests("BConv") {
                    let mut got = vec![0u64; 5 * n];
                    conv.convert_with(kernel, &input, &mut got, n, mode).unwrap();
                    prop_assert_eq!(&got, &want, "{:?} {:?}", kernel, mode);
                    // Rows scattered through a larger buffer, in reverse order of address.
                    let mut wide = vec![u64::MAX; 7 * n];
                    let mut rows: Vec<&mut [u64]> = wide.chunks_mut(n).collect();
                    rows.remove(3);
                    rows.remove(0);
                    rows.reverse();
                    conv.convert_rows_with(kernel, &input, rows, n, mode).unwrap();
                    for (j, at) in [6usize, 5, 4, 2, 1].into_iter().enumerate() {
                        prop_assert_eq!(&wide[at * n..(at + 1) * n], &want[j * n..(j + 1) * n]);
                    }
                    prop_assert!(wide[..n].iter().chain(&wide[3 * n..4 * n]).all(|&w| w == u64::MAX));
                }
            }
        }

        /// Both forms of the AVX2 rows (double terms with wide inputs split, integer columns)
        /// equal the scalar conversion whichever [`BaseConverter::split_pays`] would choose on
        /// this CPU: from wide (61/62-bit), mixed and narrow inputs to moduli below and above
        /// 2^50.
        #[test]
        fn avx2_split_and_columns_equal_scalar(l_in in 1usize..9, wide in 0usize..9,
                                               out_bits in prop::sample::select(vec![36u32, 50, 60]),
                                               seed in any::<u64>()) {
            if !Kernel::Avx2.cpu_supports() {
                crate::simd::kernels_for_tests("BConv split");
                return Ok(());
            }
            let wide = wide.min(l_in);
            let mut from_q = generate_ntt_primes(61, 64, wide, &[]).unwrap();
            from_q.extend(generate_ntt_primes(49, 64, l_in - wide, &from_q).unwrap());
            let from = RnsBasis::new(&from_q).unwrap();
            let to = basis(out_bits, 4, &from.values());
            let conv = BaseConverter::new(&from, &to).unwrap();
            let n = 2060;
            let input: Vec<u64> = from.values().iter().enumerate().flat_map(|(i, &q)| {
                crate::testutil::random_residues(n, q, seed ^ (i as u64) << 20)
            }).collect();
            for mode in [ConversionMode::ExactCentered, ConversionMode::Approximate] {
                let mut want = vec![0u64; 4 * n];
                conv.convert_with(Kernel::Scalar, &input, &mut want, n, mode).unwrap();
                for split in [true, false] {
                    let mut got = vec![0u64; 4 * n];
                    conv.convert_rows_split(Kernel::Avx2, &input, got.chunks_mut(n).collect(), n, mode, Some(split)).unwrap();
                    prop_assert_eq!(&got, &want, "split {} {:?}", split, mode);
                }
            }
        }

        #[test]
        fn bconv_matches_big_integer_reconstruction(l_in in 1usize..10, l_out in 1usize..6,
                                                    bits_in in prop::sample::select(vec![36u32, 50, 60, 62]),
                                                    bits_out in prop::sample::select(vec![36u32, 60, 62]),
                                                    seed in any::<u64>()) {
            let from = basis(bits_in, l_in, &[]);
            let to = basis(bits_out, l_out, &from.values());
            let conv = BaseConverter::new(&from, &to).unwrap();
            let n = 16;
            let xs: Vec<BigUint> = (0..n as u64).map(|k| big_below(from.product(), seed ^ (k * 0x9e37))).collect();
            let mut input = vec![0u64; l_in * n];
            for (k, x) in xs.iter().enumerate() {
                for (i, r) in from.decompose(&BigInt::from(x.clone())).into_iter().enumerate() {
                    input[i * n + k] = r;
                }
            }
            let mut approx = vec![0u64; l_out * n];
            conv.convert(&input, &mut approx, n, ConversionMode::Approximate).unwrap();
            let mut exact = vec![0u64; l_out * n];
            conv.convert(&input, &mut exact, n, ConversionMode::ExactCentered).unwrap();
            let q = BigInt::from(from.product().clone());
            for (k, x) in xs.iter().enumerate() {
                let xc = from.reconstruct_centered(&from.decompose(&BigInt::from(x.clone()))).unwrap();
                for (j, p) in to.moduli().iter().enumerate() {
                    let pv = BigInt::from(p.value());
                    // Approximate: x + u*Q for some 0 <= u < l_in.
                    let got = BigInt::from(approx[j * n + k]);
                    let ok = (0..l_in as i64).any(|u| (BigInt::from(x.clone()) + &q * u - &got).mod_floor(&pv).is_zero());
                    prop_assert!(ok, "approximate BConv is not x + uQ");
                    // Exact: the centered representative.
                    prop_assert_eq!(BigInt::from(exact[j * n + k]), xc.mod_floor(&pv));
                }
            }
        }
    }

    #[test]
    fn rejects_bad_bases() {
        assert!(RnsBasis::new(&[]).is_err());
        assert!(RnsBasis::new(&[97, 97]).is_err());
        assert!(matches!(
            RnsBasis::new(&[97, 91]),
            Err(MathError::NotPrime { q: 91 })
        ));
        let b = basis(30, 3, &[]);
        assert!(b.reconstruct(&[1, 2]).is_err());
        let c = BaseConverter::new(&b, &basis(40, 2, &[])).unwrap();
        let mut out = vec![0u64; 2 * 8];
        assert!(c
            .convert(&[0u64; 3 * 7], &mut out, 8, ConversionMode::Approximate)
            .is_err());
    }

    #[test]
    fn many_terms_trigger_intermediate_reduction() {
        // 40 limbs of 62-bit primes: far more terms than a 128-bit accumulator could hold,
        // and fewer coefficients than a vector (the kernels' scalar tail).
        let from = basis(62, 40, &[]);
        let to = basis(61, 2, &[]);
        let conv = BaseConverter::new(&from, &to).unwrap();
        let n = 4;
        let mut rng = Xs(99);
        let xs: Vec<BigUint> = (0..n).map(|_| rng.big(from.product())).collect();
        let mut input = vec![0u64; 40 * n];
        for (k, x) in xs.iter().enumerate() {
            for (i, r) in from
                .decompose(&BigInt::from(x.clone()))
                .into_iter()
                .enumerate()
            {
                input[i * n + k] = r;
            }
        }
        let mut exact = vec![0u64; 2 * n];
        conv.convert(&input, &mut exact, n, ConversionMode::ExactCentered)
            .unwrap();
        for (k, x) in xs.iter().enumerate() {
            let xc = from
                .reconstruct_centered(&from.decompose(&BigInt::from(x.clone())))
                .unwrap();
            for (j, p) in to.moduli().iter().enumerate() {
                assert_eq!(
                    BigInt::from(exact[j * n + k]),
                    xc.mod_floor(&BigInt::from(p.value()))
                );
            }
        }
    }

    struct Xs(u64);
    impl Xs {
        fn big(&mut self, bound: &BigUint) -> BigUint {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            big_below(bound, self.0)
        }
    }

    #[test]
    fn wide_split_ratio_is_measured_where_the_double_form_runs() {
        let r = wide_split_ratio();
        if crate::simd::avx2_fma() && Kernel::Avx2.cpu_supports() {
            assert!(r.is_finite() && r > 0.0, "{r}");
        } else {
            assert_eq!(r, 0.0);
        }
        // Few wide inputs split whatever the ratio; none wide always runs double rows.
        let from = basis(61, 1, &[]);
        let mut q = from.values();
        q.extend(basis(49, 5, &q).values());
        let to = basis(49, 2, &q);
        assert!(BaseConverter::new(&RnsBasis::new(&q).unwrap(), &to)
            .unwrap()
            .split_pays());
    }

    #[test]
    fn div_round_is_round_half_up() {
        let d = BigInt::from(10);
        for (x, r) in [(14, 1), (15, 2), (-15, -1), (-16, -2), (0, 0)] {
            assert_eq!(div_round(&BigInt::from(x), &d), BigInt::from(r));
        }
    }
}
