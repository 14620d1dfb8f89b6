//! x86-64 lane implementations: AVX2 (4 lanes), AVX-512 (8 lanes, 64-bit Shoup products
//! emulated from 32x32 multiplies) and AVX-512 IFMA (8 lanes, 52-bit Shoup products with
//! `vpmadd52{lo,hi}uq`, for moduli below 2^50 so lazy values stay below 2^52).
//!
//! Each `#[target_feature]` entry point instantiates the generic driver in [`super::lanes`];
//! the `#[inline(always)]` lane methods are compiled inside it with the enabled features.

use super::lanes::{self, merge_indices, relayout_indices, split_indices, Lanes};
use super::tables::Tables;
use core::arch::x86_64::*;

/// Shoup quotient estimate `hi' = hh + (lh >> 32) + (hl >> 32)`, dropping the low partial
/// product and the middle carries: three 32x32 multiplies instead of four and five fewer adds.
///
/// With `P = y * ws = hh*2^64 + (lh + hl)*2^32 + ll`, the dropped part
/// `(lh mod 2^32 + hl mod 2^32)*2^32 + ll` is below `3 * 2^64`, so the exact quotient
/// `Q = floor(P / 2^64)` satisfies `Q - hi' in {0, 1, 2}`. Shoup's bound for the exact quotient
/// is `y*w - Q*q < q * (1 + y/2^64) < 2q` for any `y < 2^64`, hence `y*w - hi'*q < 4q`: the
/// raw product of [`super::lanes::Lanes::mul_shoup_raw`]. The narrow regime corrects it with
/// one conditional subtraction of `2q`; the wide regime absorbs it. The saving is five vector
/// operations per product against the exact four-multiply quotient.
macro_rules! shoup_lazy_approx {
    ($mul:ident, $swap:ident, $srli:ident, $add:ident, $sub:ident, $mullo:ident,
     $y:expr, $w:expr, $ws:expr, $q:expr) => {{
        let (y, ws) = ($y, $ws);
        shoup_lazy_approx!($mul, $swap, $srli, $add, $sub, $mullo,
            y, $swap::<0b1011_0001>(y), $w, ws, $swap::<0b1011_0001>(ws), $q)
    }};
    ($mul:ident, $swap:ident, $srli:ident, $add:ident, $sub:ident, $mullo:ident,
     $y:expr, $y_hi:expr, $w:expr, $ws:expr, $ws_hi:expr, $q:expr) => {{
        let (y, y_hi, w, ws, ws_hi, q) = ($y, $y_hi, $w, $ws, $ws_hi, $q);
        let lh = $mul(y, ws_hi);
        let hl = $mul(y_hi, ws);
        let hh = $mul(y_hi, ws_hi);
        let qhat = $add(hh, $add($srli::<32>(lh), $srli::<32>(hl)));
        $sub($mullo(y, w), $mullo(qhat, q))
    }};
}

// ---------------------------------------------------------------------------------------------
// AVX2
// ---------------------------------------------------------------------------------------------

pub(crate) struct Avx2;

/// The raw Shoup product `y * w mod q` in `[0, 4q)` for any `y < 2^64`, four lanes; also the
/// AVX2 element-wise primaries' constant product. The quotient is `shoup_lazy_approx!`'s
/// (three partial products); the two low products `y * w` and `qhat * q` are formed as one
/// difference, `(yl*wl - ql'*ql) + ((yl*wh + yh*wl - ql'*qh - qh'*ql) << 32)` modulo 2^64,
/// with the cross terms from two 32-bit low multiplies: seven multiplies instead of nine.
#[inline(always)]
pub(crate) unsafe fn shoup64_256(y: __m256i, w: __m256i, ws: __m256i, q: __m256i) -> __m256i {
    shoup64_256_split(
        y,
        _mm256_shuffle_epi32::<0b1011_0001>(y),
        w,
        ws,
        _mm256_shuffle_epi32::<0b1011_0001>(ws),
        q,
    )
}

/// [`shoup64_256`] given `y_hi` and `ws_hi`, whose lanes' low 32 bits hold the high halves of
/// `y` and `ws`.
#[inline(always)]
unsafe fn shoup64_256_split(
    y: __m256i,
    y_hi: __m256i,
    w: __m256i,
    ws: __m256i,
    ws_hi: __m256i,
    q: __m256i,
) -> __m256i {
    let lh = _mm256_mul_epu32(y, ws_hi);
    let hl = _mm256_mul_epu32(y_hi, ws);
    let hh = _mm256_mul_epu32(y_hi, ws_hi);
    let qhat = _mm256_add_epi64(
        hh,
        _mm256_add_epi64(_mm256_srli_epi64::<32>(lh), _mm256_srli_epi64::<32>(hl)),
    );
    let low = _mm256_sub_epi64(_mm256_mul_epu32(y, w), _mm256_mul_epu32(qhat, q));
    // Only the low 32 bits of the cross sum survive the shift: 32-bit low products of both
    // halves at once (`vpmulld` on [yl*wh, yh*wl] and [ql'*qh, qh'*ql]), then the two halves
    // of their difference added.
    let a = _mm256_mullo_epi32(y, _mm256_shuffle_epi32::<0b1011_0001>(w));
    let b = _mm256_mullo_epi32(qhat, _mm256_shuffle_epi32::<0b1011_0001>(q));
    let d = _mm256_sub_epi32(a, b);
    let cross = _mm256_add_epi32(d, _mm256_srli_epi64::<32>(d));
    _mm256_add_epi64(low, _mm256_slli_epi64::<32>(cross))
}

