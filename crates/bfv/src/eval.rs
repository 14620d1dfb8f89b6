//! Homomorphic operations, each issuing the commands CoFHEE would run (recorded when
//! [`Bfv::start_recording`] is on) and computing them for real.
//!
//! Multiplication is exact: the four input polynomials are lifted from `q` to the basis
//! `q * P` (`P` the auxiliary primes, [`crate::BfvParams::aux_moduli`]) where the tensor of
//! Eq. 4 has no wrap-around; Algorithm 3 (4 NTT, 4 Hadamard products, 1 addition, 3 iNTT)
//! runs on every prime of that basis; the host then reconstructs each coefficient, scales it
//! by `t/q` with rounding and reduces it mod `q`. CoFHEE's Table I has no base-conversion or
//! division command, so the lift and the scaling are host transfers in the stream.

use crate::context::{signed_mod, Bfv, Ciphertext, Plaintext, Poly};
use crate::crt::{mod_big, round_scale};
use crate::error::{BfvError, Result};
use crate::keys::RelinKey;
use num_bigint::BigUint;
use num_traits::ToPrimitive;
use tessera_backend::trace::Op;
use tessera_backend::Kind;

impl Bfv {
    fn same_size(&self, a: &Ciphertext, b: &Ciphertext, what: &'static str) -> Result<()> {
        if a.size() != b.size() {
            return Err(BfvError::Mismatch {
                what,
                expected: format!("ciphertexts of equal size ({})", a.size()),
                found: b.size().to_string(),
            });
        }
        for p in a.polys.iter().chain(&b.polys) {
            if p.towers.len() != self.towers() || p.towers.iter().any(|t| t.len() != self.params.n)
            {
                return Err(BfvError::Mismatch {
                    what,
                    expected: format!("{} towers of n = {}", self.towers(), self.params.n),
                    found: format!("{} towers", p.towers.len()),
                });
            }
        }
        Ok(())
    }

    fn pointwise(&self, a: &Ciphertext, b: &Ciphertext, op: Op) -> Result<Ciphertext> {
        self.same_size(a, b, "ciphertext operands")?;
        let polys = a
            .polys
            .iter()
            .zip(&b.polys)
            .map(|(x, y)| {
                let towers: Vec<Vec<u128>> = (0..self.towers())
                    .map(|k| {
                        let m = self.basis[k].modulus();
                        x.towers[k]
                            .iter()
                            .zip(&y.towers[k])
                            .map(|(u, v)| {
                                if op == Op::Add {
                                    m.add(*u, *v)
                                } else {
                                    m.sub(*u, *v)
                                }
                            })
                            .collect()
                    })
                    .collect();
                let p = Poly::new(towers);
                for k in 0..self.towers() {
                    self.rec(op, p.id, &[x.id, y.id], k);
                }
                p
            })
            .collect();
        Ok(Ciphertext { polys })
    }

