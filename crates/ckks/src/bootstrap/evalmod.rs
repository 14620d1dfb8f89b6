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

use crate::error::Result;
use crate::evaluator::Evaluator;
use crate::keys::{Ciphertext, EvaluationKeys};
use std::f64::consts::PI;
use tessera_backend::Backend;

/// Chebyshev coefficients `c_0..c_d` of the interpolant of `f` on `[-1, 1]` at the `d + 1`
/// Chebyshev nodes: `f(u) ~ sum_k c_k T_k(u)`.
pub fn chebyshev_coefficients(f: impl Fn(f64) -> f64, d: usize) -> Vec<f64> {
    let n = d + 1;
    let nodes: Vec<f64> = (0..n)
        .map(|j| (PI * (j as f64 + 0.5) / n as f64).cos())
        .collect();
    let fx: Vec<f64> = nodes.iter().map(|&x| f(x)).collect();
    (0..n)
        .map(|k| {
            let s: f64 = (0..n)
                .map(|j| fx[j] * (PI * k as f64 * (j as f64 + 0.5) / n as f64).cos())
                .sum();
            let c = 2.0 * s / n as f64;
            if k == 0 {
                c / 2.0
            } else {
                c
            }
        })
        .collect()
}

/// `sum_k c_k T_k(u)` in the clear (Clenshaw), the reference for the homomorphic evaluation.
pub fn chebyshev_eval(c: &[f64], u: f64) -> f64 {
    let (mut b1, mut b2) = (0.0, 0.0);
    for &ck in c.iter().skip(1).rev() {
        let b0 = 2.0 * u * b1 - b2 + ck;
        b2 = b1;
        b1 = b0;
    }
    u * b1 - b2 + c.first().copied().unwrap_or(0.0)
}

/// The cosine EvalMod evaluates before its double-angle steps.
pub fn eval_mod_function(k_bound: f64, double_angle: usize) -> impl Fn(f64) -> f64 {
    let div = 2f64.powi(double_angle as i32);
    move |u| (2.0 * PI * (k_bound * u - 0.25) / div).cos()
}

/// One level down at the canonical scale (a product by the constant 1, rescaled).
fn down<B: Backend>(ev: &mut Evaluator<B>, a: &Ciphertext<B::Poly>) -> Result<Ciphertext<B::Poly>> {
    let one = ev.mul_const(a, 1.0, a.scale)?;
    ev.rescale(&one)
}

fn to_level<B: Backend>(
    ev: &mut Evaluator<B>,
    a: &Ciphertext<B::Poly>,
    level: usize,
) -> Result<Ciphertext<B::Poly>> {
    let mut x = a.clone();
    while x.level > level {
        x = down(ev, &x)?;
    }
    Ok(x)
}

/// Product of two canonical ciphertexts, rescaled.
fn product<B: Backend>(
    ev: &mut Evaluator<B>,
    a: &Ciphertext<B::Poly>,
    b: &Ciphertext<B::Poly>,
    keys: &EvaluationKeys,
) -> Result<Ciphertext<B::Poly>> {
    let l = a.level.min(b.level);
    let (a, b) = (to_level(ev, a, l)?, to_level(ev, b, l)?);
    ev.mul_relin_rescale(&a, &b, keys)
}

/// One ciphertext and its canonical copies at lower levels, each made once (moving down a
/// level costs a constant product and a rescale; the BSGS evaluation asks for the same
/// `T_k` at the same level many times).
struct Ladder<P> {
    levels: std::collections::BTreeMap<usize, Ciphertext<P>>,
}

impl<P: Clone> Ladder<P> {
    fn new(x: Ciphertext<P>) -> Self {
        Self {
            levels: [(x.level, x)].into_iter().collect(),
        }
    }

    fn top(&self) -> &Ciphertext<P> {
        self.levels.values().next_back().expect("never empty")
    }

