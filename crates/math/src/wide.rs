//! Arithmetic modulo primes of up to 126 bits, for designs with 128-bit words (CoFHEE,
//! cofhee.md section III-B: "the maximum coefficient size supported by CoFHEE is 128 bits",
//! used with 109-bit moduli in section VI-B).
//!
//! Products use Montgomery multiplication with R = 2^128: a 128 x 128 -> 256-bit product
//! from four 64-bit partial products, then `(t + ((t mod R) q' mod R) q) / R`, which needs no
//! division. Moduli stay below 2^126 so that every intermediate sum fits. Setup (primality,
//! roots of unity, R mod q) uses big integers: it runs once.

use crate::error::{MathError, Result};
use num_bigint::BigUint;
use num_traits::{One, ToPrimitive, Zero};

/// Largest supported modulus size in bits.
pub const MAX_WIDE_BITS: u32 = 126;

/// `a * b` as (high, low) 128-bit halves.
#[inline]
pub fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    let (a1, a0) = (a >> 64, a & u64::MAX as u128);
    let (b1, b0) = (b >> 64, b & u64::MAX as u128);
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 64) + (p01 & u64::MAX as u128) + (p10 & u64::MAX as u128);
    let lo = (p00 & u64::MAX as u128) | (mid << 64);
    let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    (hi, lo)
}

/// A modulus of up to 126 bits with its Montgomery constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modulus128 {
    q: u128,
    /// `-q^-1 mod 2^128`.
    q_neg_inv: u128,
    /// `2^128 mod q` (Montgomery one).
    r: u128,
    /// `2^256 mod q` (converts into Montgomery form).
    r2: u128,
}

fn big(x: u128) -> BigUint {
    BigUint::from(x)
}

fn small(x: &BigUint) -> u128 {
    x.to_u128().expect("reduced below a 126-bit modulus")
}

impl Modulus128 {
    /// `q` odd, `3 <= q < 2^126`.
    pub fn new(q: u128) -> Result<Self> {
        if q < 3 || q.is_multiple_of(2) || q >> MAX_WIDE_BITS != 0 {
            return Err(MathError::OutOfRange {
                name: "128-bit modulus",
                value: q.to_string(),
                allowed: format!("an odd integer in [3, 2^{MAX_WIDE_BITS})"),
            });
        }
        // Newton's iteration doubles the correct low bits: 3 -> 6 -> ... -> 192.
        let mut inv: u128 = q;
        for _ in 0..7 {
            inv = inv.wrapping_mul(2u128.wrapping_sub(q.wrapping_mul(inv)));
        }
        let r = small(&((BigUint::one() << 128u32) % big(q)));
        let r2 = small(&((BigUint::one() << 256u32) % big(q)));
        Ok(Self {
            q,
            q_neg_inv: inv.wrapping_neg(),
            r,
            r2,
        })
    }

    /// The modulus.
    pub fn value(&self) -> u128 {
        self.q
    }

    /// Bits of the modulus.
    pub fn bits(&self) -> u32 {
        128 - self.q.leading_zeros()
    }

    /// `a + b mod q` for reduced inputs.
    #[inline]
    pub fn add(&self, a: u128, b: u128) -> u128 {
        let s = a + b;
        if s >= self.q {
            s - self.q
        } else {
            s
        }
    }

    /// `a - b mod q` for reduced inputs.
    #[inline]
    pub fn sub(&self, a: u128, b: u128) -> u128 {
        if a >= b {
            a - b
        } else {
            a + self.q - b
        }
    }

    /// `a * b * 2^-128 mod q` (Montgomery product) for inputs below `q`.
    #[inline]
    pub fn mont_mul(&self, a: u128, b: u128) -> u128 {
        let (hi, lo) = mul_wide(a, b);
        let m = lo.wrapping_mul(self.q_neg_inv);
        let (mh, ml) = mul_wide(m, self.q);
        // lo + ml is 0 mod 2^128 by construction; only its carry matters.
        let carry = (lo.overflowing_add(ml).1) as u128;
        // hi, mh < q < 2^126: no overflow.
        let t = hi + mh + carry;
        if t >= self.q {
            t - self.q
        } else {
            t
        }
    }

