//! Polynomials in the power or the Chebyshev basis, evaluated homomorphically by baby-step
//! giant-step with minimal multiplicative depth.
//!
//! ## The evaluation
//! A polynomial `p = sum_k c_k B_k` (`B_k = x^k` or `T_k(u)`, `u` the affine map of `[a, b]`
//! onto `[-1, 1]`) is divided recursively by the largest power of two `g <= deg p`:
//! `p = q B_g + r` (power basis: a shift; Chebyshev: `T_i = 2 T_g T_(i-g) - T_(2g-i)`). The
//! recursion stops at a *leaf* `c_0 + sum_(1 <= k < m) c_k B_k` (`m` a power of two, the baby
//! steps), a constant times each basis element added before one rescale. A leaf costs
//! `1 + ceil(log2 k_max)` levels; a split `max(depth q, log2 g) + 1`. The planner keeps every
//! node within a depth budget (by default `ceil(log2(deg + 1))`, the minimum) by splitting a
//! leaf further whenever its top baby would exceed the budget, and picks the baby-step size `m`
//! that needs the fewest ciphertext products. Basis elements are made at minimal depth: for an
//! odd or even polynomial `B_k` from `B_(2^j)` and `B_(k - 2^j)` (`2^j < k <= 2^(j+1)`), so
//! only the odd (even) babies and the powers of two are ever computed (the odd/even
//! specialisation; a division preserves the parity); for a Chebyshev series of mixed parity
//! from `T_ceil(k/2)` and `T_floor(k/2)`, so the only term subtracted is `T_1` (or 1).
//!
//! ## Scales
//! Basis elements are kept at the *canonical* scale of their level: starting from the input's
//! `(level, S)`, one level down has `S^2 / q_level` (products of canonical ciphertexts,
//! rescaled, are canonical; moving a ciphertext down a level is a product by the constant 1
//! encoded at the level's canonical scale). Every value derived from the coefficients carries
//! one extra factor `rho` (its constants are encoded at `rho` times the canonical scale), chosen
//! so that the output has the requested scale: by default the input's.

use crate::error::{CkksError, Result};
use crate::evaluator::Evaluator;
use crate::keys::{Ciphertext, EvaluationKeys};
use std::collections::{BTreeMap, BTreeSet};
use std::f64::consts::PI;
use tessera_backend::Backend;

/// Largest degree accepted (the evaluation plans are built recursively; far beyond any use).
pub const MAX_DEGREE: usize = 4095;

/// The basis a polynomial's coefficients refer to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Basis {
    /// `x^k`.
    Power,
    /// `T_k(u)` with `u = (2 x - a - b) / (b - a)` mapping `[a, b]` onto `[-1, 1]`.
    Chebyshev {
        /// Left end of the interval.
        a: f64,
        /// Right end of the interval.
        b: f64,
    },
}

/// Which coefficients can be non-zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parity {
    /// Only even-index coefficients (the zero polynomial counts as even).
    Even,
    /// Only odd-index coefficients.
    Odd,
    /// Both.
    Mixed,
}

/// The scale the homomorphic evaluation's output gets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OutputScale {
    /// The input ciphertext's scale (the default).
    Input,
    /// The canonical scale of the output level (no correction factor): what a chain of
    /// products would give, used by EvalMod.
    Canonical,
    /// This scale.
    Exact(f64),
}

/// Options of [`evaluate_with`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EvalOptions {
    /// Levels the evaluation may consume (`None`: the minimum, [`Polynomial::depth`]). A larger
    /// budget can save ciphertext products; the output is always exactly this many levels
    /// below the input.
    pub depth: Option<usize>,
    /// The output's scale.
    pub output_scale: OutputScale,
}

impl Default for EvalOptions {
    fn default() -> Self {
        Self {
            depth: None,
            output_scale: OutputScale::Input,
        }
    }
}

/// A real polynomial in the power basis or in the Chebyshev basis of an interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Polynomial {
    basis: Basis,
    coeffs: Vec<f64>,
}

fn bad(name: &'static str, value: impl ToString, allowed: impl Into<String>) -> CkksError {
    CkksError::InvalidParameter {
        name,
        value: value.to_string(),
        allowed: allowed.into(),
    }
}

