//! The BSGS sum of [`super::linear::apply`] with double hoisting: baby steps, plaintext
//! products and giant-step rotations over `Q_l P` ([`crate::ExtCiphertext`]), one ModDown per
//! part at the end (the evaluator's `extended` module says why this is exact).

use super::linear::{diagonal, BsgsPlan, Encoding};
use crate::encoder::DiagonalMatrix;
use crate::error::Result;
use crate::evaluator::{Evaluator, ExtCiphertext};
use crate::keys::{Ciphertext, EvaluationKeys};
use crate::CkksContext;
use std::collections::BTreeMap;
use tessera_backend::Backend;

/// `M x` before the rescale: `sum_g rot_g(sum_b rot_-g(d_(g+b)) * rot_b(x))` with the
/// diagonals encoded at scale `q_l`; `steps` are the plan's non-zero baby steps (at least
/// one), and the keys of the baby and giant steps share their special limbs.
#[allow(clippy::too_many_arguments)]
pub(crate) fn bsgs_sum<B: Backend>(
    ev: &mut Evaluator<B>,
    ctx: &CkksContext,
    m: &DiagonalMatrix,
    x: &Ciphertext<B::Poly>,
    keys: &EvaluationKeys,
    plan: &BsgsPlan,
    steps: &[i64],
    q_l: f64,
    enc: Encoding<'_>,
) -> Result<Ciphertext<B::Poly>> {
    let level = x.level;
    let (x_ext, rotated) = ev.rotate_hoisted_ext(x, steps, keys)?;
    let special = x_ext.special.clone();
    let baby: BTreeMap<usize, &ExtCiphertext<B::Poly>> = std::iter::once((0usize, &x_ext))
        .chain(steps.iter().map(|&b| b as usize).zip(rotated.iter()))
        .collect();
    let mut total: Option<ExtCiphertext<B::Poly>> = None;
    for (&g, ks) in &plan.giant {
        let g_mod = g.rem_euclid(m.s as i64) as usize;
        let pts = ks
            .iter()
            .map(|&(k, _)| diagonal(ctx, m, enc, k, g_mod, level, q_l, &special))
            .collect::<Result<Vec<_>>>()?;
        let terms: Vec<_> = ks
            .iter()
            .zip(&pts)
            .map(|(&(_, b), pt)| (baby[&b], pt.ext_factor()))
            .collect();
        let acc = ev.mul_plain_ext_sum(&terms)?;
        let acc = if g == 0 {
            acc
        } else {
            ev.rotate_ext(&acc, g, keys)?
        };
        total = Some(match total {
            None => acc,
            Some(mut t) => {
                ev.add_ext_assign(&mut t, &acc)?;
                t
            }
        });
    }
    let total = total.ok_or_else(|| crate::CkksError::InvalidParameter {
        name: "matrix",
        value: "no diagonals".into(),
        allowed: "at least one non-zero diagonal".into(),
    })?;
    ev.mod_down_ext(&total)
}