    /// Into Montgomery form: `a * 2^128 mod q`.
    #[inline]
    pub fn to_mont(&self, a: u128) -> u128 {
        self.mont_mul(a, self.r2)
    }

    /// `a * b mod q`.
    #[inline]
    pub fn mul(&self, a: u128, b: u128) -> u128 {
        self.mont_mul(self.mont_mul(a, b), self.r2)
    }

    /// `a^e mod q`.
    pub fn pow(&self, a: u128, mut e: u128) -> u128 {
        let mut base = self.to_mont(a);
        let mut acc = self.r;
        while e > 0 {
            if e & 1 == 1 {
                acc = self.mont_mul(acc, base);
            }
            base = self.mont_mul(base, base);
            e >>= 1;
        }
        self.mont_mul(acc, 1)
    }

    /// `a^-1 mod q` (q prime).
    pub fn inv(&self, a: u128) -> u128 {
        self.pow(a, self.q - 2)
    }
}

/// Deterministic Miller-Rabin with the first twelve prime bases, then 20 more fixed bases:
/// a composite passing all of them below 2^126 is not known; primes always pass.
pub fn is_prime_128(n: u128) -> bool {
    if n < 2 {
        return false;
    }
    const SMALL: [u128; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    for p in SMALL {
        if n == p {
            return true;
        }
        if n.is_multiple_of(p) {
            return false;
        }
    }
    let nb = big(n);
    let n1 = &nb - 1u32;
    let s = n1.trailing_zeros().expect("n > 2");
    let d = &n1 >> s;
    let bases = SMALL.iter().copied().chain((41..).step_by(2).take(20));
    'outer: for a in bases {
        let mut x = big(a).modpow(&d, &nb);
        if x.is_one() || x == n1 {
            continue;
        }
        for _ in 1..s {
            x = x.modpow(&BigUint::from(2u32), &nb);
            if x == n1 {
                continue 'outer;
            }
        }
        return false;
    }
    true
}

/// `count` distinct primes of exactly `bits` bits, `q = 1 mod 2n`, scanning down from 2^bits.
pub fn generate_wide_ntt_primes(bits: u32, n: usize, count: usize) -> Result<Vec<u128>> {
    let two_n = 2 * n as u128;
    if !(n.is_power_of_two() && n >= 2) {
        return Err(MathError::OutOfRange {
            name: "n",
            value: n.to_string(),
            allowed: "a power of two >= 2".into(),
        });
    }
    let min_bits = 130 - two_n.leading_zeros();
    if bits < min_bits || bits > MAX_WIDE_BITS {
        return Err(MathError::OutOfRange {
            name: "prime bits",
            value: bits.to_string(),
            allowed: format!("{min_bits} to {MAX_WIDE_BITS} for n = {n}"),
        });
    }
    let lower = 1u128 << (bits - 1);
    let mut c = (1u128 << bits) - two_n + 1;
    let mut out = Vec::with_capacity(count);
    while out.len() < count && c > lower {
        if is_prime_128(c) {
            out.push(c);
        }
        c -= two_n;
    }
    if out.len() < count {
        return Err(MathError::OutOfRange {
            name: "prime count",
            value: count.to_string(),
            allowed: format!(
                "at most {} primes of {bits} bits = 1 mod {two_n}",
                out.len()
            ),
        });
    }
    Ok(out)
}

/// Negacyclic NTT tables for `n` modulo a 128-bit-word prime: `psi^bitrev(i)` in Montgomery
/// form for Cooley-Tukey, their inverses for Gentleman-Sande, `n^-1`.
#[derive(Clone, Debug)]
pub struct WideNtt {
    m: Modulus128,
    n: usize,
    psi_rev: Vec<u128>,
    psi_inv_rev: Vec<u128>,
    n_inv_mont: u128,
}

fn bitrev(i: usize, logn: u32) -> usize {
    i.reverse_bits() >> (usize::BITS - logn)
}