/// `ceil(log2 n)` for `n >= 1` (0 for `n <= 1`).
pub(crate) fn ceil_log2(n: usize) -> usize {
    if n <= 1 {
        0
    } else {
        (usize::BITS - (n - 1).leading_zeros()) as usize
    }
}

impl Polynomial {
    fn checked(basis: Basis, coeffs: Vec<f64>) -> Result<Self> {
        if coeffs.is_empty() || coeffs.len() > MAX_DEGREE + 1 {
            return Err(bad(
                "coefficients",
                coeffs.len(),
                format!("1 to {} coefficients", MAX_DEGREE + 1),
            ));
        }
        if let Some(c) = coeffs.iter().find(|c| !c.is_finite()) {
            return Err(bad("coefficient", c, "finite numbers"));
        }
        Ok(Self { basis, coeffs })
    }

    /// `sum_k coeffs[k] x^k`.
    ///
    /// ```
    /// use tessera_ckks::circuits::polynomial::{Parity, Polynomial};
    /// let p = Polynomial::power(vec![0.0, 1.5, 0.0, -0.5])?;
    /// assert_eq!(p.parity(), Parity::Odd);
    /// assert_eq!((p.degree(), p.depth()), (3, 2));
    /// assert!((p.eval_plain(0.5) - 0.6875).abs() < 1e-15);
    /// # Ok::<(), tessera_ckks::CkksError>(())
    /// ```
    pub fn power(coeffs: Vec<f64>) -> Result<Self> {
        Self::checked(Basis::Power, coeffs)
    }

    /// `sum_k coeffs[k] T_k(u)` with `u` mapping `[a, b]` onto `[-1, 1]`.
    pub fn chebyshev(coeffs: Vec<f64>, a: f64, b: f64) -> Result<Self> {
        if !(a.is_finite() && b.is_finite() && a < b) {
            return Err(bad(
                "interval",
                format!("[{a}, {b}]"),
                "finite ends with a < b",
            ));
        }
        Self::checked(Basis::Chebyshev { a, b }, coeffs)
    }

    /// The Chebyshev interpolant of `f` of degree `d` on `[a, b]`, at the `d + 1` Chebyshev
    /// nodes (near-minimax for smooth `f`).
    ///
    /// ```
    /// use tessera_ckks::circuits::polynomial::Polynomial;
    /// let p = Polynomial::interpolate(|x| x.exp(), 12, -1.0, 2.0)?;
    /// assert!((p.eval_plain(1.5) - 1.5f64.exp()).abs() < 1e-10);
    /// # Ok::<(), tessera_ckks::CkksError>(())
    /// ```
    pub fn interpolate(f: impl Fn(f64) -> f64, d: usize, a: f64, b: f64) -> Result<Self> {
        if d > MAX_DEGREE {
            return Err(bad("degree", d, format!("0 to {MAX_DEGREE}")));
        }
        let (alpha, beta) = (2.0 / (b - a), -(a + b) / (b - a));
        Self::chebyshev(chebyshev_coefficients(|u| f((u - beta) / alpha), d), a, b)
    }

    /// The basis.
    pub fn basis(&self) -> Basis {
        self.basis
    }

    /// The coefficients, index = basis element.
    pub fn coeffs(&self) -> &[f64] {
        &self.coeffs
    }

    /// Index of the last non-zero coefficient (0 for constants).
    pub fn degree(&self) -> usize {
        self.coeffs.iter().rposition(|&c| c != 0.0).unwrap_or(0)
    }

    /// Which coefficients are non-zero (exact zeros).
    pub fn parity(&self) -> Parity {
        let odd_zero = self.coeffs.iter().skip(1).step_by(2).all(|&c| c == 0.0);
        let even_zero = self.coeffs.iter().step_by(2).all(|&c| c == 0.0);
        match (odd_zero, even_zero) {
            (true, _) => Parity::Even,
            (false, true) => Parity::Odd,
            _ => Parity::Mixed,
        }
    }

    /// `(alpha, beta)` of the map `u = alpha x + beta` into the basis' domain.
    fn affine(&self) -> (f64, f64) {
        match self.basis {
            Basis::Power => (1.0, 0.0),
            Basis::Chebyshev { a, b } => (2.0 / (b - a), -(a + b) / (b - a)),
        }
    }

