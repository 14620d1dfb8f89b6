//! Closed forms for the work of one hybrid key switch (as [`crate::Evaluator::key_switch`]
//! performs it), checked against traces in the tests. Units: one NTT of one limb; one
//! multiply of an N-coefficient limb counts N; words are 8 bytes.
//!
//! At level `l` (`l+1` chain limbs), with `K` special primes and the `beta` digits that reach
//! level `l`, of sizes `d_i` (limbs at or below `l`; `sum d_i = l+1`):
//!
//! | quantity | closed form |
//! |---|---|
//! | INTT limbs | `(l+1) + 2K` (the input once; the special limbs of both parts in ModDown) |
//! | NTT limbs | `beta (l+1+K) - (l+1) + 2(l+1)` (ModUp creates `l+1+K-d_i` limbs per digit; ModDown returns `l+1` per part) |
//! | BConv MACs | `N [sum_i d_i (l+1+K-d_i) + 2K(l+1)]` |
//! | BConv scalings | `N [(l+1) + 2K]` |
//! | element-wise multiplies | `N [2 beta (l+1+K) + 2(l+1)]` (inner product; `P^{-1}` in ModDown) |
//! | key bytes loaded | `8 N beta (l+1+K)` (the `b` halves only: seeded keys) |
//! | PRNG words | `N beta (l+1+K)` (the `a` halves, regenerated) |
//!
//! Compared with h3.md Eq. 2, `#(I)NTT = (l+1) + beta(l+k+1) + 2(l+k+1) + 2(l+1)`: H3
//! transforms every limb after ModUp and every limb before ModDown; this implementation reuses
//! each digit's own limbs in evaluation form (`-(l+1)` NTTs) and brings only the K special
//! limbs to coefficient form for ModDown (`2K` instead of `2(l+k+1)` INTTs). With full digits
//! (`d_i = alpha`) our ModUp BConv MACs equal H3 Eq. 1's `(beta(l+k+1) - (l+1)) alpha`, and
//! ModDown's `2K(l+1)` MACs plus `2(l+1)` `P^{-1}` multiplies equal its `2(l+1)(k+1)`. ARK
//! (section V-B) counts data movement rather than work: `(alpha+L+1) N` words per
//! BConvRoutine, `(dnum+2)(alpha+L+1) N` per key switch at the top level with full digits.

use crate::decomposition::KeySwitchPlan;
use crate::params::Parameters;
use tessera_backend::trace::TraceCounts;

/// The closed forms of the module documentation for the parameter set's fixed plan.
/// In the units a trace is counted in ([`TraceCounts::from_instructions`]), so the two compare
/// directly.
pub fn key_switch_cost(params: &Parameters, level: usize) -> TraceCounts {
    key_switch_cost_plan(params, &KeySwitchPlan::fixed(params), level)
}

/// The closed forms for a key switch at `level` with a key made for `plan` (`K` is the
/// plan's number of special primes, the digits are the plan's that reach `level`).
pub fn key_switch_cost_plan(
    params: &Parameters,
    plan: &KeySwitchPlan,
    level: usize,
) -> TraceCounts {
    let n = params.n() as u64;
    let l1 = level as u64 + 1;
    let k = plan.special.len() as u64;
    let digits: Vec<u64> = plan
        .digits_at(level)
        .into_iter()
        .map(|d| d.len() as u64)
        .collect();
    let beta = digits.len() as u64;
    let modup_macs: u64 = digits.iter().map(|&d| d * (l1 + k - d)).sum();
    TraceCounts {
        ntt_limbs: beta * (l1 + k) - l1 + 2 * l1,
        intt_limbs: l1 + 2 * k,
        bconv_macs: n * (modup_macs + 2 * k * l1),
        bconv_scalings: n * (l1 + 2 * k),
        elementwise_mults: n * (2 * beta * (l1 + k) + 2 * l1),
        key_bytes_loaded: 8 * n * beta * (l1 + k),
        plaintext_bytes_loaded: 0,
        prng_words: n * beta * (l1 + k),
        // One key: each digit's `b` half is a distinct object, loaded once.
        distinct_key_objects: beta,
        distinct_key_bytes: 8 * n * beta * (l1 + k),
    }
}
