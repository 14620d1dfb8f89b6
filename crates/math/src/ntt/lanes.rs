//! One radix-2 negacyclic NTT algorithm, written once over a vector-lane abstraction.
//!
//! The scalar, AVX2, AVX-512 and AVX-512 IFMA kernels are this same code instantiated with a
//! different [`Lanes`] implementation; the only per-ISA pieces are the lane primitives, the
//! Shoup product, and the shuffles used when a butterfly's stride `t` is smaller than the vector
//! width. Every kernel ends with the same canonical reduction, so all produce the same bits.
//!
//! ## Lazy reduction (Harvey), two regimes for the forward transform
//! The raw Shoup product `t = y*w - qhat*q` lies in `[0, 4q)` for any `y` below the word size
//! (`[0, 2q)` when the kernel computes the exact quotient; see `x86::shoup_lazy_approx`).
//!
//! * **Narrow** (any `q`, values in `[0, 4q)`): `x <- x mod 2q`, `t <- t mod 2q`, outputs
//!   `x + t` and `x - t + 2q`.
//! * **Wide** (when `16q` fits the lane word, e.g. `q < 2^60` for 64-bit lanes): values stay in
//!   `[0, 16q)` and no correction of `t` is needed. Stages alternate between *keep* (`x < 12q`
//!   is used as is; outputs `x + t`, `x - t + 4q` are `< 16q`) and *reduce* (`x < 16q` becomes
//!   `x mod 8q < 8q`; outputs `< 12q`). Starting from canonical input (`< q`) with a keep stage,
//!   the invariant alternates `< 12q`, `< 16q`, ... This removes about three vector operations
//!   per butterfly against the narrow form: the transform is bound by butterfly arithmetic.
//!   Stage 1 keeps too (its input is below `8q`, its outputs below `12q`): one reduction
//!   fewer per transform.
//! * **Middle** (when `8q` fits but `16q` does not, e.g. `2^60 <= q < 2^61` for 64-bit lanes:
//!   the 61-bit special primes of the `ark` presets): every stage but the first reduces
//!   `x <- x mod 4q`; with the raw product `t < 4q` the outputs `x + t`, `x - t + 4q` stay
//!   below `8q`. Against the narrow form this drops the correction of `t` and its `2q` bias
//!   arithmetic: two vector operations per butterfly.
//!
//! The inverse (Gentleman-Sande, bit-reversed in, natural out) folds the `N^{-1}` scaling into
//! its last stage and has two regimes too:
//!
//! * **Narrow** (any `q`): values in `[0, 2q)`; `s = (x + y) mod 2q`, `d = (x - y + 2q) * w`
//!   with the raw product corrected to `[0, 2q)`.
//! * **Wide** (when `8q` fits the lane word: `q < 2^61`, or `q < 2^49` for IFMA's 52-bit
//!   words): values in `[0, 4q)`; `s = (x + y) mod 4q < 4q`, and `d = (x - y + 4q) * w` is
//!   the raw product, below `4q` for any Shoup input below the word size (`x - y + 4q < 8q`),
//!   so it needs no correction: two vector operations fewer per butterfly. The last stage's
//!   Shoup inputs (`x + y`, `x - y + 4q`) are below `8q` too and are reduced to `[0, q)`.
//!
//! ## High halves from memory (AVX-512F)
//!
//! The AVX-512F Shoup product builds `y * ws` from 32 x 32-bit multiplies, which read the low
//! half of each 64-bit lane: the high halves of `y` and `ws` cost a shift each. Where `y` or
//! `ws` is in memory the driver reads the high halves with a load at a 4-byte offset instead
//! ([`Lanes::load_high`], [`Lanes::load_twiddles_high`]): lane `i` of that load starts with
//! word `i`'s high half. Loads go to the load ports, not to the vector pipes the butterfly is
//! bound by. The load reads 4 bytes past its `L` words, so an array's last vector takes the
//! shift, and the twiddle tables carry one word of padding.
//!
//! ## The signed regime (double-precision lanes)
//!
//! Lanes that hold residues as doubles ([`Lanes::SIGNED`], AVX2 with FMA for `q < 2^50`) keep
//! signed values, exact integers below 2^53 in magnitude, instead of lazy unsigned ones. The
//! product `t = y*w mod q` comes out of the FMA units in `(-1.5q, 1.5q)` for any `|y| < 4q`
//! with no correction and no conversion, so a forward butterfly is `(x + t, x - t)` and needs
//! no bias: the stages alternate *keep* (as is) and *reduce* (`x <- x - round(x/q) q`, one
//! product, one rounding and one FMA, to `|x| <= q/2 + 1`), as the wide regime does. From
//! canonical input with a keep stage the magnitudes stay below `2.5q`, `2q`, `3.5q`, `2q`, ...
//! The inverse reduces each sum (`|s| <= q/2 + 1`, `|d| < 1.5q`, so every Shoup input is
//! below `3q + 1`). Residues enter as doubles where the first stage loads them
//! ([`Lanes::import`]) and leave canonical as `u64` in the last stage
//! ([`Lanes::export_canonical`]). Per butterfly that is
//! about ten vector operations against eighteen for the lazy unsigned form with a
//! double-precision product.
//!
//! Cache blocking: stages whose butterfly span exceeds [`BLOCK`] words sweep the whole limb;
//! the remaining stages run block by block so the block stays in L1. The stages of stride `L`
//! and below run as one in-register pass per two vectors ([`narrow_strides`]): the vectors are
//! split into butterfly order once, moved from one stride's lane order to the next by a single
//! two-source permute pair ([`Lanes::relayout`]), and merged once, with six chunks (four on
//! AVX2) interleaved so the out-of-order core overlaps their serial chains. On the 8-lane
//! kernels the forward pass also takes stride `2L`, between the two chunks of each pair
//! ([`from_2l`]), which saves that stage a store and a load of every word. The forward
//! transform's final canonical reduction is fused into that pass; in the wide regime its last
//! stage reduces `x` and the product to `[0, q)` before the butterfly, so each output needs
//! one correction. For a modulus within `2^s / 16` below `2^s` (`s` its bit length; NTT
//! primes are the largest below a power of two) the 8-lane kernels take `x` to `[0, 2q)` as
//! `x - (x >> s) q` ([`final_wide`]). (A radix-4 variant that fuses two wide stages per sweep was measured and
//! dropped: on Zen 4 the kernel is bound by butterfly arithmetic, not by loads and stores, and
//! radix-4 was 0-5% slower. See docs/benchmarks.md.)

use super::tables::{StageTwiddles, Tables};

/// Words per L1-resident block (16 KiB of 64-bit words).
pub(crate) const BLOCK: usize = 2048;

