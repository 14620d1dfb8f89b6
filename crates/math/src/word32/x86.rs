//! x86-64 lanes for 32-bit words: AVX2 (8 lanes) and AVX-512F (16 lanes), with the
//! `#[target_feature]` entry points that instantiate the generic NTT and element-wise code.
//!
//! Both ISAs multiply unsigned 32-bit words into 64-bit products only in the even lanes
//! (`vpmuludq`): the high words of all lanes take two such products (even lanes, and odd lanes
//! moved down) and one blend. Low words come from `vpmulld`. The Shoup products move words
//! with pair-swapping `vpshufd` rather than 64-bit shifts (`vpmuludq` reads only the low word of
//! each pair, so the swapped-in high word is ignored): on Intel cores 512-bit shifts share port
//! 0 with every multiply, shuffles run on port 5.

use super::bconv::{self, Wide32};
use super::lanes::{merge_indices, split_indices, twiddle_indices, Lanes32};
use super::ntt::{self, Tables32};
use super::pointwise::{self, Op};
use super::Modulus32;
use core::arch::x86_64::*;

pub(crate) struct Avx2;

/// Permutations of one stride for 8 lanes.
#[derive(Clone, Copy)]
pub(crate) struct Perm256 {
    split: __m256i,
    merge: __m256i,
    twiddle: __m256i,
    /// Lanes `i < 8 / t` set: the twiddle words a chunk reads.
    mask: __m256i,
}

#[inline(always)]
unsafe fn idx256(a: [u32; 16]) -> __m256i {
    _mm256_loadu_si256(a.as_ptr() as *const __m256i)
}