    /// Whether mapping the input onto `[-1, 1]` needs a constant product (one level): only a
    /// Chebyshev interval of width other than 2.
    fn map_costs_a_level(&self) -> bool {
        (self.affine().0 - 1.0).abs() > 1e-12 && self.degree() > 0
    }

    /// The value at `x` in the clear: Horner, or Clenshaw after the interval map.
    pub fn eval_plain(&self, x: f64) -> f64 {
        match self.basis {
            Basis::Power => self.coeffs.iter().rev().fold(0.0, |acc, &c| acc * x + c),
            Basis::Chebyshev { .. } => {
                let (alpha, beta) = self.affine();
                chebyshev_eval(&self.coeffs, alpha * x + beta)
            }
        }
    }

    /// Levels [`evaluate`] consumes: `ceil(log2(degree + 1))`, plus one for a Chebyshev
    /// interval whose width is not 2 (the map onto `[-1, 1]` is then a constant product;
    /// a shift alone is free).
    pub fn depth(&self) -> usize {
        ceil_log2(self.degree() + 1) + usize::from(self.map_costs_a_level())
    }

    /// `k p`.
    pub fn scaled(&self, k: f64) -> Self {
        Self {
            basis: self.basis,
            coeffs: self.coeffs.iter().map(|c| c * k).collect(),
        }
    }

    /// `p + k`.
    pub fn plus_constant(&self, k: f64) -> Self {
        let mut coeffs = self.coeffs.clone();
        coeffs[0] += k;
        Self {
            basis: self.basis,
            coeffs,
        }
    }

    /// Ciphertext-ciphertext products one evaluation with the given level budget performs
    /// (`None`: the minimal depth).
    pub fn ciphertext_products(&self, depth: Option<usize>) -> Result<usize> {
        let budget = depth.unwrap_or(self.depth()) - usize::from(self.map_costs_a_level());
        Ok(self.plan(budget)?.1)
    }

    fn is_chebyshev(&self) -> bool {
        matches!(self.basis, Basis::Chebyshev { .. })
    }

    /// Whether basis elements are made from halves ([`factors`]): Chebyshev series of mixed
    /// parity.
    fn halves(&self) -> bool {
        self.is_chebyshev() && self.parity() == Parity::Mixed
    }

    /// The cheapest plan within `budget` levels (the map excluded) over the baby-step sizes,
    /// with its number of ciphertext products.
    fn plan(&self, budget: usize) -> Result<(Node, usize)> {
        let deg = self.degree();
        if budget < ceil_log2(deg + 1) {
            return Err(bad(
                "depth",
                budget,
                format!(
                    "at least ceil(log2(degree + 1)) = {} levels for degree {deg}",
                    ceil_log2(deg + 1)
                ),
            ));
        }
        let cheb = self.is_chebyshev();
        let c = &self.coeffs[..=deg];
        let mut best: Option<(Node, usize)> = None;
        let mut m = 2;
        loop {
            let node = plan_node(c, budget, m, cheb);
            let cost = node.products(cheb, self.halves());
            if best.as_ref().is_none_or(|(_, b)| cost < *b) {
                best = Some((node, cost));
            }
            if m > deg {
                break;
            }
            m *= 2;
        }
        Ok(best.expect("at least one baby-step size"))
    }
}

/// An evaluation plan.
#[derive(Clone, Debug)]
enum Node {
    Const(f64),
    /// `c_0 + sum_(k >= 1) c_k B_k`, one constant product per non-zero `c_k`, one rescale.
    Leaf(Vec<f64>),
    /// `q B_g + r`.
    Split {
        g: usize,
        q: Box<Node>,
        r: Box<Node>,
    },
}

/// Levels `B_k` takes (`k >= 1`).
fn basis_depth(k: usize) -> usize {
    ceil_log2(k)
}

fn plan_node(c: &[f64], budget: usize, m: usize, cheb: bool) -> Node {
    let deg = c.iter().rposition(|&x| x != 0.0).unwrap_or(0);
    if deg == 0 {
        return Node::Const(c.first().copied().unwrap_or(0.0));
    }
    let leaf_depth = 1
        + (1..=deg)
            .filter(|&k| c[k] != 0.0)
            .map(basis_depth)
            .max()
            .unwrap_or(0);
    let g = 1usize << (usize::BITS - 1 - deg.leading_zeros());
    if (deg < m && leaf_depth <= budget) || g < 2 || budget < 2 {
        return Node::Leaf(c[..=deg].to_vec());
    }
    let (q, r) = divide(&c[..=deg], g, cheb);
    Node::Split {
        g,
        q: Box::new(plan_node(&q, budget - 1, m, cheb)),
        r: Box::new(plan_node(&r, budget, m, cheb)),
    }
}

