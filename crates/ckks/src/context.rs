//! A CKKS context: parameters, the ring over all their primes, and the encoder; it encodes and
//! decodes plaintexts at a level and scale.

use crate::encoder::Encoder;
use crate::error::{CkksError, Result};
use crate::params::Parameters;
use crate::shape::{self, PlainForm};
use num_complex::Complex64;
use num_traits::ToPrimitive;
use std::sync::Arc;
use tessera_backend::{HostPoly, HostShape};
use tessera_math::{Representation, RingContext, RnsPoly};

/// An encoded message: a polynomial over the chain limbs `0..=level` in evaluation form.
#[derive(Clone, Debug)]
pub struct Plaintext {
    /// The polynomial (evaluation representation); no limbs when `shape` is set.
    pub poly: RnsPoly,
    /// Level: the polynomial has `level + 1` limbs.
    pub level: usize,
    /// Scale Delta the message was multiplied by.
    pub scale: f64,
    /// Number of slots (a power of two up to N/2).
    pub slots: usize,
    /// Set by a shape-only context ([`CkksContext::shape_only`]): the limb set and identity
    /// a recording loads, in place of the data.
    pub shape: Option<HostShape>,
}

impl Plaintext {
    /// What a backend loads: the polynomial, or the shape of a shape-only plaintext.
    pub fn host(&self) -> HostPoly {
        shape::host(&self.poly, &self.shape)
    }

    /// Errors if this plaintext is shape-only (`op` names what needs its data).
    pub fn require_data(&self, op: &'static str) -> Result<()> {
        require_data(op, &self.shape)
    }
}

fn require_data(op: &'static str, shape: &Option<HostShape>) -> Result<()> {
    match shape {
        Some(_) => Err(CkksError::Unsupported(format!(
            "{op} of a shape-only plaintext (made by CkksContext::shape_only for recording): it has no data; encode with CkksContext::new"
        ))),
        None => Ok(()),
    }
}

/// An OF-Limb plaintext (ark.md section IV-B): only the `q_0` limb of the encoded polynomial,
/// in coefficient form. Its coefficients are below `q_0 / 2` in magnitude, so the limb holds
/// them exactly and the other limbs are regenerated on use by reducing them into each modulus
/// and transforming (`Evaluator::mul_plain_oflimb`): one limb of storage and traffic instead of
/// `level + 1`, paid for with NTTs.
#[derive(Clone, Debug)]
pub struct OfLimbPlaintext {
    /// The `q_0` limb (coefficient representation).
    pub limb: RnsPoly,
    /// Level the plaintext is used at.
    pub level: usize,
    /// Scale Delta.
    pub scale: f64,
    /// Number of slots.
    pub slots: usize,
    /// Set by a shape-only context: the limb (`q_0`, coefficient form) and identity a
    /// recording loads, in place of the data.
    pub shape: Option<HostShape>,
}

impl OfLimbPlaintext {
    /// What a backend loads: the limb, or the shape of a shape-only plaintext.
    pub fn host(&self) -> HostPoly {
        shape::host(&self.limb, &self.shape)
    }
}

/// Parameters, ring and encoder.
#[derive(Debug)]
pub struct CkksContext {
    params: Parameters,
    ring: Arc<RingContext>,
    encoder: Encoder,
    /// Keys and plaintexts are made as shapes with identities, no data ([`Self::shape_only`]).
    shape_only: bool,
}

impl CkksContext {
    /// Builds the ring (NTT plans for every prime) and the encoder.
    ///
    /// ```
    /// use tessera_ckks::{CkksContext, Parameters};
    /// let ctx = CkksContext::new(Parameters::preset("test-small")?)?;
    /// let p = ctx.params();
    /// // Encode at the top level and decode again: the values come back to ~2^-30.
    /// let pt = ctx.encode_real(&[0.25, -1.5], 2, p.max_level(), p.default_scale())?;
    /// let back = ctx.decode(&pt)?;
    /// assert!((back[0].re - 0.25).abs() < 1e-6 && (back[1].re + 1.5).abs() < 1e-6);
    /// # Ok::<(), tessera_ckks::CkksError>(())
    /// ```
    pub fn new(params: Parameters) -> Result<Arc<Self>> {
        Self::with_mode(params, false)
    }

    /// A context for recording a program for the simulator: it encodes plaintexts and its key
    /// generators make switching keys as shapes (limb set and identity, `crate::shape`) with
    /// no data, so recording costs no encoding and no key generation. A trace backend records
    /// the same instructions, host ids included, as with a computing context's objects;
    /// a computing backend refuses them, and decoding, decrypting or serialising them is an
    /// error. Ciphertexts stay real (secret keys and encryption are cheap): an encryption of a
    /// shape-only plaintext encrypts zero, which a recording cannot tell apart. Unlike
    /// [`Self::new`]'s encoding it does not check that the encoded coefficients fit the
    /// modulus (that needs the encoding).
    pub fn shape_only(params: Parameters) -> Result<Arc<Self>> {
        Self::with_mode(params, true)
    }