impl Lanes32 for Avx2 {
    type V = __m256i;
    type P = Perm256;
    const L: usize = 8;
    #[inline(always)]
    unsafe fn load(p: *const u32) -> __m256i {
        _mm256_loadu_si256(p as *const __m256i)
    }
    #[inline(always)]
    unsafe fn store(p: *mut u32, v: __m256i) {
        _mm256_storeu_si256(p as *mut __m256i, v)
    }
    #[inline(always)]
    unsafe fn splat(x: u32) -> __m256i {
        _mm256_set1_epi32(x as i32)
    }
    #[inline(always)]
    unsafe fn add(a: __m256i, b: __m256i) -> __m256i {
        _mm256_add_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn sub(a: __m256i, b: __m256i) -> __m256i {
        _mm256_sub_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn min(a: __m256i, b: __m256i) -> __m256i {
        _mm256_min_epu32(a, b)
    }
    #[inline(always)]
    unsafe fn mul_shoup(y: __m256i, w: __m256i, ws: __m256i, q: __m256i) -> __m256i {
        let even = _mm256_mul_epu32(y, ws);
        let odd = _mm256_mul_epu32(
            _mm256_shuffle_epi32::<0b1011_0001>(y),
            _mm256_shuffle_epi32::<0b1011_0001>(ws),
        );
        let qhat =
            _mm256_blend_epi32::<0b1010_1010>(_mm256_shuffle_epi32::<0b1011_0001>(even), odd);
        _mm256_sub_epi32(_mm256_mullo_epi32(y, w), _mm256_mullo_epi32(qhat, q))
    }
    #[inline(always)]
    unsafe fn mul_shoup_bcast(y: __m256i, w: __m256i, ws: __m256i, q: __m256i) -> __m256i {
        // Every 64-bit lane's low word is `ws` already: the odd lanes need only `y` moved.
        let even = _mm256_mul_epu32(y, ws);
        let odd = _mm256_mul_epu32(_mm256_shuffle_epi32::<0b1011_0001>(y), ws);
        let qhat =
            _mm256_blend_epi32::<0b1010_1010>(_mm256_shuffle_epi32::<0b1011_0001>(even), odd);
        _mm256_sub_epi32(_mm256_mullo_epi32(y, w), _mm256_mullo_epi32(qhat, q))
    }
    #[inline(always)]
    unsafe fn mul_barrett(a: __m256i, b: __m256i, q: __m256i, mu: __m256i, k: u32) -> __m256i {
        let (s1, s2) = (
            _mm_cvtsi32_si128(k as i32 - 1),
            _mm_cvtsi32_si128(k as i32 + 1),
        );
        let even = _mm256_mul_epu32(a, b);
        let odd = _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), _mm256_srli_epi64::<32>(b));
        let q3e = _mm256_srl_epi64(_mm256_mul_epu32(_mm256_srl_epi64(even, s1), mu), s2);
        let q3o = _mm256_srl_epi64(_mm256_mul_epu32(_mm256_srl_epi64(odd, s1), mu), s2);
        let q3 = _mm256_blend_epi32::<0b1010_1010>(q3e, _mm256_slli_epi64::<32>(q3o));
        let lo = _mm256_blend_epi32::<0b1010_1010>(even, _mm256_slli_epi64::<32>(odd));
        let r = _mm256_sub_epi32(lo, _mm256_mullo_epi32(q3, q));
        let r = _mm256_min_epu32(r, _mm256_sub_epi32(r, q));
        _mm256_min_epu32(r, _mm256_sub_epi32(r, q))
    }
    #[inline(always)]
    unsafe fn perm(t: usize) -> Perm256 {
        let mask: [u32; 16] = core::array::from_fn(|i| if i < 8 / t { u32::MAX } else { 0 });
        Perm256 {
            split: idx256(split_indices(t, 8)),
            merge: idx256(merge_indices(t, 8)),
            twiddle: idx256(twiddle_indices(t)),
            mask: idx256(mask),
        }
    }
    #[inline(always)]
    unsafe fn split(p: &Perm256, v0: __m256i, v1: __m256i) -> (__m256i, __m256i) {
        let p0 = _mm256_permutevar8x32_epi32(v0, p.split);
        let p1 = _mm256_permutevar8x32_epi32(v1, p.split);
        (
            _mm256_permute2x128_si256::<0x20>(p0, p1),
            _mm256_permute2x128_si256::<0x31>(p0, p1),
        )
    }
    #[inline(always)]
    unsafe fn merge(p: &Perm256, x: __m256i, y: __m256i) -> (__m256i, __m256i) {
        let p0 = _mm256_permute2x128_si256::<0x20>(x, y);
        let p1 = _mm256_permute2x128_si256::<0x31>(x, y);
        (
            _mm256_permutevar8x32_epi32(p0, p.merge),
            _mm256_permutevar8x32_epi32(p1, p.merge),
        )
    }
    #[inline(always)]
    unsafe fn load_twiddles(p: &Perm256, ptr: *const u32) -> __m256i {
        let v = _mm256_maskload_epi32(ptr as *const i32, p.mask);
        _mm256_permutevar8x32_epi32(v, p.twiddle)
    }
}

pub(crate) struct Avx512;

/// Permutations of one stride for 16 lanes.
#[derive(Clone, Copy)]
pub(crate) struct Perm512 {
    split: __m512i,
    merge: __m512i,
    twiddle: __m512i,
    /// Lanes `i < 16 / t`: the twiddle words a chunk reads.
    mask: __mmask16,
}

#[inline(always)]
unsafe fn idx512(a: [u32; 16]) -> __m512i {
    _mm512_loadu_si512(a.as_ptr() as *const _)
}

