//! Negacyclic number-theoretic transforms over `Z_q[X]/(X^N + 1)`.
//!
//! * [`NttPlan`]: the radix-2 transform with the 2N-th-root twisting merged into the butterflies
//!   and lazy (Harvey) reduction, with runtime-dispatched kernels ([`Kernel`]). Forward output is
//!   in **bit-reversed order**: slot `k` holds the evaluation at `psi^(2*brev(k)+1)`.
//! * [`four_step::FourStepNtt`]: the four-step / hybrid `N = N1 x N2` form the accelerators use
//!   (reed.md Algorithm 1), with optional on-the-fly twisting factors (ark.md section V-C).

pub mod bound;
pub mod four_step;
mod lanes;
mod tables;
#[cfg(target_arch = "x86_64")]
mod x86;
#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{shoup64_256, shoup64_512};

pub use tables::bit_reverse;

use crate::error::{MathError, Result};
use crate::modular::Modulus;
use crate::primes::{check_ntt_prime, primitive_root_2n};
use tables::Tables;

/// Smallest supported ring degree.
pub const MIN_DEGREE: usize = 2;
/// Largest supported ring degree.
pub const MAX_DEGREE: usize = 1 << 17;

/// Checks that `n` is a power of two in `[MIN_DEGREE, MAX_DEGREE]`.
pub fn check_degree(n: usize) -> Result<()> {
    if !n.is_power_of_two() || !(MIN_DEGREE..=MAX_DEGREE).contains(&n) {
        return Err(MathError::InvalidDegree {
            n,
            min: MIN_DEGREE,
            max: MAX_DEGREE,
        });
    }
    Ok(())
}

/// An NTT implementation. All kernels produce bit-identical results. Ordered slowest first,
/// the order of [`Kernel::ALL`] (a `TESSERA_SIMD` setting is a ceiling in this order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kernel {
    /// Portable `u64` code.
    Scalar,
    /// 4 lanes, AVX2.
    Avx2,
    /// 8 lanes, AVX-512F/DQ with 64-bit Shoup products (any modulus up to 62 bits).
    Avx512,
    /// 8 lanes with AVX-512 IFMA: 52-bit Shoup products for moduli below 2^50; above, 64-bit
    /// Shoup products whose quotient comes from IFMA's fused 52-bit high products
    /// (`x86::shoup64_ifma`, seven vector operations against AVX-512F's eleven).
    Avx512Ifma,
}

impl Kernel {
    /// Every kernel, fastest last.
    pub const ALL: [Kernel; 4] = [
        Kernel::Scalar,
        Kernel::Avx2,
        Kernel::Avx512,
        Kernel::Avx512Ifma,
    ];

    /// Short lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512 => "avx512",
            Kernel::Avx512Ifma => "avx512-ifma",
        }
    }

    fn lanes(self) -> usize {
        match self {
            Kernel::Scalar => 1,
            Kernel::Avx2 => 4,
            Kernel::Avx512 | Kernel::Avx512Ifma => 8,
        }
    }

    /// What the kernel computes the NTT of a prime `q` with, as [`NttPlan`] dispatches it:
    /// `64-bit words`, `doubles` (AVX2 and AVX-512 below 2^50 with FMA: residues as exact
    /// doubles), `52-bit words` (IFMA below 2^50) or `64-bit words, IFMA quotients` (IFMA
    /// above).
    pub fn arithmetic(self, q: u64) -> &'static str {
        match self {
            Kernel::Avx2 | Kernel::Avx512 if q < 1 << 50 && crate::simd::avx2_fma() => "doubles",
            Kernel::Avx512Ifma if q < 1 << 50 => "52-bit words",
            Kernel::Avx512Ifma => "64-bit words, IFMA quotients",
            _ => "64-bit words",
        }
    }

    /// Whether this CPU has the instructions the kernel needs.
    pub fn cpu_supports(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                Kernel::Scalar => true,
                Kernel::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
                Kernel::Avx512 => {
                    std::arch::is_x86_feature_detected!("avx512f")
                        && std::arch::is_x86_feature_detected!("avx512dq")
                }
                Kernel::Avx512Ifma => {
                    Kernel::Avx512.cpu_supports()
                        && std::arch::is_x86_feature_detected!("avx512ifma")
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Kernel::Scalar
        }
    }

    /// Whether the kernel can transform degree `n` modulo `q` on this CPU.
    pub fn supports(self, _q: u64, n: usize) -> bool {
        // Every kernel takes any NTT prime a plan accepts (IFMA switches to 64-bit words from
        // 2^50); the vector kernels need at least two vectors per half-limb (see
        // `lanes::inverse`).
        self.cpu_supports() && (self == Kernel::Scalar || n >= 4 * self.lanes())
    }

    /// The fastest kernel that supports `(q, n)` here, at or below the `TESSERA_SIMD` limit
    /// ([`crate::simd::active`]).
    pub fn best(q: u64, n: usize) -> Kernel {
        Self::best_up_to(crate::simd::active(), q, n)
    }

    /// The fastest kernel at or below `limit` that supports `(q, n)` here. Above 2^50 the
    /// IFMA kernel runs 64-bit words, and it is chosen only where its Shoup quotient measured
    /// faster than AVX-512F's ([`crate::simd::word64_products`]).
    pub fn best_up_to(limit: Kernel, q: u64, n: usize) -> Kernel {
        let k = *Kernel::ALL
            .iter()
            .rev()
            .find(|k| **k <= limit && k.supports(q, n))
            .unwrap_or(&Kernel::Scalar);
        if q < 1 << 50 {
            k
        } else {
            crate::simd::word64_products(k)
        }
    }
}

