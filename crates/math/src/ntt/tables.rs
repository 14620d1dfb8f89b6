//! Precomputed twiddle factors for the radix-2 kernels.
//!
//! `w[k] = psi^{brev(k)}` (forward) or `psi^{-brev(k)}` (inverse), where `brev` reverses
//! `log2 N` bits: stage with `m` blocks uses `w[m + i]` for block `i` (Longa-Naehrig). Each
//! twiddle carries its Shoup quotient, for 64-bit words (`floor(w * 2^64 / q)`) or, for the IFMA
//! kernel, for 52-bit words (`floor(w * 2^52 / q)`). Strides 2 and 4, which are narrower than a
//! vector, get per-butterfly ("expanded") copies so every kernel loads twiddles contiguously.

use crate::modular::Modulus;

/// Twiddles of one direction.
pub(crate) struct StageTwiddles {
    pub w: Vec<u64>,
    pub ws: Vec<u64>,
    exp2: (Vec<u64>, Vec<u64>),
    exp4: (Vec<u64>, Vec<u64>),
}

impl StageTwiddles {
    fn new(w: Vec<u64>, shoup: impl Fn(u64) -> u64) -> Self {
        let n = w.len();
        let ws: Vec<u64> = w.iter().map(|&x| shoup(x)).collect();
        let expand = |t: usize| -> (Vec<u64>, Vec<u64>) {
            if n < 2 * t {
                return (Vec::new(), Vec::new());
            }
            let m = n / (2 * t);
            (0..n / 2).map(|b| (w[m + b / t], ws[m + b / t])).unzip()
        };
        let (exp2, exp4) = (expand(2), expand(4));
        Self { w, ws, exp2, exp4 }
    }

    /// Per-butterfly twiddles for a stride narrower than a vector.
    #[inline(always)]
    pub fn expanded(&self, t: usize) -> (&[u64], &[u64]) {
        match t {
            1 => {
                let h = self.w.len() / 2;
                (&self.w[h..], &self.ws[h..])
            }
            2 => (&self.exp2.0, &self.exp2.1),
            4 => (&self.exp4.0, &self.exp4.1),
            _ => unreachable!("expanded twiddles exist only for strides 1, 2 and 4"),
        }
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
}
