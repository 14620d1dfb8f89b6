//! The CPU backend: primary functions computed by the math layer's SIMD kernels, limb-parallel
//! on its thread pool.

use crate::{Backend, HostPoly, Kind};
use std::sync::Arc;
use tessera_math::sampling::Seed;
use tessera_math::{ConversionMode, MathError, Representation, RingContext, RnsPoly};

/// Computes every primary function on this machine.
#[derive(Clone, Debug)]
pub struct CpuBackend {
    ring: Arc<RingContext>,
}

impl CpuBackend {
    /// A CPU backend over `ring`.
    pub fn new(ring: Arc<RingContext>) -> Self {
        Self { ring }
    }
}

impl CpuBackend {
    /// A seeded key's `b` digits as they are, each holding (at least) `limbs`: the dot reads
    /// the limbs it needs in place (no copy of a key's leading and special limbs below the
    /// top level).
    fn key_digits<'a>(
        &self,
        key_b: &'a [HostPoly],
        limbs: &[usize],
    ) -> Result<Vec<&'a RnsPoly>, MathError> {
        key_b
            .iter()
            .map(|b| match b {
                HostPoly::Limbs { limbs: l, .. } if l != limbs => Err(MathError::Unsupported(
                    "a seeded key's limbs must be those of the digits it multiplies".into(),
                )),
                HostPoly::Data(p) | HostPoly::Limbs { whole: p, .. } => {
                    if Arc::ptr_eq(p.context(), &self.ring) {
                        Ok(p)
                    } else {
                        Err(MathError::RingMismatch { op: "load" })
                    }
                }
                HostPoly::Shape(_) => Err(crate::shape_unsupported("load")),
            })
            .collect()
    }
}

impl CpuBackend {
    /// [`CpuBackend::key_digits`] after checking that the digits `ups` are over `limbs`.
    fn seeded_key<'a>(
        &self,
        ups: &[&RnsPoly],
        key_b: &'a [HostPoly],
        limbs: &[usize],
    ) -> Result<Vec<&'a RnsPoly>, MathError> {
        if ups.first().is_some_and(|u| u.limb_indices() != limbs) {
            return Err(MathError::Unsupported(
                "a seeded key's limbs must be those of the digits it multiplies".into(),
            ));
        }
        self.key_digits(key_b, limbs)
    }
}

impl Backend for CpuBackend {
    type Poly = RnsPoly;

