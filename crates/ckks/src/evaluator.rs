//! The evaluator, written once over a [`Backend`] of primary functions.
//!
//! Every homomorphic operation here lowers to the backend's primary functions and nothing else,
//! so the CPU backend computes it and a trace backend records exactly the same stream
//! (design.md section 1). Operands are checked: different levels or scales are errors.

use crate::context::{CkksContext, Plaintext};
use crate::error::{CkksError, Result};
use crate::keys::{Ciphertext, EvaluationKeys, SwitchingKey};
use std::sync::Arc;
use tessera_backend::{Backend, Kind};
use tessera_math::automorphism::{conjugation_element, galois_element};
use tessera_math::{ConversionMode, Modulus, RnsPoly};

/// A binary primary function of backend `B` (add, sub, ...).
type BinaryPrimary<B> = fn(
    &mut B,
    &<B as Backend>::Poly,
    &<B as Backend>::Poly,
) -> std::result::Result<<B as Backend>::Poly, tessera_math::MathError>;

/// Relative tolerance when comparing scales.
const SCALE_TOLERANCE: f64 = 1e-9;

/// Evaluates CKKS operations on a backend.
pub struct Evaluator<B: Backend> {
    ctx: Arc<CkksContext>,
    backend: B,
}

impl<B: Backend> Evaluator<B> {
    /// An evaluator over `backend`, whose ring must be the context's.
    pub fn new(ctx: &Arc<CkksContext>, backend: B) -> Result<Self> {
        if !Arc::ptr_eq(backend.ring(), ctx.ring()) {
            return Err(CkksError::InvalidParameter {
                name: "backend",
                value: "a backend over another ring".into(),
                allowed: "a backend built over the context's ring".into(),
            });
        }
        Ok(Self {
            ctx: ctx.clone(),
            backend,
        })
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The backend, mutably (e.g. to read a trace).
    pub fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    /// Loads a host ciphertext into the backend.
    pub fn load(&mut self, ct: &Ciphertext<RnsPoly>) -> Result<Ciphertext<B::Poly>> {
        Ok(Ciphertext {
            c0: self.backend.load(&ct.c0, Kind::Ciphertext)?,
            c1: self.backend.load(&ct.c1, Kind::Ciphertext)?,
            level: ct.level,
            scale: ct.scale,
            slots: ct.slots,
        })
    }

    /// Stores a ciphertext back to the host.
    pub fn store(&mut self, ct: &Ciphertext<B::Poly>) -> Result<Ciphertext<RnsPoly>> {
        Ok(Ciphertext {
            c0: self.backend.store(&ct.c0)?,
            c1: self.backend.store(&ct.c1)?,
            level: ct.level,
            scale: ct.scale,
            slots: ct.slots,
        })
    }

    fn same_level(op: &'static str, a: usize, b: usize) -> Result<()> {
        if a != b {
            return Err(CkksError::level_mismatch(op, a, b));
        }
        Ok(())
    }

    fn same_scale(op: &'static str, a: f64, b: f64) -> Result<()> {
        if (a - b).abs() > SCALE_TOLERANCE * a.abs().max(b.abs()) {
            return Err(CkksError::ScaleMismatch {
                op,
                left_log2: a.log2(),
                right_log2: b.log2(),
            });
        }
        Ok(())
    }

    fn binary(
        &mut self,
        op: &'static str,
        a: &Ciphertext<B::Poly>,
        b: &Ciphertext<B::Poly>,
        f: BinaryPrimary<B>,
    ) -> Result<Ciphertext<B::Poly>> {
        Self::same_level(op, a.level, b.level)?;
        Self::same_scale(op, a.scale, b.scale)?;
        self.backend.begin_op(op, a.level);
        let c0 = f(&mut self.backend, &a.c0, &b.c0);
        let c1 = f(&mut self.backend, &a.c1, &b.c1);
        self.backend.end_op();
        Ok(Ciphertext {
            c0: c0?,
            c1: c1?,
            level: a.level,
            scale: a.scale,
            slots: a.slots.max(b.slots),
        })
    }

    /// HAdd: `a + b`.
    pub fn add(
        &mut self,
        a: &Ciphertext<B::Poly>,
        b: &Ciphertext<B::Poly>,
    ) -> Result<Ciphertext<B::Poly>> {
        self.binary("HAdd", a, b, B::add)
    }

    /// HSub: `a - b`.
    pub fn sub(
        &mut self,
        a: &Ciphertext<B::Poly>,
        b: &Ciphertext<B::Poly>,
    ) -> Result<Ciphertext<B::Poly>> {
        self.binary("HSub", a, b, B::sub)
    }

    /// Negation.
    pub fn neg(&mut self, a: &Ciphertext<B::Poly>) -> Result<Ciphertext<B::Poly>> {
        self.backend.begin_op("HNeg", a.level);
        let (c0, c1) = (self.backend.neg(&a.c0), self.backend.neg(&a.c1));
        self.backend.end_op();
        Ok(Ciphertext {
            c0: c0?,
            c1: c1?,
            ..a.clone()
        })
    }

    fn load_plain(&mut self, op: &'static str, ct_level: usize, pt: &Plaintext) -> Result<B::Poly> {
        Self::same_level(op, ct_level, pt.level)?;
        Ok(self.backend.load(&pt.poly, Kind::Plaintext)?)
    }

    /// PAdd: ciphertext plus plaintext (same level and scale).
    pub fn add_plain(
        &mut self,
        a: &Ciphertext<B::Poly>,
        pt: &Plaintext,
    ) -> Result<Ciphertext<B::Poly>> {
        Self::same_scale("PAdd", a.scale, pt.scale)?;
        self.backend.begin_op("PAdd", a.level);
        let r = self
            .load_plain("PAdd", a.level, pt)
            .and_then(|p| Ok(self.backend.add(&a.c0, &p)?));
        self.backend.end_op();
        Ok(Ciphertext {
            c0: r?,
            c1: a.c1.clone(),
            level: a.level,
            scale: a.scale,
            slots: a.slots.max(pt.slots),
        })
    }

    /// PMult: ciphertext times plaintext; the scales multiply (rescale afterwards).
    pub fn mul_plain(
        &mut self,
        a: &Ciphertext<B::Poly>,
        pt: &Plaintext,
    ) -> Result<Ciphertext<B::Poly>> {
        self.backend.begin_op("PMult", a.level);
        let r = self.load_plain("PMult", a.level, pt).and_then(|p| {
            let c0 = self.backend.mul(&a.c0, &p)?;
            let c1 = self.backend.mul(&a.c1, &p)?;
            Ok((c0, c1))
        });
        self.backend.end_op();
        let (c0, c1) = r?;
        Ok(Ciphertext {
            c0,
            c1,
            level: a.level,
            scale: a.scale * pt.scale,
            slots: a.slots.max(pt.slots),
        })
    }

    /// Drops the last `k` limbs without dividing (level drop).
    pub fn drop_levels(
        &mut self,
        a: &Ciphertext<B::Poly>,
        k: usize,
    ) -> Result<Ciphertext<B::Poly>> {
        if k > a.level {
            return Err(CkksError::OutOfLevels {
                op: "drop levels",
                needed: k,
                level: a.level,
            });
        }
        let keep = self.ctx.chain_limbs(a.level - k);
        self.backend.begin_op("DropLevel", a.level);
        let (c0, c1) = (
            self.backend.select_limbs(&a.c0, &keep),
            self.backend.select_limbs(&a.c1, &keep),
        );
        self.backend.end_op();
        Ok(Ciphertext {
            c0: c0?,
            c1: c1?,
            level: a.level - k,
            ..a.clone()
        })
    }

    /// HRescale: divide by the last prime `q_l` with rounding and drop it; the scale is divided
    /// by `q_l`. Lowered to primaries: INTT of the last limb, extension of its centered lift to
    /// the other limbs (the rounding remainder), NTT, subtraction, multiplication by
    /// `q_l^{-1} mod q_i`.
    pub fn rescale(&mut self, a: &Ciphertext<B::Poly>) -> Result<Ciphertext<B::Poly>> {
        if a.level == 0 {
            return Err(CkksError::OutOfLevels {
                op: "rescale",
                needed: 1,
                level: 0,
            });
        }
        self.backend.begin_op("HRescale", a.level);
        let r = self.rescale_parts(a);
        self.backend.end_op();
        let (c0, c1) = r?;
        let ql = self.ctx.params().q()[a.level] as f64;
        Ok(Ciphertext {
            c0,
            c1,
            level: a.level - 1,
            scale: a.scale / ql,
            slots: a.slots,
        })
    }

    fn rescale_parts(&mut self, a: &Ciphertext<B::Poly>) -> Result<(B::Poly, B::Poly)> {
        let l = a.level;
        let rest = self.ctx.chain_limbs(l - 1);
        let ql = self.ctx.params().q()[l];
        let inv: Vec<u64> = self.ctx.params().q()[..l]
            .iter()
            .map(|&qi| {
                let m = Modulus::new(qi).expect("chain primes are valid moduli");
                m.inv(ql % qi).expect("distinct primes")
            })
            .collect();
        let mut out = Vec::with_capacity(2);
        for part in [&a.c0, &a.c1] {
            let mut last = self.backend.select_limbs(part, &[l])?;
            self.backend.intt(&mut last)?;
            let mut r = self.backend.extend_limb(&last, &rest)?;
            self.backend.ntt(&mut r)?;
            let kept = self.backend.select_limbs(part, &rest)?;
            let d = self.backend.sub(&kept, &r)?;
            out.push(self.backend.mul_scalar(&d, &inv)?);
        }
        let c1 = out.pop().expect("two parts");
        let c0 = out.pop().expect("two parts");
        Ok((c0, c1))
    }

    /// Hybrid key switching of `d` (evaluation form, level `l`) with `key`: returns `(u0, u1)`
    /// over `Q_l` with `u0 + u1 s ~ d s'`.
    ///
    /// ModUp: each of the `beta = ceil((l+1)/alpha)` digits of `d` is brought to coefficient
    /// form, extended to the other chain limbs and the special limbs by fast BConv, and
    /// transformed back; its own limbs are taken from `d` directly. Inner product with the
    /// key's `(b_i, a_i)`, where `a_i` is expanded from its seed. ModDown: the special limbs
    /// are converted back with the exact centered BConv, subtracted, and multiplied by
    /// `P^{-1}`.
    pub fn key_switch(
        &mut self,
        d: &B::Poly,
        level: usize,
        key: &SwitchingKey,
    ) -> Result<(B::Poly, B::Poly)> {
        let params = self.ctx.params();
        let alpha = params.alpha();
        let beta = params.beta(level);
        if key.dnum() < beta {
            return Err(CkksError::MissingKey(format!(
                "the key has {} digits, level {level} needs {beta}",
                key.dnum()
            )));
        }
        let q_limbs = self.ctx.chain_limbs(level);
        let p_limbs = self.ctx.special_limbs();
        let qp: Vec<usize> = q_limbs.iter().chain(&p_limbs).copied().collect();
        let mut dc = d.clone();
        self.backend.intt(&mut dc)?;
        let mut acc: Option<(B::Poly, B::Poly)> = None;
        for i in 0..beta {
            let digit: Vec<usize> = (alpha * i..(alpha * (i + 1)).min(level + 1)).collect();
            let others: Vec<usize> = qp.iter().copied().filter(|j| !digit.contains(j)).collect();
            let sub = self.backend.select_limbs(&dc, &digit)?;
            let mut ext = self
                .backend
                .bconv(&sub, &others, ConversionMode::Approximate)?;
            self.backend.ntt(&mut ext)?;
            let own = self.backend.select_limbs(d, &digit)?;
            let up = self.backend.concat(&[&own, &ext], &qp)?;
            let b = self
                .backend
                .load(&key.b[i].select_limbs(&qp)?, Kind::EvalKey)?;
            let a = self
                .backend
                .expand_seed(&key.seeds[i], &qp, Kind::EvalKey)?;
            match acc.as_mut() {
                None => {
                    let u0 = self.backend.mul(&up, &b)?;
                    let u1 = self.backend.mul(&up, &a)?;
                    acc = Some((u0, u1));
                }
                Some((u0, u1)) => {
                    self.backend.mul_acc(u0, &up, &b)?;
                    self.backend.mul_acc(u1, &up, &a)?;
                }
            }
        }
        let (u0, u1) = acc.expect("beta >= 1");
        let p_inv: Vec<u64> = params.q()[..=level]
            .iter()
            .map(|&q| {
                let m = Modulus::new(q).expect("chain primes are valid moduli");
                params.p().iter().fold(1u64, |acc, &p| {
                    m.mul(acc, m.inv(p % q).expect("distinct primes"))
                })
            })
            .collect();
        let mut out = Vec::with_capacity(2);
        for u in [&u0, &u1] {
            let mut pp = self.backend.select_limbs(u, &p_limbs)?;
            self.backend.intt(&mut pp)?;
            let mut conv = self
                .backend
                .bconv(&pp, &q_limbs, ConversionMode::ExactCentered)?;
            self.backend.ntt(&mut conv)?;
            let qpart = self.backend.select_limbs(u, &q_limbs)?;
            let diff = self.backend.sub(&qpart, &conv)?;
            out.push(self.backend.mul_scalar(&diff, &p_inv)?);
        }
        let v1 = out.pop().expect("two parts");
        let v0 = out.pop().expect("two parts");
        Ok((v0, v1))
    }

    /// HMult: ciphertext times ciphertext with relinearisation; the scales multiply.
    pub fn mul_relin(
        &mut self,
        a: &Ciphertext<B::Poly>,
        b: &Ciphertext<B::Poly>,
        keys: &EvaluationKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        Self::same_level("HMult", a.level, b.level)?;
        let rlk = keys
            .relin
            .as_ref()
            .ok_or_else(|| CkksError::MissingKey("relinearisation key".into()))?;
        self.backend.begin_op("HMult", a.level);
        let r = (|| {
            let d0 = self.backend.mul(&a.c0, &b.c0)?;
            let mut d1 = self.backend.mul(&a.c0, &b.c1)?;
            self.backend.mul_acc(&mut d1, &a.c1, &b.c0)?;
            let d2 = self.backend.mul(&a.c1, &b.c1)?;
            let (u0, u1) = self.key_switch(&d2, a.level, rlk)?;
            Ok::<_, CkksError>((self.backend.add(&d0, &u0)?, self.backend.add(&d1, &u1)?))
        })();
        self.backend.end_op();
        let (c0, c1) = r?;
        Ok(Ciphertext {
            c0,
            c1,
            level: a.level,
            scale: a.scale * b.scale,
            slots: a.slots.max(b.slots),
        })
    }

    fn apply_galois(
        &mut self,
        op: &'static str,
        a: &Ciphertext<B::Poly>,
        g: u64,
        keys: &EvaluationKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        let key = keys.galois.get(&g).ok_or_else(|| {
            CkksError::MissingKey(format!("{op} needs the key for Galois element {g}"))
        })?;
        self.backend.begin_op(op, a.level);
        let r = (|| {
            let c0 = self.backend.automorphism(&a.c0, g)?;
            let c1 = self.backend.automorphism(&a.c1, g)?;
            let (u0, u1) = self.key_switch(&c1, a.level, key)?;
            Ok::<_, CkksError>((self.backend.add(&c0, &u0)?, u1))
        })();
        self.backend.end_op();
        let (c0, c1) = r?;
        Ok(Ciphertext {
            c0,
            c1,
            ..a.clone()
        })
    }

    /// HRot: rotates the slots left by `steps` (negative: right).
    pub fn rotate(
        &mut self,
        a: &Ciphertext<B::Poly>,
        steps: i64,
        keys: &EvaluationKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        let g = galois_element(steps, self.ctx.params().n())?;
        self.apply_galois("HRot", a, g, keys)
    }

    /// Complex conjugation of every slot.
    pub fn conjugate(
        &mut self,
        a: &Ciphertext<B::Poly>,
        keys: &EvaluationKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        let g = conjugation_element(self.ctx.params().n())?;
        self.apply_galois("HConj", a, g, keys)
    }
}
