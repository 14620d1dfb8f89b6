//! Vector-lane primitives over 32-bit words, and their portable scalar implementation.
//!
//! The 32-bit NTT ([`super::ntt`]) and element-wise primaries ([`super::pointwise`]) are
//! written once over [`Lanes32`]; the scalar, AVX2 (8 lanes) and AVX-512 (16 lanes) kernels are
//! the same code instantiated with a different implementation, so they compute the same lazy
//! values and, after the final canonical reduction, the same bits.

/// Vector-lane primitives over 32-bit unsigned integers.
///
/// # Safety
/// Implementations use ISA intrinsics; callers instantiate the generic code only with an
/// implementation whose target features this CPU has (checked through
/// [`crate::Kernel::cpu_supports`]).
pub(crate) trait Lanes32 {
    /// A vector of `L` words.
    type V: Copy;
    /// Permutation data of one narrow stride (`t < L`), built once per stage.
    type P: Copy;
    /// Number of 32-bit lanes.
    const L: usize;
    unsafe fn load(p: *const u32) -> Self::V;
    unsafe fn store(p: *mut u32, v: Self::V);
    unsafe fn splat(x: u32) -> Self::V;
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn sub(a: Self::V, b: Self::V) -> Self::V;
    /// Unsigned minimum: `min(x, x - m)` reduces `x in [0, 2m)` to `[0, m)` for `m <= 2^31`.
    unsafe fn min(a: Self::V, b: Self::V) -> Self::V;
    /// Lazy Shoup product, congruent to `y * w` and in `[0, 2q)`, for any 32-bit `y`, `w < q`
    /// and `ws = floor(w * 2^32 / q)`.
    unsafe fn mul_shoup(y: Self::V, w: Self::V, ws: Self::V, q: Self::V) -> Self::V;
    /// [`Lanes32::mul_shoup`] where `w` and `ws` are the same in every lane (a broadcast):
    /// the vector kernels then skip moving the odd lanes' `ws` down for their multiply.
    #[inline(always)]
    unsafe fn mul_shoup_bcast(y: Self::V, w: Self::V, ws: Self::V, q: Self::V) -> Self::V {
        Self::mul_shoup(y, w, ws, q)
    }
    /// Barrett product `a * b mod q` in `[0, q)` for `a, b < q < 2^30`, `mu = floor(2^(2k) / q)`
    /// where `k` is the bit length of `q` (see [`super::Modulus32::reduce_product`]).
    unsafe fn mul_barrett(a: Self::V, b: Self::V, q: Self::V, mu: Self::V, k: u32) -> Self::V;
    /// The permutations of stride `t < L`.
    unsafe fn perm(t: usize) -> Self::P;
    /// From two consecutive vectors (`2L` words), the butterfly inputs of stride `t < L` as
    /// (all x, all y); lane `i` belongs to butterfly block `i / t` of the chunk.
    unsafe fn split(p: &Self::P, v0: Self::V, v1: Self::V) -> (Self::V, Self::V);
    /// Inverse of [`Lanes32::split`].
    unsafe fn merge(p: &Self::P, x: Self::V, y: Self::V) -> (Self::V, Self::V);
    /// Lane `i` set to `ptr[i / t]`, reading only the `L / t` words it needs.
    unsafe fn load_twiddles(p: &Self::P, ptr: *const u32) -> Self::V;
}

/// `x mod m` for `x < 2m`.
#[inline(always)]
pub(crate) unsafe fn small_mod<S: Lanes32>(x: S::V, m: S::V) -> S::V {
    S::min(x, S::sub(x, m))
}

/// Portable code, one lane.
pub(crate) struct Scalar;

impl Lanes32 for Scalar {
    type V = u32;
    type P = ();
    const L: usize = 1;
    #[inline(always)]
    unsafe fn load(p: *const u32) -> u32 {
        *p
    }
    #[inline(always)]
    unsafe fn store(p: *mut u32, v: u32) {
        *p = v
    }
    #[inline(always)]
    unsafe fn splat(x: u32) -> u32 {
        x
    }
    #[inline(always)]
    unsafe fn add(a: u32, b: u32) -> u32 {
        a.wrapping_add(b)
    }
    #[inline(always)]
    unsafe fn sub(a: u32, b: u32) -> u32 {
        a.wrapping_sub(b)
    }
    #[inline(always)]
    unsafe fn min(a: u32, b: u32) -> u32 {
        a.min(b)
    }
    #[inline(always)]
    unsafe fn mul_shoup(y: u32, w: u32, ws: u32, q: u32) -> u32 {
        let qhat = ((y as u64 * ws as u64) >> 32) as u32;
        y.wrapping_mul(w).wrapping_sub(qhat.wrapping_mul(q))
    }
    #[inline(always)]
    unsafe fn mul_barrett(a: u32, b: u32, q: u32, mu: u32, k: u32) -> u32 {
        let x = a as u64 * b as u64;
        let q3 = (((x >> (k - 1)) * mu as u64) >> (k + 1)) as u32;
        let r = (x as u32).wrapping_sub(q3.wrapping_mul(q));
        let r = r.min(r.wrapping_sub(q));
        r.min(r.wrapping_sub(q))
    }
    // One lane has no stride below L = 1: the drivers never call these.
    #[inline(always)]
    unsafe fn perm(_t: usize) {}
    #[inline(always)]
    unsafe fn split(_p: &(), v0: u32, v1: u32) -> (u32, u32) {
        (v0, v1)
    }
    #[inline(always)]
    unsafe fn merge(_p: &(), x: u32, y: u32) -> (u32, u32) {
        (x, y)
    }
    #[inline(always)]
    unsafe fn load_twiddles(_p: &(), ptr: *const u32) -> u32 {
        *ptr
    }
}

/// The gather indices of [`Lanes32::split`] for stride `t < l` over one `l`-lane vector: the
/// x-words (block positions `[0, t)` of each `2t` block) to the low half in order, the y-words
/// to the high half. Shared by the vector kernels, which apply it to both input vectors and
/// then concatenate halves.
pub(crate) fn split_indices(t: usize, l: usize) -> [u32; 16] {
    let mut idx = [0u32; 16];
    for (j, slot) in idx.iter_mut().enumerate().take(l) {
        let (half, jj) = (j / (l / 2), j % (l / 2));
        *slot = (2 * t * (jj / t) + half * t + jj % t) as u32;
    }
    idx
}

/// The inverse permutation of [`split_indices`].
pub(crate) fn merge_indices(t: usize, l: usize) -> [u32; 16] {
    let s = split_indices(t, l);
    let mut idx = [0u32; 16];
    for j in 0..l {
        idx[s[j] as usize] = j as u32;
    }
    idx
}

/// `i / t` for each lane: the twiddle broadcast of [`Lanes32::load_twiddles`].
pub(crate) fn twiddle_indices(t: usize) -> [u32; 16] {
    core::array::from_fn(|i| (i / t) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_then_merge_is_the_identity() {
        for l in [8usize, 16] {
            let mut t = 1;
            while t < l {
                let (s, m) = (split_indices(t, l), merge_indices(t, l));
                for j in 0..l {
                    assert_eq!(s[m[j] as usize] as usize, j);
                    // x-words come from the first half of their 2t block, y-words the second.
                    assert_eq!((s[j] as usize / t) % 2, j / (l / 2));
                }
                t *= 2;
            }
        }
    }
}
