//! LoLa encrypted (workloads.md 4.4, our CKKS design): N = 2^14, 8,192 slots in eight blocks
//! of 1,024, **one image per block**, so one ciphertext carries eight images (throughput, as H3
//! reports it).
//!
//! * Input (client side, LoLa's convolution representation): 25 ciphertexts, one per kernel
//!   offset `k`; block `b` holds image `b`'s 169 values seen by `k`, repeated for the five maps
//!   (slot `1024 b + 169 m + p`).
//! * Convolution: `sum_k X_k * W_k` with `W_k = w[m][k]` on map `m`'s slots (25 PMult, one
//!   level), plus the bias; the result is already the 845-vector of each image. Square: 1
//!   HMult.
//! * Dense layers (845 -> 100, then 100 -> 10): a linear transform by diagonals with
//!   baby-step giant-step and hoisted baby steps ([`LinearTransform`], the circuit
//!   bootstrapping's DFTs run on), in the **hybrid** (Halevi-Shoup rectangular, GAZELLE)
//!   form of [`DenseLayer`]: the `R x C` matrix, its rows padded to `P` (a power of two),
//!   becomes `P` diagonals of the 8,192-slot block-diagonal matrix, then a rotate-and-sum by
//!   `P, 2P, ..` folds the `T` partial sums of each output. 845 -> 100: `P = 128`, `T = 8`;
//!   100 -> 10: `P = 16`, `T = 8`. One level each. Bias; square between them.
//!
//! Five levels, no bootstrapping; the rotation keys are those of the two BSGS plans and the
//! two folds ([`Network::rotations`]).

use super::model::{Model, CLASSES, HIDDEN, MAPS, OFFSETS, PIXELS};
use crate::error::{ProgramError, Result};
use num_complex::Complex64;
use std::collections::{BTreeMap, BTreeSet};
use tessera_backend::Backend;
use tessera_ckks::circuits::linear::LinearTransform;
use tessera_ckks::circuits::sums::{rotate_and_sum, rotations_for_rotate_and_sum};
use tessera_ckks::{Ciphertext, CkksContext, EvaluationKeys, Evaluator, Plaintext};
use tessera_math::RnsPoly;

/// Slots per image block.
pub const BLOCK: usize = 1024;
/// Levels the network consumes: conv, square, dense, square, dense.
pub const DEPTH: usize = 5;

/// Images per ciphertext at `slots` slots.
pub fn images_per_ct(slots: usize) -> usize {
    slots / BLOCK
}

/// The client's 25 input ciphertexts' values for a batch of images (at most
/// `images_per_ct`).
pub fn input_vectors(images: &[Vec<f64>], slots: usize) -> Vec<Vec<f64>> {
    let mut out = vec![vec![0.0; slots]; OFFSETS];
    for (b, img) in images.iter().enumerate() {
        let w = super::model::windows(img);
        for (k, wk) in w.iter().enumerate() {
            for m in 0..MAPS {
                let base = b * BLOCK + m * PIXELS;
                out[k][base..base + PIXELS].copy_from_slice(wk);
            }
        }
    }
    out
}

/// A vector with `f(i)` at offset `i < len` of every block.
fn per_block(slots: usize, len: usize, f: impl Fn(usize) -> f64) -> Vec<f64> {
    let mut v = vec![0.0; slots];
    for b in 0..slots / BLOCK {
        for i in 0..len {
            v[b * BLOCK + i] = f(i);
        }
    }
    v
}

/// A dense layer `y = M x` (`M` of `R` rows and `C` columns; `x` at offsets `< C` of every
/// block, `y_o` left at offset `o` of every block) in the hybrid diagonal form.
///
/// With `P` the rows padded to a power of two and `T` the folds (a power of two), the
/// ciphertext-wide diagonals are, for `k = 0, -1, .., -(P - 1)` (rotations right) and block
/// offset `j < P T`: `d_k[1024 b + j] = M[j mod P][j + k]` where `j mod P < R` and
/// `0 <= j + k < C`, zero elsewhere. `z = sum_k d_k rot_k(x)` (the [`LinearTransform`], BSGS,
/// hoisted) then `y_j = sum_(t < T) z_(j + t P)` ([`rotate_and_sum`]). For `o < R` and input
/// `i`, the pair `(t, k)` with `o + t P + k = i` is unique: `t = ceil((i - o) / P)`,
/// `k = i - o - t P` in `(-P, 0]`; `t < T` because `T P >= C - 1 + P`. Every index read,
/// `j + k = i < C`, lies in the same block (`P T <= 1024`), so no product crosses images,
/// and entries of `x` at offsets `>= C` (the previous fold's leftovers) meet zero diagonal
/// entries. Cost: the BSGS plan's rotations (about `2 sqrt(P)`) plus `log2 T`, against `R`
/// rotate-and-sums of `log2 1024` each for one row at a time.
#[derive(Debug)]
pub struct DenseLayer {
    lt: LinearTransform,
    /// `P`: rows padded to a power of two.
    pub rows_pad: usize,
    /// `T`: partial sums folded per output.
    pub folds: usize,
}

