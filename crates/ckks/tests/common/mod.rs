//! Helpers shared by the integration tests.

use num_complex::Complex64;

/// `n` pseudo-random complex values in the unit square (xorshift64; test data only).
pub fn values(seed: u64, n: usize) -> Vec<Complex64> {
    let mut s = seed | 1;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s as f64 / u64::MAX as f64) * 2.0 - 1.0
    };
    (0..n).map(|_| Complex64::new(next(), next())).collect()
}