impl Lanes32 for Avx512 {
    type V = __m512i;
    type P = Perm512;
    const L: usize = 16;
    #[inline(always)]
    unsafe fn load(p: *const u32) -> __m512i {
        _mm512_loadu_si512(p as *const _)
    }
    #[inline(always)]
    unsafe fn store(p: *mut u32, v: __m512i) {
        _mm512_storeu_si512(p as *mut _, v)
    }
    #[inline(always)]
    unsafe fn splat(x: u32) -> __m512i {
        _mm512_set1_epi32(x as i32)
    }
    #[inline(always)]
    unsafe fn add(a: __m512i, b: __m512i) -> __m512i {
        _mm512_add_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn sub(a: __m512i, b: __m512i) -> __m512i {
        _mm512_sub_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn min(a: __m512i, b: __m512i) -> __m512i {
        _mm512_min_epu32(a, b)
    }
    #[inline(always)]
    unsafe fn mul_shoup(y: __m512i, w: __m512i, ws: __m512i, q: __m512i) -> __m512i {
        let even = _mm512_mul_epu32(y, ws);
        let odd = _mm512_mul_epu32(
            _mm512_shuffle_epi32::<0b1011_0001>(y),
            _mm512_shuffle_epi32::<0b1011_0001>(ws),
        );
        let qhat = _mm512_mask_blend_epi32(0xAAAA, _mm512_shuffle_epi32::<0b1011_0001>(even), odd);
        _mm512_sub_epi32(_mm512_mullo_epi32(y, w), _mm512_mullo_epi32(qhat, q))
    }
    #[inline(always)]
    unsafe fn mul_shoup_bcast(y: __m512i, w: __m512i, ws: __m512i, q: __m512i) -> __m512i {
        // Every 64-bit lane's low word is `ws` already: the odd lanes need only `y` moved.
        let even = _mm512_mul_epu32(y, ws);
        let odd = _mm512_mul_epu32(_mm512_shuffle_epi32::<0b1011_0001>(y), ws);
        let qhat = _mm512_mask_blend_epi32(0xAAAA, _mm512_shuffle_epi32::<0b1011_0001>(even), odd);
        _mm512_sub_epi32(_mm512_mullo_epi32(y, w), _mm512_mullo_epi32(qhat, q))
    }
    #[inline(always)]
    unsafe fn mul_barrett(a: __m512i, b: __m512i, q: __m512i, mu: __m512i, k: u32) -> __m512i {
        let (s1, s2) = (
            _mm_cvtsi32_si128(k as i32 - 1),
            _mm_cvtsi32_si128(k as i32 + 1),
        );
        let even = _mm512_mul_epu32(a, b);
        let odd = _mm512_mul_epu32(_mm512_srli_epi64::<32>(a), _mm512_srli_epi64::<32>(b));
        let q3e = _mm512_srl_epi64(_mm512_mul_epu32(_mm512_srl_epi64(even, s1), mu), s2);
        let q3o = _mm512_srl_epi64(_mm512_mul_epu32(_mm512_srl_epi64(odd, s1), mu), s2);
        let q3 = _mm512_mask_blend_epi32(0xAAAA, q3e, _mm512_slli_epi64::<32>(q3o));
        let lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64::<32>(odd));
        let r = _mm512_sub_epi32(lo, _mm512_mullo_epi32(q3, q));
        let r = _mm512_min_epu32(r, _mm512_sub_epi32(r, q));
        _mm512_min_epu32(r, _mm512_sub_epi32(r, q))
    }
    #[inline(always)]
    unsafe fn perm(t: usize) -> Perm512 {
        Perm512 {
            split: idx512(split_indices(t, 16)),
            merge: idx512(merge_indices(t, 16)),
            twiddle: idx512(twiddle_indices(t)),
            mask: ((1u32 << (16 / t)) - 1) as __mmask16,
        }
    }
    #[inline(always)]
    unsafe fn split(p: &Perm512, v0: __m512i, v1: __m512i) -> (__m512i, __m512i) {
        let p0 = _mm512_permutexvar_epi32(p.split, v0);
        let p1 = _mm512_permutexvar_epi32(p.split, v1);
        (
            _mm512_shuffle_i64x2::<0b0100_0100>(p0, p1),
            _mm512_shuffle_i64x2::<0b1110_1110>(p0, p1),
        )
    }
    #[inline(always)]
    unsafe fn merge(p: &Perm512, x: __m512i, y: __m512i) -> (__m512i, __m512i) {
        let p0 = _mm512_shuffle_i64x2::<0b0100_0100>(x, y);
        let p1 = _mm512_shuffle_i64x2::<0b1110_1110>(x, y);
        (
            _mm512_permutexvar_epi32(p.merge, p0),
            _mm512_permutexvar_epi32(p.merge, p1),
        )
    }
    #[inline(always)]
    unsafe fn load_twiddles(p: &Perm512, ptr: *const u32) -> __m512i {
        let v = _mm512_maskz_loadu_epi32(p.mask, ptr as *const i32);
        _mm512_permutexvar_epi32(p.twiddle, v)
    }
}

#[target_feature(enable = "avx2")]
pub(super) unsafe fn forward_avx2(a: &mut [u32], t: &Tables32, q: u32) {
    ntt::forward::<Avx2>(a, t, q)
}

#[target_feature(enable = "avx2")]
pub(super) unsafe fn inverse_avx2(a: &mut [u32], t: &Tables32, q: u32) {
    ntt::inverse::<Avx2>(a, t, q)
}

#[target_feature(enable = "avx512f")]
pub(super) unsafe fn forward_avx512(a: &mut [u32], t: &Tables32, q: u32) {
    ntt::forward::<Avx512>(a, t, q)
}

#[target_feature(enable = "avx512f")]
pub(super) unsafe fn inverse_avx512(a: &mut [u32], t: &Tables32, q: u32) {
    ntt::inverse::<Avx512>(a, t, q)
}

#[target_feature(enable = "avx2")]
pub(super) unsafe fn apply_avx2(op: Op, m: &Modulus32, a: &mut [u32], b: &[u32]) {
    pointwise::apply::<Avx2>(op, m, a, b)
}

#[target_feature(enable = "avx512f")]
pub(super) unsafe fn apply_avx512(op: Op, m: &Modulus32, a: &mut [u32], b: &[u32]) {
    pointwise::apply::<Avx512>(op, m, a, b)
}

impl Wide32 for Avx2 {
    #[inline(always)]
    unsafe fn mul_even(y: __m256i, c: __m256i) -> __m256i {
        _mm256_mul_epu32(y, c)
    }
    #[inline(always)]
    unsafe fn mul_odd(y: __m256i, c: __m256i) -> __m256i {
        _mm256_mul_epu32(_mm256_shuffle_epi32::<0b1011_0001>(y), c)
    }
    #[inline(always)]
    unsafe fn mul_odd_pair(a: __m256i, b: __m256i) -> __m256i {
        _mm256_mul_epu32(
            _mm256_shuffle_epi32::<0b1011_0001>(a),
            _mm256_shuffle_epi32::<0b1011_0001>(b),
        )
    }
    #[inline(always)]
    unsafe fn add64(a: __m256i, b: __m256i) -> __m256i {
        _mm256_add_epi64(a, b)
    }
    #[inline(always)]
    unsafe fn low_high(even: __m256i, odd: __m256i) -> (__m256i, __m256i) {
        let lo = _mm256_blend_epi32::<0b1010_1010>(even, _mm256_shuffle_epi32::<0b1011_0001>(odd));
        let hi = _mm256_blend_epi32::<0b1010_1010>(_mm256_shuffle_epi32::<0b1011_0001>(even), odd);
        (lo, hi)
    }
}

impl Wide32 for Avx512 {
    #[inline(always)]
    unsafe fn mul_even(y: __m512i, c: __m512i) -> __m512i {
        _mm512_mul_epu32(y, c)
    }
    #[inline(always)]
    unsafe fn mul_odd(y: __m512i, c: __m512i) -> __m512i {
        _mm512_mul_epu32(_mm512_shuffle_epi32::<0b1011_0001>(y), c)
    }
    #[inline(always)]
    unsafe fn mul_odd_pair(a: __m512i, b: __m512i) -> __m512i {
        _mm512_mul_epu32(
            _mm512_shuffle_epi32::<0b1011_0001>(a),
            _mm512_shuffle_epi32::<0b1011_0001>(b),
        )
    }
    #[inline(always)]
    unsafe fn add64(a: __m512i, b: __m512i) -> __m512i {
        _mm512_add_epi64(a, b)
    }
    #[inline(always)]
    unsafe fn low_high(even: __m512i, odd: __m512i) -> (__m512i, __m512i) {
        let lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_shuffle_epi32::<0b1011_0001>(odd));
        let hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_shuffle_epi32::<0b1011_0001>(even), odd);
        (lo, hi)
    }
}

