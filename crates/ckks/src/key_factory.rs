//! Galois keys made when first used (the key owner's own evaluation).
//!
//! With `dnum = L + 1` (reed.md's `K = 1`) a rotation key at N = 2^16 and L = 30 holds 31
//! digits of 32 limbs: 0.5 GB even with seeded `a` halves. A hoisted bootstrapping circuit
//! uses 39 of them, 20 GB, more than a workstation holds. The accelerators stream keys from
//! off-chip memory one at a time (reed.md 5, h3.md 3.2), so a host only needs the key in use.
//!
//! A [`GaloisKeyFactory`] holds the secret key and a key generator and makes each declared
//! Galois key on request, keeping only the most recent one. The keys are ordinary
//! [`SwitchingKey`]s from [`KeyGenerator::galois_key`], so every homomorphic result is the
//! one eagerly generated keys give (up to the fresh key noise). Because it holds the secret
//! key, it is for the key owner's own computation (recording traces, benchmarks on small
//! hosts); an evaluation key set handed to a server must be generated eagerly
//! ([`KeyGenerator::evaluation_keys`]).
//!
//! A factory of a shape-only context (`CkksContext::shape_only`, what recordings for the
//! simulator run on) makes shape keys: limb sets and identities, a few hundred bytes, no key
//! material. It keeps every one it makes, so a recording makes each declared key once,
//! however many rotations use it (before, a shape key was remade on every rotation that did
//! not repeat the previous one's element).

use crate::keys::{KeyGenerator, SecretKey, SwitchingKey};
use crate::{CkksError, KeySwitchPlan, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use tessera_math::sampling::Seed;

/// Makes the declared Galois keys on first use (see the module documentation).
///
/// The key for `g` is a function of the factory's seed and `g` alone (its generator's XOF is
/// keyed by the seed with `g` in the domain), so a key made again after another one displaced
/// it is the same key, bit for bit, as a stored key set would hold.
pub struct GaloisKeyFactory {
    /// Generator the per-element generators are forked from (its context and sampler).
    base: KeyGenerator,
    /// Seed of every per-element stream, drawn from the parent generator's stream.
    seed: Seed,
    sk: SecretKey,
    /// The Galois elements this factory serves; others are missing keys, as with a stored set.
    elements: BTreeSet<u64>,
    /// The decomposition every key is made for (the parameter set's fixed one).
    plan: KeySwitchPlan,
    /// The keys held: with data, only the most recently made one (consecutive rotations by
    /// one step, multi-hop baby steps, reuse it instead of regenerating); for a shape-only
    /// context, every key made (shapes carry no data, see the module documentation).
    held: Mutex<BTreeMap<u64, Arc<SwitchingKey>>>,
    /// Whether the keys are shapes (the generator's context is shape-only): keep them all.
    keep_all: bool,
    /// Number of keys made so far (a key made again after eviction counts again).
    made: Mutex<usize>,
}

impl GaloisKeyFactory {
    /// A factory for the automorphisms `elements` of `sk`, its randomness drawn from `kg`.
    pub fn new(
        kg: &mut KeyGenerator,
        sk: SecretKey,
        elements: impl IntoIterator<Item = u64>,
    ) -> Self {
        let plan = KeySwitchPlan::fixed(kg.context().params());
        let seed = kg.sub_seed();
        // Only its context and sampler are used: every key re-keys the stream below.
        let base_seed = kg.sub_seed();
        Self {
            base: kg.with_stream(&base_seed, b"tessera/ckks/keygen"),
            seed,
            sk,
            elements: elements.into_iter().collect(),
            plan,
            held: Mutex::new(BTreeMap::new()),
            keep_all: kg.context().is_shape_only(),
            made: Mutex::new(0),
        }
    }

    /// Whether this factory serves the automorphism `g`.
    pub fn serves(&self, g: u64) -> bool {
        self.elements.contains(&g)
    }

    /// The decomposition of every key it makes.
    pub fn plan(&self) -> &KeySwitchPlan {
        &self.plan
    }

    /// How many keys it has made (a shape-only factory makes each key at most once).
    pub fn keys_made(&self) -> usize {
        *self.made.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The key for `g`, made now unless it is held (the most recent one, or for a shape-only
    /// context any made before).
    pub fn key(&self, g: u64) -> Result<Arc<SwitchingKey>> {
        if !self.serves(g) {
            return Err(CkksError::MissingKey(format!(
                "the on-demand key set was declared without Galois element {g}"
            )));
        }
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = held.get(&g) {
            return Ok(k.clone());
        }
        if !self.keep_all {
            // Drop the previous key before making the next: at most one with data is held.
            held.clear();
        }
        let mut domain = b"tessera/ckks/keygen/galois/".to_vec();
        domain.extend_from_slice(&g.to_le_bytes());
        let mut kg = self.base.with_stream(&self.seed, &domain);
        let key = Arc::new(kg.galois_key(&self.sk, g)?);
        *self.made.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        held.insert(g, key.clone());
        Ok(key)
    }
}

impl std::fmt::Debug for GaloisKeyFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GaloisKeyFactory")
            .field("elements", &self.elements.len())
            .field("secret", &"<redacted>")
            .finish()
    }
}

/// A key found for an operation: borrowed from a stored set, or made on demand.
#[derive(Debug)]
pub enum KeyRef<'a> {
    /// A key held in [`crate::EvaluationKeys`].
    Stored(&'a SwitchingKey),
    /// A key a [`GaloisKeyFactory`] made.
    Made(Arc<SwitchingKey>),
}

impl std::ops::Deref for KeyRef<'_> {
    type Target = SwitchingKey;
    fn deref(&self) -> &SwitchingKey {
        match self {
            KeyRef::Stored(k) => k,
            KeyRef::Made(k) => k,
        }
    }
}
