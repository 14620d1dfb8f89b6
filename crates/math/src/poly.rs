//! RNS polynomials: an `l x N` matrix of residues (one row, a *limb*, per modulus) that knows
//! its limb set and whether it holds coefficients or evaluations.
//!
//! Every operation checks that its operands share the ring, the limb set and the required
//! representation, and returns a typed error otherwise, so mismatched levels surface as errors
//! instead of garbage. Work is limb-parallel on the pool of [`crate::parallel`].

use crate::aligned::AlignedVec;
use crate::automorphism::{
    apply_permutation, automorphism_coeff, automorphism_permutation, galois_check,
};
use crate::error::{MathError, Result};
use crate::key_cache;
use crate::modular::Modulus;
use crate::ntt::{check_degree, NttPlan};
use crate::parallel::install;
use crate::pointwise;
use crate::rns::{BaseConverter, ConversionMode, RnsBasis};
use crate::sampling::{expand_uniform_into, limb_stream, Seed, Xof};
use num_bigint::BigInt;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Coefficient or evaluation (NTT, bit-reversed slot order) representation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Representation {
    /// Coefficients of `X^0 .. X^(N-1)`.
    Coefficient,
    /// Values at the odd powers of `psi`, in the radix-2 NTT's bit-reversed order.
    Evaluation,
}

impl Representation {
    /// `"coefficient"` or `"evaluation"`: how errors name it.
    pub fn name(self) -> &'static str {
        match self {
            Representation::Coefficient => "coefficient",
            Representation::Evaluation => "evaluation",
        }
    }

    /// `Ok` unless `need` names the other representation: the check of a primary that works
    /// in one form only (`op` names it in the error).
    ///
    /// ```
    /// use tessera_math::Representation::{Coefficient, Evaluation};
    /// assert!(Evaluation.require("ntt", None).is_ok());
    /// assert!(Evaluation.require("ntt", Some(Coefficient)).is_err());
    /// ```
    pub fn require(self, op: &'static str, need: Option<Representation>) -> Result<()> {
        match need {
            Some(r) if r != self => Err(MathError::RepresentationMismatch {
                op,
                expected: r.name(),
                found: self.name(),
            }),
            _ => Ok(()),
        }
    }
}

/// The operand check of every two-operand primary, for any backend's polynomial type (each
/// passes its operands' ring limb indices and representations): the same limbs, the same
/// representation, and `need` if given. `moduli` gives the moduli of a limb set, which a limb
/// mismatch lists for both sides. The ring itself is the caller's to check.
///
/// ```
/// use tessera_math::poly::check_operands;
/// use tessera_math::Representation::{Coefficient, Evaluation};
/// let moduli = |l: &[usize]| l.iter().map(|&i| [17u64, 97][i]).collect();
/// let (a, b) = ((&[0, 1][..], Evaluation), (&[0][..], Evaluation));
/// assert!(check_operands("add", a, a, None, moduli).is_ok());
/// assert!(check_operands("add", a, b, None, moduli).is_err());
/// assert!(check_operands("add", a, (&[0, 1][..], Coefficient), None, moduli).is_err());
/// assert!(check_operands("mul", a, a, Some(Coefficient), moduli).is_err());
/// ```
pub fn check_operands(
    op: &'static str,
    (a_limbs, a_repr): (&[usize], Representation),
    (b_limbs, b_repr): (&[usize], Representation),
    need: Option<Representation>,
    moduli: impl Fn(&[usize]) -> Vec<u64>,
) -> Result<()> {
    if a_limbs != b_limbs {
        return Err(MathError::LimbMismatch {
            op,
            left: moduli(a_limbs),
            right: moduli(b_limbs),
        });
    }
    if a_repr != b_repr {
        return Err(MathError::RepresentationMismatch {
            op,
            expected: a_repr.name(),
            found: b_repr.name(),
        });
    }
    a_repr.require(op, need)
}

/// Cache of base converters, keyed by (source limbs, target limbs).
type ConverterCache = HashMap<(Vec<usize>, Vec<usize>), Arc<BaseConverter>>;

/// The ring `Z[X]/(X^N + 1)` with every prime a parameter set uses (chain and special primes),
/// their NTT plans, and caches of automorphism permutations and base converters.
pub struct RingContext {
    n: usize,
    moduli: Vec<Modulus>,
    plans: Vec<NttPlan>,
    index: HashMap<u64, usize>,
    perms: Mutex<HashMap<u64, Arc<Vec<u32>>>>,
    converters: Mutex<ConverterCache>,
}

impl std::fmt::Debug for RingContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingContext")
            .field("n", &self.n)
            .field(
                "moduli",
                &self.moduli.iter().map(|m| m.value()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl RingContext {
    /// A ring of degree `n` over distinct NTT-friendly primes.
    pub fn new(n: usize, primes: &[u64]) -> Result<Arc<Self>> {
        check_degree(n)?;
        RnsBasis::new(primes)?; // distinctness and primality
        let plans = primes
            .par_iter()
            .map(|&q| NttPlan::new(n, q))
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(Self {
            n,
            moduli: plans.iter().map(|p| *p.modulus()).collect(),
            index: primes.iter().enumerate().map(|(i, &q)| (q, i)).collect(),
            plans,
            perms: Mutex::new(HashMap::new()),
            converters: Mutex::new(HashMap::new()),
        }))
    }

    /// [`Self::new`], built once per process where it can be: a ring of the same degree and
    /// primes that is alive anywhere in the process, or the one this thread asked for last,
    /// is returned instead of building its NTT tables again. Building them is the cost of a
    /// ring (`perf` of `tessera reproduce`, which records dozens of workloads over a few
    /// parameter sets: 17 % of its cycles, page zeroing of the tables included). A ring is
    /// immutable but for its caches of permutations and base converters, which are shared
    /// too. Besides the rings alive elsewhere, each thread keeps its last one alive.
    pub fn shared(n: usize, primes: &[u64]) -> Result<Arc<Self>> {
        type Key = (usize, Vec<u64>);
        static LIVE: Mutex<Vec<(Key, std::sync::Weak<RingContext>)>> = Mutex::new(Vec::new());
        thread_local! {
            static LAST: std::cell::RefCell<Option<Arc<RingContext>>> =
                const { std::cell::RefCell::new(None) };
        }
        let key: Key = (n, primes.to_vec());
        let found = LAST
            .with(|l| l.borrow().clone())
            .filter(|r| {
                r.n == n
                    && r.moduli
                        .iter()
                        .map(|m| m.value())
                        .eq(primes.iter().copied())
            })
            .or_else(|| {
                let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
                live.iter()
                    .find(|(k, _)| *k == key)
                    .and_then(|(_, w)| w.upgrade())
            });
        let ring = match found {
            Some(r) => r,
            None => {
                let r = Self::new(n, primes)?;
                let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
                live.retain(|(_, w)| w.strong_count() > 0);
                live.push((key, Arc::downgrade(&r)));
                r
            }
        };
        LAST.with(|l| *l.borrow_mut() = Some(ring.clone()));
        Ok(ring)
    }

    /// Ring degree N.
    pub fn n(&self) -> usize {
        self.n
    }

    /// All moduli of the ring, in the order given at construction.
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// NTT plan of modulus number `i`.
    pub fn plan(&self, i: usize) -> &NttPlan {
        &self.plans[i]
    }

    /// Position of modulus `q` in the ring.
    pub fn index_of(&self, q: u64) -> Result<usize> {
        self.index
            .get(&q)
            .copied()
            .ok_or(MathError::UnknownModulus { q })
    }

    fn check_limbs(&self, limbs: &[usize]) -> Result<()> {
        for (k, &i) in limbs.iter().enumerate() {
            if i >= self.moduli.len() || limbs[..k].contains(&i) {
                return Err(MathError::OutOfRange {
                    name: "limb index",
                    value: i.to_string(),
                    allowed: format!("distinct indices below {}", self.moduli.len()),
                });
            }
        }
        Ok(())
    }

    fn permutation(&self, g: u64) -> Result<Arc<Vec<u32>>> {
        let mut cache = self.perms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = cache.get(&g) {
            return Ok(p.clone());
        }
        let p = Arc::new(automorphism_permutation(g, self.n)?);
        cache.insert(g, p.clone());
        Ok(p)
    }

    /// The (cached) base converter between two limb sets.
    pub fn converter(&self, from: &[usize], to: &[usize]) -> Result<Arc<BaseConverter>> {
        self.check_limbs(from)?;
        self.check_limbs(to)?;
        let key = (from.to_vec(), to.to_vec());
        let mut cache = self.converters.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cache.get(&key) {
            return Ok(c.clone());
        }
        let basis = |l: &[usize]| {
            RnsBasis::new(
                &l.iter()
                    .map(|&i| self.moduli[i].value())
                    .collect::<Vec<_>>(),
            )
        };
        let c = Arc::new(BaseConverter::new(&basis(from)?, &basis(to)?)?);
        cache.insert(key, c.clone());
        Ok(c)
    }
}

/// A polynomial in RNS form over a subset of the ring's moduli.
#[derive(Clone)]
pub struct RnsPoly {
    ctx: Arc<RingContext>,
    limbs: Vec<usize>,
    /// Limb-major residues, each limb starting on a cache line.
    data: AlignedVec,
    repr: Representation,
}

impl std::fmt::Debug for RnsPoly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RnsPoly")
            .field("n", &self.ctx.n)
            .field("moduli", &self.moduli())
            .field("repr", &self.repr)
            .finish_non_exhaustive()
    }
}

impl PartialEq for RnsPoly {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.ctx, &other.ctx)
            && self.limbs == other.limbs
            && self.repr == other.repr
            && self.data[..] == other.data[..]
    }
}

/// A transform of one limb by its NTT plan: in place, or from the limb's shared source (see
/// [`RnsPoly`]'s copy-on-write buffer).
type LimbTransform = fn(&NttPlan, &mut [u64], Option<&[u64]>) -> Result<()>;

impl RnsPoly {
    /// The zero polynomial over the given limbs.
    pub fn zero(ctx: &Arc<RingContext>, limbs: &[usize], repr: Representation) -> Result<Self> {
        ctx.check_limbs(limbs)?;
        Ok(Self {
            ctx: ctx.clone(),
            limbs: limbs.to_vec(),
            data: AlignedVec::zeroed(limbs.len() * ctx.n),
            repr,
        })
    }

