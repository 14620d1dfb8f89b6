//! Homomorphic linear transforms in diagonal form with baby-step giant-step (BSGS) rotations:
//! [`LinearTransform`] for any matrix given by its diagonals, and [`apply`], the evaluation
//! bootstrapping's CoeffToSlot and SlotToCoeff run on.
//!
//! `M x = sum_k d_k * rot_k(x)`. Writing `k = g + b` with `b = k mod n1` (baby step) and `g` a
//! multiple of `n1` (giant step), `M x = sum_g rot_g( sum_b rot_-g(d_k) * rot_b(x) )`: the baby
//! rotations of `x` are computed once, hoisted (one ModUp shared, [`Evaluator::rotate_hoisted`]),
//! and each giant step costs one rotation of a partial sum. The diagonals are encoded at scale
//! `q_l` (the prime the following rescale removes), so the output keeps the input's scale.

use crate::encoder::DiagonalMatrix;
use crate::error::Result;
use crate::evaluator::{Evaluator, ExtFactor};
use crate::keys::{Ciphertext, EvaluationKeys};
use crate::{CkksContext, OfLimbPlaintext, Plaintext};
use num_complex::Complex64;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use tessera_backend::Backend;

/// An encoded diagonal: a full plaintext, or ARK's OF-Limb form (the `q_0` limb only,
/// extended to the ciphertext's limbs by NTTs on use; ark.md section IV-B).
#[derive(Clone, Debug)]
pub enum EncodedDiagonal {
    /// Every limb of the level, evaluation form.
    Full(Plaintext),
    /// The `q_0` limb, coefficient form.
    OfLimb(OfLimbPlaintext),
}

impl EncodedDiagonal {
    /// Bytes held in memory.
    pub fn bytes(&self) -> usize {
        8 * match self {
            EncodedDiagonal::Full(p) => p.poly.data().len(),
            EncodedDiagonal::OfLimb(p) => p.limb.data().len(),
        }
    }

    /// PMult of `a` by this plaintext, in its form.
    pub fn mul<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        a: &Ciphertext<B::Poly>,
    ) -> Result<Ciphertext<B::Poly>> {
        match self {
            EncodedDiagonal::Full(p) => ev.mul_plain(a, p),
            EncodedDiagonal::OfLimb(p) => ev.mul_plain_oflimb(a, p),
        }
    }

    /// `acc += a * self` (PMult accumulated), in its form.
    pub fn mul_acc<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        acc: &mut Ciphertext<B::Poly>,
        a: &Ciphertext<B::Poly>,
    ) -> Result<()> {
        match self {
            EncodedDiagonal::Full(p) => ev.mul_plain_acc(acc, a, p),
            EncodedDiagonal::OfLimb(p) => ev.mul_plain_oflimb_acc(acc, a, p),
        }
    }

    /// This plaintext as a factor of a sum of PMults over `Q_l P` (double hoisting,
    /// [`Evaluator::mul_plain_ext_sum`]): a full plaintext must have been encoded over the
    /// ciphertext's limbs, an OF-Limb one is extended to them.
    pub fn ext_factor(&self) -> ExtFactor<'_> {
        match self {
            EncodedDiagonal::Full(p) => ExtFactor::Full(p),
            EncodedDiagonal::OfLimb(p) => ExtFactor::OfLimb(p),
        }
    }

    /// PAdd of this plaintext to `a`, in its form.
    pub fn add<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        a: &Ciphertext<B::Poly>,
    ) -> Result<Ciphertext<B::Poly>> {
        match self {
            EncodedDiagonal::Full(p) => ev.add_plain(a, p),
            EncodedDiagonal::OfLimb(p) => ev.add_plain_oflimb(a, p),
        }
    }
}

/// (matrix, diagonal, giant-step pre-rotation, level, plaintext scale bits, OF-Limb, full
/// plaintext over the special limbs too).
type CacheKey = (usize, usize, usize, usize, u64, bool, bool);

/// Encoded diagonals, computed on first use and kept: the plaintexts of a bootstrapping
/// circuit are the same every time (keyed by matrix, diagonal, pre-rotation, level and scale).
#[derive(Debug, Default)]
pub struct DiagonalCache {
    map: Mutex<HashMap<CacheKey, Arc<EncodedDiagonal>>>,
}