impl Node {
    /// Basis elements the plan multiplies by (leaves' terms and giant steps).
    fn uses(&self, out: &mut BTreeSet<usize>) {
        match self {
            Node::Const(_) => {}
            Node::Leaf(c) => out.extend((1..c.len()).filter(|&k| c[k] != 0.0)),
            Node::Split { g, q, r } => {
                out.insert(*g);
                q.uses(out);
                r.uses(out);
            }
        }
    }

    /// Ciphertext products: one per basis element beyond `B_1` (with the ones their
    /// construction needs) and one per split whose quotient is not a constant.
    fn products(&self, cheb: bool, halves: bool) -> usize {
        let mut used = BTreeSet::new();
        self.uses(&mut used);
        let basis = closure(&used, cheb, halves);
        basis.iter().filter(|&&k| k >= 2).count() + self.splits()
    }

    fn splits(&self) -> usize {
        match self {
            Node::Split { q, r, .. } => {
                usize::from(!matches!(**q, Node::Const(_))) + q.splits() + r.splits()
            }
            _ => 0,
        }
    }
}

/// The factors `B_k` is made from, both at depth `ceil(log2 k) - 1`, and the index the
/// Chebyshev form subtracts (`T_(a+b) = 2 T_a T_b - T_(a-b)`; 0 stands for the constant `T_0`):
/// - `halves`: `(ceil(k/2), floor(k/2), 0 or 1)`, so only `T_1` is ever subtracted (one copy per
///   level serves every product): for polynomials that need every baby anyway;
/// - otherwise `(2^j, k - 2^j, 2^(j+1) - k)` with `2^j < k <= 2^(j+1)`: an odd (even) `k` then
///   needs only odd (even) factors and powers of two (the odd/even specialisation).
fn factors(k: usize, halves: bool) -> (usize, usize, usize) {
    if halves {
        let (a, b) = (k - k / 2, k / 2);
        return (a, b, a - b);
    }
    let a = 1usize << (usize::BITS - 1 - (k - 1).leading_zeros());
    (a, k - a, 2 * a - k)
}

/// Every basis element needed to make `used` (and `used` itself).
fn closure(used: &BTreeSet<usize>, cheb: bool, halves: bool) -> BTreeSet<usize> {
    let mut all = BTreeSet::new();
    let mut todo: Vec<usize> = used.iter().copied().collect();
    while let Some(k) = todo.pop() {
        if k == 0 || !all.insert(k) || k == 1 {
            continue;
        }
        let (a, b, c) = factors(k, halves);
        todo.push(a);
        todo.push(b);
        if cheb {
            todo.push(c);
        }
    }
    all
}