impl Lanes for Avx2 {
    type V = __m256i;
    const L: usize = 4;
    const WORD_BITS: u32 = 64;
    const RAW_BELOW_2Q: bool = false;
    const SPLIT_HIGH: bool = true;
    #[inline(always)]
    unsafe fn high(y: __m256i) -> __m256i {
        _mm256_shuffle_epi32::<0b1011_0001>(y)
    }
    /// A load at 4 bytes' offset: lane `i`'s low half is word `i`'s high half (forward
    /// 60-bit NTT at 2^16: 272.8 -> 270.2 us).
    #[inline(always)]
    unsafe fn load_high(p: *const u64) -> __m256i {
        _mm256_loadu_si256((p as *const u8).add(4) as *const __m256i)
    }
    // The narrow twiddles' high halves stay shuffles here: loaded at an offset they measured
    // 0.3-0.5 % slower in the inverse and no faster in the forward transform.
    #[inline(always)]
    unsafe fn mul_shoup_split(
        y: __m256i,
        yh: __m256i,
        w: __m256i,
        ws: __m256i,
        wsh: __m256i,
        q: __m256i,
    ) -> __m256i {
        shoup64_256_split(y, yh, w, ws, wsh, q)
    }
    #[inline(always)]
    unsafe fn load(p: *const u64) -> __m256i {
        _mm256_loadu_si256(p as *const __m256i)
    }
    #[inline(always)]
    unsafe fn store(p: *mut u64, v: __m256i) {
        _mm256_storeu_si256(p as *mut __m256i, v)
    }
    #[inline(always)]
    unsafe fn splat(x: u64) -> __m256i {
        _mm256_set1_epi64x(x as i64)
    }
    #[inline(always)]
    unsafe fn add(a: __m256i, b: __m256i) -> __m256i {
        _mm256_add_epi64(a, b)
    }
    #[inline(always)]
    unsafe fn sub(a: __m256i, b: __m256i) -> __m256i {
        _mm256_sub_epi64(a, b)
    }
    #[inline(always)]
    unsafe fn min(a: __m256i, b: __m256i) -> __m256i {
        // AVX2 has no unsigned 64-bit compare: flip the sign bits and compare signed.
        let sign = _mm256_set1_epi64x(i64::MIN);
        let gt = _mm256_cmpgt_epi64(_mm256_xor_si256(a, sign), _mm256_xor_si256(b, sign));
        _mm256_blendv_epi8(a, b, gt)
    }
    #[inline(always)]
    unsafe fn small_mod(x: __m256i, m: __m256i) -> __m256i {
        // Two operations instead of the five of the emulated unsigned minimum.
        let d = _mm256_sub_epi64(x, m);
        _mm256_castpd_si256(_mm256_blendv_pd(
            _mm256_castsi256_pd(d),
            _mm256_castsi256_pd(x),
            _mm256_castsi256_pd(d),
        ))
    }
    #[inline(always)]
    unsafe fn mul_shoup_raw(y: __m256i, w: __m256i, ws: __m256i, q: __m256i) -> __m256i {
        shoup64_256(y, w, ws, q)
    }
    #[inline(always)]
    unsafe fn split(t: usize, v0: __m256i, v1: __m256i) -> (__m256i, __m256i) {
        match t {
            2 => (
                _mm256_permute2x128_si256::<0x20>(v0, v1),
                _mm256_permute2x128_si256::<0x31>(v0, v1),
            ),
            _ => (
                _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_unpacklo_epi64(v0, v1)),
                _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_unpackhi_epi64(v0, v1)),
            ),
        }
    }
    #[inline(always)]
    unsafe fn load_twiddles(t: usize, p: *const u64) -> __m256i {
        match t {
            // split(2) lanes are [blk0, blk0, blk1, blk1].
            2 => _mm256_permute4x64_epi64::<0b01_01_00_00>(_mm256_castsi128_si256(
                _mm_loadu_si128(p as *const __m128i),
            )),
            _ => _mm256_loadu_si256(p as *const __m256i),
        }
    }
    #[inline(always)]
    unsafe fn relayout(from: usize, to: usize, x: __m256i, y: __m256i) -> (__m256i, __m256i) {
        match (from, to) {
            // Stride 2's lanes are [w0, w1, w4, w5], [w2, w3, w6, w7] and stride 1's are
            // [w0, w2, w4, w6], [w1, w3, w5, w7]: either way the other order is the in-lane
            // unpack pair, 2 one-cycle shuffles instead of a merge and a split (4 of them
            // lane-crossing).
            (2, 1) | (1, 2) => (_mm256_unpacklo_epi64(x, y), _mm256_unpackhi_epi64(x, y)),
            _ => {
                let (v0, v1) = Self::merge(from, x, y);
                Self::split(to, v0, v1)
            }
        }
    }
    #[inline(always)]
    unsafe fn merge(t: usize, x: __m256i, y: __m256i) -> (__m256i, __m256i) {
        match t {
            2 => Self::split(2, x, y),
            _ => {
                let x = _mm256_permute4x64_epi64::<0b11_01_10_00>(x);
                let y = _mm256_permute4x64_epi64::<0b11_01_10_00>(y);
                (_mm256_unpacklo_epi64(x, y), _mm256_unpackhi_epi64(x, y))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// AVX2 with residues as doubles on the FMA units (moduli below 2^50)
// ---------------------------------------------------------------------------------------------

/// AVX2 lanes holding residues as signed doubles, for moduli below 2^50: the signed regime of
/// [`super::lanes`]. AVX2 has no 64 x 64-bit multiply: the integer Shoup product takes nine
/// 32-bit multiply micro-ops, while here it is four FMA-unit operations and one rounding, and
/// the butterflies' additions, reductions and final canonical form stay on the double units
/// too, with no conversion between stages. Values are exact integers below `4q < 2^52` in
/// magnitude; the words of the limb hold their bits during the transform. The twiddle tables
/// hold the doubles `w` and `fl(w / q)` ([`super::tables::Tables::new_f64`]). Same canonical
/// outputs as every kernel, bit for bit.
pub(crate) struct Avx2F64;

/// Bits of the double 2^52: `x | MAGIC52` read as a double is `2^52 + x` for `x < 2^52`.
const MAGIC52: i64 = 0x4330_0000_0000_0000;

/// Round to nearest (ties to even) without raising exceptions.
const ROUND_NEAREST: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

#[inline(always)]
unsafe fn pd(v: __m256i) -> __m256d {
    _mm256_castsi256_pd(v)
}

#[inline(always)]
unsafe fn si(v: __m256d) -> __m256i {
    _mm256_castpd_si256(v)
}

/// The double of a `u64` below 2^52.
#[inline(always)]
unsafe fn u52_to_f64(v: __m256i) -> __m256d {
    let magic = _mm256_set1_epi64x(MAGIC52);
    _mm256_sub_pd(pd(_mm256_or_si256(v, magic)), pd(magic))
}

/// `y * w mod q` in `(-1.5q, 1.5q)` for `|y| < 4q`, `q < 2^50`, from the doubles `y`, `w` and
/// `ws = fl(w / q)`; `q` is the integer word.
///
/// Why it is exact: `h = fl(y w)` and `l = y w - h` (one FMA, exact: a product's rounding error
/// is representable; both are integers, `|l| <= 2^49` since `|y w| < 2^102`); the quotient
/// `z = y w / q`, `|z| < 4q < 2^52`, is estimated by `fl(y ws)` within 1 and rounded to the
/// integer `qt`, so `|z - qt| < 1.5` and `r = y w - qt q` lies in `(-1.5q, 1.5q)`;
/// `h - qt q = r - l` is an integer below 2^51 in magnitude, so one FMA gives it exactly, and
/// adding `l` back is exact too.
#[inline(always)]
pub(crate) unsafe fn mul_signed_256(y: __m256i, w: __m256i, ws: __m256i, q: __m256i) -> __m256i {
    let (yd, wd, wsd, qd) = (pd(y), pd(w), pd(ws), u52_to_f64(q));
    let h = _mm256_mul_pd(yd, wd);
    let l = _mm256_fmsub_pd(yd, wd, h);
    let qt = _mm256_round_pd::<ROUND_NEAREST>(_mm256_mul_pd(yd, wsd));
    si(_mm256_add_pd(_mm256_fnmadd_pd(qt, qd, h), l))
}

/// `x - round(x / q) q` for `|x| < 4q`, `q < 2^50`: `x / q` is estimated by `x fl(1/q)` within
/// `2^-49`, so the result, an integer (exact: one FMA of integers below 2^52), has magnitude
/// at most `q/2 + 1`.
#[inline(always)]
pub(crate) unsafe fn reduce_signed_256(x: __m256i, q: __m256i) -> __m256i {
    let qd = u52_to_f64(q);
    // Loop-invariant, so hoisted out of the butterfly loops by the compiler.
    let qinv = _mm256_div_pd(_mm256_set1_pd(1.0), qd);
    let qt = _mm256_round_pd::<ROUND_NEAREST>(_mm256_mul_pd(pd(x), qinv));
    si(_mm256_fnmadd_pd(qt, qd, pd(x)))
}

/// `x mod q` in `[0, q)` as a `u64` word, for `|x| < 4q`: reduced to `|r| <= q/2 + 1`, `q`
/// added where `r < 0` (a compare, not the sign bit, so that a zero is never lifted to `q`),
/// and the integer read from the bits of `r + 2^52`.
#[inline(always)]
pub(crate) unsafe fn export_canonical_256(x: __m256i, q: __m256i) -> __m256i {
    let qd = u52_to_f64(q);
    let r = pd(reduce_signed_256(x, q));
    let negative = _mm256_cmp_pd::<_CMP_LT_OQ>(r, _mm256_setzero_pd());
    let r = _mm256_blendv_pd(r, _mm256_add_pd(r, qd), negative);
    let magic = _mm256_set1_epi64x(MAGIC52);
    _mm256_sub_epi64(si(_mm256_add_pd(r, pd(magic))), magic)
}

impl Lanes for Avx2F64 {
    type V = __m256i;
    const L: usize = 4;
    const WORD_BITS: u32 = 52;
    const RAW_BELOW_2Q: bool = false;
    const SIGNED: bool = true;
    #[inline(always)]
    unsafe fn load(p: *const u64) -> __m256i {
        Avx2::load(p)
    }
    #[inline(always)]
    unsafe fn store(p: *mut u64, v: __m256i) {
        Avx2::store(p, v)
    }
    #[inline(always)]
    unsafe fn splat(x: u64) -> __m256i {
        Avx2::splat(x)
    }
    #[inline(always)]
    unsafe fn add(a: __m256i, b: __m256i) -> __m256i {
        si(_mm256_add_pd(pd(a), pd(b)))
    }
    #[inline(always)]
    unsafe fn sub(a: __m256i, b: __m256i) -> __m256i {
        si(_mm256_sub_pd(pd(a), pd(b)))
    }
    unsafe fn min(_: __m256i, _: __m256i) -> __m256i {
        unreachable!("signed lanes have no unsigned regime")
    }
    unsafe fn mul_shoup_raw(_: __m256i, _: __m256i, _: __m256i, _: __m256i) -> __m256i {
        unreachable!("signed lanes have no unsigned regime")
    }
    #[inline(always)]
    unsafe fn import(x: __m256i) -> __m256i {
        si(u52_to_f64(x))
    }
    #[inline(always)]
    unsafe fn mul_signed(y: __m256i, w: __m256i, ws: __m256i, q: __m256i) -> __m256i {
        mul_signed_256(y, w, ws, q)
    }
    #[inline(always)]
    unsafe fn reduce_signed(x: __m256i, q: __m256i) -> __m256i {
        reduce_signed_256(x, q)
    }
    #[inline(always)]
    unsafe fn export_canonical(x: __m256i, q: __m256i) -> __m256i {
        export_canonical_256(x, q)
    }
    #[inline(always)]
    unsafe fn split(t: usize, v0: __m256i, v1: __m256i) -> (__m256i, __m256i) {
        Avx2::split(t, v0, v1)
    }
    #[inline(always)]
    unsafe fn load_twiddles(t: usize, p: *const u64) -> __m256i {
        Avx2::load_twiddles(t, p)
    }
    #[inline(always)]
    unsafe fn merge(t: usize, x: __m256i, y: __m256i) -> (__m256i, __m256i) {
        Avx2::merge(t, x, y)
    }
    #[inline(always)]
    unsafe fn relayout(from: usize, to: usize, x: __m256i, y: __m256i) -> (__m256i, __m256i) {
        Avx2::relayout(from, to, x, y)
    }
}

#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn forward_avx2_fma(a: &mut [u64], t: &Tables, q: u64) {
    lanes::forward::<Avx2F64>(a, t, q)
}

#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn inverse_avx2_fma(a: &mut [u64], src: Option<&[u64]>, t: &Tables, q: u64) {
    lanes::inverse::<Avx2F64>(a, src, t, q)
}

#[target_feature(enable = "avx2")]
pub(crate) unsafe fn butterflies_avx2(q: u64, w: u64, ws: u64, iters: usize) -> (u64, usize) {
    lanes::butterfly_loop::<Avx2>(q, w, ws, iters)
}

/// [`butterflies_avx2`] for the signed double-precision lanes (`q < 2^50`; `w` and `ws` as
/// the bits of the doubles `w` and `fl(w / q)`).
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn butterflies_avx2_f64(q: u64, w: u64, ws: u64, iters: usize) -> (u64, usize) {
    lanes::butterfly_loop::<Avx2F64>(q, w, ws, iters)
}

#[target_feature(enable = "avx2")]
pub(crate) unsafe fn forward_avx2(a: &mut [u64], t: &Tables, q: u64) {
    lanes::forward::<Avx2>(a, t, q)
}

#[target_feature(enable = "avx2")]
pub(crate) unsafe fn inverse_avx2(a: &mut [u64], src: Option<&[u64]>, t: &Tables, q: u64) {
    lanes::inverse::<Avx2>(a, src, t, q)
}

// ---------------------------------------------------------------------------------------------
// AVX-512 (shared 8-lane plumbing)
// ---------------------------------------------------------------------------------------------

const SPLIT4: ([u64; 8], [u64; 8]) = split_indices::<8>(4);
const SPLIT2: ([u64; 8], [u64; 8]) = split_indices::<8>(2);
const SPLIT1: ([u64; 8], [u64; 8]) = split_indices::<8>(1);
const MERGE4: ([u64; 8], [u64; 8]) = merge_indices::<8>(4);
const MERGE2: ([u64; 8], [u64; 8]) = merge_indices::<8>(2);
const MERGE1: ([u64; 8], [u64; 8]) = merge_indices::<8>(1);
const RELAYOUT_4_2: ([u64; 8], [u64; 8]) = relayout_indices::<8>(4, 2);
const RELAYOUT_2_1: ([u64; 8], [u64; 8]) = relayout_indices::<8>(2, 1);
const RELAYOUT_1_2: ([u64; 8], [u64; 8]) = relayout_indices::<8>(1, 2);
const RELAYOUT_2_4: ([u64; 8], [u64; 8]) = relayout_indices::<8>(2, 4);
#[inline(always)]
unsafe fn idx(i: &[u64; 8]) -> __m512i {
    _mm512_loadu_si512(i.as_ptr() as *const __m512i)
}

#[inline(always)]
unsafe fn permute_pair(tabs: &([u64; 8], [u64; 8]), a: __m512i, b: __m512i) -> (__m512i, __m512i) {
    (
        _mm512_permutex2var_epi64(a, idx(&tabs.0), b),
        _mm512_permutex2var_epi64(a, idx(&tabs.1), b),
    )
}

#[inline(always)]
unsafe fn split8(t: usize, v0: __m512i, v1: __m512i) -> (__m512i, __m512i) {
    match t {
        4 => permute_pair(&SPLIT4, v0, v1),
        2 => permute_pair(&SPLIT2, v0, v1),
        _ => permute_pair(&SPLIT1, v0, v1),
    }
}

#[inline(always)]
unsafe fn merge8(t: usize, x: __m512i, y: __m512i) -> (__m512i, __m512i) {
    match t {
        4 => permute_pair(&MERGE4, x, y),
        2 => permute_pair(&MERGE2, x, y),
        _ => permute_pair(&MERGE1, x, y),
    }
}

/// The 8-lane data movement shared by every 512-bit lane type: loads, stores, broadcasts and
/// the permutes of the narrow strides.
macro_rules! lanes_512_moves {
    () => {
        #[inline(always)]
        unsafe fn load(p: *const u64) -> __m512i {
            _mm512_loadu_si512(p as *const __m512i)
        }
        #[inline(always)]
        unsafe fn store(p: *mut u64, v: __m512i) {
            _mm512_storeu_si512(p as *mut __m512i, v)
        }
        #[inline(always)]
        unsafe fn splat(x: u64) -> __m512i {
            _mm512_set1_epi64(x as i64)
        }
        #[inline(always)]
        unsafe fn split(t: usize, v0: __m512i, v1: __m512i) -> (__m512i, __m512i) {
            split8(t, v0, v1)
        }
        #[inline(always)]
        unsafe fn merge(t: usize, x: __m512i, y: __m512i) -> (__m512i, __m512i) {
            merge8(t, x, y)
        }
        #[inline(always)]
        unsafe fn relayout(from: usize, to: usize, x: __m512i, y: __m512i) -> (__m512i, __m512i) {
            match (from, to) {
                (4, 2) => permute_pair(&RELAYOUT_4_2, x, y),
                (2, 1) => permute_pair(&RELAYOUT_2_1, x, y),
                (1, 2) => permute_pair(&RELAYOUT_1_2, x, y),
                (2, 4) => permute_pair(&RELAYOUT_2_4, x, y),
                _ => {
                    let (v0, v1) = merge8(from, x, y);
                    split8(to, v0, v1)
                }
            }
        }
        #[inline(always)]
        unsafe fn load_twiddles(t: usize, p: *const u64) -> __m512i {
            match t {
                4 => _mm512_broadcast_i64x2(_mm_loadu_si128(p as *const __m128i)),
                2 => _mm512_broadcast_i64x4(_mm256_loadu_si256(p as *const __m256i)),
                _ => _mm512_loadu_si512(p as *const __m512i),
            }
        }
    };
}

/// Lane methods common to both 8-lane integer kernels; they differ only in the Shoup product.
macro_rules! impl_lanes_512 {
    ($ty:ty, $shoup:ident, $word_bits:expr, $exact:expr) => {
        impl_lanes_512!($ty, $shoup, $word_bits, $exact, {});
    };
    ($ty:ty, $shoup:ident, $word_bits:expr, $exact:expr, { $($extra:item)* }) => {
        impl Lanes for $ty {
            type V = __m512i;
            const L: usize = 8;
            const WORD_BITS: u32 = $word_bits;
            const RAW_BELOW_2Q: bool = $exact;
            lanes_512_moves!();
            #[inline(always)]
            unsafe fn add(a: __m512i, b: __m512i) -> __m512i {
                _mm512_add_epi64(a, b)
            }
            #[inline(always)]
            unsafe fn sub(a: __m512i, b: __m512i) -> __m512i {
                _mm512_sub_epi64(a, b)
            }
            #[inline(always)]
            unsafe fn min(a: __m512i, b: __m512i) -> __m512i {
                _mm512_min_epu64(a, b)
            }
            #[inline(always)]
            unsafe fn mul_shoup_raw(y: __m512i, w: __m512i, ws: __m512i, q: __m512i) -> __m512i {
                $shoup(y, w, ws, q)
            }
            const MUL_LO: bool = true;
            #[inline(always)]
            unsafe fn sub_top_multiple(x: __m512i, s: __m512i, q: __m512i) -> __m512i {
                _mm512_sub_epi64(x, _mm512_mullo_epi64(_mm512_srlv_epi64(x, s), q))
            }
            $($extra)*
        }
    };
}

// ---------------------------------------------------------------------------------------------
// AVX-512F/DQ: 64-bit Shoup products.
// ---------------------------------------------------------------------------------------------

pub(crate) struct Avx512;

/// The 64-bit Shoup product `y * w - q * floor(y * ws / 2^64)` (approximate quotient) in
/// `[0, 4q)`, for any `y < 2^64` and `w < q`; also used by the element-wise products.
#[inline(always)]
pub(crate) unsafe fn shoup64_512(y: __m512i, w: __m512i, ws: __m512i, q: __m512i) -> __m512i {
    shoup_lazy_approx!(
        _mm512_mul_epu32,
        _mm512_shuffle_epi32,
        _mm512_srli_epi64,
        _mm512_add_epi64,
        _mm512_sub_epi64,
        _mm512_mullo_epi64,
        y,
        w,
        ws,
        q
    )
}

/// [`shoup64_512`] given `y_hi` and `ws_hi`, whose lanes' low 32 bits hold the high halves of
/// `y` and `ws`.
#[inline(always)]
unsafe fn shoup64_512_split(
    y: __m512i,
    y_hi: __m512i,
    w: __m512i,
    ws: __m512i,
    ws_hi: __m512i,
    q: __m512i,
) -> __m512i {
    shoup_lazy_approx!(
        _mm512_mul_epu32,
        _mm512_shuffle_epi32,
        _mm512_srli_epi64,
        _mm512_add_epi64,
        _mm512_sub_epi64,
        _mm512_mullo_epi64,
        y,
        y_hi,
        w,
        ws,
        ws_hi,
        q
    )
}

impl_lanes_512!(Avx512, shoup64_512, 64, false, {
    const SPLIT_HIGH: bool = true;
    #[inline(always)]
    unsafe fn high(y: __m512i) -> __m512i {
        _mm512_shuffle_epi32::<0b1011_0001>(y)
    }
    /// A load at 4 bytes' offset: lane `i`'s low half is word `i`'s high half, and the load
    /// reads the 4 bytes after the `L` words (the drivers keep it off an array's last vector).
    /// A masked load that stays inside the words measured 9 % slower (forward 60-bit NTT at
    /// 2^16: 187 against 170 us); this one straddles two cache lines and still saves 1.5 %.
    #[inline(always)]
    unsafe fn load_high(p: *const u64) -> __m512i {
        _mm512_loadu_si512((p as *const u8).add(4) as *const __m512i)
    }
    /// Loads at 4 bytes' offset (the tables carry one word of padding for the last one).
    #[inline(always)]
    unsafe fn load_twiddles_high(t: usize, p: *const u64) -> __m512i {
        let p = (p as *const u8).add(4);
        match t {
            4 => _mm512_broadcast_i32x4(_mm_loadu_si128(p as *const __m128i)),
            2 => _mm512_broadcast_i64x4(_mm256_loadu_si256(p as *const __m256i)),
            _ => _mm512_loadu_si512(p as *const __m512i),
        }
    }
    #[inline(always)]
    unsafe fn mul_shoup_split(
        y: __m512i,
        yh: __m512i,
        w: __m512i,
        ws: __m512i,
        wsh: __m512i,
        q: __m512i,
    ) -> __m512i {
        shoup64_512_split(y, yh, w, ws, wsh, q)
    }
});

#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) unsafe fn butterflies_avx512(q: u64, w: u64, ws: u64, iters: usize) -> (u64, usize) {
    lanes::butterfly_loop::<Avx512>(q, w, ws, iters)
}

