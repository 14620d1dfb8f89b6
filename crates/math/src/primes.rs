//! NTT-friendly primes and roots of unity.
//!
//! A negacyclic NTT of degree N modulo q needs a primitive 2N-th root of unity, which exists iff
//! `q = 1 mod 2N`. Prime generation is deterministic (same arguments, same primes) so parameter
//! sets are reproducible from their description alone.

use crate::error::{MathError, Result};
use crate::modular::{Modulus, Montgomery, MAX_MODULUS_BITS};

/// Deterministic Miller-Rabin for all 64-bit integers (the first 12 primes as bases suffice
/// below 3.3 * 10^24).
pub fn is_prime(n: u64) -> bool {
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if n < 2 {
        return false;
    }
    for &p in &BASES {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    let d = (n - 1) >> (n - 1).trailing_zeros();
    let s = (n - 1).trailing_zeros();
    let mul = |a: u64, b: u64| ((a as u128 * b as u128) % n as u128) as u64;
    let pow = |mut b: u64, mut e: u64| {
        let mut r = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                r = mul(r, b);
            }
            b = mul(b, b);
            e >>= 1;
        }
        r
    };
    'outer: for &a in &BASES {
        let mut x = pow(a, d);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul(x, x);
            if x == n - 1 {
                continue 'outer;
            }
        }
        return false;
    }
    true
}

/// Checks that `q` is a prime with `q = 1 mod 2N` and at most 62 bits.
pub fn check_ntt_prime(q: u64, n: usize) -> Result<()> {
    Modulus::new(q)?;
    if !is_prime(q) {
        return Err(MathError::NotPrime { q });
    }
    let two_n = 2 * n as u64;
    if q % two_n != 1 {
        return Err(MathError::NotNttFriendly {
            q,
            n,
            two_n,
            rem: q % two_n,
        });
    }
    Ok(())
}

/// Generates `count` distinct primes of exactly `bits` bits with `q = 1 mod 2N`, scanning
/// downward from `2^bits`, skipping any prime in `exclude`. Deterministic.
pub fn generate_ntt_primes(bits: u32, n: usize, count: usize, exclude: &[u64]) -> Result<Vec<u64>> {
    let two_n = 2 * n as u64;
    let min_bits = (64 - two_n.leading_zeros()) + 1;
    if bits < min_bits || bits > MAX_MODULUS_BITS {
        return Err(MathError::PrimeBitsOutOfRange {
            bits,
            min: min_bits,
            max: MAX_MODULUS_BITS,
        });
    }
    let lower = 1u64 << (bits - 1);
    // Largest candidate below 2^bits that is 1 mod 2N.
    let mut c = (1u64 << bits) - two_n + 1;
    let mut out = Vec::with_capacity(count);
    while out.len() < count && c > lower {
        if is_prime(c) && !exclude.contains(&c) {
            out.push(c);
        }
        c -= two_n;
    }
    if out.len() < count {
        return Err(MathError::NotEnoughPrimes {
            bits,
            two_n,
            count,
            found: out.len(),
        });
    }
    Ok(out)
}

/// The prime `q = 1 mod 2N` closest to `target` (either side), skipping any in `exclude`,
/// searched within `target / 2 .. 2 target` and below 2^62: double-prime rescaling pairs a
/// prime with the partner whose product is closest to the level's scale. `None` if there is
/// none in that range.
pub fn nearest_ntt_prime(target: u64, n: usize, exclude: &[u64]) -> Option<u64> {
    let two_n = 2 * n as u64;
    let (lo, hi) = (
        target / 2,
        target.saturating_mul(2).min(1 << MAX_MODULUS_BITS),
    );
    let ok = |c: u64| c > 2 && c >= lo && c <= hi && is_prime(c) && !exclude.contains(&c);
    // Candidates k 2N + 1 below and above the target, stepping outward until no closer one
    // can remain.
    let k = target.saturating_sub(1) / two_n;
    let mut best: Option<(u64, u64)> = None;
    for step in 0..=(target / two_n + 1) {
        let below = k.checked_sub(step).map(|k| k * two_n + 1);
        let above = (k + 1 + step).checked_mul(two_n).map(|c| c + 1);
        if below.is_none_or(|c| c < lo) && above.is_none_or(|c| c > hi) {
            break;
        }
        if best.is_some_and(|(_, d)| step.saturating_sub(1) * two_n > d) {
            break;
        }
        for c in [below, above].into_iter().flatten().filter(|&c| ok(c)) {
            let d = c.abs_diff(target);
            if best.is_none_or(|(_, bd)| d < bd) {
                best = Some((c, d));
            }
        }
    }
    best.map(|(c, _)| c)
}

