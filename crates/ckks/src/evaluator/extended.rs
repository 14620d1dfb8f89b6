//! Double hoisting (Bossuat, Mouchet, Troncoso-Pastoriza and Hubaux, Eurocrypt 2021,
//! section 5): the operations of a BSGS linear transform that stay over the extended basis
//! `Q_l P`, so that one ModDown per part serves the whole sum instead of one per rotation.
//!
//! A key switch computes `(u0, u1)` over `Q_l P` with `u0 + u1 s = P d s' + e` and divides by
//! `P` last (ModDown). Everything linear can be done before that division: the baby-step
//! rotations are left as `(P rot(c0) + u0, u1)` ([`Evaluator::rotate_hoisted_ext`]), the
//! plaintext products are taken over `Q_l P` with diagonals encoded there too
//! ([`crate::CkksContext::encode_over`]), a giant step divides only its `c1` by `P` (the
//! part it must decompose) and leaves its own key switch over `Q_l P`
//! ([`Evaluator::rotate_ext`]), and the sum is divided by `P` once at the end
//! ([`Evaluator::mod_down_ext`]). Single hoisting shares only the ModUp; this also saves a
//! ModDown per baby step and half of one per giant step, for products over `K` more limbs.
//!
//! The key-switching errors are divided by `P` at the end instead of after each rotation,
//! and the plaintext products no longer multiply the ModDown's rounding error: the result
//! agrees with single hoisting within the precision of either (tests/bootstrap.rs).

use super::{Evaluator, Result};
use crate::context::{OfLimbPlaintext, Plaintext};
use crate::error::CkksError;
use crate::keys::{Ciphertext, EvaluationKeys, KeySetId};
use tessera_backend::{Backend, Kind};
use tessera_math::automorphism::galois_element;

/// A ciphertext over `Q_l P` whose message is scaled by `P`: what a key switch holds before
/// ModDown. `special` names the limbs of `P`; the parts' limbs are the chain limbs of `level`
/// followed by them.
#[derive(Clone, Debug)]
pub struct ExtCiphertext<P> {
    /// The `c0` part, over `Q_l P`.
    pub c0: P,
    /// The `c1` part, over `Q_l P`.
    pub c1: P,
    /// Level `l` of the chain part.
    pub level: usize,
    /// Scale of the message (before the factor `P`).
    pub scale: f64,
    /// Number of slots.
    pub slots: usize,
    /// The key set it is under.
    pub key_set: KeySetId,
    /// Ring indices of the special limbs (the limbs of `P`).
    pub special: Vec<usize>,
}

/// A plaintext factor of [`Evaluator::mul_plain_ext_sum`].
#[derive(Clone, Copy, Debug)]
pub enum ExtFactor<'a> {
    /// A plaintext encoded over the ciphertext's chain and special limbs.
    Full(&'a Plaintext),
    /// ARK's OF-Limb plaintext (the `q_0` limb), extended to those limbs on use.
    OfLimb(&'a OfLimbPlaintext),
}

impl ExtFactor<'_> {
    fn level(&self) -> usize {
        match self {
            ExtFactor::Full(p) => p.level,
            ExtFactor::OfLimb(p) => p.level,
        }
    }
    fn scale(&self) -> f64 {
        match self {
            ExtFactor::Full(p) => p.scale,
            ExtFactor::OfLimb(p) => p.scale,
        }
    }
    fn slots(&self) -> usize {
        match self {
            ExtFactor::Full(p) => p.slots,
            ExtFactor::OfLimb(p) => p.slots,
        }
    }
}

impl<B: Backend> Evaluator<B> {
    /// Hoisted rotations left over `Q_l P`: one ModUp of `a.c1` shared by every rotation in
    /// `steps`, each rotation's inner product kept before ModDown and joined with `P` times
    /// its rotated `c0`. Returns `a` itself in that form (`P a`, the baby step 0) and the
    /// rotations, in the order of `steps`.
    #[allow(clippy::type_complexity)]
    pub fn rotate_hoisted_ext(
        &mut self,
        a: &Ciphertext<B::Poly>,
        steps: &[i64],
        keys: &EvaluationKeys,
    ) -> Result<(ExtCiphertext<B::Poly>, Vec<ExtCiphertext<B::Poly>>)> {
        let l = a.level;
        let (gs, plan) =
            Self::hoisting_plan(l, steps, keys, self.ctx.params().n())?.ok_or_else(|| {
                CkksError::InvalidParameter {
                    name: "steps",
                    value: "none".into(),
                    allowed: "at least one rotation (double hoisting shares its ModUp)".into(),
                }
            })?;
        let special = plan.special.clone();
        let ups = self.traced("HoistedModUp", l, |e| e.mod_up(&a.c1, l, &plan))?;
        let factors = self.p_factors(l, &special);
        let ext = |c0, c1| ExtCiphertext {
            c0,
            c1,
            level: l,
            scale: a.scale,
            slots: a.slots,
            key_set: a.key_set,
            special: special.clone(),
        };
        let (c0, c1) = self.traced("CtExtend", l, |e| {
            let filler = e.backend.select_limbs(&ups[0], &special)?;
            let c0 = e.times_p(&a.c0, &filler, &factors)?;
            let c1 = e.times_p(&a.c1, &filler, &factors)?;
            Ok((c0, c1))
        })?;
        let base = ext(c0, c1);
        let mut out = Vec::with_capacity(gs.len());
        for g in gs {
            let key = Self::galois_key(keys, g, l, "hoisted rotation")?;
            key.key_set().check("HRotHoistedExt", a.key_set)?;
            let (c0, c1) = self.traced("HRotHoistedExt", l, |e| {
                let (mut u0, u1) = e.rotated_inner_product(&ups, g, l, &key)?;
                let r0 = e.backend.automorphism(&a.c0, g)?;
                let filler = e.backend.select_limbs(&u0, &special)?;
                let p0 = e.times_p(&r0, &filler, &factors)?;
                // The filler is a view of u0's limbs: dropped, u0 is written in place.
                drop(filler);
                e.backend.add_assign(&mut u0, &p0)?;
                Ok((u0, u1))
            })?;
            out.push(ext(c0, c1));
        }
        Ok((base, out))
    }

