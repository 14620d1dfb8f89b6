//! Secret and public keys, encryption and decryption (client side, on the math layer).
//!
//! Randomness: every sampler draws from the math layer's XOF (`tessera_math::sampling::Xof`, BLAKE3) keyed
//! by a seed from the operating system's CSPRNG ([`KeyGenerator::new`]), or by a caller-given
//! seed for reproducible tests ([`KeyGenerator::from_seed`]). Keys never print their contents.
//!
//! Every secret key draws a [`KeySetId`] when it is generated; the public and switching keys
//! made from it and every ciphertext encrypted under it carry that id, so an object of one key
//! generation used with another is an error ([`CkksError::KeySetMismatch`]) instead of noise.

use crate::context::{CkksContext, Plaintext};
use crate::decomposition::KeySwitchPlan;
use crate::error::{CkksError, Result};
use crate::key_factory::{GaloisKeyFactory, KeyRef};
use crate::params::SecretDistribution;
use std::sync::Arc;
use tessera_backend::{HostPoly, HostShape};
use tessera_math::sampling::{ternary, GaussianSampler, Seed, Xof};
use tessera_math::{Representation, RnsPoly};

/// The identity of one key generation: 16 random bytes drawn with the secret key and carried
/// by every key and ciphertext derived from it (and by their serialised forms).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeySetId(pub [u8; 16]);

impl std::fmt::Debug for KeySetId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeySetId({self})")
    }
}

impl std::fmt::Display for KeySetId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for b in &self.0[..8] {
            write!(f, "{b:02x}")?;
        }
        f.write_str("..")
    }
}

impl KeySetId {
    /// Errors unless `self` and `other` are the same key set (`op` names the operation).
    ///
    /// ```
    /// use tessera_ckks::KeySetId;
    /// assert!(KeySetId([1; 16]).check("HAdd", KeySetId([1; 16])).is_ok());
    /// assert!(KeySetId([1; 16]).check("HAdd", KeySetId([2; 16])).is_err());
    /// ```
    pub fn check(self, op: &'static str, other: KeySetId) -> Result<()> {
        if self != other {
            return Err(CkksError::KeySetMismatch {
                op,
                left: self.to_string(),
                right: other.to_string(),
            });
        }
        Ok(())
    }
}

/// The secret key `s`, held over every prime (chain and special) in evaluation form.
#[derive(Clone)]
pub struct SecretKey {
    pub(crate) s: RnsPoly,
    pub(crate) id: KeySetId,
}

impl SecretKey {
    pub(crate) fn from_poly(s: RnsPoly, id: KeySetId) -> Self {
        Self { s, id }
    }

    /// The key set this secret heads.
    pub fn key_set(&self) -> KeySetId {
        self.id
    }

    /// The secret polynomial (evaluation form over every prime). Exposed for tests and tools
    /// that must check keys; handle with care.
    pub fn poly(&self) -> &RnsPoly {
        &self.s
    }
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
    pub(crate) id: KeySetId,
}

impl PublicKey {
    /// The key set this key belongs to.
    pub fn key_set(&self) -> KeySetId {
        self.id
    }
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
    /// The key set it was encrypted under (operations refuse to mix key sets).
    pub key_set: KeySetId,
}

/// A key-switching key from `s'` to `s` for a [`KeySwitchPlan`], one pair per digit `i`:
/// `(b_i, a_i) = (-a_i s + e_i + P * 1_(D_i) * s', a_i)` over the plan's chain limbs
/// `0..=plan.level` and its special limbs, in evaluation form, where `P` is the product of the
/// plan's special primes and `1_(D_i)` is 1 on the chain limbs of digit `i` and 0 elsewhere.
/// This gadget does not depend on the level, so a key serves every level up to
/// `plan.level`. Only `b_i` is stored; `a_i` is regenerated from its seed by PRNG expansion on
/// use (seeded evaluation keys).
///
/// A shape-only context's key generator ([`CkksContext::shape_only`]) makes keys whose `b`
/// halves are shapes (limb set and identity, no data; `b(i)` has no limbs): a recording loads
/// them as the same objects, and a computing backend refuses them.
#[derive(Clone, Debug)]
pub struct SwitchingKey {
    pub(crate) b: Vec<RnsPoly>,
    pub(crate) seeds: Arc<KeySeeds>,
    pub(crate) plan: KeySwitchPlan,
    pub(crate) id: KeySetId,
    /// The `b` halves' shapes, for a shape-only key (`b` then holds no data).
    pub(crate) shapes: Option<Vec<HostShape>>,
}

