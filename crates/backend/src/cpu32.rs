//! The 32-bit-word CPU backend (issue 22 item 3): every primary function on `u32` limbs with
//! the kernels of [`tessera_math::word32`], limb-parallel on the math layer's thread pool.
//!
//! Why a backend and not a second polynomial type: the evaluator is generic over [`Backend`],
//! so the ring ([`RingContext`], whose primes must all be below 2^30 here) and the host
//! interface ([`RnsPoly`], 64-bit words) stay as they are; a limb is narrowed to `u32` when it
//! is loaded and widened when it is stored. Arithmetic modulo each prime is exact and every
//! primary returns canonical residues, so this backend returns exactly the words the 64-bit
//! [`crate::CpuBackend`] returns for every primary (the tests check it) while each SIMD vector
//! holds twice the lanes and every pass moves half the bytes.

use crate::{Backend, HostPoly, Kind};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tessera_math::automorphism::{automorphism_permutation, galois_check};
use tessera_math::parallel::install;
use tessera_math::poly::check_operands;
use tessera_math::sampling::{limb_stream, Seed};
use tessera_math::word32::automorphism::{apply_permutation_u32, automorphism_coeff_u32};
use tessera_math::word32::bconv::BaseConverter32;
use tessera_math::word32::dot::{dot_row_u32, mul_acc_row_u32};
use tessera_math::word32::{pointwise, supports, Modulus32, NttPlan32, MAX_MODULUS_BITS32};
use tessera_math::Kernel;
use tessera_math::{ConversionMode, MathError, Representation, RingContext, RnsPoly};

/// Words of a seeded key's `a` half generated per step by the fused inner product (as the
/// 64-bit path: a few kilobytes per operand, consumed from L1).
const SEED_CHUNK: usize = 1024;

/// A polynomial of [`Cpu32Backend`]: limb-major `u32` residues over a limb set of the ring.
///
/// Copy-on-write, as the 64-bit `RnsPoly`: a clone, and a selection of a run of consecutive
/// limbs (what rescaling, ModDown and the digits of ModUp keep), share the buffer; the first
/// write copies the view out ([`Poly32::data_mut`]).
#[derive(Clone)]
pub struct Poly32 {
    limbs: Vec<usize>,
    repr: Representation,
    buf: Arc<Vec<u32>>,
    /// First word of this polynomial in `buf`.
    start: usize,
    /// Its words: `limbs.len() * N`.
    len: usize,
}

impl std::fmt::Debug for Poly32 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poly32")
            .field("limbs", &self.limbs)
            .field("repr", &self.repr)
            .finish_non_exhaustive()
    }
}

impl Poly32 {
    /// A polynomial owning `data`.
    fn owned(limbs: Vec<usize>, repr: Representation, data: Vec<u32>) -> Self {
        Self {
            limbs,
            repr,
            len: data.len(),
            buf: Arc::new(data),
            start: 0,
        }
    }

    /// The words of the limbs, limb-major.
    fn data(&self) -> &[u32] {
        &self.buf[self.start..self.start + self.len]
    }

    /// The words, writable: copies the view out first when the buffer is shared or larger.
    fn data_mut(&mut self) -> &mut [u32] {
        if self.start != 0 || self.buf.len() != self.len || Arc::get_mut(&mut self.buf).is_none() {
            self.buf = Arc::new(self.data().to_vec());
            self.start = 0;
        }
        Arc::get_mut(&mut self.buf).expect("unshared after the copy")
    }

    /// Limb `k` of `n` words.
    fn limb(&self, k: usize, n: usize) -> &[u32] {
        &self.data()[k * n..(k + 1) * n]
    }
}

/// A 32-bit element-wise kernel of [`pointwise`] (`a op= b` on one limb).
type Row32 = fn(Option<Kernel>, &Modulus32, &mut [u32], &[u32]) -> tessera_math::Result<()>;

/// `out[k] = x[k]` as a 32-bit word (each a residue below 2^30, so exact).
#[inline]
fn narrow(x: &[u64], out: &mut [u32]) {
    out.iter_mut().zip(x).for_each(|(o, &v)| *o = v as u32);
}

