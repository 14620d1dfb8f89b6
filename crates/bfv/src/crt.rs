//! Chinese remaindering over 128-bit-word moduli with big integers: the exact lift and
//! scale steps of BFV multiplication and decryption, which CoFHEE leaves to the host.

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};

/// A CRT basis `m_0, ..., m_{k-1}` with `M = prod m_i`.
#[derive(Clone, Debug)]
pub struct Crt {
    moduli: Vec<u128>,
    m: BigUint,
    half: BigUint,
    /// `(M / m_i) * ((M / m_i)^-1 mod m_i)`.
    c: Vec<BigUint>,
}

impl Crt {
    /// The basis of pairwise coprime `moduli` (callers pass distinct primes).
    pub fn new(moduli: &[u128]) -> Self {
        let m = moduli
            .iter()
            .fold(BigUint::one(), |acc, &x| acc * BigUint::from(x));
        let c = moduli
            .iter()
            .map(|&mi| {
                let mb = BigUint::from(mi);
                let hat = &m / &mb;
                let hat_mod = &hat % &mb;
                // m_i prime: inverse by Fermat.
                let inv = hat_mod.modpow(&(&mb - 2u32), &mb);
                hat * inv
            })
            .collect();
        Self {
            moduli: moduli.to_vec(),
            half: &m >> 1u32,
            m,
            c,
        }
    }

    /// The product `M`.
    pub fn product(&self) -> &BigUint {
        &self.m
    }

    /// The moduli.
    pub fn moduli(&self) -> &[u128] {
        &self.moduli
    }

    /// The integer in `[0, M)` with the given residues.
    pub fn reconstruct(&self, residues: &[u128]) -> BigUint {
        debug_assert_eq!(residues.len(), self.moduli.len());
        if residues.len() == 1 {
            return BigUint::from(residues[0]);
        }
        let mut acc = BigUint::zero();
        for (r, c) in residues.iter().zip(&self.c) {
            acc += c * BigUint::from(*r);
        }
        acc % &self.m
    }

    /// The representative in `(-M/2, M/2]`.
    pub fn centered(&self, residues: &[u128]) -> BigInt {
        let x = self.reconstruct(residues);
        if x > self.half {
            BigInt::from_biguint(Sign::Minus, &self.m - x)
        } else {
            BigInt::from_biguint(Sign::Plus, x)
        }
    }
}

/// `x mod p` in `[0, p)` for a signed big integer.
pub fn mod_big(x: &BigInt, p: u128) -> u128 {
    x.mod_floor(&BigInt::from(p))
        .to_u128()
        .expect("reduced below a 128-bit modulus")
}

/// `round(num * x / den)` for a signed `x` (ties away from zero cannot occur for odd `den`).
pub fn round_scale(x: &BigInt, num: &BigUint, den: &BigUint) -> BigInt {
    let (sign, mag) = (x.sign(), x.magnitude());
    let r = (mag * num * 2u32 + den) / (den * 2u32);
    BigInt::from_biguint(
        if sign == Sign::Minus {
            Sign::Minus
        } else {
            Sign::Plus
        },
        r,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconstructs_and_centres() {
        let crt = Crt::new(&[97, 101, 103]);
        let m = 97 * 101 * 103;
        for x in [0i64, 1, -1, 12345, -12345, m / 2, -(m / 2)] {
            let res: Vec<u128> = crt
                .moduli()
                .iter()
                .map(|&p| mod_big(&BigInt::from(x), p))
                .collect();
            assert_eq!(crt.centered(&res), BigInt::from(x));
        }
        let r = round_scale(
            &BigInt::from(-7),
            &BigUint::from(1u32),
            &BigUint::from(3u32),
        );
        assert_eq!(r, BigInt::from(-2));
        let r = round_scale(&BigInt::from(7), &BigUint::from(1u32), &BigUint::from(3u32));
        assert_eq!(r, BigInt::from(2));
    }
}