    /// `a + b` (equal sizes).
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.counts.borrow_mut().ct_add += 1;
        self.marker(Some("HAdd"));
        let r = self.pointwise(a, b, Op::Add);
        self.marker(None);
        r
    }

    /// `a - b` (equal sizes).
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.counts.borrow_mut().ct_add += 1;
        self.marker(Some("HSub"));
        let r = self.pointwise(a, b, Op::Sub);
        self.marker(None);
        r
    }

    /// `ct + pt`: `Delta pt` added to `c0` (the host sends the scaled plaintext).
    pub fn add_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.check_len("plaintext coefficients", pt.coeffs.len())?;
        self.counts.borrow_mut().pt_add += 1;
        self.marker(Some("PAdd"));
        let mut out = ct.clone();
        let c0 = &ct.polys[0];
        let mut towers = Vec::new();
        let pid = crate::tape::fresh_id();
        for k in 0..self.towers() {
            let m = self.basis[k].modulus();
            let q = m.value();
            towers.push(
                c0.towers[k]
                    .iter()
                    .zip(&pt.coeffs)
                    .map(|(c, &p)| m.add(*c, m.mul(self.delta[k], p as u128 % q)))
                    .collect(),
            );
        }
        out.polys[0] = Poly::new(towers);
        for k in 0..self.towers() {
            self.rec_kind(Op::Load, pid, &[], k, Kind::Plaintext);
            self.rec(Op::Add, out.polys[0].id, &[c0.id, pid], k);
        }
        self.marker(None);
        Ok(out)
    }

    /// `k * ct` for an integer `k` (taken mod `t`, centred): the constant plaintext `k` in
    /// every slot, one constant multiply (CMODMUL) per polynomial and tower.
    pub fn mul_scalar(&self, ct: &Ciphertext, k: i64) -> Result<Ciphertext> {
        let t = self.params.t as i128;
        let mut kc = (k as i128).rem_euclid(t);
        if kc > t / 2 {
            kc -= t;
        }
        self.counts.borrow_mut().ct_scalar_mul += 1;
        self.marker(Some("CMult"));
        let polys = ct
            .polys
            .iter()
            .map(|p| {
                let towers: Vec<Vec<u128>> = (0..self.towers())
                    .map(|i| {
                        let m = self.basis[i].modulus();
                        // k in Montgomery form: one Montgomery product per coefficient.
                        let f = m.to_mont(signed_mod(kc, m.value()));
                        p.towers[i].iter().map(|c| m.mont_mul(*c, f)).collect()
                    })
                    .collect();
                let out = Poly::new(towers);
                for i in 0..self.towers() {
                    self.rec(Op::MulScalar, out.id, &[p.id], i);
                }
                out
            })
            .collect();
        self.marker(None);
        Ok(Ciphertext { polys })
    }

    /// `ct * pt` for any plaintext: per tower the plaintext (centred mod `t`) and both
    /// ciphertext polynomials go to the NTT domain, two Hadamard products, two iNTTs.
    pub fn mul_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.check_len("plaintext coefficients", pt.coeffs.len())?;
        if ct.size() != 2 {
            return Err(BfvError::Mismatch {
                what: "ciphertext size for a plaintext multiply",
                expected: "2 (relinearise first)".into(),
                found: ct.size().to_string(),
            });
        }
        self.counts.borrow_mut().ct_pt_mul += 1;
        self.marker(Some("PMult"));
        let t = self.params.t;
        let pid = crate::tape::fresh_id();
        let mut out = vec![Vec::new(), Vec::new()];
        for k in 0..self.towers() {
            let q = self.params.moduli[k];
            let mut p: Vec<u128> = pt
                .coeffs
                .iter()
                .map(|&c| {
                    let s = if c > t / 2 {
                        c as i128 - t as i128
                    } else {
                        c as i128
                    };
                    signed_mod(s, q)
                })
                .collect();
            self.rec_kind(Op::Load, pid, &[], k, Kind::Plaintext);
            self.ntt(k, &mut p)?;
            self.rec_kind(Op::Ntt, pid, &[pid], k, Kind::Plaintext);
            for (j, c) in ct.polys.iter().enumerate() {
                let mut a = c.towers[k].clone();
                self.ntt(k, &mut a)?;
                self.rec(Op::Ntt, c.id, &[c.id], k);
                let mut y = self.hadamard(k, &a, &p);
                self.intt(k, &mut y)?;
                out[j].push(y);
            }
        }
        let polys: Vec<Poly> = out.into_iter().map(Poly::new).collect();
        for k in 0..self.towers() {
            for (o, c) in polys.iter().zip(&ct.polys) {
                self.rec(Op::Mul, o.id, &[c.id, pid], k);
                self.rec(Op::Intt, o.id, &[o.id], k);
            }
        }
        self.marker(None);
        Ok(Ciphertext { polys })
    }

    /// The residues of `p` (centred mod `q`) over the whole multiplication basis.
    fn lift(&self, p: &Poly) -> Vec<Vec<u128>> {
        let n = self.params.n;
        let l = self.towers();
        let mut out = p.towers.clone();
        let aux: Vec<u128> = self.basis[l..]
            .iter()
            .map(|b| b.modulus().value())
            .collect();
        let mut ext = vec![vec![0u128; n]; aux.len()];
        if l == 1 {
            let q = self.params.moduli[0];
            for j in 0..n {
                let v = p.towers[0][j];
                let s = if v > q / 2 {
                    -((q - v) as i128)
                } else {
                    v as i128
                };
                for (e, &a) in ext.iter_mut().zip(&aux) {
                    e[j] = signed_mod(s, a);
                }
            }
        } else {
            let mut r = vec![0u128; l];
            for j in 0..n {
                for (i, t) in p.towers.iter().enumerate() {
                    r[i] = t[j];
                }
                let x = self.q_crt.centered(&r);
                for (e, &a) in ext.iter_mut().zip(&aux) {
                    e[j] = mod_big(&x, a);
                }
            }
        }
        out.extend(ext);
        out
    }

    /// `round(t y / q) mod q` per coefficient for `y` given over the whole basis.
    fn scale(&self, y: &[Vec<u128>]) -> Poly {
        let n = self.params.n;
        let mut r = vec![0u128; y.len()];
        let mut towers = vec![vec![0u128; n]; self.towers()];
        for j in 0..n {
            for (i, t) in y.iter().enumerate() {
                r[i] = t[j];
            }
            let x = self.full_crt.centered(&r);
            let z = round_scale(&x, &self.t_big, &self.q);
            for (k, t) in towers.iter_mut().enumerate() {
                t[j] = mod_big(&z, self.params.moduli[k]);
            }
        }
        Poly::new(towers)
    }

    /// The tensor product of Eq. 4, `(c0, c1, c2) = round(t/q (a0 b0, a0 b1 + a1 b0, a1 b1))`,
    /// exact (see the module note); a size-3 ciphertext.
    pub fn mul(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.same_size(a, b, "ciphertext multiplication")?;
        if a.size() != 2 {
            return Err(BfvError::Mismatch {
                what: "ciphertext size for a multiplication",
                expected: "2 (relinearise first)".into(),
                found: a.size().to_string(),
            });
        }
        self.counts.borrow_mut().ct_ct_mul += 1;
        self.marker(Some("HMult"));
        let l = self.towers();
        let ins = [&a.polys[0], &a.polys[1], &b.polys[0], &b.polys[1]];
        let mut ext: Vec<Vec<Vec<u128>>> = ins.iter().map(|p| self.lift(p)).collect();
        // Host: the lifted residues of the four inputs over the auxiliary primes.
        for k in l..self.basis_len() {
            for p in &ins {
                self.rec(Op::Load, p.id, &[], k);
            }
        }
        let outs = [
            crate::tape::fresh_id(),
            crate::tape::fresh_id(),
            crate::tape::fresh_id(),
        ];
        let mut y: [Vec<Vec<u128>>; 3] = Default::default();
        for k in 0..self.basis_len() {
            // Algorithm 3 on basis prime k.
            for (e, p) in ext.iter_mut().zip(&ins) {
                self.ntt(k, &mut e[k])?;
                self.rec(Op::Ntt, p.id, &[p.id], k);
            }
            let (a0, a1, b0, b1) = (&ext[0][k], &ext[1][k], &ext[2][k], &ext[3][k]);
            let mut y0 = self.hadamard(k, a0, b0);
            let mut y1 = self.hadamard(k, a0, b1);
            let y10 = self.hadamard(k, a1, b0);
            self.add_into(k, &mut y1, &y10);
            let mut y2 = self.hadamard(k, a1, b1);
            let (t01, t10) = (crate::tape::fresh_id(), crate::tape::fresh_id());
            self.rec(Op::Mul, outs[0], &[ins[0].id, ins[2].id], k);
            self.rec(Op::Mul, t01, &[ins[0].id, ins[3].id], k);
            self.rec(Op::Mul, outs[2], &[ins[1].id, ins[3].id], k);
            self.rec(Op::Mul, t10, &[ins[1].id, ins[2].id], k);
            self.rec(Op::Add, outs[1], &[t01, t10], k);
            for (v, (yv, id)) in [&mut y0, &mut y1, &mut y2]
                .into_iter()
                .zip(y.iter_mut().zip(outs))
            {
                self.intt(k, v)?;
                self.rec(Op::Intt, id, &[id], k);
                yv.push(std::mem::take(v));
            }
        }
        // Host: the tensor over the whole basis out, the scaled result over q back.
        let polys: Vec<Poly> = y.iter().map(|v| self.scale(v)).collect();
        for (id, p) in outs.iter().zip(&polys) {
            for k in 0..self.basis_len() {
                self.rec(Op::Store, *id, &[*id], k);
            }
            for k in 0..l {
                self.rec(Op::Load, p.id, &[], k);
            }
        }
        self.marker(None);
        Ok(Ciphertext { polys })
    }

    /// Relinearisation `(c0, c1, c2) -> (c0 + sum d_i k0_i, c1 + sum d_i k1_i)` with `d_i`
    /// the base-`2^w` digits of `c2` (computed on the host), the key products in the NTT
    /// domain of each tower.
    pub fn relinearize(&self, ct: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        if ct.size() != 3 {
            return Err(BfvError::Mismatch {
                what: "ciphertext size for relinearisation",
                expected: "3".into(),
                found: ct.size().to_string(),
            });
        }
        let digits = self.params.relin_digits();
        if rk.k0.len() != digits {
            return Err(BfvError::Mismatch {
                what: "relinearisation key digits",
                expected: digits.to_string(),
                found: rk.k0.len().to_string(),
            });
        }
        self.counts.borrow_mut().relin += 1;
        self.marker(Some("Relin"));
        let (n, l) = (self.params.n, self.towers());
        let w = self.params.relin_digit_bits;
        let mask = (1u128 << w) - 1;
        let c2 = &ct.polys[2];
        // Host: c2 as integers in [0, q), cut into digits.
        let mut d = vec![vec![0u128; n]; digits];
        let mut r = vec![0u128; l];
        for j in 0..n {
            for (i, t) in c2.towers.iter().enumerate() {
                r[i] = t[j];
            }
            if l == 1 {
                let x = r[0];
                for (i, di) in d.iter_mut().enumerate() {
                    di[j] = (x >> (w as usize * i)) & mask;
                }
            } else {
                let x = self.q_crt.reconstruct(&r);
                for (i, di) in d.iter_mut().enumerate() {
                    let v: BigUint = (&x >> (w as usize * i)) & BigUint::from(mask);
                    di[j] = v.to_u128().expect("one digit");
                }
            }
        }
        for k in 0..l {
            self.rec(Op::Store, c2.id, &[c2.id], k);
        }
        let dids: Vec<u64> = (0..digits).map(|_| crate::tape::fresh_id()).collect();
        let (acc0, acc1) = (crate::tape::fresh_id(), crate::tape::fresh_id());
        let mut towers0 = Vec::new();
        let mut towers1 = Vec::new();
        for k in 0..l {
            let (mut s0, mut s1) = (vec![0u128; n], vec![0u128; n]);
            for (i, di) in d.iter().enumerate() {
                let mut x = di.clone();
                self.rec(Op::Load, dids[i], &[], k);
                self.ntt(k, &mut x)?;
                self.rec(Op::Ntt, dids[i], &[dids[i]], k);
                let p0 = self.hadamard(k, &x, &rk.k0[i][k]);
                let p1 = self.hadamard(k, &x, &rk.k1[i][k]);
                self.add_into(k, &mut s0, &p0);
                self.add_into(k, &mut s1, &p1);
                let (m0, m1) = (crate::tape::fresh_id(), crate::tape::fresh_id());
                self.rec(Op::Mul, m0, &[dids[i]], k);
                self.rec(Op::Mul, m1, &[dids[i]], k);
                if i > 0 {
                    self.rec(Op::Add, acc0, &[acc0, m0], k);
                    self.rec(Op::Add, acc1, &[acc1, m1], k);
                }
            }
            self.intt(k, &mut s0)?;
            self.intt(k, &mut s1)?;
            self.rec(Op::Intt, acc0, &[acc0], k);
            self.rec(Op::Intt, acc1, &[acc1], k);
            self.add_into(k, &mut s0, &ct.polys[0].towers[k]);
            self.add_into(k, &mut s1, &ct.polys[1].towers[k]);
            towers0.push(s0);
            towers1.push(s1);
        }
        let polys = vec![Poly::new(towers0), Poly::new(towers1)];
        for k in 0..l {
            self.rec(Op::Add, polys[0].id, &[ct.polys[0].id, acc0], k);
            self.rec(Op::Add, polys[1].id, &[ct.polys[1].id, acc1], k);
        }
        self.marker(None);
        Ok(Ciphertext { polys })
    }

    /// `relinearize(mul(a, b))`.
    pub fn mul_relin(&self, a: &Ciphertext, b: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        let c = self.mul(a, b)?;
        self.relinearize(&c, rk)
    }
}