impl SwitchingKey {
    /// The key set it belongs to (that of the secret it switches to).
    pub fn key_set(&self) -> KeySetId {
        self.id
    }

    /// The decomposition this key was made for.
    pub fn plan(&self) -> &KeySwitchPlan {
        &self.plan
    }

    /// Number of digits.
    pub fn dnum(&self) -> usize {
        self.b.len()
    }

    /// The `b` half of digit `i`.
    pub fn b(&self, i: usize) -> &RnsPoly {
        &self.b[i]
    }

    /// The seed of the `a` half of digit `i`.
    pub fn seed(&self, i: usize) -> Seed {
        self.seeds[i]
    }

    /// Bytes stored: the `b` halves (8 bytes per word) plus 32 bytes per seed (for a
    /// shape-only key, what its data would take).
    pub fn stored_bytes(&self) -> usize {
        8 * self.b_words() + 32 * self.seeds.len()
    }

    /// Bytes the key would take with both halves stored.
    pub fn expanded_bytes(&self) -> usize {
        2 * 8 * self.b_words()
    }

    /// Words of the `b` halves (or of their shapes).
    fn b_words(&self) -> usize {
        match &self.shapes {
            Some(s) => {
                let n = self.b.first().map_or(0, |b| b.n());
                s.iter().map(|h| h.limbs.len() * n).sum()
            }
            None => self.b.iter().map(|b| b.data().len()).sum(),
        }
    }

    /// Whether the key is shape-only (made by a shape-only context, no data).
    pub fn is_shape_only(&self) -> bool {
        self.shapes.is_some()
    }

    /// The `b` half of digit `i` over `limbs` (the key's chain limbs up to a level, and its
    /// special limbs), as a backend loads it: the data's limbs, or a shape over `limbs`.
    pub fn b_over(&self, i: usize, limbs: &[usize]) -> Result<HostPoly> {
        let digits = self.b.len();
        let missing =
            || CkksError::MissingKey(format!("the key has {digits} digits, digit {i} was asked"));
        Ok(match &self.shapes {
            // The whole digit and the limbs to load: the backend selects them (a GPU where the
            // key is resident, the CPU with a host copy as before).
            None => HostPoly::Limbs {
                whole: self.b.get(i).ok_or_else(missing)?.clone(),
                limbs: limbs.to_vec(),
            },
            Some(shapes) => {
                let s = shapes.get(i).ok_or_else(missing)?;
                if let Some(bad) = limbs.iter().find(|l| !s.limbs.contains(l)) {
                    return Err(CkksError::InvalidParameter {
                        name: "key limbs",
                        value: bad.to_string(),
                        allowed: format!("limbs of the key ({:?})", s.limbs),
                    });
                }
                HostPoly::Shape(HostShape {
                    limbs: limbs.to_vec(),
                    repr: s.repr,
                    id: s.id,
                })
            }
        })
    }
}

/// The seeds of a key's `a` halves, shared by the key's copies. When the last copy is
/// dropped, the limbs expanded from them leave the CPU's key cache
/// ([`tessera_math::key_cache`]), so the cache holds only keys that are still alive.
#[derive(Debug)]
pub(crate) struct KeySeeds(pub(crate) Vec<Seed>);

impl KeySeeds {
    pub(crate) fn new(seeds: Vec<Seed>) -> Arc<Self> {
        Arc::new(Self(seeds))
    }
}

impl std::ops::Deref for KeySeeds {
    type Target = [Seed];
    fn deref(&self) -> &[Seed] {
        &self.0
    }
}

