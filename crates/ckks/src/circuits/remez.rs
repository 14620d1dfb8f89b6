//! Minimax polynomial approximation by the Remez exchange algorithm (ours; no NTL).
//!
//! For `f` on a union of intervals, the best polynomial of degree `d` in the uniform norm
//! equioscillates: its error reaches `+-E` with alternating signs at `n + 1` points (`n` the
//! number of basis functions). Remez's exchange finds it by iterating:
//! 1. on a reference of `n + 1` points, solve `sum_i c_i phi_i(x_j) + (-1)^j E = f(x_j)`;
//! 2. locate the extrema of the error `p - f` on the union (a dense grid, clustered at the
//!    interval ends and geometric near small ends, then golden-section refinement);
//! 3. take as the new reference `n + 1` alternating extrema of largest size;
//!
//! until the extrema's sizes agree to a relative `tolerance`. The basis is Chebyshev on the
//! hull of the intervals (on `[-M, M]` for odd or even approximations, `M` the largest end),
//! which keeps the linear systems well conditioned in `f64`: for the sign function's pieces
//! of degree up to 31 the equioscillation is reached to `1e-9` relative (tested), far below
//! what a CKKS evaluation resolves. Odd and even approximations use only the odd (even)
//! `T_k`, and take the intervals on `x >= 0` (the approximation holds on their mirror images).

use super::polynomial::{chebyshev_eval, Polynomial};
use crate::error::{CkksError, Result};

/// Errors below this are at the resolution of `f64` evaluation (the exchange cannot level them
/// further); such an approximation is accepted as converged.
pub const FLOOR: f64 = 1e-13;

/// Which basis functions the approximation uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Symmetry {
    /// All degrees.
    None,
    /// Odd degrees only (`f` odd; intervals on `x >= 0`).
    Odd,
    /// Even degrees only (`f` even; intervals on `x >= 0`).
    Even,
}

/// Stopping rules of [`minimax`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RemezOptions {
    /// Stop when the reference errors' sizes agree to this relative spread.
    pub tolerance: f64,
    /// At most this many exchanges.
    pub max_iterations: usize,
    /// Grid points per interval used to locate the extrema (before refinement).
    pub grid: usize,
}

impl Default for RemezOptions {
    fn default() -> Self {
        Self {
            tolerance: 1e-9,
            max_iterations: 200,
            grid: 4000,
        }
    }
}

/// A minimax approximation.
#[derive(Clone, Debug)]
pub struct Minimax {
    /// The polynomial (Chebyshev basis on the hull, or on `[-M, M]` with a symmetry).
    pub polynomial: Polynomial,
    /// Its maximum error on the intervals (located on the grid and refined).
    pub error: f64,
    /// The final reference: `n + 1` points where the error alternates in sign.
    pub reference: Vec<f64>,
    /// The signed errors at the reference points.
    pub reference_errors: Vec<f64>,
    /// Exchanges performed.
    pub iterations: usize,
}

fn bad(name: &'static str, value: impl ToString, allowed: impl Into<String>) -> CkksError {
    CkksError::InvalidParameter {
        name,
        value: value.to_string(),
        allowed: allowed.into(),
    }
}

/// The minimax polynomial of degree `degree` for `f` on the union of `intervals`.
///
/// ```
/// use tessera_ckks::circuits::remez::{minimax, RemezOptions, Symmetry};
/// // |x| on [-1, 1] by an even polynomial of degree 8.
/// let m = minimax(|x: f64| x.abs(), &[(0.0, 1.0)], 8, Symmetry::Even, RemezOptions::default())?;
/// assert!(m.error < 0.04);
/// assert!((m.polynomial.eval_plain(-0.5) - 0.5).abs() <= m.error * (1.0 + 1e-6));
/// # Ok::<(), tessera_ckks::CkksError>(())
/// ```
///
/// When the exchange cannot converge in `f64` (a narrow interval far from 0 makes the
/// reference system ill-conditioned; the minimax error is then tiny anyway), the degree is
/// lowered by one step of the symmetry (two for odd/even) until it converges:
/// [`Minimax::polynomial`]'s degree tells which was used.
pub fn minimax(
    f: impl Fn(f64) -> f64,
    intervals: &[(f64, f64)],
    degree: usize,
    symmetry: Symmetry,
    opts: RemezOptions,
) -> Result<Minimax> {
    let step = if symmetry == Symmetry::None { 1 } else { 2 };
    let mut d = degree;
    loop {
        match minimax_of_degree(&f, intervals, d, symmetry, opts) {
            Err(CkksError::Unsupported(_)) if d > step => d -= step,
            other => return other,
        }
    }
}