/// Vector-lane primitives over 64-bit unsigned integers.
///
/// # Safety
/// Implementations use ISA intrinsics; callers must only instantiate the driver with an
/// implementation whose target features are available (checked by `Kernel::supports`).
pub(crate) trait Lanes {
    type V: Copy;
    /// Number of 64-bit lanes.
    const L: usize;
    /// Bits a lazy value may occupy (64, or 52 for IFMA whose multipliers read 52-bit inputs).
    const WORD_BITS: u32;
    /// Whether [`Lanes::mul_shoup_raw`] already returns values below `2q`.
    const RAW_BELOW_2Q: bool;
    /// Whether the lanes hold signed doubles (the signed regime of the module documentation):
    /// then [`Lanes::add`] and [`Lanes::sub`] are exact double additions, the four methods
    /// below replace the lazy unsigned corrections, and [`Lanes::min`] and
    /// [`Lanes::mul_shoup_raw`] are never called.
    const SIGNED: bool = false;
    /// A residue below 2^52, as stored in memory, as a lane value (signed lanes convert it to
    /// a double).
    #[inline(always)]
    unsafe fn import(x: Self::V) -> Self::V {
        x
    }
    /// Signed lanes: a value congruent to `y*w` in `(-1.5q, 1.5q)`, for `|y| < 4q`.
    #[inline(always)]
    unsafe fn mul_signed(_y: Self::V, _w: Self::V, _ws: Self::V, _q: Self::V) -> Self::V {
        unreachable!("only signed lanes run the signed regime")
    }
    /// Signed lanes: `x - round(x / q) q`, a value congruent to `x` with magnitude at most
    /// `q/2 + 1`, for `|x| < 4q`.
    #[inline(always)]
    unsafe fn reduce_signed(_x: Self::V, _q: Self::V) -> Self::V {
        unreachable!("only signed lanes run the signed regime")
    }
    /// Signed lanes: `x mod q` in `[0, q)` as a `u64` word, for `|x| < 4q`.
    #[inline(always)]
    unsafe fn export_canonical(_x: Self::V, _q: Self::V) -> Self::V {
        unreachable!("only signed lanes run the signed regime")
    }
    unsafe fn load(p: *const u64) -> Self::V;
    unsafe fn store(p: *mut u64, v: Self::V);
    unsafe fn splat(x: u64) -> Self::V;
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn sub(a: Self::V, b: Self::V) -> Self::V;
    /// Unsigned minimum; `min(x, x - m)` reduces `x in [0, 2m)` to `[0, m)`.
    unsafe fn min(a: Self::V, b: Self::V) -> Self::V;
    /// `x mod m` for `x < 2m`, where `m <= 2^63` (every `m` the drivers pass: `2q`, and `4q`,
    /// `8q` only in the wide regime, where `16q < 2^64`). By default `min(x, x - m)`; a lane
    /// type without an unsigned minimum may select on the sign bit of `x - m` instead, which is
    /// set exactly when `x < m` under that bound.
    #[inline(always)]
    unsafe fn small_mod(x: Self::V, m: Self::V) -> Self::V {
        Self::min(x, Self::sub(x, m))
    }
    /// Whether the lanes have a 64-bit low multiply for [`Lanes::sub_top_multiple`].
    const MUL_LO: bool = false;
    /// `x - (x >> s) * q` (the shift count `s` in every lane): below `2q` for any `x < 16q`
    /// when `q` is within `2^s / 16` below `2^s` (see [`Consts::near`]).
    #[inline(always)]
    unsafe fn sub_top_multiple(_x: Self::V, _s: Self::V, _q: Self::V) -> Self::V {
        unreachable!("only lanes with a 64-bit low multiply take the near-2^s reduction")
    }
    /// Shoup product, a value congruent to `y*w` in `[0, 4q)` (`y < 2^WORD_BITS`).
    unsafe fn mul_shoup_raw(y: Self::V, w: Self::V, ws: Self::V, q: Self::V) -> Self::V;
    /// The high 32 bits of each lane of `y` in the lane's low 32 bits (the rest arbitrary):
    /// what a Shoup product built from 32 x 32-bit multiplies reads of `y`'s high half. Lane
    /// types whose product takes whole words return `y`, which [`Lanes::mul_shoup_split`]
    /// ignores.
    #[inline(always)]
    unsafe fn high(y: Self::V) -> Self::V {
        y
    }
    /// Whether [`Lanes::mul_shoup_split`] reads `yh` and `wsh` (then the drivers load them
    /// from memory where they can).
    const SPLIT_HIGH: bool = false;
    /// [`Lanes::high`] of the `L` words at `p`, read from memory: a load at a 4-byte offset
    /// takes the place of the shift, a load port's work instead of a vector pipe's. May read
    /// the 4 bytes after the `L` words, so never for the last vector of an array.
    #[inline(always)]
    unsafe fn load_high(p: *const u64) -> Self::V {
        Self::high(Self::load(p))
    }
    /// [`Lanes::high`] of the word at `p` in every lane, read from memory.
    #[inline(always)]
    unsafe fn splat_high(p: *const u64) -> Self::V {
        Self::high(Self::splat(*p))
    }
    /// [`Lanes::high`] of [`Lanes::load_twiddles`], read from memory; may read the 4 bytes
    /// after the `L/t` twiddles.
    #[inline(always)]
    unsafe fn load_twiddles_high(t: usize, p: *const u64) -> Self::V {
        Self::high(Self::load_twiddles(t, p))
    }
    /// [`Lanes::mul_shoup_raw`] given `yh = high(y)` and `wsh = high(ws)` (the same value,
    /// with fewer operations when they came from memory).
    #[inline(always)]
    unsafe fn mul_shoup_split(
        y: Self::V,
        _yh: Self::V,
        w: Self::V,
        ws: Self::V,
        _wsh: Self::V,
        q: Self::V,
    ) -> Self::V {
        Self::mul_shoup_raw(y, w, ws, q)
    }
    /// From two consecutive vectors (2L words), gather the butterfly inputs of stride `t < L`
    /// as (all x, all y), in the kernel's lane order for that stride.
    unsafe fn split(t: usize, v0: Self::V, v1: Self::V) -> (Self::V, Self::V);
    /// The twiddles of the `L/t` consecutive blocks of a stride-`t < L` chunk, laid out in the
    /// lane order of [`Lanes::split`]; `p` points at the first block's twiddle.
    unsafe fn load_twiddles(t: usize, p: *const u64) -> Self::V;
    /// Inverse of [`Lanes::split`].
    unsafe fn merge(t: usize, x: Self::V, y: Self::V) -> (Self::V, Self::V);
    /// From the (x, y) lane order of stride `from` (after its butterflies) straight to that of
    /// stride `to` (both `< L`): `split(to, merge(from, x, y))` without the round trip through
    /// natural order.
    #[inline(always)]
    unsafe fn relayout(from: usize, to: usize, x: Self::V, y: Self::V) -> (Self::V, Self::V) {
        let (v0, v1) = Self::merge(from, x, y);
        Self::split(to, v0, v1)
    }
}

/// Broadcast multiples of the modulus.
#[derive(Clone, Copy)]
struct Consts<V> {
    q: V,
    q2: V,
    q4: V,
    q8: V,
    /// Whether `q` lies within `2^s / 16` below `2^s` (`s` its bit length) and the lanes can
    /// use it: then `x >> s` is `floor(x / q)` or one less for any `x < 16q`, and the wide
    /// regime's canonical output takes `x - (x >> s) q` and one correction instead of four
    /// (NTT primes are chosen as the largest below a power of two, so they all are).
    near: bool,
    /// `s` in every lane.
    shift: V,
}

impl<V: Copy> Consts<V> {
    #[inline(always)]
    unsafe fn new<S: Lanes<V = V>>(q: u64) -> Self {
        // `4q` and `8q` are only read in the wide regimes, where `16q` fits the lane word; for
        // larger moduli (up to 2^62) they wrap unused.
        Self {
            q: S::splat(q),
            q2: S::splat(2 * q),
            q4: S::splat(q.wrapping_mul(4)),
            q8: S::splat(q.wrapping_mul(8)),
            near: S::MUL_LO && is_near_power_of_two(q),
            shift: S::splat(u64::from(u64::BITS - q.leading_zeros())),
        }
    }
}

