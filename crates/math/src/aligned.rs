//! Cache-line-aligned word buffers.
//!
//! Limbs are processed with 64-byte vector loads and stores; a buffer that starts mid-line makes
//! every one of them straddle two cache lines, which costs about 4.5 % of a 2^16-point NTT on
//! Zen 4 (measured; see docs/benchmarks.md). `AlignedVec` stores words in 64-byte lines, so
//! every limb of `N >= 8` words starts on a line boundary.

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};

/// One cache line of words.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
#[repr(C, align(64))]
struct Line([u64; 8]);

/// A fixed-length, 64-byte-aligned, copy-on-write vector of `u64`.
///
/// Cloning shares the buffer (O(1)); the first write through a shared handle copies it. This
/// lets backends "load" a key or plaintext and select all of its limbs without moving a byte,
/// which matters at N = 2^16 where one key digit is 15 MB. Freed buffers return to a bounded
/// process-wide [`pool`] and are reused for the next buffer of the same size, so the hot
/// loop of an HE operation does not pay a page fault per fresh page (measured: a third of an
/// `ark` HMult before pooling).
#[derive(Clone, Default)]
pub struct AlignedVec {
    lines: Arc<Vec<Line>>,
    /// First line of this handle's view of `lines` (non-zero for a [`AlignedVec::slice`]).
    start: usize,
    len: usize,
}

impl PartialEq for AlignedVec {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}
impl Eq for AlignedVec {}

impl AlignedVec {
    /// `len` zero words.
    pub fn zeroed(len: usize) -> Self {
        let count = len.div_ceil(8);
        let lines = match pool::take(count) {
            Some(mut v) => {
                v.fill(Line::default());
                v
            }
            None => vec![Line::default(); count],
        };
        Self {
            lines: Arc::new(lines),
            start: 0,
            len,
        }
    }

    /// `len` words whose values are unspecified (a recycled buffer is not cleared): for
    /// results that overwrite every word. Still initialised memory, so reading it is safe.
    pub fn for_overwrite(len: usize) -> Self {
        let count = len.div_ceil(8);
        let lines = pool::take(count).unwrap_or_else(|| vec![Line::default(); count]);
        Self {
            lines: Arc::new(lines),
            start: 0,
            len,
        }
    }

    /// A copy of `words`.
    pub fn from_slice(words: &[u64]) -> Self {
        let count = words.len().div_ceil(8);
        let mut lines = pool::take(count).unwrap_or_else(|| vec![Line::default(); count]);
        if let Some(last) = lines.last_mut() {
            *last = Line::default();
        }
        let mut v = Self {
            lines: Arc::new(lines),
            start: 0,
            len: words.len(),
        };
        v.copy_from_slice(words);
        v
    }

    /// Shortens the vector to `len` words (no-op if longer).
    pub fn truncate(&mut self, len: usize) {
        if len < self.len {
            self.len = len;
            if self.start == 0 {
                Arc::make_mut(&mut self.lines).truncate(len.div_ceil(8));
            }
        }
    }

    /// The first `len` words (no-op if longer) as a handle that shares this buffer: no copy
    /// until one of the two is written (copy-on-write).
    pub fn prefix(&self, len: usize) -> Self {
        Self {
            lines: self.lines.clone(),
            start: self.start,
            len: len.min(self.len),
        }
    }

    /// The words `from..from + len` as a handle that shares this buffer (copy-on-write), when
    /// `from` is a multiple of 8 (a line boundary, as every limb of `N >= 8` words is) and the
    /// range is inside the vector; `None` otherwise.
    pub fn slice(&self, from: usize, len: usize) -> Option<Self> {
        (from.is_multiple_of(8) && from.checked_add(len)? <= self.len).then(|| Self {
            lines: self.lines.clone(),
            start: self.start + from / 8,
            len,
        })
    }

    /// Whether this handle shares its buffer with another (a write would copy it).
    pub fn is_shared(&self) -> bool {
        Arc::strong_count(&self.lines) > 1
    }

    /// If the buffer is shared, gives this handle a fresh buffer of the same length (contents
    /// unspecified) and returns the shared one, so a parallel pass can copy each chunk just
    /// before it works on it (one sweep over memory instead of a copy and then a pass).
    pub fn detach_if_shared(&mut self) -> Option<AlignedVec> {
        if !self.is_shared() {
            return None;
        }
        let count = self.len.div_ceil(8);
        let fresh = pool::take(count).unwrap_or_else(|| vec![Line::default(); count]);
        let len = self.len;
        Some(std::mem::replace(
            self,
            Self {
                lines: Arc::new(fresh),
                start: 0,
                len,
            },
        ))
    }