/// `c`'s quotient and remainder by `B_g` (`deg c < 2 g`): a shift in the power basis; in the
/// Chebyshev basis from `T_i = 2 T_g T_(i-g) - T_(2g-i)` for `g < i < 2g` and `T_g = T_g T_0`.
fn divide(c: &[f64], g: usize, cheb: bool) -> (Vec<f64>, Vec<f64>) {
    if !cheb {
        let q = c.get(g..).map(<[f64]>::to_vec).unwrap_or_default();
        let mut r = c.to_vec();
        r.truncate(g);
        return (if q.is_empty() { vec![0.0] } else { q }, r);
    }
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

/// `sum_k c_k T_k(u)` in the clear (Clenshaw).
pub fn chebyshev_eval(c: &[f64], u: f64) -> f64 {
    let (mut b1, mut b2) = (0.0, 0.0);
    for &ck in c.iter().skip(1).rev() {
        let b0 = 2.0 * u * b1 - b2 + ck;
        b2 = b1;
        b1 = b0;
    }
    u * b1 - b2 + c.first().copied().unwrap_or(0.0)
}

/// `p(x)` homomorphically at the minimal depth [`Polynomial::depth`], output at the input's
/// scale.
///
/// ```
/// use std::sync::Arc;
/// use tessera_backend::CpuBackend;
/// use tessera_ckks::circuits::polynomial::{evaluate, Polynomial};
/// use tessera_ckks::{decrypt, CkksContext, Evaluator, KeyGenerator, Parameters};
///
/// # fn main() -> tessera_ckks::Result<()> {
/// let ctx = CkksContext::new(Parameters::preset("test-medium")?)?;
/// let mut kg = KeyGenerator::new(&ctx)?;
/// let sk = kg.secret_key()?;
/// let keys = kg.evaluation_keys(&sk, &[], false)?;
/// let x = [0.5, -0.25, 0.75, -1.0];
/// let (level, scale) = (ctx.params().max_level(), ctx.params().default_scale());
/// let ct = kg.encrypt_sk(&ctx.encode_real(&x, 4, level, scale)?, &sk)?;
/// let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone()))?;
///
/// // 1.5 x - 0.5 x^3 (a step of the smooth sign), two levels.
/// let p = Polynomial::power(vec![0.0, 1.5, 0.0, -0.5])?;
/// let cx = ev.load(&ct)?;
/// let y = evaluate(&mut ev, &cx, &p, &keys)?;
/// assert_eq!(y.level, level - 2);
/// let out = ctx.decode(&decrypt(&ev.store(&y)?, &sk)?)?;
/// for (o, v) in out.iter().zip(x) {
///     assert!((o.re - p.eval_plain(v)).abs() < 1e-6);
/// }
/// # Ok(())
/// # }
/// ```
pub fn evaluate<B: Backend>(
    ev: &mut Evaluator<B>,
    x: &Ciphertext<B::Poly>,
    p: &Polynomial,
    keys: &EvaluationKeys,
) -> Result<Ciphertext<B::Poly>> {
    evaluate_with(ev, x, p, keys, EvalOptions::default())
}

/// [`evaluate`] with a level budget and an output scale.
pub fn evaluate_with<B: Backend>(
    ev: &mut Evaluator<B>,
    x: &Ciphertext<B::Poly>,
    p: &Polynomial,
    keys: &EvaluationKeys,
    opts: EvalOptions,
) -> Result<Ciphertext<B::Poly>> {
    let map_level = usize::from(p.map_costs_a_level());
    let depth = opts.depth.unwrap_or(p.depth());
    let budget = depth
        .checked_sub(map_level)
        .ok_or_else(|| bad("depth", depth, "at least one level for the interval map"))?;
    let (plan, _) = p.plan(budget)?;
    let r = ev.context().params().primes_per_rescale();
    if x.level < r * depth {
        return Err(CkksError::OutOfLevels {
            op: "polynomial evaluation",
            needed: r * depth,
            level: x.level,
        });
    }
    let out_level = x.level - r * depth;
    let target = match opts.output_scale {
        OutputScale::Input => Some(x.scale),
        OutputScale::Exact(s) if s.is_finite() && s >= 1.0 => Some(s),
        OutputScale::Exact(s) => return Err(bad("output scale", s, "a finite number >= 1")),
        OutputScale::Canonical => None,
    };
    if let Node::Const(k) = plan {
        // x * 0 is exactly zero at any scale.
        let z = ev.mul_const(x, 0.0, 1.0)?;
        let z = Ciphertext {
            scale: target.unwrap_or(x.scale),
            ..z
        };
        return ev.add_const(&z, k);
    }
    // u = alpha x + beta at the canonical start.
    let (alpha, beta) = p.affine();
    let mut u = x.clone();
    if map_level == 1 {
        let divisor = ev.context().params().rescale_divisor(x.level);
        u = ev.mul_const(&u, alpha, divisor)?;
        u = ev.rescale(&u)?;
        u.scale = x.scale;
    }
    if beta != 0.0 {
        u = ev.add_const(&u, beta)?;
    }
    let mut st = State::new(ev, keys, &u, p.is_chebyshev(), p.halves());
    let rho = target.map_or(1.0, |t| t / st.canonical(out_level));
    st.rho = rho;
    // Every basis element first, in increasing order (each product then finds its factors'
    // copies at the levels it needs already made on the way).
    let mut used = BTreeSet::new();
    plan.uses(&mut used);
    for k in closure(&used, p.is_chebyshev(), p.halves()) {
        st.make(k)?;
    }
    let out = match st.eval(&plan)? {
        Value::Ct(v) => st.lower(&v, out_level)?,
        Value::Const(_) => unreachable!("constant plans return above"),
    };
    Ok(match target {
        // The bookkeeping reaches the target up to floating-point rounding; state it exactly.
        Some(t) => Ciphertext { scale: t, ..out },
        None => out,
    })
}

/// The evaluation's working state: the basis elements made so far, each with its copies at
/// lower levels (moving down a level costs a constant product and a rescale; the plan asks
/// for the same `B_k` at the same level many times).
struct State<'a, B: Backend> {
    ev: &'a mut Evaluator<B>,
    keys: &'a EvaluationKeys,
    cheb: bool,
    halves: bool,
    top: usize,
    /// Canonical scale by level.
    scales: BTreeMap<usize, f64>,
    basis: BTreeMap<usize, BTreeMap<usize, Ciphertext<B::Poly>>>,
    rho: f64,
}

