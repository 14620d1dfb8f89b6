//! One encrypted SGD step on a batch of four images ([`super::packing`] for the layout,
//! [`super::model`] for the arithmetic it reproduces). Everything is encrypted: weights,
//! images and labels ("complete blind computation", reed.md 7).
//!
//! Forward (levels below the lower input; `m1`, `m2`, `m3` are 0/1 support masks):
//! 1. `z1 = colsum(X W1)` (HMult; column 0).
//! 2. `u1 = z1 m1 / sqrt 8`, `d1 = z1 m1 / 4 + m1 / 2` (PMult), `a1 = u1 (u1 + sqrt 2) + m1 / 4`
//!    (HMult): `f(z1)` and `f'(z1)` on the support, 0 elsewhere.
//! 3. `z2 = rowsum(copy_cols(a1) W2)` (HMult; row 0), then `u2`, `d2`, `a2` as in 2.
//! 4. `z3 = colsum(copy_rows(a2) W3)` (HMult; column 0).
//!
//! Backward (`delta` carries `rate / 4`):
//! 5. `delta3 = (z3 - Y) m3 rate / 4` (PMult); `D3 = copy_cols(delta3)`.
//! 6. `W3 -= batchsum(D3 A2)` with `A2 = copy_rows(a2)`; `delta2 = rowsum(D3 W3_old) d2`.
//! 7. `D2 = copy_rows(delta2)`; `W2 -= batchsum(D2 A1)`; `delta1 = colsum(D2 W2_old) d1`.
//! 8. `D1 = copy_cols(delta1)`; `W1 -= batchsum(D1 X)`.
//!
//! 13 levels from `W1` to the new `W1` (7 forward, 6 backward); 12 HMult (3 layers, 2
//! activations, 7 backward) and 5 PMult (2 per activation, 1 for the error). Bootstrappings come only from the level rule
//! ([`super::scales::Arith::ensure`]).

use super::model::{Dims, BATCH, CLASSES, INV_SQRT8, RATE};
use super::packing::Layout;
use super::scales::Arith;
use crate::error::{ProgramError, Result};
use tessera_backend::Backend;
use tessera_ckks::Ciphertext;
use tessera_math::RnsPoly;

/// The encrypted weights `[W1, W2, W3]` in the layout.
pub type State<P> = [Ciphertext<P>; 3];

/// One batch, encrypted by the client: the inputs and the one-hot labels.
pub struct Batch {
    /// `X`: `x_b` in the rows of block `b`.
    pub x: Ciphertext<RnsPoly>,
    /// `Y`: the one-hot labels in column 0.
    pub y: Ciphertext<RnsPoly>,
}

/// `f(z)` and, when asked for, `f'(z)`.
type Activated<P> = (Ciphertext<P>, Option<Ciphertext<P>>);

/// `f(z)` on the support `mask` (1 there, 0 elsewhere), and with `derivative` also `f'(z)`
/// there (training needs it; inference does not, and skips its PMult and addition).
fn activate<B: Backend>(
    ar: &mut Arith<'_, B>,
    z: &mut Ciphertext<B::Poly>,
    mask: &[f64],
    derivative: bool,
) -> Result<Activated<B::Poly>> {
    // u and the product take two levels: the rule bootstraps z first if it lacks them.
    ar.ensure(z, 2)?;
    let scaled = |k: f64| mask.iter().map(|m| m * k).collect::<Vec<_>>();
    let mut u = ar.mul_plain(z, &scaled(INV_SQRT8))?;
    let d = if derivative {
        let d = ar.mul_plain(z, &scaled(0.25))?;
        Some(ar.add_plain(&d, &scaled(0.5))?)
    } else {
        None
    };
    let mut v = ar.add_const(&u, std::f64::consts::SQRT_2)?;
    let a = ar.mul(&mut u, &mut v)?;
    let a = ar.add_plain(&a, &scaled(0.25))?;
    Ok((a, d))
}

/// What the forward pass leaves: the outputs and the values the backward pass reuses.
pub struct Forward<P> {
    /// The inputs (bootstrapped if the rule needed it).
    pub x: Ciphertext<P>,
    /// `copy_cols(a1)`: the first activation copied over the columns of `W2`.
    pub a1c: Ciphertext<P>,
    /// `copy_rows(a2)`: the second activation copied over the rows of `W3`.
    pub a2c: Ciphertext<P>,
    /// `f'(z1)` and `f'(z2)` on their supports, when asked for (training).
    pub derivatives: Option<(Ciphertext<P>, Ciphertext<P>)>,
    /// The outputs `z3` in column 0 of every block (block `b`: image `b`).
    pub z3: Ciphertext<P>,
}

