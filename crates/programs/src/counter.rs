//! HE-operation counts of a program, read from the operation markers the evaluator emits
//! (`Backend::begin_op` / `end_op`): the computing run counts them as they pass
//! ([`Counting`]), the recorded run counts the same markers in its trace
//! ([`OpCounts::from_trace`]), so the two are comparable one to one.
//!
//! Only outermost operations count: the rotations inside a bootstrapping are the
//! bootstrapping's (programs wrap it in a `Boot` marker, [`BOOT`]), and the key switch inside
//! an HMult is the HMult's.

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use tessera_backend::{Backend, HostPoly, Instr, Kind, Op};
use tessera_math::sampling::Seed;
use tessera_math::{ConversionMode, MathError, Representation, RingContext, RnsPoly};

/// The marker name programs put around a bootstrapping.
pub const BOOT: &str = "Boot";

/// The class an evaluator operation counts under (workloads.md's names): HMult, HRot, HConj,
/// PMult, CMult, Boot, Add (ciphertext, plaintext and constant additions, negation),
/// Rescale, DropLevel, KeySwitch; anything else under its own name.
pub fn class_of(name: &str) -> &str {
    match name {
        "HMult" | "HMultRescale" | "Tensor" => "HMult",
        "HRot" | "HRotHoisted" | "HRotHoistedExt" | "HRotExt" => "HRot",
        "PMult" | "PMultAcc" | "PMultOFLimb" | "PMultOFLimbAcc" | "PMultExtSum" => "PMult",
        "CMult" | "CMultInt" => "CMult",
        "HAdd" | "HSub" | "HNeg" | "PAdd" | "PAddOFLimb" | "CAdd" | "HAddExt" => "Add",
        "HRescale" => "Rescale",
        other => other,
    }
}

/// Counts of outermost HE operations by class ([`class_of`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OpCounts(pub BTreeMap<String, u64>);

impl OpCounts {
    /// The count of a class (0 if it never ran).
    pub fn get(&self, class: &str) -> u64 {
        self.0.get(class).copied().unwrap_or(0)
    }

    fn bump(&mut self, name: &str) {
        *self.0.entry(class_of(name).to_string()).or_default() += 1;
    }