impl DiagonalCache {
    /// Bytes of all cached plaintexts.
    pub fn bytes(&self) -> usize {
        self.map
            .lock()
            .map(|m| m.values().map(|e| e.bytes()).sum())
            .unwrap_or(0)
    }

    /// Number of cached plaintexts.
    pub fn len(&self) -> usize {
        self.map.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How [`apply`] gets its plaintexts.
#[derive(Clone, Copy, Debug)]
pub struct Encoding<'a> {
    /// Where encoded diagonals are kept between calls (`None`: encode every time).
    pub cache: Option<&'a DiagonalCache>,
    /// Identifies the matrix in the cache.
    pub matrix_id: usize,
    /// Store and use OF-Limb plaintexts.
    pub of_limb: bool,
    /// ARK's minimum key-switching: baby steps by repeated rotation by the baby-step stride
    /// (the gcd of the baby steps: the FFT stage's `2^(k s)`, ark.md Algorithm 3), giant steps by
    /// Horner's rule with rotations by `n1` (ark.md Algorithms 4 and 5 applied to the BSGS
    /// sums), so each matrix needs two rotation keys instead of one per distinct step.
    pub min_ks: bool,
    /// Baby steps share one ModUp (`rotate_hoisted`); otherwise each is its own `rotate`.
    pub hoisting: bool,
    /// With `hoisting`: double hoisting ([`crate::ExtCiphertext`]): baby steps, products and
    /// giant steps stay over `Q_l P` and one ModDown per part ends the sum. Ignored under
    /// `min_ks`, and where the keys do not share one set of special limbs.
    pub double_hoisting: bool,
}

impl Encoding<'_> {
    /// Encode on every use, full plaintexts.
    pub const PLAIN: Encoding<'static> = Encoding {
        cache: None,
        matrix_id: 0,
        of_limb: false,
        min_ks: false,
        hoisting: true,
        double_hoisting: false,
    };
}

/// The BSGS split of a matrix's diagonals. Rotations are taken centred, in `(-s/2, s/2]`, so
/// the diagonals just below `s` (small right rotations) get small negative giant steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BsgsPlan {
    /// Baby-step size (a power of two).
    pub n1: usize,
    /// Distinct baby steps `b` in `[0, n1)` (including 0 when used).
    pub baby: Vec<usize>,
    /// Giant steps `g` (multiples of `n1`, signed) with the diagonals `(k, b)` they gather,
    /// `k = g + b` modulo the slots.
    pub giant: BTreeMap<i64, Vec<(usize, usize)>>,
}

impl BsgsPlan {
    /// The split minimising the number of rotations (baby plus giant steps).
    pub fn new(m: &DiagonalMatrix) -> Self {
        Self::new_for(m, false)
    }

    /// The split minimising the HRots of one evaluation, with or without minimum
    /// key-switching (whose baby steps cost one hop each up to the largest, and whose giant
    /// steps one hop per multiple of `n1` on each side of 0).
    pub fn new_for(m: &DiagonalMatrix, min_ks: bool) -> Self {
        let s = m.s as i64;
        let ks: Vec<(usize, i64)> = m
            .diags
            .keys()
            .map(|&k| {
                (
                    k,
                    if k as i64 > s / 2 {
                        k as i64 - s
                    } else {
                        k as i64
                    },
                )
            })
            .collect();
        let mut best: Option<(usize, Self)> = None;
        let mut n1 = 1usize;
        while n1 <= m.s {
            let mut baby = BTreeSet::new();
            let mut giant: BTreeMap<i64, Vec<(usize, usize)>> = BTreeMap::new();
            for &(k, kc) in &ks {
                let b = kc.rem_euclid(n1 as i64);
                baby.insert(b as usize);
                giant.entry(kc - b).or_default().push((k, b as usize));
            }
            let plan = Self {
                n1,
                baby: baby.into_iter().collect(),
                giant,
            };
            let rotations = plan.hrot_count(min_ks);
            if best.as_ref().is_none_or(|(r, _)| rotations < *r) {
                best = Some((rotations, plan));
            }
            n1 *= 2;
        }
        best.map(|(_, p)| p).unwrap_or(Self {
            n1: 1,
            baby: vec![],
            giant: BTreeMap::new(),
        })
    }