/// Whether `16 (2^s - q) < 2^s` for `q`'s bit length `s`: then for every `x < 16q`,
/// `floor(x / q) - (x >> s) <= 1`, because `x / q - x / 2^s = x (2^s - q) / (q 2^s) < 1`.
///
/// ```text
/// q = 2^60 - 2^18 + 1: near;  q = 3 * 2^58 + 1: not near (16 (2^60 - q) = 4 * 2^60)
/// ```
const fn is_near_power_of_two(q: u64) -> bool {
    let s = u64::BITS - q.leading_zeros();
    if s == 0 || s >= 64 {
        return false;
    }
    let top = 1u128 << s;
    16 * (top - q as u128) < top
}

/// A twiddle as the butterflies read it: `w`, its Shoup quotient `ws`, and `wsh =
/// high(ws)`, read from memory where the tables are (see [`Lanes::high`]).
#[derive(Clone, Copy)]
struct Twiddle<V> {
    w: V,
    ws: V,
    wsh: V,
}

impl<V: Copy> Twiddle<V> {
    /// Twiddle `idx` of a stage in every lane.
    #[inline(always)]
    unsafe fn splat<S: Lanes<V = V>>(tw: &StageTwiddles, idx: usize) -> Self {
        let ws = tw.ws.as_ptr().add(idx);
        Self {
            w: S::splat(*tw.w.get_unchecked(idx)),
            ws: S::splat(*ws),
            wsh: S::splat_high(ws),
        }
    }
    /// A constant held in registers.
    #[inline(always)]
    unsafe fn constant<S: Lanes<V = V>>(w: V, ws: V) -> Self {
        Self {
            w,
            ws,
            wsh: S::high(ws),
        }
    }
}

/// Forward butterfly regimes (see the module documentation).
const NARROW: u8 = 0;
const WIDE_KEEP: u8 = 1;
const WIDE_REDUCE: u8 = 2;
/// The first forward stage of signed lanes: a keep stage that brings its inputs in as lane
/// values ([`Lanes::import`]) as it loads them.
const SIGNED_IMPORT: u8 = 3;
/// The reduce stage of the middle regime (`8q` fits the lane word but `16q` does not):
/// `x <- x mod 4q`, then the raw product as in the wide regime.
const MID_REDUCE: u8 = 4;

/// Capacities of the forward regimes: the multiple of `q` that bounds every lazy value
/// between stages (see the module documentation).
const NARROW_CAP: u8 = 4;
const MID_CAP: u8 = 8;
const WIDE_CAP: u8 = 16;

#[inline(always)]
unsafe fn small_mod<S: Lanes>(x: S::V, m: S::V) -> S::V {
    S::small_mod(x, m)
}

/// Shoup product in `[0, 2q)`.
#[inline(always)]
unsafe fn mul_shoup_lazy<S: Lanes>(y: S::V, w: S::V, ws: S::V, k: &Consts<S::V>) -> S::V {
    mul_shoup_lazy_split::<S>(y, S::high(y), Twiddle::constant::<S>(w, ws), k)
}

/// [`mul_shoup_lazy`] given `yh = S::high(y)`.
#[inline(always)]
unsafe fn mul_shoup_lazy_split<S: Lanes>(
    y: S::V,
    yh: S::V,
    c: Twiddle<S::V>,
    k: &Consts<S::V>,
) -> S::V {
    let t = S::mul_shoup_split(y, yh, c.w, c.ws, c.wsh, k.q);
    if S::RAW_BELOW_2Q {
        t
    } else {
        small_mod::<S>(t, k.q2)
    }
}

/// Lazy value to `[0, q)` from `[0, CAP q)` (`CAP` = 4, 8 or 16).
#[inline(always)]
unsafe fn canonical<S: Lanes, const CAP: u8>(x: S::V, k: &Consts<S::V>) -> S::V {
    if S::SIGNED {
        return S::export_canonical(x, k.q);
    }
    let x = if CAP == WIDE_CAP {
        small_mod::<S>(x, k.q8)
    } else {
        x
    };
    let x = if CAP >= MID_CAP {
        small_mod::<S>(x, k.q4)
    } else {
        x
    };
    small_mod::<S>(small_mod::<S>(x, k.q2), k.q)
}

/// Cooley-Tukey butterfly in regime `M`.
#[inline(always)]
unsafe fn ct<S: Lanes, const M: u8>(
    x: S::V,
    y: S::V,
    yh: S::V,
    c: Twiddle<S::V>,
    k: &Consts<S::V>,
) -> (S::V, S::V) {
    if S::SIGNED {
        let (x, y) = if M == SIGNED_IMPORT {
            (S::import(x), S::import(y))
        } else {
            (x, y)
        };
        let x = if M == WIDE_REDUCE {
            S::reduce_signed(x, k.q)
        } else {
            x
        };
        let t = S::mul_signed(y, c.w, c.ws, k.q);
        return (S::add(x, t), S::sub(x, t));
    }
    if M == NARROW {
        let x = small_mod::<S>(x, k.q2);
        let t = mul_shoup_lazy_split::<S>(y, yh, c, k);
        (S::add(x, t), S::add(S::sub(x, t), k.q2))
    } else {
        let x = match M {
            WIDE_REDUCE => small_mod::<S>(x, k.q8),
            MID_REDUCE => small_mod::<S>(x, k.q4),
            _ => x,
        };
        let t = S::mul_shoup_split(y, yh, c.w, c.ws, c.wsh, k.q);
        (S::add(x, t), S::add(S::sub(x, t), k.q4))
    }
}

/// Gentleman-Sande butterfly. Narrow: inputs and outputs in `[0, 2q)`. `WIDE` (when `8q` fits
/// the lane word): inputs and outputs in `[0, 4q)`; the difference `x - y + 4q < 8q` is a valid
/// Shoup input and the raw product (below `4q`) needs no correction.
#[inline(always)]
unsafe fn gs<S: Lanes, const WIDE: bool>(
    x: S::V,
    y: S::V,
    c: Twiddle<S::V>,
    k: &Consts<S::V>,
) -> (S::V, S::V) {
    if S::SIGNED {
        let s = S::reduce_signed(S::add(x, y), k.q);
        return (s, S::mul_signed(S::sub(x, y), c.w, c.ws, k.q));
    }
    if WIDE {
        let s = small_mod::<S>(S::add(x, y), k.q4);
        let d = S::add(S::sub(x, y), k.q4);
        let d = S::mul_shoup_split(d, S::high(d), c.w, c.ws, c.wsh, k.q);
        (s, d)
    } else {
        let s = small_mod::<S>(S::add(x, y), k.q2);
        let d = S::add(S::sub(x, y), k.q2);
        let d = mul_shoup_lazy_split::<S>(d, S::high(d), c, k);
        (s, d)
    }
}