    fn ring(&self) -> &Arc<RingContext> {
        &self.ring
    }
    fn limbs(&self, p: &RnsPoly) -> Vec<usize> {
        p.limb_indices().to_vec()
    }
    fn repr(&self, p: &RnsPoly) -> Representation {
        p.repr()
    }
    fn load(&mut self, host: &RnsPoly, _kind: Kind) -> Result<RnsPoly, MathError> {
        if !Arc::ptr_eq(host.context(), &self.ring) {
            return Err(MathError::RingMismatch { op: "load" });
        }
        Ok(host.clone())
    }
    fn store(&mut self, p: &RnsPoly) -> Result<RnsPoly, MathError> {
        Ok(p.clone())
    }
    fn expand_seed(
        &mut self,
        seed: &Seed,
        limbs: &[usize],
        _kind: Kind,
    ) -> Result<RnsPoly, MathError> {
        RnsPoly::expand_seed(&self.ring, limbs, seed)
    }
    /// One fused pass ([`RnsPoly::dot_pair_seeded`]): the key's `a` halves are generated a few
    /// kilobytes at a time and consumed from cache instead of being written out and read back.
    fn dot_pair_seeded_key(
        &mut self,
        ups: &[&RnsPoly],
        key_b: &[HostPoly],
        seeds: &[Seed],
        limbs: &[usize],
    ) -> Result<(RnsPoly, RnsPoly), MathError> {
        let bs = self.seeded_key(ups, key_b, limbs)?;
        RnsPoly::dot_pair_seeded(ups, &bs, seeds)
    }
    /// In one pass ([`RnsPoly::automorphism_dot_pair_seeded`]): each digit's limb is
    /// permuted and multiplied into both sums while it is in cache.
    fn automorphism_dot_pair_seeded_key(
        &mut self,
        ups: &[&RnsPoly],
        g: u64,
        key_b: &[HostPoly],
        seeds: &[Seed],
        limbs: &[usize],
    ) -> Result<(RnsPoly, RnsPoly), MathError> {
        let bs = self.seeded_key(ups, key_b, limbs)?;
        RnsPoly::automorphism_dot_pair_seeded(ups, g, &bs, seeds)
    }
    fn ntt(&mut self, p: &mut RnsPoly) -> Result<(), MathError> {
        p.ntt()
    }
    fn intt(&mut self, p: &mut RnsPoly) -> Result<(), MathError> {
        p.intt()
    }
    fn add(&mut self, a: &RnsPoly, b: &RnsPoly) -> Result<RnsPoly, MathError> {
        let mut r = a.clone();
        r.add_assign(b)?;
        Ok(r)
    }
    fn add_assign(&mut self, a: &mut RnsPoly, b: &RnsPoly) -> Result<(), MathError> {
        a.add_assign(b)
    }
    fn sub(&mut self, a: &RnsPoly, b: &RnsPoly) -> Result<RnsPoly, MathError> {
        let mut r = a.clone();
        r.sub_assign(b)?;
        Ok(r)
    }
    fn neg(&mut self, a: &RnsPoly) -> Result<RnsPoly, MathError> {
        let mut r = a.clone();
        r.neg_assign();
        Ok(r)
    }
    fn mul(&mut self, a: &RnsPoly, b: &RnsPoly) -> Result<RnsPoly, MathError> {
        let mut r = a.clone();
        r.mul_assign(b)?;
        Ok(r)
    }
    fn mul_acc(&mut self, acc: &mut RnsPoly, a: &RnsPoly, b: &RnsPoly) -> Result<(), MathError> {
        acc.mul_acc(a, b)
    }
    fn dot(&mut self, a: &[&RnsPoly], b: &[&RnsPoly]) -> Result<RnsPoly, MathError> {
        RnsPoly::dot(a, b)
    }
    fn add_scalar(&mut self, a: &RnsPoly, c: &[u64]) -> Result<RnsPoly, MathError> {
        let mut r = a.clone();
        r.add_scalar_limbs(c)?;
        Ok(r)
    }
    fn mul_scalar(&mut self, a: &RnsPoly, c: &[u64]) -> Result<RnsPoly, MathError> {
        let mut r = a.clone();
        r.mul_scalar_limbs(c)?;
        Ok(r)
    }
    /// One pass ([`RnsPoly::sub_mul_scalar_limbs`]): each limb's difference is multiplied
    /// while it is in cache instead of being written out and read back.
    fn sub_mul_scalar(
        &mut self,
        a: &RnsPoly,
        b: &RnsPoly,
        c: &[u64],
    ) -> Result<RnsPoly, MathError> {
        let mut r = a.clone();
        r.sub_mul_scalar_limbs(b, c)?;
        Ok(r)
    }
    fn automorphism(&mut self, a: &RnsPoly, g: u64) -> Result<RnsPoly, MathError> {
        a.automorphism(g)
    }
    fn bconv(
        &mut self,
        a: &RnsPoly,
        to: &[usize],
        mode: ConversionMode,
    ) -> Result<RnsPoly, MathError> {
        a.bconv(to, mode)
    }
    fn select_limbs(&mut self, a: &RnsPoly, keep: &[usize]) -> Result<RnsPoly, MathError> {
        a.select_limbs(keep)
    }
    fn concat(&mut self, parts: &[&RnsPoly], limbs: &[usize]) -> Result<RnsPoly, MathError> {
        RnsPoly::concat(parts, limbs)
    }
    /// Assembled in place ([`RnsPoly::extend_digit`]): BConv writes the converted limbs
    /// where they belong, so no concatenation copies the extended digit.
    fn extend_digit(
        &mut self,
        digit: &RnsPoly,
        own: &RnsPoly,
        to: &[usize],
    ) -> Result<RnsPoly, MathError> {
        RnsPoly::extend_digit(digit, own, to)
    }
    /// All digits in one call ([`RnsPoly::extend_digits`]): each prime's NTTs run one after
    /// another, its tables in cache.
    fn mod_up_digits(
        &mut self,
        coeff: &RnsPoly,
        own: &RnsPoly,
        digits: &[Vec<usize>],
        to: &[usize],
    ) -> Result<Vec<RnsPoly>, MathError> {
        let subs = digits
            .iter()
            .map(|d| coeff.select_limbs(d))
            .collect::<Result<Vec<_>, _>>()?;
        RnsPoly::extend_digits(&subs.iter().collect::<Vec<_>>(), own, to)
    }
    /// In one pass ([`RnsPoly::mod_up_dot_pair_seeded`]): each prime's converted limbs are
    /// transformed and multiplied into both sums while they are in cache.
    fn mod_up_dot_pair_seeded_key(
        &mut self,
        coeff: &RnsPoly,
        own: &RnsPoly,
        digits: &[Vec<usize>],
        to: &[usize],
        key_b: &[HostPoly],
        seeds: &[Seed],
    ) -> Result<(RnsPoly, RnsPoly), MathError> {
        let bs = self.key_digits(key_b, to)?;
        let subs = digits
            .iter()
            .map(|d| coeff.select_limbs(d))
            .collect::<Result<Vec<_>, _>>()?;
        RnsPoly::mod_up_dot_pair_seeded(&subs.iter().collect::<Vec<_>>(), own, to, &bs, seeds)
    }
    fn extend_limb(&mut self, a: &RnsPoly, to: &[usize]) -> Result<RnsPoly, MathError> {
        a.extend_limb(to)
    }
    fn begin_op(&mut self, _name: &'static str, _level: usize) {}
    fn end_op(&mut self) {}
}