impl WideNtt {
    /// Tables for degree `n` (a power of two) modulo prime `q = 1 mod 2n`.
    pub fn new(q: u128, n: usize) -> Result<Self> {
        let m = Modulus128::new(q)?;
        let two_n = 2 * n as u128;
        if !n.is_power_of_two() || n < 2 || !(q - 1).is_multiple_of(two_n) || !is_prime_128(q) {
            return Err(MathError::OutOfRange {
                name: "NTT modulus",
                value: q.to_string(),
                allowed: format!("a prime = 1 mod 2n = {two_n}, n a power of two"),
            });
        }
        // A primitive 2n-th root: x^((q-1)/2n) with psi^n = -1.
        let exp = (q - 1) / two_n;
        let mut x = 2u128;
        let psi = loop {
            let p = m.pow(x, exp);
            if m.pow(p, n as u128) == q - 1 {
                break p;
            }
            x += 1;
        };
        let logn = n.trailing_zeros();
        let psi_inv = m.inv(psi);
        let (mut pw, mut pwi) = (vec![0u128; n], vec![0u128; n]);
        let (mut a, mut b) = (1u128, 1u128);
        for i in 0..n {
            pw[i] = a;
            pwi[i] = b;
            a = m.mul(a, psi);
            b = m.mul(b, psi_inv);
        }
        let psi_rev = (0..n).map(|i| m.to_mont(pw[bitrev(i, logn)])).collect();
        let psi_inv_rev = (0..n).map(|i| m.to_mont(pwi[bitrev(i, logn)])).collect();
        let n_inv_mont = m.to_mont(m.inv(n as u128 % q));
        Ok(Self {
            m,
            n,
            psi_rev,
            psi_inv_rev,
            n_inv_mont,
        })
    }

    /// The modulus.
    pub fn modulus(&self) -> &Modulus128 {
        &self.m
    }

    /// Ring degree.
    pub fn n(&self) -> usize {
        self.n
    }

    fn check(&self, a: &[u128]) -> Result<()> {
        if a.len() != self.n {
            return Err(MathError::LengthMismatch {
                what: "128-bit polynomial coefficients",
                expected: self.n,
                found: a.len(),
            });
        }
        Ok(())
    }

    /// In-place forward negacyclic NTT (Cooley-Tukey, bit-reversed output): the radix-2
    /// butterflies CoFHEE's PE runs, `(n/2) log n` of them.
    pub fn forward(&self, a: &mut [u128]) -> Result<()> {
        self.check(a)?;
        let m = &self.m;
        let mut t = self.n;
        let mut blocks = 1;
        while blocks < self.n {
            t /= 2;
            for i in 0..blocks {
                let w = self.psi_rev[blocks + i];
                let (j1, j2) = (2 * i * t, 2 * i * t + t);
                for j in j1..j2 {
                    let u = a[j];
                    let v = m.mont_mul(a[j + t], w);
                    a[j] = m.add(u, v);
                    a[j + t] = m.sub(u, v);
                }
            }
            blocks *= 2;
        }
        Ok(())
    }

    /// In-place inverse (Gentleman-Sande, bit-reversed input), scaled by `n^-1`.
    pub fn inverse(&self, a: &mut [u128]) -> Result<()> {
        self.check(a)?;
        let m = &self.m;
        let mut t = 1;
        let mut blocks = self.n;
        while blocks > 1 {
            let h = blocks / 2;
            for i in 0..h {
                let w = self.psi_inv_rev[h + i];
                let j1 = 2 * i * t;
                for j in j1..j1 + t {
                    let u = a[j];
                    let v = a[j + t];
                    a[j] = m.add(u, v);
                    a[j + t] = m.mont_mul(m.sub(u, v), w);
                }
            }
            t *= 2;
            blocks = h;
        }
        for x in a.iter_mut() {
            *x = m.mont_mul(*x, self.n_inv_mont);
        }
        Ok(())
    }
}

