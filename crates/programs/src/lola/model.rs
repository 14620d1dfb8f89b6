//! The LoLa (CryptoNets low-latency) MNIST network of workloads.md 4.1-4.2 and its float
//! forward pass (the replica): conv 5x5 stride 2 with 5 maps on the 28 x 28 image padded by
//! one row and column at the bottom and right, square, dense 845 -> 100, square,
//! dense 100 -> 10; input = pixel / 256.

use crate::data::{member, read_npz};
use crate::error::Result;
use std::path::Path;

/// The weights file.
pub const WEIGHTS_FILE: &str = "lola-mnist-weights.npz";
/// The images (the first `n` of `mnist-10k.npz` are classified).
pub const IMAGES_FILE: &str = "mnist-10k.npz";
/// Output side of the convolution.
pub const SIDE: usize = 13;
/// Pixels per map (13 x 13).
pub const PIXELS: usize = SIDE * SIDE;
/// Convolution maps.
pub const MAPS: usize = 5;
/// Kernel offsets (5 x 5).
pub const OFFSETS: usize = 25;
/// Hidden units.
pub const HIDDEN: usize = 100;
/// Classes.
pub const CLASSES: usize = 10;

/// The trained weights.
#[derive(Clone, Debug)]
pub struct Model {
    /// `conv[m][k]`, `k = 5 kr + kc`.
    pub conv: Vec<Vec<f64>>,
    /// Convolution bias per map.
    pub conv_bias: Vec<f64>,
    /// `fc1[o][i]`, `i = m * 169 + r * 13 + c`.
    pub fc1: Vec<Vec<f64>>,
    /// Dense-1 bias.
    pub fc1_bias: Vec<f64>,
    /// `fc2[c][o]`.
    pub fc2: Vec<Vec<f64>>,
    /// Dense-2 bias.
    pub fc2_bias: Vec<f64>,
}

fn rows(data: &[f64], width: usize) -> Vec<Vec<f64>> {
    data.chunks(width).map(<[f64]>::to_vec).collect()
}

impl Model {
    /// Reads the weights from `dir`, checking every shape.
    pub fn load(dir: &Path) -> Result<Self> {
        let npz = read_npz(dir, WEIGHTS_FILE)?;
        let get = |key: &str, shape: &[Option<usize>]| -> Result<Vec<f64>> {
            let a = member(&npz, WEIGHTS_FILE, key)?;
            a.expect_shape(WEIGHTS_FILE, key, shape)?;
            Ok(a.data.clone())
        };
        Ok(Self {
            conv: rows(
                &get("conv_weight", &[Some(MAPS), Some(1), Some(5), Some(5)])?,
                OFFSETS,
            ),
            conv_bias: get("conv_bias", &[Some(MAPS)])?,
            fc1: rows(
                &get("fc1_weight", &[Some(HIDDEN), Some(MAPS * PIXELS)])?,
                MAPS * PIXELS,
            ),
            fc1_bias: get("fc1_bias", &[Some(HIDDEN)])?,
            fc2: rows(&get("fc2_weight", &[Some(CLASSES), Some(HIDDEN)])?, HIDDEN),
            fc2_bias: get("fc2_bias", &[Some(CLASSES)])?,
        })
    }

    /// The float forward pass: the 10 logits of `image` (784 pixels, 0..255).
    pub fn forward(&self, image: &[f64]) -> Vec<f64> {
        let windows = windows(image);
        let mut h = vec![0.0; MAPS * PIXELS];
        for m in 0..MAPS {
            for p in 0..PIXELS {
                let s: f64 = (0..OFFSETS).map(|k| self.conv[m][k] * windows[k][p]).sum();
                let v = s + self.conv_bias[m];
                h[m * PIXELS + p] = v * v;
            }
        }
        let y: Vec<f64> = (0..HIDDEN)
            .map(|o| {
                let v = dot(&self.fc1[o], &h) + self.fc1_bias[o];
                v * v
            })
            .collect();
        (0..CLASSES)
            .map(|c| dot(&self.fc2[c], &y) + self.fc2_bias[c])
            .collect()
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// LoLa's convolution representation (the client's encoding): for each kernel offset
/// `k = 5 kr + kc`, the 169 input values it sees, `x[2r + kr][2c + kc] / 256` (zero in the
/// padding row and column).
pub fn windows(image: &[f64]) -> Vec<Vec<f64>> {
    (0..OFFSETS)
        .map(|k| {
            let (kr, kc) = (k / 5, k % 5);
            (0..PIXELS)
                .map(|p| {
                    let (r, c) = (2 * (p / SIDE) + kr, 2 * (p % SIDE) + kc);
                    if r < 28 && c < 28 {
                        image[r * 28 + c] / 256.0
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect()
}

/// The index of the largest logit.
pub fn argmax(v: &[f64]) -> usize {
    v.iter()
        .enumerate()
        .fold((0, f64::NEG_INFINITY), |(bi, bv), (i, &x)| {
            if x > bv {
                (i, x)
            } else {
                (bi, bv)
            }
        })
        .0
}

/// The first `n` images of `mnist-10k.npz` and their labels.
pub fn images(dir: &Path, n: usize) -> Result<(Vec<Vec<f64>>, Vec<u8>)> {
    let npz = read_npz(dir, IMAGES_FILE)?;
    let images = member(&npz, IMAGES_FILE, "images")?;
    images.expect_shape(IMAGES_FILE, "images", &[None, Some(28), Some(28)])?;
    let labels = member(&npz, IMAGES_FILE, "labels")?;
    labels.expect_shape(IMAGES_FILE, "labels", &[Some(images.shape[0])])?;
    let n = n.min(images.shape[0]);
    Ok((
        (0..n)
            .map(|i| images.data[i * 784..(i + 1) * 784].to_vec())
            .collect(),
        labels.data[..n].iter().map(|&l| l as u8).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_follow_stride_two_with_padding() {
        let image: Vec<f64> = (0..784).map(|i| i as f64).collect();
        let w = windows(&image);
        // Offset (0, 0) at output (0, 0) is pixel (0, 0); offset (4, 4) at output (12, 12)
        // is pixel (28, 28): padding.
        assert_eq!(w[0][0], 0.0);
        assert_eq!(w[6][0], (28.0 + 1.0) / 256.0);
        assert_eq!(w[24][PIXELS - 1], 0.0);
        assert_eq!(w[0][14], (2.0 * 28.0 + 2.0) / 256.0);
    }

    #[test]
    fn argmax_picks_the_first_largest() {
        assert_eq!(argmax(&[0.0, 3.0, -1.0, 3.0]), 1);
    }
}