    /// A polynomial over `limbs` whose residues are unspecified, for a caller that writes
    /// every word (saves clearing a recycled buffer).
    fn for_overwrite(
        ctx: &Arc<RingContext>,
        limbs: &[usize],
        repr: Representation,
    ) -> Result<Self> {
        ctx.check_limbs(limbs)?;
        Ok(Self {
            ctx: ctx.clone(),
            limbs: limbs.to_vec(),
            data: AlignedVec::for_overwrite(limbs.len() * ctx.n),
            repr,
        })
    }

    /// Wraps limb-major residues (`limbs.len() * N` words, each below its modulus).
    pub fn from_data(
        ctx: &Arc<RingContext>,
        limbs: &[usize],
        data: Vec<u64>,
        repr: Representation,
    ) -> Result<Self> {
        let mut p = Self::zero(ctx, limbs, repr)?;
        if data.len() != p.data.len() {
            return Err(MathError::LengthMismatch {
                what: "RNS polynomial data",
                expected: p.data.len(),
                found: data.len(),
            });
        }
        for (k, chunk) in data.chunks(ctx.n).enumerate() {
            let q = ctx.moduli[limbs[k]].value();
            if let Some(&bad) = chunk.iter().find(|&&x| x >= q) {
                return Err(MathError::OutOfRange {
                    name: "residue",
                    value: bad.to_string(),
                    allowed: format!("below its modulus {q}"),
                });
            }
        }
        p.data.copy_from_slice(&data);
        Ok(p)
    }

    /// A zero polynomial in coefficient form, after checking that `len` coefficients fit it.
    fn coefficient_target(ctx: &Arc<RingContext>, limbs: &[usize], len: usize) -> Result<Self> {
        if len != ctx.n {
            return Err(MathError::LengthMismatch {
                what: "coefficient vector",
                expected: ctx.n,
                found: len,
            });
        }
        Self::zero(ctx, limbs, Representation::Coefficient)
    }

    /// The uniform polynomial over `limbs` that `seed` expands to
    /// ([`crate::sampling::expand_uniform`]: one stream per modulus), read as evaluation
    /// representation. Regenerating a seeded key's `a` half over any limb set gives the same
    /// limbs it was made with.
    pub fn expand_seed(ctx: &Arc<RingContext>, limbs: &[usize], seed: &Seed) -> Result<Self> {
        ctx.check_limbs(limbs)?;
        let moduli: Vec<u64> = limbs.iter().map(|&i| ctx.moduli[i].value()).collect();
        let mut p = Self::for_overwrite(ctx, limbs, Representation::Evaluation)?;
        install(|| expand_uniform_into(seed, &moduli, ctx.n, &mut p.data));
        Ok(p)
    }

    /// Small signed coefficients (secrets, errors, encoded messages) in coefficient form.
    pub fn from_signed(ctx: &Arc<RingContext>, limbs: &[usize], coeffs: &[i64]) -> Result<Self> {
        let mut p = Self::coefficient_target(ctx, limbs, coeffs.len())?;
        p.for_each_limb(|m, _, limb| {
            for (o, &c) in limb.iter_mut().zip(coeffs) {
                *o = m.reduce_i64(c);
            }
        });
        Ok(p)
    }

    /// Big-integer coefficients (any sign), reduced into each limb.
    pub fn from_bigints(
        ctx: &Arc<RingContext>,
        limbs: &[usize],
        coeffs: &[BigInt],
    ) -> Result<Self> {
        let mut p = Self::coefficient_target(ctx, limbs, coeffs.len())?;
        let basis = p.basis()?;
        let n = ctx.n;
        for (k, c) in coeffs.iter().enumerate() {
            for (i, r) in basis.decompose(c).into_iter().enumerate() {
                p.data[i * n + k] = r;
            }
        }
        Ok(p)
    }

    /// Wide signed coefficients (e.g. encoded messages scaled by up to 2^120), reduced into
    /// each limb.
    pub fn from_i128(ctx: &Arc<RingContext>, limbs: &[usize], coeffs: &[i128]) -> Result<Self> {
        let mut p = Self::coefficient_target(ctx, limbs, coeffs.len())?;
        p.for_each_limb(|m, _, limb| {
            for (o, &c) in limb.iter_mut().zip(coeffs) {
                let r = m.reduce_u128(c.unsigned_abs());
                *o = if c < 0 { m.neg(r) } else { r };
            }
        });
        Ok(p)
    }

    /// The ring.
    pub fn context(&self) -> &Arc<RingContext> {
        &self.ctx
    }

    /// Ring degree.
    pub fn n(&self) -> usize {
        self.ctx.n
    }

    /// Indices (into the ring's moduli) of this polynomial's limbs.
    pub fn limb_indices(&self) -> &[usize] {
        &self.limbs
    }

    /// Modulus values of the limbs.
    pub fn moduli(&self) -> Vec<u64> {
        self.limbs
            .iter()
            .map(|&i| self.ctx.moduli[i].value())
            .collect()
    }

    /// The limbs' RNS basis.
    pub fn basis(&self) -> Result<RnsBasis> {
        RnsBasis::new(&self.moduli())
    }

    /// Number of limbs.
    pub fn num_limbs(&self) -> usize {
        self.limbs.len()
    }

    /// Current representation.
    pub fn repr(&self) -> Representation {
        self.repr
    }

    /// Limb-major residues.
    pub fn data(&self) -> &[u64] {
        &self.data
    }

    /// Limb `k` (the k-th of this polynomial's limbs).
    pub fn limb(&self, k: usize) -> &[u64] {
        &self.data[k * self.ctx.n..(k + 1) * self.ctx.n]
    }

    /// Runs `f(position, limb)` on every limb in parallel, in place. If the buffer is shared
    /// with a clone (copy-on-write), each limb is copied out of the shared buffer inside the
    /// same task, just before `f` works on it while it is still in cache.
    fn par_limbs_mut(&mut self, f: impl Fn(usize, &mut [u64]) + Sync + Send) {
        self.par_limbs_from(|k, limb, src| {
            if let Some(s) = src {
                limb.copy_from_slice(s);
            }
            f(k, limb)
        });
    }

    /// Runs `f(position, limb, source)` on every limb in parallel. `source` is `None` when the
    /// buffer is this polynomial's own, and `f` updates `limb` in place; when the buffer was
    /// shared with a clone (copy-on-write), `limb` is a fresh limb whose contents are
    /// unspecified and `source` holds the old value, so that an operation with an
    /// out-of-place kernel writes its result once instead of copying first (a clone followed
    /// by `add_assign` is how every backend's `add` is built).
    fn par_limbs_from(&mut self, f: impl Fn(usize, &mut [u64], Option<&[u64]>) + Sync + Send) {
        let n = self.ctx.n;
        let src = self.data.detach_if_shared();
        let data: &mut [u64] = &mut self.data;
        install(|| {
            data.par_chunks_mut(n)
                .enumerate()
                .for_each(|(k, limb)| f(k, limb, src.as_ref().map(|s| &s[k * n..(k + 1) * n])));
        });
    }

    /// Runs `f(modulus, ring index, limb)` on every limb in parallel.
    fn for_each_limb(&mut self, f: impl Fn(&Modulus, usize, &mut [u64]) + Sync + Send) {
        let (ctx, limbs) = (self.ctx.clone(), self.limbs.clone());
        self.par_limbs_mut(|k, limb| f(&ctx.moduli[limbs[k]], limbs[k], limb));
    }

    /// Runs `f(modulus, limb, source, other limb)` over matching limbs, after checking that the
    /// operands are compatible, with `source` as in [`Self::par_limbs_from`].
    fn zip_limbs_from(
        &mut self,
        other: &RnsPoly,
        op: &'static str,
        f: impl Fn(&Modulus, &mut [u64], Option<&[u64]>, &[u64]) + Sync + Send,
    ) -> Result<()> {
        self.check_compatible(other, op, None)?;
        let (ctx, limbs, n) = (self.ctx.clone(), self.limbs.clone(), self.ctx.n);
        self.par_limbs_from(|k, a, src| {
            f(
                &ctx.moduli[limbs[k]],
                a,
                src,
                &other.data[k * n..(k + 1) * n],
            )
        });
        Ok(())
    }

    fn check_compatible(
        &self,
        other: &RnsPoly,
        op: &'static str,
        need: Option<Representation>,
    ) -> Result<()> {
        if !Arc::ptr_eq(&self.ctx, &other.ctx) {
            return Err(MathError::RingMismatch { op });
        }
        check_operands(
            op,
            (&self.limbs, self.repr),
            (&other.limbs, other.repr),
            need,
            |limbs| limbs.iter().map(|&i| self.ctx.moduli[i].value()).collect(),
        )
    }

    /// The position in this polynomial of each of the ring limbs `limbs`, after checking that
    /// it is in evaluation form over the same ring and holds them all.
    fn positions_of(&self, limbs: &[usize], op: &'static str) -> Result<Vec<usize>> {
        self.require(op, Some(Representation::Evaluation))?;
        limbs
            .iter()
            .map(|i| {
                self.limbs
                    .iter()
                    .position(|x| x == i)
                    .ok_or_else(|| MathError::LimbMismatch {
                        op,
                        left: self.moduli(),
                        right: vec![self.ctx.moduli.get(*i).map_or(0, |m| m.value())],
                    })
            })
            .collect()
    }

    fn require(&self, op: &'static str, need: Option<Representation>) -> Result<()> {
        self.repr.require(op, need)
    }

    /// `self += other`.
    pub fn add_assign(&mut self, other: &RnsPoly) -> Result<()> {
        let kernel = pointwise::best_kernel();
        self.zip_limbs_from(other, "add", |m, a, src, b| {
            pointwise::add_sub_row::<true>(kernel, m, a, src, b)
                .expect("limbs of one ring have N words")
        })
    }

    /// `self -= other`.
    pub fn sub_assign(&mut self, other: &RnsPoly) -> Result<()> {
        let kernel = pointwise::best_kernel();
        self.zip_limbs_from(other, "sub", |m, a, src, b| {
            pointwise::add_sub_row::<false>(kernel, m, a, src, b)
                .expect("limbs of one ring have N words")
        })
    }