    /// Makes the buffer unique, copying it into a pooled buffer if it is shared.
    /// The lines this handle covers, made unique (copied into a pooled buffer if shared).
    fn unique(&mut self) -> &mut [Line] {
        let count = self.len.div_ceil(8);
        if Arc::get_mut(&mut self.lines).is_none() {
            // Only the lines this handle covers (a view shares a longer buffer).
            let mut copy = pool::take(count).unwrap_or_else(|| Vec::with_capacity(count));
            copy.clear();
            copy.extend_from_slice(&self.lines[self.start..self.start + count]);
            self.lines = Arc::new(copy);
            self.start = 0;
        }
        let start = self.start;
        &mut Arc::get_mut(&mut self.lines).expect("unique after copy")[start..start + count]
    }
}

impl Drop for AlignedVec {
    fn drop(&mut self) {
        if let Some(v) = Arc::get_mut(&mut self.lines) {
            pool::give(std::mem::take(v));
        }
    }
}

impl Deref for AlignedVec {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        // SAFETY: `Line` is `repr(C)` over `[u64; 8]`, so the lines are `8 * lines.len()`
        // contiguous, initialised words, and `len <= 8 * lines.len()`.
        // `start` lines in, the view still lies inside the buffer.
        unsafe {
            std::slice::from_raw_parts(self.lines.as_ptr().add(self.start) as *const u64, self.len)
        }
    }
}

impl DerefMut for AlignedVec {
    fn deref_mut(&mut self) -> &mut [u64] {
        let len = self.len;
        let lines = self.unique();
        // SAFETY: as in `deref`, with unique access to an unshared buffer.
        unsafe { std::slice::from_raw_parts_mut(lines.as_mut_ptr() as *mut u64, len) }
    }
}

/// The recycling pool behind [`AlignedVec`]: freed buffers of at least [`pool::MIN_LINES`]
/// lines (small buffers are cheap to allocate) are kept, by exact size, up to
/// [`pool::CAP_BYTES`] in total (evicting the most-held other size when full), and handed
/// out again before the allocator is asked.
pub mod pool {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Smallest buffer worth keeping: 64 KiB (an N = 2^13 limb).
    pub const MIN_LINES: usize = 1024;
    /// Most bytes the pool holds (freed buffers beyond it go back to the allocator).
    pub const CAP_BYTES: usize = 1 << 30;

    #[derive(Default)]
    struct Pool {
        free: HashMap<usize, Vec<Vec<Line>>>,
        bytes: usize,
    }

