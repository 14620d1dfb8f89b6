//! Automorphisms `X -> X^g` of `Z_q[X]/(X^N + 1)`, `g` odd.
//!
//! Rotations by `r` slots use the Galois element `g = 5^r mod 2N` and conjugation uses
//! `g = 2N - 1`. In coefficient representation the map sends `a_i X^i` to `a_i X^(i*g mod 2N)`,
//! negating when `i*g mod 2N >= N` (because `X^N = -1`). In evaluation representation it is a
//! pure index permutation: slot `k` of the radix-2 NTT holds `a(psi^e_k)` with
//! `e_k = 2*brev(k) + 1`, and `(a o X^g)(psi^e) = a(psi^(e*g))`, so output slot `k` reads input
//! slot `k'` with `e_k' = e_k * g mod 2N`.

use crate::error::{MathError, Result};
use crate::ntt::{bit_reverse, check_degree, Kernel};

/// Galois element for a rotation by `r` slots (negative `r` rotates the other way):
/// `5^(r mod N/2) mod 2N`.
pub fn galois_element(r: i64, n: usize) -> Result<u64> {
    check_degree(n)?;
    let two_n = 2 * n as u64;
    let slots = (n / 2).max(1) as i64;
    let mut e = r.rem_euclid(slots) as u64;
    let (mut g, mut base) = (1u64, 5u64);
    while e > 0 {
        if e & 1 == 1 {
            g = g * base % two_n;
        }
        base = base * base % two_n;
        e >>= 1;
    }
    Ok(g)
}

/// Galois element of complex conjugation, `2N - 1`.
pub fn conjugation_element(n: usize) -> Result<u64> {
    check_degree(n)?;
    Ok(2 * n as u64 - 1)
}

/// Checks that `g` is a valid Galois element for degree `n`: odd and below `2N`.
pub fn galois_check(g: u64, n: usize) -> Result<()> {
    check_degree(n)?;
    if g.is_multiple_of(2) || g >= 2 * n as u64 {
        return Err(MathError::OutOfRange {
            name: "Galois element",
            value: g.to_string(),
            allowed: format!("an odd integer in [1, {})", 2 * n),
        });
    }
    Ok(())
}

/// Applies `X -> X^g` to one limb in coefficient representation modulo `q`.
pub fn automorphism_coeff(input: &[u64], g: u64, q: u64, out: &mut [u64]) -> Result<()> {
    let n = input.len();
    galois_check(g, n)?;
    if out.len() != n {
        return Err(MathError::LengthMismatch {
            what: "automorphism output",
            expected: n,
            found: out.len(),
        });
    }
    let mask = 2 * n - 1;
    let g = g as usize;
    for (i, &a) in input.iter().enumerate() {
        let j = (i * g) & mask;
        if j < n {
            out[j] = a;
        } else {
            out[j - n] = if a == 0 { 0 } else { q - a };
        }
    }
    Ok(())
}

/// The evaluation-representation permutation of `X -> X^g`: `out[k] = in[perm[k]]`.
pub fn automorphism_permutation(g: u64, n: usize) -> Result<Vec<u32>> {
    galois_check(g, n)?;
    let bits = n.trailing_zeros();
    let mask = 2 * n as u64 - 1;
    Ok((0..n)
        .map(|k| {
            let e = 2 * bit_reverse(k, bits) as u64 + 1;
            let e2 = (e * g) & mask;
            bit_reverse(((e2 - 1) / 2) as usize, bits) as u32
        })
        .collect())
}

/// Applies a permutation from [`automorphism_permutation`] to one limb:
/// `out[k] = input[perm[k]]` for `k < min(out.len(), perm.len())`, on the vector kernel of the
/// `TESSERA_SIMD` limit (see [`apply_permutation_with`] for why they are faster).
///
/// # Panics
/// If an index of `perm` is not below `input.len()` (as indexing does).
///
/// ```
/// use tessera_math::automorphism::{apply_permutation, automorphism_permutation, galois_element};
///
/// let n = 16;
/// let perm = automorphism_permutation(galois_element(1, n).unwrap(), n).unwrap();
/// let input: Vec<u64> = (0..n as u64).collect();
/// let mut out = vec![0u64; n];
/// apply_permutation(&input, &perm, &mut out);
/// assert!(out.iter().zip(&perm).all(|(&o, &p)| o == p as u64));
/// ```
pub fn apply_permutation(input: &[u64], perm: &[u32], out: &mut [u64]) {
    let kernel = crate::simd::word64(crate::simd::active());
    apply_permutation_with(kernel, input, perm, out).expect("the active kernel is supported");
}

