//! A slow, obviously correct backend: every primary computed straight from its definition, on
//! its own polynomial type, with `u128` products and `%`, sharing no kernel with the CPU
//! backend. It exists to check the CPU backend (and through it every other backend) with the
//! conformance suite ([`crate::conformance`]); it is far too slow for anything else (its NTT is
//! the O(N^2) evaluation at the odd powers of the 2N-th root of unity).
//!
//! What it takes from the math crate is data, not algorithms: the moduli, the 2N-th root of
//! unity `psi` each NTT plan uses (checked here to be one), and the seeded XOF stream of
//! [`tessera_math::sampling::limb_stream`] (the definition of a seeded polynomial).
//!
//! One known, documented difference: `bconv` in [`ConversionMode::ExactCentered`] is computed
//! exactly here (mixed-radix digits, see [`ReferenceBackend::bconv`]), while the CPU backend
//! rounds `sum_i y_i / q_i` in double precision. They agree unless the input's value `x`
//! satisfies `|x/Q - 1/2| < ~2^-50`, which uniform random inputs hit with probability about
//! 2^-49 per coefficient.

use crate::{Backend, Kind};
use std::sync::Arc;
use tessera_math::poly::check_operands;
use tessera_math::sampling::{limb_stream, Seed};
use tessera_math::{ConversionMode, MathError, Representation, RingContext, RnsPoly};

/// A polynomial of the reference backend: one vector of residues per limb.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefPoly {
    limbs: Vec<usize>,
    repr: Representation,
    data: Vec<Vec<u64>>,
}

/// The reference backend over one ring.
#[derive(Clone, Debug)]
pub struct ReferenceBackend {
    ring: Arc<RingContext>,
}

impl ReferenceBackend {
    /// A reference backend over `ring`. Refuses a ring whose NTT root is not a primitive 2N-th
    /// root of unity (the definition its transform evaluates at).
    pub fn new(ring: Arc<RingContext>) -> Result<Self, MathError> {
        let n = ring.n() as u128;
        for i in 0..ring.moduli().len() {
            let q = ring.moduli()[i].value();
            let psi = ring.plan(i).psi();
            if pow(psi, n as u64, q) != q - 1 {
                return Err(MathError::OutOfRange {
                    name: "NTT root",
                    value: psi.to_string(),
                    allowed: format!("a primitive 2N-th root of unity modulo {q}"),
                });
            }
        }
        Ok(Self { ring })
    }

    fn q(&self, limb: usize) -> u64 {
        self.ring.moduli()[limb].value()
    }

    fn n(&self) -> usize {
        self.ring.n()
    }

    /// Distinct ring indices.
    fn check_limbs(&self, limbs: &[usize]) -> Result<(), MathError> {
        for (k, &i) in limbs.iter().enumerate() {
            if i >= self.ring.moduli().len() || limbs[..k].contains(&i) {
                return Err(MathError::OutOfRange {
                    name: "limb index",
                    value: i.to_string(),
                    allowed: format!("distinct indices below {}", self.ring.moduli().len()),
                });
            }
        }
        Ok(())
    }

    fn moduli_of(&self, limbs: &[usize]) -> Vec<u64> {
        limbs.iter().map(|&i| self.q(i)).collect()
    }

    /// Same limbs and representation (and the representation `need`, if given).
    fn check_pair(
        &self,
        op: &'static str,
        a: &RefPoly,
        b: &RefPoly,
        need: Option<Representation>,
    ) -> Result<(), MathError> {
        check_operands(op, (&a.limbs, a.repr), (&b.limbs, b.repr), need, |l| {
            self.moduli_of(l)
        })
    }