/// Per-ring tables built once: the 32-bit moduli and NTT plans of every ring prime.
struct Tables {
    moduli: Vec<Modulus32>,
    plans: Vec<NttPlan32>,
}

/// Caches filled on first use (Galois permutations, converters), shared by clones.
#[derive(Default)]
struct Caches {
    perms: HashMap<u64, Arc<Vec<u32>>>,
    converters: HashMap<(Vec<usize>, Vec<usize>), Arc<BaseConverter32>>,
}

/// Computes every primary function on 32-bit words on this machine.
#[derive(Clone)]
pub struct Cpu32Backend {
    ring: Arc<RingContext>,
    /// The kernel of every element-wise, inner-product, permutation and BConv row.
    kernel: Kernel,
    /// The kernel of the transforms: the fastest at or below `kernel` for this degree.
    ntt_kernel: Kernel,
    tables: Arc<Tables>,
    caches: Arc<Mutex<Caches>>,
}

impl std::fmt::Debug for Cpu32Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cpu32Backend")
            .field("ring", &self.ring)
            .field("kernel", &self.kernel)
            .finish_non_exhaustive()
    }
}

impl Cpu32Backend {
    /// A 32-bit-word backend over `ring` on the kernels of the `TESSERA_SIMD` limit. Refuses
    /// (typed error naming the prime and the bound) a ring with a prime of more than 30 bits,
    /// and an invalid `TESSERA_SIMD`.
    pub fn new(ring: Arc<RingContext>) -> Result<Self, MathError> {
        Self::with_kernel(ring, tessera_math::simd::limit()?)
    }

    /// [`Cpu32Backend::new`] on a chosen kernel (at most `kernel`: IFMA runs AVX-512F code),
    /// refused when the CPU lacks it. Tests compare every kernel in one process with it.
    pub fn with_kernel(ring: Arc<RingContext>, kernel: Kernel) -> Result<Self, MathError> {
        if !kernel.cpu_supports() {
            return Err(MathError::Unsupported(format!(
                "kernel {} on this CPU",
                kernel.name()
            )));
        }
        let kernel = tessera_math::simd::word64(kernel);
        let ntt_kernel = Kernel::ALL
            .into_iter()
            .rev()
            .find(|&k| k <= kernel && supports(k, ring.n()))
            .unwrap_or(Kernel::Scalar);
        if let Some(q) = tessera_math::word32::prime_too_large(&ring) {
            return Err(MathError::OutOfRange {
                name: "ring prime for 32-bit words",
                value: q.to_string(),
                allowed: format!(
                    "below 2^{MAX_MODULUS_BITS32} (every prime of the ring; use the 64-bit CPU backend otherwise)"
                ),
            });
        }
        let n = ring.n();
        let plans = install(|| {
            ring.moduli()
                .par_iter()
                .map(|m| NttPlan32::new(n, m.value()))
                .collect::<Result<Vec<_>, _>>()
        })?;
        let moduli = plans.iter().map(|p| *p.modulus()).collect();
        Ok(Self {
            ring,
            kernel,
            ntt_kernel,
            tables: Arc::new(Tables { moduli, plans }),
            caches: Arc::default(),
        })
    }

    /// The kernel of the element-wise, inner-product and BConv primaries.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Whether every prime of `ring` fits 32-bit words (what [`Cpu32Backend::new`] needs).
    pub fn supports(ring: &RingContext) -> bool {
        tessera_math::word32::prime_too_large(ring).is_none()
    }

    fn n(&self) -> usize {
        self.ring.n()
    }

    fn moduli_of(&self, limbs: &[usize]) -> Vec<u64> {
        limbs
            .iter()
            .map(|&i| self.ring.moduli().get(i).map_or(0, |m| m.value()))
            .collect()
    }

