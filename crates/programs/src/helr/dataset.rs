//! HELR's data (workloads.md 2.2): MNIST 3 (label 0) vs 8 (label 1) at 14 x 14.
//!
//! * Training: the 3s and 8s of `mnist-10k.npz` (1,976 digits), each 28 x 28 image mapped to
//!   14 x 14 by `x = floor(mean over the 2 x 2 block of (p >> 5))` (values 0..7, the rule that
//!   matches the HELR test file's histogram), then `z = y' (1, x)` with `y' = 2y - 1`, each
//!   column divided by its largest magnitude over the set, rows shuffled with a fixed seed
//!   (ours: SplitMix64 seeded with 20; HELR shuffles too), and padded with zero features to
//!   f = 256.
//! * Test: the exact HELR test file `helr-mnist38-14x14-test.csv` (1,984 rows, label first),
//!   `(1, x)` divided by the test set's own column maxima.

use crate::data::{member, read_csv, read_npz};
use crate::error::{ProgramError, Result};
use std::path::Path;

/// The MNIST archive the training set is rebuilt from.
pub const TRAIN_FILE: &str = "mnist-10k.npz";
/// The HELR test set.
pub const TEST_FILE: &str = "helr-mnist38-14x14-test.csv";
/// Features with the bias: 1 + 14 * 14.
pub const FEATURES: usize = 197;
/// Features padded to a power of two (the slot count of the weight vectors).
pub const PADDED: usize = 256;

/// HELR's training rows (`z`, padded to [`PADDED`]) and test set.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// Training rows `z = y' (1, x)`, normalized, shuffled.
    pub train: Vec<Vec<f64>>,
    /// Test rows `(1, x)`, normalized by the test set's maxima (padded to [`PADDED`]).
    pub test_x: Vec<Vec<f64>>,
    /// Test labels (0 = "3", 1 = "8").
    pub test_y: Vec<u8>,
}

/// SplitMix64: a tiny fixed-seed generator for the shuffle (any fixed permutation would do).
pub(crate) fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The 14 x 14 image of a 28 x 28 one: `floor(mean of the 2 x 2 block of (p >> 5))`.
pub fn downsample(pixels: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(196);
    for r in 0..14 {
        for c in 0..14 {
            let s: u32 = [(0, 0), (0, 1), (1, 0), (1, 1)]
                .iter()
                .map(|(dr, dc)| (pixels[(2 * r + dr) * 28 + 2 * c + dc] as u32) >> 5)
                .sum();
            out.push((s / 4) as f64);
        }
    }
    out
}

/// Divides each column by its largest magnitude (columns that are all zero stay zero).
fn normalize_columns(rows: &mut [Vec<f64>]) {
    let width = rows.first().map_or(0, Vec::len);
    for j in 0..width {
        let m = rows.iter().map(|r| r[j].abs()).fold(0.0, f64::max);
        if m > 0.0 {
            for r in rows.iter_mut() {
                r[j] /= m;
            }
        }
    }
}

fn pad(mut v: Vec<f64>) -> Vec<f64> {
    v.resize(PADDED, 0.0);
    v
}

