//! Element-wise modular products of two variable operands:
//! `out[k] = (acc[k] + sum_t x_t[k] * y_t[k]) mod q`.
//!
//! These are the multiply, multiply-accumulate and inner-product primaries of the evaluator:
//! the tensor product of HMult and the key-switching inner product with the evaluation key
//! (ark.md Algorithm 1, the `MAC` step). Both operands vary, so Shoup's precomputed quotients
//! (the NTT's and BConv's trick) do not apply. Instead the full 128-bit products are summed
//! lazily and reduced once per coefficient:
//!
//! * scalar: `u128` products summed in a `u128` and reduced by [`Modulus::reduce_u128`]; this is
//!   the obviously correct reference the vector path is tested against;
//! * AVX-512F/DQ: each 64x64-bit product comes from four 32x32-bit multiplies and is summed in
//!   three 64-bit columns of weights 1, 2^32 and 2^64 whose overflows are counted with mask
//!   compares. The column sum `h * 2^64 + t` is then reduced as `h * (2^64 mod q) + t` with two
//!   Shoup products, which accept any 64-bit input. Eight coefficients per instruction against
//!   one `mulx` chain per coefficient on the scalar path.
//! * AVX2: the same four 32x32-bit partial products, four lanes. AVX2 has no unsigned 64-bit
//!   compare, so instead of counting carries each product is split into 32-bit pieces summed
//!   in columns that cannot overflow (weights 1, 2^32 and 2^64); the reduction is the same.
//!   Conditional subtractions select on the sign bit of the difference (`blendv`), which is
//!   exact because every modulus is below 2^62.
//!
//! Up to [`MAX_TERMS`] products are summed before a reduction; longer sums are split and
//! chained through the accumulator. Operands must be below `q` and `q < 2^62` (every
//! [`Modulus`]), which bounds the sums: `15 * 2^124 + 2^62 < 2^128` for the scalar path, and
//! for the vector path the top column stays below `15 * 2^60 + 2^37 < 2^64`.

use crate::error::{MathError, Result};
use crate::modular::Modulus;
use crate::ntt::Kernel;

/// Products summed before one reduction (both paths).
pub const MAX_TERMS: usize = 15;

/// The constants of one modulus for the vector reduction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReduceConsts {
    q: u64,
    /// `2^64 mod q` and its Shoup quotient `floor(r64 * 2^64 / q)`.
    r64: u64,
    r64_shoup: u64,
    /// `floor(2^64 / q)`: the Shoup quotient of 1, to reduce any 64-bit word.
    one_shoup: u64,
}

impl ReduceConsts {
    pub(crate) fn new(m: &Modulus) -> Self {
        let r64 = ((1u128 << 64) % m.value() as u128) as u64;
        Self {
            q: m.value(),
            r64,
            r64_shoup: m.shoup(r64),
            one_shoup: m.shoup(1),
        }
    }
}

/// The vector code `kernel` runs here: IFMA's primaries are the AVX-512F/DQ code (52-bit
/// products do not fit 64-bit residues), and a kernel the CPU lacks runs the scalar loop.
fn vector(kernel: Kernel) -> Kernel {
    let k = crate::simd::word64(kernel);
    if k.cpu_supports() {
        k
    } else {
        Kernel::Scalar
    }
}

/// The kernel the evaluator's element-wise products use: the `TESSERA_SIMD` limit, by default
/// the fastest of this CPU ([`crate::simd::active`]).
pub fn best_kernel() -> Kernel {
    crate::simd::active()
}

fn check_len(what: &'static str, expected: usize, found: usize) -> Result<()> {
    if expected != found {
        return Err(MathError::LengthMismatch {
            what,
            expected,
            found,
        });
    }
    Ok(())
}

fn check_rows(xs: &[&[u64]], ys: &[&[u64]], n: usize) -> Result<()> {
    check_len("element-wise product operands", xs.len(), ys.len())?;
    for row in xs.iter().chain(ys) {
        check_len("element-wise product row", n, row.len())?;
    }
    Ok(())
}

/// `out[k] = out[k] * y[k] mod q`.
pub fn mul_row(kernel: Kernel, m: &Modulus, out: &mut [u64], y: &[u64]) -> Result<()> {
    mul_row_from(kernel, m, out, None, y)
}

/// `out[k] = x[k] * y[k] mod q`, with `x` read from `out` when it is `None`: [`mul_row`] and
/// its out-of-place form (a product whose left operand shares its buffer is written once,
/// instead of copied and then multiplied in place).
pub fn mul_row_from(
    kernel: Kernel,
    m: &Modulus,
    out: &mut [u64],
    x: Option<&[u64]>,
    y: &[u64],
) -> Result<()> {
    check_len("element-wise product row", out.len(), y.len())?;
    if let Some(x) = x {
        check_len("element-wise product row", out.len(), x.len())?;
    }
    let x = x.map_or(out.as_ptr(), |x| x.as_ptr());
    // SAFETY: every row has `out.len()` words; each coefficient is read before it is written.
    unsafe {
        sum_products(
            kernel,
            m,
            &[x],
            &[y.as_ptr()],
            false,
            out.as_mut_ptr(),
            out.len(),
        )
    };
    Ok(())
}

/// `out[k] = out[k] + x[k] * y[k] mod q`.
pub fn mul_acc_row(
    kernel: Kernel,
    m: &Modulus,
    out: &mut [u64],
    x: &[u64],
    y: &[u64],
) -> Result<()> {
    check_rows(&[x], &[y], out.len())?;
    // SAFETY: as in `mul_row`.
    unsafe {
        sum_products(
            kernel,
            m,
            &[x.as_ptr()],
            &[y.as_ptr()],
            true,
            out.as_mut_ptr(),
            out.len(),
        )
    };
    Ok(())
}

/// `out[k] = sum_t xs[t][k] * ys[t][k] mod q` (at least one term).
pub fn dot_row(
    kernel: Kernel,
    m: &Modulus,
    xs: &[&[u64]],
    ys: &[&[u64]],
    out: &mut [u64],
) -> Result<()> {
    check_rows(xs, ys, out.len())?;
    if xs.is_empty() {
        return Err(MathError::LengthMismatch {
            what: "dot product operands",
            expected: 1,
            found: 0,
        });
    }
    let (xp, yp) = (pointers(xs), pointers(ys));
    for (t, (xc, yc)) in xp.chunks(MAX_TERMS).zip(yp.chunks(MAX_TERMS)).enumerate() {
        // SAFETY: lengths checked above; later chunks add to the sum of the earlier ones.
        unsafe { sum_products(kernel, m, xc, yc, t > 0, out.as_mut_ptr(), out.len()) };
    }
    Ok(())
}

/// Two inner products over shared left operands, `out0 = sum_t xs[t] * ys0[t]` and
/// `out1 = sum_t xs[t] * ys1[t]` (the two halves of a key-switching inner product): each `x`
/// is loaded and split once for both.
pub fn dot2_row(
    kernel: Kernel,
    m: &Modulus,
    xs: &[&[u64]],
    ys0: &[&[u64]],
    ys1: &[&[u64]],
    out0: &mut [u64],
    out1: &mut [u64],
) -> Result<()> {
    check_rows(xs, ys0, out0.len())?;
    check_rows(xs, ys1, out1.len())?;
    check_len("dot product outputs", out0.len(), out1.len())?;
    if xs.is_empty() {
        return Err(MathError::LengthMismatch {
            what: "dot product operands",
            expected: 1,
            found: 0,
        });
    }
    let n = out0.len();
    let (xp, y0, y1) = (pointers(xs), pointers(ys0), pointers(ys1));
    let chunks = xp
        .chunks(MAX_TERMS)
        .zip(y0.chunks(MAX_TERMS))
        .zip(y1.chunks(MAX_TERMS));
    for (t, ((xc, c0), c1)) in chunks.enumerate() {
        let outs = [out0.as_mut_ptr(), out1.as_mut_ptr()];
        // SAFETY: lengths checked above.
        unsafe { sum_products2(kernel, m, xc, [c0, c1], t > 0, outs, n) };
    }
    Ok(())
}

/// `out[k] = out[k] + y[k] mod q` (both below q).
pub fn add_row(kernel: Kernel, m: &Modulus, out: &mut [u64], y: &[u64]) -> Result<()> {
    add_sub_row::<true>(kernel, m, out, None, y)
}

/// `out[k] = out[k] - y[k] mod q` (both below q).
pub fn sub_row(kernel: Kernel, m: &Modulus, out: &mut [u64], y: &[u64]) -> Result<()> {
    add_sub_row::<false>(kernel, m, out, None, y)
}

