//! The sign function by composite polynomials, comparison, and the approximate ReLU.
//!
//! - **Cheon-Kim-Kim** (ASIACRYPT 2020): `sgn ~ f_n^(d_f) o g_n^(d_g)` with odd pieces of degree
//!   `2n + 1`. `f_n(x) = sum_(i=0..n) 4^-i C(2i, i) x (1 - x^2)^i` (closed form), and `g_n`
//!   the fast-growing piece: we compute it as CKK describe it, the odd polynomial of degree
//!   `2n + 1` that maps `[delta, 1]` into `[1 - tau, 1]` for the smallest `delta` (so with the
//!   steepest rise at 0), `tau = 1/4`: `(1 - tau/2)` times the minimax of the sign on
//!   `[delta, 1]`, `delta` found by bisection on the minimax error (our Remez). For `n = 3` it
//!   agrees with the `g_3` quoted in workloads.md 5.3 to about `1e-3` (tested).
//! - **Lee et al.** (minimax composite sign, IEEE TDSC; the AppReLU of ICML'22): odd minimax
//!   pieces `p_1, ..., p_k` of the given degrees, each the minimax of the sign on the range
//!   the previous piece leaves (`p_1` on `[2^-alpha, 1]`, `p_(i+1)` on `[1 - d_i, 1 + d_i]`
//!   where `d_i` is `p_i`'s error), computed by our Remez when the circuit is built and cached.
//!   Each piece is stored divided by the next piece's domain bound, so every piece is a
//!   Chebyshev series on `[-1, 1]` and costs exactly `ceil(log2(deg + 1))` levels.
//!
//! Every function has a plain twin (`*_plain`) evaluating the same polynomials in the clear,
//! for the programs' replicas.

use super::polynomial::{self, EvalOptions, OutputScale, Polynomial};
use super::remez::{minimax, RemezOptions, Symmetry};
use crate::error::{CkksError, Result};
use crate::evaluator::Evaluator;
use crate::keys::{Ciphertext, EvaluationKeys};
use std::sync::OnceLock;
use tessera_backend::Backend;

/// A composite approximation of the sign on `[-1, 1]` away from 0: pieces applied in order.
#[derive(Clone, Debug)]
pub struct CompositeSign {
    pieces: Vec<Polynomial>,
    /// `(domain lower bound, worst error)` when known (the minimax construction).
    precision: Option<(f64, f64)>,
}

fn bad(name: &'static str, value: impl ToString, allowed: impl Into<String>) -> CkksError {
    CkksError::InvalidParameter {
        name,
        value: value.to_string(),
        allowed: allowed.into(),
    }
}

fn binomial(n: u64, k: u64) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// CKK's `f_n` in the power basis (odd, degree `2n + 1`), from the closed form
/// `sum_(i=0..n) 4^-i C(2i, i) x (1 - x^2)^i`.
///
/// ```
/// use tessera_ckks::circuits::sign::ckk_f;
/// let f3 = ckk_f(3)?;
/// let want = [0.0, 35.0 / 16.0, 0.0, -35.0 / 16.0, 0.0, 21.0 / 16.0, 0.0, -5.0 / 16.0];
/// for (c, w) in f3.coeffs().iter().zip(want) {
///     assert!((c - w).abs() < 1e-12);
/// }
/// # Ok::<(), tessera_ckks::CkksError>(())
/// ```
pub fn ckk_f(n: usize) -> Result<Polynomial> {
    if !(1..=15).contains(&n) {
        return Err(bad("n", n, "1 to 15"));
    }
    let mut c = vec![0.0; 2 * n + 2];
    for i in 0..=n {
        let w = binomial(2 * i as u64, i as u64) / 4f64.powi(i as i32);
        for j in 0..=i {
            let sign = if j % 2 == 0 { 1.0 } else { -1.0 };
            c[2 * j + 1] += w * sign * binomial(i as u64, j as u64);
        }
    }
    Polynomial::power(c)
}

