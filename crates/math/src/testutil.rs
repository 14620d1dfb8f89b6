//! Deterministic pseudo-random test inputs (xorshift64), shared by the unit tests. Test data
//! only: cryptographic randomness comes from `sampling`.

/// A xorshift64 stream.
pub(crate) struct XorShift(u64);

impl XorShift {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `n` residues modulo `q`.
pub(crate) fn random_residues(n: usize, q: u64, seed: u64) -> Vec<u64> {
    let mut r = XorShift::new(seed);
    (0..n).map(|_| r.next_u64() % q).collect()
}