    fn check_limbs(&self, limbs: &[usize]) -> Result<(), MathError> {
        let l = self.tables.moduli.len();
        for (k, &i) in limbs.iter().enumerate() {
            if i >= l || limbs[..k].contains(&i) {
                return Err(MathError::OutOfRange {
                    name: "limb index",
                    value: i.to_string(),
                    allowed: format!("distinct indices below {l}"),
                });
            }
        }
        Ok(())
    }

    fn check_compatible(
        &self,
        a: &Poly32,
        b: &Poly32,
        op: &'static str,
        need: Option<Representation>,
    ) -> Result<(), MathError> {
        check_operands(op, (&a.limbs, a.repr), (&b.limbs, b.repr), need, |l| {
            self.moduli_of(l)
        })
    }

    /// A polynomial over `limbs` with unspecified (zero) words, for a caller that writes them.
    fn alloc(&self, limbs: &[usize], repr: Representation) -> Result<Poly32, MathError> {
        self.check_limbs(limbs)?;
        Ok(Poly32::owned(
            limbs.to_vec(),
            repr,
            vec![0; limbs.len() * self.n()],
        ))
    }

    /// Runs `f(modulus, ring index, limb)` on every limb of `p` in parallel.
    fn par_limbs(
        &self,
        p: &mut Poly32,
        f: impl Fn(&Modulus32, usize, &mut [u32]) -> Result<(), MathError> + Sync + Send,
    ) -> Result<(), MathError> {
        let (n, t, limbs) = (self.n(), &self.tables, p.limbs.clone());
        let data = p.data_mut();
        install(|| {
            data.par_chunks_mut(n)
                .zip(limbs.par_iter())
                .try_for_each(|(limb, &i)| f(&t.moduli[i], i, limb))
        })
    }

    /// Runs `f(position, modulus, limb)` on every limb of `p` in parallel.
    fn par_limbs_at(
        &self,
        p: &mut Poly32,
        f: impl Fn(usize, &Modulus32, &mut [u32]) -> Result<(), MathError> + Sync + Send,
    ) -> Result<(), MathError> {
        let (n, t, limbs) = (self.n(), &self.tables, p.limbs.clone());
        let data = p.data_mut();
        install(|| {
            data.par_chunks_mut(n)
                .zip(limbs.par_iter())
                .enumerate()
                .try_for_each(|(k, (limb, &i))| f(k, &t.moduli[i], limb))
        })
    }

    /// `a op b` limb by limb with a 32-bit element-wise kernel (`b`'s matching limb).
    fn zip(
        &self,
        a: &Poly32,
        b: &Poly32,
        op: &'static str,
        need: Option<Representation>,
        f: Row32,
    ) -> Result<Poly32, MathError> {
        self.check_compatible(a, b, op, need)?;
        let n = self.n();
        let mut r = a.clone();
        let limbs = r.limbs.clone();
        let data = r.data_mut();
        let (t, kernel) = (&self.tables, Some(self.kernel));
        install(|| {
            data.par_chunks_mut(n)
                .zip(b.data().par_chunks(n))
                .zip(limbs.par_iter())
                .try_for_each(|((x, y), &i)| f(kernel, &t.moduli[i], x, y))
        })?;
        Ok(r)
    }

    /// Per-limb constants reduced into their limbs, after checking there is one per limb.
    fn constants(&self, p: &Poly32, c: &[u64]) -> Result<Vec<u32>, MathError> {
        if c.len() != p.limbs.len() {
            return Err(MathError::LengthMismatch {
                what: "per-limb constants",
                expected: p.limbs.len(),
                found: c.len(),
            });
        }
        Ok(p.limbs
            .iter()
            .zip(c)
            .map(|(&i, &x)| self.tables.moduli[i].reduce_u64(x))
            .collect())
    }

    fn check_dot(&self, a: &[&Poly32], b: &[&Poly32]) -> Result<(), MathError> {
        if a.is_empty() || a.len() != b.len() {
            return Err(MathError::LengthMismatch {
                what: "dot product operands",
                expected: a.len().max(1),
                found: b.len(),
            });
        }
        for (x, y) in a.iter().zip(b) {
            self.check_compatible(x, y, "dot product", Some(Representation::Evaluation))?;
            self.check_compatible(a[0], x, "dot product", Some(Representation::Evaluation))?;
        }
        Ok(())
    }

