//! Encoded plaintexts kept by content: a program's weight and mask vectors do not depend on
//! its input, so an inference of many images encodes each of them once, as GPU libraries
//! precompute a network's plaintexts before they time an inference.
//!
//! Encoding (an FFT, the coefficients reduced into every limb of the level, NTTs) runs on the
//! host whatever the backend: about 6-10 ms for one plaintext at `ark`'s N = 2^16 on one
//! core, against well under a millisecond for the product it feeds on a GPU. The memo keys an
//! encoding by a BLAKE3 hash of everything it depends on (the values' bits, slots, level,
//! scale, form), so a hit is the same plaintext, and it holds at most a byte budget
//! ([`PLAIN_MEMO_BYTES`], [`PLAIN_MEMO_ENV`]) of them; past it, new encodings are used once
//! and not kept. What the backend is asked to load is the same either way, so a recording
//! (the simulator's trace) does not change with the memo.
//!
//! The form follows ARK's OF-Limb (ark.md IV-B, VI: "OF-Limb was used for every PMult in each
//! workload"): with the circuit option on, a product's plaintext is its `q_0` limb, extended
//! to the ciphertext's limbs and transformed on use, and the memo holds one limb per
//! plaintext instead of `level + 1`.
//!
//! ```
//! use tessera_programs::plain_memo::PlainMemo;
//! use tessera_programs::setup::parameter_set;
//! let (ctx, _) = parameter_set("test-program", 8).unwrap();
//! let mut memo = PlainMemo::new(1 << 30);
//! let v = [0.5, -0.25, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0];
//! let a = memo.encode(&ctx, &v, 8, 3, 2f64.powi(40), true).unwrap();
//! let b = memo.encode(&ctx, &v, 8, 3, 2f64.powi(40), true).unwrap();
//! assert!(std::sync::Arc::ptr_eq(&a, &b));
//! assert_eq!((memo.hits(), memo.misses()), (1, 1));
//! ```

use crate::error::Result;
use num_complex::Complex64;
use std::collections::HashMap;
use std::sync::Arc;
use tessera_ckks::circuits::linear::EncodedDiagonal;
use tessera_ckks::CkksContext;

/// Bytes of encoded plaintexts a memo keeps by default: the weights of ResNet-20 at `ark` in
/// OF-Limb form (about 2 GB) fit; in full form (about 20 GB) only those used first.
pub const PLAIN_MEMO_BYTES: usize = 4 << 30;

/// The environment variable that overrides [`PLAIN_MEMO_BYTES`], in GB (0 turns the memo off).
pub const PLAIN_MEMO_ENV: &str = "TESSERA_PLAIN_MEMO_GB";

/// Encoded plaintexts by content, up to a byte budget.
#[derive(Debug)]
pub struct PlainMemo {
    map: HashMap<[u8; 32], Arc<EncodedDiagonal>>,
    bytes: usize,
    budget: usize,
    hits: usize,
    misses: usize,
}

impl PlainMemo {
    /// An empty memo that keeps at most `budget` bytes of plaintexts.
    pub fn new(budget: usize) -> Self {
        Self {
            map: HashMap::new(),
            bytes: 0,
            budget,
            hits: 0,
            misses: 0,
        }
    }

    /// An empty memo with the budget of [`PLAIN_MEMO_ENV`], else [`PLAIN_MEMO_BYTES`] for a
    /// run of `inputs` inputs: none for one input (an inference encodes each of its
    /// plaintexts once, so a memo would only hold memory: 4.6 GB of the 14.7 GB peak of a
    /// one-image ResNet-20 at `ark` on the CPU).
    ///
    /// ```
    /// use tessera_programs::plain_memo::{PlainMemo, PLAIN_MEMO_ENV};
    /// if std::env::var(PLAIN_MEMO_ENV).is_err() {
    ///     assert_eq!(PlainMemo::from_env(1)?.budget(), 0);
    ///     assert!(PlainMemo::from_env(2)?.budget() > 0);
    /// }
    /// # Ok::<(), tessera_programs::ProgramError>(())
    /// ```
    pub fn from_env(inputs: usize) -> Result<Self> {
        let env = std::env::var(PLAIN_MEMO_ENV).ok();
        let default = if inputs > 1 { PLAIN_MEMO_BYTES } else { 0 };
        let budget = crate::setup::gigabytes(PLAIN_MEMO_ENV, env.as_deref(), default)?;
        Ok(Self::new(budget))
    }

