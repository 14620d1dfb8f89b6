//! The sort encrypted: all `n = 2^k` values in one ciphertext of `n` slots (sparse packing),
//! the network of [`super::network`], the comparison by a composite sign
//! (`tessera_ckks::circuits::sign`), generic over the backend.
//!
//! One step at distance `j` from the state `x` (level `l`, scale `s_x`):
//! 1. `d = x - HRot(x, j)` (no level);
//! 2. `mx = left x`, `m1 = (f / 2) d`, `m2 = d / 2` at left slots (3 PMult, level `l - 1`,
//!    scale `s_x`; [`super::network::Step`]);
//! 3. `s = sgn(d)`, the composite's pieces one by one (3 levels each for degree 7);
//! 4. `t = s m1 + m2` (1 HMult): `t = c d` at left slots, `c` the flipped comparison;
//! 5. `x = (mx - t) + HRot(mx - 2 m2 + t, -j)`: the minimum stays, the maximum moves right by
//!    `j` (1 HRot).
//!
//! Scales are exact: the last piece's output is encoded at the divisor of the HMult's rescale,
//! so `t` lands on `s_x`.
//!
//! Bootstrapping ([`crate::levels::LevelBudget`]'s rule, real-message bootstrapping): the state
//! `x` is a stage of 2 levels (steps 2 and 4), each piece of the sign a stage of its depth (the
//! last one plus the HMult of step 4); the ciphertext entering a stage is bootstrapped if fewer
//! levels remain. A step's operations depend only on the state's level when it starts (and on
//! the rotation distance), which [`super::record`] uses for a steady-state window.

use super::network::{steps, Step};
use crate::error::Result;
use crate::setup::{bootstrap_real, drop_to, Setup};
use tessera_backend::Backend;
use tessera_ckks::circuits::polynomial::{evaluate_with, EvalOptions, OutputScale};
use tessera_ckks::circuits::sign::CompositeSign;
use tessera_ckks::{Ciphertext, Evaluator};

/// Levels the state needs at the start of a step (the mask products and the swap's HMult).
pub const STATE_LEVELS: usize = 2;

/// Levels the stage of piece `i` of `sign` needs: its depth, plus the swap's HMult after the
/// last piece.
pub fn piece_levels(sign: &CompositeSign, i: usize) -> usize {
    let pieces = sign.pieces();
    pieces[i].depth() + usize::from(i + 1 == pieces.len())
}

/// The sorted ciphertext and what it took.
pub struct Outcome<P> {
    /// The sorted values.
    pub x: Ciphertext<P>,
    /// Bootstrappings performed.
    pub boots: usize,
}

/// `mask * x` rescaled, at `x`'s scale exactly (the mask is encoded at the rescale's divisor).
fn mask_mul<B: Backend>(
    setup: &Setup,
    ev: &mut Evaluator<B>,
    x: &Ciphertext<B::Poly>,
    mask: &[f64],
) -> Result<Ciphertext<B::Poly>> {
    let params = setup.ctx.params();
    let pt = setup
        .ctx
        .encode_real(mask, x.slots, x.level, params.rescale_divisor(x.level))?;
    let y = ev.mul_plain(x, &pt)?;
    let y = ev.rescale(&y)?;
    Ok(Ciphertext {
        scale: x.scale,
        ..y
    })
}

/// One compare-exchange step (module documentation); `boots` counts bootstrappings.
pub fn step<B: Backend>(
    setup: &Setup,
    ev: &mut Evaluator<B>,
    x: Ciphertext<B::Poly>,
    st: &Step,
    sign: &CompositeSign,
    boots: &mut usize,
) -> Result<Ciphertext<B::Poly>> {
    let budget = setup.budget();
    let params = setup.ctx.params();
    let keys = &setup.keys.eval;
    let n = x.slots;
    let j = st.distance as i64;
    let x = if budget.must_boot(x.level, STATE_LEVELS) {
        *boots += 1;
        bootstrap_real(setup, ev, &x)?
    } else {
        x
    };
    let r = ev.rotate(&x, j, keys)?;
    let d = ev.sub(&x, &r)?;
    let mx = mask_mul(setup, ev, &x, &st.left(n))?;
    let m1 = mask_mul(setup, ev, &d, &st.half_flip(n))?;
    let m2 = mask_mul(setup, ev, &d, &st.half(n))?;
    let pieces = sign.pieces();
    let mut s = d;
    for (i, p) in pieces.iter().enumerate() {
        if budget.must_boot(s.level, piece_levels(sign, i)) {
            *boots += 1;
            s = bootstrap_real(setup, ev, &s)?;
        }
        let output_scale = if i + 1 == pieces.len() {
            let at = budget.after(s.level, p.depth()).min(m1.level);
            OutputScale::Exact(params.rescale_divisor(at))
        } else {
            OutputScale::Input
        };
        s = evaluate_with(
            ev,
            &s,
            p,
            keys,
            EvalOptions {
                depth: None,
                output_scale,
            },
        )?;
    }
    let at = s.level.min(m1.level);
    let (s, m1) = (drop_to(ev, &s, at)?, drop_to(ev, &m1, at)?);
    let t = ev.mul_relin_rescale(&s, &m1, keys)?;
    let t = Ciphertext {
        scale: m1.scale,
        ..t
    };
    let m2 = drop_to(ev, &m2, t.level)?;
    let t = ev.add(&t, &m2)?;
    let mx = drop_to(ev, &mx, t.level)?;
    let lo = ev.sub(&mx, &t)?;
    let hi = ev.sub(&mx, &m2)?;
    let hi = ev.sub(&hi, &m2)?;
    let hi = ev.add(&hi, &t)?;
    let hi = ev.rotate(&hi, -j, keys)?;
    Ok(ev.add(&lo, &hi)?)
}

/// Sorts the `2^log_n` values of `x` (a ciphertext of `2^log_n` slots, values in
/// `[-1/2, 1/2]`); `progress(done)` after each step.
pub fn run<B: Backend>(
    setup: &Setup,
    ev: &mut Evaluator<B>,
    x: &Ciphertext<B::Poly>,
    sign: &CompositeSign,
    progress: &mut dyn FnMut(usize),
) -> Result<Outcome<B::Poly>> {
    let log_n = x.slots.trailing_zeros() as usize;
    let mut boots = 0;
    let mut x = x.clone();
    for (i, st) in steps(log_n).iter().enumerate() {
        x = step(setup, ev, x, st, sign, &mut boots)?;
        progress(i + 1);
    }
    Ok(Outcome { x, boots })
}
