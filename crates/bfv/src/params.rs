//! BFV parameter sets on 128-bit words and their security labels.
//!
//! The ciphertext modulus `q` is a product of 109-bit NTT primes ("towers"), as CoFHEE runs
//! SEAL's `(n, log q) = (2^12, 109)` in one tower and `(2^13, 218)` in two (cofhee.md VI-B).
//! The plaintext modulus `t` is a prime `= 1 mod 2n`, so plaintexts batch `n` values mod `t`.
//!
//! Security follows the HomomorphicEncryption.org standard's table for ternary secrets at
//! 128-bit classical security (Albrecht et al., "Homomorphic Encryption Standard", 2018,
//! Table 1): `log q` at most 27, 54, 109, 218, 438, 881 bits for `n` = 2^10 .. 2^15. A set
//! above its bound (or at a degree the table does not cover) is labelled insecure; such sets
//! exist only for fast tests.

use crate::error::{invalid, Result};
use num_bigint::BigUint;
use num_traits::One;
use tessera_math::primes::is_prime;
use tessera_math::wide::generate_wide_ntt_primes;

/// `(n, largest log q)` for 128-bit classical security with a ternary secret (HE standard).
pub const HE_STANDARD_128: [(usize, u32); 6] = [
    (1024, 27),
    (2048, 54),
    (4096, 109),
    (8192, 218),
    (16384, 438),
    (32768, 881),
];

/// Bits of each ciphertext tower (CoFHEE's SEAL moduli, cofhee.md VI-B).
pub const TOWER_BITS: u32 = 109;
/// Bits of each auxiliary prime of the multiplication basis (below the 126-bit word limit).
pub const AUX_BITS: u32 = 124;
/// Standard deviation of the error distribution (the HE standard's 3.2).
pub const SIGMA: f64 = 3.2;
/// The default plaintext modulus: the Fermat prime 2^16 + 1, `= 1 mod 2n` up to n = 2^15.
pub const T_DEFAULT: u64 = 65537;

/// The named parameter sets.
pub const PRESETS: &[&str] = &["bfv-n12", "bfv-n13", "test-bfv"];

/// Whether a parameter set meets 128-bit security.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Security {
    /// Bits of `q`.
    pub log_q: u32,
    /// The HE standard's largest `log q` at this `n` (None: `n` outside its table).
    pub max_log_q: Option<u32>,
}

impl Security {
    /// `log q` within the standard's 128-bit bound.
    pub fn is_secure(&self) -> bool {
        self.max_log_q.is_some_and(|m| self.log_q <= m)
    }

    /// `"128-bit (log q = 109 <= 109)"` or `"INSECURE (...)"`, for reports.
    pub fn label(&self) -> String {
        match self.max_log_q {
            Some(m) if self.log_q <= m => format!("128-bit (log q = {} <= {m})", self.log_q),
            Some(m) => format!("INSECURE (log q = {} > {m}, the 128-bit bound)", self.log_q),
            None => format!(
                "INSECURE (n outside the HE standard's table; log q = {})",
                self.log_q
            ),
        }
    }
}

/// A BFV parameter set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BfvParams {
    /// Name (a preset's, or `custom`).
    pub name: String,
    /// Ring degree.
    pub n: usize,
    /// The towers of `q`.
    pub moduli: Vec<u128>,
    /// Plaintext modulus.
    pub t: u64,
    /// Bits per relinearisation digit (base `2^w` decomposition of the `s^2` part).
    pub relin_digit_bits: u32,
}

impl BfvParams {
    /// `n` (a power of two, 2^4 to 2^15), `towers` (1 to 4) primes of 109 bits, and `t` a
    /// prime `= 1 mod 2n` below 2^62 (and far below `q`).
    ///
    /// ```
    /// use tessera_bfv::BfvParams;
    /// let p = BfvParams::new(4096, 1, 65537).unwrap();
    /// assert!(p.security().is_secure());
    /// assert!(BfvParams::new(4096, 1, 65539).is_err()); // not = 1 mod 8192
    /// ```
    pub fn new(n: usize, towers: usize, t: u64) -> Result<Self> {
        if !n.is_power_of_two() || !(16..=1 << 15).contains(&n) {
            return Err(invalid("n", n, "a power of two in [2^4, 2^15]"));
        }
        if !(1..=4).contains(&towers) {
            return Err(invalid("towers", towers, "1 to 4 primes of 109 bits"));
        }
        let two_n = 2 * n as u64;
        if !(3..1u64 << 62).contains(&t) || !is_prime(t) || t % two_n != 1 {
            return Err(invalid(
                "t",
                t,
                format!("a prime = 1 mod 2n = {two_n} below 2^62 (batching), e.g. 65537"),
            ));
        }
        let moduli = generate_wide_ntt_primes(TOWER_BITS, n, towers)?;
        let log_q = (TOWER_BITS - 1) * towers as u32;
        if 64 - t.leading_zeros() + 20 > log_q {
            return Err(invalid(
                "t",
                t,
                format!(
                    "at most {} bits with {towers} tower(s): q/t must leave room for noise",
                    log_q - 20
                ),
            ));
        }
        // Digits of about log q / 4 bits: a few key-switching products, each adding
        // `2^w n B` noise, far below the tensor's `t n` growth.
        let relin_digit_bits = 28;
        Ok(Self {
            name: "custom".into(),
            n,
            moduli,
            t,
            relin_digit_bits,
        })
    }