/// [`apply_permutation`] on a chosen kernel (for tests and benchmarks). All kernels write the
/// same words.
///
/// Why the vector kernels are fast: in the bit-reversed slot order of the radix-2 NTT, an
/// automorphism maps each aligned block of `2^b` output slots to one aligned block of `2^b`
/// input slots (slot `k` is `brev(j)` with `j -> g*j + (g-1)/2 mod N`, and changing the top `b`
/// bits of `j` changes only the top `b` bits of its image). So four (AVX2) or eight (AVX-512)
/// output words are one aligned vector load and one in-register permute, instead of one load
/// per word or a gather (gathers measured 5 to 20 % slower than scalar indexing). A vector
/// whose indices do not have this shape (`perm` is any index list here) runs the scalar loop
/// for its words, which panics on an index out of range like indexing.
///
/// # Errors
/// A kernel this CPU lacks.
pub fn apply_permutation_with(
    kernel: Kernel,
    input: &[u64],
    perm: &[u32],
    out: &mut [u64],
) -> Result<()> {
    if !kernel.cpu_supports() {
        return Err(MathError::Unsupported(format!(
            "kernel {} for automorphisms on this CPU",
            kernel.name()
        )));
    }
    permute_blocks(input, perm, out, |perm, out| {
        // SAFETY: the kernel's features were checked above; the vector code reads only blocks
        // it has checked to lie inside `input`.
        let done = unsafe {
            match kernel {
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 => x86::permute_avx2(input, perm, out),
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512 | Kernel::Avx512Ifma => x86::permute_avx512(input, perm, out),
                _ => 0,
            }
        };
        permute_scalar(input, &perm[done..], &mut out[done..]);
    });
    Ok(())
}

/// Bytes of output per block of [`permute_blocks`] (eight cache lines).
const PREFETCH_BYTES: usize = 512;

/// How many blocks ahead [`permute_blocks`] fetches the source block (16 KiB of output:
/// enough permuting to cover a DRAM access; 8 to 32 KiB measured alike).
const PREFETCH_AHEAD: usize = 32;

/// Runs `permute(perm_block, out_block)` over `out` (up to `perm.len()`) in blocks of
/// [`PREFETCH_BYTES`], first asking for the source block of the block [`PREFETCH_AHEAD`]
/// ahead. A limb (512 KiB at N = 2^16) is rarely in cache when an automorphism reads it, and
/// its blocks are read in permuted order, which the hardware prefetchers cannot follow:
/// cycling over 48 limbs (`automorphism_median`, `rot1-cold`, session 42, Zen 4) the AVX2
/// permute took 108-123 us per limb before and 66-80 us with the prefetch. A limb already in
/// cache pays for the hints (AVX2 23 -> 26 us, AVX-512 17.5 -> 23 us per limb), which no
/// N = 2^16 key switch sees. Only a hint: a permutation without the block shape costs the
/// hint and nothing else.
pub(crate) fn permute_blocks<T>(
    input: &[T],
    perm: &[u32],
    out: &mut [T],
    mut permute: impl FnMut(&[u32], &mut [T]),
) {
    let block = (PREFETCH_BYTES / std::mem::size_of::<T>()).max(1);
    let len = out.len().min(perm.len());
    for start in (0..len).step_by(block) {
        let end = (start + block).min(len);
        if let Some(&ahead) = perm.get(start + PREFETCH_AHEAD * block) {
            let first = ahead as usize - ahead as usize % block;
            let line = (64 / std::mem::size_of::<T>()).max(1);
            #[cfg(target_arch = "x86_64")]
            for w in (first..(first + block).min(input.len())).step_by(line) {
                // SAFETY: `w` indexes `input`; a prefetch neither reads nor writes
                // architecturally.
                unsafe {
                    core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                        input.as_ptr().add(w) as *const i8,
                    )
                };
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = (first, line);
        }
        permute(&perm[start..end], &mut out[start..end]);
    }
}

