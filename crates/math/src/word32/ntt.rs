//! The negacyclic NTT over 32-bit words: [`NttPlan32`], the 32-bit counterpart of
//! [`crate::NttPlan`] with the same conventions (forward output in bit-reversed order, slot `k`
//! holding the evaluation at `psi^(2 brev(k) + 1)`; the inverse includes the `1/N` scaling).
//!
//! One driver over [`Lanes32`] (Cooley-Tukey forward, Gentleman-Sande inverse, Longa-Naehrig
//! twiddle order) in the narrow Harvey regime: forward values in `[0, 4q)`, inverse values in
//! `[0, 2q)` between stages, both within a 32-bit word since `q < 2^30`. Strides of at least a
//! vector run as whole-vector butterflies; the `log2 L` strides below it load two vectors,
//! [`Lanes32::split`] them into butterfly order, and [`Lanes32::merge`] them back. Stages whose
//! span fits [`BLOCK`] words run block by block so the block stays in L1. The inverse's last
//! stage folds in the `1/N` scaling (`(x + y) / N` and `(x - y) w / N`).

use super::lanes::{small_mod, Lanes32, Scalar};
use super::modulus::Modulus32;
use crate::error::{MathError, Result};
use crate::ntt::{bit_reverse, check_degree, Kernel};
use crate::primes::{check_ntt_prime, primitive_root_2n};

/// Words per L1-resident block (16 KiB of 32-bit words).
const BLOCK: usize = 4096;

/// Twiddles of one direction, `w[k] = psi^(+-brev(k))`, with Shoup quotients `ws[k]`.
struct Twiddles {
    w: Vec<u32>,
    ws: Vec<u32>,
}

/// Forward and inverse twiddles and the inverse's last-stage constants.
pub(crate) struct Tables32 {
    fwd: Twiddles,
    inv: Twiddles,
    /// `(N^-1, its Shoup quotient)` and `(w_inv[1] N^-1, its Shoup quotient)`.
    n_inv: (u32, u32),
    last_w_n_inv: (u32, u32),
}

impl Tables32 {
    fn new(m: &Modulus32, n: usize, psi: u32) -> Self {
        let log_n = n.trailing_zeros();
        let powers = |base: u32| -> Twiddles {
            let mut p = vec![1u32; n];
            for k in 1..n {
                p[k] = m.mul(p[k - 1], base);
            }
            let w: Vec<u32> = (0..n).map(|k| p[bit_reverse(k, log_n)]).collect();
            let ws = w.iter().map(|&x| m.shoup(x)).collect();
            Twiddles { w, ws }
        };
        let fwd = powers(psi);
        let inv = powers(m.inv(psi).expect("psi is a unit"));
        let n_inv = m
            .inv((n as u64 % m.value() as u64) as u32)
            .expect("N is a unit");
        let last = m.mul(inv.w[1.min(n - 1)], n_inv);
        Self {
            fwd,
            inv,
            n_inv: (n_inv, m.shoup(n_inv)),
            last_w_n_inv: (last, m.shoup(last)),
        }
    }
}

/// The lanes of `kernel`'s 32-bit code (IFMA, a 52-bit-word extension, runs the AVX-512 one).
pub(crate) fn lanes(kernel: Kernel) -> usize {
    match kernel {
        Kernel::Scalar => 1,
        Kernel::Avx2 => 8,
        Kernel::Avx512 | Kernel::Avx512Ifma => 16,
    }
}

/// The kernel that runs 32-bit code under `kernel` (IFMA adds nothing to 32-bit words).
pub(crate) fn word32(kernel: Kernel) -> Kernel {
    crate::simd::word64(kernel)
}

/// Whether `kernel` can transform degree `n` on this CPU (two vectors per transform at least).
pub fn supports(kernel: Kernel, n: usize) -> bool {
    kernel.cpu_supports() && n >= 2 * lanes(kernel)
}

/// A precomputed negacyclic NTT of degree `n` modulo an NTT-friendly prime below 2^30.
pub struct NttPlan32 {
    n: usize,
    modulus: Modulus32,
    psi: u32,
    tables: Tables32,
    kernel: Kernel,
}