impl<'a, B: Backend> State<'a, B> {
    fn new(
        ev: &'a mut Evaluator<B>,
        keys: &'a EvaluationKeys,
        u: &Ciphertext<B::Poly>,
        cheb: bool,
        halves: bool,
    ) -> Self {
        let params = ev.context().params().clone();
        let r = params.primes_per_rescale();
        let mut scales = BTreeMap::new();
        let (mut l, mut s) = (u.level, u.scale);
        scales.insert(l, s);
        while l >= r {
            s = s * s / params.rescale_divisor(l);
            l -= r;
            scales.insert(l, s);
        }
        let mut basis = BTreeMap::new();
        basis.insert(1, [(u.level, u.clone())].into_iter().collect());
        Self {
            ev,
            keys,
            cheb,
            halves,
            top: u.level,
            scales,
            basis,
            rho: 1.0,
        }
    }

    fn canonical(&self, level: usize) -> f64 {
        self.scales.get(&level).copied().unwrap_or(1.0)
    }

    /// `a` moved down to `level`, keeping its factor over the canonical scale.
    fn lower(&mut self, a: &Ciphertext<B::Poly>, level: usize) -> Result<Ciphertext<B::Poly>> {
        let mut x = a.clone();
        while x.level > level {
            let one = self.ev.mul_const(&x, 1.0, self.canonical(x.level))?;
            x = self.ev.rescale(&one)?;
        }
        Ok(x)
    }

    /// `B_k` at `level` (at or below where it is made).
    fn basis_at(&mut self, k: usize, level: usize) -> Result<Ciphertext<B::Poly>> {
        self.make(k)?;
        let copies = &self.basis[&k];
        if let Some(x) = copies.get(&level) {
            return Ok(x.clone());
        }
        let mut x = copies
            .range(level..)
            .next()
            .map(|(_, c)| c.clone())
            .ok_or_else(|| {
                CkksError::Unsupported(format!("basis element {k} below level {level}"))
            })?;
        // One level at a time, keeping every copy: a later request in between starts there.
        let r = self.ev.context().params().primes_per_rescale();
        while x.level > level {
            x = self.lower(&x, x.level - r)?;
            self.basis
                .get_mut(&k)
                .expect("made")
                .insert(x.level, x.clone());
        }
        Ok(x)
    }

    /// The level `B_k` is made at.
    fn level_of(&self, k: usize) -> usize {
        let r = self.ev.context().params().primes_per_rescale();
        self.top - r * basis_depth(k)
    }

    /// Makes `B_k` (and its factors) at minimal depth.
    fn make(&mut self, k: usize) -> Result<()> {
        if self.basis.contains_key(&k) {
            return Ok(());
        }
        let (a, b, c) = factors(k, self.halves);
        let l = self.level_of(a).min(self.level_of(b));
        let x = self.basis_at(a, l)?;
        let y = self.basis_at(b, l)?;
        let p = self.ev.mul_relin_rescale(&x, &y, self.keys)?;
        let bk = if !self.cheb {
            p
        } else {
            let p2 = self.ev.mul_int(&p, 2)?;
            if c == 0 {
                self.ev.add_const(&p2, -1.0)?
            } else {
                let t = self.basis_at(c, p2.level)?;
                self.ev.sub(&p2, &t)?
            }
        };
        self.basis.insert(k, [(bk.level, bk)].into_iter().collect());
        Ok(())
    }

