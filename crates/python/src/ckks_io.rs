//! Saving and loading CKKS objects from Python: plaintexts, key sets and whole contexts as
//! bytes, and pickling. Every object is stored in the ckks crate's versioned format
//! (`tessera_ckks::serialize`, format v3); a key set is a small container of such objects.
//!
//! Pickling needs the context an object belongs to. A pickled ciphertext or plaintext carries
//! its parameter set (not its keys: those can be gigabytes); unpickling binds it to a live
//! context of the same parameters and key set in this process when there is one (a context
//! unpickled earlier from the same pickle, or one whose keys were loaded), and otherwise to a
//! fresh context of those parameters without keys, whose `load_keys` then completes it. A
//! pickled context carries its keys, the secret key included.

use crate::{err, Ciphertext, Context, Inner, Keys, TesseraError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Arc, Mutex, Weak};
use tessera_ckks::bootstrap::{BootstrapKeys, BootstrapParameters, Bootstrapper};
use tessera_ckks::params::{KeySwitching, ParametersLiteral};
use tessera_ckks::serialize::{
    ciphertext_from_bytes, plaintext_from_bytes, plaintext_to_bytes, public_key_from_bytes,
    public_key_to_bytes, secret_key_from_bytes, secret_key_to_bytes, switching_key_from_bytes,
    switching_key_to_bytes,
};
use tessera_ckks::{
    CkksContext, EvaluationKeys, KeySetId, Parameters, Plaintext as Pt, Rescaling,
    SecretDistribution,
};

/// Every context made in this process, so that unpickled objects find theirs.
static CONTEXTS: Mutex<Vec<Weak<Inner>>> = Mutex::new(Vec::new());

/// Remembers `inner` for [`find_context`].
pub(crate) fn register(inner: &Arc<Inner>) {
    let mut all = CONTEXTS.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|w| w.strong_count() > 0);
    all.push(Arc::downgrade(inner));
}

/// The key-set identity of a context's keys, if it has keys.
pub(crate) fn key_set_of(inner: &Inner) -> Option<KeySetId> {
    let keys = inner.keys.lock().unwrap_or_else(|e| e.into_inner());
    keys.as_ref().map(|k| k.pk.key_set())
}

/// A live context with parameters `state` and key set `id` (any key set when `id` is None:
/// plaintexts belong to none), or a new one without keys.
fn find_context(state: &str, id: Option<KeySetId>) -> PyResult<Arc<Inner>> {
    let live: Vec<Arc<Inner>> = {
        let all = CONTEXTS.lock().unwrap_or_else(|e| e.into_inner());
        all.iter().filter_map(Weak::upgrade).collect()
    };
    let same_params: Vec<&Arc<Inner>> = live
        .iter()
        .filter(|i| params_state(i.ctx.params()) == state)
        .collect();
    let hit = match id {
        Some(id) => same_params
            .iter()
            .rev()
            .find(|i| key_set_of(i) == Some(id))
            .or_else(|| same_params.iter().rev().find(|i| key_set_of(i).is_none())),
        None => same_params.last(),
    };
    if let Some(i) = hit {
        return Ok(Arc::clone(i));
    }
    Ok(Context::from_parameters(params_from_state(state)?, None)?.inner)
}

/// The parameter set as a string that rebuilds it: `preset:NAME` for an unchanged preset,
/// otherwise the literal's fields (JSON, internal to pickles).
pub(crate) fn params_state(p: &Parameters) -> String {
    let lit = p.literal();
    if let Ok(pre) = Parameters::preset(&lit.name) {
        if pre.literal() == lit {
            return format!("preset:{}", lit.name);
        }
    }
    let hw = match lit.secret {
        SecretDistribution::Sparse { hamming_weight } => Some(hamming_weight),
        _ => None,
    };
    serde_json::json!({
        "name": lit.name, "log_n": lit.log_n, "log_q": lit.log_q, "log_p": lit.log_p,
        "dnum": lit.dnum, "log_scale": lit.log_default_scale, "hamming_weight": hw,
        "sigma": lit.sigma, "double_prime": lit.rescaling == Rescaling::DoublePrime,
        "dynamic_special": lit.dynamic_special, "insecure": lit.allow_insecure,
        "key_switching": lit.key_switching.as_str(),
    })
    .to_string()
}