#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) unsafe fn forward_avx512(a: &mut [u64], t: &Tables, q: u64) {
    lanes::forward::<Avx512>(a, t, q)
}

#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) unsafe fn inverse_avx512(a: &mut [u64], src: Option<&[u64]>, t: &Tables, q: u64) {
    lanes::inverse::<Avx512>(a, src, t, q)
}

// ---------------------------------------------------------------------------------------------
// AVX-512F with residues as doubles (moduli below 2^50), for CPUs without IFMA
// ---------------------------------------------------------------------------------------------

/// [`Avx2F64`] on eight lanes: the signed regime of [`super::lanes`] for moduli below 2^50 on
/// AVX-512F, whose integer kernel has no 64-bit high multiply (its Shoup product takes five
/// multiplies). The same operations in the same order as [`mul_signed_256`],
/// [`reduce_signed_256`] and [`export_canonical_256`], so the same exactness argument holds
/// lane for lane. IFMA's 52-bit products, where the CPU has them, remain the `avx512-ifma`
/// kernel.
pub(crate) struct Avx512F64;

#[inline(always)]
unsafe fn pd512(v: __m512i) -> __m512d {
    _mm512_castsi512_pd(v)
}

#[inline(always)]
unsafe fn si512(v: __m512d) -> __m512i {
    _mm512_castpd_si512(v)
}

