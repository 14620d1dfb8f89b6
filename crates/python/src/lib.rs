//! The `tessera._native` Python module: a thin PyO3 layer over `tessera-ckks`. Logic stays in
//! the Rust crates; this file converts arguments and maps errors to `tessera.TesseraError`.

use num_complex::Complex64;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Arc, Mutex};
use tessera_backend::{BackendChoice, Compute};
use tessera_ckks::bootstrap::{BootstrapKeys, Bootstrapper};
use tessera_ckks::params::ParametersLiteral;
use tessera_ckks::serialize::{ciphertext_from_bytes, ciphertext_to_bytes};
use tessera_ckks::{
    decrypt, Ciphertext as Ct, CkksContext, CkksError, EvaluationKeys, Evaluator, KeyGenerator,
    Parameters, PublicKey, Rescaling, SecretDistribution, SecretKey,
};
use tessera_math::sampling::Seed;
use tessera_math::RnsPoly;

mod circuits;
mod ckks_io;
mod cli;
mod programs;
mod sim;

pyo3::create_exception!(
    _native,
    TesseraError,
    PyValueError,
    "An error raised by Tessera."
);

fn err(e: CkksError) -> PyErr {
    TesseraError::new_err(e.to_string())
}

struct Keys {
    /// None for a key set loaded without its secret key (it encrypts and evaluates only).
    sk: Option<SecretKey>,
    pk: PublicKey,
    /// The evaluation keys (`keys.eval`), with the sparse-secret encapsulation keys when a
    /// bootstrapping circuit was set up.
    keys: BootstrapKeys,
    boot: Option<Bootstrapper>,
    /// The bootstrapping circuit's slots and META-BTS scale, to rebuild it from saved keys.
    boot_setup: Option<(Option<usize>, Option<u32>)>,
}

struct Inner {
    ctx: Arc<CkksContext>,
    keys: Mutex<Option<Keys>>,
    evaluator: Mutex<Evaluator<Compute>>,
    keygen: Mutex<KeyGenerator>,
}

impl Inner {
    fn with_keys<T>(&self, f: impl FnOnce(&Keys) -> Result<T, CkksError>) -> PyResult<T> {
        let guard = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        let keys = guard
            .as_ref()
            .ok_or_else(|| TesseraError::new_err("no keys: call Context.keygen() first"))?;
        f(keys).map_err(err)
    }

    fn eval<T>(
        &self,
        f: impl FnOnce(&mut Evaluator<Compute>, &EvaluationKeys) -> Result<T, CkksError>,
    ) -> PyResult<T> {
        self.with_keys(|k| {
            let mut ev = self.evaluator.lock().unwrap_or_else(|e| e.into_inner());
            f(&mut ev, &k.keys.eval)
        })
    }
}

/// A CKKS context: parameters, keys and an evaluator on the CPU backend.
#[pyclass(module = "tessera._native", frozen)]
struct Context {
    inner: Arc<Inner>,
}

/// A ciphertext bound to the context that made it.
#[pyclass(module = "tessera._native", frozen)]
struct Ciphertext {
    inner: Arc<Inner>,
    ct: Ct<RnsPoly>,
}

impl Ciphertext {
    fn wrap(&self, ct: Ct<RnsPoly>) -> Ciphertext {
        Ciphertext {
            inner: self.inner.clone(),
            ct,
        }
    }

    /// [`Ciphertext::bootstrap`] without the GIL.
    fn bootstrap_detached(&self) -> PyResult<Ct<RnsPoly>> {
        self.inner.with_keys(|k| {
            let boot = k.boot.as_ref().ok_or_else(|| {
                CkksError::MissingKey(
                    "bootstrapping keys: call Context.keygen(bootstrapping=True)".into(),
                )
            })?;
            let mut ev = self
                .inner
                .evaluator
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let a = ev.load(&self.ct)?;
            let r = boot.bootstrap(&mut ev, &a, &k.keys)?;
            ev.store(&r)
        })
    }