fn minimax_of_degree(
    f: &impl Fn(f64) -> f64,
    intervals: &[(f64, f64)],
    degree: usize,
    symmetry: Symmetry,
    opts: RemezOptions,
) -> Result<Minimax> {
    if intervals.is_empty() {
        return Err(bad("intervals", "none", "at least one interval"));
    }
    let mut iv: Vec<(f64, f64)> = intervals.to_vec();
    iv.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (i, &(a, b)) in iv.iter().enumerate() {
        if !(a.is_finite() && b.is_finite() && a < b) {
            return Err(bad(
                "interval",
                format!("[{a}, {b}]"),
                "finite ends with a < b",
            ));
        }
        if symmetry != Symmetry::None && a < 0.0 {
            return Err(bad(
                "interval",
                format!("[{a}, {b}]"),
                "for an odd or even approximation, intervals on x >= 0",
            ));
        }
        if i > 0 && a <= iv[i - 1].1 {
            return Err(bad(
                "intervals",
                format!("[{a}, {b}]"),
                "disjoint intervals",
            ));
        }
    }
    if degree == 0 || degree > 255 {
        return Err(bad("degree", degree, "1 to 255"));
    }
    if symmetry == Symmetry::Odd && degree.is_multiple_of(2) {
        return Err(bad("degree", degree, "odd for an odd approximation"));
    }
    if symmetry == Symmetry::Even && degree % 2 == 1 {
        return Err(bad("degree", degree, "even for an even approximation"));
    }
    if !(opts.tolerance > 0.0 && opts.grid >= 16 && opts.max_iterations > 0) {
        return Err(bad(
            "Remez options",
            format!("{opts:?}"),
            "tolerance > 0, grid >= 16, max_iterations > 0",
        ));
    }
    let (lo, hi) = (iv[0].0, iv[iv.len() - 1].1);
    // The basis: T_k(alpha x + beta) for the k of the symmetry.
    let (a, b) = match symmetry {
        Symmetry::None => (lo, hi),
        _ => (-hi, hi),
    };
    let (alpha, beta) = (2.0 / (b - a), -(a + b) / (b - a));
    let ks: Vec<usize> = (0..=degree)
        .filter(|k| match symmetry {
            Symmetry::None => true,
            Symmetry::Odd => k % 2 == 1,
            Symmetry::Even => k % 2 == 0,
        })
        .collect();
    let n = ks.len();
    let phi = |k: usize, x: f64| {
        let u = (alpha * x + beta).clamp(-1.0, 1.0);
        (k as f64 * u.acos()).cos()
    };
    let grid = make_grid(&iv, opts.grid.max(20 * n));
    if grid.len() < n + 1 {
        return Err(bad(
            "intervals",
            "too short",
            "room for the reference points",
        ));
    }
    // Initial reference: Chebyshev-distributed over the union's total length.
    let total: f64 = iv.iter().map(|(a, b)| b - a).sum();
    let mut reference: Vec<f64> = (0..=n)
        .map(|j| {
            let t = 0.5 - 0.5 * (std::f64::consts::PI * j as f64 / n as f64).cos();
            let mut pos = t * total;
            for &(a, b) in &iv {
                if pos <= b - a {
                    return a + pos;
                }
                pos -= b - a;
            }
            hi
        })
        .collect();
    let coeffs_of = |c: &[f64]| {
        let mut full = vec![0.0; degree + 1];
        for (i, &k) in ks.iter().enumerate() {
            full[k] = c[i];
        }
        full
    };
    let mut iterations = 0;
    loop {
        iterations += 1;
        let (c, _level) = solve_reference(&reference, &ks, &phi, f)?;
        let full = coeffs_of(&c);
        let err = |x: f64| chebyshev_eval(&full, alpha * x + beta) - f(x);
        let ext = extrema(&grid, &iv, &err);
        let floor = ext.iter().all(|&(_, e)| e.abs() < FLOOR);
        let next = select(ext, n + 1);
        let done = floor
            || match &next {
                Some(pts) => {
                    let sizes: Vec<f64> = pts.iter().map(|&x| err(x).abs()).collect();
                    let max = sizes.iter().copied().fold(0.0, f64::max);
                    let min = sizes.iter().copied().fold(f64::INFINITY, f64::min);
                    max < FLOOR || max - min <= opts.tolerance * max + 1e-14
                }
                None => false,
            };
        if let (Some(pts), false) = (next, floor) {
            reference = pts;
        }
        if done || iterations >= opts.max_iterations {
            let (c, _) = solve_reference(&reference, &ks, &phi, f)?;
            let full = coeffs_of(&c);
            let err = |x: f64| chebyshev_eval(&full, alpha * x + beta) - f(x);
            let located = extrema(&grid, &iv, &err);
            let error = located.iter().map(|&(_, e)| e.abs()).fold(0.0, f64::max);
            let reference_errors = reference.iter().map(|&x| err(x)).collect();
            if !done {
                return Err(CkksError::Unsupported(format!(
                    "Remez did not converge to a relative spread of {} in {} iterations (degree {degree})",
                    opts.tolerance, opts.max_iterations
                )));
            }
            return Ok(Minimax {
                polynomial: Polynomial::chebyshev(full, a, b)?,
                error,
                reference,
                reference_errors,
                iterations,
            });
        }
    }
}