    /// `self = -self`.
    pub fn neg_assign(&mut self) {
        self.for_each_limb(|m, _, a| {
            for x in a.iter_mut() {
                *x = m.neg(*x);
            }
        });
    }

    /// `self *= other` (pointwise; both in evaluation representation).
    pub fn mul_assign(&mut self, other: &RnsPoly) -> Result<()> {
        self.check_compatible(other, "multiply", Some(Representation::Evaluation))?;
        let kernel = pointwise::best_kernel();
        self.zip_limbs_from(other, "multiply", |m, a, src, b| {
            pointwise::mul_row_from(kernel, m, a, src, b).expect("limbs of one ring have N words")
        })
    }

    /// `self += a * b` (pointwise multiply-accumulate; all in evaluation representation).
    pub fn mul_acc(&mut self, a: &RnsPoly, b: &RnsPoly) -> Result<()> {
        a.check_compatible(b, "multiply-accumulate", Some(Representation::Evaluation))?;
        self.check_compatible(a, "multiply-accumulate", Some(Representation::Evaluation))?;
        let (ctx, limbs, n) = (self.ctx.clone(), self.limbs.clone(), self.ctx.n);
        let kernel = pointwise::best_kernel();
        self.par_limbs_mut(|k, acc| {
            let m = &ctx.moduli[limbs[k]];
            let (x, y) = (&a.data[k * n..(k + 1) * n], &b.data[k * n..(k + 1) * n]);
            pointwise::mul_acc_row(kernel, m, acc, x, y).expect("limbs of one ring have N words");
        });
        Ok(())
    }

    /// Checks the operands of a dot product: equally many, all compatible, in evaluation form.
    fn check_dot(a: &[&RnsPoly], b: &[&RnsPoly]) -> Result<()> {
        if a.is_empty() || a.len() != b.len() {
            return Err(MathError::LengthMismatch {
                what: "dot product operands",
                expected: a.len().max(1),
                found: b.len(),
            });
        }
        for (x, y) in a.iter().zip(b) {
            x.check_compatible(y, "dot product", Some(Representation::Evaluation))?;
            a[0].check_compatible(x, "dot product", Some(Representation::Evaluation))?;
        }
        Ok(())
    }

    /// `sum_i a_i * b_i` (pointwise, evaluation representation), accumulated lazily in 128
    /// bits and reduced once per coefficient ([`pointwise`]): the multiply-accumulate of a
    /// key-switching inner product.
    pub fn dot(a: &[&RnsPoly], b: &[&RnsPoly]) -> Result<RnsPoly> {
        Self::check_dot(a, b)?;
        let first = a[0];
        let mut out = Self::for_overwrite(&first.ctx, &first.limbs, Representation::Evaluation)?;
        let (ctx, limbs, n) = (&first.ctx, &first.limbs, first.ctx.n);
        let kernel = pointwise::best_kernel();
        install(|| {
            out.data
                .par_chunks_mut(n)
                .zip(limbs.par_iter())
                .enumerate()
                .for_each(|(k, (o, &i))| {
                    let xs: Vec<&[u64]> = a.iter().map(|x| &x.data[k * n..(k + 1) * n]).collect();
                    let ys: Vec<&[u64]> = b.iter().map(|y| &y.data[k * n..(k + 1) * n]).collect();
                    pointwise::dot_row(kernel, &ctx.moduli[i], &xs, &ys, o)
                        .expect("checked operands");
                });
        });
        Ok(out)
    }

    /// The two inner products of a seeded key switch, `(sum_i a_i * b_i, sum_i a_i * u_i)`
    /// with `u_i = RnsPoly::expand_seed(seeds[i])` over the limbs of `a`: the same values as
    /// [`RnsPoly::expand_seed`] followed by two [`RnsPoly::dot`]s, computed in one pass.
    ///
    /// Why fused: the expanded `u_i` are used once. Generating them a few kilobytes at a time
    /// (the XOF of each limb is read in order) and consuming them from the L1 cache, with the
    /// `a_i` loaded once for both sums, removes three of the passes over memory that the
    /// separate calls make (writing and re-reading `u_i`, re-reading `a_i`). A `u_i` limb
    /// already expanded is read from [`key_cache`] instead (the same words; expanded once
    /// per key while the cache's budget has room), which on a CPU is cheaper than drawing it
    /// again. A bad `TESSERA_KEY_CACHE_GB` is an error. Each `b_i` may hold more limbs than
    /// `a` (a whole key digit used at a lower level): its limbs are found by ring index, so a
    /// key's leading and special limbs are read in place instead of being copied out first.
    pub fn dot_pair_seeded(
        a: &[&RnsPoly],
        b: &[&RnsPoly],
        seeds: &[Seed],
    ) -> Result<(RnsPoly, RnsPoly)> {
        Self::dot_pair_seeded_by(a, None, b, seeds)
    }

    /// Checks the operands of a seeded inner product ([`RnsPoly::dot_pair_seeded`]) and
    /// returns where each of `a`'s limbs sits in each `b_i` (a key may hold more limbs).
    fn check_seeded(a: &[&RnsPoly], b: &[&RnsPoly], seeds: &[Seed]) -> Result<Vec<Vec<usize>>> {
        if a.is_empty() || a.len() != b.len() {
            return Err(MathError::LengthMismatch {
                what: "dot product operands",
                expected: a.len().max(1),
                found: b.len(),
            });
        }
        for x in a {
            a[0].check_compatible(x, "dot product", Some(Representation::Evaluation))?;
        }
        let b_pos = b
            .iter()
            .map(|y| {
                if !Arc::ptr_eq(&y.ctx, &a[0].ctx) {
                    return Err(MathError::RingMismatch { op: "dot product" });
                }
                y.positions_of(&a[0].limbs, "dot product")
            })
            .collect::<Result<Vec<_>>>()?;
        if seeds.len() != a.len() {
            return Err(MathError::LengthMismatch {
                what: "seeds of a seeded dot product",
                expected: a.len(),
                found: seeds.len(),
            });
        }
        Ok(b_pos)
    }

    /// A hoisted rotation's inner product: the same values, bit for bit, as
    /// [`RnsPoly::automorphism`] `g` of each of `a` (evaluation form) followed by
    /// [`RnsPoly::dot_pair_seeded`], without the rotated digits ever being whole in memory.
    ///
    /// Why: hoisted rotations share one ModUp, and each rotation permutes every extended
    /// digit (4 x 30 limbs, 60 MB at `ark`'s level 23) before its inner product reads them
    /// back. Here each limb of each digit is permuted into a scratch row and multiplied into
    /// both sums while it is in cache.
    pub fn automorphism_dot_pair_seeded(
        a: &[&RnsPoly],
        g: u64,
        b: &[&RnsPoly],
        seeds: &[Seed],
    ) -> Result<(RnsPoly, RnsPoly)> {
        let perm = a.first().map(|x| x.ctx.permutation(g)).transpose()?;
        Self::dot_pair_seeded_by(a, perm.as_ref().map(|p| &p[..]), b, seeds)
    }

    /// [`RnsPoly::dot_pair_seeded`] of `a`, each limb of each `a_i` first permuted by `perm`
    /// (an automorphism in evaluation form) into a scratch row when there is one.
    fn dot_pair_seeded_by(
        a: &[&RnsPoly],
        perm: Option<&[u32]>,
        b: &[&RnsPoly],
        seeds: &[Seed],
    ) -> Result<(RnsPoly, RnsPoly)> {
        let b_pos = Self::check_seeded(a, b, seeds)?;
        // A bad TESSERA_KEY_CACHE_GB is an error here, not a silent fallback below.
        key_cache::budget()?;
        let first = a[0];
        let (ctx, limbs, n) = (&first.ctx, &first.limbs, first.ctx.n);
        let mut out0 = Self::for_overwrite(ctx, limbs, Representation::Evaluation)?;
        let mut out1 = Self::for_overwrite(ctx, limbs, Representation::Evaluation)?;
        install(|| {
            out0.data
                .par_chunks_mut(n)
                .zip(out1.data.par_chunks_mut(n))
                .zip(limbs.par_iter())
                .enumerate()
                .for_each(|(k, ((o0, o1), &i))| {
                    let rotated: Vec<AlignedVec> = perm.map_or_else(Vec::new, |perm| {
                        a.iter()
                            .map(|x| {
                                let mut r = AlignedVec::for_overwrite(n);
                                apply_permutation(x.limb(k), perm, &mut r);
                                r
                            })
                            .collect()
                    });
                    let xs: Vec<&[u64]> = if perm.is_some() {
                        rotated.iter().map(|r| &r[..]).collect()
                    } else {
                        a.iter().map(|x| x.limb(k)).collect()
                    };
                    let ys: Vec<&[u64]> = b
                        .iter()
                        .zip(&b_pos)
                        .map(|(y, pos)| &y.data[pos[k] * n..(pos[k] + 1) * n])
                        .collect();
                    dot2_seeded_limb(&ctx.moduli[i], &xs, &ys, seeds, o0, o1);
                });
        });
        Ok((out0, out1))
    }

    /// `self *= c` for a signed integer constant (any representation).
    pub fn mul_scalar_assign(&mut self, c: i64) {
        let residues: Vec<u64> = self
            .limbs
            .iter()
            .map(|&i| self.ctx.moduli[i].reduce_i64(c))
            .collect();
        self.mul_scalar_limbs(&residues)
            .expect("one residue per limb");
    }

    /// `self += c_k` on every coefficient of limb `k`: adds the constant polynomial in
    /// evaluation form (every evaluation shifts by the constant).
    pub fn add_scalar_limbs(&mut self, c: &[u64]) -> Result<()> {
        self.require("add scalar", Some(Representation::Evaluation))?;
        self.per_limb_constant(c, |m, v, _, a| {
            for x in a.iter_mut() {
                *x = m.add(*x, v);
            }
        })
    }

    /// `self *= c_k` with one constant per limb (e.g. a big integer's residues).
    pub fn mul_scalar_limbs(&mut self, c: &[u64]) -> Result<()> {
        let kernel = pointwise::best_kernel();
        self.per_limb_constant_from(c, |m, w, _, a, src| {
            pointwise::mul_const_row_from(kernel, m, w, a, src)
                .expect("limbs of one ring have N words")
        })
    }