    fn same_context(&self, other: &Ciphertext) -> PyResult<()> {
        if !Arc::ptr_eq(&self.inner, &other.inner) {
            return Err(TesseraError::new_err(
                "the ciphertexts belong to different contexts",
            ));
        }
        Ok(())
    }
}

#[pymethods]
impl Context {
    /// A context for a parameter preset (`ark`, `reed`, `lattigo`, `test-small`, ...) or a
    /// parameter file (docs/parameters.md), computing on `backend` (`"cpu"` or `"cuda"`; by
    /// default the process's choice: `TESSERA_BACKEND`, else the CPU).
    #[new]
    #[pyo3(signature = (params, backend=None))]
    fn new(params: &str, backend: Option<&str>) -> PyResult<Self> {
        Self::from_parameters(Parameters::resolve(params).map_err(err)?, backend)
    }

    /// A context for custom parameters: ring degree 2^log_n, chain and special prime sizes in
    /// bits, dnum, log2 of the default scale; optional fixed Hamming weight, error sigma,
    /// double-prime rescaling, and extra special primes for per-level dynamic decomposition.
    /// Sets that fail the 128-bit check must be named `test-*` and pass `insecure=True`.
    #[staticmethod]
    #[pyo3(signature = (name, log_n, log_q, log_p, dnum, log_scale, hamming_weight=None, sigma=3.2, double_prime=false, dynamic_special=0, insecure=false, backend=None))]
    #[allow(clippy::too_many_arguments)]
    fn custom(
        name: &str,
        log_n: u32,
        log_q: Vec<u32>,
        log_p: Vec<u32>,
        dnum: usize,
        log_scale: u32,
        hamming_weight: Option<usize>,
        sigma: f64,
        double_prime: bool,
        dynamic_special: usize,
        insecure: bool,
        backend: Option<&str>,
    ) -> PyResult<Self> {
        let lit = ParametersLiteral {
            name: name.to_string(),
            log_n,
            log_q,
            log_p,
            dnum,
            log_default_scale: log_scale,
            secret: match hamming_weight {
                Some(h) => SecretDistribution::Sparse { hamming_weight: h },
                None => SecretDistribution::Ternary,
            },
            sigma,
            rescaling: if double_prime {
                Rescaling::DoublePrime
            } else {
                Rescaling::SinglePrime
            },
            dynamic_special,
            key_switching: tessera_ckks::KeySwitching::Hybrid,
            source: "custom parameters from Python",
            allow_insecure: insecure,
        };
        Self::from_parameters(Parameters::new(lit).map_err(err)?, backend)
    }

    /// The compute backend this context's evaluator runs on (`"cpu"` or `"cuda"`).
    #[getter]
    fn backend(&self) -> String {
        let ev = self
            .inner
            .evaluator
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        ev.backend().choice().name().to_string()
    }

    /// The word size of the backend's limbs, 32 or 64: 32-bit words where every prime of the
    /// parameter set is below 2^30 and the backend runs them faster (on the CPU: its AVX2 and
    /// AVX-512 kernels; on CUDA: always), else 64. `TESSERA_WORD=32|64` overrides.
    #[getter]
    fn word_bits(&self) -> u32 {
        let ev = self
            .inner
            .evaluator
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        ev.backend().word().bits()
    }

    /// Ring degree N.
    #[getter]
    fn n(&self) -> usize {
        self.inner.ctx.params().n()
    }

    /// Maximum number of complex slots, N/2.
    #[getter]
    fn max_slots(&self) -> usize {
        self.inner.ctx.params().max_slots()
    }

    /// Maximum level L.
    #[getter]
    fn max_level(&self) -> usize {
        self.inner.ctx.params().max_level()
    }

    /// Default scale Delta.
    #[getter]
    fn default_scale(&self) -> f64 {
        self.inner.ctx.params().default_scale()
    }

    /// One line on the 128-bit security check.
    fn security(&self) -> String {
        self.inner.ctx.params().security().summary.clone()
    }

