//! Encryption, decryption and the measured noise.
//!
//! `ct = (p0 u + e1 + Delta m, p1 u + e2)` with `Delta = floor(q/t)`, `u` ternary and `e1, e2`
//! Gaussian. Then `c0 + c1 s = Delta m + v` with `v = e1 + e2 s - e u`, and decryption
//! `round(t (c0 + c1 s) / q) mod t` is correct while the invariant noise
//! `[t (c0 + c1 s)]_q = t v - (q mod t) m` stays below `q/2` in every coefficient.
//! [`Decryptor::noise`] measures it exactly; [`fresh_noise_bound`] is its worst case for a
//! fresh ciphertext.

use crate::context::{signed_mod, Bfv, Ciphertext, Plaintext, Poly};
use crate::crt::round_scale;
use crate::error::{BfvError, Result};
use crate::keys::{PublicKey, SecretKey};
use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;
use tessera_math::sampling::{ternary, Seed, Xof};

/// Encrypts under a public key with randomness from a seeded XOF.
pub struct Encryptor<'a> {
    bfv: &'a Bfv,
    pk: &'a PublicKey,
    xof: Xof,
}

impl<'a> Encryptor<'a> {
    /// Randomness expanded from `seed` (domain "tessera bfv encrypt").
    pub fn new(bfv: &'a Bfv, pk: &'a PublicKey, seed: Seed) -> Self {
        Self {
            bfv,
            pk,
            xof: Xof::new(&seed, b"tessera bfv encrypt"),
        }
    }

    /// Randomness from the operating system's CSPRNG.
    pub fn from_os(bfv: &'a Bfv, pk: &'a PublicKey) -> Result<Self> {
        Ok(Self::new(bfv, pk, Seed::random()?))
    }

    /// Encrypts `pt`.
    pub fn encrypt(&mut self, pt: &Plaintext) -> Result<Ciphertext> {
        let bfv = self.bfv;
        let n = bfv.params.n;
        bfv.check_len("plaintext coefficients", pt.coeffs.len())?;
        let u = ternary(&mut self.xof, n, None)?;
        let e1 = bfv.gauss.sample_vec(&mut self.xof, n);
        let e2 = bfv.gauss.sample_vec(&mut self.xof, n);
        let (mut c0, mut c1) = (Vec::new(), Vec::new());
        for k in 0..bfv.towers() {
            let q = bfv.params.moduli[k];
            let md = bfv.basis[k].modulus();
            let mut un: Vec<u128> = u.iter().map(|&c| signed_mod(c as i128, q)).collect();
            bfv.ntt(k, &mut un)?;
            let mut a = bfv.hadamard(k, &self.pk.p0[k], &un);
            let mut b = bfv.hadamard(k, &self.pk.p1[k], &un);
            bfv.intt(k, &mut a)?;
            bfv.intt(k, &mut b)?;
            for j in 0..n {
                let dm = md.mul(bfv.delta[k], pt.coeffs[j] as u128 % q);
                a[j] = md.add(md.add(a[j], signed_mod(e1[j] as i128, q)), dm);
                b[j] = md.add(b[j], signed_mod(e2[j] as i128, q));
            }
            c0.push(a);
            c1.push(b);
        }
        Ok(Ciphertext {
            polys: vec![Poly::new(c0), Poly::new(c1)],
        })
    }
}

/// The worst-case invariant noise of a fresh ciphertext: `t ((q mod t) + B (2n + 1))` with
/// `B` the Gaussian sampler's bound `ceil(6 sigma)` (the secret and `u` are ternary).
pub fn fresh_noise_bound(bfv: &Bfv) -> BigUint {
    let p = bfv.params();
    let b = (6.0 * crate::params::SIGMA).ceil() as u64;
    let r = &bfv.q % &bfv.t_big;
    BigUint::from(p.t) * (r + BigUint::from(b * (2 * p.n as u64 + 1)))
}

/// Decrypts with the secret key.
pub struct Decryptor<'a> {
    bfv: &'a Bfv,
    sk: &'a SecretKey,
}

impl<'a> Decryptor<'a> {
    /// A decryptor for `sk`.
    pub fn new(bfv: &'a Bfv, sk: &'a SecretKey) -> Self {
        Self { bfv, sk }
    }

    /// `[c0 + c1 s + c2 s^2]_q` as integers in `[0, q)` (BigUint per coefficient).
    fn phase(&self, ct: &Ciphertext) -> Result<Vec<BigUint>> {
        let bfv = self.bfv;
        if !(2..=3).contains(&ct.size()) {
            return Err(BfvError::Mismatch {
                what: "ciphertext size",
                expected: "2 or 3 polynomials".into(),
                found: ct.size().to_string(),
            });
        }
        let n = bfv.params.n;
        let mut towers = Vec::new();
        for k in 0..bfv.towers() {
            // Horner in the NTT domain: ((c_last s + ...) s + c0.
            let mut acc = vec![0u128; n];
            for p in ct.polys.iter().rev() {
                let mut c = p.towers[k].clone();
                bfv.ntt(k, &mut c)?;
                acc = bfv.hadamard(k, &acc, &self.sk.s_ntt[k]);
                bfv.add_into(k, &mut acc, &c);
            }
            bfv.intt(k, &mut acc)?;
            towers.push(acc);
        }
        let mut r = vec![0u128; bfv.towers()];
        Ok((0..n)
            .map(|j| {
                for (i, t) in towers.iter().enumerate() {
                    r[i] = t[j];
                }
                bfv.q_crt.reconstruct(&r)
            })
            .collect())
    }

    /// The plaintext `round(t [c0 + c1 s (+ c2 s^2)]_q / q) mod t`.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Plaintext> {
        let bfv = self.bfv;
        let t = &bfv.t_big;
        let coeffs = self
            .phase(ct)?
            .iter()
            .map(|x| {
                let m = round_scale(&BigInt::from(x.clone()), t, &bfv.q);
                (m.magnitude() % t).to_u64().expect("below t")
            })
            .collect();
        Ok(Plaintext { coeffs })
    }

    /// The invariant noise `max_j |[t (c0 + c1 s)]_q|_j`: decryption is correct while it is
    /// below `q/2`.
    pub fn noise(&self, ct: &Ciphertext) -> Result<BigUint> {
        let bfv = self.bfv;
        let half = &bfv.q >> 1u32;
        Ok(self
            .phase(ct)?
            .iter()
            .map(|x| {
                let v = (x * &bfv.t_big) % &bfv.q;
                if v > half {
                    &bfv.q - v
                } else {
                    v
                }
            })
            .max()
            .unwrap_or_default())
    }

    /// The noise budget in bits, `log2(q/2) - log2(noise)`: positive means decryption is
    /// correct, and each multiplication spends some of it.
    pub fn noise_budget(&self, ct: &Ciphertext) -> Result<f64> {
        let v = self.noise(ct)?;
        Ok(log2(&(&self.bfv.q >> 1u32)) - log2(&v).max(0.0))
    }
}

/// `log2(x)` of a big integer (0 for 0).
pub fn log2(x: &BigUint) -> f64 {
    if x.bits() == 0 {
        return 0.0;
    }
    let shift = x.bits().saturating_sub(64);
    (x >> shift).to_f64().expect("64 bits").log2() + shift as f64
}