    /// `[P mod q_j]` for the chain limbs of `level`, then `0` for each special limb: the
    /// constants that turn a polynomial over `Q_l P` into `P` times its chain part.
    fn p_factors(&self, level: usize, special: &[usize]) -> Vec<u64> {
        let mut f = self.special_product(level, special, false);
        f.resize(f.len() + special.len(), 0);
        f
    }

    /// `P x` over `Q_l P` for `x` over `Q_l`: `x` joined with `filler` (any polynomial over
    /// the special limbs) and multiplied by [`Evaluator::p_factors`], so its special limbs are
    /// zero, as `P x` is modulo each special prime.
    fn times_p(&mut self, x: &B::Poly, filler: &B::Poly, factors: &[u64]) -> Result<B::Poly> {
        let mut limbs = self.backend.limbs(x);
        limbs.extend(self.backend.limbs(filler));
        let joined = self.backend.concat(&[x, filler], &limbs)?;
        Ok(self.backend.mul_scalar(&joined, factors)?)
    }

    /// The sum of PMults over `Q_l P`, `sum_k a_k * pt_k`, each `pt_k` encoded over `a_k`'s
    /// limbs ([`crate::CkksContext::encode_over`] with `a_k.special`) or an OF-Limb plaintext
    /// extended to them: the diagonal products of one giant step of a double-hoisted BSGS
    /// transform.
    ///
    /// Why one operation: computed as a product and `k - 1` multiply-accumulates, the partial
    /// sum is written and read back `k - 1` times and reduced after every term; as one inner
    /// product per part (the backend's `dot`: products summed lazily, one reduction per
    /// coefficient) each operand is read once and the sum written once. It is recorded as
    /// one `PMultExtSum` operation (counted as one PMult class operation) whose primaries are
    /// the plaintext loads and two `dot`s.
    pub fn mul_plain_ext_sum(
        &mut self,
        terms: &[(&ExtCiphertext<B::Poly>, ExtFactor<'_>)],
    ) -> Result<ExtCiphertext<B::Poly>> {
        const OP: &str = "PMultExtSum";
        let (first, f0) = terms.first().ok_or_else(|| CkksError::InvalidParameter {
            name: "terms",
            value: "0".into(),
            allowed: "at least one (ciphertext, plaintext) product".into(),
        })?;
        let scale = first.scale * f0.scale();
        let mut slots = 0;
        for (a, f) in terms {
            Self::same_level(OP, first.level, a.level)?;
            Self::same_level(OP, a.level, f.level())?;
            Self::same_scale(OP, scale, a.scale * f.scale())?;
            Self::same_special(OP, &first.special, &a.special)?;
            first.key_set.check(OP, a.key_set)?;
            slots = slots.max(a.slots).max(f.slots());
        }
        let mut limbs = self.ctx.chain_limbs(first.level);
        limbs.extend_from_slice(&first.special);
        let (c0, c1) = self.traced(OP, first.level, |e| {
            let ps = terms
                .iter()
                .map(|(_, f)| match f {
                    ExtFactor::Full(p) => Ok(e.backend.load_host(&p.host(), Kind::Plaintext)?),
                    ExtFactor::OfLimb(p) => e.oflimb_operand(p, &limbs),
                })
                .collect::<Result<Vec<_>>>()?;
            let ps: Vec<&B::Poly> = ps.iter().collect();
            let c0s: Vec<&B::Poly> = terms.iter().map(|(a, _)| &a.c0).collect();
            let c1s: Vec<&B::Poly> = terms.iter().map(|(a, _)| &a.c1).collect();
            Ok((e.backend.dot(&c0s, &ps)?, e.backend.dot(&c1s, &ps)?))
        })?;
        Ok(ExtCiphertext {
            c0,
            c1,
            scale,
            slots,
            ..(*first).clone()
        })
    }

    /// `a + b` over `Q_l P`.
    pub fn add_ext(
        &mut self,
        a: &ExtCiphertext<B::Poly>,
        b: &ExtCiphertext<B::Poly>,
    ) -> Result<ExtCiphertext<B::Poly>> {
        Self::same_level("HAddExt", a.level, b.level)?;
        Self::same_scale("HAddExt", a.scale, b.scale)?;
        Self::same_special("HAddExt", &a.special, &b.special)?;
        a.key_set.check("HAddExt", b.key_set)?;
        let (c0, c1) = self.traced("HAddExt", a.level, |e| {
            Ok((e.backend.add(&a.c0, &b.c0)?, e.backend.add(&a.c1, &b.c1)?))
        })?;
        Ok(ExtCiphertext {
            c0,
            c1,
            slots: a.slots.max(b.slots),
            ..a.clone()
        })
    }

    /// `a += b` over `Q_l P` ([`Evaluator::add_ext`] in place, as [`Evaluator::add_assign`]).
    pub fn add_ext_assign(
        &mut self,
        a: &mut ExtCiphertext<B::Poly>,
        b: &ExtCiphertext<B::Poly>,
    ) -> Result<()> {
        const OP: &str = "HAddExt";
        Self::same_level(OP, a.level, b.level)?;
        Self::same_scale(OP, a.scale, b.scale)?;
        Self::same_special(OP, &a.special, &b.special)?;
        a.key_set.check(OP, b.key_set)?;
        self.add_parts_in_place(OP, a.level, (&mut a.c0, &mut a.c1), (&b.c0, &b.c1))?;
        a.slots = a.slots.max(b.slots);
        Ok(())
    }

    /// A giant-step rotation over `Q_l P`: `c1` is divided by `P` (ModDown), rotated and key
    /// switched (ModUp and inner product, in the evaluator's dataflow), the switch left over
    /// `Q_l P`; `c0` is rotated there as it is. The rotation key must use `a`'s special
    /// limbs.
    pub fn rotate_ext(
        &mut self,
        a: &ExtCiphertext<B::Poly>,
        steps: i64,
        keys: &EvaluationKeys,
    ) -> Result<ExtCiphertext<B::Poly>> {
        let l = a.level;
        let g = galois_element(steps, self.ctx.params().n())?;
        let key = Self::galois_key(keys, g, l, "a giant-step rotation over Q P")?;
        key.key_set().check("HRotExt", a.key_set)?;
        Self::same_special("HRotExt", &key.plan().special, &a.special)?;
        let (c0, c1) = self.traced("HRotExt", l, |e| {
            let c1 = e.mod_down_special(&a.c1, l, &a.special)?;
            let r1 = e.backend.automorphism(&c1, g)?;
            let (u0, u1) = e.key_switch_ext(&r1, l, &key)?;
            let mut r0 = e.backend.automorphism(&a.c0, g)?;
            e.backend.add_assign(&mut r0, &u0)?;
            Ok((r0, u1))
        })?;
        Ok(ExtCiphertext {
            c0,
            c1,
            ..a.clone()
        })
    }

    /// ModDown of both parts: the ciphertext over `Q_l` that `a` is `P` times.
    pub fn mod_down_ext(&mut self, a: &ExtCiphertext<B::Poly>) -> Result<Ciphertext<B::Poly>> {
        let (c0, c1) = self.traced("ModDown", a.level, |e| {
            let c0 = e.mod_down_special(&a.c0, a.level, &a.special)?;
            let c1 = e.mod_down_special(&a.c1, a.level, &a.special)?;
            Ok((c0, c1))
        })?;
        Ok(Ciphertext {
            c0,
            c1,
            level: a.level,
            scale: a.scale,
            slots: a.slots,
            key_set: a.key_set,
        })
    }

    /// Whether the rotation keys of `steps` at `level` all use one set of special limbs (and
    /// exist): double hoisting accumulates their key switches over one `Q_l P`.
    pub fn keys_share_special_limbs(
        &self,
        steps: &[i64],
        level: usize,
        keys: &EvaluationKeys,
    ) -> Result<bool> {
        let n = self.ctx.params().n();
        let mut special: Option<&Vec<usize>> = None;
        for &r in steps {
            let g = galois_element(r, n)?;
            let Some(p) = keys.galois_plan_for(g, level) else {
                return Ok(false);
            };
            if special.is_some_and(|s| *s != p.special) {
                return Ok(false);
            }
            special = Some(&p.special);
        }
        Ok(true)
    }

    fn same_special(op: &'static str, a: &[usize], b: &[usize]) -> Result<()> {
        if a != b {
            return Err(CkksError::InvalidParameter {
                name: "special limbs",
                value: format!("{a:?} and {b:?}"),
                allowed: format!("{op}: operands over the same Q P"),
            });
        }
        Ok(())
    }
}
