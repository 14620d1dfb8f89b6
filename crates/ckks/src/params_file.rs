//! Parameter sets as TOML files (docs/parameters.md): the built-in presets are files in
//! `configs/params/` (embedded, so the binary works anywhere), and any other set is a file of
//! the same form. One loader reads both, and one resolution function ([`resolve`],
//! [`resolve_bootstrap`]) turns a preset name or a path into [`Parameters`], so every command
//! that takes `--params` takes a file with no code of its own.
//!
//! Every field is checked when the file is read: its type, and its range, named in the error
//! with the allowed range, the file and the line it is written on. The prime chain itself is
//! then checked by [`Parameters::new`] (prime generation, digit widths, 128-bit security at
//! the modulus actually generated), unless the file opts out with `security = "model-only"`
//! (see [`SecurityMode`]).
//!
//! ```
//! use tessera_ckks::params_file::{resolve, ParamsFile};
//! # fn main() -> tessera_ckks::Result<()> {
//! // A preset written out and read back is the same set.
//! let file = ParamsFile::load("test-small")?;
//! let text = file.to_toml();
//! let again = ParamsFile::parse(&text, "test-small.toml")?;
//! assert_eq!(again, file);
//! assert_eq!(resolve("test-small")?.q(), again.parameters()?.q());
//! # Ok(())
//! # }
//! ```

use crate::bootstrap::BootstrapParameters;
use crate::error::{CkksError, Result};
use crate::params::{
    boosted_special_bits, KeySwitching, Parameters, ParametersLiteral, Rescaling,
    SecretDistribution,
};
use std::collections::HashSet;
use std::sync::Mutex;

/// The built-in parameter sets: (name, file text). Their order is [`crate::params::preset_names`]'s.
pub const PRESET_FILES: &[(&str, &str)] = &[
    ("ark", include_str!("../../../configs/params/ark.toml")),
    (
        "ark-p50",
        include_str!("../../../configs/params/ark-p50.toml"),
    ),
    ("reed", include_str!("../../../configs/params/reed.toml")),
    (
        "reed-dnum3",
        include_str!("../../../configs/params/reed-dnum3.toml"),
    ),
    (
        "cifher",
        include_str!("../../../configs/params/cifher.toml"),
    ),
    ("h3", include_str!("../../../configs/params/h3.toml")),
    (
        "lattigo",
        include_str!("../../../configs/params/lattigo.toml"),
    ),
    (
        "test-small",
        include_str!("../../../configs/params/test-small.toml"),
    ),
    (
        "test-medium",
        include_str!("../../../configs/params/test-medium.toml"),
    ),
    (
        "test-double",
        include_str!("../../../configs/params/test-double.toml"),
    ),
    (
        "test-boot",
        include_str!("../../../configs/params/test-boot.toml"),
    ),
    (
        "test-boot-double",
        include_str!("../../../configs/params/test-boot-double.toml"),
    ),
    (
        "ark-boot",
        include_str!("../../../configs/params/ark-boot.toml"),
    ),
    (
        "lattigo-boot",
        include_str!("../../../configs/params/lattigo-boot.toml"),
    ),
    (
        "h3-boot",
        include_str!("../../../configs/params/h3-boot.toml"),
    ),
    (
        "reed-boot",
        include_str!("../../../configs/params/reed-boot.toml"),
    ),
    (
        "reed-dnum3-boot",
        include_str!("../../../configs/params/reed-dnum3-boot.toml"),
    ),
    (
        "cifher-boot",
        include_str!("../../../configs/params/cifher-boot.toml"),
    ),
    (
        "w32-boot",
        include_str!("../../../configs/params/w32-boot.toml"),
    ),
    (
        "boosted",
        include_str!("../../../configs/params/boosted.toml"),
    ),
    (
        "reed-boosted",
        include_str!("../../../configs/params/reed-boosted.toml"),
    ),
];

/// Largest parameter file read from disk, in bytes (the shipped ones are under 3 kB).
pub const MAX_PARAMS_FILE_BYTES: u64 = 1 << 20;