/// The portable loop, also the tail and the fallback of the vector kernels.
fn permute_scalar(input: &[u64], perm: &[u32], out: &mut [u64]) {
    for (o, &p) in out.iter_mut().zip(perm) {
        *o = input[p as usize];
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::permute_scalar;
    use core::arch::x86_64::*;

    /// `out[k] = input[perm[k]]` four words at a time (`out.len() == perm.len()`); returns how
    /// many leading words it wrote (the rest is a tail of fewer than four).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn permute_avx2(input: &[u64], perm: &[u32], out: &mut [u64]) -> usize {
        let three = _mm_set1_epi32(3);
        // Word l of the block is dwords 2l and 2l + 1 of the 32-bit permute: l copied into both
        // halves of its 64-bit lane, doubled, plus 1 in the high half.
        let odd = _mm256_set1_epi64x(1 << 32);
        let mut k = 0;
        while k + 4 <= out.len() {
            let idx = _mm_loadu_si128(perm.as_ptr().add(k) as *const __m128i);
            let blocks = _mm_srli_epi32::<2>(idx);
            let same = _mm_cmpeq_epi32(blocks, _mm_shuffle_epi32::<0>(blocks));
            let start = 4 * (_mm_cvtsi128_si32(blocks) as u32 as usize);
            if _mm_movemask_epi8(same) == 0xffff && start + 4 <= input.len() {
                let v = _mm256_loadu_si256(input.as_ptr().add(start) as *const __m256i);
                let l = _mm256_cvtepu32_epi64(_mm_and_si128(idx, three));
                let ll = _mm256_shuffle_epi32::<0b10_10_00_00>(l);
                let dwords = _mm256_add_epi32(_mm256_add_epi32(ll, ll), odd);
                let r = _mm256_permutevar8x32_epi32(v, dwords);
                _mm256_storeu_si256(out.as_mut_ptr().add(k) as *mut __m256i, r);
            } else {
                permute_scalar(input, &perm[k..k + 4], &mut out[k..k + 4]);
            }
            k += 4;
        }
        k
    }

    /// [`permute_avx2`] eight words at a time with AVX-512F.
    #[target_feature(enable = "avx512f,avx2")]
    pub(super) unsafe fn permute_avx512(input: &[u64], perm: &[u32], out: &mut [u64]) -> usize {
        let seven = _mm256_set1_epi32(7);
        let mut k = 0;
        while k + 8 <= out.len() {
            let idx = _mm256_loadu_si256(perm.as_ptr().add(k) as *const __m256i);
            let blocks = _mm256_srli_epi32::<3>(idx);
            let first = _mm256_permutevar8x32_epi32(blocks, _mm256_setzero_si256());
            let same = _mm256_cmpeq_epi32(blocks, first);
            let start = 8 * (_mm256_cvtsi256_si32(blocks) as u32 as usize);
            if _mm256_movemask_epi8(same) == -1 && start + 8 <= input.len() {
                let v = _mm512_loadu_si512(input.as_ptr().add(start) as *const __m512i);
                let l = _mm512_cvtepu32_epi64(_mm256_and_si256(idx, seven));
                let r = _mm512_permutexvar_epi64(l, v);
                _mm512_storeu_si512(out.as_mut_ptr().add(k) as *mut __m512i, r);
            } else {
                permute_scalar(input, &perm[k..k + 8], &mut out[k..k + 8]);
            }
            k += 8;
        }
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modular::Modulus;
    use crate::ntt::NttPlan;
    use crate::primes::generate_ntt_primes;
    use proptest::prelude::*;

    /// Direct substitution: compute a(X^g) mod (X^N + 1) by expanding each monomial.
    fn substitute(a: &[u64], g: u64, m: &Modulus) -> Vec<u64> {
        let n = a.len();
        let mut out = vec![0u64; n];
        for (i, &c) in a.iter().enumerate() {
            // X^(i*g) = X^(e mod N) * (-1)^(e div N)
            let e = i as u64 * g;
            let (idx, sign) = ((e % n as u64) as usize, (e / n as u64) % 2);
            out[idx] = if sign == 0 {
                m.add(out[idx], c)
            } else {
                m.sub(out[idx], c)
            };
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn coefficient_and_evaluation_forms_agree_with_substitution(log_n in 1u32..=10, r in -600i64..600, conj in any::<bool>(), seed in any::<u64>()) {
            let n = 1usize << log_n;
            let q = generate_ntt_primes(40, n, 1, &[]).unwrap()[0];
            let m = Modulus::new(q).unwrap();
            let g = if conj { conjugation_element(n).unwrap() } else { galois_element(r, n).unwrap() };
            let a: Vec<u64> = (0..n as u64).map(|i| (i.wrapping_mul(seed | 1) ^ (seed >> 7)) % q).collect();
            let expect = substitute(&a, g, &m);
            let mut got = vec![0u64; n];
            automorphism_coeff(&a, g, q, &mut got).unwrap();
            prop_assert_eq!(&got, &expect);
            let plan = NttPlan::new(n, q).unwrap();
            let mut fa = a.clone();
            plan.forward(&mut fa).unwrap();
            let perm = automorphism_permutation(g, n).unwrap();
            let mut fo = vec![0u64; n];
            apply_permutation(&fa, &perm, &mut fo);
            let mut fe = expect.clone();
            plan.forward(&mut fe).unwrap();
            prop_assert_eq!(fo, fe);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Every vector kernel writes what the scalar loop writes: for automorphism
        /// permutations (block-shaped, the fast path), for arbitrary index lists (the fallback
        /// per vector), and for outputs shorter or longer than the index list.
        #[test]
        fn permutation_kernels_equal_scalar(log_n in 1u32..=12, r in -600i64..600, conj in any::<bool>(), seed in any::<u64>(), shuffle in 0usize..4, trim in 0usize..11) {
            let n = 1usize << log_n;
            let g = if conj { conjugation_element(n).unwrap() } else { galois_element(r, n).unwrap() };
            let mut perm = automorphism_permutation(g, n).unwrap();
            let mut rng = crate::testutil::XorShift::new(seed | 1);
            // Break the block shape of some vectors: random indices anywhere in the input.
            for _ in 0..shuffle * n / 8 {
                let k = rng.next_u64() as usize % n;
                perm[k] = (rng.next_u64() % n as u64) as u32;
            }
            let input: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
            let out_len = n.saturating_sub(trim % 3 * 3) + trim / 8;
            let mut want = vec![7u64; out_len];
            apply_permutation_with(Kernel::Scalar, &input, &perm, &mut want).unwrap();
            for (k, &p) in want.iter().zip(&perm) {
                prop_assert_eq!(*k, input[p as usize]);
            }
            for kernel in crate::simd::kernels_for_tests("automorphism") {
                let mut got = vec![7u64; out_len];
                apply_permutation_with(kernel, &input, &perm, &mut got).unwrap();
                prop_assert_eq!(&got, &want, "kernel {}", kernel.name());
            }
        }
    }

    #[test]
    fn permutation_index_out_of_range_panics_on_every_kernel() {
        let n = 64;
        let input = vec![1u64; n];
        for kernel in crate::simd::kernels_for_tests("automorphism") {
            // In a block-shaped vector (the block would start past the input) and alone.
            for bad in [
                vec![64u32, 65, 66, 67, 68, 69, 70, 71],
                vec![0, 1, 2, 3, 4, 5, 6, 1000],
            ] {
                let mut perm: Vec<u32> = (0..n as u32).collect();
                perm[8..16].copy_from_slice(&bad);
                let r = std::panic::catch_unwind(|| {
                    let mut out = vec![0u64; n];
                    apply_permutation_with(kernel, &input, &perm, &mut out).unwrap();
                });
                assert!(r.is_err(), "kernel {}", kernel.name());
            }
        }
    }

    #[test]
    fn galois_elements() {
        let n = 1 << 4;
        assert_eq!(galois_element(0, n).unwrap(), 1);
        assert_eq!(galois_element(1, n).unwrap(), 5);
        assert_eq!(galois_element(2, n).unwrap(), 25);
        // Rotating by -1 equals rotating by N/2 - 1.
        assert_eq!(
            galois_element(-1, n).unwrap(),
            galois_element(7, n).unwrap()
        );
        assert_eq!(conjugation_element(n).unwrap(), 31);
        assert!(automorphism_permutation(4, n).is_err());
        assert!(automorphism_permutation(33, n).is_err());
        assert!(galois_element(1, 12).is_err());
    }
}
