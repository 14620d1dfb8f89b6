//! `1/x` for `x` in `[lo, hi]` (`0 < lo < hi`) by Goldschmidt's iteration.
//!
//! With `u = x / hi` in `[lo/hi, 1]` and `b_0 = 1 - u`, `1/u = prod_(i >= 0) (1 + b_0^(2^i))`:
//! `a_0 = 1 + b_0 = 2 - u`, then `b_i = b_(i-1)^2`, `a_i = a_(i-1) (1 + b_i)`. After `d`
//! iterations `a_d = (1 - b_0^(2^(d+1))) / u`, a relative error of at most
//! `(1 - lo/hi)^(2^(d+1))` ([`relative_error`]). The `1/hi` is folded into `a_0`, which is
//! computed from `x` directly at the scale that makes the output's scale the input's.
//! Depth: `d + 2` (one for the constant products making `a_0` and `b_0`, one per iteration for
//! `a`, whose last product comes one level after the last square).

use crate::error::{CkksError, Result};
use crate::evaluator::Evaluator;
use crate::keys::{Ciphertext, EvaluationKeys};
use tessera_backend::Backend;

fn check(lo: f64, hi: f64, iterations: usize) -> Result<()> {
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && lo < hi) {
        return Err(CkksError::InvalidParameter {
            name: "interval",
            value: format!("[{lo}, {hi}]"),
            allowed: "finite ends with 0 < lo < hi".into(),
        });
    }
    if !(1..=30).contains(&iterations) {
        return Err(CkksError::InvalidParameter {
            name: "iterations",
            value: iterations.to_string(),
            allowed: "1 to 30".into(),
        });
    }
    Ok(())
}

/// Worst relative error of `iterations` Goldschmidt steps on `[lo, hi]` (in exact arithmetic).
pub fn relative_error(lo: f64, hi: f64, iterations: usize) -> f64 {
    (1.0 - lo / hi).powf(2f64.powi(iterations as i32 + 1))
}

/// Iterations needed for a relative error of at most `2^-bits` on `[lo, hi]`.
pub fn iterations_for(lo: f64, hi: f64, bits: u32) -> Result<usize> {
    check(lo, hi, 1)?;
    let d = (1..=30)
        .find(|&d| relative_error(lo, hi, d) <= 2f64.powi(-(bits as i32)))
        .ok_or_else(|| CkksError::InvalidParameter {
            name: "bits",
            value: bits.to_string(),
            allowed: format!("a precision 30 iterations reach on [{lo}, {hi}]"),
        })?;
    Ok(d)
}

/// Levels [`inverse`] consumes.
pub fn depth(iterations: usize) -> usize {
    iterations + 2
}

/// The same iteration in the clear (the replica of [`inverse`]; `lo` only bounds its error).
pub fn inverse_plain(x: f64, hi: f64, iterations: usize) -> f64 {
    let mut b = 1.0 - x / hi;
    let mut a = (2.0 - x / hi) / hi;
    for _ in 0..iterations {
        b *= b;
        a *= 1.0 + b;
    }
    a
}

/// `1/x` homomorphically for slots in `[lo, hi]`, at the input's scale, [`depth`] levels
/// down.
///
/// ```
/// use tessera_backend::CpuBackend;
/// use tessera_ckks::circuits::inverse::{inverse, iterations_for};
/// use tessera_ckks::{decrypt, CkksContext, Evaluator, KeyGenerator, Parameters};
///
/// # fn main() -> tessera_ckks::Result<()> {
/// let ctx = CkksContext::new(Parameters::preset("test-medium")?)?;
/// let mut kg = KeyGenerator::new(&ctx)?;
/// let sk = kg.secret_key()?;
/// let keys = kg.evaluation_keys(&sk, &[], false)?;
/// let x = [0.5, 1.0, 2.0, 4.0];
/// let (l, s) = (ctx.params().max_level(), ctx.params().default_scale());
/// let ct = kg.encrypt_sk(&ctx.encode_real(&x, 4, l, s)?, &sk)?;
/// let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone()))?;
/// let d = iterations_for(0.5, 4.0, 10)?; // 5: (7/8)^64 < 2^-10, depth 7
/// let cx = ev.load(&ct)?;
/// let y = inverse(&mut ev, &cx, 0.5, 4.0, d, &keys)?;
/// let out = ctx.decode(&decrypt(&ev.store(&y)?, &sk)?)?;
/// for (o, v) in out.iter().zip(x) {
///     assert!((o.re * v - 1.0).abs() < 2e-3);
/// }
/// # Ok(())
/// # }
/// ```
pub fn inverse<B: Backend>(
    ev: &mut Evaluator<B>,
    x: &Ciphertext<B::Poly>,
    lo: f64,
    hi: f64,
    iterations: usize,
    keys: &EvaluationKeys,
) -> Result<Ciphertext<B::Poly>> {
    check(lo, hi, iterations)?;
    let params = ev.context().params().clone();
    let r = params.primes_per_rescale();
    let needed = r * depth(iterations);
    if x.level < needed {
        return Err(CkksError::OutOfLevels {
            op: "inverse",
            needed,
            level: x.level,
        });
    }
    let s = x.scale;
    let top = x.level;
    // Scales along the way, with a_0's scale c free: b_i's are fixed by b_0's (= s); each
    // a-product multiplies a's scale by the new b's and divides by the prime it rescales
    // by. The output scale is linear in c: pick c so that it is s.
    let mut sb = s;
    let mut factor = 1.0;
    for i in 1..=iterations {
        sb = sb * sb / params.rescale_divisor(top - r * i);
        factor *= sb / params.rescale_divisor(top - r * (i + 1));
    }
    let c = s / factor;
    let q_top = params.rescale_divisor(top);
    // b_0 = 1 - x / hi at scale s; a_0 = (2 - x / hi) / hi at scale c.
    let b = ev.mul_const(x, -1.0 / hi, q_top)?;
    let b = ev.rescale(&b)?;
    let mut b = ev.add_const(&Ciphertext { scale: s, ..b }, 1.0)?;
    let a = ev.mul_const(x, -1.0 / (hi * hi), c * q_top / s)?;
    let a = ev.rescale(&a)?;
    let mut a = ev.add_const(&Ciphertext { scale: c, ..a }, 2.0 / hi)?;
    for _ in 0..iterations {
        b = ev.mul_relin_rescale(&b, &b, keys)?;
        let t = ev.add_const(&b, 1.0)?;
        if a.level > t.level {
            a = ev.drop_levels(&a, a.level - t.level)?;
        }
        a = ev.mul_relin_rescale(&a, &t, keys)?;
    }
    Ok(Ciphertext { scale: s, ..a })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clear_iteration_converges_as_stated() {
        for (lo, hi) in [(0.5, 4.0), (0.01, 1.0), (3.0, 5.0)] {
            for d in 1..8 {
                let bound = relative_error(lo, hi, d);
                for i in 0..=100 {
                    let x = lo + (hi - lo) * i as f64 / 100.0;
                    let rel = (inverse_plain(x, hi, d) * x - 1.0).abs();
                    assert!(rel <= bound * (1.0 + 1e-9) + 1e-15, "{x}: {rel} > {bound}");
                }
            }
        }
        assert_eq!(iterations_for(0.5, 4.0, 10).unwrap(), 5);
        assert!(iterations_for(0.0, 1.0, 10).is_err());
        assert!(iterations_for(1e-12, 1.0, 30).is_err());
    }
}
