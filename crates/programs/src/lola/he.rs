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
//! * Dense 845 -> 100: per output `o`, a PMult by row `o` in every block, a rotate-and-sum over
//!   the block (left by 1 .. 512: 10 HRot) that leaves `y_o` at slot `1024 b`, a PMult by the
//!   unit mask at `1024 b`, and a rotation right by `o` (baby step `o mod 10`, giant step
//!   `10 floor(o / 10)`: 99 HRot for the 100 outputs, 18 keys instead of 99). Bias; square.
//! * Dense 100 -> 10: the same with rows of 100 (rotate-and-sum left by 1 .. 64) and
//!   rotations right by `c < 10`. Bias. Logits at slots `1024 b + c`.
//!
//! Seven levels, no bootstrapping; 28 rotation keys.

use super::model::{Model, CLASSES, HIDDEN, MAPS, OFFSETS, PIXELS};
use crate::error::Result;
use tessera_backend::Backend;
use tessera_ckks::{Ciphertext, CkksContext, EvaluationKeys, Evaluator};
use tessera_math::RnsPoly;

/// Slots per image block.
pub const BLOCK: usize = 1024;
/// Levels the network consumes.
pub const DEPTH: usize = 7;
/// Baby-step size of the gathering rotations.
const BABY: usize = 10;

/// The rotation steps the network uses.
pub fn rotations() -> Vec<i64> {
    let mut r: Vec<i64> = (0..10).map(|i| 1i64 << i).collect();
    r.extend((1..BABY as i64).map(|j| -j));
    r.extend((1..HIDDEN.div_ceil(BABY) as i64).map(|g| -g * BABY as i64));
    r
}

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

/// The network's encrypted evaluator.
pub struct Network<'a> {
    /// The context.
    pub ctx: &'a CkksContext,
    /// The evaluation keys (relinearisation and [`rotations`]).
    pub keys: &'a EvaluationKeys,
    /// The weights.
    pub model: &'a Model,
}

impl Network<'_> {
    fn plain(&self, values: &[f64], level: usize, scale: f64) -> Result<tessera_ckks::Plaintext> {
        let slots = self.ctx.params().max_slots();
        Ok(self.ctx.encode_real(values, slots, level, scale)?)
    }

    /// `x * values` then rescale, the plaintext at the default scale.
    fn pmult<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        x: &Ciphertext<B::Poly>,
        values: &[f64],
    ) -> Result<Ciphertext<B::Poly>> {
        let scale = self.ctx.params().rescale_divisor(x.level);
        let p = self.plain(values, x.level, scale)?;
        let y = ev.mul_plain(x, &p)?;
        Ok(ev.rescale(&y)?)
    }

    /// Adds `values` (a plaintext at `x`'s scale).
    fn add_bias<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        x: &Ciphertext<B::Poly>,
        values: &[f64],
    ) -> Result<Ciphertext<B::Poly>> {
        let p = self.plain(values, x.level, x.scale)?;
        Ok(ev.add_plain(x, &p)?)
    }

    fn rotate_sum<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        x: &Ciphertext<B::Poly>,
        width: usize,
    ) -> Result<Ciphertext<B::Poly>> {
        let mut x = x.clone();
        let mut s = 1;
        while s < width {
            let r = ev.rotate(&x, s as i64, self.keys)?;
            x = ev.add(&x, &r)?;
            s *= 2;
        }
        Ok(x)
    }

    /// A dense layer: `rows[o] . x` (x's entries at offsets `< width` of each block), output
    /// `o` gathered at offset `o` of each block.
    fn dense<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        x: &Ciphertext<B::Poly>,
        rows: &[Vec<f64>],
        width: usize,
    ) -> Result<Ciphertext<B::Poly>> {
        let slots = self.ctx.params().max_slots();
        let unit = per_block(slots, 1, |_| 1.0);
        let mut giant: Vec<Option<Ciphertext<B::Poly>>> = Vec::new();
        for (o, row) in rows.iter().enumerate() {
            let t = self.pmult(ev, x, &per_block(slots, row.len(), |i| row[i]))?;
            let t = self.rotate_sum(ev, &t, width)?;
            let t = self.pmult(ev, &t, &unit)?;
            let j = o % BABY;
            let t = if j == 0 {
                t
            } else {
                ev.rotate(&t, -(j as i64), self.keys)?
            };
            let g = o / BABY;
            if giant.len() <= g {
                giant.push(None);
            }
            giant[g] = Some(match giant[g].take() {
                None => t,
                Some(acc) => ev.add(&acc, &t)?,
            });
        }
        let mut out: Option<Ciphertext<B::Poly>> = None;
        for (g, part) in giant.into_iter().enumerate() {
            let part = part.expect("every group has an output");
            let part = if g == 0 {
                part
            } else {
                ev.rotate(&part, -((g * BABY) as i64), self.keys)?
            };
            out = Some(match out {
                None => part,
                Some(acc) => ev.add(&acc, &part)?,
            });
        }
        Ok(out.expect("at least one output"))
    }

    /// The logits of the images in `inputs` (the 25 offset ciphertexts).
    pub fn infer<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        inputs: &[Ciphertext<RnsPoly>],
    ) -> Result<Ciphertext<B::Poly>> {
        let slots = self.ctx.params().max_slots();
        let m = self.model;
        let first = ev.load(&inputs[0])?;
        let scale = self.ctx.params().rescale_divisor(first.level);
        let weights = |k: usize| per_block(slots, MAPS * PIXELS, |i| m.conv[i / PIXELS][k]);
        let p0 = self.plain(&weights(0), first.level, scale)?;
        let mut acc = ev.mul_plain(&first, &p0)?;
        for (k, x) in inputs.iter().enumerate().skip(1) {
            let x = ev.load(x)?;
            let p = self.plain(&weights(k), x.level, scale)?;
            ev.mul_plain_acc(&mut acc, &x, &p)?;
        }
        let h = ev.rescale(&acc)?;
        let h = self.add_bias(
            ev,
            &h,
            &per_block(slots, MAPS * PIXELS, |i| m.conv_bias[i / PIXELS]),
        )?;
        let h = ev.mul_relin_rescale(&h, &h, self.keys)?;
        let y = self.dense(ev, &h, &m.fc1, BLOCK)?;
        let y = self.add_bias(ev, &y, &per_block(slots, HIDDEN, |o| m.fc1_bias[o]))?;
        let y = ev.mul_relin_rescale(&y, &y, self.keys)?;
        let z = self.dense(ev, &y, &m.fc2, HIDDEN.next_power_of_two())?;
        self.add_bias(ev, &z, &per_block(slots, CLASSES, |c| m.fc2_bias[c]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lola_uses_28_rotation_keys() {
        let r = rotations();
        assert_eq!(r.len(), 28);
        let mut d = r.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), 28);
        assert!(r.contains(&512) && r.contains(&-90) && r.contains(&-9));
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
