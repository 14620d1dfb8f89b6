//! Key generation: a ternary secret, a public key and a relinearisation key, all drawn from
//! the math crate's BLAKE3 XOF ([`tessera_math::sampling::Xof`]) bound to one 32-byte seed
//! with a domain label per key ("tessera bfv secret", "tessera bfv public",
//! "tessera bfv relin"). Seed it from the operating system's CSPRNG
//! ([`KeyGenerator::from_os`]) for real use, or with a fixed seed for reproducible tests.
//!
//! Keys are kept in the NTT domain of each tower: every use of them is a pointwise product.

use crate::context::{signed_mod, Bfv};
use crate::error::Result;
use tessera_math::sampling::{ternary, Seed, Xof};

/// Residues per tower (NTT domain).
type Towers = Vec<Vec<u128>>;

/// The secret `s` (ternary) and its NTT in each tower.
#[derive(Clone, Debug)]
pub struct SecretKey {
    pub(crate) s: Vec<i64>,
    pub(crate) s_ntt: Vec<Vec<u128>>,
}

impl SecretKey {
    /// The secret's coefficients in {-1, 0, 1} (for references and tests).
    pub fn coeffs(&self) -> &[i64] {
        &self.s
    }
}

/// `(p0, p1) = (-(a s + e), a)`, NTT domain per tower.
#[derive(Clone, Debug)]
pub struct PublicKey {
    pub(crate) p0: Vec<Vec<u128>>,
    pub(crate) p1: Vec<Vec<u128>>,
}

/// Per digit `i`: `(-(a_i s + e_i) + 2^(w i) s^2, a_i)`, NTT domain, `[digit][tower]`.
#[derive(Clone, Debug)]
pub struct RelinKey {
    pub(crate) k0: Vec<Vec<Vec<u128>>>,
    pub(crate) k1: Vec<Vec<Vec<u128>>>,
}

/// Draws keys from one seed.
pub struct KeyGenerator<'a> {
    bfv: &'a Bfv,
    seed: Seed,
}

impl<'a> KeyGenerator<'a> {
    /// Keys expanded from `seed` (reproducible: tests, examples).
    pub fn new(bfv: &'a Bfv, seed: Seed) -> Self {
        Self { bfv, seed }
    }

    /// Keys from a seed drawn from the operating system's CSPRNG.
    pub fn from_os(bfv: &'a Bfv) -> Result<Self> {
        Ok(Self::new(bfv, Seed::random()?))
    }

    fn xof(&self, domain: &str) -> Xof {
        Xof::new(&self.seed, domain.as_bytes())
    }

    /// The secret key.
    pub fn secret_key(&self) -> Result<SecretKey> {
        let s = ternary(&mut self.xof("tessera bfv secret"), self.bfv.params.n, None)?;
        let s_ntt = self.ntt_signed(&s)?;
        Ok(SecretKey { s, s_ntt })
    }

    fn ntt_signed(&self, v: &[i64]) -> Result<Vec<Vec<u128>>> {
        (0..self.bfv.towers())
            .map(|k| {
                let q = self.bfv.params.moduli[k];
                let mut a: Vec<u128> = v.iter().map(|&c| signed_mod(c as i128, q)).collect();
                self.bfv.ntt(k, &mut a)?;
                Ok(a)
            })
            .collect()
    }

    /// `(-(a s + e) + m, a)` per tower for a uniform `a` and Gaussian `e` from `xof`, where
    /// `m` is given per tower in the NTT domain.
    fn rlwe(
        &self,
        sk: &SecretKey,
        xof: &mut Xof,
        m: Option<&[Vec<u128>]>,
    ) -> Result<(Towers, Towers)> {
        let bfv = self.bfv;
        let e = self.ntt_signed(&bfv.gauss.sample_vec(xof, bfv.params.n))?;
        let (mut b0, mut b1) = (Vec::new(), Vec::new());
        for k in 0..bfv.towers() {
            let a = bfv.uniform(xof, k);
            let md = bfv.basis[k].modulus();
            let mut b: Vec<u128> = a
                .iter()
                .zip(&sk.s_ntt[k])
                .zip(&e[k])
                .map(|((x, s), e)| md.sub(0, md.add(md.mul(*x, *s), *e)))
                .collect();
            if let Some(m) = m {
                bfv.add_into(k, &mut b, &m[k]);
            }
            b0.push(b);
            b1.push(a);
        }
        Ok((b0, b1))
    }

    /// The public key of `sk`.
    pub fn public_key(&self, sk: &SecretKey) -> Result<PublicKey> {
        let (p0, p1) = self.rlwe(sk, &mut self.xof("tessera bfv public"), None)?;
        Ok(PublicKey { p0, p1 })
    }

    /// The relinearisation key of `sk`: base-`2^w` digits of `s^2`.
    pub fn relin_key(&self, sk: &SecretKey) -> Result<RelinKey> {
        let bfv = self.bfv;
        let w = bfv.params.relin_digit_bits;
        let s2: Vec<Vec<u128>> = (0..bfv.towers())
            .map(|k| bfv.hadamard(k, &sk.s_ntt[k], &sk.s_ntt[k]))
            .collect();
        let mut xof = self.xof("tessera bfv relin");
        let (mut k0, mut k1) = (Vec::new(), Vec::new());
        for i in 0..bfv.params.relin_digits() {
            let m: Vec<Vec<u128>> = (0..bfv.towers())
                .map(|k| {
                    let md = bfv.basis[k].modulus();
                    let f = md.pow(2, (w as usize * i) as u128);
                    s2[k].iter().map(|x| md.mul(*x, f)).collect()
                })
                .collect();
            let (a, b) = self.rlwe(sk, &mut xof, Some(&m))?;
            k0.push(a);
            k1.push(b);
        }
        Ok(RelinKey { k0, k1 })
    }
}
