//! The ckks crate's circuits from Python: polynomials (power and Chebyshev bases), linear
//! transforms (a plaintext matrix times the slot vector) and the composite sign / comparison,
//! each evaluated homomorphically on a `Ciphertext` and in the clear on numbers (the
//! reference the tests compare with). Plaintext-ciphertext products live here too.

use crate::ckks_io::Plaintext;
use crate::{err, Ciphertext, TesseraError};
use num_complex::Complex64;
use pyo3::prelude::*;
use tessera_ckks::circuits::linear::LinearTransform as Lt;
use tessera_ckks::circuits::polynomial::{evaluate, Polynomial as Poly};
use tessera_ckks::circuits::sign::CompositeSign;

/// `ct + pt`.
pub(crate) fn add_plain(c: &Ciphertext, p: &Plaintext) -> PyResult<Ciphertext> {
    same(c, p)?;
    let ct = c.inner.eval(|ev, _| {
        let a = ev.load(&c.ct)?;
        let r = ev.add_plain(&a, &p.pt)?;
        ev.store(&r)
    })?;
    Ok(c.wrap(ct))
}

/// `ct * pt`, rescaled once (as `ct * number`).
pub(crate) fn mul_plain(c: &Ciphertext, p: &Plaintext) -> PyResult<Ciphertext> {
    same(c, p)?;
    let ct = c.inner.eval(|ev, _| {
        let a = ev.load(&c.ct)?;
        let m = ev.mul_plain(&a, &p.pt)?;
        let r = ev.rescale(&m)?;
        ev.store(&r)
    })?;
    Ok(c.wrap(ct))
}

fn same(c: &Ciphertext, p: &Plaintext) -> PyResult<()> {
    if !std::sync::Arc::ptr_eq(&c.inner, &p.inner) {
        return Err(TesseraError::new_err(
            "the plaintext belongs to another context than the ciphertext",
        ));
    }
    Ok(())
}

/// A real polynomial, in the power basis (`Polynomial.power([c0, c1, ...])`) or in the
/// Chebyshev basis of an interval (`Polynomial.chebyshev(coeffs, a, b)`,
/// `Polynomial.interpolate(f, degree, a, b)`). `p(ct)` evaluates it homomorphically by
/// baby-step giant-step at minimal depth (`p.depth` levels; relinearisation key only);
/// `p.eval_plain(x)` in the clear.
#[pyclass(module = "tessera._native", frozen)]
pub(crate) struct Polynomial {
    p: Poly,
}

#[pymethods]
impl Polynomial {
    /// `sum_k coeffs[k] x^k`.
    #[staticmethod]
    fn power(coeffs: Vec<f64>) -> PyResult<Self> {
        Ok(Self {
            p: Poly::power(coeffs).map_err(err)?,
        })
    }

    /// `sum_k coeffs[k] T_k(u)`, `u` mapping `[a, b]` onto `[-1, 1]`.
    #[staticmethod]
    #[pyo3(signature = (coeffs, a=-1.0, b=1.0))]
    fn chebyshev(coeffs: Vec<f64>, a: f64, b: f64) -> PyResult<Self> {
        Ok(Self {
            p: Poly::chebyshev(coeffs, a, b).map_err(err)?,
        })
    }

    /// The Chebyshev interpolant of the Python function `f` (float to float) of `degree` on
    /// `[a, b]`.
    #[staticmethod]
    #[pyo3(signature = (f, degree, a=-1.0, b=1.0))]
    fn interpolate(f: &Bound<'_, PyAny>, degree: usize, a: f64, b: f64) -> PyResult<Self> {
        // Evaluate f first at the nodes the interpolation asks for, keeping the first error.
        let failure = std::cell::RefCell::new(None);
        let p = Poly::interpolate(
            |x| match f.call1((x,)).and_then(|v| v.extract::<f64>()) {
                Ok(v) => v,
                Err(e) => {
                    failure.borrow_mut().get_or_insert(e);
                    0.0
                }
            },
            degree,
            a,
            b,
        )
        .map_err(err)?;
        if let Some(e) = failure.into_inner() {
            return Err(e);
        }
        Ok(Self { p })
    }

