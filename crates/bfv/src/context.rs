//! The BFV context: NTT tables of every tower and auxiliary prime, CRT bases, `Delta = floor(q/t)`,
//! and the polynomial and ciphertext types. Ciphertexts stay in the coefficient domain between
//! operations, as CoFHEE's Algorithm 3 takes them.

use crate::crt::Crt;
use crate::error::{BfvError, Result};
use crate::params::{BfvParams, SIGMA};
use crate::record::OpMix;
use crate::tape::{fresh_id, Tape};
use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;
use std::cell::RefCell;
use tessera_backend::trace::{Instr, Op};
use tessera_backend::Kind;
use tessera_math::sampling::{GaussianSampler, Xof};
use tessera_math::wide::WideNtt;

/// A polynomial of degree below `n` over the towers of `q` (coefficient domain). Equality
/// compares the values, not the buffer id the recording gives it.
#[derive(Clone, Debug, Eq)]
pub struct Poly {
    pub(crate) towers: Vec<Vec<u128>>,
    pub(crate) id: u64,
}

impl PartialEq for Poly {
    fn eq(&self, other: &Self) -> bool {
        self.towers == other.towers
    }
}

impl Poly {
    pub(crate) fn new(towers: Vec<Vec<u128>>) -> Self {
        Self {
            towers,
            id: fresh_id(),
        }
    }

    /// The residues modulo each tower.
    pub fn towers(&self) -> &[Vec<u128>] {
        &self.towers
    }
}

/// A BFV ciphertext `(c0, c1[, c2])`: decrypts as `c0 + c1 s + c2 s^2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ciphertext {
    pub(crate) polys: Vec<Poly>,
}

impl Ciphertext {
    /// Number of polynomials (2 after relinearisation, 3 after a tensor product).
    pub fn size(&self) -> usize {
        self.polys.len()
    }

    /// The polynomials.
    pub fn polys(&self) -> &[Poly] {
        &self.polys
    }
}

/// A plaintext: a polynomial with coefficients in `[0, t)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plaintext {
    pub(crate) coeffs: Vec<u64>,
}

impl Plaintext {
    /// The coefficients.
    pub fn coeffs(&self) -> &[u64] {
        &self.coeffs
    }

    /// A plaintext from coefficients in `[0, t)` (degree below `n`).
    pub fn from_coeffs(bfv: &Bfv, coeffs: &[u64]) -> Result<Self> {
        let (n, t) = (bfv.params.n, bfv.params.t);
        if coeffs.len() > n {
            return Err(BfvError::Mismatch {
                what: "plaintext coefficients",
                expected: format!("at most n = {n}"),
                found: coeffs.len().to_string(),
            });
        }
        if let Some(c) = coeffs.iter().find(|&&c| c >= t) {
            return Err(crate::error::invalid(
                "plaintext coefficient",
                c,
                format!("[0, t = {t})"),
            ));
        }
        let mut v = coeffs.to_vec();
        v.resize(n, 0);
        Ok(Self { coeffs: v })
    }
}

/// Everything BFV needs that does not depend on keys, and the optional recording tape.
pub struct Bfv {
    pub(crate) params: BfvParams,
    /// NTT tables: the towers of `q`, then the auxiliary primes.
    pub(crate) basis: Vec<WideNtt>,
    pub(crate) q_crt: Crt,
    pub(crate) full_crt: Crt,
    pub(crate) q: BigUint,
    pub(crate) t_big: BigUint,
    /// `floor(q / t) mod q_i`.
    pub(crate) delta: Vec<u128>,
    pub(crate) gauss: GaussianSampler,
    pub(crate) tape: RefCell<Option<Tape>>,
    pub(crate) counts: RefCell<OpMix>,
}