impl std::fmt::Debug for NttPlan32 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NttPlan32")
            .field("n", &self.n)
            .field("q", &self.modulus.value())
            .field("psi", &self.psi)
            .field("kernel", &self.kernel)
            .finish()
    }
}

impl NttPlan32 {
    /// Plans the transform of degree `n` modulo the prime `q = 1 mod 2n` below 2^30, on the
    /// fastest kernel at or below the `TESSERA_SIMD` limit (an invalid setting is an error).
    pub fn new(n: usize, q: u64) -> Result<Self> {
        let limit = word32(crate::simd::limit()?);
        check_degree(n)?;
        let modulus = Modulus32::new(q)?;
        check_ntt_prime(q, n)?;
        let psi = primitive_root_2n(q, n)? as u32;
        let kernel = Kernel::ALL
            .into_iter()
            .rev()
            .find(|&k| k <= limit && supports(k, n))
            .unwrap_or(Kernel::Scalar);
        Ok(Self {
            n,
            modulus,
            psi,
            tables: Tables32::new(&modulus, n, psi),
            kernel,
        })
    }

    /// Ring degree.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The modulus.
    pub fn modulus(&self) -> &Modulus32 {
        &self.modulus
    }

    /// The primitive 2N-th root of unity used (the smallest, as for [`crate::NttPlan`]).
    pub fn psi(&self) -> u32 {
        self.psi
    }

    /// The kernel [`NttPlan32::forward`] and [`NttPlan32::inverse`] dispatch to.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    fn check(&self, a: &[u32], kernel: Kernel) -> Result<Kernel> {
        if a.len() != self.n {
            return Err(MathError::LengthMismatch {
                what: "NTT32 input",
                expected: self.n,
                found: a.len(),
            });
        }
        let k = word32(kernel);
        if !supports(k, self.n) {
            return Err(MathError::OutOfRange {
                name: "kernel",
                value: kernel.name().into(),
                allowed: format!(
                    "a kernel this CPU supports for 32-bit words and N = {}",
                    self.n
                ),
            });
        }
        Ok(k)
    }

    /// Forward NTT in place: coefficients (each `< q`) to evaluations in bit-reversed order.
    pub fn forward(&self, a: &mut [u32]) -> Result<()> {
        self.forward_with(self.kernel, a)
    }

    /// Inverse NTT in place: bit-reversed evaluations (each `< q`) to coefficients.
    pub fn inverse(&self, a: &mut [u32]) -> Result<()> {
        self.inverse_with(self.kernel, a)
    }

    /// Forward NTT on a chosen kernel (tests and benchmarks compare kernels with it).
    pub fn forward_with(&self, kernel: Kernel, a: &mut [u32]) -> Result<()> {
        let kernel = self.check(a, kernel)?;
        let q = self.modulus.value();
        debug_assert!(a.iter().all(|&x| x < q));
        // SAFETY: `check` verified the CPU features and the length (n >= 2L).
        unsafe {
            match kernel {
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 => super::x86::forward_avx2(a, &self.tables, q),
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512 => super::x86::forward_avx512(a, &self.tables, q),
                _ => forward::<Scalar>(a, &self.tables, q),
            }
        }
        Ok(())
    }

    /// Inverse NTT on a chosen kernel.
    pub fn inverse_with(&self, kernel: Kernel, a: &mut [u32]) -> Result<()> {
        let kernel = self.check(a, kernel)?;
        let q = self.modulus.value();
        debug_assert!(a.iter().all(|&x| x < q));
        // SAFETY: as in `forward_with`.
        unsafe {
            match kernel {
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 => super::x86::inverse_avx2(a, &self.tables, q),
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512 => super::x86::inverse_avx512(a, &self.tables, q),
                _ => inverse::<Scalar>(a, &self.tables, q),
            }
        }
        Ok(())
    }
}

/// Broadcast `q` and `2q`.
#[derive(Clone, Copy)]
struct Consts<V> {
    q: V,
    q2: V,
}

/// Shoup product by a twiddle, broadcast (`BCAST`) or per lane.
#[inline(always)]
unsafe fn twiddle<S: Lanes32, const BCAST: bool>(y: S::V, w: S::V, ws: S::V, q: S::V) -> S::V {
    if BCAST {
        S::mul_shoup_bcast(y, w, ws, q)
    } else {
        S::mul_shoup(y, w, ws, q)
    }
}