/// Steps 1-4 of the module doc: the forward pass of the batch `x` through `w` (each weight
/// bootstrapped in place if the rule needs it), with `f'` when `derivatives` (training).
pub fn forward<B: Backend>(
    ar: &mut Arith<'_, B>,
    dims: &Dims,
    layout: &Layout,
    w: [&mut Ciphertext<B::Poly>; 3],
    mut x: Ciphertext<B::Poly>,
    derivatives: bool,
) -> Result<Forward<B::Poly>> {
    let [w1, w2, w3] = w;
    let m1 = layout.mask(dims.h1, 1, 1.0);
    let m2 = layout.mask(1, dims.h2, 1.0);
    let p = ar.mul(&mut x, w1)?;
    let mut z1 = ar.rotate_sum(&p, &layout.col_sum())?;
    let (a1, d1) = activate(ar, &mut z1, &m1, derivatives)?;
    let mut a1c = ar.rotate_sum(&a1, &layout.col_copy(dims.h2))?;
    let p = ar.mul(&mut a1c, w2)?;
    let mut z2 = ar.rotate_sum(&p, &layout.row_sum())?;
    let (a2, d2) = activate(ar, &mut z2, &m2, derivatives)?;
    let mut a2c = ar.rotate_sum(&a2, &layout.row_copy(CLASSES))?;
    let p = ar.mul(&mut a2c, w3)?;
    let z3 = ar.rotate_sum(&p, &layout.col_sum())?;
    Ok(Forward {
        x,
        a1c,
        a2c,
        derivatives: d1.zip(d2),
        z3,
    })
}

/// One SGD step from `w` on `batch`; returns the new weights.
pub fn step<B: Backend>(
    ar: &mut Arith<'_, B>,
    dims: &Dims,
    layout: &Layout,
    w: &State<B::Poly>,
    batch: &Batch,
) -> Result<State<B::Poly>> {
    let [mut w1, mut w2, mut w3] = w.clone();
    let x = ar.ev.load(&batch.x)?;
    let y = ar.ev.load(&batch.y)?;
    let f = forward(ar, dims, layout, [&mut w1, &mut w2, &mut w3], x, true)?;
    let (mut x, mut a1c, mut a2c, z3) = (f.x, f.a1c, f.a2c, f.z3);
    let (mut d1, mut d2) = f.derivatives.ok_or_else(|| {
        ProgramError::Unsupported("dnn-train: the forward pass returned no derivatives".into())
    })?;

    // Backward.
    let mut e = ar.sub(&z3, &y)?;
    let m3 = layout.mask(CLASSES, 1, RATE / BATCH as f64);
    let delta3 = ar.mul_plain(&mut e, &m3)?;
    let mut dc3 = ar.rotate_sum(&delta3, &layout.col_copy(dims.h2))?;
    let g3 = ar.mul(&mut dc3, &mut a2c)?;
    let g3 = ar.rotate_sum(&g3, &layout.batch_sum())?;
    let back3 = ar.mul(&mut dc3, &mut w3)?;
    let mut back3 = ar.rotate_sum(&back3, &layout.row_sum())?;
    let delta2 = ar.mul(&mut back3, &mut d2)?;
    let new_w3 = ar.sub(&w3, &g3)?;

    let mut dc2 = ar.rotate_sum(&delta2, &layout.row_copy(dims.h1))?;
    let g2 = ar.mul(&mut dc2, &mut a1c)?;
    let g2 = ar.rotate_sum(&g2, &layout.batch_sum())?;
    let back2 = ar.mul(&mut dc2, &mut w2)?;
    let mut back2 = ar.rotate_sum(&back2, &layout.col_sum())?;
    let delta1 = ar.mul(&mut back2, &mut d1)?;
    let new_w2 = ar.sub(&w2, &g2)?;

    let mut dc1 = ar.rotate_sum(&delta1, &layout.col_copy(dims.inputs))?;
    let g1 = ar.mul(&mut dc1, &mut x)?;
    let g1 = ar.rotate_sum(&g1, &layout.batch_sum())?;
    let new_w1 = ar.sub(&w1, &g1)?;
    Ok([new_w1, new_w2, new_w3])
}