impl Drop for KeySeeds {
    fn drop(&mut self) {
        tessera_math::key_cache::forget(&self.0);
    }
}

/// Relinearisation, rotation and conjugation keys.
///
/// `relin` and `galois` hold keys for the parameter set's fixed decomposition (valid at every
/// level). The `*_by_level` maps hold per-level keys of dynamic decomposition (h3.md section
/// 3.1), each made for the plan [`KeySwitchPlan::dynamic`] chose at its level; lookups prefer
/// a per-level key made for the lowest level at or above the ciphertext's.
#[derive(Clone, Debug, Default)]
pub struct EvaluationKeys {
    /// Relinearisation key (`s^2 -> s`).
    pub relin: Option<SwitchingKey>,
    /// Keys for `X -> X^g`, by Galois element.
    pub galois: std::collections::HashMap<u64, SwitchingKey>,
    /// Per-level relinearisation keys (dynamic decomposition), by the level they are made for.
    pub relin_by_level: std::collections::BTreeMap<usize, SwitchingKey>,
    /// Per-level Galois keys (dynamic decomposition), by Galois element and level.
    pub galois_by_level: std::collections::BTreeMap<(u64, usize), SwitchingKey>,
    /// Galois keys made on first use, for the key owner's own evaluation (see
    /// [`GaloisKeyFactory`]); consulted after the stored keys.
    pub on_demand: Option<Arc<GaloisKeyFactory>>,
}

impl EvaluationKeys {
    /// The relinearisation key to use at `level`.
    pub fn relin_for(&self, level: usize) -> Option<&SwitchingKey> {
        self.relin_by_level
            .range(level..)
            .next()
            .map(|(_, k)| k)
            .or(self.relin.as_ref())
    }

    /// The stored key for the automorphism `g` to use at `level`.
    fn stored_galois(&self, g: u64, level: usize) -> Option<&SwitchingKey> {
        self.galois_by_level
            .range((g, level)..=(g, usize::MAX))
            .next()
            .map(|(_, k)| k)
            .or(self.galois.get(&g))
    }