/// One butterfly of a stage: forward in regime `M` (canonical outputs with `FINAL`), or inverse.
#[inline(always)]
unsafe fn bfly<S: Lanes, const FWD: bool, const M: u8, const FINAL: bool>(
    x: S::V,
    y: S::V,
    yh: S::V,
    c: Twiddle<S::V>,
    k: &Consts<S::V>,
) -> (S::V, S::V) {
    if FWD {
        if FINAL && !S::SIGNED && (M == WIDE_KEEP || M == WIDE_REDUCE) {
            // This also covers the middle regime's stage 0 when it is final (N = 2, scalar
            // kernel, canonical input).
            return final_wide::<S, false>(x, y, yh, c, k);
        }
        let (x, y) = ct::<S, M>(x, y, yh, c, k);
        if FINAL {
            match M {
                NARROW => (
                    canonical::<S, NARROW_CAP>(x, k),
                    canonical::<S, NARROW_CAP>(y, k),
                ),
                MID_REDUCE => (canonical::<S, MID_CAP>(x, k), canonical::<S, MID_CAP>(y, k)),
                _ => (
                    canonical::<S, WIDE_CAP>(x, k),
                    canonical::<S, WIDE_CAP>(y, k),
                ),
            }
        } else {
            (x, y)
        }
    } else if M == NARROW {
        gs::<S, false>(x, y, c, k)
    } else {
        gs::<S, true>(x, y, c, k)
    }
}

/// The wide regime's last forward butterfly: `x < 16q` and the product to `[0, q)` first,
/// then one correction per output (19 operations against 21 for a reduce stage and two
/// canonical reductions from `16q`). With `NEAR` ([`Consts::near`], lanes with
/// [`Lanes::MUL_LO`]) `x` goes to `[0, 2q)` as `x - (x >> s) q` and takes one correction, five
/// operations in place of eight: 60-bit forward NTT at 2^16, avx512 168.4 -> 166.4 us,
/// avx512-ifma 142.5 -> 140.0 us.
#[inline(always)]
unsafe fn final_wide<S: Lanes, const NEAR: bool>(
    x: S::V,
    y: S::V,
    yh: S::V,
    c: Twiddle<S::V>,
    k: &Consts<S::V>,
) -> (S::V, S::V) {
    let x = if NEAR {
        small_mod::<S>(S::sub_top_multiple(x, k.shift, k.q), k.q)
    } else {
        canonical::<S, WIDE_CAP>(x, k)
    };
    let t = small_mod::<S>(mul_shoup_lazy_split::<S>(y, yh, c, k), k.q);
    (
        small_mod::<S>(S::add(x, t), k.q),
        small_mod::<S>(S::add(S::sub(x, t), k.q), k.q),
    )
}

/// One stage of stride `t >= L` over `a[base .. base + len)`, `len` a multiple of `2t`.
/// With `FINAL` (forward only, last stage) the outputs are reduced to canonical form in the
/// same pass instead of a separate sweep.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn stage<S: Lanes, const FWD: bool, const M: u8, const FINAL: bool>(
    a: *mut u64,
    base: usize,
    len: usize,
    t: usize,
    n: usize,
    tw: &StageTwiddles,
    k: &Consts<S::V>,
) {
    debug_assert!(
        t >= S::L,
        "strides below the vector width run in `narrow_strides`"
    );
    let m = n / (2 * t);
    let first_block = base / (2 * t);
    let last = a.add(n - S::L);
    for blk in 0..len / (2 * t) {
        let idx = m + first_block + blk;
        let c = Twiddle::splat::<S>(tw, idx);
        let p = a.add(base + 2 * blk * t);
        let mut j = 0;
        while j < t {
            let py = p.add(j + t);
            let x = S::load(p.add(j));
            let y = S::load(py);
            // `load_high` reads 4 bytes past the vector: not past the array's last one.
            let yh = if FWD && S::SPLIT_HIGH && !core::ptr::eq(py, last) {
                S::load_high(py)
            } else {
                S::high(y)
            };
            let (x, y) = bfly::<S, FWD, M, FINAL>(x, y, yh, c, k);
            S::store(p.add(j), x);
            S::store(p.add(j + t), y);
            j += S::L;
        }
    }
}

/// One forward butterfly of the regime of capacity `CAP`: keep or reduce (middle and wide), or
/// narrow.
#[inline(always)]
unsafe fn forward_bfly<S: Lanes, const CAP: u8, const KEEP: bool, const FINAL: bool>(
    x: S::V,
    y: S::V,
    yh: S::V,
    c: Twiddle<S::V>,
    k: &Consts<S::V>,
) -> (S::V, S::V) {
    if CAP == NARROW_CAP {
        bfly::<S, true, NARROW, FINAL>(x, y, yh, c, k)
    } else if KEEP {
        bfly::<S, true, WIDE_KEEP, FINAL>(x, y, yh, c, k)
    } else if CAP == MID_CAP {
        bfly::<S, true, MID_REDUCE, FINAL>(x, y, yh, c, k)
    } else {
        bfly::<S, true, WIDE_REDUCE, FINAL>(x, y, yh, c, k)
    }
}

/// The inverse butterfly of the regime of capacity `CAP` (wide from `8q`).
#[inline(always)]
unsafe fn inverse_bfly<S: Lanes, const CAP: u8>(
    x: S::V,
    y: S::V,
    c: Twiddle<S::V>,
    k: &Consts<S::V>,
) -> (S::V, S::V) {
    if CAP >= MID_CAP {
        gs::<S, true>(x, y, c, k)
    } else {
        gs::<S, false>(x, y, c, k)
    }
}

/// The twiddles of a narrow (stride `t < L`) stage for the split pair whose chunk starts at
/// word `at`, in the lane order of [`Lanes::split`].
#[inline(always)]
unsafe fn narrow_twiddles<S: Lanes>(
    t: usize,
    at: usize,
    n: usize,
    tw: &StageTwiddles,
) -> Twiddle<S::V> {
    let first = n / (2 * t) + at / (2 * t);
    let ws = tw.ws.as_ptr().add(first);
    Twiddle {
        w: S::load_twiddles(t, tw.w.as_ptr().add(first)),
        ws: S::load_twiddles(t, ws),
        wsh: S::load_twiddles_high(t, ws),
    }
}

/// The stages of stride `L` and below (`L .. 1` forward, `1 .. L` inverse; `L` = 4 or 8) over
/// `a[base .. base + len)` in one in-register pass per two vectors: split once, go from one
/// stride's lane order to the next with [`Lanes::relayout`], merge once. Per two vectors that
/// is `2 log2 L + 2` permutes instead of `4 log2 L` for separate stages, and no intermediate
/// loads or stores. The forward pass ends with the canonical reduction.
#[inline(always)]
unsafe fn narrow_strides<
    S: Lanes,
    const FWD: bool,
    const CAP: u8,
    const KEEP: bool,
    const FLIP: bool,
    const FROM_2L: bool,
    const NEAR: bool,
>(
    a: *mut u64,
    src: *const u64,
    base: usize,
    len: usize,
    n: usize,
    tw: &StageTwiddles,
    k: &Consts<S::V>,
) {
    // Chunks are interleaved C at a time: one chunk is a serial chain of butterflies and
    // permutes, too long for the out-of-order window to overlap on its own. Eight-lane kernels
    // take six in the forward pass (against four: 60-bit forward NTT at 2^16, avx512 -0.6 %,
    // avx512-ifma -1.4 %; eight spill, +9 %) and eight in the inverse one, which carries no
    // canonical output and no stride 2L (against six: 60-bit inverse avx512 189.3 -> 186.4 us,
    // avx512-ifma 157.3 -> 153.3 us, 50-bit double lanes 146.6 -> 143.5 us); four-lane ones
    // take four (six: AVX2 +3 %; 1, 2 and 8 measured slower).
    if S::L == 8 && !FWD {
        narrow_groups::<S, FWD, CAP, KEEP, FLIP, FROM_2L, NEAR, 8>(a, src, base, len, n, tw, k)
    } else if S::L == 8 {
        narrow_groups::<S, FWD, CAP, KEEP, FLIP, FROM_2L, NEAR, 6>(a, src, base, len, n, tw, k)
    } else {
        narrow_groups::<S, FWD, CAP, KEEP, FLIP, FROM_2L, NEAR, 4>(a, src, base, len, n, tw, k)
    }
}

