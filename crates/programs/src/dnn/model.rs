//! The network we train (ours: REED leaves the architecture open, workloads.md 6.3), its data
//! and its plaintext replica: the exact arithmetic the encrypted program performs, in f64 and
//! in plain matrix form (no slots), so that the encrypted weights can be checked against it.
//!
//! * **Input**: an MNIST digit averaged over `(28 / side)^2` blocks to `side x side` pixels in
//!   [0, 1], plus a constant 1 (the first layer's bias).
//! * **Layers**: dense `side^2 + 1 -> h1`, activation, dense `h1 -> h2`, activation, dense
//!   `h2 -> 10` (two hidden and one output layer, as reed.md Fig. 13); no other biases.
//! * **Activation** (ours): `f(z) = z^2 / 8 + z / 2 + 1 / 4 = (z + 2)^2 / 8`, a degree-2
//!   stand-in for ReLU, with `f'(z) = z / 4 + 1 / 2`; encrypted it is `u (u + sqrt 2) + 1/4`
//!   with `u = z / sqrt 8` (one level for `u`, one for the product).
//! * **Loss** (ours): squared error against the one-hot label, `L = 1/2 sum_c (z3_c - y_c)^2`
//!   averaged over the batch of [`BATCH`] images; plain SGD, `W <- W - rate dL/dW`. The factor
//!   `rate / BATCH` enters once, in the output error `delta3 = (rate / BATCH) (z3 - y)`; the
//!   backward pass is linear in it, so every weight gradient carries it already.

use crate::data::{member, read_npz};
use crate::error::{ProgramError, Result};
use crate::helr::dataset::splitmix;
use std::path::Path;

/// The images (28 x 28, uint8, labels 0..9).
pub const IMAGES_FILE: &str = "mnist-10k.npz";
/// Images per batch (reed.md 7: "we pack four pre-processed images per batch").
pub const BATCH: usize = 4;
/// Classes.
pub const CLASSES: usize = 10;
/// The first images of the file used for training; the rest are the test set.
pub const TRAIN_IMAGES: usize = 8_000;
/// The learning rate (ours).
pub const RATE: f64 = 0.2;
/// `1 / sqrt 8`: `u = z / sqrt 8`, so `f(z) = u (u + sqrt 2) + 1/4`.
pub const INV_SQRT8: f64 = 0.353_553_390_593_273_8;

/// The activation `f(z) = z^2 / 8 + z / 2 + 1/4`, as the encrypted program computes it.
pub fn activation(z: f64) -> f64 {
    let u = z * INV_SQRT8;
    u * (u + std::f64::consts::SQRT_2) + 0.25
}

/// `f'(z) = z / 4 + 1 / 2`.
pub fn derivative(z: f64) -> f64 {
    z * 0.25 + 0.5
}

/// Layer widths of the network for an input of `side x side` pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    /// Image side after averaging (a divisor of 28).
    pub side: usize,
    /// Inputs: `side^2` pixels and the constant 1.
    pub inputs: usize,
    /// First hidden layer.
    pub h1: usize,
    /// Second hidden layer.
    pub h2: usize,
}

impl Dims {
    /// The network for `side`: 14 (the full size, 196 + 1 -> 32 -> 32 -> 10), 7
    /// (49 + 1 -> 32 -> 32 -> 10), 4 or 2 (reductions for small rings: 16 + 1 or 4 + 1 -> 16
    /// -> 8 -> 10).
    pub fn new(side: usize) -> Result<Self> {
        let (h1, h2) = match side {
            14 | 7 => (32, 32),
            4 | 2 => (16, 8),
            _ => {
                return Err(ProgramError::Invalid {
                    name: "size (image side)",
                    value: side.to_string(),
                    allowed: "14 (the full network, 196 pixels), 7, 4 or 2 (reductions)".into(),
                })
            }
        };
        Ok(Self {
            side,
            inputs: side * side + 1,
            h1,
            h2,
        })
    }