/// The double of a `u64` below 2^52.
#[inline(always)]
unsafe fn u52_to_f64_512(v: __m512i) -> __m512d {
    let magic = _mm512_set1_epi64(MAGIC52);
    _mm512_sub_pd(pd512(_mm512_or_si512(v, magic)), pd512(magic))
}

/// [`mul_signed_256`] on eight lanes.
#[inline(always)]
pub(crate) unsafe fn mul_signed_512(y: __m512i, w: __m512i, ws: __m512i, q: __m512i) -> __m512i {
    let (yd, wd, wsd, qd) = (pd512(y), pd512(w), pd512(ws), u52_to_f64_512(q));
    let h = _mm512_mul_pd(yd, wd);
    let l = _mm512_fmsub_pd(yd, wd, h);
    let qt = _mm512_roundscale_pd::<ROUND_NEAREST>(_mm512_mul_pd(yd, wsd));
    si512(_mm512_add_pd(_mm512_fnmadd_pd(qt, qd, h), l))
}

/// [`reduce_signed_256`] on eight lanes.
#[inline(always)]
pub(crate) unsafe fn reduce_signed_512(x: __m512i, q: __m512i) -> __m512i {
    let qd = u52_to_f64_512(q);
    let qinv = _mm512_div_pd(_mm512_set1_pd(1.0), qd);
    let qt = _mm512_roundscale_pd::<ROUND_NEAREST>(_mm512_mul_pd(pd512(x), qinv));
    si512(_mm512_fnmadd_pd(qt, qd, pd512(x)))
}