/// [`narrow_strides`] with `C` chunks interleaved; the tail in pairs, then one chunk.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn narrow_groups<
    S: Lanes,
    const FWD: bool,
    const CAP: u8,
    const KEEP: bool,
    const FLIP: bool,
    const FROM_2L: bool,
    const NEAR: bool,
    const C: usize,
>(
    a: *mut u64,
    src: *const u64,
    base: usize,
    len: usize,
    n: usize,
    tw: &StageTwiddles,
    k: &Consts<S::V>,
) {
    let step = 2 * S::L * C;
    let whole = len - len % step;
    let mut c = 0;
    while c < whole {
        narrow_chunks::<S, FWD, CAP, KEEP, FLIP, FROM_2L, NEAR, C>(a, src, base + c, n, tw, k);
        c += step;
    }
    // The tail (an L1 block of 2,048 words leaves two chunks for C = 6): pairs, then one.
    while c + 4 * S::L <= len {
        narrow_chunks::<S, FWD, CAP, KEEP, FLIP, FROM_2L, NEAR, 2>(a, src, base + c, n, tw, k);
        c += 4 * S::L;
    }
    debug_assert!(!FROM_2L || c == len, "stride 2L pairs the chunks");
    while c < len {
        narrow_chunks::<S, FWD, CAP, KEEP, FLIP, FROM_2L, NEAR, 1>(a, src, base + c, n, tw, k);
        c += 2 * S::L;
    }
}

/// The forward narrow pass's first strides when it starts at `2L`: stride `2L` between the
/// chunks of each pair (in regime `KEEP`, as stride `L/2`: the same parity), then stride `L`
/// in each chunk (regime `FLIP`), split into stride `L/2`'s lane order in `x`, `y`. This saves
/// stride `2L`'s stage a store and a load of every word (60-bit forward NTT at 2^16: avx512
/// 171.5 -> 168.6 us, avx512-ifma 145.9 -> 143.9 us); its `y` is read from memory with its
/// high halves, stride `L`'s now comes from registers.
#[inline(always)]
unsafe fn from_2l<S: Lanes, const CAP: u8, const KEEP: bool, const FLIP: bool, const C: usize>(
    src: *const u64,
    at: &[usize; C],
    n: usize,
    tw: &StageTwiddles,
    k: &Consts<S::V>,
    x: &mut [S::V; C],
    y: &mut [S::V; C],
) {
    let mut v0 = [S::splat(0); C];
    let mut v1 = [S::splat(0); C];
    for i in 0..C {
        let p = src.add(at[i]);
        (v0[i], v1[i]) = (S::load(p), S::load(p.add(S::L)));
    }
    for i in (0..C).step_by(2) {
        let c = Twiddle::splat::<S>(tw, n / (4 * S::L) + at[i] / (4 * S::L));
        let p = src.add(at[i + 1]);
        let h0 = S::load_high(p);
        let h1 = if at[i + 1] + 2 * S::L == n {
            S::high(v1[i + 1])
        } else {
            S::load_high(p.add(S::L))
        };
        (v0[i], v0[i + 1]) = forward_bfly::<S, CAP, KEEP, false>(v0[i], v0[i + 1], h0, c, k);
        (v1[i], v1[i + 1]) = forward_bfly::<S, CAP, KEEP, false>(v1[i], v1[i + 1], h1, c, k);
    }
    for i in 0..C {
        let c = Twiddle::splat::<S>(tw, n / (2 * S::L) + at[i] / (2 * S::L));
        let (v0, v1) = forward_bfly::<S, CAP, FLIP, false>(v0[i], v1[i], S::high(v1[i]), c, k);
        (x[i], y[i]) = S::split(S::L / 2, v0, v1);
    }
}

/// `C` consecutive two-vector chunks from word `start`, their stages interleaved; the chunks
/// are read from `src` (`a` itself, or the source of an out-of-place transform) and written
/// to `a`.
#[inline(always)]
unsafe fn narrow_chunks<
    S: Lanes,
    const FWD: bool,
    const CAP: u8,
    const KEEP: bool,
    const FLIP: bool,
    const FROM_2L: bool,
    const NEAR: bool,
    const C: usize,
>(
    a: *mut u64,
    src: *const u64,
    start: usize,
    n: usize,
    tw: &StageTwiddles,
    k: &Consts<S::V>,
) {
    let at: [usize; C] = core::array::from_fn(|i| start + 2 * S::L * i);
    let mut x = [S::splat(0); C];
    let mut y = [S::splat(0); C];
    // Each step below runs for the C chunks. On AVX2 they are spelled out for C = 4: LLVM
    // keeps the loop over the chunks as a loop there, with x and y in stack memory between the
    // strides (forward 283.8 -> 276.4 us, inverse 308.2 -> 299.2 us, minima at 2^16). The
    // 8-lane kernels keep the loop, which measured best there.
    macro_rules! each_chunk {
        ($i:ident => $body:block) => {
            if C == 4 && S::L == 4 {
                {
                    let $i = 0;
                    $body
                }
                {
                    let $i = 1;
                    $body
                }
                {
                    let $i = 2;
                    $body
                }
                {
                    let $i = 3;
                    $body
                }
            } else {
                for $i in 0..C $body
            }
        };
    }
    let (first, last) = if FWD { (S::L / 2, 1) } else { (1, S::L / 2) };
    // Stride L (forward first, inverse last) pairs the chunk's two vectors as they are; its
    // twiddle is one per chunk.
    let wide_twiddles = |i: usize| Twiddle::splat::<S>(tw, n / (2 * S::L) + at[i] / (2 * S::L));
    if FROM_2L && FWD && C.is_multiple_of(2) {
        from_2l::<S, CAP, KEEP, FLIP, C>(src, &at, n, tw, k, &mut x, &mut y);
    } else {
        each_chunk!(i => {
            let p = src.add(at[i]);
            let (mut v0, mut v1) = (S::load(p), S::load(p.add(S::L)));
            if !FWD && S::SIGNED {
                // The inverse's first pass reads every word once: signed lanes import them here.
                (v0, v1) = (S::import(v0), S::import(v1));
            }
            if FWD {
                let v1h = if !S::SPLIT_HIGH || at[i] + 2 * S::L == n {
                    S::high(v1)
                } else {
                    S::load_high(p.add(S::L))
                };
                (v0, v1) = forward_bfly::<S, CAP, FLIP, false>(v0, v1, v1h, wide_twiddles(i), k);
            }
            (x[i], y[i]) = S::split(first, v0, v1);
        });
    }
    // One stride for all C chunks: butterflies in forward regime $keep (canonical outputs with
    // $fin), then the move to stride $next's lane order (none when $next is 0). A macro, not a
    // closure: every stride stays a compile-time constant and x, y stay in registers (a loop
    // or a closure over the strides measured 3 to 8 % slower, with spills).
    macro_rules! pass {
        ($t:literal, $keep:ident, $fin:literal, $next:literal) => {
            each_chunk!(i => {
                let c = narrow_twiddles::<S>($t, at[i], n, tw);
                (x[i], y[i]) = if FWD && NEAR && $fin {
                    final_wide::<S, true>(x[i], y[i], S::high(y[i]), c, k)
                } else if FWD {
                    forward_bfly::<S, CAP, $keep, $fin>(x[i], y[i], S::high(y[i]), c, k)
                } else {
                    inverse_bfly::<S, CAP>(x[i], y[i], c, k)
                };
                if $next != 0 {
                    (x[i], y[i]) = S::relayout($t, $next, x[i], y[i]);
                }
            });
        };
    }
    match (FWD, S::L) {
        (true, 8) => {
            pass!(4, KEEP, false, 2);
            pass!(2, FLIP, false, 1);
            pass!(1, KEEP, true, 0);
        }
        (true, _) => {
            pass!(2, KEEP, false, 1);
            pass!(1, FLIP, true, 0);
        }
        (false, 8) => {
            pass!(1, KEEP, false, 2);
            pass!(2, KEEP, false, 4);
            pass!(4, KEEP, false, 0);
        }
        (false, _) => {
            pass!(1, KEEP, false, 2);
            pass!(2, KEEP, false, 0);
        }
    }
    each_chunk!(i => {
        let (mut v0, mut v1) = S::merge(last, x[i], y[i]);
        if !FWD {
            (v0, v1) = inverse_bfly::<S, CAP>(v0, v1, wide_twiddles(i), k);
        }
        let p = a.add(at[i]);
        S::store(p, v0);
        S::store(p.add(S::L), v1);
    });
}