    /// Generates the secret, public, relinearisation and rotation keys (`rotations`: slot
    /// steps; `conjugation`: also the conjugation key). `seed` (32 bytes) makes it
    /// deterministic for tests; otherwise the OS CSPRNG is used.
    ///
    /// `bootstrapping=True` also prepares the parameter set's bootstrapping circuit (sets
    /// with one: `ark-boot`, `lattigo-boot`, `h3-boot`, `reed-boot`, `cifher-boot`,
    /// `test-boot`, `test-boot-double`) for `bootstrap_slots` slots (default N/2) and its keys,
    /// so that `Ciphertext.bootstrap()` works. At N = 2^16 that takes seconds to minutes and
    /// gigabytes of keys (docs/bootstrapping.md).
    /// `bootstrap_meta=k` makes the circuit META-BTS: a second bootstrapping of the first
    /// one's error scaled by 2^k, for about k more bits at one more level (k a little below
    /// the one-bootstrapping worst-slot precision, 1 to 40).
    #[pyo3(signature = (rotations=Vec::new(), conjugation=false, seed=None, bootstrapping=false, bootstrap_slots=None, bootstrap_meta=None))]
    #[allow(clippy::too_many_arguments)]
    fn keygen(
        &self,
        py: Python<'_>,
        rotations: Vec<i64>,
        conjugation: bool,
        seed: Option<Vec<u8>>,
        bootstrapping: bool,
        bootstrap_slots: Option<usize>,
        bootstrap_meta: Option<u32>,
    ) -> PyResult<()> {
        // Seconds to minutes at N = 2^16: other Python threads run meanwhile.
        py.detach(|| {
            self.keygen_detached(
                rotations,
                conjugation,
                seed,
                bootstrapping,
                bootstrap_slots,
                bootstrap_meta,
            )
        })
    }

    /// Levels a bootstrapped ciphertext has left (rescales before the base modulus), or
    /// None without a bootstrapping circuit.
    fn bootstrap_levels_left(&self) -> PyResult<Option<usize>> {
        self.inner
            .with_keys(|k| Ok(k.boot.as_ref().map(|b| b.levels_left())))
    }

    /// Encrypts complex values (a list of complex numbers) with the public key, into the
    /// smallest power-of-two number of slots that holds them, at `level` (default: the top)
    /// and `scale` (default: the parameters').
    #[pyo3(signature = (values, level=None, scale=None))]
    fn encrypt(
        &self,
        values: Vec<Complex64>,
        level: Option<usize>,
        scale: Option<f64>,
    ) -> PyResult<Ciphertext> {
        let ctx = &self.inner.ctx;
        let slots = values.len().max(1).next_power_of_two();
        let level = level.unwrap_or(ctx.params().max_level());
        let scale = scale.unwrap_or(ctx.params().default_scale());
        let pt = ctx.encode(&values, slots, level, scale).map_err(err)?;
        let ct = self.inner.with_keys(|k| {
            let mut kg = self.inner.keygen.lock().unwrap_or_else(|e| e.into_inner());
            kg.encrypt_pk(&pt, &k.pk)
        })?;
        Ok(Ciphertext {
            inner: self.inner.clone(),
            ct,
        })
    }

    /// Decrypts and decodes to a list of complex numbers (one per slot).
    fn decrypt(&self, ct: &Ciphertext) -> PyResult<Vec<Complex64>> {
        if !Arc::ptr_eq(&self.inner, &ct.inner) {
            return Err(TesseraError::new_err(
                "the ciphertext belongs to another context",
            ));
        }
        self.inner.with_keys(|k| {
            let sk = k.sk.as_ref().ok_or_else(|| {
                CkksError::MissingKey("the secret key: this context was loaded without it".into())
            })?;
            self.inner.ctx.decode(&decrypt(&ct.ct, sk)?)
        })
    }

