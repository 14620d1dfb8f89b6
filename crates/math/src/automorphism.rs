//! Automorphisms `X -> X^g` of `Z_q[X]/(X^N + 1)`, `g` odd.
//!
//! Rotations by `r` slots use the Galois element `g = 5^r mod 2N` and conjugation uses
//! `g = 2N - 1`. In coefficient representation the map sends `a_i X^i` to `a_i X^(i*g mod 2N)`,
//! negating when `i*g mod 2N >= N` (because `X^N = -1`). In evaluation representation it is a
//! pure index permutation: slot `k` of the radix-2 NTT holds `a(psi^e_k)` with
//! `e_k = 2*brev(k) + 1`, and `(a o X^g)(psi^e) = a(psi^(e*g))`, so output slot `k` reads input
//! slot `k'` with `e_k' = e_k * g mod 2N`.

use crate::error::{MathError, Result};
use crate::ntt::{bit_reverse, check_degree};

/// Galois element for a rotation by `r` slots (negative `r` rotates the other way):
/// `5^(r mod N/2) mod 2N`.
pub fn galois_element(r: i64, n: usize) -> Result<u64> {
    check_degree(n)?;
    let two_n = 2 * n as u64;
    let slots = (n / 2).max(1) as i64;
    let mut e = r.rem_euclid(slots) as u64;
    let (mut g, mut base) = (1u64, 5u64);
    while e > 0 {
        if e & 1 == 1 {
            g = g * base % two_n;
        }
        base = base * base % two_n;
        e >>= 1;
    }
    Ok(g)
}

/// Galois element of complex conjugation, `2N - 1`.
pub fn conjugation_element(n: usize) -> Result<u64> {
    check_degree(n)?;
    Ok(2 * n as u64 - 1)
}

/// Checks that `g` is a valid Galois element for degree `n`: odd and below `2N`.
pub fn galois_check(g: u64, n: usize) -> Result<()> {
    check_degree(n)?;
    if g.is_multiple_of(2) || g >= 2 * n as u64 {
        return Err(MathError::OutOfRange {
            name: "Galois element",
            value: g.to_string(),
            allowed: format!("an odd integer in [1, {})", 2 * n),
        });
    }
    Ok(())
}

/// Applies `X -> X^g` to one limb in coefficient representation modulo `q`.
pub fn automorphism_coeff(input: &[u64], g: u64, q: u64, out: &mut [u64]) -> Result<()> {
    let n = input.len();
    galois_check(g, n)?;
    if out.len() != n {
        return Err(MathError::LengthMismatch {
            what: "automorphism output",
            expected: n,
            found: out.len(),
        });
    }
    let mask = 2 * n - 1;
    let g = g as usize;
    for (i, &a) in input.iter().enumerate() {
        let j = (i * g) & mask;
        if j < n {
            out[j] = a;
        } else {
            out[j - n] = if a == 0 { 0 } else { q - a };
        }
    }
    Ok(())
}

/// The evaluation-representation permutation of `X -> X^g`: `out[k] = in[perm[k]]`.
pub fn automorphism_permutation(g: u64, n: usize) -> Result<Vec<u32>> {
    galois_check(g, n)?;
    let bits = n.trailing_zeros();
    let mask = 2 * n as u64 - 1;
    Ok((0..n)
        .map(|k| {
            let e = 2 * bit_reverse(k, bits) as u64 + 1;
            let e2 = (e * g) & mask;
            bit_reverse(((e2 - 1) / 2) as usize, bits) as u32
        })
        .collect())
}

/// Applies a permutation from [`automorphism_permutation`] to one limb.
pub fn apply_permutation(input: &[u64], perm: &[u32], out: &mut [u64]) {
    for (o, &p) in out.iter_mut().zip(perm) {
        *o = input[p as usize];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modular::Modulus;
    use crate::ntt::NttPlan;
    use crate::primes::generate_ntt_primes;
    use proptest::prelude::*;

    /// Direct substitution: compute a(X^g) mod (X^N + 1) by expanding each monomial.
    fn substitute(a: &[u64], g: u64, m: &Modulus) -> Vec<u64> {
        let n = a.len();
        let mut out = vec![0u64; n];
        for (i, &c) in a.iter().enumerate() {
            // X^(i*g) = X^(e mod N) * (-1)^(e div N)
            let e = i as u64 * g;
            let (idx, sign) = ((e % n as u64) as usize, (e / n as u64) % 2);
            out[idx] = if sign == 0 {
                m.add(out[idx], c)
            } else {
                m.sub(out[idx], c)
            };
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn coefficient_and_evaluation_forms_agree_with_substitution(log_n in 1u32..=10, r in -600i64..600, conj in any::<bool>(), seed in any::<u64>()) {
            let n = 1usize << log_n;
            let q = generate_ntt_primes(40, n, 1, &[]).unwrap()[0];
            let m = Modulus::new(q).unwrap();
            let g = if conj { conjugation_element(n).unwrap() } else { galois_element(r, n).unwrap() };
            let a: Vec<u64> = (0..n as u64).map(|i| (i.wrapping_mul(seed | 1) ^ (seed >> 7)) % q).collect();
            let expect = substitute(&a, g, &m);
            let mut got = vec![0u64; n];
            automorphism_coeff(&a, g, q, &mut got).unwrap();
            prop_assert_eq!(&got, &expect);
            let plan = NttPlan::new(n, q).unwrap();
            let mut fa = a.clone();
            plan.forward(&mut fa).unwrap();
            let perm = automorphism_permutation(g, n).unwrap();
            let mut fo = vec![0u64; n];
            apply_permutation(&fa, &perm, &mut fo);
            let mut fe = expect.clone();
            plan.forward(&mut fe).unwrap();
            prop_assert_eq!(fo, fe);
        }
    }

    #[test]
    fn galois_elements() {
        let n = 1 << 4;
        assert_eq!(galois_element(0, n).unwrap(), 1);
        assert_eq!(galois_element(1, n).unwrap(), 5);
        assert_eq!(galois_element(2, n).unwrap(), 25);
        // Rotating by -1 equals rotating by N/2 - 1.
        assert_eq!(
            galois_element(-1, n).unwrap(),
            galois_element(7, n).unwrap()
        );
        assert_eq!(conjugation_element(n).unwrap(), 31);
        assert!(automorphism_permutation(4, n).is_err());
        assert!(automorphism_permutation(33, n).is_err());
        assert!(galois_element(1, 12).is_err());
    }
}