/// Forward negacyclic NTT in place; canonical input (< q) and canonical output (< q), in
/// bit-reversed order. `a.len()` must be a power of two with `a.len() >= 4 * S::L`.
#[inline(always)]
pub(crate) unsafe fn forward<S: Lanes>(a: &mut [u64], tables: &Tables, qv: u64) {
    let fits = |cap: u128| (qv as u128) * cap < (1u128 << S::WORD_BITS);
    if S::SIGNED {
        // Keep and reduce alternate as in the wide regime; the first stage imports.
        forward_regime::<S, WIDE_CAP>(a, tables, qv)
    } else if fits(WIDE_CAP as u128) {
        forward_regime::<S, WIDE_CAP>(a, tables, qv)
    } else if fits(MID_CAP as u128) {
        forward_regime::<S, MID_CAP>(a, tables, qv)
    } else {
        forward_regime::<S, NARROW_CAP>(a, tables, qv)
    }
}

/// Forward stage of stride `t` in the regime of capacity `CAP` (module documentation). The
/// first stages know their input is canonical (any input below `4q` would do): the wide
/// regime keeps in stages 0 and 1 (outputs below `8q`, then `12q`) and then alternates,
/// keeping in even stages; the middle regime keeps in stage 0 (outputs below `8q`) and
/// reduces in every later stage.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn forward_stage<S: Lanes, const CAP: u8, const FINAL: bool>(
    a: *mut u64,
    base: usize,
    len: usize,
    t: usize,
    n: usize,
    tw: &StageTwiddles,
    k: &Consts<S::V>,
) {
    let stage_index = (n / (2 * t)).trailing_zeros();
    if S::SIGNED && stage_index == 0 {
        stage::<S, true, SIGNED_IMPORT, FINAL>(a, base, len, t, n, tw, k)
    } else if CAP == NARROW_CAP {
        stage::<S, true, NARROW, FINAL>(a, base, len, t, n, tw, k)
    } else if CAP == MID_CAP {
        if stage_index == 0 {
            stage::<S, true, WIDE_KEEP, FINAL>(a, base, len, t, n, tw, k)
        } else {
            stage::<S, true, MID_REDUCE, FINAL>(a, base, len, t, n, tw, k)
        }
    } else if stage_index.is_multiple_of(2) || (stage_index == 1 && !S::SIGNED) {
        // Signed lanes keep their own alternation (their bounds are not the unsigned ones).
        stage::<S, true, WIDE_KEEP, FINAL>(a, base, len, t, n, tw, k)
    } else {
        stage::<S, true, WIDE_REDUCE, FINAL>(a, base, len, t, n, tw, k)
    }
}

#[inline(always)]
unsafe fn forward_regime<S: Lanes, const CAP: u8>(a: &mut [u64], tables: &Tables, qv: u64) {
    let n = a.len();
    let ptr = a.as_mut_ptr();
    let k = Consts::new::<S>(qv);
    let tw = &tables.fwd;
    let block = BLOCK.min(n);
    // Whole-limb sweeps for spans larger than a block.
    let mut t = n / 2;
    while 2 * t > block {
        forward_stage::<S, CAP, false>(ptr, 0, n, t, n, tw, &k);
        t /= 2;
    }
    // The remaining stages block by block, in L1.
    let t_block = t;
    // Eight-lane kernels start the narrow pass at stride 2L where that stage is at least stage
    // 2 (n >= 128), so that it follows the parity of the stages after it.
    let from_2l = S::L == 8 && n >= 128;
    // The wide regime's last stage on lanes with a 64-bit low multiply (`Consts::near`).
    let near = k.near && CAP == WIDE_CAP && !S::SIGNED;
    for base in (0..n).step_by(block) {
        let mut t = t_block;
        // Vector kernels stop above stride L (2L where the narrow pass starts there).
        while t > 1 && t > S::L && !(from_2l && t == 2 * S::L) {
            forward_stage::<S, CAP, false>(ptr, base, block, t, n, tw, &k);
            t /= 2;
        }
        if S::L == 1 {
            forward_stage::<S, CAP, true>(ptr, base, block, 1, n, tw, &k);
        } else if CAP == MID_CAP {
            // Stride L is at least stage 1: the middle regime reduces in every narrow stride.
            narrow_forward::<S, CAP, false, false>(from_2l, false, ptr, base, block, n, tw, &k);
        } else if (n / S::L).trailing_zeros().is_multiple_of(2) {
            // Stride L/2 is stage log2(n / L): wide stages keep on even indices (a reduce
            // where the schedule allows a keep, stride L at n = 4L, is always safe).
            narrow_forward::<S, CAP, true, false>(from_2l, near, ptr, base, block, n, tw, &k);
        } else {
            narrow_forward::<S, CAP, false, true>(from_2l, near, ptr, base, block, n, tw, &k);
        }
    }
}

/// The forward narrow pass with the transform's run-time choices as compile-time constants:
/// stride 2L in the pass, and (only with it, so n >= 128) the near-2^s canonical output.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn narrow_forward<S: Lanes, const CAP: u8, const KEEP: bool, const FLIP: bool>(
    from_2l: bool,
    near: bool,
    a: *mut u64,
    base: usize,
    len: usize,
    n: usize,
    tw: &StageTwiddles,
    k: &Consts<S::V>,
) {
    match (from_2l, near) {
        (true, true) => {
            narrow_strides::<S, true, CAP, KEEP, FLIP, true, true>(a, a, base, len, n, tw, k)
        }
        (true, false) => {
            narrow_strides::<S, true, CAP, KEEP, FLIP, true, false>(a, a, base, len, n, tw, k)
        }
        _ => narrow_strides::<S, true, CAP, KEEP, FLIP, false, false>(a, a, base, len, n, tw, k),
    }
}