    fn with_mode(params: Parameters, shape_only: bool) -> Result<Arc<Self>> {
        // A recording context shares its ring (its objects hold no data to mix up); a
        // computing context owns one, so objects of two contexts never mix silently.
        let ring = if shape_only {
            params.shared_ring()?
        } else {
            params.ring()?
        };
        let encoder = Encoder::new(params.n())?;
        Ok(Arc::new(Self {
            params,
            ring,
            encoder,
            shape_only,
        }))
    }

    /// Whether keys and plaintexts are made as shapes ([`Self::shape_only`]).
    pub fn is_shape_only(&self) -> bool {
        self.shape_only
    }

    /// The parameters.
    pub fn params(&self) -> &Parameters {
        &self.params
    }

    /// The ring over chain and special primes (chain first).
    pub fn ring(&self) -> &Arc<RingContext> {
        &self.ring
    }

    /// Ring indices of the chain limbs at `level`: `0..=level`.
    pub fn chain_limbs(&self, level: usize) -> Vec<usize> {
        (0..=level).collect()
    }

    /// Ring indices of the special limbs.
    pub fn special_limbs(&self) -> Vec<usize> {
        let l = self.params.q().len();
        (l..l + self.params.p().len()).collect()
    }

    /// Ring indices of the chain limbs at `level` followed by the special limbs: the limb set
    /// of key switching at that level (and, at the top level, of the keys).
    pub fn qp_limbs(&self, level: usize) -> Vec<usize> {
        let mut l = self.chain_limbs(level);
        l.extend(self.special_limbs());
        l
    }

    pub(crate) fn check_level(&self, level: usize) -> Result<()> {
        if level > self.params.max_level() {
            return Err(CkksError::InvalidParameter {
                name: "level",
                value: level.to_string(),
                allowed: format!("0 to L = {}", self.params.max_level()),
            });
        }
        Ok(())
    }

    /// Encodes complex values into `slots` slots at `level` with scale `scale`.
    pub fn encode(
        &self,
        values: &[Complex64],
        slots: usize,
        level: usize,
        scale: f64,
    ) -> Result<Plaintext> {
        self.encode_over(values, slots, level, scale, &[])
    }

    /// [`CkksContext::encode`] with the polynomial also reduced into the special limbs
    /// `special`: a plaintext for products over `Q_level P`, where double hoisting keeps the
    /// DFTs' baby steps ([`crate::ExtCiphertext`]). Its `level` is still `level`.
    ///
    /// ```
    /// use tessera_ckks::{CkksContext, Parameters};
    /// let ctx = CkksContext::new(Parameters::preset("test-small")?)?;
    /// let special = ctx.special_limbs();
    /// let pt = ctx.encode_over(&[], 4, 1, 1024.0, &special)?;
    /// assert_eq!(pt.poly.num_limbs(), 2 + special.len());
    /// assert!(ctx.encode_over(&[], 4, 1, 1024.0, &[0]).is_err()); // a chain limb
    /// # Ok::<(), tessera_ckks::CkksError>(())
    /// ```
    pub fn encode_over(
        &self,
        values: &[Complex64],
        slots: usize,
        level: usize,
        scale: f64,
        special: &[usize],
    ) -> Result<Plaintext> {
        self.check_level(level)?;
        let all_special = self.special_limbs();
        let mut seen = std::collections::BTreeSet::new();
        if let Some(&bad) = special
            .iter()
            .find(|&&i| !all_special.contains(&i) || !seen.insert(i))
        {
            return Err(CkksError::InvalidParameter {
                name: "special",
                value: format!("{special:?} (limb {bad})"),
                allowed: format!("distinct special limbs among {all_special:?}"),
            });
        }
        let mut limbs = self.chain_limbs(level);
        limbs.extend_from_slice(special);
        let form = if special.is_empty() {
            PlainForm::Full
        } else {
            PlainForm::FullExtended
        };
        if self.shape_only {
            self.encoder.check_message(values, slots, scale)?;
            return Ok(Plaintext {
                poly: shape::no_data(&self.ring),
                level,
                scale,
                slots,
                shape: Some(HostShape {
                    limbs,
                    repr: Representation::Evaluation,
                    id: shape::message_id(form, values, slots, scale),
                }),
            });
        }
        let coeffs = self.encoder.encode(values, slots, scale)?;
        self.check_fits(&coeffs, level)?;
        let mut poly = RnsPoly::from_i128(&self.ring, &limbs, &coeffs)?;
        poly.ntt()?;
        Ok(Plaintext {
            poly,
            level,
            scale,
            slots,
            shape: None,
        })
    }