/// [`export_canonical_256`] on eight lanes.
#[inline(always)]
pub(crate) unsafe fn export_canonical_512(x: __m512i, q: __m512i) -> __m512i {
    let qd = u52_to_f64_512(q);
    let r = pd512(reduce_signed_512(x, q));
    let negative = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(r, _mm512_setzero_pd());
    let r = _mm512_mask_add_pd(r, negative, r, qd);
    let magic = _mm512_set1_epi64(MAGIC52);
    _mm512_sub_epi64(si512(_mm512_add_pd(r, pd512(magic))), magic)
}

impl Lanes for Avx512F64 {
    type V = __m512i;
    const L: usize = 8;
    const WORD_BITS: u32 = 52;
    const RAW_BELOW_2Q: bool = false;
    const SIGNED: bool = true;
    lanes_512_moves!();
    #[inline(always)]
    unsafe fn add(a: __m512i, b: __m512i) -> __m512i {
        si512(_mm512_add_pd(pd512(a), pd512(b)))
    }
    #[inline(always)]
    unsafe fn sub(a: __m512i, b: __m512i) -> __m512i {
        si512(_mm512_sub_pd(pd512(a), pd512(b)))
    }
    unsafe fn min(_: __m512i, _: __m512i) -> __m512i {
        unreachable!("signed lanes have no unsigned regime")
    }
    unsafe fn mul_shoup_raw(_: __m512i, _: __m512i, _: __m512i, _: __m512i) -> __m512i {
        unreachable!("signed lanes have no unsigned regime")
    }
    #[inline(always)]
    unsafe fn import(x: __m512i) -> __m512i {
        si512(u52_to_f64_512(x))
    }
    #[inline(always)]
    unsafe fn mul_signed(y: __m512i, w: __m512i, ws: __m512i, q: __m512i) -> __m512i {
        mul_signed_512(y, w, ws, q)
    }
    #[inline(always)]
    unsafe fn reduce_signed(x: __m512i, q: __m512i) -> __m512i {
        reduce_signed_512(x, q)
    }
    #[inline(always)]
    unsafe fn export_canonical(x: __m512i, q: __m512i) -> __m512i {
        export_canonical_512(x, q)
    }
}