/// Inverse negacyclic NTT (bit-reversed in, natural out), including the `N^{-1}` scaling;
/// input < 2q, output canonical. In place over `a`, or from `src` (same length) into `a`.
#[inline(always)]
pub(crate) unsafe fn inverse<S: Lanes>(
    a: &mut [u64],
    src: Option<&[u64]>,
    tables: &Tables,
    qv: u64,
) {
    let src = match src {
        // The scalar kernel has no narrow pass to read the source: copy it first.
        Some(s) if S::L == 1 => {
            a.copy_from_slice(s);
            None
        }
        src => src,
    };
    if S::SIGNED {
        // The first narrow pass imports.
        inverse_regime::<S, MID_CAP>(a, src, tables, qv)
    } else if (qv as u128) * (MID_CAP as u128) < (1u128 << S::WORD_BITS) {
        inverse_regime::<S, MID_CAP>(a, src, tables, qv)
    } else {
        inverse_regime::<S, NARROW_CAP>(a, src, tables, qv)
    }
}

/// Inverse stage of stride `t >= L`, in the wide or the narrow regime.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn inverse_stage<S: Lanes, const CAP: u8>(
    a: *mut u64,
    base: usize,
    len: usize,
    t: usize,
    n: usize,
    tw: &StageTwiddles,
    k: &Consts<S::V>,
) {
    // `bfly` reads any wide regime as the wide inverse butterfly.
    if CAP >= MID_CAP {
        stage::<S, false, WIDE_KEEP, false>(a, base, len, t, n, tw, k)
    } else {
        stage::<S, false, NARROW, false>(a, base, len, t, n, tw, k)
    }
}

/// [`inverse`] with values in `[0, 4q)` between stages (capacity `8q`, the wide inverse) or in
/// `[0, 2q)` (capacity `4q`).
#[inline(always)]
unsafe fn inverse_regime<S: Lanes, const CAP: u8>(
    a: &mut [u64],
    src: Option<&[u64]>,
    tables: &Tables,
    qv: u64,
) {
    let n = a.len();
    let ptr = a.as_mut_ptr();
    // The first pass (the narrow strides, L > 1) reads each block from the source, and every
    // later pass works on `a`.
    let src = src.map_or(ptr as *const u64, |s| s.as_ptr());
    let k = Consts::new::<S>(qv);
    let tw = &tables.inv;
    // Kernels are only used with n >= 4L, so every block holds at least two vectors.
    let block = BLOCK.min(n / 2);
    for base in (0..n).step_by(block) {
        let mut t = 1;
        if S::L > 1 {
            narrow_strides::<S, false, CAP, false, false, false, false>(
                ptr, src, base, block, n, tw, &k,
            );
            t = 2 * S::L;
        }
        while 2 * t <= block {
            inverse_stage::<S, CAP>(ptr, base, block, t, n, tw, &k);
            t *= 2;
        }
    }
    let mut t = block;
    while t < n / 2 {
        inverse_stage::<S, CAP>(ptr, 0, n, t, n, tw, &k);
        t *= 2;
    }
    // Last stage (t = n/2, single block) with N^{-1} folded into both outputs. Both Shoup inputs
    // (`x + y` and `x - y + 2q` or `+ 4q`) are below `8q`, so the raw products are below `4q`.
    let half = n / 2;
    let ni = S::splat(tables.n_inv);
    let nis = S::splat(tables.n_inv_shoup);
    let wn = S::splat(tables.last_w_n_inv);
    let wns = S::splat(tables.last_w_n_inv_shoup);
    let bias = if CAP >= MID_CAP { k.q4 } else { k.q2 };
    let mut j = 0;
    while j < half {
        let x = S::load(ptr.add(j));
        let y = S::load(ptr.add(j + half));
        if S::SIGNED {
            // |x|, |y| < 1.5q + 1: both Shoup inputs below 4q.
            let s = S::mul_signed(S::add(x, y), ni, nis, k.q);
            let d = S::mul_signed(S::sub(x, y), wn, wns, k.q);
            S::store(ptr.add(j), S::export_canonical(s, k.q));
            S::store(ptr.add(j + half), S::export_canonical(d, k.q));
            j += S::L;
            continue;
        }
        let s = mul_shoup_lazy::<S>(S::add(x, y), ni, nis, &k);
        let d = mul_shoup_lazy::<S>(S::add(S::sub(x, y), bias), wn, wns, &k);
        S::store(ptr.add(j), small_mod::<S>(s, k.q));
        S::store(ptr.add(j + half), small_mod::<S>(d, k.q));
        j += S::L;
    }
}

/// The portable path: one lane of plain `u64` arithmetic.
pub(crate) struct Scalar;

impl Lanes for Scalar {
    type V = u64;
    const L: usize = 1;
    const WORD_BITS: u32 = 64;
    const RAW_BELOW_2Q: bool = true;
    #[inline(always)]
    unsafe fn load(p: *const u64) -> u64 {
        *p
    }
    #[inline(always)]
    unsafe fn store(p: *mut u64, v: u64) {
        *p = v
    }
    #[inline(always)]
    unsafe fn splat(x: u64) -> u64 {
        x
    }
    #[inline(always)]
    unsafe fn add(a: u64, b: u64) -> u64 {
        a.wrapping_add(b)
    }
    #[inline(always)]
    unsafe fn sub(a: u64, b: u64) -> u64 {
        a.wrapping_sub(b)
    }
    #[inline(always)]
    unsafe fn min(a: u64, b: u64) -> u64 {
        a.min(b)
    }
    #[inline(always)]
    unsafe fn mul_shoup_raw(y: u64, w: u64, ws: u64, q: u64) -> u64 {
        let qhat = ((y as u128 * ws as u128) >> 64) as u64;
        y.wrapping_mul(w).wrapping_sub(qhat.wrapping_mul(q))
    }
    unsafe fn split(_: usize, _: u64, _: u64) -> (u64, u64) {
        unreachable!("a one-lane kernel never has a stride below its width")
    }
    unsafe fn merge(_: usize, _: u64, _: u64) -> (u64, u64) {
        unreachable!("a one-lane kernel never has a stride below its width")
    }
    unsafe fn load_twiddles(_: usize, _: *const u64) -> u64 {
        unreachable!("a one-lane kernel never has a stride below its width")
    }
}

/// Lane index tables for two-source permutes that implement [`Lanes::split`] and
/// [`Lanes::merge`] for `L` lanes and stride `t < L` (indices `>= L` select the second source).
///
/// Lane `k` holds block `k mod (L/t)`, offset `k div (L/t)`: the chunk's `L/t` distinct
/// twiddles then repeat with period `L/t` across the lanes, which is exactly a 128-bit
/// (`t = 4`) or 256-bit (`t = 2`) memory broadcast of the contiguous twiddle table.
pub(crate) const fn split_indices<const L: usize>(t: usize) -> ([u64; L], [u64; L]) {
    let mut x = [0u64; L];
    let mut y = [0u64; L];
    let blocks = L / t;
    let mut k = 0;
    while k < L {
        let pos = (k % blocks) * 2 * t + k / blocks;
        x[k] = pos as u64;
        y[k] = (pos + t) as u64;
        k += 1;
    }
    (x, y)
}