    /// `f(q, x, y)` on every coefficient of two compatible polynomials.
    fn zip(
        &self,
        op: &'static str,
        a: &RefPoly,
        b: &RefPoly,
        need: Option<Representation>,
        f: impl Fn(u128, u128, u128) -> u128,
    ) -> Result<RefPoly, MathError> {
        self.check_pair(op, a, b, need)?;
        let data = a
            .limbs
            .iter()
            .zip(a.data.iter().zip(&b.data))
            .map(|(&i, (x, y))| {
                let q = self.q(i) as u128;
                x.iter()
                    .zip(y)
                    .map(|(&x, &y)| f(q, x as u128, y as u128) as u64)
                    .collect()
            })
            .collect();
        Ok(RefPoly {
            limbs: a.limbs.clone(),
            repr: a.repr,
            data,
        })
    }

    /// `f(q, x, c_k mod q)` on every coefficient of limb `k`.
    fn with_constants(
        &self,
        a: &RefPoly,
        c: &[u64],
        f: impl Fn(u128, u128, u128) -> u128,
    ) -> Result<RefPoly, MathError> {
        if c.len() != a.limbs.len() {
            return Err(MathError::LengthMismatch {
                what: "per-limb constants",
                expected: a.limbs.len(),
                found: c.len(),
            });
        }
        let data = a
            .limbs
            .iter()
            .zip(&a.data)
            .zip(c)
            .map(|((&i, x), &c)| {
                let q = self.q(i) as u128;
                let c = c as u128 % q;
                x.iter().map(|&x| f(q, x as u128, c) as u64).collect()
            })
            .collect();
        Ok(RefPoly {
            limbs: a.limbs.clone(),
            repr: a.repr,
            data,
        })
    }

    /// The powers `psi^e`, `e < 2N`, of limb `i`'s root.
    fn powers(&self, i: usize) -> Vec<u64> {
        let (q, psi) = (self.q(i), self.ring.plan(i).psi());
        let mut p = vec![1u64; 2 * self.n()];
        for e in 1..p.len() {
            p[e] = mul(p[e - 1], psi, q);
        }
        p
    }

    /// The exponent of `psi` at which forward-NTT slot `k` evaluates: `2 * brev(k) + 1`.
    fn slot_exponent(&self, k: usize) -> usize {
        2 * brev(k, self.n().trailing_zeros()) + 1
    }
}

/// `x` with its low `bits` bits reversed, bit by bit.
fn brev(x: usize, bits: u32) -> usize {
    (0..bits).fold(0, |r, b| r | (((x >> b) & 1) << (bits - 1 - b)))
}

fn mul(a: u64, b: u64, q: u64) -> u64 {
    (a as u128 * b as u128 % q as u128) as u64
}

fn pow(mut b: u64, mut e: u64, q: u64) -> u64 {
    let mut r = 1 % q;
    while e > 0 {
        if e & 1 == 1 {
            r = mul(r, b, q);
        }
        b = mul(b, b, q);
        e >>= 1;
    }
    r
}

/// `a^-1 mod q` for prime `q` (Fermat).
fn inv(a: u64, q: u64) -> u64 {
    pow(a % q, q - 2, q)
}

/// `sum_j a[j] * w[(j * e) mod 2N]` modulo `q`: one output of the O(N^2) transforms. The
/// products (below 2^124) are summed eight at a time in 128 bits, then reduced.
fn evaluate(a: &[u64], w: &[u64], e: usize, q: u64) -> u64 {
    let mask = w.len() - 1;
    let mut acc = 0u128;
    for (chunk, start) in a.chunks(8).zip((0..).step_by(8)) {
        for (j, &x) in chunk.iter().enumerate() {
            acc += x as u128 * w[((start + j) * e) & mask] as u128;
        }
        acc %= q as u128;
    }
    acc as u64
}

impl Backend for ReferenceBackend {
    type Poly = RefPoly;