fn bad_state(what: &str) -> PyErr {
    TesseraError::new_err(format!("not a Tessera parameter state ({what})"))
}

/// Inverse of [`params_state`].
fn params_from_state(state: &str) -> PyResult<Parameters> {
    if let Some(name) = state.strip_prefix("preset:") {
        return Parameters::preset(name).map_err(err);
    }
    let v: serde_json::Value =
        serde_json::from_str(state).map_err(|e| bad_state(&e.to_string()))?;
    let u32s = |k: &str| -> PyResult<Vec<u32>> {
        v[k].as_array()
            .ok_or_else(|| bad_state(k))?
            .iter()
            .map(|x| x.as_u64().map(|x| x as u32).ok_or_else(|| bad_state(k)))
            .collect()
    };
    let int = |k: &str| v[k].as_u64().ok_or_else(|| bad_state(k));
    let lit = ParametersLiteral {
        name: v["name"]
            .as_str()
            .ok_or_else(|| bad_state("name"))?
            .to_string(),
        log_n: int("log_n")? as u32,
        log_q: u32s("log_q")?,
        log_p: u32s("log_p")?,
        dnum: int("dnum")? as usize,
        log_default_scale: int("log_scale")? as u32,
        secret: match v["hamming_weight"].as_u64() {
            Some(h) => SecretDistribution::Sparse {
                hamming_weight: h as usize,
            },
            None => SecretDistribution::Ternary,
        },
        sigma: v["sigma"].as_f64().ok_or_else(|| bad_state("sigma"))?,
        rescaling: if v["double_prime"].as_bool() == Some(true) {
            Rescaling::DoublePrime
        } else {
            Rescaling::SinglePrime
        },
        dynamic_special: int("dynamic_special")? as usize,
        // States written before session 32 carry no key_switching: hybrid.
        key_switching: match v["key_switching"].as_str() {
            None | Some("hybrid") => KeySwitching::Hybrid,
            Some("boosted") => KeySwitching::Boosted,
            Some(_) => return Err(bad_state("key_switching")),
        },
        source: "custom parameters from Python",
        allow_insecure: v["insecure"].as_bool() == Some(true),
    };
    Parameters::new(lit).map_err(err)
}

/// An encoded message (a CKKS plaintext) bound to the context that encoded it. Multiplies and
/// adds into ciphertexts (`ct * pt`, `ct + pt`), pickles, and round-trips through
/// `to_bytes` / `Context.plaintext_from_bytes`.
#[pyclass(module = "tessera._native", frozen)]
pub(crate) struct Plaintext {
    pub(crate) inner: Arc<Inner>,
    pub(crate) pt: Pt,
}

#[pymethods]
impl Plaintext {
    /// Level (limbs - 1).
    #[getter]
    fn level(&self) -> usize {
        self.pt.level
    }

    /// Scale Delta.
    #[getter]
    fn scale(&self) -> f64 {
        self.pt.scale
    }

    /// Number of slots.
    #[getter]
    fn slots(&self) -> usize {
        self.pt.slots
    }

    /// Decodes to a list of complex numbers (one per slot).
    fn decode(&self) -> PyResult<Vec<num_complex::Complex64>> {
        self.inner.ctx.decode(&self.pt).map_err(err)
    }

    /// Versioned binary serialisation (format v3, type 5) with an integrity check.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &plaintext_to_bytes(&self.pt, &self.inner.ctx))
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let f = py
            .import("tessera._native")?
            .getattr("_plaintext_from_state")?;
        let args = (params_state(self.inner.ctx.params()), self.to_bytes(py));
        (f, args).into_pyobject(py).map(|t| t.into_any())
    }

    fn __repr__(&self) -> String {
        format!(
            "Plaintext(level={}, scale=2^{:.2}, slots={})",
            self.pt.level,
            self.pt.scale.log2(),
            self.pt.slots
        )
    }
}