#[target_feature(enable = "avx2")]
pub(super) unsafe fn mac_row_avx2(
    ys: &[&[u32]],
    c: &[u32],
    m: &Modulus32,
    out: &mut [u32],
) -> usize {
    bconv::mac_row::<Avx2>(ys, c, m, out)
}

#[target_feature(enable = "avx512f")]
pub(super) unsafe fn mac_row_avx512(
    ys: &[&[u32]],
    c: &[u32],
    m: &Modulus32,
    out: &mut [u32],
) -> usize {
    bconv::mac_row::<Avx512>(ys, c, m, out)
}

#[target_feature(enable = "avx2")]
pub(super) unsafe fn dot_row_avx2(
    xs: &[&[u32]],
    ys: &[&[u32]],
    m: &Modulus32,
    out: &mut [u32],
    accumulate: bool,
) -> usize {
    super::dot::dot_row::<Avx2>(xs, ys, m, out, accumulate)
}

#[target_feature(enable = "avx512f")]
pub(super) unsafe fn dot_row_avx512(
    xs: &[&[u32]],
    ys: &[&[u32]],
    m: &Modulus32,
    out: &mut [u32],
    accumulate: bool,
) -> usize {
    super::dot::dot_row::<Avx512>(xs, ys, m, out, accumulate)
}