    fn ring(&self) -> &Arc<RingContext> {
        &self.ring
    }
    fn limbs(&self, p: &RefPoly) -> Vec<usize> {
        p.limbs.clone()
    }
    fn repr(&self, p: &RefPoly) -> Representation {
        p.repr
    }
    fn load(&mut self, host: &RnsPoly, _kind: Kind) -> Result<RefPoly, MathError> {
        if !Arc::ptr_eq(host.context(), &self.ring) {
            return Err(MathError::RingMismatch { op: "load" });
        }
        Ok(RefPoly {
            limbs: host.limb_indices().to_vec(),
            repr: host.repr(),
            data: (0..host.num_limbs())
                .map(|k| host.limb(k).to_vec())
                .collect(),
        })
    }
    fn store(&mut self, p: &RefPoly) -> Result<RnsPoly, MathError> {
        RnsPoly::from_data(&self.ring, &p.limbs, p.data.concat(), p.repr)
    }
    /// Limb `q` is the first N values below `q` of the seed's stream for `q`.
    fn expand_seed(
        &mut self,
        seed: &Seed,
        limbs: &[usize],
        _kind: Kind,
    ) -> Result<RefPoly, MathError> {
        self.check_limbs(limbs)?;
        let data = limbs
            .iter()
            .map(|&i| {
                let q = self.q(i);
                let mut xof = limb_stream(seed, q);
                (0..self.n()).map(|_| xof.below(q)).collect()
            })
            .collect();
        Ok(RefPoly {
            limbs: limbs.to_vec(),
            repr: Representation::Evaluation,
            data,
        })
    }
    /// Slot `k` is `a(psi^(2 brev(k) + 1))`.
    fn ntt(&mut self, p: &mut RefPoly) -> Result<(), MathError> {
        p.repr.require("NTT", Some(Representation::Coefficient))?;
        for (&i, limb) in p.limbs.iter().zip(p.data.iter_mut()) {
            let (q, w) = (self.q(i), self.powers(i));
            *limb = (0..self.n())
                .map(|k| evaluate(limb, &w, self.slot_exponent(k), q))
                .collect();
        }
        p.repr = Representation::Evaluation;
        Ok(())
    }
    /// `a_j = N^-1 sum_k A_k psi^(-j (2 brev(k) + 1))`.
    fn intt(&mut self, p: &mut RefPoly) -> Result<(), MathError> {
        p.repr.require("INTT", Some(Representation::Evaluation))?;
        let n = self.n();
        for (&i, limb) in p.limbs.iter().zip(p.data.iter_mut()) {
            let (q, w) = (self.q(i), self.powers(i));
            let n_inv = inv(n as u64, q);
            // Reorder the slots by exponent so that each output is one evaluation at psi^-j:
            // by_exp[(e - 1) / 2] = A_k with e = 2 brev(k) + 1, and sum_m by_exp[m] *
            // psi^(-j (2m + 1)) = psi^-j * sum_m by_exp[m] * (psi^-2j)^m.
            let mut by_exp = vec![0u64; n];
            for (k, &x) in limb.iter().enumerate() {
                by_exp[(self.slot_exponent(k) - 1) / 2] = x;
            }
            *limb = (0..n)
                .map(|j| {
                    let e = (2 * n - (2 * j) % (2 * n)) % (2 * n);
                    let s = evaluate(&by_exp, &w, e, q);
                    let twist = w[(2 * n - j) % (2 * n)];
                    mul(mul(s, twist, q), n_inv, q)
                })
                .collect();
        }
        p.repr = Representation::Coefficient;
        Ok(())
    }
    fn add(&mut self, a: &RefPoly, b: &RefPoly) -> Result<RefPoly, MathError> {
        self.zip("add", a, b, None, |q, x, y| (x + y) % q)
    }
    fn sub(&mut self, a: &RefPoly, b: &RefPoly) -> Result<RefPoly, MathError> {
        self.zip("sub", a, b, None, |q, x, y| (x + q - y) % q)
    }
    fn neg(&mut self, a: &RefPoly) -> Result<RefPoly, MathError> {
        self.zip("neg", a, a, None, |q, x, _| (q - x) % q)
    }
    fn mul(&mut self, a: &RefPoly, b: &RefPoly) -> Result<RefPoly, MathError> {
        self.zip(
            "multiply",
            a,
            b,
            Some(Representation::Evaluation),
            |q, x, y| x * y % q,
        )
    }
    fn mul_acc(&mut self, acc: &mut RefPoly, a: &RefPoly, b: &RefPoly) -> Result<(), MathError> {
        let ev = Some(Representation::Evaluation);
        self.check_pair("multiply-accumulate", a, b, ev)?;
        let prod = self.zip("multiply-accumulate", a, b, ev, |q, x, y| x * y % q)?;
        *acc = self.zip("multiply-accumulate", acc, &prod, ev, |q, x, y| (x + y) % q)?;
        Ok(())
    }
    fn add_scalar(&mut self, a: &RefPoly, c: &[u64]) -> Result<RefPoly, MathError> {
        a.repr
            .require("add scalar", Some(Representation::Evaluation))?;
        self.with_constants(a, c, |q, x, c| (x + c) % q)
    }
    fn dot(&mut self, a: &[&RefPoly], b: &[&RefPoly]) -> Result<RefPoly, MathError> {
        if a.is_empty() || a.len() != b.len() {
            return Err(MathError::LengthMismatch {
                what: "dot product operands",
                expected: a.len().max(1),
                found: b.len(),
            });
        }
        let ev = Some(Representation::Evaluation);
        let mut sum = self.zip("dot product", a[0], b[0], ev, |q, x, y| x * y % q)?;
        for (x, y) in a.iter().zip(b).skip(1) {
            self.check_pair("dot product", a[0], x, ev)?;
            let p = self.zip("dot product", x, y, ev, |q, x, y| x * y % q)?;
            sum = self.zip("dot product", &sum, &p, ev, |q, x, y| (x + y) % q)?;
        }
        Ok(sum)
    }
    fn mul_scalar(&mut self, a: &RefPoly, c: &[u64]) -> Result<RefPoly, MathError> {
        self.with_constants(a, c, |q, x, c| x * c % q)
    }
    /// Coefficient form: `a_i X^i -> a_i X^(i g mod 2N)`, negated past `X^N = -1`. Evaluation
    /// form: slot `k` (at `psi^e`) takes the slot at `psi^(e g mod 2N)`.
    fn automorphism(&mut self, a: &RefPoly, g: u64) -> Result<RefPoly, MathError> {
        let n = self.n();
        if g.is_multiple_of(2) || g >= 2 * n as u64 {
            return Err(MathError::OutOfRange {
                name: "Galois element",
                value: g.to_string(),
                allowed: format!("an odd integer in [1, {})", 2 * n),
            });
        }
        let g = g as usize;
        let bits = n.trailing_zeros();
        let data = a
            .limbs
            .iter()
            .zip(&a.data)
            .map(|(&i, x)| {
                let q = self.q(i);
                let mut out = vec![0u64; n];
                match a.repr {
                    Representation::Coefficient => {
                        for (j, &c) in x.iter().enumerate() {
                            let t = j * g % (2 * n);
                            if t < n {
                                out[t] = c;
                            } else {
                                out[t - n] = (q - c) % q;
                            }
                        }
                    }
                    Representation::Evaluation => {
                        for (k, o) in out.iter_mut().enumerate() {
                            let e = self.slot_exponent(k) * g % (2 * n);
                            *o = x[brev((e - 1) / 2, bits)];
                        }
                    }
                }
                out
            })
            .collect();
        Ok(RefPoly {
            limbs: a.limbs.clone(),
            repr: a.repr,
            data,
        })
    }
    /// Approximate: `sum_i [x_i qhat_i^-1]_(q_i) qhat_i mod p` (`qhat_i = Q / q_i`), the value
    /// `x + u Q` with `0 <= u < l`. Exact centered: the centered representative of `x` (in
    /// `(-Q/2, Q/2)`) mod `p`, from the mixed-radix digits of `x` (Garner's algorithm), exact
    /// integer arithmetic throughout.
    fn bconv(
        &mut self,
        a: &RefPoly,
        to: &[usize],
        mode: ConversionMode,
    ) -> Result<RefPoly, MathError> {
        a.repr.require("BConv", Some(Representation::Coefficient))?;
        self.check_limbs(&a.limbs)?;
        self.check_limbs(to)?;
        let qs = self.moduli_of(&a.limbs);
        let l = qs.len();
        // prod_{k in ks} q_k mod m.
        let prod_mod = |ks: &mut dyn Iterator<Item = usize>, m: u64| {
            ks.fold(1 % m, |acc, k| mul(acc, qs[k] % m, m))
        };
        let qhat_inv: Vec<u64> = (0..l)
            .map(|i| inv(prod_mod(&mut (0..l).filter(|&k| k != i), qs[i]), qs[i]))
            .collect();
        // Mixed-radix digits of (Q - 1) / 2, whose residues are (q_i - 1) / 2: x is negative
        // as a centered value when its digits exceed these (compared from the top).
        let half: Vec<u64> = qs.iter().map(|&q| (q - 1) / 2).collect();
        let garner = |res: &[u64]| -> Vec<u64> {
            let mut d = vec![0u64; l];
            for i in 0..l {
                // d_i = (x - sum_{k<i} d_k prod_{m<k} q_m) / prod_{k<i} q_k  mod q_i.
                let mut t = res[i];
                let mut radix = 1 % qs[i];
                for k in 0..i {
                    t = (t + qs[i] - mul(d[k], radix, qs[i])) % qs[i];
                    radix = mul(radix, qs[k] % qs[i], qs[i]);
                }
                d[i] = mul(t, inv(radix, qs[i]), qs[i]);
            }
            d
        };
        let half_digits = garner(&half);
        let n = self.n();
        let data = to
            .iter()
            .map(|&j| {
                let p = self.q(j);
                let q_mod_p = prod_mod(&mut (0..l), p);
                (0..n)
                    .map(|c| {
                        let res: Vec<u64> = a.data.iter().map(|x| x[c]).collect();
                        match mode {
                            ConversionMode::Approximate => (0..l).fold(0, |acc, i| {
                                let y = mul(res[i], qhat_inv[i], qs[i]);
                                let qhat = prod_mod(&mut (0..l).filter(|&k| k != i), p);
                                (acc + mul(y % p, qhat, p)) % p
                            }),
                            ConversionMode::ExactCentered => {
                                let d = garner(&res);
                                let (x, _) = d.iter().enumerate().fold(
                                    (0u64, 1 % p),
                                    |(x, radix), (k, &dk)| {
                                        ((x + mul(dk % p, radix, p)) % p, mul(radix, qs[k] % p, p))
                                    },
                                );
                                let negative = d.iter().rev().cmp(half_digits.iter().rev())
                                    == std::cmp::Ordering::Greater;
                                if negative {
                                    (x + p - q_mod_p) % p
                                } else {
                                    x
                                }
                            }
                        }
                    })
                    .collect()
            })
            .collect();
        Ok(RefPoly {
            limbs: to.to_vec(),
            repr: Representation::Coefficient,
            data,
        })
    }
    fn select_limbs(&mut self, a: &RefPoly, keep: &[usize]) -> Result<RefPoly, MathError> {
        self.concat(&[a], keep)
    }
    fn concat(&mut self, parts: &[&RefPoly], limbs: &[usize]) -> Result<RefPoly, MathError> {
        let first = parts.first().ok_or(MathError::OutOfRange {
            name: "parts",
            value: "0".into(),
            allowed: "at least one polynomial".into(),
        })?;
        for p in parts {
            p.repr.require("concat", Some(first.repr))?;
        }
        self.check_limbs(limbs)?;
        let data = limbs
            .iter()
            .map(|i| {
                parts
                    .iter()
                    .find_map(|p| {
                        p.limbs
                            .iter()
                            .position(|x| x == i)
                            .map(|k| p.data[k].clone())
                    })
                    .ok_or_else(|| MathError::LimbMismatch {
                        op: "concat",
                        left: parts
                            .iter()
                            .flat_map(|p| self.moduli_of(&p.limbs))
                            .collect(),
                        right: vec![self.q(*i)],
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(RefPoly {
            limbs: limbs.to_vec(),
            repr: first.repr,
            data,
        })
    }
    /// The limb's centered value (`x - q` when `x > q/2`) reduced into each modulus of `to`.
    fn extend_limb(&mut self, a: &RefPoly, to: &[usize]) -> Result<RefPoly, MathError> {
        a.repr
            .require("extend limb", Some(Representation::Coefficient))?;
        if a.limbs.len() != 1 {
            return Err(MathError::OutOfRange {
                name: "limbs",
                value: a.limbs.len().to_string(),
                allowed: "exactly one limb to extend".into(),
            });
        }
        self.check_limbs(to)?;
        let q = self.q(a.limbs[0]) as i128;
        let data = to
            .iter()
            .map(|&j| {
                let p = self.q(j) as i128;
                a.data[0]
                    .iter()
                    .map(|&x| {
                        let x = x as i128;
                        let centered = if x > q / 2 { x - q } else { x };
                        centered.rem_euclid(p) as u64
                    })
                    .collect()
            })
            .collect();
        Ok(RefPoly {
            limbs: to.to_vec(),
            repr: Representation::Coefficient,
            data,
        })
    }
    fn begin_op(&mut self, _name: &'static str, _level: usize) {}
    fn end_op(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_math::primes::generate_ntt_primes;

    fn ring(n: usize) -> Arc<RingContext> {
        RingContext::new(n, &generate_ntt_primes(30, n, 3, &[]).unwrap()).unwrap()
    }

    /// The NTT is evaluation: `X` maps to `psi^(2 brev(k) + 1)` in slot `k`, and the inverse
    /// undoes it.
    #[test]
    fn ntt_of_x_is_the_slot_roots() {
        let r = ring(16);
        let mut b = ReferenceBackend::new(r.clone()).unwrap();
        let mut x = vec![0i64; 16];
        x[1] = 1;
        let h = RnsPoly::from_signed(&r, &[0], &x).unwrap();
        let mut p = b.load(&h, Kind::Ciphertext).unwrap();
        b.ntt(&mut p).unwrap();
        let (q, psi) = (r.moduli()[0].value(), r.plan(0).psi());
        for k in 0..16 {
            assert_eq!(
                p.data[0][k],
                pow(psi, r.plan(0).slot_root_exponent(k) as u64, q)
            );
        }
        b.intt(&mut p).unwrap();
        assert_eq!(b.store(&p).unwrap(), h);
    }

    /// Exact BConv of small signed values gives the values themselves in the new basis.
    #[test]
    fn exact_bconv_of_small_values_is_the_values() {
        let r = ring(16);
        let mut b = ReferenceBackend::new(r.clone()).unwrap();
        let x: Vec<i64> = (0..16).map(|i| i * 1_000_003 - 7_000_000).collect();
        let h = RnsPoly::from_signed(&r, &[0, 1], &x).unwrap();
        let p = b.load(&h, Kind::Ciphertext).unwrap();
        let out = b.bconv(&p, &[2], ConversionMode::ExactCentered).unwrap();
        let want = RnsPoly::from_signed(&r, &[2], &x).unwrap();
        assert_eq!(b.store(&out).unwrap(), want);
        // The approximate conversion differs from it by a multiple of Q = q0 q1 (u in {0, 1}).
        let approx = b.bconv(&p, &[2], ConversionMode::Approximate).unwrap();
        let q2 = r.moduli()[2].value();
        let qq = mul(r.moduli()[0].value() % q2, r.moduli()[1].value() % q2, q2);
        for (a, e) in approx.data[0].iter().zip(&out.data[0]) {
            assert!(*a == *e || *a == (e + qq) % q2);
        }
    }
}