/// Unpickles a plaintext (see the module documentation).
#[pyfunction]
pub(crate) fn _plaintext_from_state(state: &str, data: &[u8]) -> PyResult<Plaintext> {
    let inner = find_context(state, None)?;
    let pt = plaintext_from_bytes(data, &inner.ctx).map_err(err)?;
    Ok(Plaintext { inner, pt })
}

/// Unpickles a ciphertext (see the module documentation).
#[pyfunction]
pub(crate) fn _ciphertext_from_state(state: &str, data: &[u8]) -> PyResult<Ciphertext> {
    // The key set is in the header; parse once against any context of these parameters.
    let probe = find_context(state, None)?;
    let id = ciphertext_from_bytes(data, &probe.ctx)
        .map_err(err)?
        .key_set;
    let inner = find_context(state, Some(id))?;
    let ct = ciphertext_from_bytes(data, &inner.ctx).map_err(err)?;
    Ok(Ciphertext { inner, ct })
}

/// Unpickles a context with its keys.
#[pyfunction]
pub(crate) fn _context_from_state(state: &str, keys: Option<&[u8]>) -> PyResult<Context> {
    let c = Context::from_parameters(params_from_state(state)?, None)?;
    if let Some(k) = keys {
        load_keys(&c.inner, k)?;
    }
    Ok(c)
}

/// The pickle of a ciphertext.
pub(crate) fn reduce_ciphertext<'py>(
    py: Python<'py>,
    c: &Ciphertext,
    bytes: Bound<'py, PyBytes>,
) -> PyResult<Bound<'py, PyAny>> {
    let f = py
        .import("tessera._native")?
        .getattr("_ciphertext_from_state")?;
    (f, (params_state(c.inner.ctx.params()), bytes))
        .into_pyobject(py)
        .map(|t| t.into_any())
}

/// The pickle of a context: its parameters and all its keys (the secret key included).
pub(crate) fn reduce_context<'py>(py: Python<'py>, c: &Context) -> PyResult<Bound<'py, PyAny>> {
    let f = py
        .import("tessera._native")?
        .getattr("_context_from_state")?;
    let has_keys = key_set_of(&c.inner).is_some();
    let keys = if has_keys {
        Some(PyBytes::new(py, &save_keys(&c.inner, true)?))
    } else {
        None
    };
    (f, (params_state(c.inner.ctx.params()), keys))
        .into_pyobject(py)
        .map(|t| t.into_any())
}

/// Encodes `values` into a plaintext of `slots` slots.
pub(crate) fn encode(
    inner: &Arc<Inner>,
    values: &[num_complex::Complex64],
    level: Option<usize>,
    scale: Option<f64>,
) -> PyResult<Plaintext> {
    let p = inner.ctx.params();
    let slots = values.len().max(1).next_power_of_two();
    let pt = inner
        .ctx
        .encode(
            values,
            slots,
            level.unwrap_or(p.max_level()),
            scale.unwrap_or(p.default_scale()),
        )
        .map_err(err)?;
    Ok(Plaintext {
        inner: Arc::clone(inner),
        pt,
    })
}

const KEYS_MAGIC: &[u8; 4] = b"TSKB";
const KEYS_VERSION: u16 = 1;
const TAG_SECRET: u8 = 1;
const TAG_PUBLIC: u8 = 2;
const TAG_RELIN: u8 = 3;
const TAG_GALOIS: u8 = 4;
const TAG_RELIN_AT: u8 = 5;
const TAG_GALOIS_AT: u8 = 6;
const TAG_ENCAPS_TO: u8 = 7;
const TAG_ENCAPS_BACK: u8 = 8;