/// The BConv multiply-accumulate row `out[k] = sum_i ys[i][k] * c[i] mod p` (see
/// `lanes::mac_shoup`) on `kernel`, or when `kernel` is `None` on the `TESSERA_SIMD` limit.
/// The IFMA kernel keeps 64-bit words here and takes its Shoup quotients from 52-bit high
/// products (`x86::shoup64_ifma`).
/// Requires `c[i] < p < 2^62`, `cs[i] = floor(c[i] * 2^64 / p)`, and each `ys[i]` at least as
/// long as `out`.
pub fn mac_shoup_row(
    kernel: Option<Kernel>,
    ys: &[&[u64]],
    c: &[u64],
    cs: &[u64],
    p: u64,
    out: &mut [u64],
) -> Result<()> {
    if p >= 1 << 62 || c.len() != ys.len() || cs.len() != ys.len() {
        return Err(MathError::OutOfRange {
            name: "BConv row",
            value: format!("p = {p}, {} inputs, {} constants", ys.len(), c.len()),
            allowed: "p < 2^62 and one constant pair per input".into(),
        });
    }
    if ys.iter().any(|y| y.len() < out.len()) {
        return Err(MathError::LengthMismatch {
            what: "BConv row input",
            expected: out.len(),
            found: ys.iter().map(|y| y.len()).min().unwrap_or(0),
        });
    }
    let kernel = kernel.unwrap_or_else(crate::simd::active);
    if !kernel.cpu_supports() {
        return Err(MathError::Unsupported(format!(
            "kernel {} for BConv rows on this CPU",
            kernel.name()
        )));
    }
    // SAFETY: the kernel's features were checked above; lengths and bounds too.
    unsafe {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512Ifma => x86::mac_shoup_ifma64(ys, c, cs, p, out),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => x86::mac_shoup_avx512(ys, c, cs, p, out),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 if ys.len() >= AVX2_COLUMN_TERMS => {
                // Lazy 128-bit column sums (the element-wise products' scheme): fewer 32-bit
                // multiplies than AVX2's emulated Shoup products; the tail words run those.
                let rc = crate::pointwise::ReduceConsts::new(&Modulus::new(p)?);
                let done = crate::pointwise::avx2::mac_const(ys, c, out, &rc);
                let tail: Vec<&[u64]> = ys.iter().map(|y| &y[done..out.len()]).collect();
                x86::mac_shoup_avx2(&tail, c, cs, p, &mut out[done..])
            }
            // Fewer terms: the emulated Shoup products, 2.7x the scalar rate for one term on
            // Zen 5 (0.52 against 1.41 ns a word, L1-resident).
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => x86::mac_shoup_avx2(ys, c, cs, p, out),
            _ => lanes::mac_shoup::<lanes::Scalar>(ys, c, cs, p, out),
        }
    }
    Ok(())
}

/// Terms from which an AVX2 BConv row sums lazily in 128-bit columns, one reduction per row,
/// instead of reducing each Shoup product: a column term costs about 17 AVX2 operations and the
/// reduction about 56, against about 38 per Shoup term (operation counts of the two schemes).
const AVX2_COLUMN_TERMS: usize = 3;

/// A precomputed negacyclic NTT for one prime and one degree.
pub struct NttPlan {
    n: usize,
    modulus: Modulus,
    psi: u64,
    tables: Tables,
    /// 52-bit Shoup tables for the IFMA kernel, present when `q < 2^50`.
    tables52: Option<Tables>,
    /// Double-precision tables for the AVX2 and AVX-512 kernels' signed double lanes, present
    /// when `q < 2^50` and the CPU has FMA (`x86::Avx2F64`, `x86::Avx512F64`).
    tables_f64: Option<Tables>,
    kernel: Kernel,
}