    /// Errors if an encoded coefficient does not fit in `Q_level / 2` in magnitude: it would
    /// wrap modulo `Q_level` and decode to something else (`[1e6]` at `test-medium`'s level 0,
    /// 2^65 against a 55-bit `q_0`, decoded to 64).
    fn check_fits(&self, coeffs: &[i128], level: usize) -> Result<()> {
        let q = &self.params.q()[..=level];
        let log_q: f64 = q.iter().map(|&x| (x as f64).log2()).sum();
        if log_q >= 128.0 {
            return Ok(()); // every i128 fits
        }
        let half = q.iter().map(|&x| x as u128).product::<u128>() / 2;
        if let Some(c) = coeffs.iter().find(|c| c.unsigned_abs() >= half) {
            return Err(CkksError::InvalidParameter {
                name: "values",
                value: format!("an encoded coefficient of 2^{:.1}", (c.unsigned_abs() as f64).log2()),
                allowed: format!(
                    "encoded coefficients below Q_{level} / 2 = 2^{:.1} (values times the scale must fit the modulus at level {level}: lower the values or the scale, or encode at a higher level)",
                    log_q - 1.0
                ),
            });
        }
        Ok(())
    }

    /// Encodes into an OF-Limb plaintext; fails if a coefficient does not fit in `q_0 / 2`.
    pub fn encode_oflimb(
        &self,
        values: &[Complex64],
        slots: usize,
        level: usize,
        scale: f64,
    ) -> Result<OfLimbPlaintext> {
        self.check_level(level)?;
        if self.shape_only {
            self.encoder.check_message(values, slots, scale)?;
            return Ok(OfLimbPlaintext {
                limb: shape::no_data(&self.ring),
                level,
                scale,
                slots,
                shape: Some(HostShape {
                    limbs: vec![0],
                    repr: Representation::Coefficient,
                    id: shape::message_id(PlainForm::OfLimb, values, slots, scale),
                }),
            });
        }
        let coeffs = self.encoder.encode(values, slots, scale)?;
        let half_q0 = (self.params.q()[0] / 2) as i128;
        if let Some(c) = coeffs.iter().find(|c| c.abs() > half_q0) {
            return Err(CkksError::InvalidParameter {
                name: "OF-Limb plaintext coefficient",
                value: c.to_string(),
                allowed: format!(
                    "magnitude at most q_0 / 2 = {half_q0} (lower the scale or the values)"
                ),
            });
        }
        let limb = RnsPoly::from_i128(&self.ring, &[0], &coeffs)?;
        Ok(OfLimbPlaintext {
            limb,
            level,
            scale,
            slots,
            shape: None,
        })
    }

    /// Encodes real values.
    pub fn encode_real(
        &self,
        values: &[f64],
        slots: usize,
        level: usize,
        scale: f64,
    ) -> Result<Plaintext> {
        let z: Vec<Complex64> = values.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        self.encode(&z, slots, level, scale)
    }

    /// Decodes a plaintext (its polynomial's centered coefficients, divided by its scale).
    pub fn decode(&self, pt: &Plaintext) -> Result<Vec<Complex64>> {
        pt.require_data("decode")?;
        let mut p = pt.poly.clone();
        if p.repr() == Representation::Evaluation {
            p.intt()?;
        }
        let coeffs: Vec<f64> = p
            .to_centered_bigints()?
            .iter()
            .map(|c| c.to_f64().unwrap_or(f64::NAN))
            .collect();
        self.encoder.decode(&coeffs, pt.slots, pt.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 24 item 8: a value whose encoding exceeds `Q_level / 2` is an error, not a
    /// wrapped coefficient.
    #[test]
    fn encodings_that_overflow_the_level_are_refused() {
        let ctx = CkksContext::new(Parameters::preset("test-medium").unwrap()).unwrap();
        let scale = ctx.params().default_scale();
        let e = ctx
            .encode_real(&[1e6], 1, 0, scale)
            .unwrap_err()
            .to_string();
        assert!(e.contains("values") && e.contains("level 0"), "{e}");
        // The same value fits two levels up, and small values fit at level 0.
        let pt = ctx.encode_real(&[1e6], 1, 2, scale).unwrap();
        assert!((ctx.decode(&pt).unwrap()[0].re - 1e6).abs() < 1e-3);
        assert!(ctx.encode_real(&[0.5], 1, 0, scale).is_ok());
    }
}