    /// The hop between consecutive baby steps under minimum key-switching: the gcd of the
    /// non-zero baby steps (a strided FFT stage's diagonals sit at multiples of its stride,
    /// so hopping by 1 would rotate through steps no diagonal uses).
    pub fn baby_stride(&self) -> usize {
        fn gcd(a: usize, b: usize) -> usize {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        self.baby.iter().fold(0, |g, &b| gcd(g, b)).max(1)
    }

    /// Rotation steps (left, in slots; negative: right) this plan needs keys for. With
    /// minimum key-switching (ark.md section IV-A) at most three: the baby-step stride and
    /// `+-n1` for the giant steps.
    pub fn rotations_for(&self, min_ks: bool) -> Vec<i64> {
        let mut r: BTreeSet<i64> = BTreeSet::new();
        if min_ks {
            if self.baby.iter().any(|&b| b != 0) {
                r.insert(self.baby_stride() as i64);
            }
            if self.giant.keys().any(|&g| g > 0) {
                r.insert(self.n1 as i64);
            }
            if self.giant.keys().any(|&g| g < 0) {
                r.insert(-(self.n1 as i64));
            }
        } else {
            r.extend(self.baby.iter().filter(|&&b| b != 0).map(|&b| b as i64));
            r.extend(self.giant.keys().copied().filter(|&g| g != 0));
        }
        r.into_iter().collect()
    }

    /// HRots one evaluation performs: one per distinct baby and giant step, or with minimum
    /// key-switching the hops up to the largest baby step and one per multiple of `n1` out to
    /// the largest giant step on each side.
    pub fn hrot_count(&self, min_ks: bool) -> usize {
        if min_ks {
            let max_b = self.baby.iter().copied().max().unwrap_or(0);
            let n1 = self.n1.max(1) as i64;
            let hi = self.giant.keys().copied().max().unwrap_or(0).max(0);
            let lo = self.giant.keys().copied().min().unwrap_or(0).min(0);
            max_b / self.baby_stride() + (hi / n1) as usize + (-lo / n1) as usize
        } else {
            self.rotations_for(false).len()
        }
    }

    /// [`BsgsPlan::rotations_for`] with one key per distinct rotation.
    pub fn rotations(&self) -> Vec<i64> {
        self.rotations_for(false)
    }
}

/// Options of a [`LinearTransform`]'s evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinearOptions {
    /// ARK's OF-Limb plaintexts (the `q_0` limb stored, extended on use).
    pub of_limb: bool,
    /// ARK's minimum key-switching (two or three rotation keys; no hoisting).
    pub min_ks: bool,
    /// Hoisted baby steps (one ModUp shared).
    pub hoisting: bool,
    /// Double hoisting (with `hoisting`): one ModDown per part for the whole sum.
    pub double_hoisting: bool,
}

impl Default for LinearOptions {
    fn default() -> Self {
        Self {
            of_limb: false,
            min_ks: false,
            hoisting: true,
            double_hoisting: false,
        }
    }
}

/// A matrix on `s` slots given by its diagonals (`M x = sum_k d_k * rot_k(x)`), evaluated by
/// BSGS with hoisted baby steps in one level; its plaintexts are encoded on first use and
/// cached (per level and scale).
///
/// ```
/// use num_complex::Complex64;
/// use tessera_backend::CpuBackend;
/// use tessera_ckks::circuits::linear::LinearTransform;
/// use tessera_ckks::{decrypt, CkksContext, Evaluator, KeyGenerator, Parameters};
///
/// # fn main() -> tessera_ckks::Result<()> {
/// let ctx = CkksContext::new(Parameters::preset("test-small")?)?;
/// // y_j = 2 x_j + x_(j+1) on 4 slots.
/// let c = |v: f64| Complex64::new(v, 0.0);
/// let lt = LinearTransform::new(
///     4,
///     [(0, vec![c(2.0); 4]), (1, vec![c(1.0); 4])].into_iter().collect(),
/// )?;
/// let mut kg = KeyGenerator::new(&ctx)?;
/// let sk = kg.secret_key()?;
/// let keys = kg.evaluation_keys(&sk, &lt.rotations(), false)?;
/// let (l, s) = (ctx.params().max_level(), ctx.params().default_scale());
/// let ct = kg.encrypt_sk(&ctx.encode_real(&[1.0, 2.0, 3.0, 4.0], 4, l, s)?, &sk)?;
/// let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone()))?;
/// let x = ev.load(&ct)?;
/// let y = lt.apply(&mut ev, &x, &keys)?;
/// assert_eq!(y.level, l - 1);
/// let out = ctx.decode(&decrypt(&ev.store(&y)?, &sk)?)?;
/// assert!((out[0].re - 4.0).abs() < 1e-3 && (out[3].re - 9.0).abs() < 1e-3);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct LinearTransform {
    matrix: DiagonalMatrix,
    options: LinearOptions,
    cache: DiagonalCache,
}