impl std::fmt::Debug for NttPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NttPlan")
            .field("n", &self.n)
            .field("q", &self.modulus.value())
            .field("psi", &self.psi)
            .field("kernel", &self.kernel)
            .finish()
    }
}

impl NttPlan {
    /// Plans the transform of degree `n` modulo the NTT-friendly prime `q`, using the fastest
    /// kernel this CPU supports at or below the `TESSERA_SIMD` limit (an invalid setting is
    /// an error here, see [`crate::simd`]).
    pub fn new(n: usize, q: u64) -> Result<Self> {
        let limit = crate::simd::limit()?;
        check_degree(n)?;
        check_ntt_prime(q, n)?;
        let modulus = Modulus::new(q)?;
        let psi = primitive_root_2n(q, n)?;
        let tables = Tables::new(&modulus, n, psi, 64);
        let tables52 = (q < (1 << 50)).then(|| Tables::new(&modulus, n, psi, 52));
        let tables_f64 =
            (q < (1 << 50) && crate::simd::avx2_fma()).then(|| Tables::new_f64(&modulus, n, psi));
        Ok(Self {
            n,
            modulus,
            psi,
            tables,
            tables52,
            tables_f64,
            kernel: Kernel::best_up_to(limit, q, n),
        })
    }

    /// Ring degree.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The modulus.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// The primitive 2N-th root of unity used.
    pub fn psi(&self) -> u64 {
        self.psi
    }

    /// The kernel [`NttPlan::forward`] and [`NttPlan::inverse`] dispatch to.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// `psi^(2*brev(k)+1)`: the point that slot `k` of the forward output evaluates at.
    pub fn slot_root_exponent(&self, k: usize) -> usize {
        2 * bit_reverse(k, self.n.trailing_zeros()) + 1
    }

    fn check(&self, a: &[u64], kernel: Kernel) -> Result<()> {
        if a.len() != self.n {
            return Err(MathError::LengthMismatch {
                what: "NTT input",
                expected: self.n,
                found: a.len(),
            });
        }
        if !kernel.supports(self.modulus.value(), self.n) {
            return Err(MathError::OutOfRange {
                name: "kernel",
                value: kernel.name().into(),
                allowed: format!(
                    "a kernel this CPU supports for q = {} and N = {}",
                    self.modulus.value(),
                    self.n
                ),
            });
        }
        Ok(())
    }

    /// Forward NTT in place: coefficients (each `< q`) to evaluations in bit-reversed order.
    pub fn forward(&self, a: &mut [u64]) -> Result<()> {
        self.forward_with(self.kernel, a)
    }

    /// Inverse NTT in place: bit-reversed evaluations (each `< q`) to coefficients.
    pub fn inverse(&self, a: &mut [u64]) -> Result<()> {
        self.inverse_with(self.kernel, a)
    }

    /// Forward NTT with a chosen kernel (for testing and benchmarking kernels against each other).
    pub fn forward_with(&self, kernel: Kernel, a: &mut [u64]) -> Result<()> {
        self.check(a, kernel)?;
        let q = self.modulus.value();
        debug_assert!(a.iter().all(|&x| x < q));
        // SAFETY: `check` verified the CPU features and the length the kernel needs.
        unsafe {
            match kernel {
                Kernel::Scalar => lanes::forward::<lanes::Scalar>(a, &self.tables, q),
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 => match &self.tables_f64 {
                    Some(t) => x86::forward_avx2_fma(a, t, q),
                    None => x86::forward_avx2(a, &self.tables, q),
                },
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512 => match &self.tables_f64 {
                    Some(t) => x86::forward_avx512_f64(a, t, q),
                    None => x86::forward_avx512(a, &self.tables, q),
                },
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512Ifma => match &self.tables52 {
                    Some(t) => x86::forward_ifma(a, t, q),
                    None => x86::forward_ifma64(a, &self.tables, q),
                },
                #[cfg(not(target_arch = "x86_64"))]
                _ => unreachable!(),
            }
        }
        Ok(())
    }

    /// Inverse NTT with a chosen kernel.
    pub fn inverse_with(&self, kernel: Kernel, a: &mut [u64]) -> Result<()> {
        self.inverse_from(kernel, a, None)
    }