/// `out[k] = input[perm[k]]` eight words at a time where the eight indices lie in one
/// aligned block of eight input words (always, for an automorphism in bit-reversed slot order:
/// see [`crate::automorphism::apply_permutation_with`]): one load and one `vpermd`, which reads
/// only the low three bits of each index. Other vectors take the scalar loop. Returns how many
/// leading words it wrote.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn permute_avx2(input: &[u32], perm: &[u32], out: &mut [u32]) -> usize {
    let mut k = 0;
    while k + 8 <= out.len() {
        let idx = _mm256_loadu_si256(perm.as_ptr().add(k) as *const __m256i);
        let blocks = _mm256_srli_epi32::<3>(idx);
        let first = _mm256_permutevar8x32_epi32(blocks, _mm256_setzero_si256());
        let same = _mm256_movemask_epi8(_mm256_cmpeq_epi32(blocks, first)) == -1;
        let start = 8 * (perm[k] as usize / 8);
        if same && start + 8 <= input.len() {
            let v = _mm256_loadu_si256(input.as_ptr().add(start) as *const __m256i);
            let r = _mm256_permutevar8x32_epi32(v, idx);
            _mm256_storeu_si256(out.as_mut_ptr().add(k) as *mut __m256i, r);
        } else {
            super::automorphism::permute_scalar(input, &perm[k..k + 8], &mut out[k..k + 8]);
        }
        k += 8;
    }
    k
}

/// [`permute_avx2`] sixteen words at a time with AVX-512F (`vpermd` reads four index bits).
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn permute_avx512(input: &[u32], perm: &[u32], out: &mut [u32]) -> usize {
    let mut k = 0;
    while k + 16 <= out.len() {
        let idx = _mm512_loadu_si512(perm.as_ptr().add(k) as *const _);
        let blocks = _mm512_srli_epi32::<4>(idx);
        let first = _mm512_set1_epi32((perm[k] >> 4) as i32);
        let same = _mm512_cmpeq_epi32_mask(blocks, first) == 0xFFFF;
        let start = 16 * (perm[k] as usize / 16);
        if same && start + 16 <= input.len() {
            let v = _mm512_loadu_si512(input.as_ptr().add(start) as *const _);
            let r = _mm512_permutexvar_epi32(idx, v);
            _mm512_storeu_si512(out.as_mut_ptr().add(k) as *mut _, r);
        } else {
            super::automorphism::permute_scalar(input, &perm[k..k + 16], &mut out[k..k + 16]);
        }
        k += 16;
    }
    k
}