impl std::fmt::Debug for Bfv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bfv")
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl Bfv {
    /// The context of `params`.
    ///
    /// ```
    /// use tessera_bfv::{Bfv, BfvParams};
    /// let bfv = Bfv::new(&BfvParams::preset("test-bfv").unwrap()).unwrap();
    /// assert_eq!(bfv.params().n, 64);
    /// ```
    pub fn new(params: &BfvParams) -> Result<Self> {
        let aux = params.aux_moduli()?;
        let basis = params
            .moduli
            .iter()
            .chain(&aux)
            .map(|&q| WideNtt::new(q, params.n))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let full: Vec<u128> = params.moduli.iter().chain(&aux).copied().collect();
        let q = params.q();
        let t_big = BigUint::from(params.t);
        let delta_big = &q / &t_big;
        let delta = params
            .moduli
            .iter()
            .map(|&m| (&delta_big % BigUint::from(m)).to_u128().expect("reduced"))
            .collect();
        Ok(Self {
            params: params.clone(),
            basis,
            q_crt: Crt::new(&params.moduli),
            full_crt: Crt::new(&full),
            q,
            t_big,
            delta,
            gauss: GaussianSampler::new(SIGMA)?,
            tape: RefCell::new(None),
            counts: RefCell::new(OpMix::default()),
        })
    }

    /// The parameters.
    pub fn params(&self) -> &BfvParams {
        &self.params
    }

    /// Number of towers of `q`.
    pub fn towers(&self) -> usize {
        self.params.moduli.len()
    }

    /// Number of primes of the multiplication basis (towers and auxiliary primes).
    pub fn basis_len(&self) -> usize {
        self.basis.len()
    }

    /// Starts recording the commands of every following evaluator operation (discarding any
    /// recording in progress).
    pub fn start_recording(&self) {
        *self.tape.borrow_mut() = Some(Tape::new(self.params.n));
    }

    /// Stops recording and returns the stream (empty if nothing was being recorded).
    pub fn take_recording(&self) -> Vec<Instr> {
        self.tape
            .borrow_mut()
            .take()
            .map(Tape::into_instrs)
            .unwrap_or_default()
    }

    /// The evaluator operations run so far, by class.
    pub fn counts(&self) -> OpMix {
        *self.counts.borrow()
    }

    pub(crate) fn rec(&self, op: Op, dst: u64, srcs: &[u64], tower: usize) {
        if let Some(t) = self.tape.borrow_mut().as_mut() {
            t.push(op, dst, srcs, tower, Kind::Ciphertext);
        }
    }

    pub(crate) fn rec_kind(&self, op: Op, dst: u64, srcs: &[u64], tower: usize, kind: Kind) {
        if let Some(t) = self.tape.borrow_mut().as_mut() {
            t.push(op, dst, srcs, tower, kind);
        }
    }

    pub(crate) fn marker(&self, name: Option<&str>) {
        if let Some(t) = self.tape.borrow_mut().as_mut() {
            t.marker(name);
        }
    }

    /// A polynomial from signed coefficients (degree below `n`), reduced into every tower.
    pub fn poly_from_signed(&self, coeffs: &[i64]) -> Result<Poly> {
        self.check_len("polynomial coefficients", coeffs.len())?;
        Ok(Poly::new(
            self.params
                .moduli
                .iter()
                .map(|&q| coeffs.iter().map(|&c| signed_mod(c as i128, q)).collect())
                .collect(),
        ))
    }

    /// A polynomial from exact integer coefficients, reduced into every tower.
    pub fn poly_from_bigints(&self, coeffs: &[BigInt]) -> Result<Poly> {
        self.check_len("polynomial coefficients", coeffs.len())?;
        Ok(Poly::new(
            self.params
                .moduli
                .iter()
                .map(|&q| coeffs.iter().map(|c| crate::crt::mod_big(c, q)).collect())
                .collect(),
        ))
    }

    /// The coefficients of `p` as integers in `(-q/2, q/2]`.
    pub fn centered(&self, p: &Poly) -> Vec<BigInt> {
        let mut r = vec![0u128; self.towers()];
        (0..self.params.n)
            .map(|j| {
                for (i, t) in p.towers.iter().enumerate() {
                    r[i] = t[j];
                }
                self.q_crt.centered(&r)
            })
            .collect()
    }

    pub(crate) fn check_len(&self, what: &'static str, len: usize) -> Result<()> {
        if len != self.params.n {
            return Err(BfvError::Mismatch {
                what,
                expected: format!("n = {}", self.params.n),
                found: len.to_string(),
            });
        }
        Ok(())
    }

    /// Uniform residues below basis prime `k`, read from `xof` by rejection.
    pub(crate) fn uniform(&self, xof: &mut Xof, k: usize) -> Vec<u128> {
        let q = self.basis[k].modulus().value();
        let bits = 128 - (q - 1).leading_zeros();
        (0..self.params.n)
            .map(|_| loop {
                let v = ((xof.next_u64() as u128) << 64 | xof.next_u64() as u128) >> (128 - bits);
                if v < q {
                    break v;
                }
            })
            .collect()
    }

    /// Forward NTT of `a` modulo basis prime `k`.
    pub(crate) fn ntt(&self, k: usize, a: &mut [u128]) -> Result<()> {
        Ok(self.basis[k].forward(a)?)
    }

    /// Inverse NTT of `a` modulo basis prime `k`.
    pub(crate) fn intt(&self, k: usize, a: &mut [u128]) -> Result<()> {
        Ok(self.basis[k].inverse(a)?)
    }

    /// Pointwise product modulo basis prime `k`.
    pub(crate) fn hadamard(&self, k: usize, a: &[u128], b: &[u128]) -> Vec<u128> {
        let m = self.basis[k].modulus();
        a.iter().zip(b).map(|(x, y)| m.mul(*x, *y)).collect()
    }

    /// Pointwise sum modulo basis prime `k`, into `a`.
    pub(crate) fn add_into(&self, k: usize, a: &mut [u128], b: &[u128]) {
        let m = self.basis[k].modulus();
        a.iter_mut().zip(b).for_each(|(x, y)| *x = m.add(*x, *y));
    }
}

/// `c mod q` in `[0, q)` for a signed `c`.
pub(crate) fn signed_mod(c: i128, q: u128) -> u128 {
    if c >= 0 {
        c as u128 % q
    } else {
        let r = c.unsigned_abs() % q;
        if r == 0 {
            0
        } else {
            q - r
        }
    }
}
