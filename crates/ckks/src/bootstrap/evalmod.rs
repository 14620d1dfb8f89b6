//! EvalMod: the homomorphic reduction modulo `q_0`, by the scaled sine computed as a cosine
//! with double-angle steps (Han and Ki, CT-RSA 2020; the form Lattigo uses).
//!
//! The input slots hold `u = (I + eps) / K` with an integer `|I| <= K` and a small `eps`
//! (`eps = m / q_0`). With `r` double-angle steps:
//! 1. `h(u) ~ cos(2 pi (K u - 1/4) / 2^r)`, a Chebyshev interpolant of degree `d` on `[-1, 1]`;
//! 2. `r` times `y <- 2 y^2 - 1`, which doubles the angle, giving
//!    `cos(2 pi (K u - 1/4)) = sin(2 pi (I + eps)) = sin(2 pi eps) ~ 2 pi eps`.
//!
//! The approximation error of `sin(2 pi eps) / (2 pi)` against `eps` is `(2 pi)^2 eps^3 / 6`,
//! which is what bounds the precision for a given `q_0 / Delta`.
//!
//! ## Scales
//! Every ciphertext here is kept at the *canonical* scale of its level: starting from the
//! input's `(level, S)`, one level down has `S^2 / q_level`. Products of two canonical
//! ciphertexts at one level, rescaled, are canonical; so is a constant product with
//! `const_scale = S` rescaled, and moving down a level is exactly that with the constant 1.
//! Sums and differences therefore always meet equal scales, with no drift to correct.

use crate::circuits::polynomial::{self, EvalOptions, OutputScale, Polynomial};
use crate::error::Result;
use crate::evaluator::Evaluator;
use crate::keys::{Ciphertext, EvaluationKeys};
use std::f64::consts::PI;
use tessera_backend::Backend;

pub use crate::circuits::polynomial::{chebyshev_coefficients, chebyshev_eval};

/// The cosine EvalMod evaluates before its double-angle steps.
pub fn eval_mod_function(k_bound: f64, double_angle: usize) -> impl Fn(f64) -> f64 {
    let div = 2f64.powi(double_angle as i32);
    move |u| (2.0 * PI * (k_bound * u - 0.25) / div).cos()
}

/// Levels EvalMod gives its degree-`d` Chebyshev evaluation: `ceil(log2 d) + 1`, one more
/// than the minimum `ceil(log2(d + 1))` when `d + 1` is a power of two. The spare level lets
/// [`polynomial::evaluate_with`] keep larger leaves (11 ciphertext products instead of 19 for
/// `d = 31`), and keeps the bootstrapping presets' level layout.
pub fn chebyshev_depth(d: usize) -> usize {
    (usize::BITS - d.max(1).saturating_sub(1).leading_zeros()) as usize + 1
}

/// `sum_k c_k T_k(u)` homomorphically on `[-1, 1]` within [`chebyshev_depth`] levels, at the
/// canonical scales of the circuits' polynomial evaluation
/// ([`crate::circuits::polynomial`]).
pub fn chebyshev<B: Backend>(
    ev: &mut Evaluator<B>,
    u: &Ciphertext<B::Poly>,
    c: &[f64],
    keys: &EvaluationKeys,
) -> Result<Ciphertext<B::Poly>> {
    let p = Polynomial::chebyshev(c.to_vec(), -1.0, 1.0)?;
    let d = c.len().saturating_sub(1).max(1);
    polynomial::evaluate_with(
        ev,
        u,
        &p,
        keys,
        EvalOptions {
            depth: Some(chebyshev_depth(d)),
            output_scale: OutputScale::Canonical,
        },
    )
}

/// EvalMod on `u` (slots `(I + eps) / K`): the Chebyshev cosine, then `r` double angles.
/// Returns slots `sin(2 pi eps)`.
pub fn eval_mod<B: Backend>(
    ev: &mut Evaluator<B>,
    u: &Ciphertext<B::Poly>,
    cheb: &[f64],
    double_angle: usize,
    keys: &EvaluationKeys,
) -> Result<Ciphertext<B::Poly>> {
    let mut y = chebyshev(ev, u, cheb, keys)?;
    for _ in 0..double_angle {
        // Canonical scales: the square, rescaled, is canonical one level down.
        let sq = ev.mul_relin_rescale(&y, &y, keys)?;
        let sq2 = ev.mul_int(&sq, 2)?;
        y = ev.add_const(&sq2, -1.0)?;
    }
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chebyshev_interpolant_of_the_evalmod_cosine_is_accurate() {
        let (k, r) = (12.0, 3);
        let f = eval_mod_function(k, r);
        let c = chebyshev_coefficients(&f, 40);
        let worst = (0..=2000)
            .map(|i| -1.0 + i as f64 / 1000.0)
            .map(|u| (chebyshev_eval(&c, u) - f(u)).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-12, "{worst}");
        // The double angles turn it into sin(2 pi (K u)) near the integers.
        for (i, eps) in [(3i32, 1e-4), (-7, -2e-4), (0, 5e-5)] {
            let u = (i as f64 + eps) / k;
            let mut y = chebyshev_eval(&c, u);
            for _ in 0..r {
                y = 2.0 * y * y - 1.0;
            }
            assert!((y / (2.0 * PI) - eps).abs() < 1e-9);
        }
        assert_eq!(chebyshev_depth(1), 1);
        assert_eq!(chebyshev_depth(31), 6);
        assert_eq!(chebyshev_depth(32), 6);
        assert_eq!(chebyshev_depth(33), 7);
    }
}