    fn permutation(&self, g: u64) -> Result<Arc<Vec<u32>>, MathError> {
        let mut c = self.caches.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = c.perms.get(&g) {
            return Ok(p.clone());
        }
        let p = Arc::new(automorphism_permutation(g, self.n())?);
        c.perms.insert(g, p.clone());
        Ok(p)
    }

    fn converter(&self, from: &[usize], to: &[usize]) -> Result<Arc<BaseConverter32>, MathError> {
        let key = (from.to_vec(), to.to_vec());
        if let Some(c) = self
            .caches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .converters
            .get(&key)
        {
            return Ok(c.clone());
        }
        let c = Arc::new(BaseConverter32::new(&*self.ring.converter(from, to)?)?);
        self.caches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .converters
            .insert(key, c.clone());
        Ok(c)
    }

    fn transform(
        &self,
        p: &mut Poly32,
        op: &'static str,
        from: Representation,
        forward: bool,
    ) -> Result<(), MathError> {
        p.repr.require(op, Some(from))?;
        let (t, k) = (&self.tables, self.ntt_kernel);
        self.par_limbs(p, |_, i, limb| {
            if forward {
                t.plans[i].forward_with(k, limb)
            } else {
                t.plans[i].inverse_with(k, limb)
            }
        })?;
        p.repr = match from {
            Representation::Coefficient => Representation::Evaluation,
            Representation::Evaluation => Representation::Coefficient,
        };
        Ok(())
    }
}

impl Backend for Cpu32Backend {
    type Poly = Poly32;