/// Grid points on each interval: Chebyshev-clustered at both ends, plus geometric ones near a
/// small positive left end (where the sign function's approximations turn).
fn make_grid(iv: &[(f64, f64)], per: usize) -> Vec<f64> {
    let mut g = Vec::new();
    for &(a, b) in iv {
        for i in 0..=per {
            let t = 0.5 - 0.5 * (std::f64::consts::PI * i as f64 / per as f64).cos();
            g.push(a + (b - a) * t);
        }
        if a > 0.0 && b / a > 4.0 {
            let r = (b / a).ln();
            for i in 0..=per {
                g.push(a * (r * i as f64 / per as f64).exp());
            }
        }
    }
    g.sort_by(f64::total_cmp);
    g.dedup();
    g
}

/// Solves for the coefficients and the levelled error on the reference.
fn solve_reference(
    xs: &[f64],
    ks: &[usize],
    phi: &impl Fn(usize, f64) -> f64,
    f: &impl Fn(f64) -> f64,
) -> Result<(Vec<f64>, f64)> {
    let n = ks.len();
    let mut m: Vec<Vec<f64>> = xs
        .iter()
        .enumerate()
        .map(|(j, &x)| {
            let mut row: Vec<f64> = ks.iter().map(|&k| phi(k, x)).collect();
            row.push(if j % 2 == 0 { 1.0 } else { -1.0 });
            row.push(f(x));
            row
        })
        .collect();
    // Gaussian elimination with partial pivoting on the (n + 1) x (n + 2) system.
    for col in 0..=n {
        let piv = (col..=n)
            .max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))
            .expect("rows");
        if m[piv][col].abs() < 1e-300 {
            return Err(CkksError::Unsupported(
                "Remez: singular reference system (points too close)".into(),
            ));
        }
        m.swap(col, piv);
        for i in 0..=n {
            if i != col {
                let r = m[i][col] / m[col][col];
                if r != 0.0 {
                    let pivot_row = m[col].clone();
                    for (x, p) in m[i].iter_mut().zip(&pivot_row).skip(col) {
                        *x -= r * p;
                    }
                }
            }
        }
    }
    let sol: Vec<f64> = (0..=n).map(|i| m[i][n + 1] / m[i][i]).collect();
    Ok((sol[..n].to_vec(), sol[n]))
}