/// Most primes one run of the chain or of the special primes may hold (a chain of a few
/// hundred primes is far past any 128-bit set at N = 2^17; the bound keeps a typo such as
/// `count = 1e9` from allocating).
const MAX_RUN: i64 = 1024;

/// What the security check asks of a set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecurityMode {
    /// `security = "128-bit"` (the default): refused unless the generated primes meet the
    /// 128-bit bound for N with a ternary secret ([`crate::params`]'s table).
    Checked,
    /// `security = "test"`: a `test-*` set that may be insecure (for tests only), reported
    /// as not secure ([`ParametersLiteral::allow_insecure`]).
    Test,
    /// `security = "model-only"`: a set that only drives the simulator (a trace needs no
    /// secure key). Never reported secure: every output labels it insecure.
    ModelOnly,
}

impl SecurityMode {
    /// The value written in files.
    pub fn as_str(self) -> &'static str {
        match self {
            SecurityMode::Checked => "128-bit",
            SecurityMode::Test => "test",
            SecurityMode::ModelOnly => "model-only",
        }
    }
}

/// A parameter set as read from (or written to) a file: the CKKS literal, what the security
/// check asks of it, and, for sets that bootstrap, the bootstrapping circuit.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamsFile {
    /// The CKKS set.
    pub literal: ParametersLiteral,
    /// The security mode.
    pub security: SecurityMode,
    /// The bootstrapping circuit (`[bootstrap]`), if the set has one.
    pub bootstrap: Option<BootstrapParameters>,
    /// `model_word_bits`: the narrowest machine word the simulator may charge this set at,
    /// for a set whose primes are wider than the design it stands in for (`h3-boot`: H3's
    /// 36-bit words, wider primes for precision). `None`: its widest prime.
    pub model_word_bits: Option<u32>,
}

/// Strings that live as long as the process: a loaded set's `source` (the literal holds a
/// `&'static str`). Interned, so loading the same file again allocates nothing new.
fn intern(s: &str) -> &'static str {
    static POOL: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    let pool = pool.get_or_insert_with(HashSet::new);
    if let Some(&found) = pool.get(s) {
        return found;
    }
    let leaked: &'static str = Box::leak(s.to_string().into_boxed_str());
    pool.insert(leaked);
    leaked
}

/// Names of the built-in parameter files.
pub fn preset_file_names() -> Vec<&'static str> {
    PRESET_FILES.iter().map(|(n, _)| *n).collect()
}

/// The text of a built-in parameter file.
pub fn preset_text(name: &str) -> Option<&'static str> {
    PRESET_FILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
}

/// The set `name_or_path` names: a built-in preset (`ark`) or a TOML file, checked.
///
/// ```
/// let p = tessera_ckks::params_file::resolve("test-medium").unwrap();
/// assert_eq!(p.n(), 1 << 12);
/// assert!(tessera_ckks::params_file::resolve("no-such-set").is_err());
/// ```
pub fn resolve(name_or_path: &str) -> Result<Parameters> {
    ParamsFile::load(name_or_path)?.parameters()
}

/// The bootstrapping set `name_or_path` names, with its CKKS parameters: a built-in name
/// (`ark` means the `ark-boot` file, as every `NAME` with a `NAME-boot` file; `test-boot`
/// is its own) or a TOML file with a `[bootstrap]` table.
pub fn resolve_bootstrap(name_or_path: &str) -> Result<(Parameters, BootstrapParameters)> {
    let (_, file) = load_bootstrap(name_or_path)?;
    let bp = file.bootstrap.clone().expect("load_bootstrap checks it");
    Ok((file.parameters()?, bp))
}