    /// `(rows, columns)` of each weight matrix, output by input.
    pub fn shapes(&self) -> [(usize, usize); 3] {
        [
            (self.h1, self.inputs),
            (self.h2, self.h1),
            (CLASSES, self.h2),
        ]
    }
}

/// Weights `w[layer][out][in]`.
pub type Weights = [Vec<Vec<f64>>; 3];

/// The initial weights: uniform in `+-1 / sqrt(fan-in)` from a fixed SplitMix64 seed (ours).
pub fn initial_weights(dims: &Dims) -> Weights {
    let mut state = 21u64;
    dims.shapes().map(|(rows, cols)| {
        let bound = 1.0 / (cols as f64).sqrt();
        (0..rows)
            .map(|_| {
                (0..cols)
                    .map(|_| {
                        let u = (splitmix(&mut state) >> 11) as f64 / (1u64 << 53) as f64;
                        (2.0 * u - 1.0) * bound
                    })
                    .collect()
            })
            .collect()
    })
}

/// Training and test images, averaged to the network's input.
#[derive(Clone, Debug)]
pub struct Digits {
    /// Training inputs (`side^2` pixels in [0, 1] and the constant 1).
    pub train_x: Vec<Vec<f64>>,
    /// Training labels.
    pub train_y: Vec<u8>,
    /// Test inputs.
    pub test_x: Vec<Vec<f64>>,
    /// Test labels.
    pub test_y: Vec<u8>,
}

/// `pixels` (28 x 28, 0..255) averaged over `(28 / side)^2` blocks, divided by 255, then 1.
pub fn input(pixels: &[f64], side: usize) -> Vec<f64> {
    let k = 28 / side;
    let mut out = Vec::with_capacity(side * side + 1);
    for r in 0..side {
        for c in 0..side {
            let mut s = 0.0;
            for dr in 0..k {
                for dc in 0..k {
                    s += pixels[(k * r + dr) * 28 + k * c + dc];
                }
            }
            out.push(s / (k * k) as f64 / 255.0);
        }
    }
    out.push(1.0);
    out
}

impl Digits {
    /// Reads `mnist-10k.npz` from `dir`: the first [`TRAIN_IMAGES`] for training, the rest
    /// for the test (the file is already shuffled).
    pub fn load(dir: &Path, dims: &Dims) -> Result<Self> {
        let npz = read_npz(dir, IMAGES_FILE)?;
        let images = member(&npz, IMAGES_FILE, "images")?;
        images.expect_shape(IMAGES_FILE, "images", &[None, Some(28), Some(28)])?;
        let labels = member(&npz, IMAGES_FILE, "labels")?;
        labels.expect_shape(IMAGES_FILE, "labels", &[Some(images.shape[0])])?;
        let n = images.shape[0];
        if n <= TRAIN_IMAGES {
            return Err(ProgramError::Shape {
                file: IMAGES_FILE.into(),
                message: format!("{n} images, need more than {TRAIN_IMAGES}"),
            });
        }
        let mut xs = Vec::with_capacity(n);
        let mut ys = Vec::with_capacity(n);
        for i in 0..n {
            xs.push(input(&images.data[i * 784..(i + 1) * 784], dims.side));
            let y = labels.data[i];
            if !(0.0..CLASSES as f64).contains(&y) || y.fract() != 0.0 {
                return Err(ProgramError::Shape {
                    file: IMAGES_FILE.into(),
                    message: format!("label {y} of image {i} is not a digit 0..9"),
                });
            }
            ys.push(y as u8);
        }
        let test_x = xs.split_off(TRAIN_IMAGES);
        let test_y = ys.split_off(TRAIN_IMAGES);
        Ok(Self {
            train_x: xs,
            train_y: ys,
            test_x,
            test_y,
        })
    }