    fn at<B: Backend<Poly = P>>(
        &mut self,
        ev: &mut Evaluator<B>,
        level: usize,
    ) -> Result<Ciphertext<P>> {
        let (_, start) = self
            .levels
            .range(level..)
            .next()
            .expect("a level at or above the request");
        let x = to_level(ev, start, level)?;
        // Keep only the requested level (intermediate copies would hold memory for nothing).
        self.levels.insert(x.level, x.clone());
        Ok(x)
    }
}

/// Levels the Chebyshev evaluation of degree `d` consumes (the `T_k` and the coefficients).
pub fn chebyshev_depth(d: usize) -> usize {
    // ceil(log2 d) levels for T_d, one for the coefficients.
    (usize::BITS - d.max(1).saturating_sub(1).leading_zeros()) as usize + 1
}

/// A polynomial's value during the evaluation: a ciphertext, or a constant when the part
/// of the polynomial it stands for has degree 0.
enum Value<P> {
    Const(f64),
    Ct(Ciphertext<P>),
}

/// `c`'s quotient and remainder by `T_g` in the Chebyshev basis (`deg c < 2g`), from
/// `T_i = 2 T_g T_(i-g) - T_(2g-i)` for `g < i < 2g` and `T_g = T_g T_0`.
fn divide(c: &[f64], g: usize) -> (Vec<f64>, Vec<f64>) {
    let mut r = c.to_vec();
    let mut q = vec![0.0; c.len().saturating_sub(g).max(1)];
    for i in (g..c.len()).rev() {
        let ci = r[i];
        r[i] = 0.0;
        if i == g {
            q[0] += ci;
        } else {
            q[i - g] += 2.0 * ci;
            r[2 * g - i] -= ci;
        }
    }
    r.truncate(g);
    (q, r)
}

/// `sum_k c_k T_k(u)` homomorphically, by baby-step giant-step in the Chebyshev basis: the
/// baby polynomials `T_1 .. T_(m-1)` (`m` a power of two near `sqrt(d)`) and the giants
/// `T_m, T_2m, T_4m, ...` are computed once (`T_(2k) = 2 T_k^2 - 1`,
/// `T_(2k+1) = 2 T_k T_(k+1) - T_1`); the polynomial is divided by the largest giant
/// recursively and the leaves are combinations of the babies with constants. For `d = 31`
/// that is 11 ciphertext products instead of 30, at the same depth `ceil(log2(d + 1)) + 1`.
pub fn chebyshev<B: Backend>(
    ev: &mut Evaluator<B>,
    u: &Ciphertext<B::Poly>,
    c: &[f64],
    keys: &EvaluationKeys,
) -> Result<Ciphertext<B::Poly>> {
    let d = c.len().saturating_sub(1).max(1);
    let m = (((d + 1) as f64).sqrt().ceil() as usize)
        .next_power_of_two()
        .max(2);
    // T_1 .. T_m, then the giants T_(2m), T_(4m), ... up to d.
    let mut t: std::collections::BTreeMap<usize, Ladder<B::Poly>> = Default::default();
    t.insert(1, Ladder::new(u.clone()));
    let mut need: Vec<usize> = (2..=m.min(d.max(2))).collect();
    let mut g = 2 * m;
    while g <= d {
        need.push(g);
        g *= 2;
    }
    for k in need {
        let (a, b) = (k / 2, k - k / 2);
        let l = t[&a].top().level.min(t[&b].top().level);
        let x = t.get_mut(&a).expect("computed").at(ev, l)?;
        let y = t.get_mut(&b).expect("computed").at(ev, l)?;
        let p = ev.mul_relin_rescale(&x, &y, keys)?;
        let p2 = ev.mul_int(&p, 2)?;
        let tk = if a == b {
            ev.add_const(&p2, -1.0)?
        } else {
            let t1 = t.get_mut(&1).expect("T_1").at(ev, p2.level)?;
            ev.sub(&p2, &t1)?
        };
        t.insert(k, Ladder::new(tk));
    }
    let giants: Vec<usize> = t
        .keys()
        .copied()
        .filter(|&k| k >= m && k.is_power_of_two())
        .collect();
    let baby_level = t
        .iter()
        .filter(|(&k, _)| k < m)
        .map(|(_, x)| x.top().level)
        .min()
        .expect("T_1 exists");
    let value = eval_bsgs(ev, c, &mut t, &giants, m, baby_level, keys)?;
    let out = match value {
        Value::Ct(x) => x,
        Value::Const(k) => {
            // A constant polynomial: 0 * u + k, at the usual output level.
            let z = ev.mul_const(u, 0.0, u.scale)?;
            let z = ev.rescale(&z)?;
            ev.add_const(&z, k)?
        }
    };
    let r = ev.context().params().primes_per_rescale();
    to_level(ev, &out, u.level.saturating_sub(r * chebyshev_depth(d)))
}

