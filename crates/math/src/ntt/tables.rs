//! Precomputed twiddle factors for the radix-2 kernels.
//!
//! `w[k] = psi^{brev(k)}` (forward) or `psi^{-brev(k)}` (inverse), where `brev` reverses
//! `log2 N` bits: stage with `m` blocks uses `w[m + i]` for block `i` (Longa-Naehrig). Each
//! twiddle carries its Shoup quotient, for 64-bit words (`floor(w * 2^64 / q)`) or, for the IFMA
//! kernel below 2^50, for 52-bit words (`floor(w * 2^52 / q)`). Above 2^50 the IFMA kernel
//! reads the 64-bit tables and splits each quotient as it goes (`x86::shoup64_ifma`). Strides narrower than a vector read the
//! same tables: the `L/t` distinct twiddles of a vector are contiguous, and each kernel expands
//! them with `Lanes::load_twiddles` (a memory broadcast on AVX-512), so no per-butterfly
//! copies inflate the cache footprint.

use crate::modular::Modulus;

/// Twiddles of one direction: `w[k]` and its Shoup quotient `ws[k]`.
pub(crate) struct StageTwiddles {
    pub w: Vec<u64>,
    pub ws: Vec<u64>,
}

impl StageTwiddles {
    fn new(w: Vec<u64>, shoup: impl Fn(u64) -> u64) -> Self {
        let mut ws: Vec<u64> = w.iter().map(|&x| shoup(x)).collect();
        // One word of padding: `Lanes::load_twiddles_high` may read 4 bytes past the last.
        ws.push(0);
        Self { w, ws }
    }
}

/// Forward and inverse twiddles plus the inverse's final-stage scaling constants.
pub(crate) struct Tables {
    pub fwd: StageTwiddles,
    pub inv: StageTwiddles,
    pub n_inv: u64,
    pub n_inv_shoup: u64,
    pub last_w_n_inv: u64,
    pub last_w_n_inv_shoup: u64,
}

/// Bit-reversal of the low `bits` bits.
#[inline]
pub fn bit_reverse(x: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        x.reverse_bits() >> (usize::BITS - bits)
    }
}

impl Tables {
    /// Builds tables for `psi` with Shoup quotients of width `shoup_bits` (64 or 52).
    pub fn new(m: &Modulus, n: usize, psi: u64, shoup_bits: u32) -> Self {
        let q = m.value();
        let log_n = n.trailing_zeros();
        let psi_inv = m.inv(psi).expect("psi is a unit");
        let powers = |base: u64| -> Vec<u64> {
            let mut p = vec![1u64; n];
            for k in 1..n {
                p[k] = m.mul(p[k - 1], base);
            }
            (0..n).map(|k| p[bit_reverse(k, log_n)]).collect()
        };
        let shoup = |w: u64| (((w as u128) << shoup_bits) / q as u128) as u64;
        let fwd = StageTwiddles::new(powers(psi), shoup);
        let inv = StageTwiddles::new(powers(psi_inv), shoup);
        let n_inv = m.inv(n as u64 % q).expect("N is invertible mod q");
        let last_w_n_inv = m.mul(inv.w[1.min(n - 1)], n_inv);
        Self {
            fwd,
            inv,
            n_inv,
            n_inv_shoup: shoup(n_inv),
            last_w_n_inv,
            last_w_n_inv_shoup: shoup(last_w_n_inv),
        }
    }

    /// Tables for [`super::x86::Avx2F64`]'s double-precision Shoup product (`q < 2^50`):
    /// every constant `w` is stored as the bits of the double `w` (exact, `w < 2^50`), and
    /// its quotient as the bits of the double `fl(w / q)`.
    pub fn new_f64(m: &Modulus, n: usize, psi: u64) -> Self {
        let q = m.value() as f64;
        debug_assert!(m.value() < 1 << 50);
        let w = |x: u64| (x as f64).to_bits();
        let ws = |x: u64| (x as f64 / q).to_bits();
        let t = Self::new(m, n, psi, 64);
        let conv = |s: StageTwiddles| StageTwiddles {
            ws: s.w.iter().map(|&x| ws(x)).collect(),
            w: s.w.iter().map(|&x| w(x)).collect(),
        };
        Self {
            fwd: conv(t.fwd),
            inv: conv(t.inv),
            n_inv: w(t.n_inv),
            n_inv_shoup: ws(t.n_inv),
            last_w_n_inv: w(t.last_w_n_inv),
            last_w_n_inv_shoup: ws(t.last_w_n_inv),
        }
    }
}
