//! Arithmetic at one scale per level, and the level rule, for a program whose ciphertexts
//! meet at many levels (the DNN's weights, activations and errors all combine with each
//! other).
//!
//! **Why one scale per level.** Adding two ciphertexts needs equal scales; a product of two
//! ciphertexts at scale `S_l` rescaled by the divisor `q_l` lands at `S_l^2 / q_l`. Fixing
//! `S_(l-1) = S_l^2 / q_l` down the chain makes every product land on its level's scale with
//! no correction; plaintext and constant products are encoded so that they land there too,
//! and a ciphertext brought down to a lower level is multiplied by 1 encoded the same way (a
//! level drop alone would keep the higher level's scale). The top scale is the fixed point of
//! the ladder (`S_base = S_top`), so a bootstrapping, which returns its output at its input's
//! scale, closes the loop: its input at the base level comes out at the top at `S_top`.
//!
//! **Level rule** ([`crate::levels::LevelBudget`]): before an operation consumes `need`
//! levels of a ciphertext, the ciphertext is bootstrapped (real-message bootstrapping) if
//! fewer than `need` remain above the base. Nothing else places a bootstrapping.

use crate::error::{ProgramError, Result};
use crate::levels::LevelBudget;
use crate::setup::{bootstrap_real, Pair, Setup};
use tessera_backend::Backend;
use tessera_ckks::{Ciphertext, Evaluator};
use tessera_math::RnsPoly;

/// Relative scale error tolerated when a result is relabelled with its level's scale.
const SCALE_SLACK: f64 = 1e-9;

/// The scale of every level and the operations that keep ciphertexts on them.
pub struct Arith<'a, B: Backend> {
    /// Keys, circuit and context.
    pub setup: &'a Setup,
    /// The evaluator.
    pub ev: &'a mut Evaluator<B>,
    budget: LevelBudget,
    /// `scales[l]`: the scale at chain index `l` (0 where no ciphertext lives).
    scales: Vec<f64>,
    top: usize,
    /// Bootstrappings performed.
    pub boots: usize,
}

/// The ladder of `setup`: `scales[l]` at each chain index from the top (the bootstrapping's
/// output level) down to the base, with `S_base = S_top`.
pub fn ladder(setup: &Setup) -> Vec<f64> {
    let params = setup.ctx.params();
    let budget = setup.budget();
    let top = setup.boot.output_level();
    let steps = budget.after_boot;
    // s_top (2^n - 1) = sum_i 2^(n - 1 - i) log2 q_(top - i r): the fixed point, in log2.
    let mut acc = 0.0;
    let mut weight = 1.0;
    let mut l = budget.after(top, steps.saturating_sub(1));
    for _ in 0..steps {
        acc += weight * params.rescale_divisor(l).log2();
        weight *= 2.0;
        l += budget.primes_per_level;
    }
    let s_top = if steps == 0 {
        params.default_scale()
    } else {
        (acc / (weight - 1.0)).exp2()
    };
    let mut scales = vec![0.0; top + 1];
    let mut l = top;
    let mut s = s_top;
    scales[l] = s;
    for _ in 0..steps {
        s = s * s / params.rescale_divisor(l);
        l = budget.after(l, 1);
        scales[l] = s;
    }
    scales
}

impl<'a, B: Backend> Arith<'a, B> {
    /// The arithmetic of `setup` on `ev`.
    pub fn new(setup: &'a Setup, ev: &'a mut Evaluator<B>) -> Self {
        Self {
            budget: setup.budget(),
            scales: ladder(setup),
            top: setup.boot.output_level(),
            setup,
            ev,
            boots: 0,
        }
    }

    /// The top level (fresh encryptions and bootstrapping outputs).
    pub fn top(&self) -> usize {
        self.top
    }

    /// The scale of chain index `level`.
    pub fn scale(&self, level: usize) -> f64 {
        self.scales[level]
    }

    /// Encrypts `values` (the circuit's slot count) at `level` and the ladder's scale there.
    pub fn encrypt(
        setup: &mut Setup,
        scales: &[f64],
        values: &[f64],
        level: usize,
    ) -> Result<Ciphertext<RnsPoly>> {
        let slots = setup.boot.slots();
        let pt = setup.ctx.encode_real(values, slots, level, scales[level])?;
        Ok(setup.kg.encrypt_sk(&pt, &setup.sk)?)
    }

    /// `ct` relabelled with its level's scale, after checking it is within [`SCALE_SLACK`].
    fn canon(&self, ct: Ciphertext<B::Poly>) -> Result<Ciphertext<B::Poly>> {
        let want = self.scales[ct.level];
        if !(want > 0.0 && (ct.scale / want - 1.0).abs() <= SCALE_SLACK) {
            return Err(ProgramError::Unsupported(format!(
                "dnn-train: scale 2^{:.6} at level {} is off the ladder (2^{:.6})",
                ct.scale.log2(),
                ct.level,
                want.log2()
            )));
        }
        Ok(Ciphertext { scale: want, ..ct })
    }

    /// The encoding scale that puts a product with a ciphertext at `level` (its ladder scale)
    /// on the ladder one level down.
    fn factor_scale(&self, level: usize) -> f64 {
        let next = self.budget.after(level, 1);
        self.scales[next] * self.setup.ctx.params().rescale_divisor(level) / self.scales[level]
    }