impl LinearTransform {
    /// The matrix on `slots` slots (a power of two) with `diagonals[k]` (`k < slots`, each of
    /// `slots` entries) as its diagonal `k`: `d_k[j] = M[j][(j + k) mod slots]`.
    pub fn new(slots: usize, diagonals: BTreeMap<usize, Vec<Complex64>>) -> Result<Self> {
        let bad = |name: &'static str, value: String, allowed: String| {
            crate::CkksError::InvalidParameter {
                name,
                value,
                allowed,
            }
        };
        if slots == 0 || !slots.is_power_of_two() {
            return Err(bad("slots", slots.to_string(), "a power of two".into()));
        }
        if diagonals.is_empty() {
            return Err(bad(
                "diagonals",
                "none".into(),
                "at least one diagonal".into(),
            ));
        }
        for (&k, d) in &diagonals {
            if k >= slots {
                return Err(bad(
                    "diagonal index",
                    k.to_string(),
                    format!("0 to {}", slots - 1),
                ));
            }
            if d.len() != slots {
                return Err(bad(
                    "diagonal length",
                    d.len().to_string(),
                    format!("{slots} (the slots)"),
                ));
            }
            if d.iter().any(|z| !(z.re.is_finite() && z.im.is_finite())) {
                return Err(bad(
                    "diagonal entry",
                    format!("diagonal {k}"),
                    "finite values".into(),
                ));
            }
        }
        Ok(Self {
            matrix: DiagonalMatrix {
                s: slots,
                diags: diagonals,
            },
            options: LinearOptions::default(),
            cache: DiagonalCache::default(),
        })
    }

    /// The matrix whose rows are `rows` (square, a power-of-two size); all-zero diagonals are
    /// left out.
    pub fn from_dense(rows: &[Vec<Complex64>]) -> Result<Self> {
        let s = rows.len();
        if let Some(r) = rows.iter().find(|r| r.len() != s) {
            return Err(crate::CkksError::InvalidParameter {
                name: "matrix row length",
                value: r.len().to_string(),
                allowed: format!("{s} (a square matrix)"),
            });
        }
        let diags = (0..s)
            .map(|k| (k, (0..s).map(|j| rows[j][(j + k) % s]).collect::<Vec<_>>()))
            .filter(|(_, d)| d.iter().any(|z| z.norm() > 0.0))
            .collect::<BTreeMap<_, _>>();
        let diags = if diags.is_empty() {
            [(0, vec![Complex64::new(0.0, 0.0); s])]
                .into_iter()
                .collect()
        } else {
            diags
        };
        Self::new(s, diags)
    }

    /// With these evaluation options (the cache is emptied).
    pub fn with_options(self, options: LinearOptions) -> Self {
        Self {
            options,
            cache: DiagonalCache::default(),
            ..self
        }
    }

    /// The matrix.
    pub fn matrix(&self) -> &DiagonalMatrix {
        &self.matrix
    }

    /// The BSGS split the evaluation uses.
    pub fn plan(&self) -> BsgsPlan {
        BsgsPlan::new_for(&self.matrix, self.options.min_ks)
    }

    /// Rotation steps whose keys the evaluation needs.
    pub fn rotations(&self) -> Vec<i64> {
        self.plan().rotations_for(self.options.min_ks)
    }

    /// The encoded diagonals cached so far: (count, bytes).
    pub fn plaintext_store(&self) -> (usize, usize) {
        (self.cache.len(), self.cache.bytes())
    }

    /// `M x` in the clear.
    pub fn apply_clear(&self, x: &[Complex64]) -> Vec<Complex64> {
        self.matrix.apply(x)
    }

    /// `M x` homomorphically: one level, the output at the input's scale.
    pub fn apply<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        x: &Ciphertext<B::Poly>,
        keys: &EvaluationKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        if x.slots != self.matrix.s {
            return Err(crate::CkksError::InvalidParameter {
                name: "ciphertext slots",
                value: x.slots.to_string(),
                allowed: format!("{} (the matrix's size)", self.matrix.s),
            });
        }
        let ctx = ev.context().clone();
        let enc = Encoding {
            cache: Some(&self.cache),
            matrix_id: 0,
            of_limb: self.options.of_limb,
            min_ks: self.options.min_ks,
            hoisting: self.options.hoisting,
            double_hoisting: self.options.double_hoisting,
        };
        apply(ev, &ctx, &self.matrix, x, keys, None, enc)
    }
}

