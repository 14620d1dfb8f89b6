//! The slot operations the packed network is written over ([`SlotOps`]), and their clear
//! implementation ([`Clear`]): plain `f64` vectors, rotations as cyclic shifts.
//!
//! [`super::layers`] is written once over [`SlotOps`]: with [`Clear`] it is the packed
//! replica (compared with the tensor replica), with [`super::he::Encrypted`] the encrypted
//! network (compared with the packed replica). [`Clear`] also records every rotation step the
//! encrypted network will ask the evaluator for ([`rotation_step`], and a linear transform's
//! own [`LinearTransform::rotations`]), which is how the encrypted run learns which rotation
//! keys it needs: the key list comes from the layer code that rotates, not from a list kept
//! beside it.

use crate::error::{ProgramError, Result};
use num_complex::Complex64;
use std::collections::BTreeSet;
use tessera_ckks::circuits::linear::LinearTransform;
use tessera_ckks::circuits::sign::CompositeSign;

/// Operations on vectors of `slots()` values. Rotation amounts are reduced modulo the slots
/// (so `-r` and `slots - r` are the same rotation, with the same key).
pub trait SlotOps {
    /// A vector (a ciphertext, or plain values).
    type Ct: Clone;

    /// Slots per vector.
    fn slots(&self) -> usize;

    /// `out[s] = x[(s + r) mod n]`.
    fn rotate(&mut self, x: &Self::Ct, r: i64) -> Result<Self::Ct>;

    /// Several rotations of one vector (hoisted in the encrypted network).
    fn rotate_many(&mut self, x: &Self::Ct, rs: &[i64]) -> Result<Vec<Self::Ct>>;

    /// `a + b` (the encrypted network drops the higher to the lower level).
    fn add(&mut self, a: &Self::Ct, b: &Self::Ct) -> Result<Self::Ct>;

    /// `x * v` slot-wise, not rescaled: products at one level are summed, then [`Self::rescale`]d.
    fn mul_plain(&mut self, x: &Self::Ct, v: &[f64]) -> Result<Self::Ct>;

    /// Ends a sum of [`Self::mul_plain`] products (one level).
    fn rescale(&mut self, x: &Self::Ct) -> Result<Self::Ct>;

    /// `x + v` slot-wise (no level).
    fn add_plain(&mut self, x: &Self::Ct, v: &[f64]) -> Result<Self::Ct>;

    /// `M x` by diagonals (one level).
    fn linear(&mut self, x: &Self::Ct, m: &LinearTransform) -> Result<Self::Ct>;

    /// AppReLU in units of its bound: `x (1 + p(x)) / 2`, slots in `[-1, 1]`. `period`: as
    /// for [`Self::ensure_levels`] (AppReLU works slot by slot, so it keeps the period).
    fn app_relu(&mut self, x: &Self::Ct, period: usize) -> Result<Self::Ct>;

    /// `x` with at least `need` levels left (the encrypted network bootstraps by the level
    /// rule of [`crate::levels`]; the clear one returns `x`). `period`: the slots of `x`
    /// repeat every `period` slots (the layout's copies, [`super::packing::Shape::region`];
    /// the slot count when they do not), so a bootstrapping may run the sparse circuit of
    /// `period` slots (FHE-MP-CNN's per-stage sparse bootstrapping). [`Clear`] checks the
    /// claim on the values.
    fn ensure_levels(&mut self, x: &Self::Ct, need: usize, period: usize) -> Result<Self::Ct>;
}

/// Whether `x` repeats every `period` slots (exactly: the copies are made by adding rotated
/// copies to zeros, and every later operation is slot-wise).
pub fn is_periodic(x: &[f64], period: usize) -> bool {
    period > 0 && x.iter().enumerate().all(|(i, v)| *v == x[i % period])
}

/// `r` reduced to `[0, n)`.
pub fn reduce(r: i64, n: usize) -> i64 {
    r.rem_euclid(n as i64)
}

/// The step the evaluator rotates by when the network rotates a vector of `n` slots by `r`:
/// `r` reduced to `[0, n)`, `None` for no rotation. Both implementations of [`SlotOps`] call
/// it, so the steps [`Clear`] records are the steps [`super::he::Encrypted`] takes. (On a
/// sparse ciphertext, `n < N/2`, `r` and `r - n` move the slots alike but are different
/// Galois elements, so the key must be made for the step actually taken.)
pub fn rotation_step(r: i64, n: usize) -> Option<i64> {
    Some(reduce(r, n)).filter(|&s| s != 0)
}