/// A key set as bytes: `"TSKB" | version (u16) | bootstrapping slots (u32, 0: no circuit,
/// u32::MAX: the default) | META-BTS scale (u32, 0: none) | entry count (u32)`, then per entry
/// `tag (u8) | Galois element (u64) | level (u32) | length (u64) | a format-v3 object` (each
/// with its own checksum). Without `secret` the secret key is left out: such a set encrypts
/// and evaluates but does not decrypt.
pub(crate) fn save_keys(inner: &Inner, secret: bool) -> PyResult<Vec<u8>> {
    let ctx = &inner.ctx;
    let guard = inner.keys.lock().unwrap_or_else(|e| e.into_inner());
    let k = guard
        .as_ref()
        .ok_or_else(|| TesseraError::new_err("no keys: call Context.keygen() first"))?;
    if k.keys.eval.on_demand.is_some() {
        return Err(TesseraError::new_err(
            "keys made on demand cannot be saved (they are not all there)",
        ));
    }
    let mut entries: Vec<(u8, u64, u32, Vec<u8>)> = Vec::new();
    if secret {
        let sk =
            k.sk.as_ref()
                .ok_or_else(|| TesseraError::new_err("this context holds no secret key"))?;
        entries.push((TAG_SECRET, 0, 0, secret_key_to_bytes(sk, ctx)));
    }
    entries.push((TAG_PUBLIC, 0, 0, public_key_to_bytes(&k.pk, ctx)));
    let e: &EvaluationKeys = &k.keys.eval;
    if let Some(r) = &e.relin {
        entries.push((TAG_RELIN, 0, 0, switching_key_to_bytes(r, ctx)));
    }
    let mut gs: Vec<_> = e.galois.iter().collect();
    gs.sort_by_key(|(g, _)| **g);
    for (g, key) in gs {
        entries.push((TAG_GALOIS, *g, 0, switching_key_to_bytes(key, ctx)));
    }
    for (l, key) in &e.relin_by_level {
        entries.push((TAG_RELIN_AT, 0, *l as u32, switching_key_to_bytes(key, ctx)));
    }
    for ((g, l), key) in &e.galois_by_level {
        entries.push((
            TAG_GALOIS_AT,
            *g,
            *l as u32,
            switching_key_to_bytes(key, ctx),
        ));
    }
    if let Some((to, back)) = &k.keys.encapsulation {
        entries.push((TAG_ENCAPS_TO, 0, 0, switching_key_to_bytes(to, ctx)));
        entries.push((TAG_ENCAPS_BACK, 0, 0, switching_key_to_bytes(back, ctx)));
    }
    let (slots, meta) = match &k.boot_setup {
        Some((s, m)) => (s.map_or(u32::MAX, |s| s as u32), m.unwrap_or(0)),
        None => (0, 0),
    };
    let mut out = Vec::new();
    out.extend_from_slice(KEYS_MAGIC);
    out.extend_from_slice(&KEYS_VERSION.to_le_bytes());
    out.extend_from_slice(&slots.to_le_bytes());
    out.extend_from_slice(&meta.to_le_bytes());
    out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    for (tag, g, l, bytes) in entries {
        out.push(tag);
        out.extend_from_slice(&g.to_le_bytes());
        out.extend_from_slice(&l.to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(&bytes);
    }
    Ok(out)
}

/// Reads a key set written by [`save_keys`] into `inner` (replacing its keys), rebuilding the
/// bootstrapping circuit when the set has one.
pub(crate) fn load_keys(inner: &Inner, data: &[u8]) -> PyResult<()> {
    let bad = |why: String| TesseraError::new_err(format!("not a valid Tessera key set: {why}"));
    let mut pos = 0usize;
    let mut take = |n: usize| -> PyResult<&[u8]> {
        if data.len() - pos < n {
            return Err(bad(format!("truncated at byte {pos}")));
        }
        pos += n;
        Ok(&data[pos - n..pos])
    };
    if take(4)? != KEYS_MAGIC {
        return Err(bad("bad magic (not written by Context.save_keys)".into()));
    }
    let version = u16::from_le_bytes(take(2)?.try_into().expect("2 bytes"));
    if version != KEYS_VERSION {
        return Err(bad(format!(
            "container version {version}, this build reads {KEYS_VERSION}"
        )));
    }
    let u32_at = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
    let slots = u32_at(take(4)?);
    let meta = u32_at(take(4)?);
    let count = u32_at(take(4)?);
    let ctx: &Arc<CkksContext> = &inner.ctx;
    let (mut sk, mut pk) = (None, None);
    let mut eval = EvaluationKeys::default();
    let (mut to, mut back) = (None, None);
    for _ in 0..count {
        let tag = take(1)?[0];
        let g = u64::from_le_bytes(take(8)?.try_into().expect("8 bytes"));
        let l = u32_at(take(4)?) as usize;
        let len = u64::from_le_bytes(take(8)?.try_into().expect("8 bytes"));
        let len = usize::try_from(len).map_err(|_| bad("entry length".into()))?;
        let obj = take(len)?;
        let sw = || switching_key_from_bytes(obj, ctx).map_err(err);
        match tag {
            TAG_SECRET => sk = Some(secret_key_from_bytes(obj, ctx).map_err(err)?),
            TAG_PUBLIC => pk = Some(public_key_from_bytes(obj, ctx).map_err(err)?),
            TAG_RELIN => eval.relin = Some(sw()?),
            TAG_GALOIS => {
                eval.galois.insert(g, sw()?);
            }
            TAG_RELIN_AT => {
                eval.relin_by_level.insert(l, sw()?);
            }
            TAG_GALOIS_AT => {
                eval.galois_by_level.insert((g, l), sw()?);
            }
            TAG_ENCAPS_TO => to = Some(sw()?),
            TAG_ENCAPS_BACK => back = Some(sw()?),
            t => return Err(bad(format!("unknown entry tag {t}"))),
        }
    }
    if pos != data.len() {
        return Err(bad(format!("{} trailing bytes", data.len() - pos)));
    }
    let pk = pk.ok_or_else(|| bad("no public key".into()))?;
    let id = pk.key_set();
    if let Some(s) = &sk {
        id.check("loading keys", s.key_set()).map_err(err)?;
    }
    for k in eval.all().chain(to.iter()).chain(back.iter()) {
        id.check("loading keys", k.key_set()).map_err(err)?;
    }
    let encapsulation = match (to, back) {
        (Some(a), Some(b)) => Some((a, b)),
        (None, None) => None,
        _ => return Err(bad("one of the two encapsulation keys is missing".into())),
    };
    let boot_setup = match slots {
        0 => None,
        s => Some((
            (s != u32::MAX).then_some(s as usize),
            (meta != 0).then_some(meta),
        )),
    };
    let boot = match boot_setup {
        Some((s, m)) => Some(bootstrapper(ctx, s, m)?),
        None => None,
    };
    *inner.keys.lock().unwrap_or_else(|e| e.into_inner()) = Some(Keys {
        sk,
        pk,
        keys: BootstrapKeys {
            eval,
            encapsulation,
        },
        boot,
        boot_setup,
    });
    Ok(())
}

/// The bootstrapping circuit of `ctx`'s parameter set for `slots` slots (None: N/2) and
/// META-BTS scale `meta`.
pub(crate) fn bootstrapper(
    ctx: &Arc<CkksContext>,
    slots: Option<usize>,
    meta: Option<u32>,
) -> PyResult<Bootstrapper> {
    let name = &ctx.params().literal().name;
    let (ckks, bp) = BootstrapParameters::preset(name).map_err(|_| {
        TesseraError::new_err(format!(
            "parameters '{name}' have no bootstrapping circuit: use ark-boot, lattigo-boot, h3-boot, reed-boot, cifher-boot, test-boot or test-boot-double"
        ))
    })?;
    if ckks != name.as_str() {
        return Err(TesseraError::new_err(format!(
            "parameters '{name}' have no bootstrapping circuit: its bootstrapping set is '{ckks}'"
        )));
    }
    let bp = BootstrapParameters {
        slots,
        meta_log_scale: meta,
        ..bp
    };
    Bootstrapper::new(ctx, bp).map_err(err)
}