    /// `self = (self - other) * c_k` with one constant per limb: ModDown's and rescaling's
    /// last step in one pass over memory (each limb's difference is multiplied while it is
    /// in cache), the same values as [`RnsPoly::sub_assign`] then
    /// [`RnsPoly::mul_scalar_limbs`].
    pub fn sub_mul_scalar_limbs(&mut self, other: &RnsPoly, c: &[u64]) -> Result<()> {
        self.check_compatible(other, "sub then multiply by constants", None)?;
        let kernel = pointwise::best_kernel();
        let n = self.ctx.n;
        self.per_limb_constant_from(c, |m, w, k, a, src| {
            pointwise::sub_mul_const_from(kernel, m, w, a, src, &other.data[k * n..(k + 1) * n])
                .expect("limbs of one ring have N words")
        })
    }

    /// Runs `f(modulus, c_k mod q_k, k, limb k)` on every limb in parallel, after checking that
    /// there is one constant per limb.
    fn per_limb_constant(
        &mut self,
        c: &[u64],
        f: impl Fn(&Modulus, u64, usize, &mut [u64]) + Sync + Send,
    ) -> Result<()> {
        self.per_limb_constant_from(c, |m, w, k, a, src| {
            if let Some(s) = src {
                a.copy_from_slice(s);
            }
            f(m, w, k, a)
        })
    }

    /// [`Self::per_limb_constant`] for an operation with an out-of-place form: `f(modulus,
    /// c_k mod q_k, k, limb k, source)` with `source` as in [`Self::par_limbs_from`].
    fn per_limb_constant_from(
        &mut self,
        c: &[u64],
        f: impl Fn(&Modulus, u64, usize, &mut [u64], Option<&[u64]>) + Sync + Send,
    ) -> Result<()> {
        if c.len() != self.limbs.len() {
            return Err(MathError::LengthMismatch {
                what: "per-limb constants",
                expected: self.limbs.len(),
                found: c.len(),
            });
        }
        let (ctx, limbs) = (self.ctx.clone(), self.limbs.clone());
        self.par_limbs_from(|k, a, src| {
            let m = &ctx.moduli[limbs[k]];
            f(m, m.reduce(c[k]), k, a, src)
        });
        Ok(())
    }

    /// Forward NTT of every limb: coefficient -> evaluation.
    pub fn ntt(&mut self) -> Result<()> {
        self.transform("NTT", Representation::Coefficient, |plan, a, src| {
            if let Some(s) = src {
                a.copy_from_slice(s);
            }
            plan.forward(a)
        })
    }

    /// Inverse NTT of every limb: evaluation -> coefficient. A limb shared with a clone
    /// (ModUp's digit, ModDown's special limbs: views of a polynomial that stays alive) is
    /// transformed out of place from the shared buffer.
    pub fn intt(&mut self) -> Result<()> {
        self.transform(
            "INTT",
            Representation::Evaluation,
            |plan, a, src| match src {
                Some(s) => plan.inverse_to(s, a),
                None => plan.inverse(a),
            },
        )
    }

    /// Applies `f` (a transform of one limb, in place or from the limb's shared source as in
    /// [`Self::par_limbs_from`]) to every limb of a polynomial in representation `from`,
    /// leaving it in the other representation.
    fn transform(
        &mut self,
        op: &'static str,
        from: Representation,
        f: LimbTransform,
    ) -> Result<()> {
        self.require(op, Some(from))?;
        let (ctx, limbs) = (self.ctx.clone(), self.limbs.clone());
        self.par_limbs_from(|k, a, src| f(&ctx.plans[limbs[k]], a, src).expect("limb length is N"));
        self.repr = match from {
            Representation::Coefficient => Representation::Evaluation,
            Representation::Evaluation => Representation::Coefficient,
        };
        Ok(())
    }

    /// The automorphism `X -> X^g` (`g` odd, below 2N) in the current representation.
    pub fn automorphism(&self, g: u64) -> Result<RnsPoly> {
        let mut out = Self::for_overwrite(&self.ctx, &self.limbs, self.repr)?;
        let n = self.ctx.n;
        match self.repr {
            Representation::Coefficient => {
                galois_check(g, n)?;
                let src = &self.data;
                let ctx = &self.ctx;
                let limbs = &self.limbs;
                install(|| {
                    out.data
                        .par_chunks_mut(n)
                        .zip(src.par_chunks(n))
                        .zip(limbs.par_iter())
                        .for_each(|((o, a), &i)| {
                            automorphism_coeff(a, g, ctx.moduli[i].value(), o).expect("checked");
                        });
                });
            }
            Representation::Evaluation => {
                let perm = self.ctx.permutation(g)?;
                let src = &self.data;
                install(|| {
                    out.data
                        .par_chunks_mut(n)
                        .zip(src.par_chunks(n))
                        .for_each(|(o, a)| apply_permutation(a, &perm, o));
                });
            }
        }
        Ok(out)
    }

    /// `keep` as a copy-on-write view of this buffer, when it is a non-empty run of
    /// consecutive limbs of `self` in order and limbs start on cache lines (`N >= 8`).
    fn contiguous_view(&self, keep: &[usize]) -> Option<RnsPoly> {
        let first = self.limbs.iter().position(|x| Some(x) == keep.first())?;
        if !self.limbs[first..].starts_with(keep) {
            return None;
        }
        let n = self.ctx.n;
        let data = self.data.slice(first * n, keep.len() * n)?;
        Some(RnsPoly {
            ctx: self.ctx.clone(),
            limbs: keep.to_vec(),
            data,
            repr: self.repr,
        })
    }

    /// The sub-polynomial over `keep`, a subset of this polynomial's limbs (in that order).
    pub fn select_limbs(&self, keep: &[usize]) -> Result<RnsPoly> {
        if keep == self.limbs.as_slice() {
            // All limbs in order: share the buffer (copy-on-write).
            return Ok(self.clone());
        }
        if let Some(view) = self.contiguous_view(keep) {
            // A run of consecutive limbs (the leading ones that rescaling and ModDown keep, a
            // digit of ModUp, the special limbs): share that part of the buffer.
            return Ok(view);
        }
        let mut out = Self::for_overwrite(&self.ctx, keep, self.repr)?;
        let n = self.ctx.n;
        for (k, i) in keep.iter().enumerate() {
            let pos =
                self.limbs
                    .iter()
                    .position(|x| x == i)
                    .ok_or_else(|| MathError::LimbMismatch {
                        op: "select limbs",
                        left: self.moduli(),
                        right: vec![self.ctx.moduli.get(*i).map(|m| m.value()).unwrap_or(0)],
                    })?;
            out.data[k * n..(k + 1) * n].copy_from_slice(self.limb(pos));
        }
        Ok(out)
    }

    /// Assembles a polynomial over `limbs` whose limbs are taken from whichever of `parts`
    /// holds them (data movement only; all parts share ring and representation).
    pub fn concat(parts: &[&RnsPoly], limbs: &[usize]) -> Result<RnsPoly> {
        let first = parts.first().ok_or(MathError::OutOfRange {
            name: "parts",
            value: "0".into(),
            allowed: "at least one polynomial".into(),
        })?;
        for p in parts {
            if !Arc::ptr_eq(&p.ctx, &first.ctx) {
                return Err(MathError::RingMismatch { op: "concat" });
            }
            p.require("concat", Some(first.repr))?;
        }
        let mut out = Self::for_overwrite(&first.ctx, limbs, first.repr)?;
        let n = first.ctx.n;
        for (k, i) in limbs.iter().enumerate() {
            let (p, pos) = parts
                .iter()
                .find_map(|p| p.limbs.iter().position(|x| x == i).map(|pos| (p, pos)))
                .ok_or_else(|| MathError::LimbMismatch {
                    op: "concat",
                    left: parts.iter().flat_map(|p| p.moduli()).collect(),
                    right: vec![first.ctx.moduli.get(*i).map(|m| m.value()).unwrap_or(0)],
                })?;
            out.data[k * n..(k + 1) * n].copy_from_slice(p.limb(pos));
        }
        Ok(out)
    }

    /// One extended digit of ModUp, assembled in place: the result is over `to` in
    /// evaluation form; on the digit's limbs (those of `digit`, in coefficient form) it holds
    /// `own`'s limbs (the same digit in evaluation form), and on every other limb of `to` the
    /// fast (approximate) BConv of `digit`, transformed by the forward NTT.
    ///
    /// The same values, bit for bit, as BConv to the other limbs, NTT, and
    /// [`RnsPoly::concat`] with `own`'s digit limbs, without the concatenation's copy of the
    /// whole extended digit (one more pass over `|to|` limbs per digit; see
    /// docs/benchmarks.md, issue 22 session 33).
    pub fn extend_digit(digit: &RnsPoly, own: &RnsPoly, to: &[usize]) -> Result<RnsPoly> {
        let mut out = Self::extend_digits(&[digit], own, to)?;
        Ok(out.pop().expect("one digit in, one out"))
    }