/// The file a bootstrapping name resolves to (as [`resolve_bootstrap`] reads it), and its
/// built-in name if it is one.
pub fn load_bootstrap(name_or_path: &str) -> Result<(Option<&'static str>, ParamsFile)> {
    let boot_name = format!("{name_or_path}-boot");
    let builtin = PRESET_FILES
        .iter()
        .find(|(n, _)| *n == boot_name)
        .or_else(|| PRESET_FILES.iter().find(|(n, _)| *n == name_or_path));
    let (name, file) = match builtin {
        Some((n, text)) => (Some(*n), ParamsFile::parse(text, &builtin_origin(n))?),
        None => (None, ParamsFile::load(name_or_path)?),
    };
    if file.bootstrap.is_none() {
        return Err(match name {
            Some(_) => CkksError::NoBootstrapCircuit(
                name_or_path.to_string(),
                bootstrap_preset_names().join(", "),
            ),
            None => CkksError::ParamsFile {
                origin: name_or_path.to_string(),
                line: None,
                message: "no [bootstrap] table: a bootstrapping workload needs the circuit's \
                          levels (see `tessera params show ark`)"
                    .into(),
            },
        });
    }
    Ok((name, file))
}

/// Names that [`resolve_bootstrap`] accepts as built-ins: each `NAME-boot` file's `NAME`, and
/// the files with a `[bootstrap]` table that have no shorter name.
pub fn bootstrap_preset_names() -> Vec<String> {
    PRESET_FILES
        .iter()
        .filter(|(n, t)| {
            ParamsFile::parse(t, n)
                .map(|f| f.bootstrap.is_some())
                .unwrap_or(false)
        })
        .map(|(n, _)| short_bootstrap_name(n).to_string())
        .collect()
}

/// The name a bootstrapping preset file is asked for by: `ark` for `ark-boot` (there is an
/// `ark` file), `test-boot` for itself.
pub fn short_bootstrap_name(file_name: &str) -> &str {
    file_name
        .strip_suffix("-boot")
        .filter(|s| preset_text(s).is_some())
        .unwrap_or(file_name)
}

fn builtin_origin(name: &str) -> String {
    format!("configs/params/{name}.toml")
}

impl ParamsFile {
    /// A built-in preset by name, or else the TOML file at `name_or_path`.
    pub fn load(name_or_path: &str) -> Result<Self> {
        if let Some(text) = preset_text(name_or_path) {
            return Self::parse(text, &builtin_origin(name_or_path));
        }
        let path = std::path::Path::new(name_or_path);
        if !path.exists() {
            return Err(CkksError::UnknownPreset(
                name_or_path.to_string(),
                format!(
                    "{} (or a path to a TOML parameter file)",
                    preset_file_names().join(", ")
                ),
            ));
        }
        Self::parse(&read_file(path, name_or_path)?, name_or_path)
    }

    /// The checked parameters of this set (primes generated, security checked as its
    /// [`SecurityMode`] says).
    pub fn parameters(&self) -> Result<Parameters> {
        match self.security {
            SecurityMode::ModelOnly => Parameters::new_model_only(self.literal.clone()),
            _ => Parameters::new(self.literal.clone()),
        }
    }

    /// The file form of a set built from a literal (its security mode follows the literal:
    /// `test` when it allows insecurity).
    pub fn from_literal(
        literal: ParametersLiteral,
        bootstrap: Option<BootstrapParameters>,
    ) -> Self {
        let security = if literal.allow_insecure {
            SecurityMode::Test
        } else {
            SecurityMode::Checked
        };
        Self {
            literal,
            security,
            bootstrap,
            model_word_bits: None,
        }
    }

    /// The narrowest machine word (in bits) a simulator may run this set on: its
    /// `model_word_bits`, else its widest prime.
    pub fn required_word_bits(&self, p: &Parameters) -> u32 {
        self.model_word_bits.unwrap_or_else(|| p.max_prime_bits())
    }