/// CKK's `g_n` with `tau = 1/4` (see the module documentation), in the Chebyshev basis of
/// `[-1, 1]`; computed once per `n` and cached.
pub fn ckk_g(n: usize) -> Result<Polynomial> {
    if !(1..=15).contains(&n) {
        return Err(bad("n", n, "1 to 15"));
    }
    static CACHE: OnceLock<std::sync::Mutex<std::collections::HashMap<usize, Polynomial>>> =
        OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(p) = cache.lock().ok().and_then(|m| m.get(&n).cloned()) {
        return Ok(p);
    }
    let tau = 0.25;
    let target = (tau / 2.0) / (1.0 - tau / 2.0);
    let d = 2 * n + 1;
    let fit = |delta: f64| {
        minimax(
            f64::signum,
            &[(delta, 1.0)],
            d,
            Symmetry::Odd,
            RemezOptions::default(),
        )
    };
    // The minimax error falls as delta grows: bisect (in log delta) for the target.
    let (mut lo, mut hi) = (1e-6f64, 0.99f64);
    for _ in 0..60 {
        let mid = (lo * hi).sqrt();
        if fit(mid)?.error > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let p = fit(hi)?.polynomial.scaled(1.0 - tau / 2.0);
    if let Ok(mut m) = cache.lock() {
        m.insert(n, p.clone());
    }
    Ok(p)
}

impl CompositeSign {
    /// CKK's `f_n^(d_f) o g_n^(d_g)`: `d_g` times `g_n`, then `d_f` times `f_n`.
    pub fn ckk(n: usize, df: usize, dg: usize) -> Result<Self> {
        if df == 0 || df + dg > 64 {
            return Err(bad(
                "d_f, d_g",
                format!("{df}, {dg}"),
                "d_f >= 1, d_f + d_g <= 64",
            ));
        }
        let (f, g) = (ckk_f(n)?, ckk_g(n)?);
        let pieces = std::iter::repeat_n(g, dg)
            .chain(std::iter::repeat_n(f, df))
            .collect();
        Ok(Self {
            pieces,
            precision: None,
        })
    }

    /// Lee et al.'s composite minimax sign with odd `degrees` for inputs in
    /// `[-1, -eps] U [eps, 1]`, computed by our Remez (see the module documentation).
    /// [`CompositeSign::precision`] gives the final error bound.
    pub fn minimax(degrees: &[usize], eps: f64) -> Result<Self> {
        if degrees.is_empty() || degrees.len() > 8 {
            return Err(bad("degrees", degrees.len(), "1 to 8 pieces"));
        }
        if let Some(d) = degrees.iter().find(|&&d| d % 2 == 0 || d > 63) {
            return Err(bad("degree", d, "odd, up to 63"));
        }
        if !(eps > 1e-9 && eps < 1.0) {
            return Err(bad("eps", eps, "1e-9 < eps < 1"));
        }
        let mut domain = (eps, 1.0);
        let mut raw = Vec::new();
        let mut err = 1.0;
        for &d in degrees {
            let m = minimax(
                f64::signum,
                &[domain],
                d,
                Symmetry::Odd,
                RemezOptions::default(),
            )?;
            err = m.error;
            raw.push((m.polynomial, domain.1));
            if err >= 1.0 {
                return Err(bad(
                    "eps",
                    eps,
                    format!("a domain the degree-{d} piece separates from 0 (its error is {err})"),
                ));
            }
            domain = (1.0 - err, 1.0 + err);
        }
        // Piece i gets divided by the next piece's bound M, and the next is read on [-1, 1]
        // (its coefficients in T_k(x / M) are the same).
        let mut pieces = Vec::with_capacity(raw.len());
        for i in 0..raw.len() {
            let next_bound = raw.get(i + 1).map_or(1.0, |(_, m)| *m);
            let p = Polynomial::chebyshev(raw[i].0.coeffs().to_vec(), -1.0, 1.0)?;
            pieces.push(p.scaled(1.0 / next_bound));
        }
        Ok(Self {
            pieces,
            precision: Some((eps, err)),
        })
    }

    /// [`Self::minimax`] with precision `2^-alpha`: the smallest input gap `eps` (to a
    /// relative 1 %, by bisection on `log2 eps`) for which the composite's error is at most
    /// `2^-alpha`.
    pub fn minimax_for_precision(degrees: &[usize], alpha: u32) -> Result<Self> {
        if !(1..=40).contains(&alpha) {
            return Err(bad("alpha", alpha, "1 to 40"));
        }
        let target = 2f64.powi(-(alpha as i32));
        let meets = |log_eps: f64| -> Result<Option<Self>> {
            let s = Self::minimax(degrees, 2f64.powf(log_eps))?;
            Ok(s.precision.is_some_and(|(_, e)| e <= target).then_some(s))
        };
        let (mut lo, mut hi) = (-29.0f64, -1.0f64);
        let mut best = match meets(hi) {
            Ok(Some(s)) => s,
            _ => {
                return Err(bad(
                    "alpha",
                    alpha,
                    format!("a precision these degrees reach ({degrees:?} do not reach 2^-{alpha} even for eps = 1/2)"),
                ))
            }
        };
        while hi - lo > 0.015 {
            let mid = (lo + hi) / 2.0;
            match meets(mid) {
                Ok(Some(s)) => {
                    best = s;
                    hi = mid;
                }
                _ => lo = mid,
            }
        }
        Ok(best)
    }

    /// The AppReLU sign of Lee et al. (ICML'22, FHE-MP-CNN): degrees `{15, 15, 27}` with
    /// precision `2^-13` (`alpha = 13`), on the smallest input gap that precision allows
    /// ([`Self::minimax_for_precision`]); computed on first use and cached.
    pub fn lee_relu() -> Result<&'static Self> {
        static CACHE: OnceLock<std::result::Result<CompositeSign, CkksError>> = OnceLock::new();
        CACHE
            .get_or_init(|| Self::minimax_for_precision(&[15, 15, 27], 13))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The pieces, in the order they apply.
    pub fn pieces(&self) -> &[Polynomial] {
        &self.pieces
    }

    /// `(eps, err)`: `|p(x) - sgn(x)| <= err` for `eps <= |x| <= 1`, for the minimax
    /// construction (`None` for CKK's).
    pub fn precision(&self) -> Option<(f64, f64)> {
        self.precision
    }

    /// Levels the homomorphic sign consumes.
    pub fn depth(&self) -> usize {
        self.pieces.iter().map(Polynomial::depth).sum()
    }

    /// The composite in the clear.
    pub fn eval_plain(&self, x: f64) -> f64 {
        self.pieces.iter().fold(x, |v, p| p.eval_plain(v))
    }

    /// The pieces with the last one replaced by `a p + b`.
    fn with_last(&self, a: f64, b: f64) -> Vec<Polynomial> {
        let mut pieces = self.pieces.clone();
        if let Some(last) = pieces.last_mut() {
            *last = last.scaled(a).plus_constant(b);
        }
        pieces
    }

    /// Runs the pieces; the last with the given output scale.
    fn run<B: Backend>(
        pieces: &[Polynomial],
        ev: &mut Evaluator<B>,
        x: &Ciphertext<B::Poly>,
        keys: &EvaluationKeys,
        last_scale: OutputScale,
    ) -> Result<Ciphertext<B::Poly>> {
        let mut y = x.clone();
        for (i, p) in pieces.iter().enumerate() {
            let output_scale = if i + 1 == pieces.len() {
                last_scale
            } else {
                OutputScale::Input
            };
            y = polynomial::evaluate_with(
                ev,
                &y,
                p,
                keys,
                EvalOptions {
                    depth: None,
                    output_scale,
                },
            )?;
        }
        Ok(y)
    }

    /// `sgn(x)` homomorphically (slots in `[-1, 1]`), at the input's scale, [`Self::depth`]
    /// levels down.
    pub fn sign<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        x: &Ciphertext<B::Poly>,
        keys: &EvaluationKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        Self::run(&self.pieces, ev, x, keys, OutputScale::Input)
    }

    /// `(sgn(a - b) + 1) / 2`: about 1 where `a > b`, 0 where `a < b`, 1/2 where equal
    /// (`a - b` in `[-1, 1]`). The affine map is folded into the last piece (no level).
    ///
    /// ```
    /// use tessera_ckks::circuits::sign::CompositeSign;
    /// let s = CompositeSign::ckk(3, 2, 3)?;
    /// assert_eq!(s.depth(), 15);
    /// assert!(s.compare_plain(0.6, 0.2) > 0.99 && s.compare_plain(0.1, 0.4) < 0.01);
    /// # Ok::<(), tessera_ckks::CkksError>(())
    /// ```
    pub fn compare<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        a: &Ciphertext<B::Poly>,
        b: &Ciphertext<B::Poly>,
        keys: &EvaluationKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        let d = ev.sub(a, b)?;
        Self::run(&self.with_last(0.5, 0.5), ev, &d, keys, OutputScale::Input)
    }

    /// [`Self::compare`] in the clear.
    pub fn compare_plain(&self, a: f64, b: f64) -> f64 {
        let pieces = self.with_last(0.5, 0.5);
        pieces.iter().fold(a - b, |v, p| p.eval_plain(v))
    }

    /// AppReLU, `x (1 + p(x / bound)) / 2` with `p` this sign (Lee et al., `bound = 40` in
    /// FHE-MP-CNN): `1 + depth()` levels for the sign of `x / bound` (the division is a
    /// constant product) and one for the product by `x`. The output has the input's scale.
    ///
    /// ```
    /// use tessera_ckks::circuits::sign::CompositeSign;
    /// let s = CompositeSign::lee_relu()?;
    /// assert_eq!(s.depth(), 13); // 4 + 4 + 5
    /// assert!((s.app_relu_plain(3.0, 40.0) - 3.0).abs() < 1e-2);
    /// assert!(s.app_relu_plain(-3.0, 40.0).abs() < 1e-2);
    /// # Ok::<(), tessera_ckks::CkksError>(())
    /// ```
    pub fn app_relu<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        x: &Ciphertext<B::Poly>,
        bound: f64,
        keys: &EvaluationKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        if !(bound.is_finite() && bound > 0.0) {
            return Err(bad("bound", bound, "a finite number > 0"));
        }
        let params = ev.context().params().clone();
        let r = params.primes_per_rescale();
        let needed = r * (self.depth() + 2);
        if x.level < needed {
            return Err(CkksError::OutOfLevels {
                op: "AppReLU",
                needed,
                level: x.level,
            });
        }
        // x / bound at the input's scale, one level down.
        let u = ev.mul_const(x, 1.0 / bound, params.rescale_divisor(x.level))?;
        let u = ev.rescale(&u)?;
        let u = Ciphertext {
            scale: x.scale,
            ..u
        };
        // (1 + p) / 2 at the scale of the prime the final product removes.
        let h_level = u.level - r * self.depth();
        let h = Self::run(
            &self.with_last(0.5, 0.5),
            ev,
            &u,
            keys,
            OutputScale::Exact(params.rescale_divisor(h_level)),
        )?;
        let xd = ev.drop_levels(x, x.level - h.level)?;
        let y = ev.mul_relin_rescale(&h, &xd, keys)?;
        Ok(Ciphertext {
            scale: x.scale,
            ..y
        })
    }

    /// [`Self::app_relu`] in the clear.
    pub fn app_relu_plain(&self, x: f64, bound: f64) -> f64 {
        x * self.compare_plain(x / bound, 0.0)
    }
}