    /// Counts the outermost `begin` markers of a trace.
    pub fn from_trace(instrs: &[Instr]) -> Self {
        let mut c = Self::default();
        let mut depth = 0usize;
        for i in instrs {
            match i.op {
                Op::Begin => {
                    if depth == 0 {
                        c.bump(i.name.as_deref().unwrap_or("?"));
                    }
                    depth += 1;
                }
                Op::End => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        c
    }

    /// `self - earlier`, class by class (counts of a phase between two snapshots).
    pub fn since(&self, earlier: &OpCounts) -> OpCounts {
        OpCounts(
            self.0
                .iter()
                .map(|(k, &v)| (k.clone(), v - earlier.get(k)))
                .filter(|(_, v)| *v > 0)
                .collect(),
        )
    }
}

/// Wraps a backend and counts the outermost HE operations that run on it.
#[derive(Clone, Debug)]
pub struct Counting<B: Backend> {
    inner: B,
    depth: usize,
    counts: OpCounts,
}

impl<B: Backend> Counting<B> {
    /// Counts the operations run on `inner`.
    pub fn new(inner: B) -> Self {
        Self {
            inner,
            depth: 0,
            counts: OpCounts::default(),
        }
    }

    /// The counts so far.
    pub fn counts(&self) -> &OpCounts {
        &self.counts
    }

    /// The wrapped backend.
    pub fn inner(&self) -> &B {
        &self.inner
    }
}

type R<P> = Result<P, MathError>;

impl<B: Backend> Backend for Counting<B> {
    type Poly = B::Poly;

    fn ring(&self) -> &Arc<RingContext> {
        self.inner.ring()
    }
    fn limbs(&self, p: &Self::Poly) -> Vec<usize> {
        self.inner.limbs(p)
    }
    fn repr(&self, p: &Self::Poly) -> Representation {
        self.inner.repr(p)
    }
    fn load(&mut self, host: &RnsPoly, kind: Kind) -> R<B::Poly> {
        self.inner.load(host, kind)
    }
    fn load_host(&mut self, host: &HostPoly, kind: Kind) -> R<B::Poly> {
        self.inner.load_host(host, kind)
    }
    fn store(&mut self, p: &Self::Poly) -> R<RnsPoly> {
        self.inner.store(p)
    }
    fn expand_seed(&mut self, seed: &Seed, limbs: &[usize], kind: Kind) -> R<B::Poly> {
        self.inner.expand_seed(seed, limbs, kind)
    }
    fn dot_pair_seeded_key(
        &mut self,
        ups: &[&Self::Poly],
        key_b: &[HostPoly],
        seeds: &[Seed],
        limbs: &[usize],
    ) -> R<(B::Poly, B::Poly)> {
        self.inner.dot_pair_seeded_key(ups, key_b, seeds, limbs)
    }
    fn ntt(&mut self, p: &mut Self::Poly) -> R<()> {
        self.inner.ntt(p)
    }
    fn intt(&mut self, p: &mut Self::Poly) -> R<()> {
        self.inner.intt(p)
    }
    fn add(&mut self, a: &Self::Poly, b: &Self::Poly) -> R<B::Poly> {
        self.inner.add(a, b)
    }
    fn add_assign(&mut self, a: &mut Self::Poly, b: &Self::Poly) -> R<()> {
        self.inner.add_assign(a, b)
    }
    fn sub(&mut self, a: &Self::Poly, b: &Self::Poly) -> R<B::Poly> {
        self.inner.sub(a, b)
    }
    fn neg(&mut self, a: &Self::Poly) -> R<B::Poly> {
        self.inner.neg(a)
    }
    fn mul(&mut self, a: &Self::Poly, b: &Self::Poly) -> R<B::Poly> {
        self.inner.mul(a, b)
    }
    fn mul_acc(&mut self, acc: &mut Self::Poly, a: &Self::Poly, b: &Self::Poly) -> R<()> {
        self.inner.mul_acc(acc, a, b)
    }
    fn add_scalar(&mut self, a: &Self::Poly, c: &[u64]) -> R<B::Poly> {
        self.inner.add_scalar(a, c)
    }
    fn dot(&mut self, a: &[&Self::Poly], b: &[&Self::Poly]) -> R<B::Poly> {
        self.inner.dot(a, b)
    }
    fn mul_scalar(&mut self, a: &Self::Poly, c: &[u64]) -> R<B::Poly> {
        self.inner.mul_scalar(a, c)
    }
    fn automorphism(&mut self, a: &Self::Poly, g: u64) -> R<B::Poly> {
        self.inner.automorphism(a, g)
    }
    fn bconv(&mut self, a: &Self::Poly, to: &[usize], mode: ConversionMode) -> R<B::Poly> {
        self.inner.bconv(a, to, mode)
    }
    fn select_limbs(&mut self, a: &Self::Poly, keep: &[usize]) -> R<B::Poly> {
        self.inner.select_limbs(a, keep)
    }
    fn concat(&mut self, parts: &[&Self::Poly], limbs: &[usize]) -> R<B::Poly> {
        self.inner.concat(parts, limbs)
    }
    fn sub_mul_scalar(&mut self, a: &Self::Poly, b: &Self::Poly, c: &[u64]) -> R<B::Poly> {
        self.inner.sub_mul_scalar(a, b, c)
    }
    fn extend_digit(&mut self, digit: &Self::Poly, own: &Self::Poly, to: &[usize]) -> R<B::Poly> {
        self.inner.extend_digit(digit, own, to)
    }
    // The fused hooks are forwarded whole: their defaults would run the wrapped backend's
    // separate primaries and skip its fused paths (programs run through this wrapper).
    fn mod_up_digits(
        &mut self,
        coeff: &Self::Poly,
        own: &Self::Poly,
        digits: &[Vec<usize>],
        to: &[usize],
    ) -> R<Vec<B::Poly>> {
        self.inner.mod_up_digits(coeff, own, digits, to)
    }
    fn mod_up_dot_pair_seeded_key(
        &mut self,
        coeff: &Self::Poly,
        own: &Self::Poly,
        digits: &[Vec<usize>],
        to: &[usize],
        key_b: &[HostPoly],
        seeds: &[Seed],
    ) -> R<(B::Poly, B::Poly)> {
        self.inner
            .mod_up_dot_pair_seeded_key(coeff, own, digits, to, key_b, seeds)
    }
    fn automorphism_dot_pair_seeded_key(
        &mut self,
        ups: &[&Self::Poly],
        g: u64,
        key_b: &[HostPoly],
        seeds: &[Seed],
        limbs: &[usize],
    ) -> R<(B::Poly, B::Poly)> {
        self.inner
            .automorphism_dot_pair_seeded_key(ups, g, key_b, seeds, limbs)
    }
    fn extend_limb(&mut self, a: &Self::Poly, to: &[usize]) -> R<B::Poly> {
        self.inner.extend_limb(a, to)
    }
    fn begin_op(&mut self, name: &'static str, level: usize) {
        if self.depth == 0 {
            self.counts.bump(name);
        }
        self.depth += 1;
        self.inner.begin_op(name, level);
    }
    fn end_op(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.inner.end_op();
    }
    fn synchronize(&mut self) -> Result<(), MathError> {
        self.inner.synchronize()
    }
    fn device_report(&self) -> Option<tessera_backend::DeviceReport> {
        self.inner.device_report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_backend::{CpuBackend, Profiled, TraceBackend};
    use tessera_math::primes::generate_ntt_primes;

    /// The fused hooks reach the wrapped backend whole (its profile names them as one
    /// call each), not as the separate primaries of their defaults: programs run through
    /// this wrapper and would lose the fused paths.
    #[test]
    fn fused_hooks_are_forwarded_whole() {
        let ring = RingContext::new(64, &generate_ntt_primes(40, 64, 4, &[]).unwrap()).unwrap();
        let mut c = Counting::new(Profiled::new(CpuBackend::new(ring.clone())));
        let all = [0usize, 1, 2, 3];
        let coeffs: Vec<i64> = (0..64).map(|i| i * 7 - 200).collect();
        let host = RnsPoly::from_signed(&ring, &all, &coeffs).unwrap();
        let coeff = c.load(&host, Kind::Ciphertext).unwrap();
        let mut own = coeff.clone();
        c.ntt(&mut own).unwrap();
        let digits = vec![vec![0usize, 1], vec![2, 3]];
        let keys: Vec<HostPoly> = (0..2).map(|_| HostPoly::Data(own.clone())).collect();
        let seeds = [Seed([1; 32]), Seed([2; 32])];
        let ups = c.mod_up_digits(&coeff, &own, &digits, &all).unwrap();
        let fused = c
            .mod_up_dot_pair_seeded_key(&coeff, &own, &digits, &all, &keys, &seeds)
            .unwrap();
        let up_refs: Vec<&RnsPoly> = ups.iter().collect();
        assert_eq!(
            fused,
            c.dot_pair_seeded_key(&up_refs, &keys, &seeds, &all)
                .unwrap()
        );
        c.automorphism_dot_pair_seeded_key(&up_refs, 5, &keys, &seeds, &all)
            .unwrap();
        let times = c.inner().times();
        for name in ["bconv+ntt", "bconv+ntt+dot", "automorphism+dot"] {
            assert!(
                times.contains_key(name),
                "{name} missing from {:?}",
                times.keys()
            );
        }
        assert!(!times.contains_key("automorphism"), "{:?}", times.keys());
    }

    #[test]
    fn outermost_markers_count_and_match_the_trace() {
        let ring = RingContext::new(64, &generate_ntt_primes(40, 64, 2, &[]).unwrap()).unwrap();
        let mut c = Counting::new(CpuBackend::new(ring.clone()));
        let mut t = TraceBackend::trace(ring);
        // Boot { HRot }, HMultRescale { KeySwitch }, PMult, HRotHoisted: Some(name) begins,
        // None ends.
        let script = [
            Some("Boot"),
            Some("HRot"),
            None,
            None,
            Some("HMultRescale"),
            Some("KeySwitch"),
            None,
            None,
            Some("PMult"),
            None,
            Some("HRotHoisted"),
            None,
        ];
        for step in script {
            match step {
                Some(name) => {
                    c.begin_op(name, 3);
                    t.begin_op(name, 3);
                }
                None => {
                    c.end_op();
                    t.end_op();
                }
            }
        }
        assert_eq!(c.counts(), &OpCounts::from_trace(t.instructions()));
        let got = c.counts();
        assert_eq!(
            (got.get("Boot"), got.get("HRot"), got.get("HMult")),
            (1, 1, 1)
        );
        assert_eq!((got.get("KeySwitch"), got.get("PMult")), (0, 1));
        let later = OpCounts([("HRot".to_string(), 5u64), ("Boot".into(), 1)].into());
        assert_eq!(later.since(got).get("HRot"), 4);
        assert_eq!(later.since(got).get("Boot"), 0);
    }
}
