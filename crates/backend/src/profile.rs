//! A backend wrapper that measures where the time goes: every primary function call is timed
//! and accumulated per [`Op`], so `tessera bench ... --profile` can say which primaries
//! dominate an HE operation on a given machine (the software analogue of the simulator's
//! per-unit utilization).

use crate::trace::Op;
use crate::{Backend, HostPoly, Kind};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tessera_math::sampling::Seed;
use tessera_math::{ConversionMode, MathError, Representation, RingContext, RnsPoly};

/// Accumulated wall time and call count of one primary function.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OpTime {
    /// Number of calls.
    pub calls: u64,
    /// Total wall time.
    pub total: Duration,
}

/// Wraps a backend and times each primary function it computes.
#[derive(Clone, Debug)]
pub struct Profiled<B: Backend> {
    inner: B,
    times: BTreeMap<String, OpTime>,
    synchronizing: bool,
}

impl<B: Backend> Profiled<B> {
    /// Times every call made on `inner`.
    pub fn new(inner: B) -> Self {
        Self {
            inner,
            times: BTreeMap::new(),
            synchronizing: false,
        }
    }

    /// Whether each primary is timed between two [`Backend::synchronize`] calls. On a GPU
    /// backend this is what makes the per-primary times the primaries' own (without it they
    /// are launch times), at the cost of a device wait per call that the op's total then
    /// includes; on the CPU backends it changes nothing. Off by default.
    pub fn synchronizing(mut self, on: bool) -> Self {
        self.synchronizing = on;
        self
    }

    /// The wrapped backend.
    pub fn inner(&self) -> &B {
        &self.inner
    }

    /// Accumulated times, keyed by the primary function's trace name (e.g. `"ntt"`).
    pub fn times(&self) -> &BTreeMap<String, OpTime> {
        &self.times
    }

    /// Forgets everything measured so far.
    pub fn reset(&mut self) {
        self.times.clear();
    }

    fn timed<T>(&mut self, op: Op, f: impl FnOnce(&mut B) -> T) -> T {
        self.timed_as(op.name(), f)
    }

    /// Times one primary (between two device waits when [`Profiled::synchronizing`]; a
    /// failed wait surfaces again at the next primary or at `store`).
    fn timed_as<T>(&mut self, name: &str, f: impl FnOnce(&mut B) -> T) -> T {
        if self.synchronizing {
            let _ = self.inner.synchronize();
        }
        let t0 = Instant::now();
        let r = f(&mut self.inner);
        if self.synchronizing {
            let _ = self.inner.synchronize();
        }
        let dt = t0.elapsed();
        let e = self.times.entry(name.to_string()).or_default();
        e.calls += 1;
        e.total += dt;
        r
    }
}

type R<P> = Result<P, MathError>;