    /// The coefficients (in the polynomial's basis).
    #[getter]
    fn coeffs(&self) -> Vec<f64> {
        self.p.coeffs().to_vec()
    }

    /// Degree.
    #[getter]
    fn degree(&self) -> usize {
        self.p.degree()
    }

    /// Levels a homomorphic evaluation consumes.
    #[getter]
    fn depth(&self) -> usize {
        self.p.depth()
    }

    /// The value at each of `xs` in the clear (f64).
    fn eval_plain(&self, xs: Vec<f64>) -> Vec<f64> {
        xs.into_iter().map(|x| self.p.eval_plain(x)).collect()
    }

    /// Evaluates homomorphically on every slot of `ct` (real parts; `depth` levels down, at
    /// the input's scale). Runs without the GIL.
    fn __call__(&self, py: Python<'_>, ct: &Ciphertext) -> PyResult<Ciphertext> {
        let r = py.detach(|| {
            ct.inner.eval(|ev, keys| {
                let x = ev.load(&ct.ct)?;
                let y = evaluate(ev, &x, &self.p, keys)?;
                ev.store(&y)
            })
        })?;
        Ok(ct.wrap(r))
    }

    fn __repr__(&self) -> String {
        format!(
            "Polynomial(degree={}, depth={}, basis={:?})",
            self.p.degree(),
            self.p.depth(),
            self.p.basis()
        )
    }
}

/// A square plaintext matrix applied to the slot vector by diagonals with baby-step
/// giant-step and hoisted rotations: `lt(ct)` or `matrix @ ct`, one level. The context needs
/// the rotation keys `lt.rotations` (`Context.keygen(rotations=lt.rotations)`).
#[pyclass(module = "tessera._native", frozen)]
pub(crate) struct LinearTransform {
    lt: Lt,
}

impl LinearTransform {
    /// From a square matrix (numpy array or nested lists of numbers).
    pub(crate) fn from_matrix(matrix: &Bound<'_, PyAny>) -> PyResult<Self> {
        let rows = match matrix.call_method0("tolist") {
            Ok(l) => l,
            Err(_) => matrix.clone(),
        };
        let rows: Vec<Vec<Complex64>> = rows.extract().map_err(|_| {
            TesseraError::new_err("matrix must be a 2-D array (or nested lists) of numbers")
        })?;
        if rows.is_empty() || rows.iter().any(|r| r.len() != rows.len()) {
            return Err(TesseraError::new_err(format!(
                "matrix must be square with a power-of-two size, got {} rows of lengths {:?}",
                rows.len(),
                rows.iter().map(Vec::len).take(4).collect::<Vec<_>>()
            )));
        }
        Ok(Self {
            lt: Lt::from_dense(&rows).map_err(err)?,
        })
    }

    /// `M x` on `ct` without the GIL.
    pub(crate) fn apply(&self, py: Python<'_>, ct: &Ciphertext) -> PyResult<Ciphertext> {
        let r = py.detach(|| {
            ct.inner.eval(|ev, keys| {
                let x = ev.load(&ct.ct)?;
                let y = self.lt.apply(ev, &x, keys)?;
                ev.store(&y)
            })
        })?;
        Ok(ct.wrap(r))
    }
}

#[pymethods]
impl LinearTransform {
    /// From a square matrix whose size is the ciphertexts' slot count (a power of two).
    #[new]
    fn new(matrix: &Bound<'_, PyAny>) -> PyResult<Self> {
        Self::from_matrix(matrix)
    }

    /// The slot rotations the transform needs keys for.
    #[getter]
    fn rotations(&self) -> Vec<i64> {
        self.lt.rotations()
    }

    /// Matrix size (the slot count it applies to).
    #[getter]
    fn slots(&self) -> usize {
        self.lt.matrix().s
    }

    /// `M x` in the clear.
    fn apply_clear(&self, x: Vec<Complex64>) -> PyResult<Vec<Complex64>> {
        if x.len() != self.slots() {
            return Err(TesseraError::new_err(format!(
                "x has {} entries, the matrix {}",
                x.len(),
                self.slots()
            )));
        }
        Ok(self.lt.apply_clear(&x))
    }