    /// Bootstraps `ct` if fewer than `need` levels remain (the rule); first brought to the
    /// base level at the base's scale.
    pub fn ensure(&mut self, ct: &mut Ciphertext<B::Poly>, need: usize) -> Result<()> {
        if !self.budget.must_boot(ct.level, need) {
            return Ok(());
        }
        let low = self.lower(ct, self.budget.base)?;
        let out = bootstrap_real(self.setup, self.ev, &low)?;
        self.boots += 1;
        // The bootstrapping returns the base scale, which is the top's (the ladder's fixed
        // point) up to rounding.
        *ct = self.canon(out)?;
        Ok(())
    }

    /// Bootstraps `ct` unless it is at the top: the rule for a stage that needs every level
    /// the set offers (the next SGD step, for the weights).
    pub fn refresh(&mut self, ct: &mut Ciphertext<B::Poly>) -> Result<()> {
        let all = self.budget.after_boot;
        self.ensure(ct, all)
    }

    /// `ct` at chain index `level` (at or below its own) on the ladder: a drop to the level
    /// above, then a product by 1 encoded to land on `level`'s scale.
    pub fn lower(&mut self, ct: &Ciphertext<B::Poly>, level: usize) -> Result<Ciphertext<B::Poly>> {
        if ct.level == level {
            return Ok(ct.clone());
        }
        let above = level + self.budget.primes_per_level;
        if ct.level < above {
            return Err(ProgramError::Unsupported(format!(
                "dnn-train: cannot bring a ciphertext at level {} to {level}",
                ct.level
            )));
        }
        let x = if ct.level > above {
            self.ev.drop_levels(ct, ct.level - above)?
        } else {
            ct.clone()
        };
        let x = Ciphertext {
            scale: self.scales[above],
            ..x
        };
        let f = self.factor_scale(above);
        let y = self.ev.mul_const(&x, 1.0, f)?;
        let y = self.ev.rescale(&y)?;
        self.canon(y)
    }

    /// `a` and `b` at the lower of their levels.
    fn align(&mut self, a: &Ciphertext<B::Poly>, b: &Ciphertext<B::Poly>) -> Result<Pair<B>> {
        let l = a.level.min(b.level);
        Ok((self.lower(a, l)?, self.lower(b, l)?))
    }

    /// `a b` (HMult, relinearized, rescaled): one level below the lower operand. Each
    /// operand is bootstrapped first if it has no level left (the rule with `need = 1`).
    pub fn mul(
        &mut self,
        a: &mut Ciphertext<B::Poly>,
        b: &mut Ciphertext<B::Poly>,
    ) -> Result<Ciphertext<B::Poly>> {
        self.ensure(a, 1)?;
        self.ensure(b, 1)?;
        let (x, y) = self.align(a, b)?;
        let p = self.ev.mul_relin_rescale(&x, &y, &self.setup.keys.eval)?;
        self.canon(p)
    }

    /// `a * values` (PMult by a plaintext, rescaled): one level below `a`.
    pub fn mul_plain(
        &mut self,
        a: &mut Ciphertext<B::Poly>,
        values: &[f64],
    ) -> Result<Ciphertext<B::Poly>> {
        self.ensure(a, 1)?;
        let f = self.factor_scale(a.level);
        let pt = self
            .setup
            .ctx
            .encode_real(values, self.setup.boot.slots(), a.level, f)?;
        let p = self.ev.mul_plain(a, &pt)?;
        let p = self.ev.rescale(&p)?;
        self.canon(p)
    }

    /// `a + values` (a plaintext at `a`'s level and scale).
    pub fn add_plain(
        &mut self,
        a: &Ciphertext<B::Poly>,
        values: &[f64],
    ) -> Result<Ciphertext<B::Poly>> {
        let pt = self
            .setup
            .ctx
            .encode_real(values, self.setup.boot.slots(), a.level, a.scale)?;
        Ok(self.ev.add_plain(a, &pt)?)
    }

    /// `a + c` in every slot.
    pub fn add_const(&mut self, a: &Ciphertext<B::Poly>, c: f64) -> Result<Ciphertext<B::Poly>> {
        Ok(self.ev.add_const(a, c)?)
    }

    /// `a + b` at the lower level.
    pub fn add(
        &mut self,
        a: &Ciphertext<B::Poly>,
        b: &Ciphertext<B::Poly>,
    ) -> Result<Ciphertext<B::Poly>> {
        let (x, y) = self.align(a, b)?;
        Ok(self.ev.add(&x, &y)?)
    }

    /// `a - b` at the lower level.
    pub fn sub(
        &mut self,
        a: &Ciphertext<B::Poly>,
        b: &Ciphertext<B::Poly>,
    ) -> Result<Ciphertext<B::Poly>> {
        let (x, y) = self.align(a, b)?;
        Ok(self.ev.sub(&x, &y)?)
    }

    /// `x + rot(x, s)` for each `s` in turn (a rotate-and-sum or a copy, [`super::packing`]).
    pub fn rotate_sum(
        &mut self,
        x: &Ciphertext<B::Poly>,
        steps: &[i64],
    ) -> Result<Ciphertext<B::Poly>> {
        let mut x = x.clone();
        for &s in steps {
            let r = self.ev.rotate(&x, s, &self.setup.keys.eval)?;
            x = self.ev.add(&x, &r)?;
        }
        Ok(x)
    }
}