    fn pool() -> &'static Mutex<Pool> {
        static POOL: std::sync::OnceLock<Mutex<Pool>> = std::sync::OnceLock::new();
        POOL.get_or_init(Default::default)
    }

    static HITS: AtomicU64 = AtomicU64::new(0);
    static MISSES: AtomicU64 = AtomicU64::new(0);

    pub(super) fn take(count: usize) -> Option<Vec<Line>> {
        if count < MIN_LINES {
            return None;
        }
        let mut p = pool().lock().ok()?;
        // The exact size, else the smallest held size up to 1.5x (limb counts differ by level,
        // and a miss costs a fresh, kernel-zeroed allocation).
        let class = if p.free.get(&count).is_some_and(|f| !f.is_empty()) {
            Some(count)
        } else {
            p.free
                .iter()
                .filter(|(&c, f)| c > count && 2 * c <= 3 * count && !f.is_empty())
                .map(|(&c, _)| c)
                .min()
        };
        let v = class.and_then(|c| p.free.get_mut(&c).and_then(|f| f.pop()));
        match v {
            Some(v) => {
                p.bytes -= v.len() * 64;
                HITS.fetch_add(1, Ordering::Relaxed);
                Some(v)
            }
            None => {
                MISSES.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Buffers served from the pool and buffers that had to be allocated, since start.
    pub fn stats() -> (u64, u64) {
        (HITS.load(Ordering::Relaxed), MISSES.load(Ordering::Relaxed))
    }

    pub(super) fn give(v: Vec<Line>) {
        let count = v.len();
        if count < MIN_LINES || v.capacity() != count {
            return;
        }
        let Ok(mut p) = pool().lock() else { return };
        // When full, evict buffers of the size class holding the most bytes (never the
        // returning buffer's own class): sizes in demand change over a run (key generation,
        // then evaluation), and a pool stuck full of stale sizes would miss every time.
        while p.bytes + count * 64 > CAP_BYTES {
            let victim = p
                .free
                .iter()
                .filter(|(&c, f)| c != count && !f.is_empty())
                .max_by_key(|(&c, f)| c * f.len())
                .map(|(&c, _)| c);
            let Some(c) = victim else { return };
            if p.free.get_mut(&c).and_then(|f| f.pop()).is_some() {
                p.bytes -= c * 64;
            }
        }
        p.bytes += count * 64;
        p.free.entry(count).or_default().push(v);
    }

    /// Bytes currently held for reuse.
    pub fn held_bytes() -> usize {
        pool().lock().map(|p| p.bytes).unwrap_or(0)
    }

    /// Returns every held buffer to the allocator.
    pub fn release() {
        if let Ok(mut p) = pool().lock() {
            p.free.clear();
            p.bytes = 0;
        }
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
            let shared = v.clone();
            assert!(v.is_shared());
            if len == 0 {
                continue;
            }
            v[0] = 99;
            assert!(!v.is_shared(), "a write unshares");
            assert_eq!(shared[0], 0, "the other handle keeps its data");
            assert_eq!(&shared[1..], &v[1..]);
            v[0] = 0;
            v.truncate(len / 2);
            assert_eq!(v.len(), len / 2);
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
        }
    }

    /// A prefix shares the buffer until one side writes; the writer copies only its own
    /// words, and the other side is unchanged.
    #[test]
    fn prefix_views_copy_on_write() {
        let v = AlignedVec::from_slice(&(0..100).collect::<Vec<u64>>());
        let mut p = v.prefix(40);
        assert_eq!(p.len(), 40);
        assert!(p.is_shared() && v.is_shared());
        assert_eq!(&p[..], &v[..40]);
        p[3] = 7;
        assert!(!p.is_shared());
        assert_eq!(p.lines.len(), 5, "only the prefix's lines were copied");
        assert_eq!(v[3], 3);
        assert_eq!(p[3], 7);
        assert_eq!(&p[4..], &v[4..40]);
        assert_eq!(v.prefix(1000).len(), 100);
        let mut q = v.prefix(16);
        let old = q.detach_if_shared().expect("shared");
        assert_eq!(q.len(), 16);
        assert_eq!(&old[..16], &v[..16]);
    }

    #[test]
    fn the_pool_serves_a_slightly_larger_buffer() {
        // Sizes no other test uses: the pool is process-wide.
        pool::give(vec![Line::default(); 4001]);
        let v = pool::take(3001).expect("a held buffer within 1.5x");
        assert_eq!(v.len(), 4001);
        pool::give(vec![Line::default(); 7003]);
        assert!(pool::take(4002).is_none(), "more than 1.5x is not served");
        let w = AlignedVec::for_overwrite(3001 * 8);
        assert_eq!(w.len(), 3001 * 8);
    }

    #[test]
    fn slice_views_copy_on_write() {
        let v = AlignedVec::from_slice(&(0..100).collect::<Vec<u64>>());
        assert!(v.slice(3, 8).is_none(), "not on a line boundary");
        assert!(v.slice(96, 8).is_none(), "past the end");
        let mut s = v.slice(40, 24).expect("line-aligned range");
        assert_eq!(&s[..], &v[40..64]);
        assert!(s.is_shared());
        // A view of a view, and a prefix of a view, address the same words.
        assert_eq!(&s.slice(8, 8).unwrap()[..], &v[48..56]);
        assert_eq!(&s.prefix(5)[..], &v[40..45]);
        s[0] = 1000;
        assert!(!s.is_shared());
        assert_eq!(s.lines.len(), 3, "only the view's lines were copied");
        assert_eq!((s[0], s[23], v[40]), (1000, 63, 40));
        // A unique view writes in place; truncation keeps its start.
        let w = AlignedVec::from_slice(&(0..64).collect::<Vec<u64>>());
        let mut t = w.slice(16, 32).unwrap();
        drop(w);
        t[1] = 5;
        t.truncate(10);
        assert_eq!(&t[..], &[16, 5, 18, 19, 20, 21, 22, 23, 24, 25]);
    }
}
