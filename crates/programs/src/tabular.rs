//! Tabular stand-in data (REED's regressions, workloads.md 6): a fixed-seed shuffle, a
//! training / test split, and columns centred on the training means and divided by the
//! largest centred magnitude over the training rows (so every scaled training value lies in
//! `[-1, 1]`).

/// A shuffled split of rows and the scaling of some columns, learnt on the training rows.
#[derive(Clone, Debug)]
pub struct Split {
    /// Training row indices, shuffled.
    pub train: Vec<usize>,
    /// Test row indices (the rest), shuffled.
    pub test: Vec<usize>,
    columns: Vec<usize>,
    mean: Vec<f64>,
    max: Vec<f64>,
}

impl Split {
    /// Shuffles `0..rows.len()` (Fisher-Yates with a 64-bit LCG seeded with `seed`; any
    /// fixed permutation would do), takes the first `train_rows` for training and learns the
    /// scaling of `columns` on them.
    ///
    /// ```
    /// use tessera_programs::tabular::Split;
    /// let rows: Vec<Vec<f64>> = (0..10).map(|i| vec![i as f64]).collect();
    /// let s = Split::new(&rows, &[0], 8, 6);
    /// assert_eq!((s.train.len(), s.test.len()), (8, 2));
    /// assert!(s.train.iter().all(|&i| s.scaled(&rows[i])[0].abs() <= 1.0));
    /// ```
    pub fn new(rows: &[Vec<f64>], columns: &[usize], train_rows: usize, seed: u64) -> Self {
        let mut order: Vec<usize> = (0..rows.len()).collect();
        let mut state = seed;
        for i in (1..order.len()).rev() {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            order.swap(i, ((state >> 33) % (i as u64 + 1)) as usize);
        }
        let test = order.split_off(train_rows.min(order.len()));
        let n = order.len() as f64;
        let mean: Vec<f64> = columns
            .iter()
            .map(|&j| order.iter().map(|&i| rows[i][j]).sum::<f64>() / n)
            .collect();
        let max = columns
            .iter()
            .zip(&mean)
            .map(|(&j, m)| {
                order
                    .iter()
                    .map(|&i| (rows[i][j] - m).abs())
                    .fold(0.0, f64::max)
            })
            .collect();
        Self {
            train: order,
            test,
            columns: columns.to_vec(),
            mean,
            max,
        }
    }

    /// The scaled `columns` of `row`, in order (a constant column scales to 0).
    pub fn scaled(&self, row: &[f64]) -> Vec<f64> {
        self.columns
            .iter()
            .enumerate()
            .map(|(k, &j)| {
                if self.max[k] > 0.0 {
                    (row[j] - self.mean[k]) / self.max[k]
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// Undoes [`Self::scaled`] for the `k`-th scaled column.
    pub fn unscale(&self, k: usize, v: f64) -> f64 {
        v * self.max[k] + self.mean[k]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_a_permutation_and_scales_into_the_unit_interval() {
        let rows: Vec<Vec<f64>> = (0..50)
            .map(|i| vec![i as f64, 3.0, (i * i) as f64])
            .collect();
        let s = Split::new(&rows, &[0, 1, 2], 40, 6);
        let mut all: Vec<usize> = s.train.iter().chain(&s.test).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..50).collect::<Vec<_>>());
        assert_eq!(s.test.len(), 10);
        for &i in &s.train {
            let v = s.scaled(&rows[i]);
            assert!(v.iter().all(|x| x.abs() <= 1.0), "{v:?}");
            assert_eq!(v[1], 0.0);
            assert!((s.unscale(2, v[2]) - rows[i][2]).abs() < 1e-9);
        }
    }
}