/// Whether every piece is a Chebyshev series on `[-1, 1]` or a power series (no level is
/// spent on interval maps).
#[cfg(test)]
fn no_maps(s: &CompositeSign) -> bool {
    s.pieces.iter().all(|p| match p.basis() {
        super::polynomial::Basis::Power => true,
        super::polynomial::Basis::Chebyshev { a, b } => a == -1.0 && b == 1.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ckk_f_is_the_closed_form_and_g_matches_the_quoted_g3() {
        for n in 1..=5 {
            let f = ckk_f(n).unwrap();
            assert_eq!(f.degree(), 2 * n + 1);
            // f_n(1) = 1 and f_n is odd.
            assert!((f.eval_plain(1.0) - 1.0).abs() < 1e-12);
            assert!((f.eval_plain(-0.3) + f.eval_plain(0.3)).abs() < 1e-12);
        }
        let g3 = |x: f64| {
            (4589.0 * x - 16577.0 * x.powi(3) + 25614.0 * x.powi(5) - 12860.0 * x.powi(7)) / 1024.0
        };
        let g = ckk_g(3).unwrap();
        let worst = (0..=1000)
            .map(|i| i as f64 / 1000.0)
            .map(|x| (g.eval_plain(x) - g3(x)).abs())
            .fold(0.0, f64::max);
        eprintln!("max |g_3 (ours) - g_3 (quoted)| on [0, 1]: {worst:e}");
        assert!(worst < 5e-3, "{worst}");
        // g maps [-1, 1] into [-1, 1].
        for i in 0..=1000 {
            let x = i as f64 / 1000.0;
            assert!(g.eval_plain(x).abs() <= 1.0 + 1e-9);
        }
    }

    #[test]
    fn composite_signs_approximate_the_sign() {
        let s = CompositeSign::ckk(3, 4, 8).unwrap();
        assert_eq!(s.depth(), 36);
        assert!(no_maps(&s));
        for &x in &[1e-3, 0.01, 0.3, 1.0] {
            assert!(
                (s.eval_plain(x) - 1.0).abs() < 1e-3,
                "{x}: {}",
                s.eval_plain(x)
            );
            assert!((s.eval_plain(-x) + 1.0).abs() < 1e-3);
        }
        let m = CompositeSign::lee_relu().unwrap();
        assert!(no_maps(m));
        assert_eq!(m.depth(), 13);
        let (eps, err) = m.precision().unwrap();
        eprintln!(
            "Lee et al. {{15, 15, 27}}, alpha = 13: error {err:e} = 2^{:.2} for |x| >= 2^{:.2}",
            err.log2(),
            eps.log2()
        );
        assert!(err <= 2f64.powi(-13));
        // With the input gap 2^-13 itself, three pieces of degrees 15, 15, 27 cannot separate:
        // an odd polynomial bounded by 2 on [-1, 1] has slope at most 2 d at 0 (Markov), so
        // the three pieces lift 2^-13 to at most about 2^-13 * 30 * 30 * 54 < 1.
        let tight = CompositeSign::minimax(&[15, 15, 27], 2f64.powi(-13)).unwrap();
        assert!(tight.precision().unwrap().1 > 0.1);
        let worst = (0..=20000)
            .map(|i| eps + (1.0 - eps) * (i as f64 / 20000.0).powi(3))
            .map(|x| {
                (m.eval_plain(x) - 1.0)
                    .abs()
                    .max((m.eval_plain(-x) + 1.0).abs())
            })
            .fold(0.0, f64::max);
        assert!(worst <= err * (1.0 + 1e-6) + 1e-12, "{worst} > {err}");
    }
}
