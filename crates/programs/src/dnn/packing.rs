//! The slot layout of the encrypted network (ours): every ciphertext holds [`BATCH`] blocks,
//! one per image of the batch, each a `rows x cols` grid, slot `b rows cols + r cols + c`.
//! All three weight matrices, the inputs, the labels and every intermediate use this one
//! layout, so a layer is a product of two ciphertexts and a rotate-and-sum, with no
//! permutations:
//!
//! | ciphertext | slot `(b, r, c)` holds | support |
//! |---|---|---|
//! | `W1` | `W1[r][c]` (every `b`) | `r < h1`, `c < inputs` |
//! | `W2` | `W2[c][r]` (transposed) | `r < h1`, `c < h2` |
//! | `W3` | `W3[r][c]` | `r < 10`, `c < h2` |
//! | `X` | `x_b[c]` (every `r < h1`) | |
//! | `Y` | `y_b[r]` at `c = 0` | |
//!
//! Layer 1 sums over columns (`z1` lands in column 0), layer 2 over rows (`z2` in row 0),
//! layer 3 over columns again (`z3` in column 0); the backward pass runs the same sums the
//! other way, and a weight gradient is a product summed over the batch blocks (rotations by
//! multiples of `rows cols`, so the replicated weights stay replicated).

use super::model::{Dims, Weights, BATCH, CLASSES};
use crate::error::{ProgramError, Result};

/// The grid of one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Rows of a block (a power of two, at least `h1` and 10).
    pub rows: usize,
    /// Columns of a block (a power of two, at least the inputs and `h2`).
    pub cols: usize,
}

impl Layout {
    /// The smallest layout for `dims`; fails if it needs more than `max_slots` slots.
    pub fn new(dims: &Dims, max_slots: usize) -> Result<Self> {
        let l = Self {
            rows: dims.h1.max(CLASSES).next_power_of_two(),
            cols: dims.inputs.max(dims.h2).next_power_of_two(),
        };
        if l.slots() > max_slots {
            return Err(ProgramError::Invalid {
                name: "size (image side)",
                value: dims.side.to_string(),
                allowed: format!(
                    "a network whose layout fits {max_slots} slots; side {} needs {BATCH} x {} x {} = {} (N/2 = 2^15 fits side 14; test-program's 512 fits side 2)",
                    dims.side, l.rows, l.cols, l.slots()
                ),
            });
        }
        Ok(l)
    }

    /// Slots of a ciphertext: `BATCH rows cols`.
    pub fn slots(&self) -> usize {
        BATCH * self.rows * self.cols
    }

    /// Slot of `(b, r, c)`.
    pub fn slot(&self, b: usize, r: usize, c: usize) -> usize {
        (b * self.rows + r) * self.cols + c
    }

    /// Left rotations summing each row into column 0: `1, 2, .., cols / 2`.
    pub fn col_sum(&self) -> Vec<i64> {
        powers(self.cols, 1)
    }

    /// Left rotations summing each column into row 0: `cols, 2 cols, .., rows cols / 2`.
    pub fn row_sum(&self) -> Vec<i64> {
        powers(self.rows, self.cols)
    }

    /// Left rotations summing the blocks: `rows cols, 2 rows cols` (every slot gets the sum).
    pub fn batch_sum(&self) -> Vec<i64> {
        powers(BATCH, self.rows * self.cols)
    }

    /// Right rotations copying column 0 to columns `0 .. width` (rounded up to a power of two).
    pub fn col_copy(&self, width: usize) -> Vec<i64> {
        powers(width.next_power_of_two(), 1)
            .into_iter()
            .map(|s| -s)
            .collect()
    }

    /// Right rotations copying row 0 to rows `0 .. height` (rounded up to a power of two).
    pub fn row_copy(&self, height: usize) -> Vec<i64> {
        powers(height.next_power_of_two(), self.cols)
            .into_iter()
            .map(|s| -s)
            .collect()
    }

    /// Every rotation an iteration of `dims` uses.
    pub fn rotations(&self, dims: &Dims) -> Vec<i64> {
        let mut r = [
            self.col_sum(),
            self.row_sum(),
            self.batch_sum(),
            self.col_copy(dims.h2),
            self.col_copy(dims.inputs),
            self.row_copy(CLASSES),
            self.row_copy(dims.h1),
        ]
        .concat();
        r.sort_unstable();
        r.dedup();
        r
    }

    /// The weights in the layout (table above), one slot vector per layer.
    pub fn pack_weights(&self, w: &Weights) -> [Vec<f64>; 3] {
        let mut out = [(); 3].map(|_| vec![0.0; self.slots()]);
        for b in 0..BATCH {
            for (o, row) in w[0].iter().enumerate() {
                for (i, v) in row.iter().enumerate() {
                    out[0][self.slot(b, o, i)] = *v;
                }
            }
            for (o, row) in w[1].iter().enumerate() {
                for (i, v) in row.iter().enumerate() {
                    out[1][self.slot(b, i, o)] = *v;
                }
            }
            for (o, row) in w[2].iter().enumerate() {
                for (i, v) in row.iter().enumerate() {
                    out[2][self.slot(b, o, i)] = *v;
                }
            }
        }
        out
    }