/// The clear implementation: `f64` vectors; records rotation amounts.
pub struct Clear<'a> {
    n: usize,
    sign: &'a CompositeSign,
    /// Every rotation step the encrypted network takes (its keys): [`rotation_step`] of each
    /// rotation, and each linear transform's [`LinearTransform::rotations`] (signed, as its
    /// BSGS evaluation rotates).
    pub rotations: BTreeSet<i64>,
    /// Rotations performed (nonzero amounts; the FC's BSGS ones are not seen here).
    pub hrots: usize,
    /// Products by plaintext vectors performed (the FC's diagonals are not seen here).
    pub pmults: usize,
    /// The periods claimed at [`SlotOps::ensure_levels`] (each checked on the values): the
    /// sparse circuits the encrypted network may bootstrap with.
    pub periods: BTreeSet<usize>,
}

impl<'a> Clear<'a> {
    /// Vectors of `n` slots; AppReLU with `sign`.
    pub fn new(n: usize, sign: &'a CompositeSign) -> Self {
        Self {
            n,
            sign,
            rotations: BTreeSet::new(),
            hrots: 0,
            pmults: 0,
            periods: BTreeSet::new(),
        }
    }
}

impl SlotOps for Clear<'_> {
    type Ct = Vec<f64>;

    fn slots(&self) -> usize {
        self.n
    }

    fn rotate(&mut self, x: &Vec<f64>, r: i64) -> Result<Vec<f64>> {
        let step = rotation_step(r, self.n);
        if let Some(step) = step {
            self.rotations.insert(step);
            self.hrots += 1;
        }
        let r = step.unwrap_or(0) as usize;
        Ok((0..self.n).map(|s| x[(s + r) % self.n]).collect())
    }

    fn rotate_many(&mut self, x: &Vec<f64>, rs: &[i64]) -> Result<Vec<Vec<f64>>> {
        rs.iter().map(|&r| self.rotate(x, r)).collect()
    }

    fn add(&mut self, a: &Vec<f64>, b: &Vec<f64>) -> Result<Vec<f64>> {
        Ok(a.iter().zip(b).map(|(x, y)| x + y).collect())
    }

    fn mul_plain(&mut self, x: &Vec<f64>, v: &[f64]) -> Result<Vec<f64>> {
        self.pmults += 1;
        Ok(x.iter().zip(v).map(|(a, b)| a * b).collect())
    }

    fn rescale(&mut self, x: &Vec<f64>) -> Result<Vec<f64>> {
        Ok(x.clone())
    }

    fn add_plain(&mut self, x: &Vec<f64>, v: &[f64]) -> Result<Vec<f64>> {
        Ok(x.iter().zip(v).map(|(a, b)| a + b).collect())
    }

    fn linear(&mut self, x: &Vec<f64>, m: &LinearTransform) -> Result<Vec<f64>> {
        // The steps `LinearTransform::apply` rotates by (its plan's, with its options).
        self.rotations.extend(m.rotations());
        let z: Vec<Complex64> = x.iter().map(|&v| Complex64::new(v, 0.0)).collect();
        Ok(m.apply_clear(&z).iter().map(|c| c.re).collect())
    }

    fn app_relu(&mut self, x: &Vec<f64>, period: usize) -> Result<Vec<f64>> {
        let x = self.ensure_levels(x, 0, period)?;
        Ok(x.iter()
            .map(|&v| self.sign.app_relu_plain(v, 1.0))
            .collect())
    }

    fn ensure_levels(&mut self, x: &Vec<f64>, _need: usize, period: usize) -> Result<Vec<f64>> {
        if !period.is_power_of_two() || !self.n.is_multiple_of(period) || !is_periodic(x, period) {
            return Err(ProgramError::Invalid {
                name: "slot period",
                value: period.to_string(),
                allowed: format!(
                    "a power of two dividing {} with which the values repeat (a layout claim that does not hold)",
                    self.n
                ),
            });
        }
        self.periods.insert(period);
        Ok(x.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The clear network checks each claimed period on the values: a vector that repeats
    /// every 4 slots passes at 4 and 8 and is refused at 2, naming the parameter.
    #[test]
    fn clear_checks_claimed_periods() {
        let sign = CompositeSign::lee_relu().unwrap();
        let mut c = Clear::new(16, sign);
        let x: Vec<f64> = (0..16).map(|i| [0.1, -0.2, 0.3, 0.0][i % 4]).collect();
        assert!(is_periodic(&x, 4) && !is_periodic(&x, 2));
        c.ensure_levels(&x, 2, 4).unwrap();
        c.app_relu(&x, 8).unwrap();
        let e = c.ensure_levels(&x, 2, 2).unwrap_err().to_string();
        assert!(e.contains("slot period"), "{e}");
        assert!(c.ensure_levels(&x, 2, 3).is_err());
        assert!(c.ensure_levels(&x, 2, 32).is_err());
        assert_eq!(c.periods.iter().copied().collect::<Vec<_>>(), [4, 8]);
    }
}
