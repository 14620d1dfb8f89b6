//! Bootstrapping real messages: the imaginary-removing variant and the merged bootstrapping of
//! two real ciphertexts, at the circuit's slot count (sparse or full).
//!
//! Both run the ordinary circuit once with EvalMod's output read at twice its scale (a
//! relabelling), so SlotToCoeff returns `(z + e) / 2` at the input's scale (`e` the
//! bootstrapping error, its size in the message unchanged). Conjugation then separates the parts at no level:
//! - **real message** (Lee et al.'s `bootstrap_real`, "imaginary-removing"): `y + conj(y)`
//!   is `Re(z + e)`: the imaginary error, which a real computation would otherwise carry
//!   along and amplify (AppReLU squares it into the real part), is gone, and the real part's
//!   error is the ordinary bootstrapping's;
//! - **two real messages** `v`, `w`: `z = v + i w` (the product by `i` is the exact monomial
//!   `X^(N/2)`, no level), one bootstrapping, then `v' = y + conj(y)` and
//!   `w' = -i (y - conj(y))`: half the bootstrapping work per ciphertext.
//!
//! Cost over [`Bootstrapper::bootstrap`]: one conjugation (one key switch). META-BTS is not
//! combined with them (its correction step reads the input scale); they report so.

use super::{BootstrapKeys, Bootstrapper};
use crate::error::{CkksError, Result};
use crate::evaluator::Evaluator;
use crate::keys::Ciphertext;
use tessera_backend::Backend;

impl Bootstrapper {
    /// The circuit returning half the message: the slots hold `(z + e) / 2`.
    fn bootstrap_halved<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        ct: &Ciphertext<B::Poly>,
        keys: &BootstrapKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        if self.bp.meta_log_scale.is_some() {
            return Err(CkksError::Unsupported(
                "real-message bootstrapping with META-BTS (meta_log_scale); use a circuit without it"
                    .into(),
            ));
        }
        self.bootstrap_once_times(ev, ct, keys, 0.5)
    }

    /// Bootstraps a ciphertext whose slots are real, removing the imaginary part the
    /// bootstrapping error would leave (for a complex message, returns its real part).
    /// Same levels as [`Bootstrapper::bootstrap`], plus one conjugation.
    pub fn bootstrap_real<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        ct: &Ciphertext<B::Poly>,
        keys: &BootstrapKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        let y = self.bootstrap_halved(ev, ct, keys)?;
        let c = ev.conjugate(&y, &keys.eval)?;
        ev.add(&y, &c)
    }

    /// Bootstraps two ciphertexts with real slots (same scale and slot count) by one
    /// bootstrapping of `v + i w`; returns `(v, w)` refreshed (as a pair of [`super::Halves`]).
    pub fn bootstrap_two_real<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        v: &Ciphertext<B::Poly>,
        w: &Ciphertext<B::Poly>,
        keys: &BootstrapKeys,
    ) -> Result<super::Halves<B::Poly>> {
        if v.slots != w.slots {
            return Err(CkksError::InvalidParameter {
                name: "ciphertext slots",
                value: format!("{} and {}", v.slots, w.slots),
                allowed: "two ciphertexts of the same slot count".into(),
            });
        }
        let l = v.level.min(w.level);
        let v = ev.drop_levels(v, v.level - l)?;
        let w = ev.drop_levels(w, w.level - l)?;
        let iw = ev.mul_plain(&w, &self.times_i(l, 1)?)?;
        let z = ev.add(&v, &iw)?;
        let y = self.bootstrap_halved(ev, &z, keys)?;
        let c = ev.conjugate(&y, &keys.eval)?;
        let re = ev.add(&y, &c)?;
        let diff = ev.sub(&y, &c)?;
        let im = ev.mul_plain(&diff, &self.times_i(diff.level, -1)?)?;
        Ok((re, im))
    }
}