    /// `M x` homomorphically (one level). Runs without the GIL.
    fn __call__(&self, py: Python<'_>, ct: &Ciphertext) -> PyResult<Ciphertext> {
        self.apply(py, ct)
    }

    /// `lt @ ct`.
    fn __matmul__(&self, py: Python<'_>, ct: &Ciphertext) -> PyResult<Ciphertext> {
        self.apply(py, ct)
    }

    fn __repr__(&self) -> String {
        format!(
            "LinearTransform(slots={}, rotations={})",
            self.slots(),
            self.lt.rotations().len()
        )
    }
}

/// A composite polynomial approximation of the sign on `[-1, 1]` away from 0: Cheon-Kim-Kim's
/// `Sign.ckk(n, df, dg)` or Lee et al.'s minimax `Sign.minimax(degrees, eps)`.
/// `s.sign(ct)` and `s.compare(a, b)` (about 1 where a > b, 0 where a < b) run homomorphically
/// (`s.depth` levels); `sign_plain` / `compare_plain` in the clear.
#[pyclass(module = "tessera._native", frozen)]
pub(crate) struct Sign {
    s: CompositeSign,
}

#[pymethods]
impl Sign {
    /// CKK's `f_n^(df) o g_n^(dg)`.
    #[staticmethod]
    fn ckk(n: usize, df: usize, dg: usize) -> PyResult<Self> {
        Ok(Self {
            s: CompositeSign::ckk(n, df, dg).map_err(err)?,
        })
    }

    /// Lee et al.'s composite minimax sign with odd `degrees` on `[-1, -eps] U [eps, 1]`.
    #[staticmethod]
    fn minimax(degrees: Vec<usize>, eps: f64) -> PyResult<Self> {
        Ok(Self {
            s: CompositeSign::minimax(&degrees, eps).map_err(err)?,
        })
    }

    /// Levels the homomorphic sign consumes.
    #[getter]
    fn depth(&self) -> usize {
        self.s.depth()
    }

    /// `(eps, worst error)` of the minimax construction, None for CKK.
    #[getter]
    fn precision(&self) -> Option<(f64, f64)> {
        self.s.precision()
    }

    /// The composite in the clear at each of `xs`.
    fn sign_plain(&self, xs: Vec<f64>) -> Vec<f64> {
        xs.into_iter().map(|x| self.s.eval_plain(x)).collect()
    }

    /// `compare` in the clear, element by element.
    fn compare_plain(&self, a: Vec<f64>, b: Vec<f64>) -> PyResult<Vec<f64>> {
        if a.len() != b.len() {
            return Err(TesseraError::new_err(format!(
                "a and b differ in length ({} and {})",
                a.len(),
                b.len()
            )));
        }
        Ok(a.iter()
            .zip(&b)
            .map(|(&x, &y)| self.s.compare_plain(x, y))
            .collect())
    }

    /// `sgn(ct)` slot by slot (slots in `[-1, 1]`). Runs without the GIL.
    fn sign(&self, py: Python<'_>, ct: &Ciphertext) -> PyResult<Ciphertext> {
        let r = py.detach(|| {
            ct.inner.eval(|ev, keys| {
                let x = ev.load(&ct.ct)?;
                let y = self.s.sign(ev, &x, keys)?;
                ev.store(&y)
            })
        })?;
        Ok(ct.wrap(r))
    }

    /// `(sgn(a - b) + 1) / 2` slot by slot (`a - b` in `[-1, 1]`). Runs without the GIL.
    fn compare(&self, py: Python<'_>, a: &Ciphertext, b: &Ciphertext) -> PyResult<Ciphertext> {
        a.same_context(b)?;
        let r = py.detach(|| {
            a.inner.eval(|ev, keys| {
                let (x, y) = (ev.load(&a.ct)?, ev.load(&b.ct)?);
                let z = self.s.compare(ev, &x, &y, keys)?;
                ev.store(&z)
            })
        })?;
        Ok(a.wrap(r))
    }

    fn __repr__(&self) -> String {
        format!(
            "Sign(pieces={}, depth={})",
            self.s.pieces().len(),
            self.s.depth()
        )
    }
}

/// Adds the circuit classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Polynomial>()?;
    m.add_class::<LinearTransform>()?;
    m.add_class::<Sign>()?;
    Ok(())
}
