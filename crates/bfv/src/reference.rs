//! Slow, obviously correct references over big integers: the schoolbook negacyclic product
//! and BFV's operations written straight from their definitions, for tests.

use crate::context::{Bfv, Ciphertext, Plaintext};
use crate::crt::round_scale;
use crate::error::Result;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};

/// `a * b mod (X^n + 1)` over the integers, schoolbook.
pub fn negacyclic(a: &[BigInt], b: &[BigInt]) -> Vec<BigInt> {
    let n = a.len();
    let mut c = vec![BigInt::zero(); n];
    for i in 0..n {
        if a[i].is_zero() {
            continue;
        }
        for j in 0..n {
            let p = &a[i] * &b[j];
            if i + j < n {
                c[i + j] += p;
            } else {
                c[i + j - n] -= p;
            }
        }
    }
    c
}

/// The tensor of Eq. 4 on centred integers, scaled by `t/q` with rounding, reduced mod `q`.
pub fn mul(bfv: &Bfv, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
    let c = |ct: &Ciphertext, i: usize| bfv.centered(&ct.polys()[i]);
    let (a0, a1, b0, b1) = (c(a, 0), c(a, 1), c(b, 0), c(b, 1));
    let y0 = negacyclic(&a0, &b0);
    let y1: Vec<BigInt> = negacyclic(&a0, &b1)
        .into_iter()
        .zip(negacyclic(&a1, &b0))
        .map(|(x, y)| x + y)
        .collect();
    let y2 = negacyclic(&a1, &b1);
    let t = num_bigint::BigUint::from(bfv.params().t);
    let q = bfv.params().q();
    let polys = [y0, y1, y2]
        .iter()
        .map(|y| {
            let s: Vec<BigInt> = y.iter().map(|v| round_scale(v, &t, &q)).collect();
            bfv.poly_from_bigints(&s)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Ciphertext { polys })
}

/// `ct * pt` with the plaintext centred mod `t`, schoolbook mod `q`.
pub fn mul_plain(bfv: &Bfv, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
    let t = bfv.params().t as i64;
    let p: Vec<BigInt> = pt
        .coeffs()
        .iter()
        .map(|&c| {
            BigInt::from(if c as i64 > t / 2 {
                c as i64 - t
            } else {
                c as i64
            })
        })
        .collect();
    let polys = ct
        .polys()
        .iter()
        .map(|c| bfv.poly_from_bigints(&negacyclic(&bfv.centered(c), &p)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Ciphertext { polys })
}

/// Decryption from its definition: `round(t [c0 + c1 s + c2 s^2]_q / q) mod t`.
pub fn decrypt(bfv: &Bfv, ct: &Ciphertext, s: &[i64]) -> Vec<u64> {
    let sb: Vec<BigInt> = s.iter().map(|&x| BigInt::from(x)).collect();
    let q = BigInt::from(bfv.params().q());
    let n = bfv.params().n;
    let mut acc = vec![BigInt::zero(); n];
    for p in ct.polys().iter().rev() {
        acc = negacyclic(&acc, &sb);
        for (a, c) in acc.iter_mut().zip(bfv.centered(p)) {
            *a += c;
        }
    }
    let t = bfv.params().t;
    acc.iter()
        .map(|x| {
            let x = x.mod_floor(&q);
            let m = round_scale(&x, &num_bigint::BigUint::from(t), q.magnitude());
            m.mod_floor(&BigInt::from(t)).to_u64().expect("below t")
        })
        .collect()
}