    /// Encodes complex values into a plaintext of the smallest power-of-two slot count that
    /// holds them, at `level` (default: the top) and `scale` (default: the parameters').
    #[pyo3(signature = (values, level=None, scale=None))]
    fn encode(
        &self,
        values: Vec<Complex64>,
        level: Option<usize>,
        scale: Option<f64>,
    ) -> PyResult<ckks_io::Plaintext> {
        ckks_io::encode(&self.inner, &values, level, scale)
    }

    /// Reads a plaintext serialised by `Plaintext.to_bytes` for these parameters.
    fn plaintext_from_bytes(&self, data: &[u8]) -> PyResult<ckks_io::Plaintext> {
        let pt =
            tessera_ckks::serialize::plaintext_from_bytes(data, &self.inner.ctx).map_err(err)?;
        Ok(ckks_io::Plaintext {
            inner: self.inner.clone(),
            pt,
        })
    }

    /// The key set as bytes (format v3 objects in a `TSKB` container); `secret=False` leaves
    /// the secret key out (the result encrypts and evaluates but cannot decrypt).
    #[pyo3(signature = (secret=true))]
    fn keys_to_bytes<'py>(&self, py: Python<'py>, secret: bool) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &ckks_io::save_keys(&self.inner, secret)?))
    }

    /// Replaces this context's keys with a set from `keys_to_bytes` (same parameters),
    /// rebuilding the bootstrapping circuit if the set has one.
    fn keys_from_bytes(&self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        py.detach(|| ckks_io::load_keys(&self.inner, data))
    }

    /// The 16-byte identity of the current key set (hex), or None before keygen.
    #[getter]
    fn key_set(&self) -> Option<String> {
        ckks_io::key_set_of(&self.inner).map(|id| id.0.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The parameter set's name.
    #[getter]
    fn params(&self) -> String {
        self.inner.ctx.params().literal().name.clone()
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        ckks_io::reduce_context(py, self)
    }

    /// Writes the key set to the file `path` (`keys_to_bytes`; `secret=False` leaves the
    /// secret key out).
    #[pyo3(signature = (path, secret=true))]
    fn save_keys(&self, path: std::path::PathBuf, secret: bool) -> PyResult<()> {
        let bytes = ckks_io::save_keys(&self.inner, secret)?;
        std::fs::write(&path, bytes).map_err(|e| {
            TesseraError::new_err(format!("cannot write keys to {}: {e}", path.display()))
        })
    }

    /// Replaces this context's keys with the set in the file `path` (from `save_keys`).
    fn load_keys(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let bytes = std::fs::read(&path).map_err(|e| {
            TesseraError::new_err(format!("cannot read keys from {}: {e}", path.display()))
        })?;
        py.detach(|| ckks_io::load_keys(&self.inner, &bytes))
    }

    /// Reads a ciphertext serialised by `Ciphertext.to_bytes` for these parameters.
    fn ciphertext_from_bytes(&self, data: &[u8]) -> PyResult<Ciphertext> {
        let ct = ciphertext_from_bytes(data, &self.inner.ctx).map_err(err)?;
        Ok(Ciphertext {
            inner: self.inner.clone(),
            ct,
        })
    }
}

impl Context {
    /// [`Context::keygen`] without the GIL.
    fn keygen_detached(
        &self,
        rotations: Vec<i64>,
        conjugation: bool,
        seed: Option<Vec<u8>>,
        bootstrapping: bool,
        bootstrap_slots: Option<usize>,
        bootstrap_meta: Option<u32>,
    ) -> PyResult<()> {
        let mut kg = self.inner.keygen.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = seed {
            let s: [u8; 32] = s
                .try_into()
                .map_err(|_| TesseraError::new_err("seed must be exactly 32 bytes"))?;
            *kg = KeyGenerator::from_seed(&self.inner.ctx, &Seed(s)).map_err(err)?;
        }
        let sk = kg.secret_key().map_err(err)?;
        let pk = kg.public_key(&sk).map_err(err)?;
        let (keys, boot) = if bootstrapping {
            let boot = ckks_io::bootstrapper(&self.inner.ctx, bootstrap_slots, bootstrap_meta)?;
            let keys = boot.keygen_with(&mut kg, &sk, &rotations).map_err(err)?;
            (keys, Some(boot))
        } else {
            let eval = kg
                .evaluation_keys(&sk, &rotations, conjugation)
                .map_err(err)?;
            (
                BootstrapKeys {
                    eval,
                    encapsulation: None,
                },
                None,
            )
        };
        // Lock order: never hold the generator while taking the keys (`encrypt` takes the keys
        // and then the generator, and now runs beside a keygen that released the GIL).
        drop(kg);
        let boot_setup = bootstrapping.then_some((bootstrap_slots, bootstrap_meta));
        *self.inner.keys.lock().unwrap_or_else(|e| e.into_inner()) = Some(Keys {
            sk: Some(sk),
            pk,
            keys,
            boot,
            boot_setup,
        });
        Ok(())
    }

    /// A context over `params` computing on `backend` (a name; `None`: the process's choice).
    /// An unknown name, or a backend this build or machine cannot run, is a `TesseraError`
    /// with the reason.
    pub(crate) fn from_parameters(params: Parameters, backend: Option<&str>) -> PyResult<Self> {
        let choice = match backend {
            Some(name) => name.parse::<BackendChoice>(),
            None => BackendChoice::process_default(),
        }
        .map_err(|e| TesseraError::new_err(e.to_string()))?;
        let ctx = CkksContext::new(params).map_err(err)?;
        let compute = Compute::new(ctx.ring().clone(), choice)
            .map_err(|e| TesseraError::new_err(e.to_string()))?;
        let evaluator = Evaluator::new(&ctx, compute).map_err(err)?;
        let keygen = KeyGenerator::new(&ctx).map_err(err)?;
        let inner = Arc::new(Inner {
            ctx,
            keys: Mutex::new(None),
            evaluator: Mutex::new(evaluator),
            keygen: Mutex::new(keygen),
        });
        ckks_io::register(&inner);
        Ok(Self { inner })
    }
}

#[pymethods]
impl Ciphertext {
    /// Level (limbs - 1).
    #[getter]
    fn level(&self) -> usize {
        self.ct.level
    }

    /// Scale Delta.
    #[getter]
    fn scale(&self) -> f64 {
        self.ct.scale
    }

    /// Number of slots.
    #[getter]
    fn slots(&self) -> usize {
        self.ct.slots
    }

    /// The context this ciphertext belongs to.
    #[getter]
    fn context(&self) -> Context {
        Context {
            inner: self.inner.clone(),
        }
    }

    /// numpy defers binary operators (`matrix @ ct`) to this class.
    #[classattr]
    fn __array_ufunc__() -> Option<bool> {
        None
    }

    /// `ct + ct` or `ct + plaintext`.
    fn __add__(&self, other: &Bound<'_, PyAny>) -> PyResult<Ciphertext> {
        if let Ok(p) = other.cast::<ckks_io::Plaintext>() {
            return circuits::add_plain(self, p.get());
        }
        let other = other
            .cast::<Ciphertext>()
            .map_err(|_| TesseraError::new_err("a ciphertext adds a ciphertext or a Plaintext"))?;
        let other = other.get();
        self.same_context(other)?;
        let ct = self.inner.eval(|ev, _| {
            let (a, b) = (ev.load(&self.ct)?, ev.load(&other.ct)?);
            let r = ev.add(&a, &b)?;
            ev.store(&r)
        })?;
        Ok(self.wrap(ct))
    }

    fn __sub__(&self, other: &Ciphertext) -> PyResult<Ciphertext> {
        self.same_context(other)?;
        let ct = self.inner.eval(|ev, _| {
            let (a, b) = (ev.load(&self.ct)?, ev.load(&other.ct)?);
            let r = ev.sub(&a, &b)?;
            ev.store(&r)
        })?;
        Ok(self.wrap(ct))
    }

    fn __neg__(&self) -> PyResult<Ciphertext> {
        let ct = self.inner.eval(|ev, _| {
            let a = ev.load(&self.ct)?;
            let r = ev.neg(&a)?;
            ev.store(&r)
        })?;
        Ok(self.wrap(ct))
    }

    /// `ct * ct` (relinearised) or `ct * number`; both rescale once afterwards. Runs without
    /// the GIL.
    fn __mul__(&self, other: &Bound<'_, PyAny>) -> PyResult<Ciphertext> {
        let py = other.py();
        if let Ok(p) = other.cast::<ckks_io::Plaintext>() {
            return circuits::mul_plain(self, p.get());
        }
        if let Ok(o) = other.cast::<Ciphertext>() {
            let o = o.get();
            self.same_context(o)?;
            let ct = py.detach(|| {
                self.inner.eval(|ev, keys| {
                    let (a, b) = (ev.load(&self.ct)?, ev.load(&o.ct)?);
                    let r = ev.mul_relin_rescale(&a, &b, keys)?;
                    ev.store(&r)
                })
            })?;
            return Ok(self.wrap(ct));
        }
        let c: f64 = other.extract().map_err(|_| {
            TesseraError::new_err(
                "a ciphertext multiplies a ciphertext, a Plaintext or a real number",
            )
        })?;
        let q = self.inner.ctx.params().q()[self.ct.level] as f64;
        let ct = py.detach(|| {
            self.inner.eval(|ev, _| {
                let a = ev.load(&self.ct)?;
                let m = ev.mul_const(&a, c, q)?;
                let r = ev.rescale(&m)?;
                ev.store(&r)
            })
        })?;
        Ok(self.wrap(ct))
    }

    fn __rmul__(&self, other: &Bound<'_, PyAny>) -> PyResult<Ciphertext> {
        self.__mul__(other)
    }

    /// Rotates the slots left by `steps` (negative: right); needs the rotation key. Runs
    /// without the GIL.
    fn rotate(&self, py: Python<'_>, steps: i64) -> PyResult<Ciphertext> {
        let ct = py.detach(|| {
            self.inner.eval(|ev, keys| {
                let a = ev.load(&self.ct)?;
                let r = ev.rotate(&a, steps, keys)?;
                ev.store(&r)
            })
        })?;
        Ok(self.wrap(ct))
    }

    /// `ct << k`: rotate left by `k` slots (`rotate(k)`).
    fn __lshift__(&self, py: Python<'_>, steps: i64) -> PyResult<Ciphertext> {
        self.rotate(py, steps)
    }

    /// `ct >> k`: rotate right by `k` slots (`rotate(-k)`).
    fn __rshift__(&self, py: Python<'_>, steps: i64) -> PyResult<Ciphertext> {
        self.rotate(py, -steps)
    }

    /// `matrix @ ct`: the plaintext matrix (square, of the ciphertext's slot count, a numpy
    /// array or nested lists) times the slot vector, by the circuits' BSGS linear transform:
    /// one level; needs the rotation keys `LinearTransform(matrix).rotations`.
    fn __rmatmul__(&self, py: Python<'_>, matrix: &Bound<'_, PyAny>) -> PyResult<Ciphertext> {
        let lt = circuits::LinearTransform::from_matrix(matrix)?;
        lt.apply(py, self)
    }

    /// Complex conjugation of every slot; needs the conjugation key. Runs without the GIL.
    fn conjugate(&self, py: Python<'_>) -> PyResult<Ciphertext> {
        let ct = py.detach(|| {
            self.inner.eval(|ev, keys| {
                let a = ev.load(&self.ct)?;
                let r = ev.conjugate(&a, keys)?;
                ev.store(&r)
            })
        })?;
        Ok(self.wrap(ct))
    }

    /// Divides by the last prime and drops it.
    fn rescale(&self) -> PyResult<Ciphertext> {
        let ct = self.inner.eval(|ev, _| {
            let a = ev.load(&self.ct)?;
            let r = ev.rescale(&a)?;
            ev.store(&r)
        })?;
        Ok(self.wrap(ct))
    }

    /// Refreshes the ciphertext (any level, the circuit's slot count) to one with levels to
    /// spare: ModRaise, CoeffToSlot, EvalMod, SlotToCoeff. Needs
    /// `Context.keygen(bootstrapping=True)`. Runs without the GIL.
    fn bootstrap(&self, py: Python<'_>) -> PyResult<Ciphertext> {
        let ct = py.detach(|| self.bootstrap_detached())?;
        Ok(self.wrap(ct))
    }

    /// Drops `k` levels without dividing.
    fn drop_levels(&self, k: usize) -> PyResult<Ciphertext> {
        let ct = self.inner.eval(|ev, _| {
            let a = ev.load(&self.ct)?;
            let r = ev.drop_levels(&a, k)?;
            ev.store(&r)
        })?;
        Ok(self.wrap(ct))
    }

    /// Versioned binary serialisation with an integrity check.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &ciphertext_to_bytes(&self.ct, &self.inner.ctx))
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        ckks_io::reduce_ciphertext(py, self, self.to_bytes(py))
    }

    fn __repr__(&self) -> String {
        format!(
            "Ciphertext(level={}, scale=2^{:.2}, slots={})",
            self.ct.level,
            self.ct.scale.log2(),
            self.ct.slots
        )
    }
}