/// Cooley-Tukey butterfly: `x, y < 4q` in, `x + yw, x - yw + 2q < 4q` out.
#[inline(always)]
unsafe fn ct<S: Lanes32, const BCAST: bool>(
    x: S::V,
    y: S::V,
    w: S::V,
    ws: S::V,
    k: Consts<S::V>,
) -> (S::V, S::V) {
    let x = small_mod::<S>(x, k.q2);
    let t = twiddle::<S, BCAST>(y, w, ws, k.q);
    (S::add(x, t), S::add(S::sub(x, t), k.q2))
}

/// Gentleman-Sande butterfly: `x, y < 2q` in, `x + y, (x - y + 2q) w` (each `< 2q`) out.
#[inline(always)]
unsafe fn gs<S: Lanes32, const BCAST: bool>(
    x: S::V,
    y: S::V,
    w: S::V,
    ws: S::V,
    k: Consts<S::V>,
) -> (S::V, S::V) {
    let s = small_mod::<S>(S::add(x, y), k.q2);
    let d = twiddle::<S, BCAST>(S::add(S::sub(x, y), k.q2), w, ws, k.q);
    (s, d)
}

/// One stage of stride `t >= L` over `a[base .. base + len)`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn wide_stage<S: Lanes32, const FWD: bool>(
    a: *mut u32,
    base: usize,
    len: usize,
    t: usize,
    n: usize,
    tw: &Twiddles,
    k: Consts<S::V>,
) {
    let first = n / (2 * t) + base / (2 * t);
    for blk in 0..len / (2 * t) {
        let w = S::splat(*tw.w.get_unchecked(first + blk));
        let ws = S::splat(*tw.ws.get_unchecked(first + blk));
        let p = a.add(base + 2 * blk * t);
        let mut j = 0;
        while j < t {
            let (x, y) = (S::load(p.add(j)), S::load(p.add(j + t)));
            let (x, y) = if FWD {
                ct::<S, true>(x, y, w, ws, k)
            } else {
                gs::<S, true>(x, y, w, ws, k)
            };
            S::store(p.add(j), x);
            S::store(p.add(j + t), y);
            j += S::L;
        }
    }
}

/// One stage of stride `t < L` over `a[base .. base + len)`, two vectors at a time.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn narrow_stage<S: Lanes32, const FWD: bool>(
    a: *mut u32,
    base: usize,
    len: usize,
    t: usize,
    n: usize,
    tw: &Twiddles,
    k: Consts<S::V>,
) {
    let perm = S::perm(t);
    let mut c = base;
    while c < base + len {
        let p = a.add(c);
        let (x, y) = S::split(&perm, S::load(p), S::load(p.add(S::L)));
        let first = n / (2 * t) + c / (2 * t);
        let w = S::load_twiddles(&perm, tw.w.as_ptr().add(first));
        let ws = S::load_twiddles(&perm, tw.ws.as_ptr().add(first));
        let (x, y) = if FWD {
            ct::<S, false>(x, y, w, ws, k)
        } else {
            gs::<S, false>(x, y, w, ws, k)
        };
        let (v0, v1) = S::merge(&perm, x, y);
        S::store(p, v0);
        S::store(p.add(S::L), v1);
        c += 2 * S::L;
    }
}

/// A stage of stride `t`, wide or narrow.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn stage<S: Lanes32, const FWD: bool>(
    a: *mut u32,
    base: usize,
    len: usize,
    t: usize,
    n: usize,
    tw: &Twiddles,
    k: Consts<S::V>,
) {
    if t >= S::L {
        wide_stage::<S, FWD>(a, base, len, t, n, tw, k)
    } else {
        narrow_stage::<S, FWD>(a, base, len, t, n, tw, k)
    }
}