impl DenseLayer {
    /// The layer of matrix `rows` (`R` rows of `C` entries) on `slots` slots.
    pub fn new(rows: &[Vec<f64>], slots: usize) -> Result<Self> {
        let r = rows.len();
        let c = rows.first().map_or(0, Vec::len);
        let p = r.next_power_of_two();
        let folds = ((c.max(1) - 1).div_ceil(p) + 1).next_power_of_two();
        if r == 0 || c == 0 || p * folds > BLOCK || rows.iter().any(|row| row.len() != c) {
            return Err(ProgramError::Invalid {
                name: "LoLa dense layer shape",
                value: format!("{r} x {c}"),
                allowed: format!(
                    "rectangular, non-empty, with rows (padded) x folds <= the block of {BLOCK}"
                ),
            });
        }
        let zero = Complex64::new(0.0, 0.0);
        let mut diags: BTreeMap<usize, Vec<Complex64>> = BTreeMap::new();
        for back in 0..p {
            // k = -back: a rotation right by `back`.
            let mut d = vec![zero; slots];
            for j in back..p * folds {
                let (o, i) = (j % p, j - back);
                if o < r && i < c {
                    for b in 0..slots / BLOCK {
                        d[b * BLOCK + j] = Complex64::new(rows[o][i], 0.0);
                    }
                }
            }
            if d.iter().any(|z| z.re != 0.0) {
                diags.insert((slots - back) % slots, d);
            }
        }
        Ok(Self {
            lt: LinearTransform::new(slots, diags)?,
            rows_pad: p,
            folds,
        })
    }

    /// Rotation steps the layer needs keys for (its BSGS plan, then the fold).
    pub fn rotations(&self) -> Vec<i64> {
        let mut r = self.lt.rotations();
        r.extend(rotations_for_rotate_and_sum(
            self.rows_pad as i64,
            self.folds,
        ));
        r
    }

    /// The transform (its plan and diagonals).
    pub fn transform(&self) -> &LinearTransform {
        &self.lt
    }

    /// `M x`, one level; outputs at offsets `< R` of every block (other offsets hold partial
    /// sums the next layer ignores).
    pub fn apply<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        x: &Ciphertext<B::Poly>,
        keys: &EvaluationKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        let z = self.lt.apply(ev, x, keys)?;
        Ok(rotate_and_sum(
            ev,
            &z,
            self.rows_pad as i64,
            self.folds,
            keys,
        )?)
    }

    /// The layer in the clear on the slot vector (the same diagonals and fold), for tests.
    pub fn apply_clear(&self, x: &[f64]) -> Vec<f64> {
        let x: Vec<Complex64> = x.iter().map(|&v| Complex64::new(v, 0.0)).collect();
        let z = self.lt.apply_clear(&x);
        let n = z.len();
        (0..n)
            .map(|j| {
                (0..self.folds)
                    .map(|t| z[(j + t * self.rows_pad) % n].re)
                    .sum()
            })
            .collect()
    }
}

/// The network's encrypted evaluator: the weights, the two dense layers' transforms (their
/// encoded diagonals cached after the first ciphertext) and the convolution's plaintexts.
pub struct Network {
    model: Model,
    fc1: DenseLayer,
    fc2: DenseLayer,
    /// The 25 convolution weight plaintexts, at the inputs' level.
    conv: Vec<Plaintext>,
}

impl Network {
    /// The network for `ctx` (inputs encrypted at its top level).
    pub fn new(ctx: &CkksContext, model: Model) -> Result<Self> {
        let slots = ctx.params().max_slots();
        let top = ctx.params().max_level();
        let scale = ctx.params().rescale_divisor(top);
        let conv = (0..OFFSETS)
            .map(|k| {
                let w = per_block(slots, MAPS * PIXELS, |i| model.conv[i / PIXELS][k]);
                Ok(ctx.encode_real(&w, slots, top, scale)?)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            fc1: DenseLayer::new(&model.fc1, slots)?,
            fc2: DenseLayer::new(&model.fc2, slots)?,
            model,
            conv,
        })
    }

    /// The weights.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The dense layers (845 -> 100, 100 -> 10).
    pub fn dense_layers(&self) -> [&DenseLayer; 2] {
        [&self.fc1, &self.fc2]
    }

    /// The distinct rotation steps the network uses (both layers' plans and folds).
    pub fn rotations(&self) -> Vec<i64> {
        let r: BTreeSet<i64> = self
            .fc1
            .rotations()
            .into_iter()
            .chain(self.fc2.rotations())
            .collect();
        r.into_iter().collect()
    }

    /// Adds `values` (a plaintext at `x`'s level and scale).
    fn add_bias<B: Backend>(
        ev: &mut Evaluator<B>,
        x: &Ciphertext<B::Poly>,
        values: &[f64],
    ) -> Result<Ciphertext<B::Poly>> {
        let ctx = ev.context().clone();
        let p = ctx.encode_real(values, x.slots, x.level, x.scale)?;
        Ok(ev.add_plain(x, &p)?)
    }