/// [`butterflies_avx512`] for the signed double-precision lanes (`q < 2^50`; `w` and `ws` as
/// the bits of the doubles `w` and `fl(w / q)`).
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) unsafe fn butterflies_avx512_f64(q: u64, w: u64, ws: u64, iters: usize) -> (u64, usize) {
    lanes::butterfly_loop::<Avx512F64>(q, w, ws, iters)
}

#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) unsafe fn forward_avx512_f64(a: &mut [u64], t: &Tables, q: u64) {
    lanes::forward::<Avx512F64>(a, t, q)
}

#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) unsafe fn inverse_avx512_f64(a: &mut [u64], src: Option<&[u64]>, t: &Tables, q: u64) {
    lanes::inverse::<Avx512F64>(a, src, t, q)
}

// ---------------------------------------------------------------------------------------------
// AVX-512 IFMA: 52-bit Shoup products (q < 2^50, all lazy values < 4q < 2^52).
// ---------------------------------------------------------------------------------------------

pub(crate) struct Avx512Ifma;

#[inline(always)]
unsafe fn shoup52_512(y: __m512i, w: __m512i, ws: __m512i, q: __m512i) -> __m512i {
    let zero = _mm512_setzero_si512();
    let qhat = _mm512_madd52hi_epu64(zero, y, ws);
    let yw = _mm512_madd52lo_epu64(zero, y, w);
    let qq = _mm512_madd52lo_epu64(zero, qhat, q);
    _mm512_and_si512(
        _mm512_sub_epi64(yw, qq),
        _mm512_set1_epi64((1i64 << 52) - 1),
    )
}