    /// Inverse NTT out of place: `out` becomes the inverse transform of `src` (each `< q`),
    /// bit for bit what [`NttPlan::inverse`] makes of a copy of `src`. The vector kernels read
    /// `src` in their first pass instead of copying it first, which is how a polynomial that
    /// shares its buffer (copy-on-write) is transformed.
    pub fn inverse_to(&self, src: &[u64], out: &mut [u64]) -> Result<()> {
        self.inverse_to_with(self.kernel, src, out)
    }

    /// [`NttPlan::inverse_to`] with a chosen kernel.
    pub fn inverse_to_with(&self, kernel: Kernel, src: &[u64], out: &mut [u64]) -> Result<()> {
        if src.len() != out.len() {
            return Err(MathError::LengthMismatch {
                what: "inverse NTT source",
                expected: out.len(),
                found: src.len(),
            });
        }
        self.inverse_from(kernel, out, Some(src))
    }

    fn inverse_from(&self, kernel: Kernel, a: &mut [u64], src: Option<&[u64]>) -> Result<()> {
        self.check(a, kernel)?;
        let q = self.modulus.value();
        debug_assert!(src.unwrap_or(a).iter().all(|&x| x < q));
        // SAFETY: as in `forward_with`; `src`, when given, has `a.len()` words.
        unsafe {
            match kernel {
                Kernel::Scalar => lanes::inverse::<lanes::Scalar>(a, src, &self.tables, q),
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 => match &self.tables_f64 {
                    Some(t) => x86::inverse_avx2_fma(a, src, t, q),
                    None => x86::inverse_avx2(a, src, &self.tables, q),
                },
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512 => match &self.tables_f64 {
                    Some(t) => x86::inverse_avx512_f64(a, src, t, q),
                    None => x86::inverse_avx512(a, src, &self.tables, q),
                },
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512Ifma => match &self.tables52 {
                    Some(t) => x86::inverse_ifma(a, src, t, q),
                    None => x86::inverse_ifma64(a, src, &self.tables, q),
                },
                #[cfg(not(target_arch = "x86_64"))]
                _ => unreachable!(),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_shoup_row_kernels_agree_with_u128_reference() {
        let mut rng = crate::testutil::XorShift::new(0x5eed);
        for bits in [30u32, 50, 60, 62] {
            let p = crate::primes::generate_ntt_primes(bits, 64, 1, &[]).unwrap()[0];
            let m = Modulus::new(p).unwrap();
            for (terms, n) in [(1usize, 8usize), (6, 64), (17, 37), (40, 5)] {
                let ys: Vec<Vec<u64>> = (0..terms)
                    .map(|i| {
                        (0..n)
                            .map(|k| match (i + k) % 5 {
                                0 => u64::MAX >> 2, // any word below 2^62 is a valid input
                                1 => 0,
                                _ => rng.next_u64() >> 2,
                            })
                            .collect()
                    })
                    .collect();
                let yr: Vec<&[u64]> = ys.iter().map(|v| v.as_slice()).collect();
                let c: Vec<u64> = (0..terms)
                    .map(|i| if i == 0 { p - 1 } else { rng.next_u64() % p })
                    .collect();
                let cs: Vec<u64> = c.iter().map(|&x| m.shoup(x)).collect();
                let want: Vec<u64> = (0..n)
                    .map(|k| {
                        let s: u128 = (0..terms)
                            .map(|i| (ys[i][k] as u128 * c[i] as u128) % p as u128)
                            .sum();
                        (s % p as u128) as u64
                    })
                    .collect();
                for kernel in crate::simd::kernels_for_tests("mac_shoup_row") {
                    let mut out = vec![0u64; n];
                    mac_shoup_row(Some(kernel), &yr, &c, &cs, p, &mut out).unwrap();
                    assert_eq!(
                        out,
                        want,
                        "{} bits {bits} terms {terms} n {n}",
                        kernel.name()
                    );
                }
            }
        }
        let mut out = vec![0u64; 4];
        assert!(mac_shoup_row(None, &[&[1u64; 4][..]], &[1], &[1], 1 << 62, &mut out).is_err());
        assert!(mac_shoup_row(None, &[&[1u64; 3][..]], &[1], &[1], 97, &mut out).is_err());
    }
    use crate::primes::generate_ntt_primes;
    use proptest::prelude::*;

    /// Schoolbook negacyclic product mod q.
    fn schoolbook(a: &[u64], b: &[u64], m: &Modulus) -> Vec<u64> {
        let n = a.len();
        let mut c = vec![0u64; n];
        for (i, &ai) in a.iter().enumerate() {
            for (j, &bj) in b.iter().enumerate() {
                let p = m.mul(ai, bj);
                let k = i + j;
                if k < n {
                    c[k] = m.add(c[k], p);
                } else {
                    c[k - n] = m.sub(c[k - n], p);
                }
            }
        }
        c
    }

    /// Direct evaluation of a(psi^e) mod q.
    fn evaluate(a: &[u64], point: u64, m: &Modulus) -> u64 {
        a.iter()
            .rev()
            .fold(0, |acc, &c| m.add(m.mul(acc, point), c))
    }

    fn random_poly(n: usize, q: u64, seed: u64) -> Vec<u64> {
        crate::testutil::random_residues(n, q, seed)
    }

    #[test]
    fn forward_is_evaluation_at_odd_powers_in_bit_reversed_order() {
        for (bits, n) in [(20u32, 16usize), (40, 64), (60, 256)] {
            let q = generate_ntt_primes(bits, n, 1, &[]).unwrap()[0];
            let plan = NttPlan::new(n, q).unwrap();
            let m = plan.modulus();
            let a = random_poly(n, q, 7);
            let mut f = a.clone();
            plan.forward(&mut f).unwrap();
            for (k, &fk) in f.iter().enumerate() {
                let pt = m.pow(plan.psi(), plan.slot_root_exponent(k) as u64);
                assert_eq!(fk, evaluate(&a, pt, m));
            }
        }
    }

    #[test]
    fn ntt_product_matches_schoolbook_for_many_primes_and_sizes() {
        let mut seed = 1;
        for log_n in 1..=10u32 {
            let n = 1usize << log_n;
            let min_bits = log_n + 3;
            for bits in [min_bits.max(17), 30, 36, 45, 49, 50, 52, 55, 59, 60, 61, 62] {
                let Ok(qs) = generate_ntt_primes(bits, n, 2, &[]) else {
                    continue;
                };
                for q in qs {
                    let plan = NttPlan::new(n, q).unwrap();
                    let m = plan.modulus();
                    seed += 1;
                    let a = random_poly(n, q, seed);
                    let b = random_poly(n, q, seed * 31);
                    let expect = schoolbook(&a, &b, m);
                    for k in Kernel::ALL.into_iter().filter(|k| k.supports(q, n)) {
                        let (mut fa, mut fb) = (a.clone(), b.clone());
                        plan.forward_with(k, &mut fa).unwrap();
                        plan.forward_with(k, &mut fb).unwrap();
                        let mut c: Vec<u64> =
                            fa.iter().zip(&fb).map(|(&x, &y)| m.mul(x, y)).collect();
                        plan.inverse_with(k, &mut c).unwrap();
                        assert_eq!(c, expect, "kernel {:?}, N = {n}, q = {q}", k);
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Every SIMD kernel is bit-identical to the scalar kernel, forward and inverse.
        #[test]
        fn simd_kernels_equal_scalar(log_n in 5u32..=16, bits in prop::sample::select(vec![32u32, 45, 49, 50, 54, 60, 61, 62]), seed in any::<u64>()) {
            let n = 1usize << log_n;
            let q = generate_ntt_primes(bits, n, 1, &[]).unwrap()[0];
            let plan = NttPlan::new(n, q).unwrap();
            let a = random_poly(n, q, seed);
            let mut fs = a.clone();
            plan.forward_with(Kernel::Scalar, &mut fs).unwrap();
            let mut is = a.clone();
            plan.inverse_with(Kernel::Scalar, &mut is).unwrap();
            // Out of place, into a destination that held other values.
            let mut to = fs.clone();
            plan.inverse_to_with(Kernel::Scalar, &a, &mut to).unwrap();
            prop_assert_eq!(&to, &is, "scalar inverse out of place");
            // Kernels the CPU lacks are reported (IFMA runs 52-bit words below 2^50 and 64-bit
            // words with its quotients above: both are checked here).
            for k in crate::simd::kernels_for_tests("NTT").into_iter().filter(|k| k.supports(q, n)) {
                let mut f = a.clone();
                plan.forward_with(k, &mut f).unwrap();
                prop_assert_eq!(&f, &fs, "forward kernel {:?}", k);
                let mut i = a.clone();
                plan.inverse_with(k, &mut i).unwrap();
                prop_assert_eq!(&i, &is, "inverse kernel {:?}", k);
                let mut to = fs.clone();
                plan.inverse_to_with(k, &a, &mut to).unwrap();
                prop_assert_eq!(&to, &is, "inverse out of place, kernel {:?}", k);
                plan.inverse_with(k, &mut f).unwrap();
                prop_assert_eq!(&f, &a, "round trip kernel {:?}", k);
            }
        }

        /// Extreme inputs (all q-1) stress the lazy-reduction bounds.
        #[test]
        fn extreme_inputs(log_n in 5u32..=12, bits in prop::sample::select(vec![45u32, 49, 50, 55, 59, 60, 61, 62])) {
            let n = 1usize << log_n;
            let q = generate_ntt_primes(bits, n, 1, &[]).unwrap()[0];
            let plan = NttPlan::new(n, q).unwrap();
            let a = vec![q - 1; n];
            let mut fs = a.clone();
            plan.forward_with(Kernel::Scalar, &mut fs).unwrap();
            for k in Kernel::ALL.into_iter().filter(|k| k.supports(q, n)) {
                let mut f = a.clone();
                plan.forward_with(k, &mut f).unwrap();
                prop_assert_eq!(&f, &fs);
                plan.inverse_with(k, &mut f).unwrap();
                prop_assert_eq!(&f, &a);
            }
        }
    }

    /// Where the FMA product takes the AVX2 kernel's primes below 2^50, its integer product (what
    /// a CPU without FMA, or `TESSERA_AVX2_FMA=0`, runs) is checked here against the scalar
    /// kernel directly.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_integer_ntt_equals_scalar_for_small_primes() {
        if !Kernel::Avx2.cpu_supports() {
            eprintln!("SKIPPED avx2_integer_ntt_equals_scalar_for_small_primes: no AVX2");
            return;
        }
        for (bits, log_n) in [(30u32, 5u32), (49, 10), (50, 16)] {
            let n = 1usize << log_n;
            let q = generate_ntt_primes(bits, n, 1, &[]).unwrap()[0];
            let plan = NttPlan::new(n, q).unwrap();
            let a = random_poly(n, q, 7);
            let (mut want, mut got) = (a.clone(), a.clone());
            plan.forward_with(Kernel::Scalar, &mut want).unwrap();
            // SAFETY: AVX2 checked above; `n >= 16` words.
            unsafe { x86::forward_avx2(&mut got, &plan.tables, q) };
            assert_eq!(got, want, "forward, {bits} bits, N = {n}");
            plan.inverse_with(Kernel::Scalar, &mut want).unwrap();
            unsafe { x86::inverse_avx2(&mut got, None, &plan.tables, q) };
            assert_eq!(got, want, "inverse, {bits} bits, N = {n}");
        }
    }

    /// The signed double-precision lane operations at their bounds (`x86::Avx2F64`, and
    /// `x86::Avx512F64` where the CPU has AVX-512, which must give the same bits):
    /// NTT primes up to the largest 50-bit one, signed inputs up to `4q - 1` in magnitude and
    /// twiddles up to `q - 1`, against `i128` arithmetic. The product must be congruent and
    /// within `1.5q`, the reduction congruent and within `q/2 + 1`, the export canonical.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_signed_lanes_are_exact_at_their_bounds() {
        if !crate::simd::avx2_fma() {
            eprintln!("SKIPPED avx2_signed_lanes_are_exact_at_their_bounds: no AVX2+FMA here");
            return;
        }
        let mut rng = crate::testutil::XorShift::new(0xf3a);
        for bits in [20u32, 30, 45, 49, 50] {
            let q = generate_ntt_primes(bits, 1 << 16, 1, &[]).unwrap()[0];
            let qi = q as i64;
            let mut ys: Vec<i64> = vec![0, 1, -1, qi - 1, qi, -qi, 2 * qi - 1, -3 * qi];
            ys.extend([
                4 * qi - 2,
                4 * qi - 1,
                -(4 * qi - 1),
                qi / 2,
                -(qi / 2),
                7,
                -7,
                0,
            ]);
            let mut ws = vec![0, 1, q - 1, q - 2, q / 2, q - 1, q - 1, q - 1];
            ws.extend([q - 1, q - 1, q - 1, 1, q - 1, 0, q / 3, 2]);
            for _ in 0..4096 {
                ys.push((rng.next_u64() % (8 * q)) as i64 - (4 * qi - 1));
                ws.push(rng.next_u64() % q);
            }
            let m = |v: i128| v.rem_euclid(q as i128);
            for (y4, w4) in ys.chunks(4).zip(ws.chunks(4)) {
                let yd: Vec<u64> = y4.iter().map(|&y| (y as f64).to_bits()).collect();
                let wd: Vec<u64> = w4.iter().map(|&w| (w as f64).to_bits()).collect();
                let wq: Vec<u64> = w4
                    .iter()
                    .map(|&w| (w as f64 / q as f64).to_bits())
                    .collect();
                let (mut prod, mut red, mut exp) = ([0u64; 4], [0u64; 4], [0u64; 4]);
                // SAFETY: AVX2 and FMA were detected above; all slices hold four words.
                unsafe {
                    use core::arch::x86_64::*;
                    #[target_feature(enable = "avx2,fma")]
                    unsafe fn lanes(
                        y: &[u64],
                        w: &[u64],
                        ws: &[u64],
                        q: u64,
                        out: [&mut [u64; 4]; 3],
                    ) {
                        let ld = |p: &[u64]| _mm256_loadu_si256(p.as_ptr() as *const __m256i);
                        let st = |p: &mut [u64; 4], v| {
                            _mm256_storeu_si256(p.as_mut_ptr() as *mut __m256i, v)
                        };
                        let qv = _mm256_set1_epi64x(q as i64);
                        let [p, r, e] = out;
                        st(p, x86::mul_signed_256(ld(y), ld(w), ld(ws), qv));
                        st(r, x86::reduce_signed_256(ld(y), qv));
                        st(e, x86::export_canonical_256(ld(y), qv));
                    }
                    lanes(&yd, &wd, &wq, q, [&mut prod, &mut red, &mut exp]);
                }
                #[cfg(target_arch = "x86_64")]
                if Kernel::Avx512.cpu_supports() && y4.len() == 4 {
                    // The 8-lane version: the same operations, so the same bits (two copies
                    // of the four inputs).
                    let dup = |v: &[u64]| [v, v].concat();
                    let (mut p8, mut r8, mut e8) = ([0u64; 8], [0u64; 8], [0u64; 8]);
                    // SAFETY: AVX-512F/DQ detected; every slice holds eight words.
                    unsafe {
                        use core::arch::x86_64::*;
                        #[target_feature(enable = "avx512f,avx512dq")]
                        unsafe fn lanes8(
                            y: &[u64],
                            w: &[u64],
                            ws: &[u64],
                            q: u64,
                            out: [&mut [u64; 8]; 3],
                        ) {
                            let ld = |p: &[u64]| _mm512_loadu_si512(p.as_ptr() as *const __m512i);
                            let st = |p: &mut [u64; 8], v| {
                                _mm512_storeu_si512(p.as_mut_ptr() as *mut __m512i, v)
                            };
                            let qv = _mm512_set1_epi64(q as i64);
                            let [p, r, e] = out;
                            st(p, x86::mul_signed_512(ld(y), ld(w), ld(ws), qv));
                            st(r, x86::reduce_signed_512(ld(y), qv));
                            st(e, x86::export_canonical_512(ld(y), qv));
                        }
                        lanes8(
                            &dup(&yd),
                            &dup(&wd),
                            &dup(&wq),
                            q,
                            [&mut p8, &mut r8, &mut e8],
                        );
                    }
                    assert_eq!(&p8[..4], &prod[..], "q {q}: 8-lane product");
                    assert_eq!(&r8[4..], &red[..], "q {q}: 8-lane reduction");
                    assert_eq!(&e8[..4], &exp[..], "q {q}: 8-lane export");
                }
                for k in 0..4 {
                    let (y, w) = (y4[k] as i128, w4[k] as i128);
                    let p = f64::from_bits(prod[k]);
                    let r = f64::from_bits(red[k]);
                    assert!(p.abs() < 1.5 * q as f64, "q {q} y {y} w {w}: product {p}");
                    assert_eq!(p.fract(), 0.0, "q {q} y {y} w {w}: product {p}");
                    assert_eq!(m(p as i128), m(y * w), "q {q} y {y} w {w}: product");
                    assert!(r.abs() <= (q / 2 + 1) as f64, "q {q} y {y}: reduced {r}");
                    assert_eq!(m(r as i128), m(y), "q {q} y {y}: reduced");
                    assert_eq!(exp[k] as i128, m(y), "q {q} y {y}: exported");
                }
            }
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(
            NttPlan::new(1000, 12289),
            Err(MathError::InvalidDegree { .. })
        ));
        assert!(matches!(
            NttPlan::new(0, 12289),
            Err(MathError::InvalidDegree { .. })
        ));
        assert!(matches!(
            NttPlan::new(1 << 20, 12289),
            Err(MathError::InvalidDegree { .. })
        ));
        assert!(matches!(
            NttPlan::new(1024, 12289 * 3),
            Err(MathError::NotPrime { .. })
        ));
        assert!(matches!(
            NttPlan::new(4096, 12289),
            Err(MathError::NotNttFriendly { .. })
        ));
        let plan = NttPlan::new(1024, 12289).unwrap();
        let mut short = vec![0u64; 512];
        assert!(matches!(
            plan.forward(&mut short),
            Err(MathError::LengthMismatch { .. })
        ));
    }

    /// Words placed against inaccessible pages, so that a kernel reading one byte before or
    /// after them faults. The AVX-512 kernel reads high halves with loads at a 4-byte offset
    /// (`Lanes::load_high`), which must stop short of an array's last vector.
    struct Guarded {
        base: *mut libc::c_void,
        len: usize,
        words: *mut u64,
        n: usize,
    }

    impl Guarded {
        /// `n` words ending at a guard page (`at_end`) or starting just after one.
        fn new(n: usize, at_end: bool) -> Self {
            let page = 4096;
            let data = (n * 8).div_ceil(page) * page;
            let len = data + 2 * page;
            // SAFETY: an anonymous private mapping, whose two outer pages are made
            // inaccessible; `start` leaves the `n` words inside the accessible pages.
            unsafe {
                let base = libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                assert_ne!(base, libc::MAP_FAILED, "mmap");
                let b = base as *mut u8;
                assert_eq!(libc::mprotect(base, page, libc::PROT_NONE), 0);
                let after = b.add(page + data) as *mut libc::c_void;
                assert_eq!(libc::mprotect(after, page, libc::PROT_NONE), 0);
                let start = if at_end { page + data - n * 8 } else { page };
                Self {
                    base,
                    len,
                    words: b.add(start) as *mut u64,
                    n,
                }
            }
        }

        fn slice(&mut self) -> &mut [u64] {
            // SAFETY: `n` words inside the accessible pages, borrowed mutably from `self`.
            unsafe { std::slice::from_raw_parts_mut(self.words, self.n) }
        }
    }

    impl Drop for Guarded {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`.
            unsafe { libc::munmap(self.base, self.len) };
        }
    }

    /// Every kernel, forward, inverse and out of place, on arrays that touch a guard page at
    /// either end: an out-of-bounds read faults, and the results equal the scalar kernel's.
    #[test]
    fn kernels_read_nothing_outside_the_array() {
        for log_n in [3u32, 4, 5, 8, 12, 16] {
            let n = 1usize << log_n;
            for bits in [49u32, 50, 60, 61, 62] {
                let q = generate_ntt_primes(bits, n, 1, &[]).unwrap()[0];
                let plan = NttPlan::new(n, q).unwrap();
                let a = random_poly(n, q, u64::from(log_n * 64 + bits));
                let mut want = a.clone();
                plan.forward_with(Kernel::Scalar, &mut want).unwrap();
                let kernels = Kernel::ALL
                    .into_iter()
                    .filter(|k| k.cpu_supports() && k.supports(q, n));
                for k in kernels {
                    for at_end in [true, false] {
                        let mut g = Guarded::new(n, at_end);
                        let mut src = Guarded::new(n, at_end);
                        g.slice().copy_from_slice(&a);
                        plan.forward_with(k, g.slice()).unwrap();
                        assert_eq!(g.slice(), &want[..], "forward, {k:?}, q {q}");
                        src.slice().copy_from_slice(g.slice());
                        plan.inverse_with(k, g.slice()).unwrap();
                        assert_eq!(g.slice(), &a[..], "inverse, {k:?}, q {q}");
                        plan.inverse_to_with(k, src.slice(), g.slice()).unwrap();
                        assert_eq!(g.slice(), &a[..], "inverse_to, {k:?}, q {q}");
                    }
                }
            }
        }
    }

    /// Moduli far below a power of two take the four-step canonical output, those just inside
    /// `Consts::near`'s bound the shift-quotient one: every kernel agrees with the scalar one
    /// (which never takes the shift path) on random and all-`(q - 1)` inputs.
    #[test]
    fn near_and_far_moduli_agree_with_scalar() {
        let n = 1usize << 10;
        let step = 2 * n as u64;
        let first_prime_from = |start: u64| {
            let mut q = start - start % step + 1;
            while !crate::primes::is_prime(q) {
                q += step;
            }
            q
        };
        let top = 1u64 << 60;
        let far = first_prime_from(3 << 58);
        let edge = first_prime_from(top - top / 16 + step);
        for q in [far, edge] {
            let plan = NttPlan::new(n, q).unwrap();
            for a in [random_poly(n, q, q), vec![q - 1; n]] {
                let mut want = a.clone();
                plan.forward_with(Kernel::Scalar, &mut want).unwrap();
                for k in Kernel::ALL
                    .into_iter()
                    .filter(|k| k.cpu_supports() && k.supports(q, n))
                {
                    let mut f = a.clone();
                    plan.forward_with(k, &mut f).unwrap();
                    assert_eq!(f, want, "forward, {k:?}, q {q}");
                }
            }
        }
    }
}