    /// Parses and checks a parameter file; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            CkksError::ParamsFile {
                origin: origin.to_string(),
                line,
                message: e.message().trim().to_string(),
            }
        })?;
        let doc = Doc { text, origin };
        doc.known_keys(&table, &[], TOP_KEYS)?;
        let name = doc.string(&table, &["name"], None)?;
        if name.is_empty() || name.len() > 100 || name.chars().any(|c| c.is_control()) {
            return Err(doc.bad(
                &["name"],
                format!("{name:?}"),
                "1 to 100 printable characters",
            ));
        }
        let source = doc.string(&table, &["source"], Some(String::new()))?;
        let log_n = doc.int(&table, &["log_n"], 10, 17, None)? as u32;
        let n = 1i64 << log_n;
        let log_q = doc.runs(&table, "chain")?;
        let key_switching = match doc
            .string(&table, &["key_switching"], Some("hybrid".into()))?
            .as_str()
        {
            "hybrid" => KeySwitching::Hybrid,
            "boosted" => KeySwitching::Boosted,
            other => {
                return Err(doc.bad(
                    &["key_switching"],
                    format!("{other:?}"),
                    "\"hybrid\" (dnum digits) or \"boosted\" (one digit, P >= Q)",
                ))
            }
        };
        // A boosted set may leave its special primes out: they are sized to cover Q.
        let log_p = if key_switching == KeySwitching::Boosted && !table.contains_key("special") {
            boosted_special_bits(&log_q)
        } else {
            doc.runs(&table, "special")?
        };
        let boosted = key_switching == KeySwitching::Boosted;
        let dnum = doc.int(
            &table,
            &["dnum"],
            1,
            log_q.len() as i64,
            boosted.then_some(1),
        )? as usize;
        if boosted && dnum != 1 {
            return Err(doc.bad(
                &["dnum"],
                dnum.to_string(),
                "1 (or absent) with key_switching = \"boosted\": boosted key switching has no digit decomposition",
            ));
        }
        let rescaling = match doc
            .string(&table, &["rescaling"], Some("single".into()))?
            .as_str()
        {
            "single" => Rescaling::SinglePrime,
            "double" => Rescaling::DoublePrime,
            other => {
                return Err(doc.bad(
                    &["rescaling"],
                    format!("{other:?}"),
                    "\"single\" or \"double\"",
                ))
            }
        };
        let max_scale = log_q.iter().copied().max().unwrap_or(1) as i64 * rescaling.primes() as i64;
        let log_default_scale = doc.int(&table, &["log_scale"], 1, max_scale, None)? as u32;
        let sigma = doc.float(&table, &["sigma"], 1e-3, 100.0, Some(3.2))?;
        let dynamic_special = doc.int(&table, &["dynamic_special"], 0, 64, Some(0))? as usize;
        let secret = match doc
            .string(&table, &["secret"], Some("ternary".into()))?
            .as_str()
        {
            "ternary" => {
                if table.contains_key("hamming_weight") {
                    return Err(doc.bad(
                        &["hamming_weight"],
                        "set".into(),
                        "absent with secret = \"ternary\" (write secret = \"sparse\" for a fixed Hamming weight)",
                    ));
                }
                SecretDistribution::Ternary
            }
            "sparse" => SecretDistribution::Sparse {
                hamming_weight: doc.int(&table, &["hamming_weight"], 1, n, None)? as usize,
            },
            other => {
                return Err(doc.bad(
                    &["secret"],
                    format!("{other:?}"),
                    "\"ternary\" or \"sparse\"",
                ))
            }
        };
        let security = match doc
            .string(&table, &["security"], Some("128-bit".into()))?
            .as_str()
        {
            "128-bit" => SecurityMode::Checked,
            "test" => {
                if !name.starts_with("test-") {
                    return Err(doc.bad(
                        &["security"],
                        "\"test\"".into(),
                        "\"128-bit\" or \"model-only\" for a set not named test-* (\"test\" is for test-* sets)",
                    ));
                }
                SecurityMode::Test
            }
            "model-only" => SecurityMode::ModelOnly,
            other => {
                return Err(doc.bad(
                    &["security"],
                    format!("{other:?}"),
                    "\"128-bit\" (checked), \"model-only\" (simulator only, labelled insecure) or \"test\" (test-* sets)",
                ))
            }
        };
        let model_word_bits = match table.get("model_word_bits") {
            None => None,
            Some(_) => Some(doc.int(&table, &["model_word_bits"], 16, 64, None)? as u32),
        };
        let bootstrap = match table.get("bootstrap") {
            None => None,
            Some(toml::Value::Table(_)) => Some(doc.bootstrap(&table, n as usize)?),
            Some(v) => {
                return Err(doc.bad(&["bootstrap"], v.type_str().into(), "a table ([bootstrap])"))
            }
        };
        Ok(Self {
            literal: ParametersLiteral {
                name,
                log_n,
                log_q,
                log_p,
                dnum,
                key_switching,
                log_default_scale,
                secret,
                sigma,
                rescaling,
                dynamic_special,
                source: intern(&source),
                allow_insecure: security == SecurityMode::Test,
            },
            security,
            bootstrap,
            model_word_bits,
        })
    }

    /// The file form: every field written, runs of equal prime sizes merged, so a set read
    /// back from it is the same set.
    pub fn to_toml(&self) -> String {
        use std::fmt::Write;
        let l = &self.literal;
        let mut s = String::new();
        let q = |x: &str| toml::Value::String(x.to_string()).to_string();
        let _ = writeln!(
            s,
            "# Tessera CKKS parameter set (docs/parameters.md). Edit and pass with --params FILE."
        );
        let _ = writeln!(s, "name = {}", q(&l.name));
        let _ = writeln!(s, "source = {}", q(l.source));
        let _ = writeln!(s, "security = {}", q(self.security.as_str()));
        let _ = writeln!(s, "# Ring degree N = 2^log_n.");
        let _ = writeln!(s, "log_n = {}", l.log_n);
        let _ = writeln!(
            s,
            "# Chain primes q_0 .. q_L from the bottom, as runs of equal bit sizes."
        );
        let _ = writeln!(s, "chain = {}", runs_text(&l.log_q));
        let _ = writeln!(
            s,
            "# Special primes p_0 .. p_(K-1) of hybrid key switching."
        );
        let _ = writeln!(s, "special = {}", runs_text(&l.log_p));
        let _ = writeln!(s, "# Key-switching digits, 1 to L+1.");
        let _ = writeln!(s, "dnum = {}", l.dnum);
        if l.key_switching != KeySwitching::Hybrid {
            let _ = writeln!(
                s,
                "# Key-switching algorithm: \"hybrid\" (dnum digits) or \"boosted\" (one digit, P >= Q)."
            );
            let _ = writeln!(s, "key_switching = {}", q(l.key_switching.as_str()));
        }
        let _ = writeln!(
            s,
            "# Extra special primes for per-level (dynamic) decomposition."
        );
        let _ = writeln!(s, "dynamic_special = {}", l.dynamic_special);
        let _ = writeln!(s, "# log2 of the default scale Delta.");
        let _ = writeln!(s, "log_scale = {}", l.log_default_scale);
        let _ = writeln!(
            s,
            "rescaling = {}",
            q(match l.rescaling {
                Rescaling::SinglePrime => "single",
                Rescaling::DoublePrime => "double",
            })
        );
        match l.secret {
            SecretDistribution::Ternary => {
                let _ = writeln!(s, "secret = \"ternary\"");
            }
            SecretDistribution::Sparse { hamming_weight } => {
                let _ = writeln!(s, "secret = \"sparse\"\nhamming_weight = {hamming_weight}");
            }
        }
        let _ = writeln!(s, "sigma = {}", toml::Value::Float(l.sigma));
        if let Some(w) = self.model_word_bits {
            let _ = writeln!(
                s,
                "# The narrowest machine word the simulator may charge these primes at."
            );
            let _ = writeln!(s, "model_word_bits = {w}");
        }
        if let Some(b) = &self.bootstrap {
            let _ = writeln!(s, "\n[bootstrap]");
            let _ = writeln!(s, "cts_levels = {}", b.cts_levels);
            let _ = writeln!(s, "stc_levels = {}", b.stc_levels);
            let _ = writeln!(s, "k_bound = {}", toml::Value::Float(b.k_bound));
            let _ = writeln!(s, "cheb_degree = {}", b.cheb_degree);
            let _ = writeln!(s, "double_angle = {}", b.double_angle);
            match b.encapsulation {
                Some(h) => {
                    let _ = writeln!(s, "encapsulation = {h}");
                }
                None => {
                    let _ = writeln!(s, "# encapsulation absent: no sparse-secret encapsulation");
                }
            }
            let _ = writeln!(s, "of_limb = {}", b.of_limb);
            let _ = writeln!(s, "min_ks = {}", b.min_ks);
            let _ = writeln!(s, "hoisting = {}", b.hoisting);
            let _ = writeln!(s, "double_hoisting = {}", b.double_hoisting);
            if let Some(k) = b.meta_log_scale {
                let _ = writeln!(s, "meta_log_scale = {k}");
            }
            if let Some(k) = b.slots {
                let _ = writeln!(s, "slots = {k}");
            }
        }
        s
    }
}