    /// Every digit of ModUp at once: [`RnsPoly::extend_digit`] of each of `digits` (the same
    /// values, bit for bit), with the forward NTTs ordered by prime instead of by digit.
    ///
    /// Why: a prime's NTT tables (twiddles and their Shoup quotients, 1 MB per direction at
    /// N = 2^16) are read once per transform, and the NTTs of one digit run over as many
    /// different primes as it has limbs, so each streams its tables from memory. ModUp
    /// transforms the same prime once per digit; done one after another on the same thread,
    /// the later transforms find the tables in cache (96 NTTs at `ark`'s level 23, 2 threads:
    /// 10.3 against 9.4 ms with AVX2, 7.0 against 6.1 ms with AVX-512 on Zen 5, session 49).
    pub fn extend_digits(digits: &[&RnsPoly], own: &RnsPoly, to: &[usize]) -> Result<Vec<RnsPoly>> {
        let plans = Self::digit_plans(digits, own, to)?;
        let ctx = &own.ctx;
        let mut outs = digits
            .iter()
            .map(|_| Self::for_overwrite(ctx, to, Representation::Evaluation))
            .collect::<Result<Vec<_>>>()?;
        let n = ctx.n;
        // Rows to transform, grouped by ring index (one per digit that converts to it), and
        // rows to copy from `own`.
        let mut by_prime: Vec<Vec<&mut [u64]>> =
            (0..ctx.moduli.len()).map(|_| Vec::new()).collect();
        let mut copies: Vec<(&mut [u64], &[u64])> = Vec::new();
        install(|| -> Result<()> {
            for ((digit, plan), out) in digits.iter().zip(&plans).zip(&mut outs) {
                let mut converted: Vec<(usize, &mut [u64])> = Vec::with_capacity(plan.others.len());
                for (&j, row) in to.iter().zip(out.data.chunks_mut(n)) {
                    match digit.limbs.iter().position(|&x| x == j) {
                        Some(k) => copies.push((row, own.limb(plan.own_pos[k]))),
                        None => converted.push((j, row)),
                    }
                }
                let rows = converted.iter_mut().map(|(_, r)| &mut **r).collect();
                plan.conv
                    .convert_rows(&digit.data, rows, n, ConversionMode::Approximate)?;
                for (j, row) in converted {
                    by_prime[j].push(row);
                }
            }
            // The digits' own limbs are copied beside the NTTs, not on one thread before them
            // (3 MB per digit at `ark`).
            rayon::join(
                || {
                    copies
                        .par_iter_mut()
                        .for_each(|(row, src)| row.copy_from_slice(src))
                },
                || {
                    by_prime.par_iter_mut().enumerate().for_each(|(j, rows)| {
                        for row in rows.iter_mut() {
                            ctx.plans[j].forward(row).expect("limb length is N");
                        }
                    })
                },
            );
            Ok(())
        })?;
        Ok(outs)
    }

    /// Checks ModUp's operands and plans each digit's conversion: `own` (evaluation form)
    /// holds every digit's limbs, each digit (coefficient form, same ring) converts to the
    /// limbs of `to` it lacks, and its own limbs must be in `to`.
    fn digit_plans(digits: &[&RnsPoly], own: &RnsPoly, to: &[usize]) -> Result<Vec<DigitPlan>> {
        const OP: &str = "extend digit";
        own.require(OP, Some(Representation::Evaluation))?;
        let ctx = &own.ctx;
        let missing = |i: usize| MathError::LimbMismatch {
            op: OP,
            left: to
                .iter()
                .map(|&j| ctx.moduli.get(j).map_or(0, |m| m.value()))
                .collect(),
            right: vec![ctx.moduli.get(i).map_or(0, |m| m.value())],
        };
        digits
            .iter()
            .map(|digit| -> Result<DigitPlan> {
                if !Arc::ptr_eq(&digit.ctx, ctx) {
                    return Err(MathError::RingMismatch { op: OP });
                }
                digit.require(OP, Some(Representation::Coefficient))?;
                // Where each of the digit's limbs is in `own`; each must also be in `to`.
                let own_pos = digit
                    .limbs
                    .iter()
                    .map(|&i| {
                        if !to.contains(&i) {
                            return Err(missing(i));
                        }
                        own.limbs
                            .iter()
                            .position(|&x| x == i)
                            .ok_or_else(|| missing(i))
                    })
                    .collect::<Result<Vec<_>>>()?;
                let others: Vec<usize> = to
                    .iter()
                    .copied()
                    .filter(|j| !digit.limbs.contains(j))
                    .collect();
                let conv = ctx.converter(&digit.limbs, &others)?;
                Ok(DigitPlan {
                    own_pos,
                    others,
                    conv,
                })
            })
            .collect()
    }