/// `out = x + y` (`ADD`) or `x - y` modulo `q` (both below q), with `x` read from `out` when
/// it is `None`: [`add_row`] and [`sub_row`], and their out-of-place form, so that a result
/// whose left operand is shared (copy-on-write) is written once instead of copied, then
/// overwritten.
pub fn add_sub_row<const ADD: bool>(
    kernel: Kernel,
    m: &Modulus,
    out: &mut [u64],
    x: Option<&[u64]>,
    y: &[u64],
) -> Result<()> {
    let what = if ADD {
        "element-wise sum row"
    } else {
        "element-wise difference row"
    };
    check_len(what, out.len(), y.len())?;
    if let Some(x) = x {
        check_len(what, out.len(), x.len())?;
    }
    let mut done = 0;
    // SAFETY: `vector` checked the CPU; lengths checked.
    #[cfg(target_arch = "x86_64")]
    match vector(kernel) {
        Kernel::Avx512 => done = unsafe { avx512::add_sub::<ADD>(out, x, y, m.value()) },
        Kernel::Avx2 => done = unsafe { avx2::add_sub::<ADD>(out, x, y, m.value()) },
        _ => {}
    }
    let _ = kernel;
    for k in done..out.len() {
        let a = x.map_or(out[k], |x| x[k]);
        out[k] = if ADD { m.add(a, y[k]) } else { m.sub(a, y[k]) };
    }
    Ok(())
}

/// `out[k] = out[k] * w mod q` for a constant `w` (reduced first): Shoup's product with a
/// precomputed quotient, the scalar multiply of rescaling, ModDown and constant products.
pub fn mul_const_row(kernel: Kernel, m: &Modulus, w: u64, out: &mut [u64]) {
    mul_const_row_from(kernel, m, w, out, None).expect("`out` is its own source")
}

/// `out[k] = x[k] * w mod q`, with `x` read from `out` when it is `None`: [`mul_const_row`]
/// and its out-of-place form (for a polynomial that shares its buffer).
pub fn mul_const_row_from(
    kernel: Kernel,
    m: &Modulus,
    w: u64,
    out: &mut [u64],
    x: Option<&[u64]>,
) -> Result<()> {
    if let Some(x) = x {
        check_len("constant product row", out.len(), x.len())?;
    }
    let w = m.reduce(w);
    let ws = m.shoup(w);
    let mut done = 0;
    // SAFETY: `vector` checked the CPU (and `fits` FMA); `x`, when given, has `out.len()`
    // words (checked above).
    #[cfg(target_arch = "x86_64")]
    match vector(kernel) {
        Kernel::Avx512 => done = unsafe { avx512::mul_const(out, x, w, ws, m.value()) },
        Kernel::Avx2 if avx2_fma::fits(m) => {
            done = unsafe { avx2_fma::mul_const::<false>(out, x, &[], w, m.value()) }
        }
        Kernel::Avx2 => done = unsafe { avx2::mul_const(out, x, w, ws, m.value()) },
        _ => {}
    }
    let _ = kernel;
    match x {
        Some(x) => {
            for (o, &v) in out[done..].iter_mut().zip(&x[done..]) {
                *o = m.mul_shoup(v, w, ws);
            }
        }
        None => {
            for v in &mut out[done..] {
                *v = m.mul_shoup(*v, w, ws);
            }
        }
    }
    Ok(())
}

/// `out[k] = (out[k] - y[k]) * w mod q` (both below q, `w` reduced first): ModDown's and the
/// rescale's last step, `(x - [x]_D) D^-1`, in one pass where the kernel has a fused loop
/// (AVX2 with FMA, `q < 2^50`), else [`sub_row`] then [`mul_const_row`]. Same values either way.
pub fn sub_mul_const_row(
    kernel: Kernel,
    m: &Modulus,
    w: u64,
    out: &mut [u64],
    y: &[u64],
) -> Result<()> {
    sub_mul_const_from(kernel, m, w, out, None, y)
}

/// `out[k] = (x[k] - y[k]) * w mod q`, with `x` read from `out` when it is `None`:
/// [`sub_mul_const_row`] and its out-of-place form (ModDown's last step reads the kept limbs
/// of the extended polynomial, which it shares).
pub fn sub_mul_const_from(
    kernel: Kernel,
    m: &Modulus,
    w: u64,
    out: &mut [u64],
    x: Option<&[u64]>,
    y: &[u64],
) -> Result<()> {
    check_len("element-wise difference row", out.len(), y.len())?;
    if let Some(x) = x {
        check_len("element-wise difference row", out.len(), x.len())?;
    }
    let mut done = 0;
    // SAFETY: `vector` checked AVX2, `fits` FMA and `q < 2^50`; lengths checked.
    #[cfg(target_arch = "x86_64")]
    if vector(kernel) == Kernel::Avx2 && avx2_fma::fits(m) {
        done = unsafe { avx2_fma::mul_const::<true>(out, x, y, m.reduce(w), m.value()) };
    }
    let x = x.map(|x| &x[done..]);
    add_sub_row::<false>(kernel, m, &mut out[done..], x, &y[done..])?;
    mul_const_row(kernel, m, w, &mut out[done..]);
    Ok(())
}

/// `out[k] = [c(x[k])]_q` where `c(x)` is the centered representative of the residue `x`
/// modulo `src` (in `(-src/2, src/2]`): the one-limb extension of rescaling and of OF-Limb
/// plaintexts.
pub fn lift_centered_row(
    kernel: Kernel,
    src: &Modulus,
    m: &Modulus,
    x: &[u64],
    out: &mut [u64],
) -> Result<()> {
    check_len("centered lift row", out.len(), x.len())?;
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    {
        let k = LiftConsts {
            half: src.value() / 2,
            src_mod_q: m.reduce(src.value()),
            q: m.value(),
            one_shoup: m.shoup(1),
        };
        // SAFETY: `vector` checked the CPU; lengths checked.
        match vector(kernel) {
            Kernel::Avx512 => done = unsafe { avx512::lift_centered(x, out, &k) },
            Kernel::Avx2 => done = unsafe { avx2::lift_centered(x, out, &k) },
            _ => {}
        }
    }
    let _ = kernel;
    for (o, &v) in out[done..].iter_mut().zip(&x[done..]) {
        *o = m.reduce_i64(src.center(v));
    }
    Ok(())
}

/// Constants of [`lift_centered_row`]'s vector path.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct LiftConsts {
    half: u64,
    src_mod_q: u64,
    q: u64,
    one_shoup: u64,
}

fn pointers(rows: &[&[u64]]) -> Vec<*const u64> {
    rows.iter().map(|r| r.as_ptr()).collect()
}

/// `out[k] = (acc + sum_t xs[t][k] * ys[t][k]) mod q` for `k < n`, with `acc = out[k]` when
/// `accumulate`, else 0.
///
/// # Safety
/// Every pointer is valid for `n` words, `xs.len() == ys.len() <= MAX_TERMS`, every operand
/// is below `q`; `out` may alias an input (each coefficient is read before it is written).
unsafe fn sum_products(
    kernel: Kernel,
    m: &Modulus,
    xs: &[*const u64],
    ys: &[*const u64],
    accumulate: bool,
    out: *mut u64,
    n: usize,
) {
    let mut done = 0;
    // SAFETY: `vector` checked the CPU; the caller, the pointers.
    #[cfg(target_arch = "x86_64")]
    match vector(kernel) {
        Kernel::Avx512 => {
            done = avx512::sum_products(xs, ys, accumulate, out, n, &ReduceConsts::new(m))
        }
        Kernel::Avx2 if avx2_fma::fits(m) => {
            done = avx2_fma::sum_products(xs, [ys], accumulate, [out], n, m.value())
        }
        Kernel::Avx2 => {
            done = avx2::sum_products(xs, ys, accumulate, out, n, &ReduceConsts::new(m))
        }
        _ => {}
    }
    let _ = kernel;
    for k in done..n {
        let mut acc = if accumulate { *out.add(k) as u128 } else { 0 };
        for (x, y) in xs.iter().zip(ys) {
            acc += *x.add(k) as u128 * *y.add(k) as u128;
        }
        *out.add(k) = m.reduce_u128(acc);
    }
}