impl<B: Backend> Backend for Profiled<B> {
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
        self.timed(Op::Load, |b| b.load(host, kind))
    }
    fn load_host(&mut self, host: &HostPoly, kind: Kind) -> R<B::Poly> {
        self.timed(Op::Load, |b| b.load_host(host, kind))
    }
    fn store(&mut self, p: &Self::Poly) -> R<RnsPoly> {
        self.timed(Op::Store, |b| b.store(p))
    }
    fn expand_seed(&mut self, seed: &Seed, limbs: &[usize], kind: Kind) -> R<B::Poly> {
        self.timed(Op::ExpandSeed, |b| b.expand_seed(seed, limbs, kind))
    }
    /// Forwarded whole, so a fusing backend is timed as it runs: under one name for the
    /// `load`, `expand_seed` and `dot` calls it stands for.
    fn dot_pair_seeded_key(
        &mut self,
        ups: &[&Self::Poly],
        key_b: &[HostPoly],
        seeds: &[Seed],
        limbs: &[usize],
    ) -> R<(B::Poly, B::Poly)> {
        self.timed_as("expand_seed+dot", |b| {
            b.dot_pair_seeded_key(ups, key_b, seeds, limbs)
        })
    }
    /// Forwarded whole, so a fusing backend is timed as it runs: under one name for the
    /// `automorphism`, `load`, `expand_seed` and `dot` calls it stands for.
    fn automorphism_dot_pair_seeded_key(
        &mut self,
        ups: &[&Self::Poly],
        g: u64,
        key_b: &[HostPoly],
        seeds: &[Seed],
        limbs: &[usize],
    ) -> R<(B::Poly, B::Poly)> {
        self.timed_as("automorphism+dot", |b| {
            b.automorphism_dot_pair_seeded_key(ups, g, key_b, seeds, limbs)
        })
    }
    fn ntt(&mut self, p: &mut Self::Poly) -> R<()> {
        self.timed(Op::Ntt, |b| b.ntt(p))
    }
    fn intt(&mut self, p: &mut Self::Poly) -> R<()> {
        self.timed(Op::Intt, |b| b.intt(p))
    }
    fn add(&mut self, a: &Self::Poly, c: &Self::Poly) -> R<B::Poly> {
        self.timed(Op::Add, |b| b.add(a, c))
    }
    fn add_assign(&mut self, a: &mut Self::Poly, c: &Self::Poly) -> R<()> {
        self.timed(Op::Add, |b| b.add_assign(a, c))
    }
    fn sub(&mut self, a: &Self::Poly, c: &Self::Poly) -> R<B::Poly> {
        self.timed(Op::Sub, |b| b.sub(a, c))
    }
    fn neg(&mut self, a: &Self::Poly) -> R<B::Poly> {
        self.timed(Op::Neg, |b| b.neg(a))
    }
    fn mul(&mut self, a: &Self::Poly, c: &Self::Poly) -> R<B::Poly> {
        self.timed(Op::Mul, |b| b.mul(a, c))
    }
    fn mul_acc(&mut self, acc: &mut Self::Poly, a: &Self::Poly, c: &Self::Poly) -> R<()> {
        self.timed(Op::MulAcc, |b| b.mul_acc(acc, a, c))
    }
    fn dot(&mut self, a: &[&Self::Poly], c: &[&Self::Poly]) -> R<B::Poly> {
        self.timed(Op::Dot, |b| b.dot(a, c))
    }
    fn add_scalar(&mut self, a: &Self::Poly, c: &[u64]) -> R<B::Poly> {
        self.timed(Op::AddScalar, |b| b.add_scalar(a, c))
    }
    fn mul_scalar(&mut self, a: &Self::Poly, c: &[u64]) -> R<B::Poly> {
        self.timed(Op::MulScalar, |b| b.mul_scalar(a, c))
    }
    fn automorphism(&mut self, a: &Self::Poly, g: u64) -> R<B::Poly> {
        self.timed(Op::Automorphism, |b| b.automorphism(a, g))
    }
    fn bconv(&mut self, a: &Self::Poly, to: &[usize], mode: ConversionMode) -> R<B::Poly> {
        self.timed(Op::Bconv, |b| b.bconv(a, to, mode))
    }
    fn select_limbs(&mut self, a: &Self::Poly, keep: &[usize]) -> R<B::Poly> {
        self.timed(Op::SelectLimbs, |b| b.select_limbs(a, keep))
    }
    /// Forwarded whole, so a fusing backend is timed as it runs: under one name for the
    /// `sub` and `mul_scalar` calls it stands for.
    fn sub_mul_scalar(&mut self, a: &Self::Poly, c: &Self::Poly, k: &[u64]) -> R<B::Poly> {
        self.timed_as("sub+mul_scalar", |b| b.sub_mul_scalar(a, c, k))
    }
    /// Forwarded whole, so a backend that reorders it across digits is timed as it runs:
    /// under the name of the `extend_digit`s it stands for (the digits' `select_limbs` are
    /// data movement).
    fn mod_up_digits(
        &mut self,
        coeff: &Self::Poly,
        own: &Self::Poly,
        digits: &[Vec<usize>],
        to: &[usize],
    ) -> R<Vec<B::Poly>> {
        self.timed_as("bconv+ntt", |b| b.mod_up_digits(coeff, own, digits, to))
    }
    /// Forwarded whole, so a backend that interleaves ModUp with the inner product is timed
    /// as it runs: under one name for the `bconv`, `ntt`, `load`, `expand_seed` and `dot`
    /// calls it stands for.
    fn mod_up_dot_pair_seeded_key(
        &mut self,
        coeff: &Self::Poly,
        own: &Self::Poly,
        digits: &[Vec<usize>],
        to: &[usize],
        key_b: &[HostPoly],
        seeds: &[Seed],
    ) -> R<(B::Poly, B::Poly)> {
        self.timed_as("bconv+ntt+dot", |b| {
            b.mod_up_dot_pair_seeded_key(coeff, own, digits, to, key_b, seeds)
        })
    }
    /// Forwarded whole, so a backend that assembles it in place is timed as it runs: under
    /// one name for the `bconv`, `ntt` and `concat` calls it stands for.
    fn extend_digit(&mut self, digit: &Self::Poly, own: &Self::Poly, to: &[usize]) -> R<B::Poly> {
        self.timed_as("bconv+ntt", |b| b.extend_digit(digit, own, to))
    }
    fn concat(&mut self, parts: &[&Self::Poly], limbs: &[usize]) -> R<B::Poly> {
        self.timed(Op::Concat, |b| b.concat(parts, limbs))
    }
    fn extend_limb(&mut self, a: &Self::Poly, to: &[usize]) -> R<B::Poly> {
        self.timed(Op::ExtendLimb, |b| b.extend_limb(a, to))
    }
    fn begin_op(&mut self, name: &'static str, level: usize) {
        self.inner.begin_op(name, level);
    }
    fn end_op(&mut self) {
        self.inner.end_op();
    }
    fn synchronize(&mut self) -> R<()> {
        self.inner.synchronize()
    }
    fn device_report(&self) -> Option<crate::DeviceReport> {
        self.inner.device_report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CpuBackend;
    use tessera_math::primes::generate_ntt_primes;

    #[test]
    fn synchronizing_changes_no_count_on_the_cpu() {
        let ring = RingContext::new(64, &generate_ntt_primes(40, 64, 2, &[]).unwrap()).unwrap();
        let mut b = Profiled::new(CpuBackend::new(ring)).synchronizing(true);
        let p = b
            .expand_seed(&Seed([2; 32]), &[0, 1], Kind::EvalKey)
            .unwrap();
        let _ = b.mul(&p, &p).unwrap();
        b.synchronize().unwrap();
        assert_eq!(b.times()["mul"].calls, 1);
        assert_eq!(b.device_report(), None, "the CPU backend has no device");
    }

    #[test]
    fn times_every_call_under_its_trace_name() {
        let ring = RingContext::new(64, &generate_ntt_primes(40, 64, 2, &[]).unwrap()).unwrap();
        let mut b = Profiled::new(CpuBackend::new(ring.clone()));
        let mut p = b
            .expand_seed(&Seed([1; 32]), &[0, 1], Kind::EvalKey)
            .unwrap();
        b.intt(&mut p).unwrap();
        b.ntt(&mut p).unwrap();
        let _ = b.mul(&p, &p).unwrap();
        let _ = b.mul(&p, &p).unwrap();
        let t = b.times();
        assert_eq!(t["mul"].calls, 2);
        assert_eq!(t["ntt"].calls, 1);
        assert_eq!(t["expand_seed"].calls, 1);
        assert_eq!(t.len(), 4);
        b.reset();
        assert!(b.times().is_empty());
        // Names are the trace format's.
        for op in [Op::ExpandSeed, Op::MulAcc, Op::Bconv, Op::SelectLimbs] {
            assert_eq!(
                serde_json::to_string(&op).unwrap(),
                format!("\"{}\"", op.name())
            );
        }
    }
}