const TOP_KEYS: &[&str] = &[
    "name",
    "source",
    "security",
    "log_n",
    "chain",
    "special",
    "dnum",
    "key_switching",
    "dynamic_special",
    "log_scale",
    "rescaling",
    "secret",
    "hamming_weight",
    "sigma",
    "model_word_bits",
    "bootstrap",
];

const BOOTSTRAP_KEYS: &[&str] = &[
    "cts_levels",
    "stc_levels",
    "k_bound",
    "cheb_degree",
    "double_angle",
    "encapsulation",
    "of_limb",
    "min_ks",
    "hoisting",
    "double_hoisting",
    "meta_log_scale",
    "slots",
];

/// `[{ bits = 60 }, { bits = 50, count = 23 }]` for `[60, 50 x 23]`.
fn runs_text(bits: &[u32]) -> String {
    let mut runs: Vec<(u32, usize)> = Vec::new();
    for &b in bits {
        match runs.last_mut() {
            Some((rb, c)) if *rb == b => *c += 1,
            _ => runs.push((b, 1)),
        }
    }
    let items: Vec<String> = runs
        .iter()
        .map(|&(b, c)| {
            if c == 1 {
                format!("{{ bits = {b} }}")
            } else {
                format!("{{ bits = {b}, count = {c} }}")
            }
        })
        .collect();
    format!("[{}]", items.join(", "))
}