    fn eval(&mut self, node: &Node) -> Result<Value<B::Poly>> {
        match node {
            Node::Const(k) => Ok(Value::Const(*k)),
            Node::Leaf(c) => {
                let terms: Vec<usize> = (1..c.len()).filter(|&k| c[k] != 0.0).collect();
                let level = terms
                    .iter()
                    .map(|&k| self.level_of(k))
                    .min()
                    .expect("a leaf has a non-constant term");
                let cs = self.canonical(level) * self.rho;
                let mut sum: Option<Ciphertext<B::Poly>> = None;
                for k in terms {
                    let x = self.basis_at(k, level)?;
                    let term = self.ev.mul_const(&x, c[k], cs)?;
                    sum = Some(match sum {
                        None => term,
                        Some(mut s) => {
                            self.ev.add_assign(&mut s, &term)?;
                            s
                        }
                    });
                }
                let sum = self.ev.rescale(&sum.expect("non-empty"))?;
                Ok(Value::Ct(self.ev.add_const(&sum, c[0])?))
            }
            Node::Split { g, q, r } => {
                let qv = self.eval(q)?;
                let rv = self.eval(r)?;
                let qt = match qv {
                    Value::Ct(x) => {
                        let l = x.level.min(self.level_of(*g));
                        let tg = self.basis_at(*g, l)?;
                        let x = self.lower(&x, l)?;
                        self.ev.mul_relin_rescale(&x, &tg, self.keys)?
                    }
                    Value::Const(k) => {
                        let l = self.level_of(*g);
                        let tg = self.basis_at(*g, l)?;
                        let cs = self.canonical(l) * self.rho;
                        let y = self.ev.mul_const(&tg, k, cs)?;
                        self.ev.rescale(&y)?
                    }
                };
                Ok(Value::Ct(match rv {
                    Value::Const(k) => self.ev.add_const(&qt, k)?,
                    Value::Ct(x) => {
                        let l = qt.level.min(x.level);
                        let a = self.lower(&qt, l)?;
                        let b = self.lower(&x, l)?;
                        self.ev.add(&a, &b)?
                    }
                }))
            }
        }
    }
}