    /// The key for the automorphism `g` to use at `level`: a stored one, or one the
    /// on-demand factory makes now. `Ok(None)` when neither has it; an error only when
    /// making the key fails.
    pub fn galois_for(&self, g: u64, level: usize) -> Result<Option<KeyRef<'_>>> {
        if let Some(k) = self.stored_galois(g, level) {
            return Ok(Some(KeyRef::Stored(k)));
        }
        match &self.on_demand {
            Some(f) if f.serves(g) => Ok(Some(KeyRef::Made(f.key(g)?))),
            _ => Ok(None),
        }
    }

    /// The decomposition of the key [`EvaluationKeys::galois_for`] would give, without making
    /// it.
    pub fn galois_plan_for(&self, g: u64, level: usize) -> Option<&KeySwitchPlan> {
        if let Some(k) = self.stored_galois(g, level) {
            return Some(k.plan());
        }
        match &self.on_demand {
            Some(f) if f.serves(g) => Some(f.plan()),
            _ => None,
        }
    }

    /// Every key held (fixed and per-level).
    pub fn all(&self) -> impl Iterator<Item = &SwitchingKey> {
        self.relin
            .iter()
            .chain(self.galois.values())
            .chain(self.relin_by_level.values())
            .chain(self.galois_by_level.values())
    }
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

    /// The context keys are made for.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.ctx
    }

    /// Deterministic randomness from `seed` (the seeded XOF): for reproducible tests only.
    pub fn from_seed(ctx: &Arc<CkksContext>, seed: &Seed) -> Result<Self> {
        Ok(Self {
            ctx: ctx.clone(),
            xof: Xof::new(seed, b"tessera/ckks/keygen"),
            gaussian: GaussianSampler::new(ctx.params().literal().sigma)?,
        })
    }

    /// Uniform polynomial over `limbs`, evaluation representation.
    fn uniform(&mut self, limbs: &[usize]) -> Result<RnsPoly> {
        // A sub-seed drawn from the key generator's stream, expanded per modulus.
        let seed = self.sub_seed();
        Ok(RnsPoly::expand_seed(self.ctx.ring(), limbs, &seed)?)
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
        self.ternary_secret(h)
    }

    /// A secret with exactly `hamming_weight` non-zero coefficients, whatever the parameters
    /// say: the ephemeral secret of sparse-secret encapsulation in bootstrapping (ModRaise
    /// under it keeps the overflow `I` small). Not a key to encrypt data under.
    pub fn sparse_secret_key(&mut self, hamming_weight: usize) -> Result<SecretKey> {
        self.ternary_secret(Some(hamming_weight))
    }

    fn ternary_secret(&mut self, h: Option<usize>) -> Result<SecretKey> {
        let s = ternary(&mut self.xof, self.ctx.params().n(), h)?;
        // Every limb of the ring: chain, special and the dynamic-decomposition pool.
        let limbs: Vec<usize> = (0..self.ctx.ring().moduli().len()).collect();
        Ok(SecretKey {
            s: self.small(&s, &limbs)?,
            id: key_set_id(&s),
        })
    }

    /// A fresh 32-byte seed drawn from this generator's stream.
    pub(crate) fn sub_seed(&mut self) -> Seed {
        let mut bytes = [0u8; 32];
        for chunk in bytes.chunks_mut(8) {
            chunk.copy_from_slice(&self.xof.next_u64().to_le_bytes());
        }
        Seed(bytes)
    }

    /// A key switching from `s_prime` (evaluation form over all limbs) to `sk`, for the
    /// parameter set's fixed decomposition.
    pub fn switching_key(&mut self, sk: &SecretKey, s_prime: &RnsPoly) -> Result<SwitchingKey> {
        let plan = KeySwitchPlan::fixed(self.ctx.params());
        self.switching_key_for(sk, s_prime, &plan)
    }

    /// A key switching from `s_prime` to `sk` for `plan` (see [`SwitchingKey`]).
    pub fn switching_key_for(
        &mut self,
        sk: &SecretKey,
        s_prime: &RnsPoly,
        plan: &KeySwitchPlan,
    ) -> Result<SwitchingKey> {
        plan.validate(self.ctx.params())?;
        if self.ctx.is_shape_only() {
            return Ok(self.shape_key(sk, plan));
        }
        let limbs = plan.qp_limbs(plan.level);
        let ring = self.ctx.ring().clone();
        let moduli = ring.moduli();
        let p_big: num_bigint::BigUint = plan
            .special
            .iter()
            .map(|&i| num_bigint::BigUint::from(moduli[i].value()))
            .product();
        let s = sk.s.select_limbs(&limbs)?;
        let s_prime = s_prime.select_limbs(&limbs)?;
        let (mut b, mut seeds) = (Vec::new(), Vec::new());
        for digit in &plan.digits {
            let seed = self.sub_seed();
            let a = RnsPoly::expand_seed(self.ctx.ring(), &limbs, &seed)?;
            let mut bi = self.error(&limbs)?;
            let mut as_ = a;
            as_.mul_assign(&s)?;
            bi.sub_assign(&as_)?;
            // + P * 1_(D_i) * s'
            let factors: Vec<u64> = limbs
                .iter()
                .map(|&j| {
                    if digit.contains(&j) {
                        let q = moduli[j].value();
                        num_traits::ToPrimitive::to_u64(&(&p_big % q)).expect("residue fits")
                    } else {
                        0
                    }
                })
                .collect();
            let mut g = s_prime.clone();
            g.mul_scalar_limbs(&factors)?;
            bi.add_assign(&g)?;
            b.push(bi);
            seeds.push(seed);
        }
        Ok(SwitchingKey {
            b,
            seeds: KeySeeds::new(seeds),
            plan: plan.clone(),
            id: sk.id,
            shapes: None,
        })
    }

    /// A shape-only key for `plan` (a shape-only context): one fresh seed per digit, as a
    /// key with data draws, and each `b` half named by its digit's seed (`crate::shape`).
    fn shape_key(&mut self, sk: &SecretKey, plan: &KeySwitchPlan) -> SwitchingKey {
        let limbs = plan.qp_limbs(plan.level);
        let seeds: Vec<Seed> = plan.digits.iter().map(|_| self.sub_seed()).collect();
        let shapes = seeds
            .iter()
            .map(|seed| HostShape {
                limbs: limbs.clone(),
                repr: Representation::Evaluation,
                id: crate::shape::key_half_id(seed),
            })
            .collect();
        SwitchingKey {
            b: vec![crate::shape::no_data(self.ctx.ring()); seeds.len()],
            seeds: KeySeeds::new(seeds),
            plan: plan.clone(),
            id: sk.id,
            shapes: Some(shapes),
        }
    }

    /// The relinearisation key (`s^2 -> s`).
    pub fn relin_key(&mut self, sk: &SecretKey) -> Result<SwitchingKey> {
        if self.ctx.is_shape_only() {
            return Ok(self.shape_key(sk, &KeySwitchPlan::fixed(self.ctx.params())));
        }
        let mut s2 = sk.s.clone();
        s2.mul_assign(&sk.s)?;
        self.switching_key(sk, &s2)
    }

    /// The key for the automorphism `X -> X^g` (`sigma_g(s) -> s`).
    pub fn galois_key(&mut self, sk: &SecretKey, g: u64) -> Result<SwitchingKey> {
        tessera_math::automorphism::galois_check(g, self.ctx.params().n())?;
        if self.ctx.is_shape_only() {
            return Ok(self.shape_key(sk, &KeySwitchPlan::fixed(self.ctx.params())));
        }
        let sg = sk.s.automorphism(g)?;
        self.switching_key(sk, &sg)
    }

    /// Keys for rotations by each of `steps` slots (and conjugation when asked).
    pub fn evaluation_keys(
        &mut self,
        sk: &SecretKey,
        steps: &[i64],
        conjugation: bool,
    ) -> Result<EvaluationKeys> {
        let mut keys = EvaluationKeys {
            relin: Some(self.relin_key(sk)?),
            ..Default::default()
        };
        let gs = galois_elements(self.ctx.params().n(), steps, conjugation)?;
        for g in gs {
            if let std::collections::hash_map::Entry::Vacant(e) = keys.galois.entry(g) {
                let k = self.galois_key(sk, g)?;
                e.insert(k);
            }
        }
        Ok(keys)
    }

    /// The relinearisation key now and the Galois keys for `steps` (and conjugation when
    /// asked) made on first use by a [`GaloisKeyFactory`] that owns a generator forked from
    /// this one and a copy of `sk`. For the key owner's own evaluation only (see
    /// [`crate::key_factory`]).
    pub fn evaluation_keys_on_demand(
        &mut self,
        sk: &SecretKey,
        steps: &[i64],
        conjugation: bool,
    ) -> Result<EvaluationKeys> {
        let gs = galois_elements(self.ctx.params().n(), steps, conjugation)?;
        let factory = GaloisKeyFactory::new(self, sk.clone(), gs);
        Ok(EvaluationKeys {
            relin: Some(self.relin_key(sk)?),
            on_demand: Some(Arc::new(factory)),
            ..Default::default()
        })
    }

    /// A generator for the same context whose XOF is keyed by `seed` and `domain`.
    pub(crate) fn with_stream(&self, seed: &Seed, domain: &[u8]) -> KeyGenerator {
        KeyGenerator {
            ctx: self.ctx.clone(),
            xof: Xof::new(seed, domain),
            gaussian: self.gaussian.clone(),
        }
    }

    /// Per-level keys for dynamic decomposition (h3.md section 3.1): for each of `levels`, a
    /// relinearisation key and a key per rotation in `steps` (and conjugation when asked),
    /// each made for [`KeySwitchPlan::dynamic`] at that level. Added to `keys`.
    pub fn add_dynamic_keys(
        &mut self,
        keys: &mut EvaluationKeys,
        sk: &SecretKey,
        levels: &[usize],
        steps: &[i64],
        conjugation: bool,
    ) -> Result<()> {
        let gs = galois_elements(self.ctx.params().n(), steps, conjugation)?;
        // A shape-only key reads no secret (`shape_key`): no products or automorphisms of it.
        let shapes = self.ctx.is_shape_only();
        let mut s2 = sk.s.clone();
        if !shapes {
            s2.mul_assign(&sk.s)?;
        }
        for &level in levels {
            let plan = KeySwitchPlan::dynamic(self.ctx.params(), level)?;
            let k = self.switching_key_for(sk, &s2, &plan)?;
            keys.relin_by_level.insert(level, k);
            for &g in &gs {
                let sg = if shapes {
                    crate::shape::no_data(self.ctx.ring())
                } else {
                    sk.s.automorphism(g)?
                };
                let k = self.switching_key_for(sk, &sg, &plan)?;
                keys.galois_by_level.insert((g, level), k);
            }
        }
        Ok(())
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
        Ok(PublicKey { b, a, id: sk.id })
    }

    /// Secret-key encryption: `(-a s + e + m, a)`.
    pub fn encrypt_sk(&mut self, pt: &Plaintext, sk: &SecretKey) -> Result<Ciphertext<RnsPoly>> {
        let limbs = self.ctx.chain_limbs(pt.level);
        let a = self.uniform(&limbs)?;
        let s = sk.s.select_limbs(&limbs)?;
        let mut c0 = self.error(&limbs)?;
        if pt.shape.is_none() {
            // A shape-only plaintext has no data: its encryption encrypts zero (see
            // `CkksContext::shape_only`).
            c0.add_assign(&pt.poly)?;
        }
        let mut as_ = a.clone();
        as_.mul_assign(&s)?;
        c0.sub_assign(&as_)?;
        Ok(Ciphertext {
            c0,
            c1: a,
            level: pt.level,
            scale: pt.scale,
            slots: pt.slots,
            key_set: sk.id,
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
        if pt.shape.is_none() {
            c0.add_assign(&pt.poly)?;
        }
        let mut c1 = self.error(&limbs)?;
        c1.mul_acc(&u, &a)?;
        Ok(Ciphertext {
            c0,
            c1,
            level: pt.level,
            scale: pt.scale,
            slots: pt.slots,
            key_set: pk.id,
        })
    }
}

/// The identity of the key set headed by the secret with coefficients `s`: 16 bytes of a
/// domain-separated BLAKE3 hash of them. It is as random as the secret (a fresh secret gives a
/// fresh id) without drawing from the generator's stream, so seeded keys stay what they were;
/// the hash reveals nothing usable about `s`.
pub(crate) fn key_set_id(s: &[i64]) -> KeySetId {
    let mut h = blake3::Hasher::new_derive_key("tessera 2026 key-set id");
    for c in s {
        h.update(&c.to_le_bytes());
    }
    let mut id = [0u8; 16];
    id.copy_from_slice(&h.finalize().as_bytes()[..16]);
    KeySetId(id)
}

/// The Galois elements of rotations by `steps` slots, plus conjugation when asked.
fn galois_elements(n: usize, steps: &[i64], conjugation: bool) -> Result<Vec<u64>> {
    let mut gs: Vec<u64> = steps
        .iter()
        .map(|&r| tessera_math::automorphism::galois_element(r, n))
        .collect::<std::result::Result<_, _>>()?;
    if conjugation {
        gs.push(tessera_math::automorphism::conjugation_element(n)?);
    }
    Ok(gs)
}

/// Decryption: `c0 + c1 s` as a plaintext; a ciphertext of another key set is an error.
pub fn decrypt(ct: &Ciphertext<RnsPoly>, sk: &SecretKey) -> Result<Plaintext> {
    sk.id.check("decrypt", ct.key_set)?;
    let s = sk.s.select_limbs(ct.c0.limb_indices())?;
    let mut m = ct.c0.clone();
    m.mul_acc(&ct.c1, &s)?;
    Ok(Plaintext {
        poly: m,
        level: ct.level,
        scale: ct.scale,
        slots: ct.slots,
        shape: None,
    })
}
