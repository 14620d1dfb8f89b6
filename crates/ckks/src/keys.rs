//! Secret and public keys, encryption and decryption (client side, on the math layer).
//!
//! Randomness: every sampler draws from a SHAKE256 stream (`tessera_math::sampling::Xof`) keyed
//! by a seed from the operating system's CSPRNG ([`KeyGenerator::new`]), or by a caller-given
//! seed for reproducible tests ([`KeyGenerator::from_seed`]). Keys never print their contents.

use crate::context::{CkksContext, Plaintext};
use crate::error::Result;
use crate::params::SecretDistribution;
use std::sync::Arc;
use tessera_math::sampling::{ternary, GaussianSampler, Seed, Xof};
use tessera_math::{Representation, RnsPoly};

/// The secret key `s`, held over every prime (chain and special) in evaluation form.
#[derive(Clone)]
pub struct SecretKey {
    pub(crate) s: RnsPoly,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(<redacted>)")
    }
}

/// The public key `(b, a) = (-a s + e, a)` over the chain at the top level.
#[derive(Clone, Debug)]
pub struct PublicKey {
    pub(crate) b: RnsPoly,
    pub(crate) a: RnsPoly,
}

/// A ciphertext `(c0, c1)` with `c0 + c1 s = Delta m + e`, generic over where its polynomials
/// live (`RnsPoly` on the host, a backend's handle in an evaluator).
#[derive(Clone, Debug)]
pub struct Ciphertext<P> {
    /// The `c0` part.
    pub c0: P,
    /// The `c1` part.
    pub c1: P,
    /// Level: each part has `level + 1` limbs.
    pub level: usize,
    /// Scale Delta.
    pub scale: f64,
    /// Number of slots.
    pub slots: usize,
}

/// Samples keys and encrypts.
pub struct KeyGenerator {
    ctx: Arc<CkksContext>,
    xof: Xof,
    gaussian: GaussianSampler,
}

impl KeyGenerator {
    /// Randomness from the operating system's CSPRNG.
    pub fn new(ctx: &Arc<CkksContext>) -> Result<Self> {
        Self::from_seed(ctx, &Seed::random()?)
    }

    /// Deterministic randomness from `seed` (SHAKE256): for reproducible tests only.
    pub fn from_seed(ctx: &Arc<CkksContext>, seed: &Seed) -> Result<Self> {
        Ok(Self {
            ctx: ctx.clone(),
            xof: Xof::new(seed, b"tessera/ckks/keygen"),
            gaussian: GaussianSampler::new(ctx.params().literal().sigma)?,
        })
    }

    fn all_limbs(&self) -> Vec<usize> {
        let mut l = self.ctx.chain_limbs(self.ctx.params().max_level());
        l.extend(self.ctx.special_limbs());
        l
    }

    /// Uniform polynomial over `limbs`, evaluation representation.
    fn uniform(&mut self, limbs: &[usize]) -> Result<RnsPoly> {
        // A sub-seed drawn from the key generator's stream, expanded per modulus.
        let mut bytes = [0u8; 32];
        for chunk in bytes.chunks_mut(8) {
            chunk.copy_from_slice(&self.xof.next_u64().to_le_bytes());
        }
        let seed = Seed(bytes);
        let moduli: Vec<u64> = limbs
            .iter()
            .map(|&i| self.ctx.ring().moduli()[i].value())
            .collect();
        let data = tessera_math::sampling::expand_uniform(&seed, &moduli, self.ctx.params().n());
        Ok(RnsPoly::from_data(
            self.ctx.ring(),
            limbs,
            data,
            Representation::Evaluation,
        )?)
    }

    /// Small polynomial from signed coefficients, in evaluation representation.
    fn small(&self, coeffs: &[i64], limbs: &[usize]) -> Result<RnsPoly> {
        let mut p = RnsPoly::from_signed(self.ctx.ring(), limbs, coeffs)?;
        p.ntt()?;
        Ok(p)
    }

    fn error(&mut self, limbs: &[usize]) -> Result<RnsPoly> {
        let e = self
            .gaussian
            .sample_vec(&mut self.xof, self.ctx.params().n());
        self.small(&e, limbs)
    }

    /// A fresh secret key (dense ternary, or fixed Hamming weight as the parameters say).
    pub fn secret_key(&mut self) -> Result<SecretKey> {
        let h = match self.ctx.params().literal().secret {
            SecretDistribution::Ternary => None,
            SecretDistribution::Sparse { hamming_weight } => Some(hamming_weight),
        };
        let s = ternary(&mut self.xof, self.ctx.params().n(), h)?;
        let limbs = self.all_limbs();
        Ok(SecretKey {
            s: self.small(&s, &limbs)?,
        })
    }

    /// The public key of `sk`.
    pub fn public_key(&mut self, sk: &SecretKey) -> Result<PublicKey> {
        let limbs = self.ctx.chain_limbs(self.ctx.params().max_level());
        let a = self.uniform(&limbs)?;
        let s = sk.s.select_limbs(&limbs)?;
        let mut b = self.error(&limbs)?;
        let mut as_ = a.clone();
        as_.mul_assign(&s)?;
        b.sub_assign(&as_)?;
        Ok(PublicKey { b, a })
    }

    /// Secret-key encryption: `(-a s + e + m, a)`.
    pub fn encrypt_sk(&mut self, pt: &Plaintext, sk: &SecretKey) -> Result<Ciphertext<RnsPoly>> {
        let limbs = self.ctx.chain_limbs(pt.level);
        let a = self.uniform(&limbs)?;
        let s = sk.s.select_limbs(&limbs)?;
        let mut c0 = self.error(&limbs)?;
        c0.add_assign(&pt.poly)?;
        let mut as_ = a.clone();
        as_.mul_assign(&s)?;
        c0.sub_assign(&as_)?;
        Ok(Ciphertext {
            c0,
            c1: a,
            level: pt.level,
            scale: pt.scale,
            slots: pt.slots,
        })
    }

    /// Public-key encryption: `(u b + e0 + m, u a + e1)` with a ternary `u`.
    pub fn encrypt_pk(&mut self, pt: &Plaintext, pk: &PublicKey) -> Result<Ciphertext<RnsPoly>> {
        let limbs = self.ctx.chain_limbs(pt.level);
        let u = ternary(&mut self.xof, self.ctx.params().n(), None)?;
        let u = self.small(&u, &limbs)?;
        let (b, a) = (pk.b.select_limbs(&limbs)?, pk.a.select_limbs(&limbs)?);
        let mut c0 = self.error(&limbs)?;
        c0.mul_acc(&u, &b)?;
        c0.add_assign(&pt.poly)?;
        let mut c1 = self.error(&limbs)?;
        c1.mul_acc(&u, &a)?;
        Ok(Ciphertext {
            c0,
            c1,
            level: pt.level,
            scale: pt.scale,
            slots: pt.slots,
        })
    }
}

/// Decryption: `c0 + c1 s` as a plaintext.
pub fn decrypt(ct: &Ciphertext<RnsPoly>, sk: &SecretKey) -> Result<Plaintext> {
    let s = sk.s.select_limbs(ct.c0.limb_indices())?;
    let mut m = ct.c0.clone();
    m.mul_acc(&ct.c1, &s)?;
    Ok(Plaintext {
        poly: m,
        level: ct.level,
        scale: ct.scale,
        slots: ct.slots,
    })
}