/// Schoolbook negacyclic product `a * b mod (X^n + 1, q)` with big integers: the slow,
/// obviously correct reference.
pub fn negacyclic_schoolbook(a: &[u128], b: &[u128], q: u128) -> Vec<u128> {
    let n = a.len();
    let qb = big(q);
    let mut acc = vec![BigUint::zero(); n];
    let mut neg = vec![BigUint::zero(); n];
    for i in 0..n {
        for j in 0..n {
            let p = big(a[i]) * big(b[j]);
            if i + j < n {
                acc[i + j] += p;
            } else {
                neg[i + j - n] += p;
            }
        }
    }
    acc.iter()
        .zip(&neg)
        .map(|(p, m)| small(&((p + (m / &qb + 1u32) * &qb - m) % &qb)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rand_below(s: &mut u128, q: u128) -> u128 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s % q
    }

    #[test]
    fn wide_product_matches_big_integers() {
        let mut s = 0x1234_5678_9abc_def0_1122_3344_5566_7788u128;
        for _ in 0..1000 {
            let a = rand_below(&mut s, u128::MAX);
            let b = rand_below(&mut s, u128::MAX);
            let (hi, lo) = mul_wide(a, b);
            let want = big(a) * big(b);
            assert_eq!((big(hi) << 128u32) + big(lo), want);
        }
    }

    #[test]
    fn modular_ops_match_big_integers() {
        let q = generate_wide_ntt_primes(109, 4096, 1).unwrap()[0];
        let m = Modulus128::new(q).unwrap();
        let mut s = 0xfeed_beef_u128 << 64 | 0x1234;
        for _ in 0..1000 {
            let (a, b) = (rand_below(&mut s, q), rand_below(&mut s, q));
            assert_eq!(big(m.mul(a, b)), big(a) * big(b) % big(q));
            assert_eq!(big(m.add(a, b)), (big(a) + big(b)) % big(q));
            assert_eq!(m.sub(m.add(a, b), b), a);
        }
        assert_eq!(m.mul(m.inv(12345), 12345), 1);
        assert!(Modulus128::new(1 << 127).is_err());
        assert!(Modulus128::new(10).is_err());
    }

    #[test]
    fn primes_are_ntt_friendly_and_prime() {
        let ps = generate_wide_ntt_primes(109, 8192, 2).unwrap();
        assert_eq!(ps.len(), 2);
        for &p in &ps {
            assert_eq!(128 - p.leading_zeros(), 109);
            assert_eq!((p - 1) % 16384, 0);
            assert!(is_prime_128(p));
        }
        assert!(!is_prime_128(ps[0] * 3));
        assert!(is_prime_128((1u128 << 61) - 1), "a Mersenne prime");
        assert!(generate_wide_ntt_primes(127, 8, 1).is_err());
    }

    #[test]
    fn ntt_product_matches_schoolbook() {
        for n in [16usize, 64, 256] {
            let q = generate_wide_ntt_primes(109, n, 1).unwrap()[0];
            let t = WideNtt::new(q, n).unwrap();
            let mut s = 0xabcdef_u128 << 70 | n as u128;
            let a: Vec<u128> = (0..n).map(|_| rand_below(&mut s, q)).collect();
            let b: Vec<u128> = (0..n).map(|_| rand_below(&mut s, q)).collect();
            let want = negacyclic_schoolbook(&a, &b, q);
            let (mut fa, mut fb) = (a.clone(), b.clone());
            t.forward(&mut fa).unwrap();
            t.forward(&mut fb).unwrap();
            let m = t.modulus();
            let mut c: Vec<u128> = fa.iter().zip(&fb).map(|(x, y)| m.mul(*x, *y)).collect();
            t.inverse(&mut c).unwrap();
            assert_eq!(c, want, "n = {n}");
            // Round trip.
            let mut r = a.clone();
            t.forward(&mut r).unwrap();
            t.inverse(&mut r).unwrap();
            assert_eq!(r, a);
        }
        let q = generate_wide_ntt_primes(109, 16, 1).unwrap()[0];
        assert!(WideNtt::new(q, 16)
            .unwrap()
            .forward(&mut [0u128; 8])
            .is_err());
        assert!(WideNtt::new(q + 2, 16).is_err());
    }
}