/// The smallest primitive 2N-th root of unity modulo an NTT-friendly prime `q`.
///
/// For a candidate `x`, `psi = x^((q-1)/2N)` has order dividing 2N; it has order exactly 2N iff
/// `psi^N = -1` (2N is a power of two). Among all such roots the smallest is returned so the
/// choice is canonical.
pub fn primitive_root_2n(q: u64, n: usize) -> Result<u64> {
    check_ntt_prime(q, n)?;
    let m = Modulus::new(q)?;
    let mont = Montgomery::new(m);
    let two_n = 2 * n as u64;
    let exp = (q - 1) / two_n;
    let mut x = 2u64;
    let psi = loop {
        let psi = mont.pow(x, exp);
        if mont.pow(psi, n as u64) == q - 1 {
            break psi;
        }
        x += 1;
    };
    // All primitive 2N-th roots are psi^k for odd k; take the smallest for a canonical choice.
    let psi2 = m.mul(psi, psi);
    let (mut best, mut cur) = (psi, psi);
    for _ in 0..n {
        cur = m.mul(cur, psi2);
        best = best.min(cur);
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_ntt_prime_is_the_closest_candidate() {
        let n = 1 << 10;
        for target in [1u64 << 27, 3 << 25, (1 << 40) + 12345, 1 << 61] {
            let got = nearest_ntt_prime(target, n, &[]).unwrap();
            assert!(is_prime(got) && got % (2 * n as u64) == 1);
            // Brute force: no NTT prime is strictly closer.
            let d = got.abs_diff(target);
            let two_n = 2 * n as u64;
            let mut c = (target.saturating_sub(d) / two_n) * two_n + 1;
            while c <= target + d {
                if c.abs_diff(target) < d {
                    assert!(!is_prime(c), "{c} is closer to {target} than {got}");
                }
                c += two_n;
            }
            // Excluding it gives another one.
            assert_ne!(nearest_ntt_prime(target, n, &[got]), Some(got));
        }
        assert_eq!(nearest_ntt_prime(10, 1 << 10, &[]), None);
    }

    fn slow_is_prime(n: u64) -> bool {
        n >= 2
            && (2..)
                .take_while(|d| d * d <= n)
                .all(|d| !n.is_multiple_of(d))
    }

    #[test]
    fn miller_rabin_matches_trial_division() {
        for n in 0..20_000u64 {
            assert_eq!(is_prime(n), slow_is_prime(n), "n = {n}");
        }
        // Carmichael numbers and strong pseudoprimes to small bases.
        for n in [561u64, 1105, 1729, 2047, 3215031751, 3825123056546413051] {
            assert!(!is_prime(n));
        }
        assert!(is_prime((1 << 61) - 1));
        assert!(!is_prime((1 << 62) - 1));
    }

    #[test]
    fn generated_primes_are_distinct_and_friendly() {
        for (bits, n) in [
            (30u32, 1usize << 10),
            (50, 1 << 12),
            (60, 1 << 16),
            (62, 1 << 16),
        ] {
            let ps = generate_ntt_primes(bits, n, 8, &[]).unwrap();
            let mut sorted = ps.clone();
            sorted.dedup();
            assert_eq!(sorted.len(), 8);
            for &p in &ps {
                assert_eq!(64 - p.leading_zeros(), bits);
                check_ntt_prime(p, n).unwrap();
            }
            let more = generate_ntt_primes(bits, n, 2, &ps).unwrap();
            assert!(more.iter().all(|p| !ps.contains(p)));
        }
    }

    #[test]
    fn roots_have_order_2n() {
        for (bits, n) in [(20u32, 16usize), (40, 1 << 10), (60, 1 << 16)] {
            let q = generate_ntt_primes(bits, n, 1, &[]).unwrap()[0];
            let m = Modulus::new(q).unwrap();
            let psi = primitive_root_2n(q, n).unwrap();
            assert_eq!(m.pow(psi, 2 * n as u64), 1);
            assert_eq!(m.pow(psi, n as u64), q - 1);
        }
    }

    #[test]
    fn bad_primes_are_errors() {
        assert!(matches!(
            check_ntt_prime(15, 4),
            Err(MathError::NotPrime { .. })
        ));
        assert!(matches!(
            check_ntt_prime(65537, 1 << 16),
            Err(MathError::NotNttFriendly { .. })
        ));
        assert!(matches!(
            generate_ntt_primes(70, 1 << 10, 1, &[]),
            Err(MathError::PrimeBitsOutOfRange { .. })
        ));
        assert!(matches!(
            generate_ntt_primes(14, 1 << 12, 1, &[]),
            Err(MathError::PrimeBitsOutOfRange { .. })
        ));
    }
}