/// [`sum_products`] for two outputs sharing `xs`.
///
/// # Safety
/// As [`sum_products`], for both `(ys[i], outs[i])`.
unsafe fn sum_products2(
    kernel: Kernel,
    m: &Modulus,
    xs: &[*const u64],
    ys: [&[*const u64]; 2],
    accumulate: bool,
    outs: [*mut u64; 2],
    n: usize,
) {
    let mut done = 0;
    // SAFETY: as in `sum_products`.
    #[cfg(target_arch = "x86_64")]
    match vector(kernel) {
        Kernel::Avx512 => {
            done = avx512::sum_products2(xs, ys, accumulate, outs, n, &ReduceConsts::new(m))
        }
        Kernel::Avx2 if avx2_fma::fits(m) => {
            done = avx2_fma::sum_products(xs, ys, accumulate, outs, n, m.value())
        }
        Kernel::Avx2 => {
            done = avx2::sum_products2(xs, ys, accumulate, outs, n, &ReduceConsts::new(m))
        }
        _ => {}
    }
    let _ = kernel;
    for (y, out) in ys.into_iter().zip(outs) {
        for k in done..n {
            let mut acc = if accumulate { *out.add(k) as u128 } else { 0 };
            for (x, y) in xs.iter().zip(y) {
                acc += *x.add(k) as u128 * *y.add(k) as u128;
            }
            *out.add(k) = m.reduce_u128(acc);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::ReduceConsts;
    use crate::ntt::shoup64_512;
    use core::arch::x86_64::*;

    const L: usize = 8;

    /// The broadcast constants of one modulus.
    struct Consts {
        q: __m512i,
        q2: __m512i,
        r64: __m512i,
        r64_shoup: __m512i,
        one: __m512i,
        one_shoup: __m512i,
    }

    impl Consts {
        #[inline(always)]
        unsafe fn new(k: &ReduceConsts) -> Self {
            let s = |x: u64| _mm512_set1_epi64(x as i64);
            Self {
                q: s(k.q),
                q2: s(2 * k.q),
                r64: s(k.r64),
                r64_shoup: s(k.r64_shoup),
                one: s(1),
                one_shoup: s(k.one_shoup),
            }
        }
    }

    /// `x mod m` for `x < 2m`.
    #[inline(always)]
    unsafe fn small_mod(x: __m512i, m: __m512i) -> __m512i {
        _mm512_min_epu64(x, _mm512_sub_epi64(x, m))
    }

    /// `a += 1` in the lanes where `a + b` (already in `sum`) wrapped.
    #[inline(always)]
    unsafe fn count_carry(count: __m512i, sum: __m512i, b: __m512i, one: __m512i) -> __m512i {
        let wrapped = _mm512_cmplt_epu64_mask(sum, b);
        _mm512_mask_add_epi64(count, wrapped, count, one)
    }

    /// A lane-wise 128-bit sum of products, kept as
    /// `lo + mid * 2^32 + (hi + carry_lo) * 2^64 + carry_mid * 2^96`.
    #[derive(Clone, Copy)]
    struct Columns {
        lo: __m512i,
        mid: __m512i,
        hi: __m512i,
        carry_lo: __m512i,
        carry_mid: __m512i,
    }

    impl Columns {
        #[inline(always)]
        unsafe fn new(init: __m512i) -> Self {
            let z = _mm512_setzero_si512();
            Self {
                lo: init,
                mid: z,
                hi: z,
                carry_lo: z,
                carry_mid: z,
            }
        }

        /// Adds `x * y`, with `xh = x >> 32` split by the caller (it is shared by the
        /// products of one `x`). With `x, y < 2^62`, the middle partial sum is below 2^63.
        #[inline(always)]
        unsafe fn add(&mut self, x: __m512i, xh: __m512i, y: __m512i, k: &Consts) {
            let yh = _mm512_srli_epi64::<32>(y);
            let ll = _mm512_mul_epu32(x, y);
            let mid = _mm512_add_epi64(_mm512_mul_epu32(x, yh), _mm512_mul_epu32(xh, y));
            let hh = _mm512_mul_epu32(xh, yh);
            self.lo = _mm512_add_epi64(self.lo, ll);
            self.carry_lo = count_carry(self.carry_lo, self.lo, ll, k.one);
            self.mid = _mm512_add_epi64(self.mid, mid);
            self.carry_mid = count_carry(self.carry_mid, self.mid, mid, k.one);
            self.hi = _mm512_add_epi64(self.hi, hh);
        }

        /// The sum modulo `q`, in `[0, q)`.
        #[inline(always)]
        unsafe fn reduce(&self, k: &Consts) -> __m512i {
            // Fold into h * 2^64 + t with t, h < 2^64.
            let mid_lo = _mm512_slli_epi64::<32>(self.mid);
            let t = _mm512_add_epi64(self.lo, mid_lo);
            let h = _mm512_add_epi64(
                _mm512_add_epi64(self.hi, self.carry_lo),
                _mm512_add_epi64(
                    _mm512_srli_epi64::<32>(self.mid),
                    _mm512_slli_epi64::<32>(self.carry_mid),
                ),
            );
            let h = count_carry(h, t, mid_lo, k.one);
            // h * (2^64 mod q) + t * 1, each Shoup product in [0, 4q) brought to [0, 2q).
            let a = small_mod(shoup64_512(h, k.r64, k.r64_shoup, k.q), k.q2);
            let b = small_mod(shoup64_512(t, k.one, k.one_shoup, k.q), k.q2);
            small_mod(small_mod(_mm512_add_epi64(a, b), k.q2), k.q)
        }
    }

    #[inline(always)]
    unsafe fn load(p: *const u64, j: usize) -> __m512i {
        _mm512_loadu_si512(p.add(j) as *const __m512i)
    }

    #[inline(always)]
    unsafe fn init(accumulate: bool, out: *mut u64, j: usize) -> __m512i {
        if accumulate {
            load(out, j)
        } else {
            _mm512_setzero_si512()
        }
    }

    /// The vector part of [`super::add_row`] (`ADD`) and [`super::sub_row`]: the raw sum or
    /// difference, then the smaller of it and its correction by `q` (the wrapped difference
    /// is the larger one).
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn add_sub<const ADD: bool>(
        out: &mut [u64],
        x: Option<&[u64]>,
        y: &[u64],
        q: u64,
    ) -> usize {
        let qv = _mm512_set1_epi64(q as i64);
        let full = out.len() - out.len() % L;
        let p = out.as_mut_ptr();
        let xp = x.map_or(p as *const u64, |x| x.as_ptr());
        let mut j = 0;
        while j < full {
            let (a, b) = (load(xp, j), load(y.as_ptr(), j));
            let r = if ADD {
                let t = _mm512_add_epi64(a, b);
                _mm512_min_epu64(t, _mm512_sub_epi64(t, qv))
            } else {
                let t = _mm512_sub_epi64(a, b);
                _mm512_min_epu64(t, _mm512_add_epi64(t, qv))
            };
            _mm512_storeu_si512(p.add(j) as *mut __m512i, r);
            j += L;
        }
        full
    }

    /// The vector part of [`super::mul_const_row_from`] (`x` is `out` when `None`, else at
    /// least as long); returns how many words it did.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn mul_const(
        out: &mut [u64],
        x: Option<&[u64]>,
        w: u64,
        ws: u64,
        q: u64,
    ) -> usize {
        let s = |x: u64| _mm512_set1_epi64(x as i64);
        let (wv, wsv, qv, q2) = (s(w), s(ws), s(q), s(2 * q));
        let full = out.len() - out.len() % L;
        let p = out.as_mut_ptr();
        let xp = x.map_or(p as *const u64, |x| x.as_ptr());
        let mut j = 0;
        while j < full {
            let r = shoup64_512(load(xp, j), wv, wsv, qv);
            _mm512_storeu_si512(p.add(j) as *mut __m512i, small_mod(small_mod(r, q2), qv));
            j += L;
        }
        full
    }

    /// The vector part of [`super::lift_centered_row`]: `x mod q` by a Shoup product with 1,
    /// minus `src mod q` where `x` stands for the negative `x - src`.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn lift_centered(x: &[u64], out: &mut [u64], k: &super::LiftConsts) -> usize {
        let s = |x: u64| _mm512_set1_epi64(x as i64);
        let (half, sq, qv, q2) = (s(k.half), s(k.src_mod_q), s(k.q), s(2 * k.q));
        let (one, one_s) = (s(1), s(k.one_shoup));
        let full = out.len() - out.len() % L;
        let mut j = 0;
        while j < full {
            let v = load(x.as_ptr(), j);
            let r = small_mod(small_mod(shoup64_512(v, one, one_s, qv), q2), qv);
            let negative = _mm512_cmpgt_epu64_mask(v, half);
            // r - src mod q, in the negative lanes.
            let d = _mm512_sub_epi64(_mm512_add_epi64(r, qv), sq);
            let d = small_mod(d, qv);
            let r = _mm512_mask_mov_epi64(r, negative, d);
            _mm512_storeu_si512(out.as_mut_ptr().add(j) as *mut __m512i, r);
            j += L;
        }
        full
    }

    /// The vector part of [`super::sum_products`]; returns how many words it did (a multiple
    /// of 8), leaving the tail to the scalar loop.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn sum_products(
        xs: &[*const u64],
        ys: &[*const u64],
        accumulate: bool,
        out: *mut u64,
        n: usize,
        rc: &ReduceConsts,
    ) -> usize {
        let k = Consts::new(rc);
        let full = n - n % L;
        let mut j = 0;
        while j < full {
            let mut c = Columns::new(init(accumulate, out, j));
            for (&x, &y) in xs.iter().zip(ys) {
                let x = load(x, j);
                c.add(x, _mm512_srli_epi64::<32>(x), load(y, j), &k);
            }
            _mm512_storeu_si512(out.add(j) as *mut __m512i, c.reduce(&k));
            j += L;
        }
        full
    }

    /// The vector part of [`super::sum_products2`].
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn sum_products2(
        xs: &[*const u64],
        ys: [&[*const u64]; 2],
        accumulate: bool,
        outs: [*mut u64; 2],
        n: usize,
        rc: &ReduceConsts,
    ) -> usize {
        let k = Consts::new(rc);
        let full = n - n % L;
        let mut j = 0;
        while j < full {
            let mut c0 = Columns::new(init(accumulate, outs[0], j));
            let mut c1 = Columns::new(init(accumulate, outs[1], j));
            for (t, &x) in xs.iter().enumerate() {
                let x = load(x, j);
                let xh = _mm512_srli_epi64::<32>(x);
                c0.add(x, xh, load(ys[0][t], j), &k);
                c1.add(x, xh, load(ys[1][t], j), &k);
            }
            _mm512_storeu_si512(outs[0].add(j) as *mut __m512i, c0.reduce(&k));
            _mm512_storeu_si512(outs[1].add(j) as *mut __m512i, c1.reduce(&k));
            j += L;
        }
        full
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use super::ReduceConsts;
    use crate::ntt::shoup64_256;
    use core::arch::x86_64::*;

    const L: usize = 4;

    /// The broadcast constants of one modulus.
    struct Consts {
        q: __m256i,
        q2: __m256i,
        r64: __m256i,
        r64_shoup: __m256i,
        one_shoup: __m256i,
        low32: __m256i,
    }

    impl Consts {
        #[inline(always)]
        unsafe fn new(k: &ReduceConsts) -> Self {
            let s = |x: u64| _mm256_set1_epi64x(x as i64);
            Self {
                q: s(k.q),
                q2: s(2 * k.q),
                r64: s(k.r64),
                r64_shoup: s(k.r64_shoup),
                one_shoup: s(k.one_shoup),
                low32: s(u32::MAX as u64),
            }
        }
    }

    /// `a` where the sign bit of `mask` is set, else `b`.
    #[inline(always)]
    unsafe fn select_negative(mask: __m256i, a: __m256i, b: __m256i) -> __m256i {
        _mm256_castpd_si256(_mm256_blendv_pd(
            _mm256_castsi256_pd(b),
            _mm256_castsi256_pd(a),
            _mm256_castsi256_pd(mask),
        ))
    }

    /// `x mod m` for `x < 2m` and `m < 2^63`: `x - m` wraps to a word with its top bit set
    /// exactly when `x < m`.
    #[inline(always)]
    unsafe fn small_mod(x: __m256i, m: __m256i) -> __m256i {
        let d = _mm256_sub_epi64(x, m);
        select_negative(d, x, d)
    }

    /// `y mod q` in `[0, 4q)` for any `y < 2^64`: the Shoup product with 1 (`ws = floor(2^64 /
    /// q)`), without the multiply by 1 and with the approximate quotient of
    /// `crate::ntt::shoup64_256` (three partial products).
    #[inline(always)]
    unsafe fn reduce_word(y: __m256i, ws: __m256i, q: __m256i) -> __m256i {
        let y_hi = _mm256_srli_epi64::<32>(y);
        let ws_hi = _mm256_srli_epi64::<32>(ws);
        let lh = _mm256_mul_epu32(y, ws_hi);
        let hl = _mm256_mul_epu32(y_hi, ws);
        let hh = _mm256_mul_epu32(y_hi, ws_hi);
        let qhat = _mm256_add_epi64(
            hh,
            _mm256_add_epi64(_mm256_srli_epi64::<32>(lh), _mm256_srli_epi64::<32>(hl)),
        );
        // Low 64 bits of qhat * q from three partial products.
        let q_hi = _mm256_srli_epi64::<32>(q);
        let cross = _mm256_add_epi64(
            _mm256_mul_epu32(qhat, q_hi),
            _mm256_mul_epu32(_mm256_srli_epi64::<32>(qhat), q),
        );
        let qq = _mm256_add_epi64(_mm256_mul_epu32(qhat, q), _mm256_slli_epi64::<32>(cross));
        _mm256_sub_epi64(y, qq)
    }

    /// A lane-wise 128-bit sum of products, kept as `lo + mid * 2^32 + hi * 2^64` in columns
    /// that cannot overflow for up to `MAX_TERMS` products of operands below 2^62: `lo` gets
    /// 32-bit pieces (on top of an accumulator below 2^62), `mid` 32-bit pieces, and `hi`
    /// values below 2^61.
    #[derive(Clone, Copy)]
    struct Columns {
        lo: __m256i,
        mid: __m256i,
        hi: __m256i,
    }

    impl Columns {
        #[inline(always)]
        unsafe fn new(init: __m256i) -> Self {
            let z = _mm256_setzero_si256();
            Self {
                lo: init,
                mid: z,
                hi: z,
            }
        }

        /// Adds `x * y`, with `xh = x >> 32` split by the caller (it is shared by the
        /// products of one `x`). With `x, y < 2^62` the cross products are below 2^62 each,
        /// so their sum with the upper half of the low product is below 2^64.
        #[inline(always)]
        unsafe fn add(&mut self, x: __m256i, xh: __m256i, y: __m256i, k: &Consts) {
            let yh = _mm256_srli_epi64::<32>(y);
            let ll = _mm256_mul_epu32(x, y);
            let hh = _mm256_mul_epu32(xh, yh);
            let cross = _mm256_add_epi64(
                _mm256_add_epi64(_mm256_mul_epu32(x, yh), _mm256_mul_epu32(xh, y)),
                _mm256_srli_epi64::<32>(ll),
            );
            self.lo = _mm256_add_epi64(self.lo, _mm256_and_si256(ll, k.low32));
            self.mid = _mm256_add_epi64(self.mid, _mm256_and_si256(cross, k.low32));
            self.hi = _mm256_add_epi64(
                self.hi,
                _mm256_add_epi64(hh, _mm256_srli_epi64::<32>(cross)),
            );
        }

        /// The sum modulo `q`, in `[0, q)`.
        #[inline(always)]
        unsafe fn reduce(&self, k: &Consts) -> __m256i {
            // Fold into h * 2^64 + t with t, h < 2^64: c < 2^37 carries into both.
            let c = _mm256_add_epi64(_mm256_srli_epi64::<32>(self.lo), self.mid);
            let t = _mm256_or_si256(
                _mm256_and_si256(self.lo, k.low32),
                _mm256_slli_epi64::<32>(c),
            );
            let h = _mm256_add_epi64(self.hi, _mm256_srli_epi64::<32>(c));
            // h * (2^64 mod q) + t, each raw product in [0, 4q) brought to [0, 2q).
            let a = small_mod(shoup64_256(h, k.r64, k.r64_shoup, k.q), k.q2);
            let b = small_mod(reduce_word(t, k.one_shoup, k.q), k.q2);
            small_mod(small_mod(_mm256_add_epi64(a, b), k.q2), k.q)
        }
    }

    #[inline(always)]
    unsafe fn load(p: *const u64, j: usize) -> __m256i {
        _mm256_loadu_si256(p.add(j) as *const __m256i)
    }

    #[inline(always)]
    unsafe fn store(p: *mut u64, j: usize, v: __m256i) {
        _mm256_storeu_si256(p.add(j) as *mut __m256i, v)
    }

    #[inline(always)]
    unsafe fn init(accumulate: bool, out: *mut u64, j: usize) -> __m256i {
        if accumulate {
            load(out, j)
        } else {
            _mm256_setzero_si256()
        }
    }

    /// The AVX2 part of [`super::add_row`] and [`super::sub_row`]; returns how many words it
    /// did.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn add_sub<const ADD: bool>(
        out: &mut [u64],
        x: Option<&[u64]>,
        y: &[u64],
        q: u64,
    ) -> usize {
        let qv = _mm256_set1_epi64x(q as i64);
        let full = out.len() - out.len() % L;
        let p = out.as_mut_ptr();
        let xp = x.map_or(p as *const u64, |x| x.as_ptr());
        let mut j = 0;
        while j < full {
            let (a, b) = (load(xp, j), load(y.as_ptr(), j));
            let r = if ADD {
                small_mod(_mm256_add_epi64(a, b), qv)
            } else {
                let t = _mm256_sub_epi64(a, b);
                select_negative(t, _mm256_add_epi64(t, qv), t)
            };
            store(p, j, r);
            j += L;
        }
        full
    }

    /// The AVX2 part of [`super::mul_const_row_from`] (`x` is `out` when `None`, else at
    /// least as long); returns how many words it did.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn mul_const(
        out: &mut [u64],
        x: Option<&[u64]>,
        w: u64,
        ws: u64,
        q: u64,
    ) -> usize {
        let s = |x: u64| _mm256_set1_epi64x(x as i64);
        let (wv, wsv, qv, q2) = (s(w), s(ws), s(q), s(2 * q));
        let full = out.len() - out.len() % L;
        let p = out.as_mut_ptr();
        let xp = x.map_or(p as *const u64, |x| x.as_ptr());
        let mut j = 0;
        while j < full {
            let r = shoup64_256(load(xp, j), wv, wsv, qv);
            store(p, j, small_mod(small_mod(r, q2), qv));
            j += L;
        }
        full
    }

    /// The AVX2 part of [`super::lift_centered_row`]: `x mod q`, minus `src mod q` where `x`
    /// stands for the negative `x - src` (`x < src < 2^62`, so a signed compare decides).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn lift_centered(x: &[u64], out: &mut [u64], k: &super::LiftConsts) -> usize {
        let s = |x: u64| _mm256_set1_epi64x(x as i64);
        let (half, sq, qv, q2, one_s) = (
            s(k.half),
            s(k.src_mod_q),
            s(k.q),
            s(2 * k.q),
            s(k.one_shoup),
        );
        let full = out.len() - out.len() % L;
        let mut j = 0;
        while j < full {
            let v = load(x.as_ptr(), j);
            let r = small_mod(small_mod(reduce_word(v, one_s, qv), q2), qv);
            let negative = _mm256_cmpgt_epi64(v, half);
            let d = small_mod(_mm256_sub_epi64(_mm256_add_epi64(r, qv), sq), qv);
            store(out.as_mut_ptr(), j, _mm256_blendv_epi8(r, d, negative));
            j += L;
        }
        full
    }

    /// The AVX2 part of [`super::sum_products`]; returns how many words it did (a multiple
    /// of 4), leaving the tail to the scalar loop.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn sum_products(
        xs: &[*const u64],
        ys: &[*const u64],
        accumulate: bool,
        out: *mut u64,
        n: usize,
        rc: &ReduceConsts,
    ) -> usize {
        let k = Consts::new(rc);
        let full = n - n % L;
        let mut j = 0;
        while j < full {
            let mut c = Columns::new(init(accumulate, out, j));
            for (&x, &y) in xs.iter().zip(ys) {
                let x = load(x, j);
                c.add(x, _mm256_srli_epi64::<32>(x), load(y, j), &k);
            }
            store(out, j, c.reduce(&k));
            j += L;
        }
        full
    }

    /// `out[k] = sum_i ys[i][k] * c[i] mod p` for the words of whole vectors (returns how
    /// many): the BConv multiply-accumulate row on AVX2. The products are summed in columns and
    /// reduced once per `MAX_TERMS` terms (chained through the output), four 32-bit multiplies
    /// a term instead of the nine of a Shoup product emulated without a 64-bit multiply.
    /// Needs `ys[i][k] < 2^62`, `c[i] < p < 2^62` and each `ys[i]` at least `out.len()` long.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn mac_const(
        ys: &[&[u64]],
        c: &[u64],
        out: &mut [u64],
        rc: &ReduceConsts,
    ) -> usize {
        let k = Consts::new(rc);
        let full = out.len() - out.len() % L;
        let whole = full - full % (MAC_VECTORS * L);
        let o = out.as_mut_ptr();
        for (t, (yc, cc)) in ys
            .chunks(super::MAX_TERMS)
            .zip(c.chunks(super::MAX_TERMS))
            .enumerate()
        {
            let mut j = 0;
            while j < whole {
                mac_vectors::<MAC_VECTORS>(yc, cc, t > 0, o, j, &k);
                j += MAC_VECTORS * L;
            }
            while j < full {
                mac_vectors::<1>(yc, cc, t > 0, o, j, &k);
                j += L;
            }
        }
        full
    }

    /// Vectors of a BConv row summed side by side in [`mac_const`]: the reduction at the end
    /// of each vector is a long dependent chain (two Shoup products), which one vector at a
    /// time leaves the multipliers waiting on.
    const MAC_VECTORS: usize = 2;

    /// `V` consecutive vectors of [`mac_const`] from word `j` (added to what `o` holds when
    /// `acc`), their column sums interleaved.
    #[inline(always)]
    unsafe fn mac_vectors<const V: usize>(
        ys: &[&[u64]],
        c: &[u64],
        acc: bool,
        o: *mut u64,
        j: usize,
        k: &Consts,
    ) {
        let mut sum: [Columns; V] = core::array::from_fn(|v| Columns::new(init(acc, o, j + v * L)));
        for (y, &ci) in ys.iter().zip(c) {
            let w = _mm256_set1_epi64x(ci as i64);
            for (v, sum) in sum.iter_mut().enumerate() {
                let x = load(y.as_ptr(), j + v * L);
                sum.add(x, _mm256_srli_epi64::<32>(x), w, k);
            }
        }
        for (v, sum) in sum.iter().enumerate() {
            store(o, j + v * L, sum.reduce(k));
        }
    }

    /// The AVX2 part of [`super::sum_products2`].
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn sum_products2(
        xs: &[*const u64],
        ys: [&[*const u64]; 2],
        accumulate: bool,
        outs: [*mut u64; 2],
        n: usize,
        rc: &ReduceConsts,
    ) -> usize {
        let k = Consts::new(rc);
        let full = n - n % L;
        let mut j = 0;
        while j < full {
            let mut c0 = Columns::new(init(accumulate, outs[0], j));
            let mut c1 = Columns::new(init(accumulate, outs[1], j));
            for (t, &x) in xs.iter().enumerate() {
                let x = load(x, j);
                let xh = _mm256_srli_epi64::<32>(x);
                c0.add(x, xh, load(ys[0][t], j), &k);
                c1.add(x, xh, load(ys[1][t], j), &k);
            }
            store(outs[0], j, c0.reduce(&k));
            store(outs[1], j, c1.reduce(&k));
            j += L;
        }
        full
    }
}