/// Local extrema of `err` on the grid (and the interval ends), refined by golden-section
/// search: `(x, err(x))` in increasing `x`.
fn extrema(grid: &[f64], iv: &[(f64, f64)], err: &impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for &(a, b) in iv {
        let pts: Vec<f64> = grid.iter().copied().filter(|&x| x >= a && x <= b).collect();
        let e: Vec<f64> = pts.iter().map(|&x| err(x)).collect();
        let m = pts.len();
        for i in 0..m {
            let s = e[i].signum();
            let left = if i > 0 {
                s * e[i - 1]
            } else {
                f64::NEG_INFINITY
            };
            let right = if i + 1 < m {
                s * e[i + 1]
            } else {
                f64::NEG_INFINITY
            };
            let here = s * e[i];
            if here >= left && here >= right && here > 0.0 {
                if i == 0 || i + 1 == m {
                    out.push((pts[i], e[i]));
                } else {
                    let x = golden(pts[i - 1], pts[i + 1], |x| s * err(x));
                    let x = if s * err(x) >= here { x } else { pts[i] };
                    out.push((x, err(x)));
                }
            }
        }
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// Maximises `g` on `[a, b]` by golden-section search.
fn golden(mut a: f64, mut b: f64, g: impl Fn(f64) -> f64) -> f64 {
    let r = (5f64.sqrt() - 1.0) / 2.0;
    let mut c = b - r * (b - a);
    let mut d = a + r * (b - a);
    let (mut gc, mut gd) = (g(c), g(d));
    for _ in 0..80 {
        if gc > gd {
            b = d;
            d = c;
            gd = gc;
            c = b - r * (b - a);
            gc = g(c);
        } else {
            a = c;
            c = d;
            gc = gd;
            d = a + r * (b - a);
            gd = g(d);
        }
        if (b - a).abs() <= 1e-15 * (a.abs() + b.abs()) {
            break;
        }
    }
    (a + b) / 2.0
}

/// `count` alternating extrema: runs of one sign keep their largest, then the smaller end is
/// dropped until `count` remain (the alternation is kept). `None` with too few.
fn select(ext: Vec<(f64, f64)>, count: usize) -> Option<Vec<f64>> {
    let mut alt: Vec<(f64, f64)> = Vec::new();
    for (x, e) in ext {
        if e == 0.0 {
            continue;
        }
        match alt.last_mut() {
            Some(last) if last.1.signum() == e.signum() => {
                if e.abs() > last.1.abs() {
                    *last = (x, e);
                }
            }
            _ => alt.push((x, e)),
        }
    }
    if alt.len() < count {
        return None;
    }
    while alt.len() > count {
        // Drop whichever end is smaller; if an interior pair is much smaller than both ends
        // (possible when several alternations sit in a gap), dropping an end keeps the
        // largest errors in the reference, which is what the exchange needs.
        if alt[0].1.abs() < alt[alt.len() - 1].1.abs() {
            alt.remove(0);
        } else {
            alt.pop();
        }
    }
    Some(alt.into_iter().map(|(x, _)| x).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_equioscillation(m: &Minimax) {
        let e = &m.reference_errors;
        let max = e.iter().map(|x| x.abs()).fold(0.0, f64::max);
        for w in e.windows(2) {
            assert!(w[0].signum() != w[1].signum(), "alternation {e:?}");
        }
        for x in e {
            assert!((x.abs() - max).abs() <= 1e-6 * max, "levelled {e:?}");
        }
        // The levelled error is the maximum on the whole domain.
        assert!(m.error <= max * (1.0 + 1e-6), "{} vs {max}", m.error);
    }

    #[test]
    fn abs_by_even_polynomials_equioscillates() {
        for d in [2usize, 4, 8, 16] {
            let m = minimax(
                |x| x.abs(),
                &[(0.0, 1.0)],
                d,
                Symmetry::Even,
                Default::default(),
            )
            .unwrap();
            check_equioscillation(&m);
            assert_eq!(m.reference.len(), d / 2 + 2);
            // Bernstein: the best error for |x| decays like 0.28 / d.
            assert!(
                m.error < 0.3 / d as f64 && m.error > 0.2 / d as f64,
                "{d}: {}",
                m.error
            );
        }
        // Degree 2: the known minimax is x^2 + 1/8, error 1/8.
        let m = minimax(
            |x| x.abs(),
            &[(0.0, 1.0)],
            2,
            Symmetry::Even,
            Default::default(),
        )
        .unwrap();
        assert!((m.error - 0.125).abs() < 1e-9);
        assert!((m.polynomial.eval_plain(0.0) - 0.125).abs() < 1e-9);
    }

    #[test]
    fn sign_on_two_intervals_equioscillates() {
        for (d, eps) in [
            (7usize, 0.1),
            (15, 2f64.powi(-6)),
            (27, 2f64.powi(-13)),
            (31, 0.01),
        ] {
            let m = minimax(
                |x| x.signum(),
                &[(eps, 1.0)],
                d,
                Symmetry::Odd,
                Default::default(),
            )
            .unwrap();
            check_equioscillation(&m);
            assert_eq!(m.polynomial.parity(), super::super::polynomial::Parity::Odd);
            // On the mirror image too.
            assert!((m.polynomial.eval_plain(-0.5) + 1.0).abs() <= m.error * (1.0 + 1e-9));
        }
    }

    #[test]
    fn general_functions_on_unions() {
        // exp on [-1, -0.5] U [0.25, 1], degree 5: equioscillation with 7 points.
        let m = minimax(
            f64::exp,
            &[(-1.0, -0.5), (0.25, 1.0)],
            5,
            Symmetry::None,
            Default::default(),
        )
        .unwrap();
        check_equioscillation(&m);
        assert_eq!(m.reference.len(), 7);
        assert!(m.error < 1e-4);
        // Degree 1 of x^2 on [0, 1]: x - 1/8, error 1/8.
        let m = minimax(
            |x| x * x,
            &[(0.0, 1.0)],
            1,
            Symmetry::None,
            Default::default(),
        )
        .unwrap();
        assert!((m.error - 0.125).abs() < 1e-9);
    }

    #[test]
    fn bad_input_is_refused() {
        let o = RemezOptions::default();
        assert!(minimax(f64::abs, &[], 4, Symmetry::None, o).is_err());
        assert!(minimax(f64::abs, &[(1.0, 0.0)], 4, Symmetry::None, o).is_err());
        assert!(minimax(f64::abs, &[(-1.0, 1.0)], 4, Symmetry::Even, o).is_err());
        assert!(minimax(f64::abs, &[(0.0, 1.0)], 3, Symmetry::Even, o).is_err());
        assert!(minimax(f64::abs, &[(0.0, 0.5), (0.4, 1.0)], 3, Symmetry::None, o).is_err());
        assert!(minimax(f64::abs, &[(0.0, 1.0)], 0, Symmetry::None, o).is_err());
    }
}