/// Names of the built-in parameter presets.
#[pyfunction]
fn presets() -> Vec<&'static str> {
    tessera_ckks::params::preset_names()
}

/// Runs a workload on an accelerator model; returns the report as a JSON string (kept for
/// scripts that used it; `tessera.simulate` returns a `Report` object).
#[pyfunction]
#[pyo3(signature = (arch="ark", workload="hmult", params="ark", level=None, of_limb=false, min_ks=false, sets=Vec::new(), mode="latency", warm=false, streamed_keyswitch=false, additive=false, hoisting=true, window=None, issue_window=None))]
#[allow(clippy::too_many_arguments)]
fn simulate_json(
    arch: &str,
    workload: &str,
    params: &str,
    level: Option<usize>,
    of_limb: bool,
    min_ks: bool,
    sets: Vec<String>,
    mode: &str,
    warm: bool,
    streamed_keyswitch: bool,
    additive: bool,
    hoisting: bool,
    window: Option<usize>,
    issue_window: Option<usize>,
) -> PyResult<String> {
    let err = |e: tessera_lab::LabError| TesseraError::new_err(e.to_string());
    let request = tessera_lab::Request {
        sets,
        params: Some(params.into()),
        level,
        of_limb,
        min_ks,
        hoisting,
        streamed_keyswitch,
        mode: tessera_lab::Mode::parse(mode).map_err(|e| err(e.into()))?,
        warm,
        additive,
        window,
        issue_window,
        ..tessera_lab::Request::new(arch, workload)
    };
    let out = tessera_lab::run(&request, &|_| {}).map_err(err)?;
    Ok(out.to_json().map_err(err)?.to_string())
}

/// The calibration targets of `paper` (all papers when None) as a JSON array string.
#[pyfunction]
#[pyo3(signature = (paper=None))]
fn reproduce_json(paper: Option<&str>) -> PyResult<String> {
    let rows = tessera_lab::reproduce::targets(paper, &|_| {})
        .map_err(|e| TesseraError::new_err(e.to_string()))?;
    serde_json::to_string(&rows).map_err(|e| TesseraError::new_err(e.to_string()))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Context>()?;
    m.add_class::<Ciphertext>()?;
    m.add_class::<ckks_io::Plaintext>()?;
    m.add_function(wrap_pyfunction!(ckks_io::_plaintext_from_state, m)?)?;
    m.add_function(wrap_pyfunction!(ckks_io::_ciphertext_from_state, m)?)?;
    m.add_function(wrap_pyfunction!(ckks_io::_context_from_state, m)?)?;
    circuits::register(m)?;
    programs::register(m)?;
    sim::register(m)?;
    cli::register(m)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce_json, m)?)?;
    m.add("TesseraError", m.py().get_type::<TesseraError>())?;
    Ok(())
}