    /// The weights read back from block `b` of decrypted slot vectors (the inverse of
    /// [`Layout::pack_weights`] for that block).
    pub fn unpack_weights(&self, dims: &Dims, slots: &[Vec<f64>; 3], b: usize) -> Weights {
        let [(r0, c0), (r1, c1), (r2, c2)] = dims.shapes();
        let read = |v: &[f64], rows: usize, cols: usize, transposed: bool| -> Vec<Vec<f64>> {
            (0..rows)
                .map(|o| {
                    (0..cols)
                        .map(|i| {
                            if transposed {
                                v[self.slot(b, i, o)]
                            } else {
                                v[self.slot(b, o, i)]
                            }
                        })
                        .collect()
                })
                .collect()
        };
        [
            read(&slots[0], r0, c0, false),
            read(&slots[1], r1, c1, true),
            read(&slots[2], r2, c2, false),
        ]
    }

    /// The batch's inputs: `x_b` in every row `r < h1` of block `b`.
    pub fn pack_inputs(&self, dims: &Dims, xs: &[&[f64]]) -> Vec<f64> {
        let mut v = vec![0.0; self.slots()];
        for (b, x) in xs.iter().enumerate() {
            for r in 0..dims.h1 {
                for (c, xi) in x.iter().enumerate() {
                    v[self.slot(b, r, c)] = *xi;
                }
            }
        }
        v
    }

    /// The batch's one-hot labels in column 0.
    pub fn pack_labels(&self, ys: &[u8]) -> Vec<f64> {
        let mut v = vec![0.0; self.slots()];
        for (b, &y) in ys.iter().enumerate() {
            v[self.slot(b, y as usize, 0)] = 1.0;
        }
        v
    }

    /// `value` on `(b, r, c)` for `r < rows`, `c < cols` in every block, 0 elsewhere.
    pub fn mask(&self, rows: usize, cols: usize, value: f64) -> Vec<f64> {
        let mut v = vec![0.0; self.slots()];
        for b in 0..BATCH {
            for r in 0..rows {
                for c in 0..cols {
                    v[self.slot(b, r, c)] = value;
                }
            }
        }
        v
    }
}

/// `unit, 2 unit, .., (count / 2) unit` for a power-of-two `count`.
fn powers(count: usize, unit: usize) -> Vec<i64> {
    (0..count.trailing_zeros())
        .map(|k| ((1usize << k) * unit) as i64)
        .collect()
}

/// Left rotation of a clear slot vector (HRot's convention: `out[i] = v[i + s]`).
pub fn rotate_clear(v: &[f64], s: i64) -> Vec<f64> {
    let n = v.len() as i64;
    (0..n).map(|i| v[(i + s).rem_euclid(n) as usize]).collect()
}

#[cfg(test)]
mod tests {
    use super::super::model::initial_weights;
    use super::*;

    fn rotate_sum(v: &[f64], steps: &[i64]) -> Vec<f64> {
        steps.iter().fold(v.to_vec(), |acc, &s| {
            let r = rotate_clear(&acc, s);
            acc.iter().zip(&r).map(|(a, b)| a + b).collect()
        })
    }

    #[test]
    fn full_size_fits_n16_and_small_fits_n10() {
        let full = Layout::new(&Dims::new(14).unwrap(), 1 << 15).unwrap();
        assert_eq!((full.rows, full.cols, full.slots()), (32, 256, 1 << 15));
        let small = Layout::new(&Dims::new(2).unwrap(), 512).unwrap();
        assert_eq!((small.rows, small.cols, small.slots()), (16, 8, 512));
        let e = Layout::new(&Dims::new(14).unwrap(), 512).unwrap_err();
        assert!(e.to_string().contains("size (image side)"), "{e}");
    }

    #[test]
    fn weights_round_trip() {
        let dims = Dims::new(2).unwrap();
        let l = Layout::new(&dims, 512).unwrap();
        let w = initial_weights(&dims);
        let p = l.pack_weights(&w);
        for b in 0..BATCH {
            assert_eq!(l.unpack_weights(&dims, &p, b), w);
        }
    }

    /// Layer 1 in the clear on the layout: product, column sums, then column 0 holds `W1 x_b`.
    #[test]
    fn layer_one_lands_in_column_zero() {
        let dims = Dims::new(2).unwrap();
        let l = Layout::new(&dims, 512).unwrap();
        let w = initial_weights(&dims);
        let xs: Vec<Vec<f64>> = (0..BATCH)
            .map(|b| (0..dims.inputs).map(|i| (b + i) as f64 / 7.0).collect())
            .collect();
        let xr: Vec<&[f64]> = xs.iter().map(Vec::as_slice).collect();
        let p = l.pack_weights(&w);
        let x = l.pack_inputs(&dims, &xr);
        let prod: Vec<f64> = p[0].iter().zip(&x).map(|(a, b)| a * b).collect();
        let s = rotate_sum(&prod, &l.col_sum());
        for (b, xb) in xs.iter().enumerate() {
            let z1 = &super::super::model::forward(&w, xb)[0];
            for (j, z) in z1.iter().enumerate() {
                assert!((s[l.slot(b, j, 0)] - z).abs() < 1e-12);
            }
        }
    }
}