/// AVX2 element-wise and dot products of residues below 2^50 in double precision on the FMA
/// units: AVX2 has no 64 x 64-bit multiply, and the integer path spends about 12 operations a
/// term and 35 on the final reduction; here a term takes about 9 and the reduction 6.
///
/// Why it is exact (`x, y < q < 2^50`): `h = fl(x y)` and `l = x y - h` (one FMA: a
/// product's rounding error is representable); the quotient `z = x y / q < 2^50` is estimated
/// by `fl(h fl(1/q))` within 0.375 and rounded, so `r = x y - qt q` lies in
/// `(-0.875q, 0.875q)`; `h - qt q = r - l` (`|l| <= 2^47`) comes out of one FMA exactly and
/// `r` is that plus `l`. A sum of the accumulator (`< q`) and up to [`avx2_fma::CHUNK`] such
/// terms stays below `8q < 2^53` (every partial sum an exact integer); it is then reduced by
/// one rounded quotient to `(-0.6q, 0.6q)` and summing goes on. The last reduction adds
/// `q + 2^52`, reads the integer from the double's bits and subtracts `q` once if needed.
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2_fma {
    use crate::modular::Modulus;
    use core::arch::x86_64::*;

    const L: usize = 4;
    /// Terms summed between two reductions (see the module's bound).
    pub(super) const CHUNK: usize = 7;
    /// Bits of 2^52: `x | MAGIC52` read as a double is `2^52 + x` for `x < 2^52`.
    const MAGIC52: i64 = 0x4330_0000_0000_0000;
    /// `(v + 1.5 * 2^52) - 1.5 * 2^52` rounds any `|v| < 2^51` to the nearest integer.
    const ROUND: f64 = 6_755_399_441_055_744.0;

    /// Whether `m` takes this path here (below 2^50, AVX2 and FMA present, not turned off).
    pub(crate) fn fits(m: &Modulus) -> bool {
        m.value() < 1 << 50 && crate::simd::avx2_fma()
    }

    struct Consts {
        q: __m256d,
        qinv: __m256d,
        round: __m256d,
        magic: __m256d,
        /// `q + 2^52`: shifts a value of `(-q, q)` into `[2^52, 2^53)`.
        bias: __m256d,
        qi: __m256i,
    }

    impl Consts {
        #[inline(always)]
        unsafe fn new(q: u64) -> Self {
            let qd = q as f64;
            Self {
                q: _mm256_set1_pd(qd),
                qinv: _mm256_set1_pd(1.0 / qd),
                round: _mm256_set1_pd(ROUND),
                magic: _mm256_castsi256_pd(_mm256_set1_epi64x(MAGIC52)),
                bias: _mm256_set1_pd(qd + 4_503_599_627_370_496.0),
                qi: _mm256_set1_epi64x(q as i64),
            }
        }
    }

    /// BConv's terms as doubles, once per block for every output row ([`crate::rns`]): each
    /// input word `y < 2^50` as one double, and each wider one (`y < 2^62`) as the two exact
    /// doubles `y mod 2^31` and `y >> 31`. `wide[i]` says which; `out` receives one row of
    /// `len` doubles per term, in input order (low half first).
    ///
    /// # Safety
    /// AVX2 present; `out` holds `len` words per term; each `ys[i]` at least `len` long.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn terms(ys: &[&[u64]], wide: &[bool], len: usize, out: &mut [f64]) {
        let magic = _mm256_set1_epi64x(MAGIC52);
        let low31 = _mm256_set1_epi64x((1 << 31) - 1);
        let conv = |v: __m256i| {
            _mm256_sub_pd(
                _mm256_castsi256_pd(_mm256_or_si256(v, magic)),
                _mm256_castsi256_pd(magic),
            )
        };
        let full = len - len % L;
        let mut rows = out.chunks_mut(len);
        for (y, &w) in ys.iter().zip(wide) {
            let y = &y[..len];
            if w {
                let (lo, hi) = (
                    rows.next().expect("a row per term"),
                    rows.next().expect("a row per term"),
                );
                let mut j = 0;
                while j < full {
                    let v = _mm256_loadu_si256(y.as_ptr().add(j) as *const __m256i);
                    _mm256_storeu_pd(lo.as_mut_ptr().add(j), conv(_mm256_and_si256(v, low31)));
                    _mm256_storeu_pd(hi.as_mut_ptr().add(j), conv(_mm256_srli_epi64::<31>(v)));
                    j += L;
                }
                for j in full..len {
                    lo[j] = (y[j] & ((1 << 31) - 1)) as f64;
                    hi[j] = (y[j] >> 31) as f64;
                }
            } else {
                let row = rows.next().expect("a row per term");
                let mut j = 0;
                while j < full {
                    let v = _mm256_loadu_si256(y.as_ptr().add(j) as *const __m256i);
                    _mm256_storeu_pd(row.as_mut_ptr().add(j), conv(v));
                    j += L;
                }
                for j in full..len {
                    row[j] = y[j] as f64;
                }
            }
        }
    }

    /// `out[k] = (x[k] - y[k]) * c mod p` (`SUB`) or `x[k] * c mod p` for the words of
    /// whole vectors (returns how many), `x` being `out` itself when `None`: the constant
    /// products of rescaling, ModDown and plaintext scaling, with ModDown's subtraction fused.
    /// The difference of two residues is exact in double precision and below `p < 2^50` in
    /// magnitude, a valid product input.
    ///
    /// # Safety
    /// AVX2 and FMA present; `p < 2^50`; every `x[k], y[k] < p`; `c < p`; `x` and, with `SUB`,
    /// `y` at least `out.len()` long.
    #[target_feature(enable = "avx2,fma")]
    pub(crate) unsafe fn mul_const<const SUB: bool>(
        out: &mut [u64],
        x: Option<&[u64]>,
        y: &[u64],
        c: u64,
        p: u64,
    ) -> usize {
        let k = Consts::new(p);
        let c = _mm256_set1_pd(c as f64);
        let full = out.len() - out.len() % L;
        let o = out.as_mut_ptr();
        let xp = x.map_or(o as *const u64, |x| x.as_ptr());
        let mut j = 0;
        while j < full {
            let mut v = to_f64(_mm256_loadu_si256(xp.add(j) as *const __m256i), &k);
            if SUB {
                let w = to_f64(_mm256_loadu_si256(y.as_ptr().add(j) as *const __m256i), &k);
                v = _mm256_sub_pd(v, w);
            }
            _mm256_storeu_si256(o.add(j) as *mut __m256i, canonical(product(v, c, &k), &k));
            j += L;
        }
        full
    }

    /// `out[k] = x[k] * c mod p` for the words of whole vectors (returns how many): BConv's
    /// scaling step, out of place, for `p < 2^50`.
    ///
    /// # Safety
    /// AVX2 and FMA present; every `x[k] < 2^50`; `c < p`; `x` at least `out.len()` long.
    #[target_feature(enable = "avx2,fma")]
    pub(crate) unsafe fn mul_const_to(x: &[u64], c: u64, out: &mut [u64], p: u64) -> usize {
        let k = Consts::new(p);
        let c = _mm256_set1_pd(c as f64);
        let full = out.len() - out.len() % L;
        let mut j = 0;
        while j < full {
            let v = to_f64(_mm256_loadu_si256(x.as_ptr().add(j) as *const __m256i), &k);
            let r = canonical(product(v, c, &k), &k);
            _mm256_storeu_si256(out.as_mut_ptr().add(j) as *mut __m256i, r);
            j += L;
        }
        full
    }

    /// `out[k] = sum_i xs[i][k] * c[i] mod p` for the words of whole vectors (returns how
    /// many): BConv's multiply-accumulate row over the double terms of [`terms`], for
    /// `p < 2^50`, any number of terms.
    ///
    /// # Safety
    /// AVX2 and FMA present; every `xs[i][k]` an integer in `[0, 2^50)`; every `c[i]` an
    /// integer in `[0, p)`; each `xs[i]` at least `out.len()` long.
    #[target_feature(enable = "avx2,fma")]
    pub(crate) unsafe fn mac_terms(xs: &[&[f64]], c: &[f64], out: &mut [u64], p: u64) -> usize {
        let k = Consts::new(p);
        let cs: Vec<__m256d> = c.iter().map(|&c| _mm256_set1_pd(c)).collect();
        let full = out.len() - out.len() % L;
        let whole = full - full % (MAC_VECTORS * L);
        let mut j = 0;
        while j < whole {
            mac_vectors::<MAC_VECTORS>(xs, &cs, out, j, &k);
            j += MAC_VECTORS * L;
        }
        while j < full {
            mac_vectors::<1>(xs, &cs, out, j, &k);
            j += L;
        }
        full
    }

    /// Vectors of a BConv row summed side by side in [`mac_terms`]: each vector's sum is a
    /// serial chain of additions (four cycles each), which one vector at a time leaves the
    /// FMA units waiting on.
    const MAC_VECTORS: usize = 2;

    /// `V` consecutive vectors of [`mac_terms`] from word `j`, their sums interleaved.
    #[inline(always)]
    unsafe fn mac_vectors<const V: usize>(
        xs: &[&[f64]],
        cs: &[__m256d],
        out: &mut [u64],
        j: usize,
        k: &Consts,
    ) {
        let mut s = [_mm256_setzero_pd(); V];
        // Whole chunks of terms between reductions: a `t % CHUNK` test per term compiled to a
        // scalar division sequence that took as many instructions as the vector work.
        for (chunk, (xc, cc)) in xs.chunks(CHUNK).zip(cs.chunks(CHUNK)).enumerate() {
            if chunk > 0 {
                for s in s.iter_mut() {
                    *s = partial(*s, k);
                }
            }
            for (x, c) in xc.iter().zip(cc) {
                for (v, s) in s.iter_mut().enumerate() {
                    let x = _mm256_loadu_pd(x.as_ptr().add(j + v * L));
                    *s = _mm256_add_pd(*s, product(x, *c, k));
                }
            }
        }
        for (v, s) in s.iter().enumerate() {
            _mm256_storeu_si256(
                out.as_mut_ptr().add(j + v * L) as *mut __m256i,
                canonical(*s, k),
            );
        }
    }

    #[inline(always)]
    unsafe fn to_f64(v: __m256i, k: &Consts) -> __m256d {
        _mm256_sub_pd(
            _mm256_castsi256_pd(_mm256_or_si256(v, _mm256_castpd_si256(k.magic))),
            k.magic,
        )
    }

    /// `x y mod q` as a double in `(-0.875q, 0.875q)`.
    #[inline(always)]
    unsafe fn product(x: __m256d, y: __m256d, k: &Consts) -> __m256d {
        let h = _mm256_mul_pd(x, y);
        let l = _mm256_fmsub_pd(x, y, h);
        let qt = _mm256_sub_pd(_mm256_fmadd_pd(h, k.qinv, k.round), k.round);
        _mm256_add_pd(_mm256_fnmadd_pd(qt, k.q, h), l)
    }

    /// `s mod q` in `(-0.6q, 0.6q)` for an integer `|s| < 8q`.
    #[inline(always)]
    unsafe fn partial(s: __m256d, k: &Consts) -> __m256d {
        let qt = _mm256_sub_pd(_mm256_fmadd_pd(s, k.qinv, k.round), k.round);
        _mm256_fnmadd_pd(qt, k.q, s)
    }

    /// `s mod q` in `[0, q)` for an integer `|s| < 8q`.
    #[inline(always)]
    unsafe fn canonical(s: __m256d, k: &Consts) -> __m256i {
        let r = _mm256_add_pd(partial(s, k), k.bias);
        let v = _mm256_sub_epi64(_mm256_castpd_si256(r), _mm256_castpd_si256(k.magic));
        let d = _mm256_sub_epi64(v, k.qi);
        // `v < 2q`: `v - q` is negative exactly when `v < q`.
        _mm256_castpd_si256(_mm256_blendv_pd(
            _mm256_castsi256_pd(d),
            _mm256_castsi256_pd(v),
            _mm256_castsi256_pd(d),
        ))
    }

    /// `outs[o][k] = (acc + sum_t xs[t][k] * ys[o][t][k]) mod q` for the words of whole
    /// vectors, `O` outputs sharing `xs` (converted once); returns how many words it did.
    ///
    /// # Safety
    /// As `super::sum_products`, with `q < 2^50` and AVX2 and FMA present.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn sum_products<const O: usize>(
        xs: &[*const u64],
        ys: [&[*const u64]; O],
        accumulate: bool,
        outs: [*mut u64; O],
        n: usize,
        q: u64,
    ) -> usize {
        let k = Consts::new(q);
        let full = n - n % L;
        let whole = full - full % (MAC_VECTORS * L);
        let mut j = 0;
        while j < whole {
            dot_vectors::<O, MAC_VECTORS>(xs, &ys, accumulate, &outs, j, &k);
            j += MAC_VECTORS * L;
        }
        while j < full {
            dot_vectors::<O, 1>(xs, &ys, accumulate, &outs, j, &k);
            j += L;
        }
        full
    }

    /// `V` consecutive vectors of [`sum_products`] from word `j`, their sums interleaved (as
    /// [`mac_vectors`]).
    #[inline(always)]
    unsafe fn dot_vectors<const O: usize, const V: usize>(
        xs: &[*const u64],
        ys: &[&[*const u64]; O],
        accumulate: bool,
        outs: &[*mut u64; O],
        j: usize,
        k: &Consts,
    ) {
        let load = |p: *const u64, j: usize| _mm256_loadu_si256(p.add(j) as *const __m256i);
        let mut s = [[_mm256_setzero_pd(); O]; V];
        if accumulate {
            for (v, s) in s.iter_mut().enumerate() {
                for (s, &o) in s.iter_mut().zip(outs) {
                    *s = to_f64(load(o, j + v * L), k);
                }
            }
        }
        // Whole chunks of terms between reductions, as in `mac_vectors`.
        for (chunk, xc) in xs.chunks(CHUNK).enumerate() {
            if chunk > 0 {
                for s in s.iter_mut().flatten() {
                    *s = partial(*s, k);
                }
            }
            for (i, &x) in xc.iter().enumerate() {
                let t = chunk * CHUNK + i;
                for (v, s) in s.iter_mut().enumerate() {
                    let x = to_f64(load(x, j + v * L), k);
                    for (s, y) in s.iter_mut().zip(ys) {
                        *s = _mm256_add_pd(*s, product(x, to_f64(load(y[t], j + v * L), k), k));
                    }
                }
            }
        }
        for (v, s) in s.iter().enumerate() {
            for (s, &o) in s.iter().zip(outs) {
                _mm256_storeu_si256(o.add(j + v * L) as *mut __m256i, canonical(*s, k));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definition, one coefficient at a time with big-enough integers.
    fn reference(q: u64, acc: Option<&[u64]>, xs: &[Vec<u64>], ys: &[Vec<u64>], k: usize) -> u64 {
        let mut s = acc.map_or(0u128, |a| a[k] as u128) % q as u128;
        for (x, y) in xs.iter().zip(ys) {
            s = (s + x[k] as u128 * y[k] as u128 % q as u128) % q as u128;
        }
        s as u64
    }

    fn rows(q: u64, terms: usize, n: usize, seed: u64) -> Vec<Vec<u64>> {
        (0..terms)
            .map(|t| {
                let mut v = crate::testutil::random_residues(n, q, seed ^ (t as u64) << 40);
                // The extremes exercise every carry.
                v[0] = q - 1;
                v[n - 1] = q - 1;
                v[1] = 0;
                v
            })
            .collect()
    }

    fn kernels() -> Vec<Kernel> {
        crate::simd::kernels_for_tests("element-wise products")
    }

    const MODULI: [u64; 6] = [
        (1 << 62) - 57,      // the largest modulus a Modulus accepts (62 bits)
        (1 << 61) - 1,       // 61 bits
        1152921504606584833, // a 60-bit NTT prime
        (1 << 50) - 27,      // 50 bits
        (1 << 32) - 5,       // just above 32 bits
        (1 << 27) - 39,      // CiFHER-size words
    ];

    /// Where the FMA products take the AVX2 kernel's small moduli, its integer products (what
    /// a CPU without FMA, or `TESSERA_AVX2_FMA=0`, runs) are checked here directly.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_integer_products_match_the_definition_for_small_moduli() {
        if !crate::ntt::Kernel::Avx2.cpu_supports() {
            eprintln!(
                "SKIPPED avx2_integer_products_match_the_definition_for_small_moduli: no AVX2"
            );
            return;
        }
        let n = 36;
        for &q in MODULI.iter().filter(|&&q| q < 1 << 50) {
            for terms in [1usize, 7, 8, 15] {
                let xs = rows(q, terms, n, 5);
                let ys = rows(q, terms, n, 6);
                let acc = rows(q, 1, n, 7).pop().unwrap();
                let mut out = acc.clone();
                let (xp, yp) = (
                    pointers(&xs.iter().map(|v| v.as_slice()).collect::<Vec<_>>()),
                    pointers(&ys.iter().map(|v| v.as_slice()).collect::<Vec<_>>()),
                );
                let rc = ReduceConsts::new(&Modulus::new(q).unwrap());
                // SAFETY: AVX2 checked above; every row holds `n` words below `q`.
                let done = unsafe { avx2::sum_products(&xp, &yp, true, out.as_mut_ptr(), n, &rc) };
                assert_eq!(done, n);
                for (k, &got) in out.iter().enumerate() {
                    assert_eq!(
                        got,
                        reference(q, Some(&acc), &xs, &ys, k),
                        "q={q} terms={terms} k={k}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_kernel_matches_the_definition() {
        // 37 words: four vectors and a scalar tail of five.
        let n = 37;
        for &q in &MODULI {
            let m = Modulus::new(q).unwrap();
            for terms in [1usize, 2, 4, 15, 16, 33] {
                let xs = rows(q, terms, n, 1);
                let ys = rows(q, terms, n, 2);
                let zs = rows(q, terms, n, 3);
                let acc = rows(q, 1, n, 4).pop().unwrap();
                let xr: Vec<&[u64]> = xs.iter().map(|v| v.as_slice()).collect();
                let yr: Vec<&[u64]> = ys.iter().map(|v| v.as_slice()).collect();
                let zr: Vec<&[u64]> = zs.iter().map(|v| v.as_slice()).collect();
                for kernel in kernels() {
                    let mut out = vec![0u64; n];
                    dot_row(kernel, &m, &xr, &yr, &mut out).unwrap();
                    let mut o0 = vec![0u64; n];
                    let mut o1 = vec![0u64; n];
                    dot2_row(kernel, &m, &xr, &yr, &zr, &mut o0, &mut o1).unwrap();
                    for k in 0..n {
                        let want = reference(q, None, &xs, &ys, k);
                        assert_eq!(out[k], want, "dot q={q} terms={terms} {kernel:?} k={k}");
                        assert_eq!(o0[k], want, "dot2 first q={q} {kernel:?}");
                        assert_eq!(o1[k], reference(q, None, &xs, &zs, k), "dot2 second");
                    }
                    let mut prod = xs[0].clone();
                    mul_row(kernel, &m, &mut prod, &ys[0]).unwrap();
                    let mut mac = acc.clone();
                    mul_acc_row(kernel, &m, &mut mac, &xs[0], &ys[0]).unwrap();
                    for k in 0..n {
                        assert_eq!(prod[k], reference(q, None, &xs[..1], &ys[..1], k));
                        assert_eq!(mac[k], reference(q, Some(&acc), &xs[..1], &ys[..1], k));
                    }
                }
            }
        }
    }

    #[test]
    fn constant_products_and_centered_lifts_match_the_definition() {
        let n = 37;
        for &q in &MODULI {
            let m = Modulus::new(q).unwrap();
            let x = rows(q, 1, n, 9).pop().unwrap();
            for w in [0, 1, q - 1, q / 3, u64::MAX] {
                let y = rows(q, 1, n, 13).pop().unwrap();
                for kernel in kernels() {
                    let mut got = x.clone();
                    mul_const_row(kernel, &m, w, &mut got);
                    for k in 0..n {
                        let want = (x[k] as u128 * (w % q) as u128 % q as u128) as u64;
                        assert_eq!(got[k], want, "q={q} w={w} {kernel:?}");
                    }
                    let mut got = x.clone();
                    sub_mul_const_row(kernel, &m, w, &mut got, &y).unwrap();
                    let mut to = vec![0u64; n];
                    sub_mul_const_from(kernel, &m, w, &mut to, Some(&x), &y).unwrap();
                    for k in 0..n {
                        let d = (x[k] as u128 + q as u128 - y[k] as u128) % q as u128;
                        let want = (d * (w % q) as u128 % q as u128) as u64;
                        assert_eq!(got[k], want, "q={q} w={w} {kernel:?} (x - y) w");
                        assert_eq!(
                            to[k], want,
                            "q={q} w={w} {kernel:?} (x - y) w, out of place"
                        );
                    }
                }
            }
            for &src in &MODULI {
                let sm = Modulus::new(src).unwrap();
                let mut v = rows(src, 1, n, 10).pop().unwrap();
                // Both sides of the centring threshold.
                v[2] = src / 2;
                v[3] = src / 2 + 1;
                for kernel in kernels() {
                    let mut got = vec![0u64; n];
                    lift_centered_row(kernel, &sm, &m, &v, &mut got).unwrap();
                    for k in 0..n {
                        let c = sm.center(v[k]) as i128;
                        let want = c.rem_euclid(q as i128) as u64;
                        assert_eq!(got[k], want, "src={src} q={q} {kernel:?} k={k}");
                    }
                }
            }
        }
    }

    #[test]
    fn sums_and_differences_match_the_definition() {
        let n = 37;
        for &q in &MODULI {
            let m = Modulus::new(q).unwrap();
            let (x, y) = (
                rows(q, 1, n, 11).pop().unwrap(),
                rows(q, 1, n, 12).pop().unwrap(),
            );
            for kernel in kernels() {
                let (mut s, mut d) = (x.clone(), x.clone());
                add_row(kernel, &m, &mut s, &y).unwrap();
                sub_row(kernel, &m, &mut d, &y).unwrap();
                let (mut s_to, mut d_to) = (vec![0u64; n], vec![0u64; n]);
                add_sub_row::<true>(kernel, &m, &mut s_to, Some(&x), &y).unwrap();
                add_sub_row::<false>(kernel, &m, &mut d_to, Some(&x), &y).unwrap();
                assert_eq!(s_to, s, "q={q} {kernel:?} sum out of place");
                assert_eq!(d_to, d, "q={q} {kernel:?} difference out of place");
                for k in 0..n {
                    let (a, b) = (x[k] as u128, y[k] as u128);
                    assert_eq!(s[k] as u128, (a + b) % q as u128, "q={q} {kernel:?}");
                    assert_eq!(
                        d[k] as u128,
                        (a + q as u128 - b) % q as u128,
                        "q={q} {kernel:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn mismatched_rows_are_errors() {
        let m = Modulus::new(97).unwrap();
        let mut out = vec![0u64; 4];
        assert!(mul_row(Kernel::Scalar, &m, &mut out, &[1, 2, 3]).is_err());
        assert!(dot_row(Kernel::Scalar, &m, &[], &[], &mut out).is_err());
        assert!(dot_row(Kernel::Scalar, &m, &[&[1, 2, 3, 4]], &[], &mut out).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every kernel this CPU supports equals the scalar path, bit for bit, on random
        /// moduli, operands, lengths (vector bodies and scalar tails) and term counts: dot
        /// products (split in chunks of `MAX_TERMS`), the paired dot product, products,
        /// multiply-accumulates, constant products, sums, differences and centered lifts.
        #[test]
        fn vector_equals_scalar(
            q in 2u64..(1 << 62),
            src in 2u64..(1 << 62),
            n in 1usize..70,
            terms in 1usize..20,
            w in any::<u64>(),
            seed in any::<u64>(),
        ) {
            let m = Modulus::new(q).unwrap();
            let sm = Modulus::new(src).unwrap();
            let rows = |s: u64| (0..terms).map(|t| crate::testutil::random_residues(n, q, s ^ t as u64)).collect::<Vec<_>>();
            let (xs, ys, zs) = (rows(seed), rows(!seed), rows(seed.rotate_left(17)));
            let xr: Vec<&[u64]> = xs.iter().map(|v| v.as_slice()).collect();
            let yr: Vec<&[u64]> = ys.iter().map(|v| v.as_slice()).collect();
            let zr: Vec<&[u64]> = zs.iter().map(|v| v.as_slice()).collect();
            let v = crate::testutil::random_residues(n, src, seed ^ 0x5a5a);
            // Every output of one kernel, in a fixed order.
            let run = |kernel: Kernel| {
                let mut got = Vec::new();
                let mut d = vec![0u64; n];
                dot_row(kernel, &m, &xr, &yr, &mut d).unwrap();
                got.push(d);
                let (mut d0, mut d1) = (vec![0u64; n], vec![0u64; n]);
                dot2_row(kernel, &m, &xr, &yr, &zr, &mut d0, &mut d1).unwrap();
                got.extend([d0, d1]);
                let mut p = xs[0].clone();
                mul_row(kernel, &m, &mut p, &ys[0]).unwrap();
                got.push(p);
                let mut a = zs[0].clone();
                mul_acc_row(kernel, &m, &mut a, &xs[0], &ys[0]).unwrap();
                got.push(a);
                let mut c = xs[0].clone();
                mul_const_row(kernel, &m, w, &mut c);
                got.push(c);
                let mut c = xs[0].clone();
                sub_mul_const_row(kernel, &m, w, &mut c, &ys[0]).unwrap();
                got.push(c);
                let (mut s, mut t) = (xs[0].clone(), xs[0].clone());
                add_row(kernel, &m, &mut s, &ys[0]).unwrap();
                sub_row(kernel, &m, &mut t, &ys[0]).unwrap();
                got.extend([s, t]);
                // The out-of-place forms, over an output that held other values.
                let (mut s, mut t, mut c) = (zs[0].clone(), zs[0].clone(), zs[0].clone());
                add_sub_row::<true>(kernel, &m, &mut s, Some(&xs[0]), &ys[0]).unwrap();
                add_sub_row::<false>(kernel, &m, &mut t, Some(&xs[0]), &ys[0]).unwrap();
                sub_mul_const_from(kernel, &m, w, &mut c, Some(&xs[0]), &ys[0]).unwrap();
                got.extend([s, t, c]);
                let mut l = vec![0u64; n];
                lift_centered_row(kernel, &sm, &m, &v, &mut l).unwrap();
                got.push(l);
                let (mut p, mut c) = (zs[0].clone(), zs[0].clone());
                mul_row_from(kernel, &m, &mut p, Some(&xs[0]), &ys[0]).unwrap();
                mul_const_row_from(kernel, &m, w, &mut c, Some(&xs[0])).unwrap();
                got.extend([p, c]);
                got
            };
            let want = run(Kernel::Scalar);
            // The out-of-place products equal the in-place ones (same inputs).
            prop_assert_eq!(&want[13], &want[3]);
            prop_assert_eq!(&want[14], &want[5]);
            for kernel in kernels() {
                prop_assert_eq!(&run(kernel), &want, "{:?}", kernel);
            }
        }
    }
}