/// Diagonal `k` of `m` pre-rotated by the giant step `g_mod`, encoded at `level` and scale
/// `q_l` in `enc`'s form (a full plaintext also over the limbs `special`, for double
/// hoisting), from `enc`'s cache when it has one.
#[allow(clippy::too_many_arguments)]
pub(crate) fn diagonal(
    ctx: &CkksContext,
    m: &DiagonalMatrix,
    enc: Encoding<'_>,
    k: usize,
    g_mod: usize,
    level: usize,
    q_l: f64,
    special: &[usize],
) -> Result<Arc<EncodedDiagonal>> {
    let make = || -> Result<EncodedDiagonal> {
        let d = rotate_right(&m.diags[&k], g_mod);
        Ok(if enc.of_limb {
            EncodedDiagonal::OfLimb(ctx.encode_oflimb(&d, m.s, level, q_l)?)
        } else {
            EncodedDiagonal::Full(ctx.encode_over(&d, m.s, level, q_l, special)?)
        })
    };
    let Some(c) = enc.cache else {
        return Ok(Arc::new(make()?));
    };
    let extended = !enc.of_limb && !special.is_empty();
    let key = (
        enc.matrix_id,
        k,
        g_mod,
        level,
        q_l.to_bits(),
        enc.of_limb,
        extended,
    );
    if let Some(p) = c.map.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return Ok(p);
    }
    let p = Arc::new(make()?);
    if let Ok(mut m) = c.map.lock() {
        m.insert(key, p.clone());
    }
    Ok(p)
}

/// `rot_-g(d)`: the diagonal pre-rotated so that rotating the partial sum by `g` restores it.
fn rotate_right(d: &[Complex64], g: usize) -> Vec<Complex64> {
    let s = d.len();
    (0..s).map(|j| d[(j + s - g % s) % s]).collect()
}

