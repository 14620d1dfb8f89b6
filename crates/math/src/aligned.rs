//! Cache-line-aligned word buffers.
//!
//! Limbs are processed with 64-byte vector loads and stores; a buffer that starts mid-line makes
//! every one of them straddle two cache lines, which costs about 4.5 % of a 2^16-point NTT on
//! Zen 4 (measured; see docs/benchmarks.md). `AlignedVec` stores words in 64-byte lines, so
//! every limb of `N >= 8` words starts on a line boundary.

use std::ops::{Deref, DerefMut};

/// One cache line of words.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
#[repr(C, align(64))]
struct Line([u64; 8]);

/// A growable-by-construction, 64-byte-aligned vector of `u64`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AlignedVec {
    lines: Vec<Line>,
    len: usize,
}

impl AlignedVec {
    /// `len` zero words.
    pub fn zeroed(len: usize) -> Self {
        Self {
            lines: vec![Line::default(); len.div_ceil(8)],
            len,
        }
    }

    /// A copy of `words`.
    pub fn from_slice(words: &[u64]) -> Self {
        let mut v = Self::zeroed(words.len());
        v.copy_from_slice(words);
        v
    }

    /// Shortens the vector to `len` words (no-op if longer).
    pub fn truncate(&mut self, len: usize) {
        if len < self.len {
            self.len = len;
            self.lines.truncate(len.div_ceil(8));
        }
    }
}

impl Deref for AlignedVec {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        // SAFETY: `Line` is `repr(C)` over `[u64; 8]`, so the lines are `8 * lines.len()`
        // contiguous, initialised words, and `len <= 8 * lines.len()`.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr() as *const u64, self.len) }
    }
}

impl DerefMut for AlignedVec {
    fn deref_mut(&mut self) -> &mut [u64] {
        // SAFETY: as in `deref`, with unique access through `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr() as *mut u64, self.len) }
    }
}

impl From<Vec<u64>> for AlignedVec {
    fn from(v: Vec<u64>) -> Self {
        Self::from_slice(&v)
    }
}

impl std::fmt::Debug for AlignedVec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_sized() {
        for len in [0usize, 1, 7, 8, 9, 1 << 16] {
            let mut v = AlignedVec::zeroed(len);
            assert_eq!(v.len(), len);
            assert_eq!(v.as_ptr() as usize % 64, 0);
            for (i, x) in v.iter_mut().enumerate() {
                *x = i as u64;
            }
            let w = AlignedVec::from_slice(&v);
            assert_eq!(&w[..], &v[..]);
            v.truncate(len / 2);
            assert_eq!(v.len(), len / 2);
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
        }
    }
}
