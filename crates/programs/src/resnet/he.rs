//! The encrypted implementation of [`SlotOps`]: the layers of [`super::layers`] on CKKS
//! ciphertexts of any backend (CPU, or the trace backend for the simulator).
//!
//! * Products by plaintext vectors are encoded at the divisor of the rescale that ends their
//!   sum, so every layer keeps the input's scale.
//! * AppReLU `x (1 + p(x)) / 2` on values in units of `B`: the pieces of the composite sign
//!   one by one (the last one folded into `(1 + p) / 2` and encoded at the scale of the final
//!   product's rescale), then one HMult by `x`.
//! * Bootstrapping (real-message, `crate::setup::bootstrap_real_periodic`: the sparse circuit
//!   of the layout's period, FHE-MP-CNN's 2^14 / 2^13 / 2^12 slots in stages 1 / 2 / 3) by
//!   the programs' level rule
//!   ([`crate::levels::LevelBudget`]): the stages are a convolution (2 levels), a shortcut,
//!   pooling or FC (1 each), and each piece of the sign (its depth; the last plus the HMult).
//!   A stage whose input has fewer levels left is preceded by a bootstrapping, so the count
//!   follows the parameter set.

use super::slots::{rotation_step, SlotOps};
use crate::error::Result;
use crate::plain_memo::{PlainMemo, PLAIN_MEMO_BYTES};
use crate::setup::{bootstrap_real_periodic, drop_to, Setup};
use std::collections::BTreeMap;
use std::sync::Arc;
use tessera_backend::Backend;
use tessera_ckks::circuits::linear::{EncodedDiagonal, LinearTransform};
use tessera_ckks::circuits::polynomial::{evaluate_with, EvalOptions, OutputScale, Polynomial};
use tessera_ckks::circuits::sign::CompositeSign;
use tessera_ckks::{Ciphertext, Evaluator};

/// The network's ciphertexts on backend `B`.
pub struct Encrypted<'a, B: Backend> {
    setup: &'a Setup,
    /// The evaluator.
    pub ev: Evaluator<B>,
    /// The sign's pieces, the last as `(1 + p) / 2`.
    pieces: Vec<Polynomial>,
    /// Bootstrappings so far.
    pub boots: usize,
    /// Bootstrappings so far by the slots of the circuit that ran them.
    pub boots_at: BTreeMap<usize, usize>,
    /// The products' and sums' plaintexts, encoded once per run (they do not depend on the
    /// image), in OF-Limb form when the circuit's `of_limb` option is on.
    pub plains: PlainMemo,
}

impl<'a, B: Backend> Encrypted<'a, B> {
    /// Ciphertexts of `setup` evaluated by `ev`, AppReLU by `sign`.
    pub fn new(setup: &'a Setup, ev: Evaluator<B>, sign: &CompositeSign) -> Self {
        let mut pieces = sign.pieces().to_vec();
        if let Some(last) = pieces.last_mut() {
            *last = last.scaled(0.5).plus_constant(0.5);
        }
        Self {
            setup,
            ev,
            pieces,
            boots: 0,
            boots_at: BTreeMap::new(),
            plains: PlainMemo::new(PLAIN_MEMO_BYTES),
        }
    }

    /// Levels the stage of piece `i` needs (its depth; the last one also the HMult by `x`).
    pub fn piece_levels(&self, i: usize) -> usize {
        self.pieces[i].depth() + usize::from(i + 1 == self.pieces.len())
    }

    /// The plaintext of `v` at `x`'s slots and level and at `scale`, from the memo.
    fn plain(
        &mut self,
        x: &Ciphertext<B::Poly>,
        v: &[f64],
        scale: f64,
    ) -> Result<Arc<EncodedDiagonal>> {
        let of_limb = self.setup.boot.parameters().of_limb;
        self.plains
            .encode(&self.setup.ctx, v, x.slots, x.level, scale, of_limb)
    }
}