    /// Test batch `t`: test images `BATCH t .. BATCH (t + 1)` (no wrap-around: inference
    /// classifies each test image once).
    pub fn test_batch(&self, t: usize) -> Result<(Vec<&[f64]>, Vec<u8>)> {
        let batches = self.test_x.len() / BATCH;
        if t >= batches {
            return Err(ProgramError::Invalid {
                name: "test batch",
                value: t.to_string(),
                allowed: format!(
                    "0 to {} ({} test images, {BATCH} per batch)",
                    batches.saturating_sub(1),
                    self.test_x.len()
                ),
            });
        }
        Ok((BATCH * t..BATCH * (t + 1))
            .map(|i| (self.test_x[i].as_slice(), self.test_y[i]))
            .unzip())
    }

    /// Batch `t`: training images `BATCH t .. BATCH (t + 1)` modulo the training set (the
    /// schedule cycles through it).
    pub fn batch(&self, t: usize) -> (Vec<&[f64]>, Vec<u8>) {
        let n = self.train_x.len();
        (0..BATCH)
            .map(|b| {
                let i = (BATCH * t + b) % n;
                (self.train_x[i].as_slice(), self.train_y[i])
            })
            .unzip()
    }
}

fn matvec(w: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
    w.iter()
        .map(|row| row.iter().zip(x).map(|(a, b)| a * b).sum())
        .collect()
}

/// The forward pass of one input: pre-activations `z1, z2` and the outputs `z3`.
pub fn forward(w: &Weights, x: &[f64]) -> [Vec<f64>; 3] {
    let z1 = matvec(&w[0], x);
    let a1: Vec<f64> = z1.iter().map(|&z| activation(z)).collect();
    let z2 = matvec(&w[1], &a1);
    let a2: Vec<f64> = z2.iter().map(|&z| activation(z)).collect();
    let z3 = matvec(&w[2], &a2);
    [z1, z2, z3]
}

/// The loss of a batch, `1/BATCH sum_b 1/2 |z3_b - onehot(y_b)|^2` (for the gradient test).
pub fn loss(w: &Weights, xs: &[&[f64]], ys: &[u8]) -> f64 {
    xs.iter()
        .zip(ys)
        .map(|(x, &y)| {
            let z3 = &forward(w, x)[2];
            z3.iter()
                .enumerate()
                .map(|(c, z)| 0.5 * (z - f64::from(u8::from(c == y as usize))).powi(2))
                .sum::<f64>()
        })
        .sum::<f64>()
        / xs.len() as f64
}

/// One SGD step on a batch (the order the encrypted program follows: output error, `dW3`,
/// `delta2` through the old `W3`, `dW2`, `delta1` through the old `W2`, `dW1`, then the
/// updates). Returns `rate` times the gradient of [`loss`], per layer.
pub fn gradients(w: &Weights, xs: &[&[f64]], ys: &[u8], rate: f64) -> Weights {
    let scale = rate / xs.len() as f64;
    let mut g: Weights = w
        .clone()
        .map(|m| m.iter().map(|r| vec![0.0; r.len()]).collect());
    for (x, &y) in xs.iter().zip(ys) {
        let [z1, z2, z3] = forward(w, x);
        let a1: Vec<f64> = z1.iter().map(|&z| activation(z)).collect();
        let a2: Vec<f64> = z2.iter().map(|&z| activation(z)).collect();
        let d3: Vec<f64> = z3
            .iter()
            .enumerate()
            .map(|(c, z)| scale * (z - f64::from(u8::from(c == y as usize))))
            .collect();
        let d2: Vec<f64> = (0..z2.len())
            .map(|k| derivative(z2[k]) * (0..d3.len()).map(|c| w[2][c][k] * d3[c]).sum::<f64>())
            .collect();
        let d1: Vec<f64> = (0..z1.len())
            .map(|j| derivative(z1[j]) * (0..d2.len()).map(|k| w[1][k][j] * d2[k]).sum::<f64>())
            .collect();
        for (layer, (delta, a)) in [(&d1, *x), (&d2, &a1[..]), (&d3, &a2[..])]
            .into_iter()
            .enumerate()
        {
            for (o, d) in delta.iter().enumerate() {
                for (i, ai) in a.iter().enumerate() {
                    g[layer][o][i] += d * ai;
                }
            }
        }
    }
    g
}

