//! The sort's plaintext replica: the same network, masks and composite polynomials as
//! [`super::he`], evaluated in f64, slot by slot.

use super::network::steps;
use tessera_ckks::circuits::sign::CompositeSign;

/// `x` rotated left by `s` (slot `p` gets `x[p + s]`, cyclically), as `HRot` by `s`.
fn rotate(x: &[f64], s: isize) -> Vec<f64> {
    let n = x.len() as isize;
    (0..n).map(|p| x[(p + s).rem_euclid(n) as usize]).collect()
}

/// Sorts `x` (length `2^k`) by the network of [`super::network`] with the comparison
/// `sign`'s polynomials, exactly as the encrypted program computes it (without its noise).
pub fn sort(x: &[f64], sign: &CompositeSign) -> Vec<f64> {
    let n = x.len();
    let mut x = x.to_vec();
    for step in steps(n.trailing_zeros() as usize) {
        let j = step.distance as isize;
        let r = rotate(&x, j);
        let (left, half, half_flip) = (step.left(n), step.half(n), step.half_flip(n));
        let mut lo = vec![0.0; n];
        let mut hi = vec![0.0; n];
        for p in 0..n {
            let d = x[p] - r[p];
            let t = sign.eval_plain(d) * (half_flip[p] * d) + half[p] * d;
            let mx = left[p] * x[p];
            lo[p] = mx - t;
            hi[p] = mx - 2.0 * half[p] * d + t;
        }
        let hi = rotate(&hi, -j);
        x = lo.iter().zip(&hi).map(|(a, b)| a + b).collect();
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With the program's comparison the replica sorts 64 uniform values within 1e-2.
    #[test]
    fn replica_sorts_within_the_bound() {
        let sign = super::super::comparison().unwrap();
        let x = super::super::input(64, 7);
        let got = sort(&x, &sign);
        let mut want = x.clone();
        want.sort_by(f64::total_cmp);
        let err = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-3, "{err}");
    }

    #[test]
    fn rotation_direction_is_hrot_s() {
        assert_eq!(rotate(&[0.0, 1.0, 2.0, 3.0], 1), [1.0, 2.0, 3.0, 0.0]);
        assert_eq!(rotate(&[0.0, 1.0, 2.0, 3.0], -1), [3.0, 0.0, 1.0, 2.0]);
    }
}