/// Forward negacyclic NTT in place, canonical in and out; `a.len() >= 2 L` a power of two.
#[inline(always)]
pub(crate) unsafe fn forward<S: Lanes32>(a: &mut [u32], tables: &Tables32, q: u32) {
    let n = a.len();
    let ptr = a.as_mut_ptr();
    let k = Consts {
        q: S::splat(q),
        q2: S::splat(2 * q),
    };
    let block = BLOCK.min(n);
    let mut t = n / 2;
    while 2 * t > block {
        stage::<S, true>(ptr, 0, n, t, n, &tables.fwd, k);
        t /= 2;
    }
    for base in (0..n).step_by(block) {
        let mut s = t;
        while s >= 1 {
            stage::<S, true>(ptr, base, block, s, n, &tables.fwd, k);
            s /= 2;
        }
        // Canonical output while the block is in L1: [0, 4q) -> [0, q).
        let mut j = base;
        while j < base + block {
            let v = S::load(ptr.add(j));
            S::store(ptr.add(j), small_mod::<S>(small_mod::<S>(v, k.q2), k.q));
            j += S::L;
        }
    }
}

/// Inverse negacyclic NTT in place (bit-reversed in, natural out) with the `1/N` scaling;
/// canonical in and out; `a.len() >= 2 L` a power of two.
#[inline(always)]
pub(crate) unsafe fn inverse<S: Lanes32>(a: &mut [u32], tables: &Tables32, q: u32) {
    let n = a.len();
    let ptr = a.as_mut_ptr();
    let k = Consts {
        q: S::splat(q),
        q2: S::splat(2 * q),
    };
    let half = n / 2;
    let block = BLOCK.min(n);
    // Strides up to block / 2 (except the last stage) block by block, then whole-limb sweeps.
    let mut t_next = 1;
    for base in (0..n).step_by(block) {
        let mut t = 1;
        while 2 * t <= block && t < half {
            stage::<S, false>(ptr, base, block, t, n, &tables.inv, k);
            t *= 2;
        }
        t_next = t;
    }
    let mut t = t_next;
    while t < half {
        stage::<S, false>(ptr, 0, n, t, n, &tables.inv, k);
        t *= 2;
    }
    // Last stage (stride N/2, at least L): x' = (x + y) / N, y' = (x - y) w / N, canonical.
    let (ni, nis) = (S::splat(tables.n_inv.0), S::splat(tables.n_inv.1));
    let (lw, lws) = (
        S::splat(tables.last_w_n_inv.0),
        S::splat(tables.last_w_n_inv.1),
    );
    let mut j = 0;
    while j < half {
        let (x, y) = (S::load(ptr.add(j)), S::load(ptr.add(j + half)));
        let s = S::mul_shoup_bcast(S::add(x, y), ni, nis, k.q);
        let d = S::mul_shoup_bcast(S::add(S::sub(x, y), k.q2), lw, lws, k.q);
        S::store(ptr.add(j), small_mod::<S>(s, k.q));
        S::store(ptr.add(j + half), small_mod::<S>(d, k.q));
        j += S::L;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::word32::generate_ntt_primes32;
    use proptest::prelude::*;

    fn random_poly(n: usize, q: u32, seed: u64) -> Vec<u32> {
        crate::testutil::random_residues(n, q as u64, seed)
            .into_iter()
            .map(|x| x as u32)
            .collect()
    }

    /// Slow O(N^2) reference: slot k is `sum_j a_j psi^((2 brev(k) + 1) j)`.
    fn reference_forward(a: &[u32], q: u32, psi: u32) -> Vec<u32> {
        let n = a.len();
        let log_n = n.trailing_zeros();
        let qq = q as u128;
        let pow = |b: u128, mut e: u64| {
            let (mut r, mut b) = (1u128, b % qq);
            while e > 0 {
                if e & 1 == 1 {
                    r = r * b % qq;
                }
                b = b * b % qq;
                e >>= 1;
            }
            r
        };
        (0..n)
            .map(|k| {
                let root = pow(psi as u128, 2 * bit_reverse(k, log_n) as u64 + 1);
                let mut acc = 0u128;
                let mut x = 1u128;
                for &c in a {
                    acc = (acc + c as u128 * x) % qq;
                    x = x * root % qq;
                }
                acc as u32
            })
            .collect()
    }

    #[test]
    fn scalar_matches_the_quadratic_reference() {
        for (log_n, bits) in [(1u32, 20u32), (3, 17), (6, 30), (10, 28), (11, 30)] {
            let n = 1usize << log_n;
            for q in generate_ntt_primes32(bits, n, 2, &[]).unwrap() {
                let plan = NttPlan32::new(n, q as u64).unwrap();
                for seed in [1u64, 7] {
                    let a = if seed == 7 {
                        vec![q - 1; n]
                    } else {
                        random_poly(n, q, seed ^ n as u64)
                    };
                    let mut f = a.clone();
                    plan.forward_with(Kernel::Scalar, &mut f).unwrap();
                    assert_eq!(f, reference_forward(&a, q, plan.psi()), "N = {n}, q = {q}");
                    plan.inverse_with(Kernel::Scalar, &mut f).unwrap();
                    assert_eq!(f, a, "round trip N = {n}, q = {q}");
                }
            }
        }
    }

    #[test]
    fn agrees_with_the_64_bit_plan() {
        // Same prime, same root, same slot order: the two word sizes give the same residues.
        let n = 1 << 12;
        let q = generate_ntt_primes32(29, n, 1, &[]).unwrap()[0];
        let (p32, p64) = (
            NttPlan32::new(n, q as u64).unwrap(),
            crate::NttPlan::new(n, q as u64).unwrap(),
        );
        let a = random_poly(n, q, 3);
        let mut a32 = a.clone();
        let mut a64: Vec<u64> = a.iter().map(|&x| x as u64).collect();
        p32.forward(&mut a32).unwrap();
        p64.forward(&mut a64).unwrap();
        assert!(a32.iter().zip(&a64).all(|(&x, &y)| x as u64 == y));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        /// Every SIMD kernel equals the scalar one bit for bit, forward, inverse, round trip.
        #[test]
        fn simd_kernels_equal_scalar(log_n in 1u32..=17, bits in prop::sample::select(vec![20u32, 25, 28, 29, 30]), seed in any::<u64>(), extreme in any::<bool>()) {
            let n = 1usize << log_n;
            let Ok(qs) = generate_ntt_primes32(bits, n, 1, &[]) else { return Ok(()) };
            let q = qs[0];
            let plan = NttPlan32::new(n, q as u64).unwrap();
            let a = if extreme { vec![q - 1; n] } else { random_poly(n, q, seed) };
            let mut fs = a.clone();
            plan.forward_with(Kernel::Scalar, &mut fs).unwrap();
            let mut is = a.clone();
            plan.inverse_with(Kernel::Scalar, &mut is).unwrap();
            for k in crate::simd::kernels_for_tests("NTT32").into_iter().filter(|&k| supports(word32(k), n)) {
                let mut f = a.clone();
                plan.forward_with(k, &mut f).unwrap();
                prop_assert_eq!(&f, &fs, "forward kernel {:?}", k);
                let mut i = a.clone();
                plan.inverse_with(k, &mut i).unwrap();
                prop_assert_eq!(&i, &is, "inverse kernel {:?}", k);
                plan.inverse_with(k, &mut f).unwrap();
                prop_assert_eq!(&f, &a, "round trip kernel {:?}", k);
            }
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(
            NttPlan32::new(1000, 12289),
            Err(MathError::InvalidDegree { .. })
        ));
        assert!(matches!(
            NttPlan32::new(1024, 12289 * 3),
            Err(MathError::NotPrime { .. })
        ));
        assert!(matches!(
            NttPlan32::new(4096, 12289),
            Err(MathError::NotNttFriendly { .. })
        ));
        // A 31-bit NTT prime is a 64-bit-word prime only.
        let q31 = crate::primes::generate_ntt_primes(31, 1024, 1, &[]).unwrap()[0];
        assert!(matches!(
            NttPlan32::new(1024, q31),
            Err(MathError::ModulusOutOfRange { .. })
        ));
        let plan = NttPlan32::new(1024, 12289).unwrap();
        let mut short = vec![0u32; 512];
        assert!(matches!(
            plan.forward(&mut short),
            Err(MathError::LengthMismatch { .. })
        ));
        // A vector kernel on a degree below two vectors is refused, not run.
        let tiny = NttPlan32::new(4, 17).unwrap();
        assert_eq!(tiny.kernel(), Kernel::Scalar);
        let mut v = vec![1u32; 4];
        if Kernel::Avx2.cpu_supports() {
            assert!(tiny.forward_with(Kernel::Avx2, &mut v).is_err());
        }
    }
}