/// `w - g`, layer by layer.
pub fn apply(w: &Weights, g: &Weights) -> Weights {
    let mut out = w.clone();
    for (m, gm) in out.iter_mut().zip(g) {
        for (r, gr) in m.iter_mut().zip(gm) {
            for (v, d) in r.iter_mut().zip(gr) {
                *v -= d;
            }
        }
    }
    out
}

/// `iterations` SGD steps from `w` on batches `first, first + 1, ..` of `digits`.
pub fn train(digits: &Digits, w: &Weights, first: usize, iterations: usize) -> Weights {
    let mut w = w.clone();
    for t in first..first + iterations {
        let (xs, ys) = digits.batch(t);
        w = apply(&w, &gradients(&w, &xs, &ys, RATE));
    }
    w
}

/// Test accuracy: the share of test images whose largest output is their label.
pub fn accuracy(w: &Weights, digits: &Digits) -> f64 {
    let hits = digits
        .test_x
        .iter()
        .zip(&digits.test_y)
        .filter(|(x, &y)| crate::lola::model::argmax(&forward(w, x)[2]) == y as usize)
        .count();
    hits as f64 / digits.test_x.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activation_is_the_degree_two_polynomial() {
        for z in [-3.0, -1.0, 0.0, 0.5, 2.0] {
            let want = z * z / 8.0 + z / 2.0 + 0.25;
            assert!((activation(z) - want).abs() < 1e-14);
            let h = 1e-6;
            let fd = (activation(z + h) - activation(z - h)) / (2.0 * h);
            assert!((derivative(z) - fd).abs() < 1e-8);
        }
    }

    #[test]
    fn input_averages_blocks() {
        let pixels: Vec<f64> = (0..784).map(|i| (i % 256) as f64).collect();
        let x = input(&pixels, 14);
        assert_eq!(x.len(), 197);
        let want = (pixels[0] + pixels[1] + pixels[28] + pixels[29]) / 4.0 / 255.0;
        assert!((x[0] - want).abs() < 1e-15);
        assert_eq!(x[196], 1.0);
        assert!(Dims::new(5).is_err());
    }

    /// The replica's backward pass is the gradient of its loss (central differences).
    #[test]
    fn gradients_match_finite_differences() {
        let dims = Dims::new(2).unwrap();
        let w = initial_weights(&dims);
        let xs: Vec<Vec<f64>> = (0..BATCH)
            .map(|b| {
                (0..dims.inputs)
                    .map(|i| ((b * 7 + i * 3) % 5) as f64 / 4.0)
                    .collect()
            })
            .collect();
        let xr: Vec<&[f64]> = xs.iter().map(Vec::as_slice).collect();
        let ys = [3u8, 0, 9, 5];
        let g = gradients(&w, &xr, &ys, 1.0);
        let h = 1e-6;
        for layer in 0..3 {
            for o in 0..w[layer].len() {
                for i in (0..w[layer][o].len()).step_by(3) {
                    let (mut wp, mut wm) = (w.clone(), w.clone());
                    wp[layer][o][i] += h;
                    wm[layer][o][i] -= h;
                    let fd = (loss(&wp, &xr, &ys) - loss(&wm, &xr, &ys)) / (2.0 * h);
                    assert!(
                        (g[layer][o][i] - fd).abs() < 1e-7,
                        "layer {layer} ({o}, {i}): {} vs {fd}",
                        g[layer][o][i]
                    );
                }
            }
        }
    }
}