fn eval_bsgs<B: Backend>(
    ev: &mut Evaluator<B>,
    c: &[f64],
    t: &mut std::collections::BTreeMap<usize, Ladder<B::Poly>>,
    giants: &[usize],
    m: usize,
    baby_level: usize,
    keys: &EvaluationKeys,
) -> Result<Value<B::Poly>> {
    let deg = c.iter().rposition(|&x| x != 0.0).unwrap_or(0);
    if deg == 0 {
        return Ok(Value::Const(c.first().copied().unwrap_or(0.0)));
    }
    if deg < m {
        // Leaf: sum_(k >= 1) c_k T_k at the babies' common level (equal canonical scales, so
        // the products add before one rescale), plus c_0.
        let mut sum: Option<Ciphertext<B::Poly>> = None;
        for (k, &ck) in c.iter().enumerate().take(deg + 1).skip(1) {
            if ck == 0.0 {
                continue;
            }
            let x = t.get_mut(&k).expect("baby").at(ev, baby_level)?;
            let term = ev.mul_const(&x, ck, x.scale)?;
            sum = Some(match sum {
                None => term,
                Some(s) => ev.add(&s, &term)?,
            });
        }
        let sum = ev.rescale(&sum.expect("deg >= 1 has a non-zero coefficient"))?;
        return Ok(Value::Ct(ev.add_const(&sum, c[0])?));
    }
    let g = *giants
        .iter()
        .rev()
        .find(|&&g| g <= deg)
        .expect("the giants reach every degree up to d");
    let (q, r) = divide(&c[..=deg], g);
    let qv = eval_bsgs(ev, &q, t, giants, m, baby_level, keys)?;
    let rv = eval_bsgs(ev, &r, t, giants, m, baby_level, keys)?;
    let qt = match qv {
        Value::Ct(x) => {
            let l = x.level.min(t[&g].top().level);
            let tg = t.get_mut(&g).expect("giant").at(ev, l)?;
            product(ev, &x, &tg, keys)?
        }
        Value::Const(k) => {
            let x = t[&g].top().clone();
            let y = ev.mul_const(&x, k, x.scale)?;
            ev.rescale(&y)?
        }
    };
    Ok(Value::Ct(match rv {
        Value::Const(k) => ev.add_const(&qt, k)?,
        Value::Ct(x) => {
            let l = qt.level.min(x.level);
            let (a, b) = (to_level(ev, &qt, l)?, to_level(ev, &x, l)?);
            ev.add(&a, &b)?
        }
    }))
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
        let sq = product(ev, &y, &y, keys)?;
        let sq2 = ev.mul_int(&sq, 2)?;
        y = ev.add_const(&sq2, -1.0)?;
    }
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chebyshev_division_is_exact() {
        // p = q T_g + r as functions, for random coefficients.
        let c: Vec<f64> = (0..32)
            .map(|k| ((k * 37 % 11) as f64 - 5.0) / 7.0)
            .collect();
        for g in [16usize, 17, 20, 31] {
            let (q, r) = divide(&c, g);
            for i in 0..50 {
                let u = -1.0 + i as f64 / 25.0;
                let tg = (g as f64 * u.acos()).cos();
                let lhs = chebyshev_eval(&c, u);
                let rhs = chebyshev_eval(&q, u) * tg + chebyshev_eval(&r, u);
                assert!((lhs - rhs).abs() < 1e-9, "g = {g}, u = {u}");
            }
        }
    }

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
