//! Shape-only objects: the identities a recording names keys and plaintexts by when a
//! shape-only context ([`crate::CkksContext::shape_only`]) makes them without data.
//!
//! A trace names every object it loads, and a simulator uses the names to tell a repeated
//! load (an on-chip hit) from new data. A recording of data names an object by a fingerprint
//! of its lowest limb (`tessera_backend::trace::Recorder::host_id`), which the object keeps at
//! every level. A shape-only object carries an identity instead, chosen so that two objects
//! get the same identity exactly when their data would get the same fingerprint:
//!
//! - the `b` half of digit `i` of a switching key: the seed of the digit's `a` half (fresh
//!   randomness per key and digit, and the same seed when an on-demand factory makes the key
//!   again), so every digit of every key is its own object, at every level;
//! - a plaintext: its message (values padded with zeros to the slot count, reduced to its
//!   shortest period: `[v, v]` in `2s` slots is `v` in `s` slots, sparse packing), slot
//!   count and scale, and whether it is a full or an OF-Limb plaintext (evaluation or coefficient form
//!   of the `q_0` limb), but not its level: the `q_0` limb of `round(Delta m)` is the same at
//!   every level. An all-zero message is the zero polynomial at any scale, slot count or form,
//!   so all of them share one identity, as their (zero) data would.

use num_complex::Complex64;
use tessera_backend::{HostPoly, HostShape};
use tessera_math::sampling::Seed;
use tessera_math::{Representation, RingContext, RnsPoly};

/// The form a plaintext is stored in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PlainForm {
    /// Every limb of its level, evaluation form.
    Full,
    /// ARK's OF-Limb form: the `q_0` limb, coefficient form.
    OfLimb,
    /// Every limb of its level and special limbs (a double-hoisting product's operand),
    /// evaluation form.
    FullExtended,
}

fn id_of(h: blake3::Hasher) -> u64 {
    u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("8 bytes"))
}

/// The identity of the `b` half whose `a` half expands from `seed`.
pub(crate) fn key_half_id(seed: &Seed) -> u64 {
    let mut h = blake3::Hasher::new_derive_key("tessera 2026 shape-only key half");
    h.update(&seed.0);
    id_of(h)
}

/// `values` zero-padded to `slots` and reduced to their shortest period: a message of `2s`
/// slots made of two equal halves is the same polynomial as one half in `s` slots (sparse
/// packing), so both get one identity, as their data would (a program that bootstraps with
/// circuits of several slot counts encodes, e.g., the same constant at each). `+ 0.0` makes
/// -0.0 into 0.0: both encode alike.
fn shortest_period(values: &[Complex64], slots: usize) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = (0..slots.max(values.len()))
        .map(|i| {
            let z = values.get(i).copied().unwrap_or_default();
            ((z.re + 0.0).to_bits(), (z.im + 0.0).to_bits())
        })
        .collect();
    let mut s = v.len();
    while s >= 2 && s.is_multiple_of(2) && v[..s / 2] == v[s / 2..s] {
        s /= 2;
    }
    v.truncate(s);
    v
}

/// The identity of the plaintext encoding `values` (zero-padded to `slots`) at `scale`.
pub(crate) fn message_id(form: PlainForm, values: &[Complex64], slots: usize, scale: f64) -> u64 {
    let zero = (0.0f64.to_bits(), 0.0f64.to_bits());
    let period = shortest_period(values, slots);
    // Trailing zeros are the padding the encoder adds anyway.
    let used = period.iter().rposition(|z| *z != zero).map_or(0, |k| k + 1);
    let mut h = blake3::Hasher::new_derive_key("tessera 2026 shape-only plaintext");
    if used == 0 {
        h.update(b"zero");
        return id_of(h);
    }
    h.update(&[form as u8]);
    h.update(&(period.len() as u64).to_le_bytes());
    h.update(&scale.to_bits().to_le_bytes());
    for (re, im) in &period[..used] {
        h.update(&re.to_le_bytes());
        h.update(&im.to_le_bytes());
    }
    id_of(h)
}

/// The polynomial a shape-only object holds in place of its data: no limbs, no memory.
pub(crate) fn no_data(ring: &std::sync::Arc<RingContext>) -> RnsPoly {
    RnsPoly::zero(ring, &[], Representation::Evaluation).expect("an empty limb set is valid")
}

/// What a backend loads for an object with data `poly` or shape `shape`.
pub(crate) fn host(poly: &RnsPoly, shape: &Option<HostShape>) -> HostPoly {
    match shape {
        Some(s) => HostPoly::Shape(s.clone()),
        None => HostPoly::Data(poly.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_identity_follows_the_encoding() {
        let c = |x: f64| Complex64::new(x, 0.0);
        let a = message_id(PlainForm::Full, &[c(0.5)], 8, 2f64.powi(40));
        // Zero padding and the sign of zero do not change the encoding.
        assert_eq!(
            a,
            message_id(
                PlainForm::Full,
                &[c(0.5), c(0.0), c(-0.0)],
                8,
                2f64.powi(40)
            )
        );
        // Values, slots, scale and form do.
        for other in [
            message_id(PlainForm::Full, &[c(0.25)], 8, 2f64.powi(40)),
            message_id(PlainForm::Full, &[c(0.5)], 16, 2f64.powi(40)),
            message_id(PlainForm::Full, &[c(0.5)], 8, 2f64.powi(41)),
            message_id(PlainForm::OfLimb, &[c(0.5)], 8, 2f64.powi(40)),
            message_id(PlainForm::FullExtended, &[c(0.5)], 8, 2f64.powi(40)),
        ] {
            assert_ne!(a, other);
        }
        // A message of two equal halves is its half in half the slots (sparse packing).
        let half = [c(0.5), c(0.0), c(0.25), c(0.0)];
        let twice: Vec<Complex64> = half.iter().chain(&half).copied().collect();
        assert_eq!(
            message_id(PlainForm::Full, &half, 4, 2f64.powi(40)),
            message_id(PlainForm::Full, &twice, 8, 2f64.powi(40))
        );
        assert_eq!(
            message_id(PlainForm::Full, &[c(0.5); 4], 4, 2f64.powi(40)),
            message_id(PlainForm::Full, &[c(0.5); 16], 16, 2f64.powi(40))
        );
        // Zero padding is not a repetition: [0.5] in 8 slots is not [0.5] in 4.
        assert_ne!(
            message_id(PlainForm::Full, &[c(0.5)], 4, 2f64.powi(40)),
            message_id(PlainForm::Full, &[c(0.5)], 8, 2f64.powi(40))
        );
        // Every zero message is the zero polynomial.
        assert_eq!(
            message_id(PlainForm::Full, &[], 8, 2.0),
            message_id(PlainForm::OfLimb, &[c(0.0)], 16, 4.0)
        );
        assert_ne!(key_half_id(&Seed([1; 32])), key_half_id(&Seed([2; 32])));
    }
}