impl Dataset {
    /// Reads and prepares both sets from `dir`.
    pub fn load(dir: &Path) -> Result<Self> {
        let npz = read_npz(dir, TRAIN_FILE)?;
        let images = member(&npz, TRAIN_FILE, "images")?;
        images.expect_shape(TRAIN_FILE, "images", &[None, Some(28), Some(28)])?;
        let labels = member(&npz, TRAIN_FILE, "labels")?;
        labels.expect_shape(TRAIN_FILE, "labels", &[Some(images.shape[0])])?;
        let mut train = Vec::new();
        for (i, &label) in labels.data.iter().enumerate() {
            let y = match label as u8 {
                3 => -1.0,
                8 => 1.0,
                _ => continue,
            };
            let x = downsample(&images.data[i * 784..(i + 1) * 784]);
            let row: Vec<f64> = std::iter::once(1.0).chain(x).map(|v| y * v).collect();
            train.push(row);
        }
        if train.is_empty() {
            return Err(ProgramError::Shape {
                file: TRAIN_FILE.into(),
                message: "no images labelled 3 or 8".into(),
            });
        }
        normalize_columns(&mut train);
        let mut state = 20u64;
        for i in (1..train.len()).rev() {
            let j = (splitmix(&mut state) % (i as u64 + 1)) as usize;
            train.swap(i, j);
        }
        let rows = read_csv(dir, TEST_FILE, 1 + 196)?;
        let mut test_y = Vec::with_capacity(rows.len());
        let mut test_x: Vec<Vec<f64>> = Vec::with_capacity(rows.len());
        for (i, r) in rows.iter().enumerate() {
            if r[0] != 0.0 && r[0] != 1.0 {
                return Err(ProgramError::Shape {
                    file: TEST_FILE.into(),
                    message: format!("row {}: label {} is not 0 or 1", i + 1, r[0]),
                });
            }
            test_y.push(r[0] as u8);
            test_x.push(std::iter::once(1.0).chain(r[1..].iter().copied()).collect());
        }
        normalize_columns(&mut test_x);
        Ok(Self {
            train: train.into_iter().map(pad).collect(),
            test_x: test_x.into_iter().map(pad).collect(),
            test_y,
        })
    }

    /// Features per row (a power of two: the weights' slot count).
    pub fn width(&self) -> usize {
        self.train.first().map_or(PADDED, Vec::len)
    }

    /// Training block `b` of `m` rows (`ceil(n / m)` blocks; the last one padded with zero
    /// rows, as HELR's `Params` rounds up).
    pub fn block(&self, b: usize, m: usize) -> Vec<Vec<f64>> {
        let width = self.width();
        (b * m..(b + 1) * m)
            .map(|i| {
                self.train
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| vec![0.0; width])
            })
            .collect()
    }

    /// Number of training blocks of `m` rows.
    pub fn blocks(&self, m: usize) -> usize {
        self.train.len().div_ceil(m)
    }

    /// Fraction of test images that `w` classifies correctly (predict "8" iff `<(1, x), w> > 0`).
    pub fn accuracy(&self, w: &[f64]) -> f64 {
        let correct = self
            .test_x
            .iter()
            .zip(&self.test_y)
            .filter(|(x, &y)| {
                let ip: f64 = x.iter().zip(w).map(|(a, b)| a * b).sum();
                (ip > 0.0) == (y == 1)
            })
            .count();
        correct as f64 / self.test_x.len().max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downsample_is_floor_of_block_mean_of_top_bits() {
        let mut px = vec![0.0; 784];
        // Block (0, 0): p >> 5 = 7, 7, 0, 1 -> mean 3.75 -> 3.
        px[0] = 255.0;
        px[1] = 224.0;
        px[28] = 31.0;
        px[29] = 32.0;
        // Block (13, 13): all 255 -> 7.
        for (r, c) in [(26, 26), (26, 27), (27, 26), (27, 27)] {
            px[r * 28 + c] = 255.0;
        }
        let d = downsample(&px);
        assert_eq!(d.len(), 196);
        assert_eq!(d[0], 3.0);
        assert_eq!(d[195], 7.0);
        assert_eq!(d.iter().filter(|&&v| v != 0.0).count(), 2);
    }

    #[test]
    fn blocks_pad_with_zero_rows() {
        let ds = Dataset {
            train: (0..5).map(|i| vec![i as f64; PADDED]).collect(),
            test_x: vec![],
            test_y: vec![],
        };
        assert_eq!(ds.blocks(2), 3);
        let b = ds.block(2, 2);
        assert_eq!(b[0][0], 4.0);
        assert!(b[1].iter().all(|&v| v == 0.0));
    }
}