    fn ring(&self) -> &Arc<RingContext> {
        &self.ring
    }
    fn limbs(&self, p: &Poly32) -> Vec<usize> {
        p.limbs.clone()
    }
    fn repr(&self, p: &Poly32) -> Representation {
        p.repr
    }
    /// Narrows each residue to a `u32` (exact: every prime is below 2^30).
    fn load(&mut self, host: &RnsPoly, _kind: Kind) -> Result<Poly32, MathError> {
        if !Arc::ptr_eq(host.context(), &self.ring) {
            return Err(MathError::RingMismatch { op: "load" });
        }
        let mut p = self.alloc(host.limb_indices(), host.repr())?;
        let src = host.data();
        install(|| {
            p.data_mut()
                .par_chunks_mut(self.n())
                .zip(src.par_chunks(self.n()))
                .for_each(|(o, s)| narrow(s, o))
        });
        Ok(p)
    }
    /// Widens each residue back to a `u64` word.
    fn store(&mut self, p: &Poly32) -> Result<RnsPoly, MathError> {
        let data = p.data().iter().map(|&x| x as u64).collect();
        RnsPoly::from_data(&self.ring, &p.limbs, data, p.repr)
    }
    /// The 64-bit expansion's residues: the same XOF stream per limb, sampled below `q` as
    /// `tessera_math::sampling` does, then narrowed.
    fn expand_seed(
        &mut self,
        seed: &Seed,
        limbs: &[usize],
        _kind: Kind,
    ) -> Result<Poly32, MathError> {
        let mut p = self.alloc(limbs, Representation::Evaluation)?;
        self.par_limbs(&mut p, |m, _, limb| {
            let q = m.value() as u64;
            let mut xof = limb_stream(seed, q);
            let mut wide = vec![0u64; SEED_CHUNK];
            for chunk in limb.chunks_mut(SEED_CHUNK) {
                let w = &mut wide[..chunk.len()];
                xof.fill_below(q, w);
                chunk
                    .iter_mut()
                    .zip(w.iter())
                    .for_each(|(o, &x)| *o = x as u32);
            }
            Ok(())
        })?;
        Ok(p)
    }
    /// One fused pass per limb, as the 64-bit backend: the key's `a` halves are generated
    /// [`SEED_CHUNK`] words at a time and consumed from cache by the two inner products, and
    /// its `b` halves are read from the host words and narrowed a chunk at a time (no 32-bit
    /// copy of the key is made).
    fn dot_pair_seeded_key(
        &mut self,
        ups: &[&Poly32],
        key_b: &[HostPoly],
        seeds: &[Seed],
        limbs: &[usize],
    ) -> Result<(Poly32, Poly32), MathError> {
        let op = "dot product";
        let bs = key_b
            .iter()
            .map(|b| match b.data()? {
                p if !Arc::ptr_eq(p.context(), &self.ring) => {
                    Err(MathError::RingMismatch { op: "load" })
                }
                p => Ok(p),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if ups.first().is_some_and(|u| u.limbs != limbs) {
            return Err(MathError::Unsupported(
                "a seeded key's limbs must be those of the digits it multiplies".into(),
            ));
        }
        if ups.is_empty() || ups.len() != bs.len() {
            return Err(MathError::LengthMismatch {
                what: "dot product operands",
                expected: ups.len().max(1),
                found: bs.len(),
            });
        }
        for (x, y) in ups.iter().zip(&bs) {
            if x.limbs != y.limb_indices() {
                return Err(MathError::LimbMismatch {
                    op,
                    left: self.moduli_of(&x.limbs),
                    right: y.moduli(),
                });
            }
            for r in [x.repr, y.repr()] {
                if r != Representation::Evaluation {
                    return Err(MathError::RepresentationMismatch {
                        op,
                        expected: Representation::Evaluation.name(),
                        found: r.name(),
                    });
                }
            }
            self.check_compatible(ups[0], x, op, Some(Representation::Evaluation))?;
        }
        if seeds.len() != ups.len() {
            return Err(MathError::LengthMismatch {
                what: "seeds of a seeded dot product",
                expected: ups.len(),
                found: seeds.len(),
            });
        }
        let n = self.n();
        let mut out0 = self.alloc(limbs, Representation::Evaluation)?;
        let mut out1 = self.alloc(limbs, Representation::Evaluation)?;
        let (t, kernel) = (&self.tables, Some(self.kernel));
        install(|| {
            out0.data_mut()
                .par_chunks_mut(n)
                .zip(out1.data_mut().par_chunks_mut(n))
                .zip(limbs.par_iter())
                .enumerate()
                .try_for_each(|(k, ((o0, o1), &i))| -> Result<(), MathError> {
                    let m = &t.moduli[i];
                    let q = m.value() as u64;
                    let mut xofs: Vec<_> = seeds.iter().map(|s| limb_stream(s, q)).collect();
                    let mut wide = vec![0u64; SEED_CHUNK];
                    let mut u = vec![0u32; seeds.len() * SEED_CHUNK];
                    let mut kb = vec![0u32; seeds.len() * SEED_CHUNK];
                    for start in (0..n).step_by(SEED_CHUNK) {
                        let len = SEED_CHUNK.min(n - start);
                        let range = k * n + start..k * n + start + len;
                        for (xof, ut) in xofs.iter_mut().zip(u.chunks_mut(SEED_CHUNK)) {
                            xof.fill_below(q, &mut wide[..len]);
                            narrow(&wide[..len], &mut ut[..len]);
                        }
                        for (b, bt) in bs.iter().zip(kb.chunks_mut(SEED_CHUNK)) {
                            narrow(&b.data()[range.clone()], &mut bt[..len]);
                        }
                        let xs: Vec<&[u32]> =
                            ups.iter().map(|x| &x.data()[range.clone()]).collect();
                        let ys: Vec<&[u32]> = kb.chunks(SEED_CHUNK).map(|c| &c[..len]).collect();
                        let us: Vec<&[u32]> = u.chunks(SEED_CHUNK).map(|c| &c[..len]).collect();
                        dot_row_u32(kernel, &xs, &ys, m, &mut o0[start..start + len])?;
                        dot_row_u32(kernel, &xs, &us, m, &mut o1[start..start + len])?;
                    }
                    Ok(())
                })
        })?;
        Ok((out0, out1))
    }
    fn ntt(&mut self, p: &mut Poly32) -> Result<(), MathError> {
        self.transform(p, "NTT", Representation::Coefficient, true)
    }
    fn intt(&mut self, p: &mut Poly32) -> Result<(), MathError> {
        self.transform(p, "INTT", Representation::Evaluation, false)
    }
    fn add(&mut self, a: &Poly32, b: &Poly32) -> Result<Poly32, MathError> {
        self.zip(a, b, "add", None, pointwise::add)
    }
    fn sub(&mut self, a: &Poly32, b: &Poly32) -> Result<Poly32, MathError> {
        self.zip(a, b, "sub", None, pointwise::sub)
    }
    fn neg(&mut self, a: &Poly32) -> Result<Poly32, MathError> {
        let mut r = a.clone();
        self.par_limbs(&mut r, |m, _, limb| {
            limb.iter_mut().for_each(|x| *x = m.neg(*x));
            Ok(())
        })?;
        Ok(r)
    }
    fn mul(&mut self, a: &Poly32, b: &Poly32) -> Result<Poly32, MathError> {
        self.zip(
            a,
            b,
            "multiply",
            Some(Representation::Evaluation),
            pointwise::mul,
        )
    }
    /// `acc + a b`, reduced once per word.
    fn mul_acc(&mut self, acc: &mut Poly32, a: &Poly32, b: &Poly32) -> Result<(), MathError> {
        let need = Some(Representation::Evaluation);
        self.check_compatible(a, b, "multiply-accumulate", need)?;
        self.check_compatible(acc, a, "multiply-accumulate", need)?;
        let (n, kernel) = (self.n(), Some(self.kernel));
        self.par_limbs_at(acc, |k, m, o| {
            mul_acc_row_u32(kernel, a.limb(k, n), b.limb(k, n), m, o)
        })
    }
    fn add_scalar(&mut self, a: &Poly32, c: &[u64]) -> Result<Poly32, MathError> {
        a.repr
            .require("add scalar", Some(Representation::Evaluation))?;
        let c = self.constants(a, c)?;
        let mut r = a.clone();
        self.par_limbs_at(&mut r, |k, m, limb| {
            limb.iter_mut().for_each(|x| *x = m.add(*x, c[k]));
            Ok(())
        })?;
        Ok(r)
    }
    fn dot(&mut self, a: &[&Poly32], b: &[&Poly32]) -> Result<Poly32, MathError> {
        self.check_dot(a, b)?;
        let n = self.n();
        let mut out = self.alloc(&a[0].limbs, Representation::Evaluation)?;
        let (t, kernel) = (&self.tables, Some(self.kernel));
        let limbs = out.limbs.clone();
        let data = out.data_mut();
        install(|| {
            data.par_chunks_mut(n)
                .zip(limbs.par_iter())
                .enumerate()
                .try_for_each(|(k, (o, &i))| {
                    let xs: Vec<&[u32]> = a.iter().map(|x| x.limb(k, n)).collect();
                    let ys: Vec<&[u32]> = b.iter().map(|y| y.limb(k, n)).collect();
                    dot_row_u32(kernel, &xs, &ys, &t.moduli[i], o)
                })
        })?;
        Ok(out)
    }
    fn mul_scalar(&mut self, a: &Poly32, c: &[u64]) -> Result<Poly32, MathError> {
        let c = self.constants(a, c)?;
        let mut r = a.clone();
        let kernel = Some(self.kernel);
        self.par_limbs_at(&mut r, |k, m, limb| {
            pointwise::mul_scalar(kernel, m, limb, c[k])
        })?;
        Ok(r)
    }
    fn automorphism(&mut self, a: &Poly32, g: u64) -> Result<Poly32, MathError> {
        let n = self.n();
        let mut out = self.alloc(&a.limbs, a.repr)?;
        let (t, kernel) = (&self.tables, Some(self.kernel));
        let limbs = out.limbs.clone();
        let data = out.data_mut();
        match a.repr {
            Representation::Coefficient => {
                galois_check(g, n)?;
                install(|| {
                    data.par_chunks_mut(n)
                        .zip(a.data().par_chunks(n))
                        .zip(limbs.par_iter())
                        .try_for_each(|((o, x), &i)| {
                            automorphism_coeff_u32(x, g, t.moduli[i].value(), o)
                        })
                })?;
            }
            Representation::Evaluation => {
                let perm = self.permutation(g)?;
                install(|| {
                    data.par_chunks_mut(n)
                        .zip(a.data().par_chunks(n))
                        .try_for_each(|(o, x)| apply_permutation_u32(kernel, x, &perm, o))
                })?;
            }
        }
        Ok(out)
    }
    fn bconv(
        &mut self,
        a: &Poly32,
        to: &[usize],
        mode: ConversionMode,
    ) -> Result<Poly32, MathError> {
        a.repr.require("BConv", Some(Representation::Coefficient))?;
        self.check_limbs(&a.limbs)?;
        let conv = self.converter(&a.limbs, to)?;
        let mut out = self.alloc(to, Representation::Coefficient)?;
        let (n, kernel) = (self.n(), Some(self.kernel));
        install(|| conv.convert(kernel, a.data(), out.data_mut(), n, mode))?;
        Ok(out)
    }
    /// A run of consecutive limbs of `a`, in order, shares `a`'s buffer (copy-on-write);
    /// any other selection is copied.
    fn select_limbs(&mut self, a: &Poly32, keep: &[usize]) -> Result<Poly32, MathError> {
        if let Some(first) = a.limbs.iter().position(|x| Some(x) == keep.first()) {
            if a.limbs[first..].starts_with(keep) {
                let n = self.n();
                return Ok(Poly32 {
                    limbs: keep.to_vec(),
                    repr: a.repr,
                    buf: a.buf.clone(),
                    start: a.start + first * n,
                    len: keep.len() * n,
                });
            }
        }
        self.concat(&[a], keep).map_err(|e| match e {
            MathError::LimbMismatch { left, right, .. } => MathError::LimbMismatch {
                op: "select limbs",
                left,
                right,
            },
            e => e,
        })
    }
    fn concat(&mut self, parts: &[&Poly32], limbs: &[usize]) -> Result<Poly32, MathError> {
        let first = parts.first().ok_or(MathError::OutOfRange {
            name: "parts",
            value: "0".into(),
            allowed: "at least one polynomial".into(),
        })?;
        for p in parts {
            p.repr.require("concat", Some(first.repr))?;
        }
        let n = self.n();
        let mut out = self.alloc(limbs, first.repr)?;
        for (k, i) in limbs.iter().enumerate() {
            let (p, pos) = parts
                .iter()
                .find_map(|p| p.limbs.iter().position(|x| x == i).map(|pos| (p, pos)))
                .ok_or_else(|| MathError::LimbMismatch {
                    op: "concat",
                    left: parts
                        .iter()
                        .flat_map(|p| self.moduli_of(&p.limbs))
                        .collect(),
                    right: self.moduli_of(&[*i]),
                })?;
            out.data_mut()[k * n..(k + 1) * n].copy_from_slice(p.limb(pos, n));
        }
        Ok(out)
    }
    /// The centered lift of the one limb into each modulus of `to`: `x > q/2` means
    /// `x - q < 0`, as `Modulus::center` reads it.
    fn extend_limb(&mut self, a: &Poly32, to: &[usize]) -> Result<Poly32, MathError> {
        a.repr
            .require("extend limb", Some(Representation::Coefficient))?;
        if a.limbs.len() != 1 {
            return Err(MathError::OutOfRange {
                name: "limbs",
                value: a.limbs.len().to_string(),
                allowed: "exactly one limb to extend".into(),
            });
        }
        let src = self.tables.moduli[a.limbs[0]].value();
        let half = src / 2;
        let mut out = self.alloc(to, Representation::Coefficient)?;
        let x = a.data();
        self.par_limbs(&mut out, |m, _, limb| {
            // `x - src mod p` for the negative half: `x + (p - src mod p)`, both below p.
            let shift = m.neg(m.reduce_u64(src as u64));
            for (o, &v) in limb.iter_mut().zip(x) {
                let r = m.reduce_u64(v as u64);
                *o = if v > half { m.add(r, shift) } else { r };
            }
            Ok(())
        })?;
        Ok(out)
    }
    fn begin_op(&mut self, _name: &'static str, _level: usize) {}
    fn end_op(&mut self) {}
}

/// The machine word of the CPU backend's limbs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Word {
    /// `u32` limbs ([`Cpu32Backend`]): every prime of the ring below 2^30.
    W32,
    /// `u64` limbs ([`crate::CpuBackend`]): any prime the ring takes.
    W64,
}

impl Word {
    /// The environment variable that overrides the choice (`32` or `64`).
    pub const ENV: &'static str = "TESSERA_WORD";

    /// 32 or 64.
    pub fn bits(self) -> u32 {
        match self {
            Word::W32 => 32,
            Word::W64 => 64,
        }
    }

    /// Parses `32` or `64`.
    pub fn parse(value: &str, name: &'static str) -> Result<Word, MathError> {
        match value.trim() {
            "32" => Ok(Word::W32),
            "64" => Ok(Word::W64),
            v => Err(MathError::OutOfRange {
                name,
                value: format!("{v:?}"),
                allowed: "32 or 64".into(),
            }),
        }
    }

    /// Whether 32-bit words are the faster choice on `kernel` when the ring allows them,
    /// measured with `tessera bench hmult|hrot --params w32-boot --word 32|64` in one run
    /// (docs/benchmarks.md, "32-bit words end to end"): on AVX2 and on AVX-512 (IFMA host)
    /// the 32-bit words took 0.53 to 0.76 of the 64-bit time at the same ring. The scalar
    /// kernel was not measured, so it keeps 64-bit words.
    pub fn faster_32(kernel: Kernel) -> bool {
        matches!(kernel, Kernel::Avx2 | Kernel::Avx512 | Kernel::Avx512Ifma)
    }

    /// The word for `ring`: `requested` (a command-line choice) or else `TESSERA_WORD`, refused
    /// with a typed error when 32 is asked of a ring with a prime of 30 bits or more; with
    /// neither, 32 when the ring allows it and [`Word::faster_32`] says so for the kernel in
    /// force, else 64.
    pub fn choose(requested: Option<Word>, ring: &RingContext) -> Result<Word, MathError> {
        Self::choose_with(requested, ring, || {
            Ok(Self::faster_32(tessera_math::simd::word64(
                tessera_math::simd::limit()?,
            )))
        })
    }

    /// [`Word::choose`] for the CUDA backend: with no request and no `TESSERA_WORD`, 32 when
    /// the ring allows it (a 32-bit product is one GPU instruction, a 64-bit one several, and
    /// every pass moves half the bytes), else 64.
    pub fn choose_gpu(requested: Option<Word>, ring: &RingContext) -> Result<Word, MathError> {
        Self::choose_with(requested, ring, || Ok(true))
    }

    /// The choice of [`Word::choose`], with `prefer_32` deciding when nothing is asked and the
    /// ring allows 32-bit words.
    fn choose_with(
        requested: Option<Word>,
        ring: &RingContext,
        prefer_32: impl FnOnce() -> Result<bool, MathError>,
    ) -> Result<Word, MathError> {
        let asked = match requested {
            Some(w) => Some(w),
            None => match std::env::var(Self::ENV) {
                Ok(v) if !v.trim().is_empty() => Some(Self::parse(&v, Self::ENV)?),
                _ => None,
            },
        };
        match asked {
            Some(Word::W32) => {
                tessera_math::word32::check_word_size(ring)?;
                Ok(Word::W32)
            }
            Some(Word::W64) => Ok(Word::W64),
            None => Ok(if Cpu32Backend::supports(ring) && prefer_32()? {
                Word::W32
            } else {
                Word::W64
            }),
        }
    }
}