// The 52-bit quotient is exact: products stay below 2q, lazy values below 2^52.
impl_lanes_512!(Avx512Ifma, shoup52_512, 52, true);

#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(crate) unsafe fn butterflies_ifma(q: u64, w: u64, ws: u64, iters: usize) -> (u64, usize) {
    lanes::butterfly_loop::<Avx512Ifma>(q, w, ws, iters)
}

#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(crate) unsafe fn forward_ifma(a: &mut [u64], t: &Tables, q: u64) {
    lanes::forward::<Avx512Ifma>(a, t, q)
}

#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(crate) unsafe fn inverse_ifma(a: &mut [u64], src: Option<&[u64]>, t: &Tables, q: u64) {
    lanes::inverse::<Avx512Ifma>(a, src, t, q)
}

// ---------------------------------------------------------------------------------------------
// AVX-512 IFMA for 64-bit words: the Shoup quotient from 52-bit high products.
// ---------------------------------------------------------------------------------------------

pub(crate) struct Avx512Ifma64;

/// The raw Shoup product `y * w - q * qhat` in `[0, 4q)` for any `y < 2^64`, `w < q < 2^62`,
/// with the 64-bit Shoup constant `ws = floor(w * 2^64 / q)` (the tables of every 64-bit
/// kernel), on a CPU with IFMA.
///
/// Why: on AVX-512F the approximate quotient `floor(y * ws / 2^64)` costs eight vector
/// operations (a swap, three 32-bit products, two shifts, two additions). IFMA's
/// `vpmadd52huq` adds the high 52 bits of a 52 x 52-bit product to an accumulator in one
/// operation, so with `y = y1 * 2^52 + y0` (`y0` is what IFMA reads of `y`, `y1 = y >> 52 <
/// 2^12`) and `ws = c * 2^12 + r` (`c = ws >> 12 < 2^52`, `r < 2^12`):
///
/// `qhat = y1 * c + floor(y0 * c / 2^52) + floor(y1 * r * 2^40 / 2^52)`
///
/// is one shift, one 64-bit low product and two fused high products (IFMA reads the low 52
/// bits of `ws << 40`, which are `r * 2^40`). Every dropped part is non-negative, so `qhat`
/// never exceeds `V = y * w / q`, and `V - qhat < 4`: the two floors drop less than 1 each,
/// `y0 * (r + frac) / 2^64 < 1` and `y1 * frac / 2^12 < 1`, where `frac = w * 2^64 / q - ws
/// < 1`. With `y * w - floor(V) * q < q` the product is below `q + 3q = 4q`, the bound of
/// [`shoup64_512`]'s raw product, in seven vector operations instead of eleven (five of them
/// multiplies either way).
#[inline(always)]
pub(crate) unsafe fn shoup64_ifma(y: __m512i, w: __m512i, ws: __m512i, q: __m512i) -> __m512i {
    let c = _mm512_srli_epi64::<12>(ws);
    let r40 = _mm512_slli_epi64::<40>(ws);
    let y1 = _mm512_srli_epi64::<52>(y);
    let qhat = _mm512_madd52hi_epu64(
        _mm512_madd52hi_epu64(_mm512_mullo_epi64(y1, c), y, c),
        y1,
        r40,
    );
    _mm512_sub_epi64(_mm512_mullo_epi64(y, w), _mm512_mullo_epi64(qhat, q))
}