    /// ModUp and the seeded inner product in one pass: the same values, bit for bit, as
    /// [`RnsPoly::extend_digits`] followed by [`RnsPoly::dot_pair_seeded`] with `b` and
    /// `seeds` over `to`, without the extended digits ever being whole in memory.
    ///
    /// Why: at `ark`'s level 23 the extended digits are 4 x 30 limbs (60 MB). Written by
    /// ModUp and read back by the inner product, they make a third of the inner product's
    /// memory traffic and leave the cache long before it runs. Here each prime's converted
    /// limbs are transformed by the forward NTT and multiplied into both sums right away,
    /// while they are still in cache; the digits' own limbs are read from `own` in place.
    pub fn mod_up_dot_pair_seeded(
        digits: &[&RnsPoly],
        own: &RnsPoly,
        to: &[usize],
        b: &[&RnsPoly],
        seeds: &[Seed],
    ) -> Result<(RnsPoly, RnsPoly)> {
        if digits.is_empty() || b.len() != digits.len() || seeds.len() != digits.len() {
            return Err(MathError::LengthMismatch {
                what: "digits, key digits and seeds of a key switch",
                expected: digits.len().max(1),
                found: if b.len() != digits.len() {
                    b.len()
                } else {
                    seeds.len()
                },
            });
        }
        let plans = Self::digit_plans(digits, own, to)?;
        let ctx = &own.ctx;
        let b_pos = b
            .iter()
            .map(|y| {
                if !Arc::ptr_eq(&y.ctx, ctx) {
                    return Err(MathError::RingMismatch { op: "dot product" });
                }
                y.positions_of(to, "dot product")
            })
            .collect::<Result<Vec<_>>>()?;
        key_cache::budget()?;
        let n = ctx.n;
        let mut out0 = Self::for_overwrite(ctx, to, Representation::Evaluation)?;
        let mut out1 = Self::for_overwrite(ctx, to, Representation::Evaluation)?;
        let mut converted: Vec<AlignedVec> = plans
            .iter()
            .map(|p| AlignedVec::for_overwrite(p.others.len() * n))
            .collect();
        /// A digit's limb of one prime: `own`'s (the digit's own limbs) or a converted one,
        /// transformed where it is used.
        enum Row<'a> {
            Own(&'a [u64]),
            Converted(&'a mut [u64]),
        }
        install(|| -> Result<()> {
            for ((digit, plan), buf) in digits.iter().zip(&plans).zip(&mut converted) {
                let rows = buf.chunks_mut(n).collect();
                plan.conv
                    .convert_rows(&digit.data, rows, n, ConversionMode::Approximate)?;
            }
            // Each prime's rows, one per digit in digit order.
            let mut by_prime: Vec<Vec<Row>> = to.iter().map(|_| Vec::new()).collect();
            for ((digit, plan), buf) in digits.iter().zip(&plans).zip(&mut converted) {
                let mut rows = buf.chunks_mut(n);
                for (&j, prime) in to.iter().zip(&mut by_prime) {
                    prime.push(match digit.limbs.iter().position(|&x| x == j) {
                        Some(k) => Row::Own(own.limb(plan.own_pos[k])),
                        None => Row::Converted(rows.next().expect("a row per other limb")),
                    });
                }
            }
            out0.data
                .par_chunks_mut(n)
                .zip(out1.data.par_chunks_mut(n))
                .zip(by_prime.into_par_iter())
                .enumerate()
                .for_each(|(k, ((o0, o1), rows))| {
                    let j = to[k];
                    let xs: Vec<&[u64]> = rows
                        .into_iter()
                        .map(|r| match r {
                            Row::Own(x) => x,
                            Row::Converted(x) => {
                                ctx.plans[j].forward(x).expect("limb length is N");
                                x
                            }
                        })
                        .collect();
                    let ys: Vec<&[u64]> = b
                        .iter()
                        .zip(&b_pos)
                        .map(|(y, pos)| &y.data[pos[k] * n..(pos[k] + 1) * n])
                        .collect();
                    dot2_seeded_limb(&ctx.moduli[j], &xs, &ys, seeds, o0, o1);
                });
            Ok(())
        })?;
        Ok((out0, out1))
    }

    /// Reduces the single limb of `self` (coefficient representation, centered lift) into each
    /// modulus of `to`: exact, since the limb's integer value is below its modulus. This is the
    /// "extend a limb" step of rescaling and of ARK's on-the-fly limb extension (OF-Limb).
    pub fn extend_limb(&self, to: &[usize]) -> Result<RnsPoly> {
        self.require("extend limb", Some(Representation::Coefficient))?;
        if self.limbs.len() != 1 {
            return Err(MathError::OutOfRange {
                name: "limbs",
                value: self.limbs.len().to_string(),
                allowed: "exactly one limb to extend".into(),
            });
        }
        let src = self.ctx.moduli[self.limbs[0]];
        let mut p = Self::for_overwrite(&self.ctx, to, Representation::Coefficient)?;
        let kernel = pointwise::best_kernel();
        let x = &self.data[..];
        p.for_each_limb(|m, _, limb| {
            pointwise::lift_centered_row(kernel, &src, m, x, limb).expect("one limb of N words")
        });
        Ok(p)
    }

    /// Removes the last limb (level drop without division).
    pub fn drop_last_limb(&mut self) -> Result<()> {
        if self.limbs.len() < 2 {
            return Err(MathError::OutOfRange {
                name: "limbs",
                value: self.limbs.len().to_string(),
                allowed: "at least 2 to drop one".into(),
            });
        }
        self.limbs.pop();
        self.data.truncate(self.limbs.len() * self.ctx.n);
        Ok(())
    }

    /// Divides by the last limb's modulus `q_l` with rounding and drops that limb
    /// (the rescale of CKKS): `x <- round(x / q_l)` over the remaining moduli. Works in either
    /// representation; in evaluation form the last limb is brought back to coefficients once and
    /// re-transformed under each remaining modulus.
    pub fn divide_round_by_last(&mut self) -> Result<()> {
        if self.limbs.len() < 2 {
            return Err(MathError::OutOfRange {
                name: "limbs",
                value: self.limbs.len().to_string(),
                allowed: "at least 2 to divide by the last".into(),
            });
        }
        let n = self.ctx.n;
        let last_idx = *self.limbs.last().expect("non-empty");
        let ql = self.ctx.moduli[last_idx];
        let half = ql.value() >> 1;
        // r = [x_last + floor(q_l/2)]_(q_l) - floor(q_l/2), in coefficient form, so that
        // x - r = q_l * floor((x + floor(q_l/2)) / q_l) = q_l * round(x / q_l) exactly. (Adding
        // the offset to x itself would be wrong in evaluation form: a constant added to every
        // slot is the constant polynomial, not an offset on every coefficient.)
        let mut t = self.data[(self.limbs.len() - 1) * n..].to_vec();
        if self.repr == Representation::Evaluation {
            self.ctx.plans[last_idx].inverse(&mut t)?;
        }
        let r: Vec<i64> = t
            .iter()
            .map(|&x| ql.add(x, half) as i64 - half as i64)
            .collect();
        self.drop_last_limb()?;
        let (ctx, repr) = (self.ctx.clone(), self.repr);
        self.for_each_limb(|m, i, a| {
            let inv = m.inv(ql.value() % m.value()).expect("distinct primes");
            let inv_s = m.shoup(inv);
            let mut ri: Vec<u64> = r.iter().map(|&x| m.reduce_i64(x)).collect();
            if repr == Representation::Evaluation {
                ctx.plans[i].forward(&mut ri).expect("limb length is N");
            }
            for (x, &y) in a.iter_mut().zip(&ri) {
                *x = m.mul_shoup(m.sub(*x, y), inv, inv_s);
            }
        });
        Ok(())
    }

    /// Fast base conversion of this polynomial's limbs to the limb set `to` (coefficient
    /// representation required; see [`crate::rns`] for the two modes).
    pub fn bconv(&self, to: &[usize], mode: ConversionMode) -> Result<RnsPoly> {
        self.require("BConv", Some(Representation::Coefficient))?;
        let conv = self.ctx.converter(&self.limbs, to)?;
        let mut out = Self::for_overwrite(&self.ctx, to, Representation::Coefficient)?;
        install(|| conv.convert(&self.data, &mut out.data, self.ctx.n, mode))?;
        Ok(out)
    }

    /// Centered big-integer coefficients (CRT reconstruction; coefficient representation).
    pub fn to_centered_bigints(&self) -> Result<Vec<BigInt>> {
        self.require("CRT reconstruction", Some(Representation::Coefficient))?;
        let basis = self.basis()?;
        let (n, l) = (self.ctx.n, self.limbs.len());
        (0..n)
            .map(|k| {
                let res: Vec<u64> = (0..l).map(|i| self.data[i * n + k]).collect();
                basis.reconstruct_centered(&res)
            })
            .collect()
    }
}

/// One ModUp digit's plan ([`RnsPoly::digit_plans`]): where its limbs are in `own`, the
/// limbs of `to` it converts to, and the converter.
struct DigitPlan {
    own_pos: Vec<usize>,
    others: Vec<usize>,
    conv: Arc<BaseConverter>,
}

/// One limb of the seeded key switch's two inner products ([`RnsPoly::dot_pair_seeded`]):
/// `o0 = sum_i xs_i * ys_i` and `o1 = sum_i xs_i * u_i` modulo `m`, `u_i` the limb of the
/// uniform polynomial drawn from `seeds[i]` (from [`key_cache`] where it is held, else
/// streamed from its XOF a few kilobytes at a time and consumed from the L1 cache). Every
/// slice holds the limb's `N` words.
fn dot2_seeded_limb(
    m: &Modulus,
    xs: &[&[u64]],
    ys: &[&[u64]],
    seeds: &[Seed],
    o0: &mut [u64],
    o1: &mut [u64],
) {
    /// Words of each expanded operand generated per step (8 KiB).
    const CHUNK: usize = 1024;
    /// Where a `u` limb's words come from.
    enum ULimb {
        Cached(std::sync::Arc<[u64]>),
        Stream(Xof),
    }
    let n = o0.len();
    let kernel = pointwise::best_kernel();
    let mut sources: Vec<ULimb> = seeds
        .iter()
        .map(|s| match key_cache::limb(s, m.value(), n) {
            Ok(Some(l)) => ULimb::Cached(l),
            _ => ULimb::Stream(limb_stream(s, m.value())),
        })
        .collect();
    let mut u = vec![0u64; seeds.len() * CHUNK];
    for start in (0..n).step_by(CHUNK) {
        let range = start..(start + CHUNK).min(n);
        let len = range.len();
        for (src, ut) in sources.iter_mut().zip(u.chunks_mut(CHUNK)) {
            if let ULimb::Stream(xof) = src {
                xof.fill_below(m.value(), &mut ut[..len]);
            }
        }
        let x: Vec<&[u64]> = xs.iter().map(|r| &r[range.clone()]).collect();
        let y: Vec<&[u64]> = ys.iter().map(|r| &r[range.clone()]).collect();
        let us: Vec<&[u64]> = sources
            .iter()
            .zip(u.chunks(CHUNK))
            .map(|(src, c)| match src {
                ULimb::Cached(l) => &l[range.clone()],
                ULimb::Stream(_) => &c[..len],
            })
            .collect();
        let (c0, c1) = (&mut o0[range.clone()], &mut o1[range]);
        pointwise::dot2_row(kernel, m, &x, &y, &us, c0, c1).expect("checked operands");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::generate_ntt_primes;
    use crate::rns::div_round;
    use num_integer::Integer;
    use proptest::prelude::*;

    fn ring(n: usize, count: usize) -> Arc<RingContext> {
        let mut ps = generate_ntt_primes(50, n, count / 2, &[]).unwrap();
        ps.extend(generate_ntt_primes(58, n, count - count / 2, &ps).unwrap());
        RingContext::new(n, &ps).unwrap()
    }

    /// A shared ring is the one alive (or this thread's last), with the same primes in the
    /// same order and the same NTT as a ring built anew; other primes, another order or
    /// another degree make another ring.
    #[test]
    fn shared_rings_are_reused_only_for_the_same_degree_and_primes() {
        let n = 1 << 6;
        let ps = generate_ntt_primes(40, n, 3, &[]).unwrap();
        let a = RingContext::shared(n, &ps).unwrap();
        let b = RingContext::shared(n, &ps).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let rev: Vec<u64> = ps.iter().rev().copied().collect();
        let c = RingContext::shared(n, &rev).unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(c.moduli()[0].value(), ps[2]);
        let d = RingContext::shared(n * 2, &generate_ntt_primes(40, n * 2, 3, &[]).unwrap());
        assert_eq!(d.unwrap().n(), n * 2);
        // Alive elsewhere (held by `a`) though this thread asked for others since.
        assert!(Arc::ptr_eq(&RingContext::shared(n, &ps).unwrap(), &a));
        assert!(RingContext::shared(n, &[ps[0], ps[0]]).is_err());
        let fresh = RingContext::new(n, &ps).unwrap();
        let p = random_poly(&a, &[0, 1, 2], 7);
        let mut x = p.clone();
        x.ntt().unwrap();
        let mut y = RnsPoly::from_data(
            &fresh,
            &[0, 1, 2],
            p.data().to_vec(),
            Representation::Coefficient,
        )
        .unwrap();
        y.ntt().unwrap();
        assert_eq!(x.data(), y.data());
    }

    fn random_poly(ctx: &Arc<RingContext>, limbs: &[usize], seed: u64) -> RnsPoly {
        let n = ctx.n();
        let data = limbs
            .iter()
            .enumerate()
            .flat_map(|(k, &i)| {
                crate::testutil::random_residues(
                    n,
                    ctx.moduli()[i].value(),
                    seed ^ (k as u64) << 32,
                )
            })
            .collect();
        RnsPoly::from_data(ctx, limbs, data, Representation::Coefficient).unwrap()
    }

    /// Schoolbook negacyclic product over the integers, then reduced mod Q (centered).
    fn big_negacyclic(a: &[BigInt], b: &[BigInt], q: &BigInt) -> Vec<BigInt> {
        let n = a.len();
        let mut c = vec![BigInt::from(0); n];
        for i in 0..n {
            for j in 0..n {
                let p = &a[i] * &b[j];
                if i + j < n {
                    c[i + j] += p;
                } else {
                    c[i + j - n] -= p;
                }
            }
        }
        c.into_iter().map(|x| x.mod_floor(q)).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn ring_operations_match_big_integers(log_n in 2u32..=6, l in 1usize..5, seed in any::<u64>()) {
            let n = 1 << log_n;
            let ctx = ring(n, 5);
            let limbs: Vec<usize> = (0..l).collect();
            let a = random_poly(&ctx, &limbs, seed);
            let b = random_poly(&ctx, &limbs, seed ^ 0xabcdef);
            let q = BigInt::from(a.basis().unwrap().product().clone());
            let (ba, bb) = (a.to_centered_bigints().unwrap(), b.to_centered_bigints().unwrap());
            let norm = |v: Vec<BigInt>| v.into_iter().map(|x| x.mod_floor(&q)).collect::<Vec<_>>();

            let mut s = a.clone();
            s.add_assign(&b).unwrap();
            prop_assert_eq!(norm(s.to_centered_bigints().unwrap()), norm(ba.iter().zip(&bb).map(|(x, y)| x + y).collect()));
            let mut d = a.clone();
            d.sub_assign(&b).unwrap();
            d.neg_assign();
            prop_assert_eq!(norm(d.to_centered_bigints().unwrap()), norm(ba.iter().zip(&bb).map(|(x, y)| y - x).collect()));
            let mut c = a.clone();
            c.mul_scalar_assign(-7);
            prop_assert_eq!(norm(c.to_centered_bigints().unwrap()), norm(ba.iter().map(|x| x * -7).collect()));

            // Product through the NTT, and multiply-accumulate.
            let (mut fa, mut fb) = (a.clone(), b.clone());
            fa.ntt().unwrap();
            fb.ntt().unwrap();
            let mut acc = fa.clone();
            acc.mul_acc(&fa, &fb).unwrap();
            fa.mul_assign(&fb).unwrap();
            fa.intt().unwrap();
            let expect = big_negacyclic(&ba, &bb, &q);
            prop_assert_eq!(norm(fa.to_centered_bigints().unwrap()), expect.clone());
            acc.intt().unwrap();
            prop_assert_eq!(norm(acc.to_centered_bigints().unwrap()),
                            norm(ba.iter().zip(&expect).map(|(x, y)| x + y).collect()));
        }

        #[test]
        fn rescale_is_rounded_division(log_n in 2u32..=8, l in 2usize..6, eval in any::<bool>(), seed in any::<u64>()) {
            let n = 1 << log_n;
            let ctx = ring(n, 6);
            let limbs: Vec<usize> = (0..l).collect();
            let a = random_poly(&ctx, &limbs, seed);
            let before = a.to_centered_bigints().unwrap();
            let ql = BigInt::from(ctx.moduli()[l - 1].value());
            let mut r = a.clone();
            if eval { r.ntt().unwrap(); }
            r.divide_round_by_last().unwrap();
            if eval { r.intt().unwrap(); }
            prop_assert_eq!(r.num_limbs(), l - 1);
            let expect: Vec<BigInt> = before.iter().map(|x| div_round(x, &ql)).collect();
            prop_assert_eq!(r.to_centered_bigints().unwrap(), expect);
        }

        #[test]
        fn poly_bconv_and_automorphism(log_n in 3u32..=7, seed in any::<u64>(), r in -20i64..20) {
            let n = 1 << log_n;
            let ctx = ring(n, 6);
            let a = random_poly(&ctx, &[0, 1, 2], seed);
            let xs = a.to_centered_bigints().unwrap();
            let b = a.bconv(&[3, 4, 5], ConversionMode::ExactCentered).unwrap();
            let bb = b.basis().unwrap();
            let pv = BigInt::from(bb.product().clone());
            let got = b.to_centered_bigints().unwrap();
            for (x, y) in xs.iter().zip(&got) {
                prop_assert_eq!(x.mod_floor(&pv), y.mod_floor(&pv));
            }
            let g = crate::automorphism::galois_element(r, n).unwrap();
            let coeff = a.automorphism(g).unwrap();
            let mut fa = a.clone();
            fa.ntt().unwrap();
            let mut eval = fa.automorphism(g).unwrap();
            eval.intt().unwrap();
            prop_assert_eq!(coeff, eval);
        }
    }

    /// ModUp's in-place extended digit equals BConv, NTT and concatenation, bit for bit, for
    /// a digit at the start, in the middle and at the end of the extended basis (the
    /// converted limbs then lie on both sides of the digit's own), and refuses a digit that
    /// `to` or `own` lacks.
    #[test]
    fn extend_digit_equals_bconv_ntt_concat() {
        let n = 1 << 7;
        let ctx = ring(n, 8);
        let to = [0usize, 1, 2, 3, 4, 5, 6, 7];
        let mut own = random_poly(&ctx, &[0, 1, 2, 3, 4, 5], 11);
        own.ntt().unwrap();
        for digit in [vec![0usize, 1], vec![2, 3], vec![4, 5], vec![3]] {
            let mut sub = own.select_limbs(&digit).unwrap();
            sub.intt().unwrap();
            let others: Vec<usize> = to.iter().copied().filter(|j| !digit.contains(j)).collect();
            let mut ext = sub.bconv(&others, ConversionMode::Approximate).unwrap();
            ext.ntt().unwrap();
            let mine = own.select_limbs(&digit).unwrap();
            let want = RnsPoly::concat(&[&mine, &ext], &to).unwrap();
            let got = RnsPoly::extend_digit(&sub, &own, &to).unwrap();
            assert_eq!(got, want, "digit {digit:?}");
        }
        let mut sub = own.select_limbs(&[4, 5]).unwrap();
        sub.intt().unwrap();
        assert!(RnsPoly::extend_digit(&sub, &own, &[0, 1, 2, 6, 7]).is_err());
        assert!(RnsPoly::extend_digit(&sub, &own.select_limbs(&[0, 1]).unwrap(), &to).is_err());
        assert!(RnsPoly::extend_digit(&own, &own, &to).is_err());
    }

    /// All digits at once (each prime's NTTs run one after another) equal each digit alone,
    /// bit for bit, digits of unequal sizes included; one bad digit refuses the call.
    /// The digits `digits` of `own` (evaluation form), each in coefficient form.
    fn coeff_digits(own: &RnsPoly, digits: &[&[usize]]) -> Vec<RnsPoly> {
        digits
            .iter()
            .map(|d| {
                let mut s = own.select_limbs(d).unwrap();
                s.intt().unwrap();
                s
            })
            .collect()
    }

    /// `count` random polynomials over `limbs` in evaluation form (seeds from `seed`).
    fn eval_polys(ctx: &Arc<RingContext>, limbs: &[usize], count: u64, seed: u64) -> Vec<RnsPoly> {
        (0..count)
            .map(|i| {
                let mut p = random_poly(ctx, limbs, seed + i);
                p.ntt().unwrap();
                p
            })
            .collect()
    }

    #[test]
    fn extend_digits_equals_each_extend_digit() {
        let n = 1 << 7;
        let ctx = ring(n, 8);
        let to = [0usize, 1, 2, 3, 4, 5, 6, 7];
        let mut own = random_poly(&ctx, &[0, 1, 2, 3, 4, 5], 12);
        own.ntt().unwrap();
        let subs = coeff_digits(&own, &[&[0, 1], &[2, 3, 4], &[5]]);
        let refs: Vec<&RnsPoly> = subs.iter().collect();
        let got = RnsPoly::extend_digits(&refs, &own, &to).unwrap();
        assert_eq!(got.len(), subs.len());
        for (g, s) in got.iter().zip(&subs) {
            assert_eq!(g, &RnsPoly::extend_digit(s, &own, &to).unwrap());
        }
        assert!(RnsPoly::extend_digits(&[], &own, &to).unwrap().is_empty());
        assert!(RnsPoly::extend_digits(&[&subs[0], &own], &own, &to).is_err());
    }

    /// ModUp fused with the seeded inner product equals the extended digits followed by
    /// [`RnsPoly::dot_pair_seeded`], bit for bit, with key digits holding more limbs than
    /// `to` (a key used below its top level), and refuses mismatched operands.
    #[test]
    fn mod_up_dot_pair_seeded_equals_extend_then_dot() {
        let n = 1 << 7;
        let ctx = ring(n, 9);
        let to = [0usize, 1, 2, 3, 4, 6, 7];
        let mut own = random_poly(&ctx, &[0, 1, 2, 3, 4], 21);
        own.ntt().unwrap();
        let subs = coeff_digits(&own, &[&[0, 1], &[2, 3], &[4]]);
        let refs: Vec<&RnsPoly> = subs.iter().collect();
        let all: Vec<usize> = (0..9).collect();
        let keys = eval_polys(&ctx, &all, 3, 40);
        let krefs: Vec<&RnsPoly> = keys.iter().collect();
        let seeds: Vec<Seed> = (0..3).map(|i| Seed([i as u8 + 9; 32])).collect();
        let ups = RnsPoly::extend_digits(&refs, &own, &to).unwrap();
        let up_refs: Vec<&RnsPoly> = ups.iter().collect();
        let want = RnsPoly::dot_pair_seeded(&up_refs, &krefs, &seeds).unwrap();
        let got = RnsPoly::mod_up_dot_pair_seeded(&refs, &own, &to, &krefs, &seeds).unwrap();
        assert_eq!(got, want);
        // Too few key digits or seeds, a key without the limbs of `to`, a digit in the wrong
        // representation.
        assert!(RnsPoly::mod_up_dot_pair_seeded(&refs, &own, &to, &krefs[..2], &seeds).is_err());
        assert!(RnsPoly::mod_up_dot_pair_seeded(&refs, &own, &to, &krefs, &seeds[..1]).is_err());
        assert!(RnsPoly::mod_up_dot_pair_seeded(&[], &own, &to, &[], &[]).is_err());
        let short = keys[0].select_limbs(&[0, 1, 2]).unwrap();
        let bad = [&short, krefs[1], krefs[2]];
        assert!(RnsPoly::mod_up_dot_pair_seeded(&refs, &own, &to, &bad, &seeds).is_err());
        let bad = [&own, refs[1], refs[2]];
        assert!(RnsPoly::mod_up_dot_pair_seeded(&bad, &own, &to, &krefs, &seeds).is_err());
    }

    /// The hoisted rotation's fused inner product equals the automorphism of each digit
    /// followed by [`RnsPoly::dot_pair_seeded`], bit for bit, for rotations and conjugation,
    /// and refuses what they refuse.
    #[test]
    fn automorphism_dot_pair_seeded_equals_rotate_then_dot() {
        let n = 1 << 7;
        let ctx = ring(n, 6);
        let limbs = [0usize, 2, 3, 5];
        let ups = eval_polys(&ctx, &limbs, 3, 60);
        let all: Vec<usize> = (0..6).collect();
        let keys = eval_polys(&ctx, &all, 3, 70);
        let (refs, krefs): (Vec<&RnsPoly>, Vec<&RnsPoly>) =
            (ups.iter().collect(), keys.iter().collect());
        let seeds: Vec<Seed> = (0..3).map(|i| Seed([i as u8 + 40; 32])).collect();
        for g in [5u64, 25, 2 * n as u64 - 1] {
            let rotated: Vec<RnsPoly> = ups.iter().map(|u| u.automorphism(g).unwrap()).collect();
            let rrefs: Vec<&RnsPoly> = rotated.iter().collect();
            let want = RnsPoly::dot_pair_seeded(&rrefs, &krefs, &seeds).unwrap();
            let got = RnsPoly::automorphism_dot_pair_seeded(&refs, g, &krefs, &seeds).unwrap();
            assert_eq!(got, want, "g = {g}");
        }
        // An even Galois element, too few seeds, coefficient-form digits.
        assert!(RnsPoly::automorphism_dot_pair_seeded(&refs, 4, &krefs, &seeds).is_err());
        assert!(RnsPoly::automorphism_dot_pair_seeded(&refs, 5, &krefs, &seeds[..2]).is_err());
        let coeff = random_poly(&ctx, &limbs, 9);
        let bad = [&coeff, refs[1], refs[2]];
        assert!(RnsPoly::automorphism_dot_pair_seeded(&bad, 5, &krefs, &seeds).is_err());
    }

    /// The fused ModDown tail equals the difference then the constant product, bit for bit
    /// (constants of any size, zero and q - 1 included), and refuses what they refuse.
    #[test]
    fn sub_mul_scalar_equals_sub_then_mul_scalar() {
        let ctx = ring(1 << 6, 4);
        let q1 = ctx.moduli()[1].value();
        let (a, b) = (
            random_poly(&ctx, &[0, 1, 2], 5),
            random_poly(&ctx, &[0, 1, 2], 6),
        );
        for c in [[0u64, q1 - 1, u64::MAX], [7, 1, 1 << 63]] {
            let mut want = a.clone();
            want.sub_assign(&b).unwrap();
            want.mul_scalar_limbs(&c).unwrap();
            let mut got = a.clone();
            got.sub_mul_scalar_limbs(&b, &c).unwrap();
            assert_eq!(got, want);
        }
        let mut x = a.clone();
        assert!(x.sub_mul_scalar_limbs(&b, &[1, 2]).is_err());
        assert!(x
            .sub_mul_scalar_limbs(&b.select_limbs(&[0, 1]).unwrap(), &[1, 2])
            .is_err());
    }

    #[test]
    fn seeded_dot_pair_equals_expansion_then_two_dots() {
        // N = 4096 spans several generation chunks; N = 64 is shorter than one.
        for (n, terms) in [(4096usize, 4usize), (64, 3), (64, 17)] {
            let ctx = ring(n, 3);
            let limbs = [0, 2];
            let mut xs: Vec<RnsPoly> = (0..terms)
                .map(|t| random_poly(&ctx, &limbs, 300 + t as u64))
                .collect();
            let mut ys: Vec<RnsPoly> = (0..terms)
                .map(|t| random_poly(&ctx, &limbs, 700 + t as u64))
                .collect();
            for p in xs.iter_mut().chain(ys.iter_mut()) {
                p.ntt().unwrap();
            }
            let seeds: Vec<Seed> = (0..terms).map(|t| Seed([t as u8 + 1; 32])).collect();
            let us: Vec<RnsPoly> = seeds
                .iter()
                .map(|s| RnsPoly::expand_seed(&ctx, &limbs, s).unwrap())
                .collect();
            let xr: Vec<&RnsPoly> = xs.iter().collect();
            let want0 = RnsPoly::dot(&xr, &ys.iter().collect::<Vec<_>>()).unwrap();
            let want1 = RnsPoly::dot(&xr, &us.iter().collect::<Vec<_>>()).unwrap();
            let (got0, got1) =
                RnsPoly::dot_pair_seeded(&xr, &ys.iter().collect::<Vec<_>>(), &seeds).unwrap();
            assert_eq!(got0, want0, "N = {n}, {terms} terms");
            assert_eq!(got1, want1, "N = {n}, {terms} terms");
            assert!(
                RnsPoly::dot_pair_seeded(&xr, &ys.iter().collect::<Vec<_>>(), &seeds[1..]).is_err(),
                "one seed per term"
            );
            // `b` over more limbs (a whole key digit): its limbs 0 and 2 are read in place.
            let wide: Vec<RnsPoly> = ys
                .iter()
                .enumerate()
                .map(|(t, y)| {
                    let mut mid = random_poly(&ctx, &[1], 50 + t as u64);
                    mid.ntt().unwrap();
                    RnsPoly::concat(&[y, &mid], &[0, 1, 2]).unwrap()
                })
                .collect();
            let (w0, w1) =
                RnsPoly::dot_pair_seeded(&xr, &wide.iter().collect::<Vec<_>>(), &seeds).unwrap();
            assert_eq!((w0, w1), (want0.clone(), want1.clone()), "N = {n}, wide b");
            // A `b` that lacks one of `a`'s limbs is an error, not a wrong answer.
            let narrow: Vec<RnsPoly> = ys.iter().map(|y| y.select_limbs(&[0]).unwrap()).collect();
            assert!(
                RnsPoly::dot_pair_seeded(&xr, &narrow.iter().collect::<Vec<_>>(), &seeds).is_err()
            );
        }
    }

    #[test]
    fn dot_equals_summed_products() {
        let ctx = ring(64, 4);
        let limbs = [0, 1, 2, 3];
        for terms in [1usize, 2, 4, 8, 9, 15, 16, 33] {
            let mut xs: Vec<RnsPoly> = (0..terms)
                .map(|t| random_poly(&ctx, &limbs, 100 + t as u64))
                .collect();
            let mut ys: Vec<RnsPoly> = (0..terms)
                .map(|t| random_poly(&ctx, &limbs, 900 + t as u64))
                .collect();
            for p in xs.iter_mut().chain(ys.iter_mut()) {
                p.ntt().unwrap();
            }
            let mut want = RnsPoly::zero(&ctx, &limbs, Representation::Evaluation).unwrap();
            for (x, y) in xs.iter().zip(&ys) {
                want.mul_acc(x, y).unwrap();
            }
            let got = RnsPoly::dot(
                &xs.iter().collect::<Vec<_>>(),
                &ys.iter().collect::<Vec<_>>(),
            )
            .unwrap();
            assert_eq!(got, want, "{terms} terms");
        }
        let x = random_poly(&ctx, &limbs, 1);
        assert!(RnsPoly::dot(&[&x], &[]).is_err());
        assert!(
            RnsPoly::dot(&[&x], &[&x]).is_err(),
            "coefficient form is rejected"
        );
    }

    #[test]
    fn copy_on_write_clones_are_independent() {
        // Every in-place pass on a shared clone must equal the same pass on a private copy
        // and leave the other handle untouched.
        let ctx = ring(64, 3);
        let limbs = [0usize, 1, 2];
        let a = random_poly(&ctx, &limbs, 1);
        let b = random_poly(&ctx, &limbs, 2);
        let private =
            |p: &RnsPoly| RnsPoly::from_data(&ctx, &limbs, p.data().to_vec(), p.repr()).unwrap();
        let before = private(&a);
        type Pass = fn(&mut RnsPoly, &RnsPoly);
        // The sum, the difference, the constant products, the fused ModDown tail, and the
        // product and the inverse NTT (below) write a shared operand's result out of place;
        // the other passes copy it first.
        let passes: [Pass; 7] = [
            |x, y| x.add_assign(y).unwrap(),
            |x, y| x.sub_assign(y).unwrap(),
            |x, y| x.sub_mul_scalar_limbs(y, &[3, 1 << 40, u64::MAX]).unwrap(),
            |x, _| x.neg_assign(),
            |x, _| x.ntt().unwrap(),
            |x, _| x.mul_scalar_limbs(&[3, 5, 7]).unwrap(),
            |x, y| {
                let mut ye = y.clone();
                x.ntt().unwrap();
                ye.ntt().unwrap();
                x.mul_acc(&ye, &ye).unwrap();
            },
        ];
        for pass in passes {
            let mut shared = a.clone();
            let mut own = private(&a);
            pass(&mut shared, &b);
            pass(&mut own, &b);
            assert_eq!(shared, own);
            assert_eq!(a, before);
        }
        // A view of a run of limbs (how ModDown reads the kept limbs of the extended
        // polynomial) shares part of a buffer: its result is written out of place too, from
        // the view's own limbs.
        let wide = random_poly(&ctx, &limbs, 3);
        let wide_before = private(&wide);
        let kept = [1usize, 2];
        let y = random_poly(&ctx, &kept, 4);
        let own_view =
            |p: &RnsPoly| RnsPoly::from_data(&ctx, &kept, p.data().to_vec(), p.repr()).unwrap();
        let view_passes: [Pass; 4] = [
            |x, y| x.add_assign(y).unwrap(),
            |x, y| x.sub_assign(y).unwrap(),
            |x, y| x.sub_mul_scalar_limbs(y, &[5, u64::MAX]).unwrap(),
            |x, _| x.mul_scalar_limbs(&[1 << 61, 9]).unwrap(),
        ];
        for pass in view_passes {
            let mut view = wide.select_limbs(&kept).unwrap();
            let mut own = own_view(&view);
            pass(&mut view, &y);
            pass(&mut own, &y);
            assert_eq!(view, own);
            assert_eq!(wide, wide_before);
        }
        // The inverse NTT of a shared clone and of a shared view (ModUp's digit).
        let mut eval = private(&wide);
        eval.ntt().unwrap();
        let eval_before = private(&eval);
        // The product of a shared clone and of a shared view (evaluation form), written out of
        // place.
        let mut y_eval = private(&b);
        y_eval.ntt().unwrap();
        for part in [&limbs[..], &kept[..]] {
            let other = y_eval.select_limbs(part).unwrap();
            let mut shared = eval.select_limbs(part).unwrap();
            let mut own =
                RnsPoly::from_data(&ctx, part, shared.data().to_vec(), shared.repr()).unwrap();
            shared.mul_assign(&other).unwrap();
            own.mul_assign(&other).unwrap();
            assert_eq!(shared, own);
            assert_eq!(eval, eval_before);
        }
        for part in [&limbs[..], &kept[..]] {
            let mut shared = eval.select_limbs(part).unwrap();
            let mut own =
                RnsPoly::from_data(&ctx, part, shared.data().to_vec(), shared.repr()).unwrap();
            shared.intt().unwrap();
            own.intt().unwrap();
            assert_eq!(shared, own);
            assert_eq!(eval, eval_before);
        }
    }

    #[test]
    fn mismatches_are_errors() {
        let ctx = ring(16, 4);
        let other = ring(16, 4);
        let mut a = random_poly(&ctx, &[0, 1], 1);
        let b = random_poly(&ctx, &[0, 2], 2);
        assert!(matches!(
            a.add_assign(&b),
            Err(MathError::LimbMismatch { .. })
        ));
        let c = random_poly(&other, &[0, 1], 3);
        assert!(matches!(
            a.add_assign(&c),
            Err(MathError::RingMismatch { .. })
        ));
        let d = random_poly(&ctx, &[0, 1], 4);
        assert!(matches!(
            a.mul_assign(&d),
            Err(MathError::RepresentationMismatch { .. })
        ));
        let mut e = d.clone();
        e.ntt().unwrap();
        assert!(matches!(
            a.add_assign(&e),
            Err(MathError::RepresentationMismatch { .. })
        ));
        assert!(e.ntt().is_err());
        assert!(e.bconv(&[2], ConversionMode::Approximate).is_err());
        assert!(RnsPoly::zero(&ctx, &[0, 0], Representation::Coefficient).is_err());
        assert!(RnsPoly::zero(&ctx, &[9], Representation::Coefficient).is_err());
        assert!(RnsPoly::from_signed(&ctx, &[0], &[1, 2, 3]).is_err());
        let mut one = random_poly(&ctx, &[0], 5);
        assert!(one.drop_last_limb().is_err());
        assert!(one.divide_round_by_last().is_err());
        assert!(one.automorphism(2).is_err());
        assert!(RingContext::new(24, &[97]).is_err());
        assert!(
            RnsPoly::from_data(&ctx, &[0], vec![u64::MAX; 16], Representation::Coefficient)
                .is_err()
        );
    }
}