/// The vector part of `BaseConverter32::overflow_counts`, eight coefficients at a time: the
/// same IEEE products and sums in the same order as the scalar loop (no fused multiply-add; a
/// word below 2^30 converts to `f64` exactly as a signed 32-bit integer). Returns how many it
/// did.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn overflow_counts_avx512(
    ys: &[&[u32]],
    q_inv: &[f64],
    l: u32,
    v: &mut [u32],
) -> usize {
    let full = v.len() - v.len() % 8;
    let (half, lv) = (_mm512_set1_pd(0.5), _mm256_set1_epi32(l as i32));
    let mut k = 0;
    while k < full {
        let mut a = _mm512_setzero_pd();
        for (y, &qi) in ys.iter().zip(q_inv) {
            let yv = _mm512_cvtepi32_pd(_mm256_loadu_si256(y.as_ptr().add(k) as *const __m256i));
            a = _mm512_add_pd(a, _mm512_mul_pd(yv, _mm512_set1_pd(qi)));
        }
        let r = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(
            _mm512_add_pd(a, half),
        );
        let r = _mm256_min_epi32(_mm512_cvttpd_epi32(r), lv);
        _mm256_storeu_si256(v.as_mut_ptr().add(k) as *mut __m256i, r);
        k += 8;
    }
    full
}

/// [`overflow_counts_avx512`] four coefficients at a time with AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn overflow_counts_avx2(
    ys: &[&[u32]],
    q_inv: &[f64],
    l: u32,
    v: &mut [u32],
) -> usize {
    let full = v.len() - v.len() % 4;
    let (half, lv) = (_mm256_set1_pd(0.5), _mm_set1_epi32(l as i32));
    let mut k = 0;
    while k < full {
        let mut a = _mm256_setzero_pd();
        for (y, &qi) in ys.iter().zip(q_inv) {
            let yv = _mm256_cvtepi32_pd(_mm_loadu_si128(y.as_ptr().add(k) as *const __m128i));
            a = _mm256_add_pd(a, _mm256_mul_pd(yv, _mm256_set1_pd(qi)));
        }
        let r = _mm256_round_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(_mm256_add_pd(
            a, half,
        ));
        let r = _mm_min_epi32(_mm256_cvttpd_epi32(r), lv);
        _mm_storeu_si128(v.as_mut_ptr().add(k) as *mut __m128i, r);
        k += 4;
    }
    full
}

/// `out[k] = out[k] - table[v[k]] mod p` sixteen words at a time, the table (at most 16
/// entries, each below `p`) in one register and each lookup a lane permutation. Returns how
/// many it did.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn subtract_multiples_avx512(
    table: &[u32],
    p: u32,
    v: &[u32],
    out: &mut [u32],
) -> usize {
    let mut padded = [0u32; 16];
    padded[..table.len()].copy_from_slice(table);
    let t = _mm512_loadu_si512(padded.as_ptr() as *const _);
    let pv = _mm512_set1_epi32(p as i32);
    let full = out.len() - out.len() % 16;
    let mut k = 0;
    while k < full {
        let idx = _mm512_loadu_si512(v.as_ptr().add(k) as *const _);
        let o = _mm512_loadu_si512(out.as_ptr().add(k) as *const _);
        let d = _mm512_sub_epi32(o, _mm512_permutexvar_epi32(idx, t));
        let r = _mm512_min_epu32(d, _mm512_add_epi32(d, pv));
        _mm512_storeu_si512(out.as_mut_ptr().add(k) as *mut _, r);
        k += 16;
    }
    full
}

/// [`subtract_multiples_avx512`] eight words at a time with AVX2 (a table of at most 8).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn subtract_multiples_avx2(
    table: &[u32],
    p: u32,
    v: &[u32],
    out: &mut [u32],
) -> usize {
    let mut padded = [0u32; 8];
    padded[..table.len()].copy_from_slice(table);
    let t = _mm256_loadu_si256(padded.as_ptr() as *const __m256i);
    let pv = _mm256_set1_epi32(p as i32);
    let full = out.len() - out.len() % 8;
    let mut k = 0;
    while k < full {
        let idx = _mm256_loadu_si256(v.as_ptr().add(k) as *const __m256i);
        let o = _mm256_loadu_si256(out.as_ptr().add(k) as *const __m256i);
        let d = _mm256_sub_epi32(o, _mm256_permutevar8x32_epi32(t, idx));
        let r = _mm256_min_epu32(d, _mm256_add_epi32(d, pv));
        _mm256_storeu_si256(out.as_mut_ptr().add(k) as *mut __m256i, r);
        k += 8;
    }
    full
}
