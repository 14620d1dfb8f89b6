//! Batch encoding: `n` values mod `t` in the slots of one plaintext. With `t = 1 mod 2n`,
//! `X^n + 1` splits into `n` linear factors mod `t`, and a plaintext's slots are its values at
//! the `2n`-th roots of unity: the NTT mod `t` (in the NTT's bit-reversed order, which is
//! fine for slot-wise arithmetic; this crate has no rotations). Slot-wise products of
//! plaintexts are then products of polynomials, which is what BFV multiplication computes.

use crate::context::{Bfv, Plaintext};
use crate::error::{invalid, BfvError, Result};
use tessera_math::wide::WideNtt;

/// Encodes vectors of up to `n` values mod `t`.
#[derive(Clone, Debug)]
pub struct BatchEncoder {
    ntt: WideNtt,
    n: usize,
    t: u64,
}

impl BatchEncoder {
    /// The encoder of `bfv`'s parameters.
    ///
    /// ```
    /// use tessera_bfv::{BatchEncoder, Bfv, BfvParams};
    /// let bfv = Bfv::new(&BfvParams::preset("test-bfv").unwrap()).unwrap();
    /// let enc = BatchEncoder::new(&bfv).unwrap();
    /// let pt = enc.encode_signed(&[3, -4, 5]).unwrap();
    /// assert_eq!(&enc.decode_signed(&pt)[..4], &[3, -4, 5, 0]);
    /// ```
    pub fn new(bfv: &Bfv) -> Result<Self> {
        let p = bfv.params();
        Ok(Self {
            ntt: WideNtt::new(p.t as u128, p.n)?,
            n: p.n,
            t: p.t,
        })
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.n
    }

    /// Values in `[0, t)`, at most `n` of them (the rest are 0).
    pub fn encode(&self, values: &[u64]) -> Result<Plaintext> {
        if values.len() > self.n {
            return Err(BfvError::Mismatch {
                what: "values to encode",
                expected: format!("at most n = {}", self.n),
                found: values.len().to_string(),
            });
        }
        if let Some(v) = values.iter().find(|&&v| v >= self.t) {
            return Err(invalid("slot value", v, format!("[0, t = {})", self.t)));
        }
        let mut a = vec![0u128; self.n];
        for (x, &v) in a.iter_mut().zip(values) {
            *x = v as u128;
        }
        self.ntt.inverse(&mut a)?;
        Ok(Plaintext {
            coeffs: a.into_iter().map(|c| c as u64).collect(),
        })
    }

    /// Signed values in `[-(t-1)/2, (t-1)/2]`.
    pub fn encode_signed(&self, values: &[i64]) -> Result<Plaintext> {
        let h = (self.t - 1) / 2;
        let mut u = Vec::with_capacity(values.len());
        for &v in values {
            if v.unsigned_abs() > h {
                return Err(invalid(
                    "slot value",
                    v,
                    format!("[-{h}, {h}] (t = {})", self.t),
                ));
            }
            u.push(if v < 0 {
                self.t - v.unsigned_abs()
            } else {
                v as u64
            });
        }
        self.encode(&u)
    }

    /// The same value in every slot: the constant polynomial.
    pub fn encode_constant(&self, v: i64) -> Result<Plaintext> {
        self.encode_signed(&vec![v; self.n])
    }

    /// The `n` slot values in `[0, t)`.
    pub fn decode(&self, pt: &Plaintext) -> Vec<u64> {
        let mut a: Vec<u128> = pt.coeffs.iter().map(|&c| c as u128).collect();
        a.resize(self.n, 0);
        self.ntt.forward(&mut a).expect("length n");
        a.into_iter().map(|c| c as u64).collect()
    }

    /// The `n` slot values in `(-t/2, t/2]`.
    pub fn decode_signed(&self, pt: &Plaintext) -> Vec<i64> {
        let h = self.t / 2;
        self.decode(pt)
            .into_iter()
            .map(|v| {
                if v > h {
                    v as i64 - self.t as i64
                } else {
                    v as i64
                }
            })
            .collect()
    }
}