fn read_file(path: &std::path::Path, origin: &str) -> Result<String> {
    use std::io::Read;
    let io = |message: String| CkksError::ParamsFile {
        origin: origin.to_string(),
        line: None,
        message,
    };
    let meta = std::fs::metadata(path).map_err(|e| io(e.to_string()))?;
    if !meta.is_file() {
        return Err(io(
            "a parameter file must be a regular file (not a directory, FIFO or device)".into(),
        ));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(|e| io(e.to_string()))?
        .take(MAX_PARAMS_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| io(e.to_string()))?;
    if text.len() as u64 > MAX_PARAMS_FILE_BYTES {
        return Err(io(format!(
            "longer than {MAX_PARAMS_FILE_BYTES} bytes (a parameter file is a few kB)"
        )));
    }
    Ok(text)
}

/// One step of a path into the document: a key, or an index into an array.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// Field readers that name the field, its allowed range, the file and the line.
struct Doc<'a> {
    text: &'a str,
    origin: &'a str,
}

impl Doc<'_> {
    fn err_at(&self, path: &[Step], name: String, value: String, allowed: &str) -> CkksError {
        CkksError::ParamsFile {
            origin: self.origin.to_string(),
            line: line_of(self.text, path),
            message: format!("{name} = {value} is invalid: allowed {allowed}"),
        }
    }

    fn bad(&self, path: &[&str], value: String, allowed: &str) -> CkksError {
        let steps: Vec<Step> = path.iter().map(|k| Step::Key(k)).collect();
        self.err_at(&steps, path.join("."), value, allowed)
    }

    fn known_keys(&self, t: &toml::Table, prefix: &[&str], keys: &[&str]) -> Result<()> {
        for k in t.keys() {
            if !keys.contains(&k.as_str()) {
                let path: Vec<&str> = prefix.iter().copied().chain([k.as_str()]).collect();
                return Err(self.bad(
                    &path,
                    "(unknown field)".into(),
                    &format!("one of {}", keys.join(", ")),
                ));
            }
        }
        Ok(())
    }

    fn get<'t>(&self, t: &'t toml::Table, path: &[&str]) -> Option<&'t toml::Value> {
        t.get(*path.last()?)
    }

    fn int(
        &self,
        t: &toml::Table,
        path: &[&str],
        lo: i64,
        hi: i64,
        default: Option<i64>,
    ) -> Result<i64> {
        let allowed = format!("an integer from {lo} to {hi}");
        match (self.get(t, path), default) {
            (None, Some(d)) => Ok(d),
            (None, None) => Err(self.bad(path, "(missing)".into(), &allowed)),
            (Some(toml::Value::Integer(v)), _) if (lo..=hi).contains(v) => Ok(*v),
            (Some(v), _) => Err(self.bad(path, v.to_string(), &allowed)),
        }
    }

    fn float(
        &self,
        t: &toml::Table,
        path: &[&str],
        lo: f64,
        hi: f64,
        default: Option<f64>,
    ) -> Result<f64> {
        let allowed = format!("a finite number from {lo} to {hi}");
        let v = match (self.get(t, path), default) {
            (None, Some(d)) => return Ok(d),
            (None, None) => return Err(self.bad(path, "(missing)".into(), &allowed)),
            (Some(toml::Value::Float(v)), _) => *v,
            (Some(toml::Value::Integer(v)), _) => *v as f64,
            (Some(v), _) => return Err(self.bad(path, v.to_string(), &allowed)),
        };
        if v.is_finite() && (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(self.bad(path, v.to_string(), &allowed))
        }
    }

    fn string(&self, t: &toml::Table, path: &[&str], default: Option<String>) -> Result<String> {
        match (self.get(t, path), default) {
            (None, Some(d)) => Ok(d),
            (None, None) => Err(self.bad(path, "(missing)".into(), "a string")),
            (Some(toml::Value::String(s)), _) => Ok(s.clone()),
            (Some(v), _) => Err(self.bad(path, v.to_string(), "a string")),
        }
    }

    fn boolean(&self, t: &toml::Table, path: &[&str], default: bool) -> Result<bool> {
        match self.get(t, path) {
            None => Ok(default),
            Some(toml::Value::Boolean(b)) => Ok(*b),
            Some(v) => Err(self.bad(path, v.to_string(), "true or false")),
        }
    }

    /// `key = [{ bits = B, count = C }, ...]`: the bit sizes, run by run.
    fn runs(&self, t: &toml::Table, key: &str) -> Result<Vec<u32>> {
        let shape = "a non-empty array of { bits = 17 to 61, count = 1 to 1024 } tables";
        let items = match t.get(key) {
            Some(toml::Value::Array(a)) if !a.is_empty() => a,
            Some(v) => return Err(self.bad(&[key], v.to_string(), shape)),
            None => return Err(self.bad(&[key], "(missing)".into(), shape)),
        };
        let mut bits = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let here = [Step::Key(key), Step::Index(i)];
            let name = |f: &str| format!("{key}[{i}].{f}");
            let toml::Value::Table(run) = item else {
                return Err(self.err_at(&here, format!("{key}[{i}]"), item.to_string(), shape));
            };
            if let Some(k) = run.keys().find(|k| !matches!(k.as_str(), "bits" | "count")) {
                return Err(self.err_at(
                    &here,
                    format!("{key}[{i}].{k}"),
                    "(unknown field)".into(),
                    "bits and count",
                ));
            }
            // Up to 61 bits (the math layer's word limit); from 17 so that 2N | q - 1 can hold
            // at N = 2^16.
            let b = match run.get("bits") {
                Some(toml::Value::Integer(b)) if (17..=61).contains(b) => *b as u32,
                v => {
                    return Err(self.err_at(
                        &here,
                        name("bits"),
                        v.map_or("(missing)".into(), |v| v.to_string()),
                        "an integer from 17 to 61",
                    ))
                }
            };
            let c = match run.get("count") {
                None => 1,
                Some(toml::Value::Integer(c)) if (1..=MAX_RUN).contains(c) => *c as usize,
                Some(v) => {
                    return Err(self.err_at(
                        &here,
                        name("count"),
                        v.to_string(),
                        &format!("an integer from 1 to {MAX_RUN}"),
                    ))
                }
            };
            if bits.len() + c > MAX_RUN as usize {
                return Err(self.err_at(
                    &here,
                    format!("{key} (total)"),
                    format!("{} primes", bits.len() + c),
                    &format!("at most {MAX_RUN} primes"),
                ));
            }
            bits.extend(std::iter::repeat_n(b, c));
        }
        Ok(bits)
    }

    fn bootstrap(&self, top: &toml::Table, n: usize) -> Result<BootstrapParameters> {
        let toml::Value::Table(t) = &top["bootstrap"] else {
            unreachable!("checked by the caller")
        };
        self.known_keys(t, &["bootstrap"], BOOTSTRAP_KEYS)?;
        let max_log_slots = (n / 2).trailing_zeros() as i64;
        let levels = |k: &str| self.int(t, &["bootstrap", k], 1, max_log_slots, None);
        let opt = |k: &str, lo: i64, hi: i64| -> Result<Option<i64>> {
            match t.get(k) {
                None => Ok(None),
                Some(_) => self.int(t, &["bootstrap", k], lo, hi, None).map(Some),
            }
        };
        let slots = opt("slots", 2, n as i64 / 2)?;
        if let Some(s) = slots {
            if !(s as u64).is_power_of_two() {
                return Err(self.bad(
                    &["bootstrap", "slots"],
                    s.to_string(),
                    &format!("a power of two from 2 to N/2 = {}", n / 2),
                ));
            }
        }
        Ok(BootstrapParameters {
            cts_levels: levels("cts_levels")? as usize,
            stc_levels: levels("stc_levels")? as usize,
            k_bound: self.float(t, &["bootstrap", "k_bound"], 1.0, 1e6, None)?,
            cheb_degree: self.int(t, &["bootstrap", "cheb_degree"], 2, 255, None)? as usize,
            double_angle: self.int(t, &["bootstrap", "double_angle"], 0, 16, None)? as usize,
            encapsulation: opt("encapsulation", 1, n as i64)?.map(|h| h as usize),
            of_limb: self.boolean(t, &["bootstrap", "of_limb"], false)?,
            min_ks: self.boolean(t, &["bootstrap", "min_ks"], false)?,
            hoisting: self.boolean(t, &["bootstrap", "hoisting"], true)?,
            double_hoisting: self.boolean(t, &["bootstrap", "double_hoisting"], false)?,
            meta_log_scale: opt("meta_log_scale", 1, 40)?.map(|k| k as u32),
            slots: slots.map(|s| s as usize),
        })
    }
}

/// The line `path` is written on in `text`: the key's line for a table field, the element's
/// for an array index. `None` when the text does not write it.
fn line_of(text: &str, path: &[Step]) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let doc = DeTable::parse(text).ok()?;
    let mut value: DeValue = DeValue::Table(doc.into_inner());
    let mut span = 0..0;
    for step in path {
        let next = match (step, value) {
            (Step::Key(k), DeValue::Table(t)) => {
                let (key, v) = t
                    .into_iter()
                    .find(|(key, _)| key.get_ref().as_ref() == *k)?;
                span = key.span();
                v.into_inner()
            }
            (Step::Index(i), DeValue::Array(a)) => {
                let item = a.into_iter().nth(*i)?;
                span = item.span();
                item.into_inner()
            }
            _ => return None,
        };
        value = next;
    }
    Some(text[..span.start.min(text.len())].matches('\n').count() + 1)
}
