//! The evaluator, written once over a [`Backend`] of primary functions.
//!
//! Every homomorphic operation here lowers to the backend's primary functions and nothing else,
//! so the CPU backend computes it and a trace backend records exactly the same stream
//! (design.md section 1). Operands are checked: different levels or scales are errors.

use crate::context::{CkksContext, OfLimbPlaintext, Plaintext};
use crate::decomposition::KeySwitchPlan;
use crate::error::{CkksError, Result};
use crate::keys::{Ciphertext, EvaluationKeys, SwitchingKey};
use std::sync::Arc;
use tessera_backend::{Backend, HostPoly, Kind};
use tessera_math::automorphism::{conjugation_element, galois_element};
use tessera_math::{ConversionMode, Modulus, RnsPoly};

mod extended;
pub use extended::{ExtCiphertext, ExtFactor};

/// A binary primary function of backend `B` (add, sub, ...).
type BinaryPrimary<B> = fn(
    &mut B,
    &<B as Backend>::Poly,
    &<B as Backend>::Poly,
) -> std::result::Result<<B as Backend>::Poly, tessera_math::MathError>;

/// Relative tolerance when comparing scales.
const SCALE_TOLERANCE: f64 = 1e-9;

/// The order in which a key switch visits its digits. Both compute the same values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeySwitchDataflow {
    /// ModUp every digit, then two fused inner products (fastest on a CPU: one reduction
    /// per coefficient).
    #[default]
    Batched,
    /// Per digit: ModUp, then multiply-accumulate into the two accumulators, so only one
    /// extended digit is alive at a time: the dataflow of machines without room for all
    /// extended digits (reed.md Algorithm 3).
    Streamed,
}

impl KeySwitchDataflow {
    /// The dataflow a `--streamed-keyswitch` flag (or a `streamed_keyswitch` field) asks for.
    ///
    /// ```
    /// use tessera_ckks::KeySwitchDataflow;
    /// assert_eq!(KeySwitchDataflow::streamed_if(true), KeySwitchDataflow::Streamed);
    /// assert_eq!(KeySwitchDataflow::streamed_if(false), KeySwitchDataflow::default());
    /// ```
    pub fn streamed_if(streamed: bool) -> Self {
        if streamed {
            Self::Streamed
        } else {
            Self::Batched
        }
    }
}

/// Evaluates CKKS operations on a backend.
pub struct Evaluator<B: Backend> {
    ctx: Arc<CkksContext>,
    backend: B,
    dataflow: KeySwitchDataflow,
}

