//! Compact instruction fields (issue 25 item 1): an instruction's limb set is a shared,
//! interned slice ([`Limbs`]) and its sources sit inline ([`Srcs`]), so a recorded
//! instruction holds no heap allocation of its own in the common case. Both serialise as
//! plain JSON arrays: the file form of a trace is unchanged.
//!
//! Why: a recording held one `Vec<usize>` of limb indices (up to 30 words at `ark`) and one
//! `Vec<u64>` of sources per instruction, although a program uses a few dozen distinct limb
//! sets (one per level and basis) and almost every instruction has at most three sources.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashSet;
use std::ops::Deref;
use std::sync::Arc;

/// A destination limb set (ring indices), shared between the instructions that have it.
/// Dereferences to `[usize]`; built from a `Vec`, a slice or an iterator, or interned by a
/// [`LimbInterner`].
///
/// ```
/// use tessera_backend::trace::Limbs;
/// let l: Limbs = (0..3).collect();
/// assert_eq!(&l[..], &[0, 1, 2]);
/// assert_eq!(serde_json::to_string(&l).unwrap(), "[0,1,2]");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Limbs(Arc<[usize]>);

impl Deref for Limbs {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        &self.0
    }
}

impl std::borrow::Borrow<[usize]> for Limbs {
    fn borrow(&self) -> &[usize] {
        &self.0
    }
}

impl std::fmt::Debug for Limbs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl From<Vec<usize>> for Limbs {
    fn from(v: Vec<usize>) -> Self {
        Self(v.into())
    }
}

impl From<&[usize]> for Limbs {
    fn from(v: &[usize]) -> Self {
        Self(v.into())
    }
}

impl FromIterator<usize> for Limbs {
    fn from_iter<I: IntoIterator<Item = usize>>(it: I) -> Self {
        Self(it.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a Limbs {
    type Item = &'a usize;
    type IntoIter = std::slice::Iter<'a, usize>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl Serialize for Limbs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.as_ref().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Limbs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<usize>::deserialize(d).map(Self::from)
    }
}

/// Hands out one shared [`Limbs`] per distinct limb set: a recording holds each set once.
/// Its size is bounded by the distinct sets (levels times bases), not by program length.
///
/// ```
/// use tessera_backend::trace::LimbInterner;
/// let mut i = LimbInterner::default();
/// let a = i.intern(&[0, 1]);
/// let b = i.intern(&[0, 1]);
/// assert_eq!(a, b);
/// assert_eq!(i.len(), 1);
/// ```
#[derive(Clone, Debug, Default)]
pub struct LimbInterner(HashSet<Limbs>);

impl LimbInterner {
    /// The shared copy of `limbs`.
    pub fn intern(&mut self, limbs: &[usize]) -> Limbs {
        if let Some(l) = self.0.get(limbs) {
            return l.clone();
        }
        let l = Limbs::from(limbs);
        self.0.insert(l.clone());
        l
    }

    /// Distinct limb sets held.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Sources held inline.
const INLINE: usize = 3;

/// An instruction's source buffer ids: up to three inline (every operation but a dot product
/// or a concatenation of more), more on the heap. Dereferences to `[u64]`.
///
/// ```
/// use tessera_backend::trace::Srcs;
/// let s = Srcs::from(&[4u64, 5][..]);
/// assert_eq!(&s[..], &[4, 5]);
/// let many: Srcs = (0..8u64).collect();
/// assert_eq!(many.len(), 8);
/// assert_eq!(serde_json::to_string(&s).unwrap(), "[4,5]");
/// ```
#[derive(Clone)]
pub enum Srcs {
    /// `len` ids in the first `len` words.
    Inline(u8, [u64; INLINE]),
    /// More than [`INLINE`] ids.
    Heap(Box<[u64]>),
}

impl Default for Srcs {
    fn default() -> Self {
        Srcs::Inline(0, [0; INLINE])
    }
}

impl Deref for Srcs {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        match self {
            Srcs::Inline(n, a) => &a[..*n as usize],
            Srcs::Heap(b) => b,
        }
    }
}

impl PartialEq for Srcs {
    fn eq(&self, o: &Self) -> bool {
        self[..] == o[..]
    }
}

impl Eq for Srcs {}

impl std::fmt::Debug for Srcs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl From<&[u64]> for Srcs {
    fn from(v: &[u64]) -> Self {
        if v.len() <= INLINE {
            let mut a = [0; INLINE];
            a[..v.len()].copy_from_slice(v);
            Srcs::Inline(v.len() as u8, a)
        } else {
            Srcs::Heap(v.into())
        }
    }
}

impl From<Vec<u64>> for Srcs {
    fn from(v: Vec<u64>) -> Self {
        if v.len() <= INLINE {
            Self::from(&v[..])
        } else {
            Srcs::Heap(v.into_boxed_slice())
        }
    }
}

impl<const K: usize> From<[u64; K]> for Srcs {
    fn from(v: [u64; K]) -> Self {
        Self::from(&v[..])
    }
}

impl FromIterator<u64> for Srcs {
    fn from_iter<I: IntoIterator<Item = u64>>(it: I) -> Self {
        Self::from(it.into_iter().collect::<Vec<_>>())
    }
}

impl<'a> IntoIterator for &'a Srcs {
    type Item = &'a u64;
    type IntoIter = std::slice::Iter<'a, u64>;
    fn into_iter(self) -> Self::IntoIter {
        self[..].iter()
    }
}

impl Serialize for Srcs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self[..].serialize(s)
    }
}

impl<'de> Deserialize<'de> for Srcs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<u64>::deserialize(d).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn srcs_equal_the_vec_they_came_from(v in proptest::collection::vec(any::<u64>(), 0..9)) {
            let s = Srcs::from(v.clone());
            prop_assert_eq!(&s[..], &v[..]);
            prop_assert_eq!(Srcs::from(&v[..]), s.clone());
            let back: Srcs = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
            prop_assert_eq!(serde_json::to_string(&v).unwrap(), serde_json::to_string(&s).unwrap());
            prop_assert_eq!(back, s);
        }

        #[test]
        fn limbs_equal_the_vec_they_came_from(v in proptest::collection::vec(0usize..64, 0..40)) {
            let mut i = LimbInterner::default();
            let l = i.intern(&v);
            prop_assert_eq!(&l[..], &v[..]);
            prop_assert_eq!(serde_json::to_string(&v).unwrap(), serde_json::to_string(&l).unwrap());
            let back: Limbs = serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
            prop_assert_eq!(back, l);
        }
    }

    #[test]
    fn interning_shares_one_allocation() {
        let mut i = LimbInterner::default();
        let a = i.intern(&[3, 4, 5]);
        let b = i.intern(&[3, 4, 5]);
        assert!(std::ptr::eq(a.as_ptr(), b.as_ptr()));
        assert_eq!(i.len(), 1);
        i.intern(&[3, 4]);
        assert_eq!(i.len(), 2);
    }
}