impl_lanes_512!(Avx512Ifma64, shoup64_ifma, 64, false);

#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(crate) unsafe fn butterflies_ifma64(q: u64, w: u64, ws: u64, iters: usize) -> (u64, usize) {
    lanes::butterfly_loop::<Avx512Ifma64>(q, w, ws, iters)
}

#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(crate) unsafe fn forward_ifma64(a: &mut [u64], t: &Tables, q: u64) {
    lanes::forward::<Avx512Ifma64>(a, t, q)
}

#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(crate) unsafe fn inverse_ifma64(a: &mut [u64], src: Option<&[u64]>, t: &Tables, q: u64) {
    lanes::inverse::<Avx512Ifma64>(a, src, t, q)
}

/// [`lanes::mac_shoup`] with AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn mac_shoup_avx2(ys: &[&[u64]], c: &[u64], cs: &[u64], p: u64, out: &mut [u64]) {
    lanes::mac_shoup::<Avx2>(ys, c, cs, p, out)
}

/// [`lanes::mac_shoup`] with AVX-512F/DQ.
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) unsafe fn mac_shoup_avx512(
    ys: &[&[u64]],
    c: &[u64],
    cs: &[u64],
    p: u64,
    out: &mut [u64],
) {
    lanes::mac_shoup::<Avx512>(ys, c, cs, p, out)
}

/// [`lanes::mac_shoup`] with IFMA's Shoup quotient ([`shoup64_ifma`]).
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(crate) unsafe fn mac_shoup_ifma64(
    ys: &[&[u64]],
    c: &[u64],
    cs: &[u64],
    p: u64,
    out: &mut [u64],
) {
    lanes::mac_shoup::<Avx512Ifma64>(ys, c, cs, p, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ntt::Kernel;

    type RawProduct = unsafe fn(__m512i, __m512i, __m512i, __m512i) -> __m512i;

    /// The raw products of `shoup64_512` and `shoup64_ifma` against `u128` arithmetic: each is
    /// congruent to `y * w` and below `4q`, for primes of 50 to 62 bits and operands at the
    /// edges of the 52-bit split (`y` just below and at multiples of `2^52`, `y = 2^64 - 1`,
    /// `w = q - 1`), plus random ones.
    #[test]
    fn raw_shoup_products_are_below_4q() {
        let kernels = crate::simd::kernels_for_tests("raw Shoup products");
        let mut rng = crate::testutil::XorShift::new(0x1f3a);
        for bits in [50u32, 55, 59, 60, 61, 62] {
            let q = crate::primes::generate_ntt_primes(bits, 16, 1, &[]).unwrap()[0];
            let mut ys = vec![0u64, 1, (1 << 52) - 1, 1 << 52, (1 << 52) + 1, u64::MAX];
            ys.extend([
                u64::MAX - (1 << 52),
                (4095 << 52) - 1,
                q.saturating_mul(16) - 1,
                q.saturating_mul(4) - 1,
            ]);
            ys.extend((0..2000).map(|_| rng.next_u64()));
            let mut ws = vec![0u64, 1, q - 1, q / 2, q - 2];
            ws.extend((0..200).map(|_| rng.next_u64() % q));
            for &w in &ws {
                let wsh = (((w as u128) << 64) / q as u128) as u64;
                for chunk in ys.chunks(8) {
                    let mut y8 = [0u64; 8];
                    y8[..chunk.len()].copy_from_slice(chunk);
                    let products: [(Kernel, RawProduct); 2] = [
                        (Kernel::Avx512, shoup64_512),
                        (Kernel::Avx512Ifma, shoup64_ifma),
                    ];
                    for (kernel, product) in products {
                        if !kernels.contains(&kernel) {
                            continue;
                        }
                        let mut out = [0u64; 8];
                        // SAFETY: the kernel's features are present (`kernels_for_tests`).
                        unsafe {
                            let r = product(
                                _mm512_loadu_si512(y8.as_ptr() as *const __m512i),
                                _mm512_set1_epi64(w as i64),
                                _mm512_set1_epi64(wsh as i64),
                                _mm512_set1_epi64(q as i64),
                            );
                            _mm512_storeu_si512(out.as_mut_ptr() as *mut __m512i, r);
                        }
                        for (&y, &t) in y8.iter().zip(&out) {
                            let want = (y as u128 * w as u128 % q as u128) as u64;
                            assert!(
                                (t as u128) < 4 * q as u128 && t % q == want,
                                "{}: q = {q}, y = {y}, w = {w}: {t}",
                                kernel.name()
                            );
                        }
                    }
                }
            }
        }
    }
}