/// See [`split_indices`]: where each chunk position comes from in the (x, y) pair.
pub(crate) const fn merge_indices<const L: usize>(t: usize) -> ([u64; L], [u64; L]) {
    let mut v = [[0u64; L]; 2];
    let blocks = L / t;
    let mut p = 0;
    while p < 2 * L {
        let (block, off) = (p / (2 * t), p % (2 * t));
        // Inverse of `split_indices`: lane k = off * blocks + block.
        let src = if off < t {
            off * blocks + block
        } else {
            L + (off - t) * blocks + block
        };
        v[p / L][p % L] = src as u64;
        p += 1;
    }
    (v[0], v[1])
}

/// Index tables for [`Lanes::relayout`] from stride `from` to stride `to` (both `< L`): for
/// each lane of the new (x, y), where its position sits in the old (x, y) (indices `>= L`
/// select the old y).
pub(crate) const fn relayout_indices<const L: usize>(
    from: usize,
    to: usize,
) -> ([u64; L], [u64; L]) {
    let (old_blocks, new_blocks) = (L / from, L / to);
    let mut v = [[0u64; L]; 2];
    let mut half = 0;
    while half < 2 {
        let mut k = 0;
        while k < L {
            // Position (within the 2L-word chunk) of new lane k of x (half 0) or y (half 1).
            let pos = (k % new_blocks) * 2 * to + k / new_blocks + half * to;
            let (block, off) = (pos / (2 * from), pos % (2 * from));
            v[half][k] = if off < from {
                off * old_blocks + block
            } else {
                L + (off - from) * old_blocks + block
            } as u64;
            k += 1;
        }
        half += 1;
    }
    (v[0], v[1])
}

/// Register-resident throughput of the forward butterfly: `chains` independent butterfly
/// streams (enough to hide latency) iterated `iters` times with no loads or stores. Returns the
/// number of butterflies executed; the caller times it. This is the compute ceiling of the NTT
/// on this core, the basis of the butterfly-throughput bound in `docs/benchmarks.md`.
#[inline(always)]
pub(crate) unsafe fn butterfly_loop<S: Lanes>(
    qv: u64,
    w: u64,
    ws: u64,
    iters: usize,
) -> (u64, usize) {
    const CHAINS: usize = 8;
    let k = Consts::new::<S>(qv);
    let tw = Twiddle::constant::<S>(S::splat(w), S::splat(ws));
    let mut x = [S::import(S::splat(1)); CHAINS];
    let mut y = [S::import(S::splat(qv - 1)); CHAINS];
    for _ in 0..iters {
        for c in 0..CHAINS {
            // The reduce regime: what every other stage of a wide transform runs (the narrow
            // regime costs the same operations plus a correction of t).
            let (nx, ny) = ct::<S, WIDE_REDUCE>(x[c], y[c], S::high(y[c]), tw, &k);
            x[c] = ny;
            y[c] = nx;
        }
    }
    // Fold the lanes so the work cannot be optimised away.
    let mut buf = vec![0u64; S::L];
    let mut acc = 0u64;
    for c in 0..CHAINS {
        S::store(buf.as_mut_ptr(), S::add(x[c], y[c]));
        acc = buf.iter().fold(acc, |a, &v| a.wrapping_add(v));
    }
    (acc, iters * CHAINS * S::L)
}

/// Fast-BConv row (the multiply-accumulate step of reed.md / ark.md BConv):
/// `out[k] = sum_i ys[i][k] * c[i] mod p` in `[0, p)`, with `cs[i] = floor(c[i] * 2^64 / p)`
/// (Shoup constants for 64-bit words), `c[i] < p < 2^62` and every `ys[i]` at least
/// `out.len()` words. When `8p` fits the word (`p < 2^61`) each raw Shoup product (below `4p`)
/// is added as it is and the running sum is kept in `[0, 4p)` by one conditional subtraction;
/// otherwise each product is first corrected to `[0, 2p)` and the sum kept in `[0, 2p)`. Either
/// way any number of terms is safe.
///
/// # Safety
/// `S` must be supported by this CPU and have 64-bit words.
#[inline(always)]
pub(crate) unsafe fn mac_shoup<S: Lanes>(
    ys: &[&[u64]],
    c: &[u64],
    cs: &[u64],
    p: u64,
    out: &mut [u64],
) {
    debug_assert_eq!(S::WORD_BITS, 64);
    let k = Consts::new::<S>(p);
    let n = out.len();
    let full = n - n % S::L;
    let zero = S::splat(0);
    let wide = (p as u128) * 8 < 1 << 64;
    let mut j = 0;
    while j < full {
        let mut acc = zero;
        for ((y, &ci), &csi) in ys.iter().zip(c).zip(cs) {
            let y = S::load(y.as_ptr().add(j));
            let (ci, csi) = (S::splat(ci), S::splat(csi));
            acc = if wide {
                small_mod::<S>(S::add(acc, S::mul_shoup_raw(y, ci, csi, k.q)), k.q4)
            } else {
                small_mod::<S>(S::add(acc, mul_shoup_lazy::<S>(y, ci, csi, &k)), k.q2)
            };
        }
        if wide {
            acc = small_mod::<S>(acc, k.q2);
        }
        S::store(out.as_mut_ptr().add(j), small_mod::<S>(acc, k.q));
        j += S::L;
    }
    // Tail (fewer words than a vector): the same arithmetic one word at a time.
    let m = crate::modular::Modulus::new(p).expect("a valid modulus");
    for (jj, o) in out.iter_mut().enumerate().skip(full) {
        let mut acc = 0u64;
        for ((y, &ci), &csi) in ys.iter().zip(c).zip(cs) {
            acc = m.add(acc, m.mul_shoup(y[jj], ci, csi));
        }
        *o = acc;
    }
}

#[cfg(test)]
mod tests {
    use super::is_near_power_of_two;

    /// The claim behind `Consts::near`: for a modulus within `2^s / 16` below `2^s`, `x >> s`
    /// is `floor(x / q)` or one less for every `x < 16q`, so `x - (x >> s) q` is in `[0, 2q)`;
    /// checked at the edges of every multiple of `q` and of `2^s`, and far from the bound.
    #[test]
    fn near_moduli_have_a_shift_quotient_at_most_one_short() {
        let s = 60;
        let top = 1u64 << s;
        let edge = top - top / 16 + 1; // the nearest modulus the bound admits
        for q in [
            top - (1 << 18) + 1,
            edge,
            edge + 2,
            (1 << 50) - 27,
            (1 << 30) - 35,
        ] {
            assert!(is_near_power_of_two(q), "{q} should be near");
            let s = u64::BITS - q.leading_zeros();
            let mut xs = vec![16 * q - 1];
            for j in 1..16u64 {
                xs.extend([j * q - 1, j * q, j * q + 1]);
                let p = j << s;
                if p < 16 * q {
                    xs.extend([p - 1, p, p + 1]);
                }
            }
            for x in xs {
                let r = x - (x >> s) * q;
                assert!(r < 2 * q, "q = {q}, x = {x}: {r} is not below 2q");
                assert_eq!(r % q, x % q);
            }
        }
        for q in [top - top / 16, 3 << 58, (1 << 59) + 1, 1, 0, u64::MAX] {
            assert!(!is_near_power_of_two(q), "{q} should not be near");
        }
    }
}
