//! Rotate-and-sum and replication: `log2(count)` rotations each, by doubling.
//!
//! [`rotate_and_sum`] gathers `sum_(t < count) x_(j + t step)` into every slot `j` (the inner
//! products and the slot sums of HELR and the convolutions); [`replicate`] spreads a block of
//! `block` slots into `copies` consecutive copies, the same doubling in the other direction.
//! Neither consumes a level.

use crate::error::{CkksError, Result};
use crate::evaluator::Evaluator;
use crate::keys::{Ciphertext, EvaluationKeys};
use tessera_backend::Backend;

fn check_count(name: &'static str, count: usize, slots: usize) -> Result<()> {
    if count == 0 || !count.is_power_of_two() || count > slots {
        return Err(CkksError::InvalidParameter {
            name,
            value: count.to_string(),
            allowed: format!("a power of two from 1 to the {slots} slots"),
        });
    }
    Ok(())
}

/// The rotations [`rotate_and_sum`] uses: `step * 2^i` for `2^i < count`.
pub fn rotations_for_rotate_and_sum(step: i64, count: usize) -> Vec<i64> {
    (0..count.max(1).trailing_zeros())
        .map(|i| step * (1i64 << i))
        .collect()
}

/// The rotations [`replicate`] uses: `-block * 2^i` for `2^i < copies`.
pub fn rotations_for_replicate(block: usize, copies: usize) -> Vec<i64> {
    rotations_for_rotate_and_sum(-(block as i64), copies)
}

/// Slot `j` of the output is `sum_(t < count) x_((j + t step) mod slots)`, by
/// `log2(count)` rotations (by `step`, `2 step`, `4 step`, ...) and additions. `count` is a
/// power of two.
///
/// ```
/// use tessera_backend::CpuBackend;
/// use tessera_ckks::circuits::sums::{rotate_and_sum, rotations_for_rotate_and_sum};
/// use tessera_ckks::{decrypt, CkksContext, Evaluator, KeyGenerator, Parameters};
///
/// # fn main() -> tessera_ckks::Result<()> {
/// let ctx = CkksContext::new(Parameters::preset("test-small")?)?;
/// let mut kg = KeyGenerator::new(&ctx)?;
/// let sk = kg.secret_key()?;
/// let keys = kg.evaluation_keys(&sk, &rotations_for_rotate_and_sum(1, 4), false)?;
/// let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
/// let (l, s) = (ctx.params().max_level(), ctx.params().default_scale());
/// let ct = kg.encrypt_sk(&ctx.encode_real(&x, 8, l, s)?, &sk)?;
/// let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone()))?;
/// let x = ev.load(&ct)?;
/// let y = rotate_and_sum(&mut ev, &x, 1, 4, &keys)?;
/// let out = ctx.decode(&decrypt(&ev.store(&y)?, &sk)?)?;
/// assert!((out[0].re - 10.0).abs() < 1e-3); // 1 + 2 + 3 + 4
/// assert!((out[4].re - 26.0).abs() < 1e-3); // 5 + 6 + 7 + 8
/// # Ok(())
/// # }
/// ```
pub fn rotate_and_sum<B: Backend>(
    ev: &mut Evaluator<B>,
    x: &Ciphertext<B::Poly>,
    step: i64,
    count: usize,
    keys: &EvaluationKeys,
) -> Result<Ciphertext<B::Poly>> {
    check_count("count", count, x.slots)?;
    let mut acc = x.clone();
    for r in rotations_for_rotate_and_sum(step, count) {
        let rot = ev.rotate(&acc, r, keys)?;
        ev.add_assign(&mut acc, &rot)?;
    }
    Ok(acc)
}

/// Slot `j` of the output is `sum_(t < copies) x_((j - t block) mod slots)`: a vector held in
/// slots `0..block` (zero elsewhere) comes out repeated `copies` times. `log2(copies)`
/// rotations (right by `block`, `2 block`, ...). `copies` is a power of two.
///
/// ```
/// use tessera_backend::CpuBackend;
/// use tessera_ckks::circuits::sums::{replicate, rotations_for_replicate};
/// use tessera_ckks::{decrypt, CkksContext, Evaluator, KeyGenerator, Parameters};
///
/// # fn main() -> tessera_ckks::Result<()> {
/// let ctx = CkksContext::new(Parameters::preset("test-small")?)?;
/// let mut kg = KeyGenerator::new(&ctx)?;
/// let sk = kg.secret_key()?;
/// let keys = kg.evaluation_keys(&sk, &rotations_for_replicate(2, 4), false)?;
/// let x = [1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
/// let (l, s) = (ctx.params().max_level(), ctx.params().default_scale());
/// let ct = kg.encrypt_sk(&ctx.encode_real(&x, 8, l, s)?, &sk)?;
/// let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone()))?;
/// let cx = ev.load(&ct)?;
/// let y = replicate(&mut ev, &cx, 2, 4, &keys)?;
/// let out = ctx.decode(&decrypt(&ev.store(&y)?, &sk)?)?;
/// for (j, o) in out.iter().enumerate() {
///     assert!((o.re - [1.0, 2.0][j % 2]).abs() < 1e-3); // 1, 2, 1, 2, ...
/// }
/// # Ok(())
/// # }
/// ```
pub fn replicate<B: Backend>(
    ev: &mut Evaluator<B>,
    x: &Ciphertext<B::Poly>,
    block: usize,
    copies: usize,
    keys: &EvaluationKeys,
) -> Result<Ciphertext<B::Poly>> {
    if block == 0 || block > x.slots {
        return Err(CkksError::InvalidParameter {
            name: "block",
            value: block.to_string(),
            allowed: format!("1 to the {} slots", x.slots),
        });
    }
    check_count("copies", copies, x.slots)?;
    rotate_and_sum(ev, x, -(block as i64), copies, keys)
}