    /// A named set: `bfv-n12` (n = 2^12, one 109-bit tower), `bfv-n13` (n = 2^13, two
    /// towers), both with t = 65537; `test-bfv` (n = 2^6, one tower, insecure: tests only).
    pub fn preset(name: &str) -> Result<Self> {
        let (n, towers) = match name {
            "bfv-n12" => (4096, 1),
            "bfv-n13" => (8192, 2),
            "test-bfv" => (64, 1),
            _ => return Err(invalid("params", name, PRESETS.join(", "))),
        };
        let mut p = Self::new(n, towers, T_DEFAULT)?;
        p.name = name.into();
        Ok(p)
    }

    /// The same set with another plaintext modulus (checked as in [`BfvParams::new`]).
    pub fn with_t(&self, t: u64) -> Result<Self> {
        let mut p = Self::new(self.n, self.moduli.len(), t)?;
        p.name = format!("{}-t{}", self.name, 64 - t.leading_zeros());
        Ok(p)
    }

    /// `q` as a big integer.
    pub fn q(&self) -> BigUint {
        self.moduli
            .iter()
            .fold(BigUint::one(), |acc, &m| acc * BigUint::from(m))
    }

    /// Bits of `q`.
    pub fn log_q(&self) -> u32 {
        self.q().bits() as u32
    }

    /// The security label of this set.
    pub fn security(&self) -> Security {
        Security {
            log_q: self.log_q(),
            max_log_q: HE_STANDARD_128
                .iter()
                .find(|(n, _)| *n == self.n)
                .map(|(_, b)| *b),
        }
    }

    /// Auxiliary primes for the exact tensor product: the basis `q * P` must exceed
    /// `n q^2` (the largest magnitude of a tensor coefficient is `2 n (q/2)^2`, centred).
    pub fn aux_moduli(&self) -> Result<Vec<u128>> {
        let need = self.n.trailing_zeros() + 2 * self.log_q() + 1;
        // Each 109-bit tower is at least 2^108, each aux prime at least 2^(AUX_BITS - 1).
        let have = (TOWER_BITS - 1) * self.moduli.len() as u32;
        let k = (need.saturating_sub(have)).div_ceil(AUX_BITS - 1) as usize;
        Ok(generate_wide_ntt_primes(AUX_BITS, self.n, k.max(1))?)
    }

    /// Number of relinearisation digits: `ceil(log q / w)`.
    pub fn relin_digits(&self) -> usize {
        self.log_q().div_ceil(self.relin_digit_bits) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_and_labels() {
        let a = BfvParams::preset("bfv-n12").unwrap();
        assert_eq!((a.n, a.moduli.len(), a.log_q()), (4096, 1, 109));
        assert!(a.security().is_secure(), "{}", a.security().label());
        let b = BfvParams::preset("bfv-n13").unwrap();
        assert_eq!((b.n, b.moduli.len(), b.log_q()), (8192, 2, 218));
        assert!(b.security().is_secure(), "{}", b.security().label());
        let c = BfvParams::preset("test-bfv").unwrap();
        assert!(!c.security().is_secure());
        assert!(c.security().label().starts_with("INSECURE"));
        // Two towers at n = 2^12 exceed the bound.
        assert!(!BfvParams::new(4096, 2, 65537)
            .unwrap()
            .security()
            .is_secure());
        assert!(BfvParams::preset("bfv").is_err());
        assert!(BfvParams::new(100, 1, 65537).is_err());
        assert!(BfvParams::new(64, 0, 65537).is_err());
        assert!(BfvParams::new(64, 1, 65536).is_err());
    }

    #[test]
    fn aux_basis_covers_the_tensor() {
        for name in ["bfv-n12", "bfv-n13"] {
            let p = BfvParams::preset(name).unwrap();
            let aux = p.aux_moduli().unwrap();
            let m = aux.iter().fold(p.q(), |acc, &x| acc * BigUint::from(x));
            let bound = BigUint::from(p.n) * p.q() * p.q();
            assert!(m > bound, "{name}");
            assert!(aux.iter().all(|a| !p.moduli.contains(a)));
        }
    }
}