    /// The logits of the images in `inputs` (the 25 offset ciphertexts), at offsets `< 10`
    /// of each block.
    pub fn infer<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        inputs: &[Ciphertext<RnsPoly>],
        keys: &EvaluationKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        let m = &self.model;
        if inputs.len() != OFFSETS {
            return Err(ProgramError::Invalid {
                name: "LoLa input ciphertexts",
                value: inputs.len().to_string(),
                allowed: format!("{OFFSETS} (one per kernel offset)"),
            });
        }
        let slots = inputs[0].slots;
        let mut acc: Option<Ciphertext<B::Poly>> = None;
        for (x, p) in inputs.iter().zip(&self.conv) {
            let x = ev.load(x)?;
            acc = Some(match acc {
                None => ev.mul_plain(&x, p)?,
                Some(mut a) => {
                    ev.mul_plain_acc(&mut a, &x, p)?;
                    a
                }
            });
        }
        let h = ev.rescale(&acc.expect("25 inputs"))?;
        let h = Self::add_bias(
            ev,
            &h,
            &per_block(slots, MAPS * PIXELS, |i| m.conv_bias[i / PIXELS]),
        )?;
        let h = ev.mul_relin_rescale(&h, &h, keys)?;
        let y = self.fc1.apply(ev, &h, keys)?;
        let y = Self::add_bias(ev, &y, &per_block(slots, HIDDEN, |o| m.fc1_bias[o]))?;
        let y = ev.mul_relin_rescale(&y, &y, keys)?;
        let z = self.fc2.apply(ev, &y, keys)?;
        Self::add_bias(ev, &z, &per_block(slots, CLASSES, |c| m.fc2_bias[c]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random matrix.
    fn matrix(r: usize, c: usize, seed: u64) -> Vec<Vec<f64>> {
        let mut s = seed;
        (0..r)
            .map(|_| {
                (0..c)
                    .map(|_| {
                        s = s
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn hybrid_diagonals_compute_each_block_product() {
        let slots = 4 * BLOCK;
        for (r, c) in [(100, 845), (10, 100), (3, 1), (1, 7)] {
            let m = matrix(r, c, (r * c) as u64);
            let layer = DenseLayer::new(&m, slots).unwrap();
            // Each block its own vector, with junk past offset c (must be ignored).
            let x: Vec<f64> = (0..slots)
                .map(|s| (s % BLOCK) as f64 * 0.01 + (s / BLOCK) as f64)
                .collect();
            let y = layer.apply_clear(&x);
            for b in 0..slots / BLOCK {
                for (o, row) in m.iter().enumerate() {
                    let want: f64 = (0..c).map(|i| row[i] * x[b * BLOCK + i]).sum();
                    let got = y[b * BLOCK + o];
                    assert!(
                        (got - want).abs() < 1e-9,
                        "{r}x{c} b {b} o {o}: {got} {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn lola_layers_fold_eight_times_and_need_few_rotations() {
        let slots = 8 * BLOCK;
        let l1 = DenseLayer::new(&matrix(HIDDEN, MAPS * PIXELS, 1), slots).unwrap();
        let l2 = DenseLayer::new(&matrix(CLASSES, HIDDEN, 2), slots).unwrap();
        assert_eq!((l1.rows_pad, l1.folds), (128, 8));
        assert_eq!((l2.rows_pad, l2.folds), (16, 8));
        assert_eq!(l1.transform().matrix().diags.len(), 128);
        assert_eq!(l2.transform().matrix().diags.len(), 16);
        // BSGS over 128 diagonals: 23 rotations; over 16: 7; plus 3 folds each.
        assert_eq!(l1.transform().plan().hrot_count(false), 23);
        assert_eq!(l2.transform().plan().hrot_count(false), 7);
        assert!(l1.rotations().contains(&512) && l2.rotations().contains(&64));
        // Keys: baby steps 1..7, giant steps -8..-128 by 8 and folds 128, 256, 512; then
        // -4, -12 and folds 16, 32, 64 (1, 2, 3, -8, -16 are shared): 31 distinct.
        let keys: BTreeSet<i64> = l1.rotations().into_iter().chain(l2.rotations()).collect();
        assert_eq!(keys.len(), 31, "{keys:?}");
    }

    #[test]
    fn bad_layer_shapes_are_errors() {
        assert!(DenseLayer::new(&[], BLOCK).is_err());
        assert!(DenseLayer::new(&[vec![1.0; 2], vec![1.0; 3]], BLOCK).is_err());
        assert!(DenseLayer::new(&matrix(600, 900, 3), BLOCK).is_err());
    }

    #[test]
    fn inputs_repeat_each_window_for_the_five_maps() {
        let img: Vec<f64> = (0..784).map(|i| (i % 256) as f64).collect();
        let v = input_vectors(&[img.clone(), img], 2 * BLOCK);
        assert_eq!(v.len(), OFFSETS);
        for m in 0..MAPS {
            assert_eq!(v[7][m * PIXELS + 5], v[7][5]);
            assert_eq!(v[7][BLOCK + m * PIXELS + 5], v[7][5]);
        }
        assert!(v[0][MAPS * PIXELS..BLOCK].iter().all(|&x| x == 0.0));
    }
}