    /// The byte budget.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The real `values` encoded at `slots`, `level` and `scale`, in OF-Limb form when
    /// `of_limb` (its coefficients must fit in `q_0 / 2`: an error names it otherwise), else
    /// every limb of the level in evaluation form; from the memo when it holds them.
    pub fn encode(
        &mut self,
        ctx: &CkksContext,
        values: &[f64],
        slots: usize,
        level: usize,
        scale: f64,
        of_limb: bool,
    ) -> Result<Arc<EncodedDiagonal>> {
        let key = Self::key(values, slots, level, scale, of_limb);
        if let Some(p) = self.map.get(&key) {
            self.hits += 1;
            return Ok(p.clone());
        }
        self.misses += 1;
        let p = Arc::new(if of_limb {
            let z: Vec<Complex64> = values.iter().map(|&x| Complex64::new(x, 0.0)).collect();
            EncodedDiagonal::OfLimb(ctx.encode_oflimb(&z, slots, level, scale)?)
        } else {
            EncodedDiagonal::Full(ctx.encode_real(values, slots, level, scale)?)
        });
        let bytes = p.bytes();
        if self.bytes + bytes <= self.budget {
            self.bytes += bytes;
            self.map.insert(key, p.clone());
        }
        Ok(p)
    }

    /// Encodings found in the memo.
    pub fn hits(&self) -> usize {
        self.hits
    }

    /// Encodings computed (kept or not).
    pub fn misses(&self) -> usize {
        self.misses
    }

    /// Bytes of the plaintexts kept.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    fn key(values: &[f64], slots: usize, level: usize, scale: f64, of_limb: bool) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        for x in [
            values.len() as u64,
            slots as u64,
            level as u64,
            scale.to_bits(),
        ] {
            h.update(&x.to_le_bytes());
        }
        h.update(&[u8::from(of_limb)]);
        for v in values {
            h.update(&v.to_bits().to_le_bytes());
        }
        *h.finalize().as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::parameter_set;

    #[test]
    fn a_hit_needs_every_input_equal_and_the_budget_is_kept() {
        let (ctx, _) = parameter_set("test-program", 8).unwrap();
        let v = [0.5, -0.25, 1.0, 0.0, 0.0, 0.0, 0.0, 0.125];
        let s = 2f64.powi(40);
        let mut memo = PlainMemo::new(1 << 30);
        let a = memo.encode(&ctx, &v, 8, 3, s, false).unwrap();
        // Each input changed once: a miss every time.
        let mut w = v;
        w[7] = 0.25;
        memo.encode(&ctx, &w, 8, 3, s, false).unwrap();
        memo.encode(&ctx, &v, 16, 3, s, false).unwrap();
        memo.encode(&ctx, &v, 8, 2, s, false).unwrap();
        memo.encode(&ctx, &v, 8, 3, s * 2.0, false).unwrap();
        memo.encode(&ctx, &v, 8, 3, s, true).unwrap();
        assert_eq!((memo.hits(), memo.misses()), (0, 6));
        let b = memo.encode(&ctx, &v, 8, 3, s, false).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(memo.hits(), 1);
        // What the memo returns is what encoding returns.
        let EncodedDiagonal::Full(p) = &*a else {
            panic!("full form expected")
        };
        let fresh = ctx.encode_real(&v, 8, 3, s).unwrap();
        assert_eq!(p.poly.data(), fresh.poly.data());

        // A budget of one limb keeps the first OF-Limb plaintext only.
        let mut small = PlainMemo::new(8 * ctx.ring().n());
        let x = small.encode(&ctx, &v, 8, 3, s, true).unwrap();
        let y = small.encode(&ctx, &w, 8, 3, s, true).unwrap();
        assert_eq!(small.bytes(), 8 * ctx.ring().n());
        assert!(Arc::ptr_eq(
            &x,
            &small.encode(&ctx, &v, 8, 3, s, true).unwrap()
        ));
        assert!(!Arc::ptr_eq(
            &y,
            &small.encode(&ctx, &w, 8, 3, s, true).unwrap()
        ));
        assert_eq!((small.hits(), small.misses()), (1, 3));
    }

    #[test]
    fn the_budget_variable_is_checked() {
        assert_eq!(
            crate::setup::gigabytes(PLAIN_MEMO_ENV, Some("2"), 1).unwrap(),
            2_000_000_000
        );
        let e = crate::setup::gigabytes(PLAIN_MEMO_ENV, Some("nan"), 1).unwrap_err();
        assert!(e.to_string().contains(PLAIN_MEMO_ENV));
    }
}