/// A polynomial's value during the evaluation: a ciphertext, or a constant when the part of
/// the polynomial it stands for has degree 0.
enum Value<P> {
    Const(f64),
    Ct(Ciphertext<P>),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed;
        move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        }
    }

    #[test]
    fn division_is_exact_in_both_bases() {
        let mut rnd = lcg(3);
        let c: Vec<f64> = (0..32).map(|_| rnd()).collect();
        for cheb in [false, true] {
            for g in [16usize, 17, 20, 31] {
                let (q, r) = divide(&c, g, cheb);
                for i in 0..50 {
                    let u = -1.0 + i as f64 / 25.0;
                    let (ev, bg) = if cheb {
                        (
                            chebyshev_eval as fn(&[f64], f64) -> f64,
                            (g as f64 * u.acos()).cos(),
                        )
                    } else {
                        (
                            (|c: &[f64], x: f64| c.iter().rev().fold(0.0, |a, &k| a * x + k))
                                as fn(&[f64], f64) -> f64,
                            u.powi(g as i32),
                        )
                    };
                    let lhs = ev(&c, u);
                    let rhs = ev(&q, u) * bg + ev(&r, u);
                    assert!((lhs - rhs).abs() < 1e-9, "g = {g}, u = {u}");
                }
            }
        }
    }

    /// The plan's depth, computed from its structure.
    fn plan_depth(n: &Node) -> usize {
        match n {
            Node::Const(_) => 0,
            Node::Leaf(c) => {
                1 + (1..c.len())
                    .filter(|&k| c[k] != 0.0)
                    .map(basis_depth)
                    .max()
                    .unwrap_or(0)
            }
            Node::Split { g, q, r } => {
                let dq = match **q {
                    Node::Const(_) => basis_depth(*g) + 1,
                    _ => plan_depth(q).max(basis_depth(*g)) + 1,
                };
                dq.max(plan_depth(r))
            }
        }
    }

    #[test]
    fn plans_reach_the_minimal_depth_and_use_few_products() {
        let mut rnd = lcg(5);
        for d in 1..=127usize {
            for parity in [0usize, 1, 2] {
                let c: Vec<f64> = (0..=d)
                    .map(|k| match parity {
                        0 => rnd(),
                        p => {
                            if k % 2 == p % 2 || k == d {
                                rnd()
                            } else {
                                0.0
                            }
                        }
                    })
                    .collect();
                for p in [
                    Polynomial::power(c.clone()).unwrap(),
                    Polynomial::chebyshev(c.clone(), -1.0, 1.0).unwrap(),
                ] {
                    let (node, products) = p.plan(p.depth()).unwrap();
                    assert!(plan_depth(&node) <= p.depth(), "d = {d}");
                    // Never worse than one product per degree.
                    assert!(products <= d, "d = {d}: {products}");
                }
            }
        }
        // EvalMod's degree-31 Chebyshev cosine with one spare level: 11 products (as the
        // bootstrapping had before it moved onto this code).
        let c: Vec<f64> = (0..=31).map(|k| 1.0 / (k + 1) as f64).collect();
        let p = Polynomial::chebyshev(c, -1.0, 1.0).unwrap();
        assert_eq!(p.depth(), 5);
        assert_eq!(p.ciphertext_products(Some(6)).unwrap(), 11);
    }

    /// The plan run in the clear with the homomorphic algorithm's recurrences.
    fn run_plan(n: &Node, x: f64, cheb: bool) -> f64 {
        fn b(k: usize, x: f64, cheb: bool) -> f64 {
            match k {
                0 => 1.0,
                1 => x,
                _ => {
                    let (a, bb, c) = factors(k, k.is_multiple_of(3));
                    let p = b(a, x, cheb) * b(bb, x, cheb);
                    if cheb {
                        2.0 * p - b(c, x, cheb)
                    } else {
                        p
                    }
                }
            }
        }
        match n {
            Node::Const(k) => *k,
            Node::Leaf(c) => c.iter().enumerate().map(|(k, ck)| ck * b(k, x, cheb)).sum(),
            Node::Split { g, q, r } => run_plan(q, x, cheb) * b(*g, x, cheb) + run_plan(r, x, cheb),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn plans_compute_the_polynomial(
            c in proptest::collection::vec(-1.0f64..1.0, 1..80),
            parity in 0usize..3,
            cheb: bool,
            spare in 0usize..2,
            x in -1.0f64..1.0,
        ) {
            let mut c = c;
            let d = c.len() - 1;
            for (k, v) in c.iter_mut().enumerate() {
                if parity > 0 && k % 2 != d % 2 {
                    *v = 0.0;
                }
            }
            let p = if cheb {
                Polynomial::chebyshev(c.clone(), -1.0, 1.0).unwrap()
            } else {
                Polynomial::power(c.clone()).unwrap()
            };
            let (node, _) = p.plan(p.depth() + spare).unwrap();
            proptest::prop_assert!(plan_depth(&node) <= p.depth() + spare);
            let size: f64 = c.iter().map(|v| v.abs()).sum::<f64>().max(1.0);
            let got = run_plan(&node, x, cheb);
            proptest::prop_assert!((got - p.eval_plain(x)).abs() < 1e-9 * size, "{} vs {}", got, p.eval_plain(x));
        }
    }

    #[test]
    fn parity_and_depth() {
        let p = Polynomial::chebyshev(vec![0.0, 1.0, 0.0, 2.0], -2.0, 2.0).unwrap();
        assert_eq!(p.parity(), Parity::Odd);
        assert_eq!(p.depth(), 3);
        let p = Polynomial::chebyshev(vec![1.0, 0.0, 2.0], 0.0, 2.0).unwrap();
        assert_eq!((p.parity(), p.depth()), (Parity::Even, 2));
        assert!(Polynomial::chebyshev(vec![1.0], 1.0, 1.0).is_err());
        assert!(Polynomial::power(vec![]).is_err());
        assert!(Polynomial::power(vec![f64::NAN]).is_err());
        assert_eq!(ceil_log2(32), 5);
        assert_eq!(ceil_log2(33), 6);
    }

    #[test]
    fn interpolation_is_accurate() {
        let p = Polynomial::interpolate(|x| (3.0 * x).sin(), 30, -2.0, 1.0).unwrap();
        for i in 0..=300 {
            let x = -2.0 + i as f64 / 100.0;
            assert!((p.eval_plain(x) - (3.0 * x).sin()).abs() < 1e-12);
        }
    }
}