/// Evaluates `m` on `x` (whose slots number `m.s`) and rescales once: one level. The output
/// keeps the input's scale, or takes `out_scale` when given (the diagonals are then encoded at
/// `q_l * out_scale / scale`, which must stay large enough to hold them precisely).
pub fn apply<B: Backend>(
    ev: &mut Evaluator<B>,
    ctx: &CkksContext,
    m: &DiagonalMatrix,
    x: &Ciphertext<B::Poly>,
    keys: &EvaluationKeys,
    out_scale: Option<f64>,
    enc: Encoding<'_>,
) -> Result<Ciphertext<B::Poly>> {
    let plan = BsgsPlan::new_for(m, enc.min_ks);
    let level = x.level;
    let q_l = ctx.params().rescale_divisor(level) * out_scale.map_or(1.0, |t| t / x.scale);
    let steps: Vec<i64> = plan
        .baby
        .iter()
        .filter(|&&b| b != 0)
        .map(|&b| b as i64)
        .collect();
    if enc.double_hoisting && enc.hoisting && !enc.min_ks && !steps.is_empty() {
        let mut all = steps.clone();
        all.extend(plan.giant.keys().copied().filter(|&g| g != 0));
        if ev.keys_share_special_limbs(&all, level, keys)? {
            let sum =
                super::double_hoisting::bsgs_sum(ev, ctx, m, x, keys, &plan, &steps, q_l, enc)?;
            return ev.rescale(&sum);
        }
    }
    let rotated = if enc.min_ks {
        // Multi-hop: x, rot_d(x), rot_d(rot_d(x)), ... (d the baby-step stride), keeping
        // the steps the plan uses.
        let d = plan.baby_stride() as i64;
        let mut out = Vec::with_capacity(steps.len());
        let mut cur = x.clone();
        let mut at = 0i64;
        for &b in &steps {
            while at < b {
                cur = ev.rotate(&cur, d, keys)?;
                at += d;
            }
            out.push(cur.clone());
        }
        out
    } else if enc.hoisting {
        ev.rotate_hoisted(x, &steps, keys)?
    } else {
        steps
            .iter()
            .map(|&b| ev.rotate(x, b, keys))
            .collect::<Result<Vec<_>>>()?
    };
    let baby: BTreeMap<usize, &Ciphertext<B::Poly>> = std::iter::once((0usize, x))
        .chain(steps.iter().map(|&b| b as usize).zip(rotated.iter()))
        .collect();
    let mut inner: BTreeMap<i64, Ciphertext<B::Poly>> = BTreeMap::new();
    for (&g, ks) in &plan.giant {
        let mut acc: Option<Ciphertext<B::Poly>> = None;
        let g_mod = g.rem_euclid(m.s as i64) as usize;
        for &(k, b) in ks {
            let pt = diagonal(ctx, m, enc, k, g_mod, level, q_l, &[])?;
            // The first term starts the sum; the others are multiply-accumulated into it.
            acc = Some(match acc {
                None => pt.mul(ev, baby[&b])?,
                Some(mut a) => {
                    pt.mul_acc(ev, &mut a, baby[&b])?;
                    a
                }
            });
        }
        inner.insert(g, acc.expect("every giant step gathers a diagonal"));
    }
    let mut total: Option<Ciphertext<B::Poly>> = None;
    if enc.min_ks {
        // Horner on each side of 0: S <- rot_(+-n1)(S) + inner_g, so the giant steps need
        // the keys for +n1 and -n1 only.
        let n1 = plan.n1 as i64;
        let mut pos: Option<Ciphertext<B::Poly>> = None;
        let hi = inner.keys().copied().max().unwrap_or(0).max(0);
        let mut g = hi;
        while g >= 0 {
            pos = match (pos, inner.get(&g)) {
                (None, h) => h.cloned(),
                (Some(t), h) => {
                    let mut r = ev.rotate(&t, n1, keys)?;
                    if let Some(v) = h {
                        ev.add_assign(&mut r, v)?;
                    }
                    Some(r)
                }
            };
            g -= n1;
        }
        let lo = inner.keys().copied().min().unwrap_or(0).min(0);
        let mut neg: Option<Ciphertext<B::Poly>> = None;
        let mut g = lo;
        while g < 0 {
            neg = match (neg, inner.get(&g)) {
                (None, h) => h.cloned(),
                (Some(t), h) => {
                    let mut r = ev.rotate(&t, -n1, keys)?;
                    if let Some(v) = h {
                        ev.add_assign(&mut r, v)?;
                    }
                    Some(r)
                }
            };
            g += n1;
        }
        let neg = match neg {
            Some(t) => Some(ev.rotate(&t, -n1, keys)?),
            None => None,
        };
        total = match (pos, neg) {
            (Some(mut a), Some(b)) => {
                ev.add_assign(&mut a, &b)?;
                Some(a)
            }
            (a, b) => a.or(b),
        };
    } else {
        for (g, acc) in inner {
            let acc = if g == 0 {
                acc
            } else {
                ev.rotate(&acc, g, keys)?
            };
            total = Some(match total {
                None => acc,
                Some(mut t) => {
                    ev.add_assign(&mut t, &acc)?;
                    t
                }
            });
        }
    }
    let total = total.ok_or_else(|| crate::CkksError::InvalidParameter {
        name: "matrix",
        value: "no diagonals".into(),
        allowed: "at least one non-zero diagonal".into(),
    })?;
    ev.rescale(&total)
}