impl<B: Backend> SlotOps for Encrypted<'_, B> {
    type Ct = Ciphertext<B::Poly>;

    fn slots(&self) -> usize {
        self.setup.boot.slots()
    }

    fn rotate(&mut self, x: &Self::Ct, r: i64) -> Result<Self::Ct> {
        match rotation_step(r, x.slots) {
            None => Ok(x.clone()),
            Some(step) => Ok(self.ev.rotate(x, step, &self.setup.keys.eval)?),
        }
    }

    fn rotate_many(&mut self, x: &Self::Ct, rs: &[i64]) -> Result<Vec<Self::Ct>> {
        let steps: Option<Vec<i64>> = rs.iter().map(|&r| rotation_step(r, x.slots)).collect();
        match steps {
            Some(steps) if !steps.is_empty() => {
                Ok(self.ev.rotate_hoisted(x, &steps, &self.setup.keys.eval)?)
            }
            // A zero step among them (or none): one at a time.
            _ => rs.iter().map(|&r| self.rotate(x, r)).collect(),
        }
    }

    fn add(&mut self, a: &Self::Ct, b: &Self::Ct) -> Result<Self::Ct> {
        let at = a.level.min(b.level);
        let (a, b) = (drop_to(&mut self.ev, a, at)?, drop_to(&mut self.ev, b, at)?);
        Ok(self.ev.add(&a, &b)?)
    }

    fn mul_plain(&mut self, x: &Self::Ct, v: &[f64]) -> Result<Self::Ct> {
        let scale = self.setup.ctx.params().rescale_divisor(x.level);
        let pt = self.plain(x, v, scale)?;
        Ok(pt.mul(&mut self.ev, x)?)
    }

    fn rescale(&mut self, x: &Self::Ct) -> Result<Self::Ct> {
        Ok(self.ev.rescale(x)?)
    }

    fn add_plain(&mut self, x: &Self::Ct, v: &[f64]) -> Result<Self::Ct> {
        let pt = self.plain(x, v, x.scale)?;
        Ok(pt.add(&mut self.ev, x)?)
    }

    fn linear(&mut self, x: &Self::Ct, m: &LinearTransform) -> Result<Self::Ct> {
        Ok(m.apply(&mut self.ev, x, &self.setup.keys.eval)?)
    }

    fn app_relu(&mut self, x: &Self::Ct, period: usize) -> Result<Self::Ct> {
        let budget = self.setup.budget();
        let params = self.setup.ctx.params().clone();
        let x = self.ensure_levels(x, self.piece_levels(0), period)?;
        let mut h = x.clone();
        let last = self.pieces.len() - 1;
        for i in 0..self.pieces.len() {
            h = self.ensure_levels(&h, self.piece_levels(i), period)?;
            let p = &self.pieces[i];
            let output_scale = if i == last {
                let at = budget.after(h.level, p.depth()).min(x.level);
                OutputScale::Exact(params.rescale_divisor(at))
            } else {
                OutputScale::Input
            };
            let opts = EvalOptions {
                depth: None,
                output_scale,
            };
            h = evaluate_with(&mut self.ev, &h, p, &self.setup.keys.eval, opts)?;
        }
        let at = h.level.min(x.level);
        let (h, xd) = (
            drop_to(&mut self.ev, &h, at)?,
            drop_to(&mut self.ev, &x, at)?,
        );
        let y = self.ev.mul_relin_rescale(&h, &xd, &self.setup.keys.eval)?;
        Ok(Ciphertext {
            scale: x.scale,
            ..y
        })
    }

    fn ensure_levels(&mut self, x: &Self::Ct, need: usize, period: usize) -> Result<Self::Ct> {
        if !self.setup.budget().must_boot(x.level, need) {
            return Ok(x.clone());
        }
        self.boots += 1;
        let slots = self.setup.circuit_for(period)?.slots();
        *self.boots_at.entry(slots).or_default() += 1;
        bootstrap_real_periodic(self.setup, &mut self.ev, x, period)
    }
}