/// What ModUp starts from ([`Evaluator::mod_up`]): the input in coefficient form, the plan's
/// digits that reach its level (limb sets), and the limbs of `Q_l P` they are extended to.
struct ModUpOperands<P> {
    coeff: P,
    digits: Vec<Vec<usize>>,
    qp: Vec<usize>,
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
            dataflow: KeySwitchDataflow::default(),
        })
    }

    /// Chooses the key-switch dataflow (the values computed do not change).
    pub fn set_key_switch_dataflow(&mut self, dataflow: KeySwitchDataflow) {
        self.dataflow = dataflow;
    }

    /// The CKKS context the evaluator works in.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.ctx
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
            key_set: ct.key_set,
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
            key_set: ct.key_set,
        })
    }

    /// Runs `f` between the backend's begin and end markers of HE operation `name`; the end
    /// marker is emitted even when `f` fails, so traces stay balanced.
    fn traced<T>(
        &mut self,
        name: &'static str,
        level: usize,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        self.backend.begin_op(name, level);
        let r = f(self);
        self.backend.end_op();
        r
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
        a.key_set.check(op, b.key_set)?;
        let (c0, c1) = self.traced(op, a.level, |e| {
            Ok((
                f(&mut e.backend, &a.c0, &b.c0)?,
                f(&mut e.backend, &a.c1, &b.c1)?,
            ))
        })?;
        Ok(Ciphertext {
            c0,
            c1,
            level: a.level,
            scale: a.scale,
            slots: a.slots.max(b.slots),
            key_set: a.key_set,
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

    /// HAdd into `a`: `a += b`, the same checks and the same recorded operation as
    /// [`Evaluator::add`]. For running sums (BSGS giant steps, rotate-and-sum, polynomial
    /// terms): the backend writes `a`'s limbs in place instead of a fresh result (on the CPU,
    /// 24 limbs at N = 2^16: about 0.6 against 1.0 ms).
    pub fn add_assign(
        &mut self,
        a: &mut Ciphertext<B::Poly>,
        b: &Ciphertext<B::Poly>,
    ) -> Result<()> {
        const OP: &str = "HAdd";
        Self::same_level(OP, a.level, b.level)?;
        Self::same_scale(OP, a.scale, b.scale)?;
        a.key_set.check(OP, b.key_set)?;
        self.add_parts_in_place(OP, a.level, (&mut a.c0, &mut a.c1), (&b.c0, &b.c1))?;
        a.slots = a.slots.max(b.slots);
        Ok(())
    }

    /// `(a0, a1) += (b0, b1)` on the backend, traced as `op` at `level`: the work of
    /// [`Evaluator::add_assign`] and [`Evaluator::add_ext_assign`] once their checks pass.
    pub(crate) fn add_parts_in_place(
        &mut self,
        op: &'static str,
        level: usize,
        a: (&mut B::Poly, &mut B::Poly),
        b: (&B::Poly, &B::Poly),
    ) -> Result<()> {
        self.traced(op, level, |e| {
            e.backend.add_assign(a.0, b.0)?;
            Ok(e.backend.add_assign(a.1, b.1)?)
        })
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
        let (c0, c1) = self.traced("HNeg", a.level, |e| {
            Ok((e.backend.neg(&a.c0)?, e.backend.neg(&a.c1)?))
        })?;
        Ok(Ciphertext {
            c0,
            c1,
            ..a.clone()
        })
    }

    fn load_plain(&mut self, op: &'static str, ct_level: usize, pt: &Plaintext) -> Result<B::Poly> {
        Self::same_level(op, ct_level, pt.level)?;
        Ok(self.backend.load_host(&pt.host(), Kind::Plaintext)?)
    }

    /// PAdd: ciphertext plus plaintext (same level and scale).
    pub fn add_plain(
        &mut self,
        a: &Ciphertext<B::Poly>,
        pt: &Plaintext,
    ) -> Result<Ciphertext<B::Poly>> {
        Self::same_scale("PAdd", a.scale, pt.scale)?;
        self.plain_sum("PAdd", a, pt.slots, |e| e.load_plain("PAdd", a.level, pt))
    }

    /// PAdd with an OF-Limb plaintext (ark.md IV-B: OF-Limb serves PMult and PAdd): its
    /// `q_0` limb extended to `a`'s limbs and transformed, then added.
    pub fn add_plain_oflimb(
        &mut self,
        a: &Ciphertext<B::Poly>,
        pt: &OfLimbPlaintext,
    ) -> Result<Ciphertext<B::Poly>> {
        Self::same_scale("PAdd (OF-Limb)", a.scale, pt.scale)?;
        Self::same_level("PAdd (OF-Limb)", a.level, pt.level)?;
        let limbs = self.ctx.chain_limbs(a.level);
        self.plain_sum("PAddOFLimb", a, pt.slots, |e| e.oflimb_operand(pt, &limbs))
    }

    /// Adds the plaintext polynomial that `get` puts in the backend to `a`'s first part
    /// (inside the operation's markers).
    fn plain_sum(
        &mut self,
        op: &'static str,
        a: &Ciphertext<B::Poly>,
        pt_slots: usize,
        get: impl FnOnce(&mut Self) -> Result<B::Poly>,
    ) -> Result<Ciphertext<B::Poly>> {
        let c0 = self.traced(op, a.level, |e| {
            let p = get(e)?;
            Ok(e.backend.add(&a.c0, &p)?)
        })?;
        Ok(Ciphertext {
            c0,
            c1: a.c1.clone(),
            level: a.level,
            scale: a.scale,
            slots: a.slots.max(pt_slots),
            key_set: a.key_set,
        })
    }

    /// PMult: ciphertext times plaintext; the scales multiply (rescale afterwards).
    pub fn mul_plain(
        &mut self,
        a: &Ciphertext<B::Poly>,
        pt: &Plaintext,
    ) -> Result<Ciphertext<B::Poly>> {
        self.plain_product("PMult", a, pt.scale, pt.slots, |e| {
            e.load_plain("PMult", a.level, pt)
        })
    }

    /// Multiplies both parts of `a` by the plaintext polynomial that `get` puts in the backend
    /// (inside the operation's markers); the scales multiply.
    fn plain_product(
        &mut self,
        op: &'static str,
        a: &Ciphertext<B::Poly>,
        pt_scale: f64,
        pt_slots: usize,
        get: impl FnOnce(&mut Self) -> Result<B::Poly>,
    ) -> Result<Ciphertext<B::Poly>> {
        let (c0, c1) = self.traced(op, a.level, |e| {
            let p = get(e)?;
            Ok((e.backend.mul(&a.c0, &p)?, e.backend.mul(&a.c1, &p)?))
        })?;
        Ok(Ciphertext {
            c0,
            c1,
            level: a.level,
            scale: a.scale * pt_scale,
            slots: a.slots.max(pt_slots),
            key_set: a.key_set,
        })
    }

    /// `acc += a * pt` (PMult accumulated in place): the multiply-accumulate primary instead
    /// of a product and an addition, so a sum of plaintext products (the DFTs' baby-step
    /// sums) makes one pass over memory per term instead of three. `acc` must be at `a`'s
    /// level with the product's scale.
    pub fn mul_plain_acc(
        &mut self,
        acc: &mut Ciphertext<B::Poly>,
        a: &Ciphertext<B::Poly>,
        pt: &Plaintext,
    ) -> Result<()> {
        self.plain_product_acc("PMultAcc", acc, a, pt.scale, pt.slots, |e| {
            e.load_plain("PMultAcc", a.level, pt)
        })
    }

    /// [`Evaluator::mul_plain_acc`] with an OF-Limb plaintext.
    pub fn mul_plain_oflimb_acc(
        &mut self,
        acc: &mut Ciphertext<B::Poly>,
        a: &Ciphertext<B::Poly>,
        pt: &OfLimbPlaintext,
    ) -> Result<()> {
        Self::same_level("PMultAcc (OF-Limb)", a.level, pt.level)?;
        let limbs = self.ctx.chain_limbs(a.level);
        self.plain_product_acc("PMultOFLimbAcc", acc, a, pt.scale, pt.slots, |e| {
            e.oflimb_operand(pt, &limbs)
        })
    }

    /// The accumulating form of [`Evaluator::plain_product`].
    fn plain_product_acc(
        &mut self,
        op: &'static str,
        acc: &mut Ciphertext<B::Poly>,
        a: &Ciphertext<B::Poly>,
        pt_scale: f64,
        pt_slots: usize,
        get: impl FnOnce(&mut Self) -> Result<B::Poly>,
    ) -> Result<()> {
        Self::same_level(op, acc.level, a.level)?;
        Self::same_scale(op, acc.scale, a.scale * pt_scale)?;
        self.traced(op, a.level, |e| {
            let p = get(e)?;
            e.backend.mul_acc(&mut acc.c0, &a.c0, &p)?;
            e.backend.mul_acc(&mut acc.c1, &a.c1, &p)?;
            Ok(())
        })?;
        acc.slots = acc.slots.max(a.slots).max(pt_slots);
        Ok(())
    }

    /// Residues of the integer `round(x)` (|x| < 2^120) for the chain limbs of `level`.
    fn constant_residues(&self, x: f64, level: usize, what: &'static str) -> Result<Vec<u64>> {
        let k = x.round();
        if !k.is_finite() || k.abs() >= 2f64.powi(120) {
            return Err(CkksError::InvalidParameter {
                name: what,
                value: format!("{x:e}"),
                allowed: "a finite value whose scaled magnitude is below 2^120".into(),
            });
        }
        let k = k as i128;
        Ok(self.ctx.params().q()[..=level]
            .iter()
            .map(|&q| {
                let r = (k.unsigned_abs() % q as u128) as u64;
                if k < 0 && r != 0 {
                    q - r
                } else {
                    r
                }
            })
            .collect())
    }

    /// Adds the real constant `c` to every slot (`round(c * scale)` added in evaluation form).
    pub fn add_const(&mut self, a: &Ciphertext<B::Poly>, c: f64) -> Result<Ciphertext<B::Poly>> {
        let res = self.constant_residues(c * a.scale, a.level, "constant")?;
        let c0 = self.traced("CAdd", a.level, |e| {
            Ok(e.backend.add_scalar(&a.c0, &res)?)
        })?;
        Ok(Ciphertext { c0, ..a.clone() })
    }

    /// Multiplies every slot by the real constant `c`, encoded as the integer
    /// `round(c * const_scale)`; the ciphertext's scale is multiplied by `const_scale`
    /// (rescale afterwards).
    pub fn mul_const(
        &mut self,
        a: &Ciphertext<B::Poly>,
        c: f64,
        const_scale: f64,
    ) -> Result<Ciphertext<B::Poly>> {
        if !(const_scale.is_finite() && const_scale >= 1.0) {
            return Err(CkksError::InvalidParameter {
                name: "const_scale",
                value: const_scale.to_string(),
                allowed: "a finite number >= 1".into(),
            });
        }
        let res = self.constant_residues(c * const_scale, a.level, "constant")?;
        let mut out = self.scalar_product("CMult", a, &res)?;
        out.scale *= const_scale;
        Ok(out)
    }

    /// Multiplies by an integer (the scale is unchanged).
    pub fn mul_int(&mut self, a: &Ciphertext<B::Poly>, k: i64) -> Result<Ciphertext<B::Poly>> {
        let res = self.constant_residues(k as f64, a.level, "integer")?;
        self.scalar_product("CMultInt", a, &res)
    }

    fn scalar_product(
        &mut self,
        op: &'static str,
        a: &Ciphertext<B::Poly>,
        res: &[u64],
    ) -> Result<Ciphertext<B::Poly>> {
        let (c0, c1) = self.traced(op, a.level, |e| {
            Ok((
                e.backend.mul_scalar(&a.c0, res)?,
                e.backend.mul_scalar(&a.c1, res)?,
            ))
        })?;
        Ok(Ciphertext {
            c0,
            c1,
            ..a.clone()
        })
    }

    /// PMult with an OF-Limb plaintext (ark.md section IV-B): loads the single `q_0` limb,
    /// extends it to the ciphertext's limbs, transforms, and multiplies.
    pub fn mul_plain_oflimb(
        &mut self,
        a: &Ciphertext<B::Poly>,
        pt: &OfLimbPlaintext,
    ) -> Result<Ciphertext<B::Poly>> {
        Self::same_level("PMult (OF-Limb)", a.level, pt.level)?;
        let limbs = self.ctx.chain_limbs(a.level);
        self.plain_product("PMultOFLimb", a, pt.scale, pt.slots, |e| {
            e.oflimb_operand(pt, &limbs)
        })
    }

    /// An OF-Limb plaintext on the backend: its `q_0` limb loaded, extended to `limbs` and
    /// transformed.
    fn oflimb_operand(&mut self, pt: &OfLimbPlaintext, limbs: &[usize]) -> Result<B::Poly> {
        let one = self.backend.load_host(&pt.host(), Kind::Plaintext)?;
        let mut p = self.backend.extend_limb(&one, limbs)?;
        self.backend.ntt(&mut p)?;
        Ok(p)
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
        let (c0, c1) = self.traced("DropLevel", a.level, |e| {
            Ok((
                e.backend.select_limbs(&a.c0, &keep)?,
                e.backend.select_limbs(&a.c1, &keep)?,
            ))
        })?;
        Ok(Ciphertext {
            c0,
            c1,
            level: a.level - k,
            ..a.clone()
        })
    }

    /// HRescale: divide by the last prime `q_l` with rounding and drop it; the scale is divided
    /// by `q_l`. Lowered to primaries: INTT of the last limb, extension of its centered lift to
    /// the other limbs (the rounding remainder), NTT, subtraction, multiplication by
    /// `q_l^{-1} mod q_i`.
    ///
    /// With double-prime rescaling (`Rescaling::DoublePrime`, CiFHER) the division is by
    /// `q_l q_(l-1)`, done as two rounded divisions (the result differs from one rounded
    /// division by the product by at most 1), and two levels are consumed.
    pub fn rescale(&mut self, a: &Ciphertext<B::Poly>) -> Result<Ciphertext<B::Poly>> {
        let primes = self.ctx.params().primes_per_rescale();
        if a.level < primes {
            return Err(CkksError::OutOfLevels {
                op: "rescale",
                needed: primes,
                level: a.level,
            });
        }
        let mut out = self.rescale_one(a)?;
        for _ in 1..primes {
            out = self.rescale_one(&out)?;
        }
        Ok(out)
    }

    /// Divides by the last prime only.
    fn rescale_one(&mut self, a: &Ciphertext<B::Poly>) -> Result<Ciphertext<B::Poly>> {
        let (c0, c1) = self.traced("HRescale", a.level, |e| e.rescale_parts(a))?;
        let ql = self.ctx.params().q()[a.level] as f64;
        Ok(Ciphertext {
            c0,
            c1,
            level: a.level - 1,
            scale: a.scale / ql,
            slots: a.slots,
            key_set: a.key_set,
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
            out.push(self.divide_by_limbs(part, &[l], &rest, &inv)?);
        }
        let c1 = out.pop().expect("two parts");
        let c0 = out.pop().expect("two parts");
        Ok((c0, c1))
    }

    /// `round(x / D)` over the limbs `keep`, where `D` is the product of the limbs `drop`
    /// (`inv` holds `D^{-1} mod q` for each kept limb): the common core of rescaling (`D = q_l`)
    /// and ModDown (`D = P`). The dropped limbs are brought to coefficient form and converted
    /// exactly to the kept limbs (a one-limb extension for a single limb, the exact centered
    /// BConv otherwise), subtracted, and the difference multiplied by `D^{-1}`.
    fn divide_by_limbs(
        &mut self,
        x: &B::Poly,
        drop: &[usize],
        keep: &[usize],
        inv: &[u64],
    ) -> Result<B::Poly> {
        let mut top = self.backend.select_limbs(x, drop)?;
        self.backend.intt(&mut top)?;
        let mut r = if drop.len() == 1 {
            self.backend.extend_limb(&top, keep)?
        } else {
            self.backend
                .bconv(&top, keep, ConversionMode::ExactCentered)?
        };
        self.backend.ntt(&mut r)?;
        let kept = self.backend.select_limbs(x, keep)?;
        Ok(self.backend.sub_mul_scalar(&kept, &r, inv)?)
    }

    /// Hybrid key switching of `d` (evaluation form, level `l`) with `key`: returns `(u0, u1)`
    /// over `Q_l` with `u0 + u1 s ~ d s'`. It is [`Evaluator::mod_up`] with the key's plan
    /// followed by [`Evaluator::inner_product_mod_down`].
    pub fn key_switch(
        &mut self,
        d: &B::Poly,
        level: usize,
        key: &SwitchingKey,
    ) -> Result<(B::Poly, B::Poly)> {
        let (u0, u1) = self.key_switch_ext(d, level, key)?;
        self.mod_down_pair(&u0, &u1, level, key)
    }

    /// KeySwitch as REED defines its macro-instruction: ModUp of `d` (evaluation form, level
    /// `l`) and the inner product with `key`, left over `Q_l P` (reed.md Algorithm 3 returns
    /// BUF over the extended basis, the Appendix counts only the INTTs, NTTs and MACs, and
    /// Table 3 writes the row "30 -> 31"; ModDown is a macro-instruction of its own, 4.3).
    /// Used to time that macro-instruction alone; [`Evaluator::key_switch`] is the whole
    /// switch.
    pub fn key_switch_extended(
        &mut self,
        d: &B::Poly,
        level: usize,
        key: &SwitchingKey,
    ) -> Result<(B::Poly, B::Poly)> {
        self.traced("KeySwitchExt", level, |e| e.key_switch_ext(d, level, key))
    }

    /// Key switching up to and excluding ModDown: `(u0, u1)` over `Q_l P`, which ModDown
    /// divides by `P`. [`Evaluator::mul_relin_rescale`] divides by `P q_l` instead.
    fn key_switch_ext(
        &mut self,
        d: &B::Poly,
        level: usize,
        key: &SwitchingKey,
    ) -> Result<(B::Poly, B::Poly)> {
        Self::key_reaches(key, level)?;
        if self.dataflow == KeySwitchDataflow::Streamed {
            return self.key_switch_streamed(d, level, key);
        }
        let up = self.mod_up_operands(d, level, key.plan())?;
        let count = up.digits.len();
        Self::digits_match(key.plan(), level, count)?;
        let key_b = Self::key_digits_over(key, &up.qp, count)?;
        // ModUp then the inner product ([`Backend::mod_up_dot_pair_seeded_key`]).
        Ok(self.backend.mod_up_dot_pair_seeded_key(
            &up.coeff,
            d,
            &up.digits,
            &up.qp,
            &key_b,
            &key.seeds[..count],
        )?)
    }

    /// [`KeySwitchDataflow::Streamed`]: one extended digit at a time, accumulated.
    fn key_switch_streamed(
        &mut self,
        d: &B::Poly,
        level: usize,
        key: &SwitchingKey,
    ) -> Result<(B::Poly, B::Poly)> {
        let plan = key.plan();
        let qp = plan.qp_limbs(level);
        let mut acc: Option<(B::Poly, B::Poly)> = None;
        for (i, range) in plan.digits_at(level).into_iter().enumerate() {
            // Each digit is brought to coefficient form just before its extension (reed.md
            // Algorithm 3: a chiplet INTTs its limb, then extends it), so no coefficient-form
            // copy of the whole input stays live across the digits.
            let digit: Vec<usize> = range.collect();
            let mut sub = self.backend.select_limbs(d, &digit)?;
            self.backend.intt(&mut sub)?;
            let up = self.mod_up_digit(d, &sub, &qp)?;
            acc = Some(self.accumulate_digit(acc, &up, key, i, &qp)?);
        }
        acc.ok_or_else(|| CkksError::MissingKey(format!("the key has no digits at level {level}")))
    }

    /// Streamed inner product step: `acc + (up * b_i, up * a_i)` with digit `i` of `key` over
    /// `qp` (`b_i` loaded, `a_i` expanded from its seed), or the products alone when `acc` is
    /// `None`.
    fn accumulate_digit(
        &mut self,
        acc: Option<(B::Poly, B::Poly)>,
        up: &B::Poly,
        key: &SwitchingKey,
        i: usize,
        qp: &[usize],
    ) -> Result<(B::Poly, B::Poly)> {
        let b = self.backend.load_host(&key.b_over(i, qp)?, Kind::EvalKey)?;
        let a = self.backend.expand_seed(&key.seeds[i], qp, Kind::EvalKey)?;
        Ok(match acc {
            None => (self.backend.mul(up, &b)?, self.backend.mul(up, &a)?),
            Some((mut u0, mut u1)) => {
                self.backend.mul_acc(&mut u0, up, &b)?;
                self.backend.mul_acc(&mut u1, up, &a)?;
                (u0, u1)
            }
        })
    }

    /// A hoisted rotation's inner product, over `Q_l P` (before ModDown): the automorphism
    /// `g` of each extended digit, then the inner product with `key`. With
    /// [`KeySwitchDataflow::Streamed`] each rotated digit is multiplied into the accumulators
    /// as it is made, so only one is alive at a time.
    fn rotated_inner_product(
        &mut self,
        ups: &[B::Poly],
        g: u64,
        level: usize,
        key: &SwitchingKey,
    ) -> Result<(B::Poly, B::Poly)> {
        if self.dataflow != KeySwitchDataflow::Streamed {
            // The automorphism of each digit, then the inner product
            // ([`Backend::automorphism_dot_pair_seeded_key`]).
            let (qp, key_b) = Self::inner_product_operands(level, key, ups.len())?;
            let up_refs: Vec<&B::Poly> = ups.iter().collect();
            return Ok(self.backend.automorphism_dot_pair_seeded_key(
                &up_refs,
                g,
                &key_b,
                &key.seeds[..ups.len()],
                &qp,
            )?);
        }
        let plan = key.plan();
        Self::digits_match(plan, level, ups.len())?;
        let qp = plan.qp_limbs(level);
        let mut acc = None;
        for (i, u) in ups.iter().enumerate() {
            let rotated = self.backend.automorphism(u, g)?;
            acc = Some(self.accumulate_digit(acc, &rotated, key, i, &qp)?);
        }
        Ok(acc.expect("at least one digit"))
    }

    /// One digit of ModUp: `sub` holds the digit's limbs of `d` in coefficient form; they are
    /// extended to the rest of `qp` and joined with the digit's own limbs of `d`
    /// ([`Backend::extend_digit`]).
    fn mod_up_digit(&mut self, d: &B::Poly, sub: &B::Poly, qp: &[usize]) -> Result<B::Poly> {
        Ok(self.backend.extend_digit(sub, d, qp)?)
    }

    fn key_reaches(key: &SwitchingKey, level: usize) -> Result<()> {
        Self::plan_reaches(key.plan(), level)
    }

    /// `digits` extended digits are what `plan`'s key takes at `level` (and there is one).
    fn digits_match(plan: &KeySwitchPlan, level: usize, digits: usize) -> Result<()> {
        if plan.beta(level) != digits || digits == 0 {
            return Err(CkksError::MissingKey(format!(
                "the key has {} digits at level {level}, the input has {digits}",
                plan.beta(level)
            )));
        }
        Ok(())
    }

    fn plan_reaches(plan: &KeySwitchPlan, level: usize) -> Result<()> {
        if plan.level < level {
            return Err(CkksError::MissingKey(format!(
                "the key was made for levels up to {}, the ciphertext is at level {level}",
                plan.level
            )));
        }
        Ok(())
    }

    /// ModUp: each of the digits of `plan` that reach level `l` is taken from `d` (evaluation
    /// form, level `l`), brought to coefficient form, extended to the other chain limbs and
    /// the plan's special limbs by fast BConv, and transformed back; its own limbs are taken
    /// from `d` directly. Returns the extended digits over `Q_l` and the plan's `P`.
    pub fn mod_up(
        &mut self,
        d: &B::Poly,
        level: usize,
        plan: &KeySwitchPlan,
    ) -> Result<Vec<B::Poly>> {
        let up = self.mod_up_operands(d, level, plan)?;
        // Per digit `select_limbs` and `extend_digit` ([`Backend::mod_up_digits`]).
        Ok(self
            .backend
            .mod_up_digits(&up.coeff, d, &up.digits, &up.qp)?)
    }

    /// What ModUp of `d` (evaluation form, level `l`) with `plan` starts from.
    fn mod_up_operands(
        &mut self,
        d: &B::Poly,
        level: usize,
        plan: &KeySwitchPlan,
    ) -> Result<ModUpOperands<B::Poly>> {
        let qp = plan.qp_limbs(level);
        let mut dc = d.clone();
        self.backend.intt(&mut dc)?;
        let digits: Vec<Vec<usize>> = plan
            .digits_at(level)
            .into_iter()
            .map(|r| r.collect())
            .collect();
        Ok(ModUpOperands {
            coeff: dc,
            digits,
            qp,
        })
    }

    /// The `b` halves of `key`'s first `count` digits over the limbs `qp`.
    fn key_digits_over(key: &SwitchingKey, qp: &[usize], count: usize) -> Result<Vec<HostPoly>> {
        (0..count).map(|i| key.b_over(i, qp)).collect()
    }

    /// Inner product of extended digits with the key's `(b_i, a_i)` (each `a_i` expanded from
    /// its seed), as two fused dot products reduced once per coefficient, then ModDown: the
    /// key's special limbs are converted back with the exact centered BConv, subtracted, and
    /// the difference multiplied by `P^{-1}`.
    pub fn inner_product_mod_down(
        &mut self,
        ups: &[B::Poly],
        level: usize,
        key: &SwitchingKey,
    ) -> Result<(B::Poly, B::Poly)> {
        let (u0, u1) = self.inner_product(ups, level, key)?;
        self.mod_down_pair(&u0, &u1, level, key)
    }

    /// The inner product of extended digits with the key, over `Q_l P` (before ModDown).
    fn inner_product(
        &mut self,
        ups: &[B::Poly],
        level: usize,
        key: &SwitchingKey,
    ) -> Result<(B::Poly, B::Poly)> {
        let (qp, key_b) = Self::inner_product_operands(level, key, ups.len())?;
        let up_refs: Vec<&B::Poly> = ups.iter().collect();
        let (u0, u1) =
            self.backend
                .dot_pair_seeded_key(&up_refs, &key_b, &key.seeds[..ups.len()], &qp)?;
        Ok((u0, u1))
    }

    /// What the inner product of `count` extended digits at `level` with `key` reads: the
    /// limbs of `Q_l P` and the key's `b` halves over them, after checking that the key
    /// reaches the level with that many digits.
    fn inner_product_operands(
        level: usize,
        key: &SwitchingKey,
        count: usize,
    ) -> Result<(Vec<usize>, Vec<HostPoly>)> {
        Self::key_reaches(key, level)?;
        let plan = key.plan();
        Self::digits_match(plan, level, count)?;
        let qp = plan.qp_limbs(level);
        let key_b = Self::key_digits_over(key, &qp, count)?;
        Ok((qp, key_b))
    }

    /// ModDown of both accumulated parts: the key's special limbs converted back with the
    /// exact centered BConv, subtracted, and the difference multiplied by `P^{-1}`.
    fn mod_down_pair(
        &mut self,
        u0: &B::Poly,
        u1: &B::Poly,
        level: usize,
        key: &SwitchingKey,
    ) -> Result<(B::Poly, B::Poly)> {
        let special = &key.plan().special;
        let v0 = self.mod_down_special(u0, level, special)?;
        let v1 = self.mod_down_special(u1, level, special)?;
        Ok((v0, v1))
    }

    /// ModDown of one polynomial over `Q_l P` (`P` the product of the limbs `special`): its
    /// special limbs converted back with the exact centered BConv, subtracted, and the
    /// difference multiplied by `P^{-1}`: `round(u / P)` over `Q_l`.
    fn mod_down_special(
        &mut self,
        u: &B::Poly,
        level: usize,
        special: &[usize],
    ) -> Result<B::Poly> {
        let q_limbs = self.ctx.chain_limbs(level);
        let p_inv = self.special_product(level, special, true);
        self.divide_by_limbs(u, special, &q_limbs, &p_inv)
    }

    /// `P mod q_j` (or `P^{-1} mod q_j` when `inverse`) for each chain limb `j` of `level`,
    /// `P` the product of the limbs `special`.
    fn special_product(&self, level: usize, special: &[usize], inverse: bool) -> Vec<u64> {
        let moduli = self.ctx.ring().moduli();
        self.ctx
            .chain_limbs(level)
            .iter()
            .map(|&j| {
                let m = &moduli[j];
                special.iter().fold(1u64, |acc, &i| {
                    let p = moduli[i].value() % m.value();
                    let f = if inverse {
                        m.inv(p).expect("distinct primes")
                    } else {
                        p
                    };
                    m.mul(acc, f)
                })
            })
            .collect()
    }

    /// Hoisted rotations: one ModUp of `c1` shared by every rotation in `steps`. Each rotation
    /// applies its automorphism to the extended digits (automorphisms act limb-wise, so they
    /// commute with ModUp up to the overflow multiple of the fast BConv, a difference far
    /// below the precision), then does its own inner product and ModDown.
    pub fn rotate_hoisted(
        &mut self,
        a: &Ciphertext<B::Poly>,
        steps: &[i64],
        keys: &EvaluationKeys,
    ) -> Result<Vec<Ciphertext<B::Poly>>> {
        let Some((gs, plan)) = Self::hoisting_plan(a.level, steps, keys, self.ctx.params().n())?
        else {
            return Ok(Vec::new());
        };
        let ups = self.traced("HoistedModUp", a.level, |e| e.mod_up(&a.c1, a.level, &plan))?;
        let mut out = Vec::with_capacity(gs.len());
        for g in gs {
            let key = Self::galois_key(keys, g, a.level, "hoisted rotation")?;
            key.key_set().check("HRotHoisted", a.key_set)?;
            let (c0, c1) = self.traced("HRotHoisted", a.level, |e| {
                let (u0, u1) = e.rotated_inner_product(&ups, g, a.level, &key)?;
                let (u0, u1) = e.mod_down_pair(&u0, &u1, a.level, &key)?;
                let mut c0 = e.backend.automorphism(&a.c0, g)?;
                e.backend.add_assign(&mut c0, &u0)?;
                Ok((c0, u1))
            })?;
            out.push(Ciphertext {
                c0,
                c1,
                ..a.clone()
            });
        }
        Ok(out)
    }

    /// The Galois elements of `steps` and the one decomposition their keys share at `level`
    /// (`None` for no steps): one ModUp serves them all only if their keys decompose alike.
    fn hoisting_plan(
        level: usize,
        steps: &[i64],
        keys: &EvaluationKeys,
        n: usize,
    ) -> Result<Option<(Vec<u64>, KeySwitchPlan)>> {
        // Plans first, keys one at a time later: on-demand keys (dnum = L + 1 makes each one
        // 0.5 GB at N = 2^16) are then never all held at once.
        let gs = steps
            .iter()
            .map(|&r| {
                let g = galois_element(r, n)?;
                keys.galois_plan_for(g, level)
                    .map(|p| (g, p))
                    .ok_or_else(|| {
                        CkksError::MissingKey(format!(
                            "hoisted rotation by {r} needs the key for Galois element {g}"
                        ))
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        let Some((_, first)) = gs.first() else {
            return Ok(None);
        };
        let plan = (*first).clone();
        if gs
            .iter()
            .any(|(_, p)| p.digits_at(level) != plan.digits_at(level) || p.special != plan.special)
        {
            return Err(CkksError::MissingKey(
                "hoisted rotations need keys with one decomposition (one ModUp is shared)".into(),
            ));
        }
        for (_, p) in &gs {
            Self::plan_reaches(p, level)?;
        }
        Ok(Some((gs.into_iter().map(|(g, _)| g).collect(), plan)))
    }

    /// The key for Galois element `g` at `level` (`what` names the operation in the error).
    fn galois_key<'k>(
        keys: &'k EvaluationKeys,
        g: u64,
        level: usize,
        what: &str,
    ) -> Result<crate::KeyRef<'k>> {
        keys.galois_for(g, level)?.ok_or_else(|| {
            CkksError::MissingKey(format!("{what} needs the key for Galois element {g}"))
        })
    }

    /// The ciphertext-ciphertext product before relinearisation: `(d0, d1, d2)` with
    /// `d0 = a0 b0`, `d1 = a0 b1 + a1 b0`, `d2 = a1 b1`, decryptable with `(1, s, s^2)`. The
    /// scales multiply; HMult is this followed by a key switch of `d2`.
    pub fn tensor(
        &mut self,
        a: &Ciphertext<B::Poly>,
        b: &Ciphertext<B::Poly>,
    ) -> Result<[B::Poly; 3]> {
        Self::same_level("Tensor", a.level, b.level)?;
        a.key_set.check("Tensor", b.key_set)?;
        self.traced("Tensor", a.level, |e| e.tensor_parts(a, b))
    }

    /// [`Evaluator::tensor`] inside another traced operation.
    fn tensor_parts(
        &mut self,
        a: &Ciphertext<B::Poly>,
        b: &Ciphertext<B::Poly>,
    ) -> Result<[B::Poly; 3]> {
        let d0 = self.backend.mul(&a.c0, &b.c0)?;
        let mut d1 = self.backend.mul(&a.c0, &b.c1)?;
        self.backend.mul_acc(&mut d1, &a.c1, &b.c0)?;
        let d2 = self.backend.mul(&a.c1, &b.c1)?;
        Ok([d0, d1, d2])
    }

    /// HMult: ciphertext times ciphertext with relinearisation; the scales multiply.
    pub fn mul_relin(
        &mut self,
        a: &Ciphertext<B::Poly>,
        b: &Ciphertext<B::Poly>,
        keys: &EvaluationKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        Self::same_level("HMult", a.level, b.level)?;
        a.key_set.check("HMult", b.key_set)?;
        let rlk = keys
            .relin_for(a.level)
            .ok_or_else(|| CkksError::MissingKey("relinearisation key".into()))?;
        rlk.key_set().check("HMult", a.key_set)?;
        let (c0, c1) = self.traced("HMult", a.level, |e| {
            let [mut d0, mut d1, d2] = e.tensor_parts(a, b)?;
            let (u0, u1) = e.key_switch(&d2, a.level, rlk)?;
            e.backend.add_assign(&mut d0, &u0)?;
            e.backend.add_assign(&mut d1, &u1)?;
            Ok((d0, d1))
        })?;
        Ok(Ciphertext {
            c0,
            c1,
            level: a.level,
            scale: a.scale * b.scale,
            slots: a.slots.max(b.slots),
            key_set: a.key_set,
        })
    }

    /// HMult then rescale, as [`Evaluator::mul_relin`] followed by [`Evaluator::rescale`],
    /// with ModDown fused into the rescale: the key-switched `(u0, u1)` over `Q_l P` and the
    /// tensor parts `(d0, d1)` are divided by `P q_l` at once (by `P q_l q_(l-1)` with
    /// double-prime rescaling). With `x = P d + u` the result on each kept limb is
    /// `round(x / (P q_l)) = (u - [x]_(P q_l)) (P q_l)^-1 + d q_l^-1`, and `[x]_(P q_l)` needs
    /// `x` only on the dropped limbs (where `P d` vanishes on the `P` limbs). One exact BConv
    /// and one NTT of the kept limbs per part replace ModDown's and the rescale's: 2 x 24
    /// limb NTTs fewer at `ark`'s top level. The result equals the two-step one up to one
    /// unit of rounding.
    pub fn mul_relin_rescale(
        &mut self,
        a: &Ciphertext<B::Poly>,
        b: &Ciphertext<B::Poly>,
        keys: &EvaluationKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        Self::same_level("HMult", a.level, b.level)?;
        a.key_set.check("HMult", b.key_set)?;
        let r = self.ctx.params().primes_per_rescale();
        if a.level < r {
            return Err(CkksError::OutOfLevels {
                op: "rescale",
                needed: r,
                level: a.level,
            });
        }
        let rlk = keys
            .relin_for(a.level)
            .ok_or_else(|| CkksError::MissingKey("relinearisation key".into()))?;
        rlk.key_set().check("HMult", a.key_set)?;
        let (c0, c1) = self.traced("HMultRescale", a.level, |e| {
            let [d0, d1, d2] = e.tensor_parts(a, b)?;
            let (u0, u1) = e.key_switch_ext(&d2, a.level, rlk)?;
            Ok((
                e.mod_down_rescale(&d0, &u0, a.level, rlk)?,
                e.mod_down_rescale(&d1, &u1, a.level, rlk)?,
            ))
        })?;
        Ok(Ciphertext {
            c0,
            c1,
            level: a.level - r,
            scale: a.scale * b.scale / self.ctx.params().rescale_divisor(a.level),
            slots: a.slots.max(b.slots),
            key_set: a.key_set,
        })
    }

    /// `round((P d + u) / (P q_top))` over the limbs below the rescale's primes `q_top`
    /// (see [`Evaluator::mul_relin_rescale`]); `d` is over `Q_l`, `u` over `Q_l P`.
    fn mod_down_rescale(
        &mut self,
        d: &B::Poly,
        u: &B::Poly,
        level: usize,
        key: &SwitchingKey,
    ) -> Result<B::Poly> {
        let moduli = self.ctx.ring().moduli();
        let r = self.ctx.params().primes_per_rescale();
        let keep = self.ctx.chain_limbs(level - r);
        let all = self.ctx.chain_limbs(level);
        let top = all[keep.len()..].to_vec();
        let special = key.plan().special.clone();
        // Residues of products of ring moduli, modulo the ring modulus `j`.
        let product_mod = |j: usize, of: &[usize]| {
            let m = &moduli[j];
            of.iter()
                .fold(1u64, |acc, &i| m.mul(acc, moduli[i].value() % m.value()))
        };
        let inverse =
            |j: usize, of: &[usize]| moduli[j].inv(product_mod(j, of)).expect("distinct primes");
        // x on the dropped limbs: u on P; P d + u on the rescale's primes.
        let p_mod_top: Vec<u64> = top.iter().map(|&j| product_mod(j, &special)).collect();
        let d_top = self.backend.select_limbs(d, &top)?;
        let mut x_top = self.backend.mul_scalar(&d_top, &p_mod_top)?;
        let u_top = self.backend.select_limbs(u, &top)?;
        self.backend.add_assign(&mut x_top, &u_top)?;
        let u_special = self.backend.select_limbs(u, &special)?;
        let drop: Vec<usize> = special.iter().chain(&top).copied().collect();
        let mut low = self.backend.concat(&[&u_special, &x_top], &drop)?;
        self.backend.intt(&mut low)?;
        let mut conv = self
            .backend
            .bconv(&low, &keep, ConversionMode::ExactCentered)?;
        self.backend.ntt(&mut conv)?;
        let u_keep = self.backend.select_limbs(u, &keep)?;
        let inv_all: Vec<u64> = keep.iter().map(|&j| inverse(j, &drop)).collect();
        let inv_top: Vec<u64> = keep.iter().map(|&j| inverse(j, &top)).collect();
        let mut from_u = self.backend.sub_mul_scalar(&u_keep, &conv, &inv_all)?;
        let d_keep = self.backend.select_limbs(d, &keep)?;
        let from_d = self.backend.mul_scalar(&d_keep, &inv_top)?;
        self.backend.add_assign(&mut from_u, &from_d)?;
        Ok(from_u)
    }

    fn apply_galois(
        &mut self,
        op: &'static str,
        a: &Ciphertext<B::Poly>,
        g: u64,
        keys: &EvaluationKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        let key = keys.galois_for(g, a.level)?.ok_or_else(|| {
            CkksError::MissingKey(format!("{op} needs the key for Galois element {g}"))
        })?;
        key.key_set().check(op, a.key_set)?;
        let (c0, c1) = self.traced(op, a.level, |e| {
            let mut c0 = e.backend.automorphism(&a.c0, g)?;
            let c1 = e.backend.automorphism(&a.c1, g)?;
            let (u0, u1) = e.key_switch(&c1, a.level, &key)?;
            e.backend.add_assign(&mut c0, &u0)?;
            Ok((c0, u1))
        })?;
        Ok(Ciphertext {
            c0,
            c1,
            ..a.clone()
        })
    }

    /// Key switching of a whole ciphertext: `(c0 + u0, u1)` with `(u0, u1)` the switch of
    /// `c1` by `key`, so a ciphertext under the key's source secret becomes one under its
    /// target secret (the messages are unchanged).
    pub fn switch_key(
        &mut self,
        a: &Ciphertext<B::Poly>,
        key: &SwitchingKey,
    ) -> Result<Ciphertext<B::Poly>> {
        key.key_set().check("KeySwitch", a.key_set)?;
        let (c0, c1) = self.traced("KeySwitch", a.level, |e| {
            let (u0, u1) = e.key_switch(&a.c1, a.level, key)?;
            Ok((e.backend.add(&a.c0, &u0)?, u1))
        })?;
        Ok(Ciphertext {
            c0,
            c1,
            ..a.clone()
        })
    }

    /// HRot: rotates the slots left by `steps` (negative: right).
    ///
    /// ```
    /// use tessera_backend::CpuBackend;
    /// use tessera_ckks::{decrypt, CkksContext, Evaluator, KeyGenerator, Parameters};
    /// use tessera_math::sampling::Seed;
    /// let ctx = CkksContext::new(Parameters::preset("test-small")?)?;
    /// let mut kg = KeyGenerator::from_seed(&ctx, &Seed([1; 32]))?;
    /// let sk = kg.secret_key()?;
    /// let keys = kg.evaluation_keys(&sk, &[1], false)?; // relinearisation + rotation by 1
    /// let (l, s) = (ctx.params().max_level(), ctx.params().default_scale());
    /// let x = [1.0, 2.0, 3.0, 4.0];
    /// let ct = kg.encrypt_sk(&ctx.encode_real(&x, 4, l, s)?, &sk)?;
    /// let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone()))?;
    /// let c = ev.load(&ct)?;
    /// // (x * x) rotated left by one slot: HMult (relinearise, rescale), then HRot.
    /// let sq = ev.mul_relin_rescale(&c, &c, &keys)?;
    /// let y = ev.rotate(&sq, 1, &keys)?;
    /// let out = ctx.decode(&decrypt(&ev.store(&y)?, &sk)?)?;
    /// for (o, want) in out.iter().zip([4.0, 9.0, 16.0, 1.0]) {
    ///     assert!((o.re - want).abs() < 1e-3);
    /// }
    /// # Ok::<(), tessera_ckks::CkksError>(())
    /// ```
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

    /// ark.md Eq. 8, `sum_(i=0..m) PMult(HRot(x, i r), P_i)` with `m + 1 = plaintexts.len()`.
    /// With `multi_hop` it is ark.md Algorithm 4: the running rotation is rotated by `r` again
    /// at every step, so only the key for `r` is needed; without, each term rotates `x` by
    /// `i r` directly (one key per distinct `i r`). Same result within precision.
    pub fn rotate_pmult_sum(
        &mut self,
        x: &Ciphertext<B::Poly>,
        r: i64,
        plaintexts: &[Plaintext],
        keys: &EvaluationKeys,
        multi_hop: bool,
    ) -> Result<Ciphertext<B::Poly>> {
        let (first, rest) =
            plaintexts
                .split_first()
                .ok_or_else(|| CkksError::InvalidParameter {
                    name: "plaintexts",
                    value: "0".into(),
                    allowed: "at least one plaintext".into(),
                })?;
        let mut sum = self.mul_plain(x, first)?;
        let mut t = x.clone();
        for (i, p) in rest.iter().enumerate() {
            let rotated = if multi_hop {
                t = self.rotate(&t, r, keys)?;
                t.clone()
            } else {
                self.rotate(x, (i as i64 + 1) * r, keys)?
            };
            let term = self.mul_plain(&rotated, p)?;
            self.add_assign(&mut sum, &term)?;
        }
        Ok(sum)
    }

    /// ark.md Eq. 9, `sum_(i=0..m) HRot(x_i, i r)`. With `multi_hop` it is ark.md Algorithm 5
    /// (Horner: `s <- HRot(s, r) + x_i` from `i = m` down), needing only the key for `r`;
    /// without, each `x_i` is rotated by `i r` directly.
    pub fn rotate_sum(
        &mut self,
        xs: &[Ciphertext<B::Poly>],
        r: i64,
        keys: &EvaluationKeys,
        multi_hop: bool,
    ) -> Result<Ciphertext<B::Poly>> {
        let (last, _) = xs.split_last().ok_or_else(|| CkksError::InvalidParameter {
            name: "ciphertexts",
            value: "0".into(),
            allowed: "at least one ciphertext".into(),
        })?;
        if multi_hop {
            let mut s = last.clone();
            for x in xs[..xs.len() - 1].iter().rev() {
                s = self.rotate(&s, r, keys)?;
                self.add_assign(&mut s, x)?;
            }
            Ok(s)
        } else {
            let mut s = xs[0].clone();
            for (i, x) in xs.iter().enumerate().skip(1) {
                let rot = self.rotate(x, i as i64 * r, keys)?;
                self.add_assign(&mut s, &rot)?;
            }
            Ok(s)
        }
    }
}
