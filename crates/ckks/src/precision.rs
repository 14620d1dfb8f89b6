//! Precision statistics of a decrypted result against the same computation in the clear, in
//! the spirit of Lattigo's `PrecisionStats`: errors `|got - want|` per slot (complex modulus),
//! summarised as min / mean / median / max, and in bits as `-log2` of the error.

use num_complex::Complex64;

/// Error statistics over the slots.
#[derive(Clone, Debug, PartialEq)]
pub struct PrecisionStats {
    /// Smallest slot error.
    pub min_error: f64,
    /// Mean slot error.
    pub mean_error: f64,
    /// Median slot error.
    pub median_error: f64,
    /// Largest slot error.
    pub max_error: f64,
}

impl PrecisionStats {
    /// Statistics of `got` against `want` (compared up to the shorter length).
    pub fn new(want: &[Complex64], got: &[Complex64]) -> Self {
        let mut e: Vec<f64> = want.iter().zip(got).map(|(w, g)| (g - w).norm()).collect();
        if e.is_empty() {
            e.push(0.0);
        }
        e.sort_by(f64::total_cmp);
        Self {
            min_error: e[0],
            mean_error: e.iter().sum::<f64>() / e.len() as f64,
            median_error: e[e.len() / 2],
            max_error: e[e.len() - 1],
        }
    }

    /// `-log2(mean error)`: the precision the issues report as `precision_bits`.
    pub fn mean_precision_bits(&self) -> f64 {
        -self.mean_error.log2()
    }

    /// `-log2(max error)`: the worst slot, reported as `max_error_bits`.
    pub fn max_error_bits(&self) -> f64 {
        -self.max_error.log2()
    }
}
