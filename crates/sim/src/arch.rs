//! Machine descriptions of every kind, by name or file: vector machines ([`Machine`]: ARK
//! and designs like it) and single-PE machines ([`PeMachine`]: CoFHEE). A TOML file says
//! which with its top-level `model` key (`"pe"`; absent: vector).

use crate::cofhee::{simulate_pe, PeMachine};
use crate::error::SimError;
use crate::machine::Machine;
use crate::report::Report;
use serde::{de::DeserializeOwned, Serialize};

/// Built-in machine descriptions (the files in `configs/`).
pub const BUILTIN: &[(&str, &str)] = &[
    ("ark", include_str!("../../../configs/ark.toml")),
    ("cofhee", include_str!("../../../configs/cofhee.toml")),
    ("reed", include_str!("../../../configs/reed.toml")),
    (
        "reed-512x128",
        include_str!("../../../configs/reed-512x128.toml"),
    ),
    ("reed-28nm", include_str!("../../../configs/reed-28nm.toml")),
    (
        "reed-512x128-28nm",
        include_str!("../../../configs/reed-512x128-28nm.toml"),
    ),
    ("cifher", include_str!("../../../configs/cifher.toml")),
    ("cifher-8", include_str!("../../../configs/cifher-8.toml")),
    ("cifher-16", include_str!("../../../configs/cifher-16.toml")),
    ("cifher-32", include_str!("../../../configs/cifher-32.toml")),
    ("cifher-64", include_str!("../../../configs/cifher-64.toml")),
    ("h3", include_str!("../../../configs/h3.toml")),
    ("h3-hbm", include_str!("../../../configs/h3-hbm.toml")),
    ("h3-ddr4", include_str!("../../../configs/h3-ddr4.toml")),
];

/// A machine of either kind (loaded a handful of times per run: the size difference
/// between the variants does not matter).
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Arch {
    /// A vector machine (ARK, REED, CiFHER, H3): clusters of functional units.
    Vector(Machine),
    /// A single-PE machine driven by host commands (CoFHEE).
    Pe(PeMachine),
}

fn parse<T: DeserializeOwned>(text: &str, origin: &str) -> Result<T, SimError> {
    toml::from_str(text).map_err(|e| SimError::Config {
        origin: origin.to_string(),
        message: e.to_string(),
    })
}

impl Arch {
    /// Parses a description, dispatching on its `model` key, and checks its ranges. A
    /// description with a top-level `extends` key is read over the one it names (see
    /// [`resolve_extends`]); a relative path there is taken from the working directory.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self, SimError> {
        Self::from_toml_in(text, origin, None)
    }

    /// [`Arch::from_toml`] for a file in `dir`: an `extends` path is taken relative to it.
    fn from_toml_in(
        text: &str,
        origin: &str,
        dir: Option<&std::path::Path>,
    ) -> Result<Self, SimError> {
        let v = resolve_extends(parse(text, origin)?, origin, dir, 0)?;
        let typed = |e: toml::de::Error| SimError::Config {
            origin: origin.to_string(),
            message: e.to_string(),
        };
        let arch = match v.get("model").and_then(|m| m.as_str()) {
            Some("pe") => v
                .try_into()
                .map_err(typed)
                .and_then(|m: PeMachine| m.validate().map(|_| Arch::Pe(m))),
            None | Some("vector") => v
                .try_into()
                .map_err(typed)
                .and_then(|m: Machine| m.validate().map(|_| Arch::Vector(m))),
            Some(other) => Err(SimError::Invalid {
                name: "model",
                value: other.to_string(),
                allowed: "\"vector\" (default) or \"pe\"".into(),
            }),
        };
        // A range or type error names the file of the `extends` chain that writes the value,
        // and its line.
        arch.map_err(|e| crate::origin::locate_in_chain(e, origin, text, dir))
    }

    /// A built-in name or a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<Self, SimError> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Self::from_toml(text, name_or_path);
        }
        let path = std::path::Path::new(name_or_path);
        if !path.exists() {
            return Err(SimError::Invalid {
                name: "arch",
                value: name_or_path.to_string(),
                allowed: format!(
                    "a built-in machine ({}) or a path to a TOML machine description",
                    BUILTIN
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        let text = read_description(path, name_or_path)?;
        Self::from_toml_in(&text, name_or_path, path.parent())
    }

    /// [`Arch::load`] with `KEY=VALUE` overrides applied in order (`--set`).
    ///
    /// ```
    /// use tessera_sim::arch::Arch;
    /// let a = Arch::load_with("ark", &["chip.clusters=8".into()])?;
    /// let Arch::Vector(m) = &a else { unreachable!("ARK is a vector machine") };
    /// assert_eq!((a.name(), m.chip.clusters), ("ark", 8));
    /// // A value out of range names the key and what is allowed.
    /// let e = Arch::load_with("ark", &["chip.clusters=0".into()]).unwrap_err();
    /// assert!(e.to_string().contains("chip.clusters"));
    /// # Ok::<(), tessera_sim::SimError>(())
    /// ```
    pub fn load_with(name_or_path: &str, sets: &[String]) -> Result<Self, SimError> {
        Self::load(name_or_path)?.with_settings(sets)
    }

    /// This machine with `KEY=VALUE` overrides applied in order, each re-validated.
    pub fn with_settings(self, sets: &[String]) -> Result<Self, SimError> {
        let mut a = self;
        for s in sets {
            let (k, v) = s.split_once('=').ok_or_else(|| SimError::Invalid {
                name: "--set",
                value: s.clone(),
                allowed: "KEY=VALUE with KEY a dotted path such as chip.clusters".into(),
            })?;
            a = match a {
                Arch::Vector(m) => Arch::Vector(m.with_setting(k.trim(), v.trim())?),
                Arch::Pe(m) => {
                    let (k, v) = (k.trim(), v.trim());
                    let p: PeMachine = set_value(&m, &m.name, k, v)?;
                    p.validate().map_err(|e| at_setting(e, &m.name, k, v))?;
                    Arch::Pe(p)
                }
            };
        }
        Ok(a)
    }

    /// The machine's name.
    pub fn name(&self) -> &str {
        match self {
            Arch::Vector(m) => &m.name,
            Arch::Pe(m) => &m.name,
        }
    }

    /// Simulates `instrs` and reports.
    pub fn simulate(
        &self,
        workload: &str,
        instrs: &[tessera_backend::trace::Instr],
    ) -> Result<Report, SimError> {
        match self {
            Arch::Vector(m) => crate::simulate(m, workload, instrs),
            Arch::Pe(m) => simulate_pe(m, workload, instrs),
        }
    }

    /// The additive model ([`crate::additive::operations`]) in `mode`: defined for one task
    /// spread over a vector machine (`latency`), an error otherwise.
    pub fn sum_of_operations(
        &self,
        mode: &str,
        instrs: &[tessera_backend::trace::Instr],
    ) -> Result<crate::additive::Additive, SimError> {
        match self {
            Arch::Vector(m) if mode == "latency" => crate::additive::operations(m, instrs),
            _ => Err(SimError::Unsupported(
                "the additive model (--additive, additive=True) outside latency mode on vector \
                 machines"
                    .into(),
            )),
        }
    }
}

fn read_description(path: &std::path::Path, origin: &str) -> Result<String, SimError> {
    crate::limits::read_regular_file(path, "a machine description", MAX_DESCRIPTION_BYTES).map_err(
        |e| match e {
            SimError::Io { message, .. } => SimError::Io {
                path: origin.to_string(),
                message,
            },
            e => e,
        },
    )
}

pub use crate::limits::MAX_DESCRIPTION_BYTES;

/// A range error of a value set with `--set KEY=VALUE` on machine `name`, saying so.
pub fn at_setting(e: SimError, name: &str, key: &str, value: &str) -> SimError {
    crate::limits::locate(e, &format!("'{name}' with --set {key}={value}"), None)
}

/// How deep `extends` chains may go (a guard against cycles).
const MAX_EXTENDS_DEPTH: usize = 8;

/// A description with its `extends` chain folded in: a design that differs from another in
/// a few values (a process node's areas, a memory size) names the other with
/// `extends = "reed"` (a built-in name or a TOML path) and writes only what changes.
///
/// The child is merged over the base: tables key by key, recursively; arrays of tables whose
/// entries carry a `name` (the `[[component]]` list) entry by entry, matching names merged,
/// new names appended, and an entry with `remove = true` deleting its namesake; every other
/// value replaced.
pub fn resolve_extends(
    mut v: toml::Value,
    origin: &str,
    dir: Option<&std::path::Path>,
    depth: usize,
) -> Result<toml::Value, SimError> {
    let Some(table) = v.as_table_mut() else {
        return Ok(v);
    };
    let Some(base) = table.remove("extends") else {
        return Ok(v);
    };
    let invalid = |allowed: String| SimError::Invalid {
        name: "extends",
        value: base.to_string(),
        allowed,
    };
    if depth >= MAX_EXTENDS_DEPTH {
        return Err(invalid(format!(
            "a chain of at most {MAX_EXTENDS_DEPTH} descriptions (is there a cycle?)"
        )));
    }
    let Some(name) = base.as_str() else {
        return Err(invalid(
            "a built-in machine name or a TOML path, as a string".into(),
        ));
    };
    let (text, base_dir) = match BUILTIN.iter().find(|(n, _)| *n == name) {
        Some((_, text)) => (text.to_string(), None),
        None => {
            let path = resolve_extends_base(name, dir);
            if !path.exists() {
                return Err(invalid(format!(
                    "a built-in machine ({}) or an existing TOML file (from {origin})",
                    BUILTIN
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            let text = read_description(&path, name)?;
            (text, path.parent().map(std::path::Path::to_path_buf))
        }
    };
    let base = resolve_extends(parse(&text, name)?, name, base_dir.as_deref(), depth + 1)?;
    merge_over(base, v)
}

/// The path `extends = name` reads when `name` is not built in: relative to the extending
/// file's directory `dir` (or the working directory).
pub fn resolve_extends_base(name: &str, dir: Option<&std::path::Path>) -> std::path::PathBuf {
    dir.map_or_else(|| std::path::PathBuf::from(name), |d| d.join(name))
}

/// `over` merged onto `base` (see [`resolve_extends`]). An entry of a named list with
/// `remove = true` deletes the base's entry of that name (an error if there is none).
fn merge_over(base: toml::Value, over: toml::Value) -> Result<toml::Value, SimError> {
    use std::collections::{HashMap, VecDeque};
    use toml::Value;
    let named = |a: &[Value]| {
        a.iter()
            .all(|e| e.get("name").and_then(Value::as_str).is_some())
    };
    Ok(match (base, over) {
        (Value::Table(mut b), Value::Table(o)) => {
            for (k, ov) in o {
                let merged = match b.remove(&k) {
                    Some(bv) => merge_over(bv, ov)?,
                    None => ov,
                };
                b.insert(k, merged);
            }
            Value::Table(b)
        }
        (Value::Array(b), Value::Array(o)) if named(&b) && named(&o) => {
            // Entries by name, in order (a name may repeat: the first remaining entry of a
            // name is the one merged or removed), so merging k entries over n costs
            // O(n + k), not the O(n k) of a search per entry.
            let name_of = |e: &Value| e.get("name").and_then(Value::as_str).map(str::to_string);
            let mut slots: Vec<Option<Value>> = Vec::with_capacity(b.len() + o.len());
            let mut at: HashMap<String, VecDeque<usize>> = HashMap::new();
            for be in b {
                if let Some(n) = name_of(&be) {
                    at.entry(n).or_default().push_back(slots.len());
                }
                slots.push(Some(be));
            }
            for oe in o {
                let name = name_of(&oe).unwrap_or_default();
                let remove = oe.get("remove").and_then(Value::as_bool) == Some(true);
                let found = at.get(&name).and_then(|q| q.front().copied());
                match (found, remove) {
                    (Some(i), true) => {
                        slots[i] = None;
                        if let Some(q) = at.get_mut(&name) {
                            q.pop_front();
                        }
                    }
                    (None, true) => {
                        return Err(SimError::Invalid {
                            name: "remove",
                            value: Value::String(name).to_string(),
                            allowed: "the name of an entry the extended description has".into(),
                        })
                    }
                    (Some(i), false) => {
                        let be = slots[i].take().unwrap_or(Value::Boolean(false));
                        slots[i] = Some(merge_over(be, oe)?);
                    }
                    (None, false) => {
                        at.entry(name).or_default().push_back(slots.len());
                        slots.push(Some(oe));
                    }
                }
            }
            Value::Array(slots.into_iter().flatten().collect())
        }
        (_, o) => o,
    })
}

/// Sets the last key of `parts`, absent from its table in `doc` (an optional field the
/// description omits, such as `memory.register_file.capacity_mb`, so that sweeps and `--set`
/// can give it): the value is tried as an integer, a float, a boolean and a string, in order, and the first the field's type accepts is kept; a
/// key the type does not have is refused as for [`set_value`].
fn set_absent<T: DeserializeOwned>(
    mut doc: toml::Value,
    parts: &[&str],
    key: &str,
    value: &str,
    missing: impl Fn() -> SimError,
) -> Result<T, SimError> {
    let (last, path) = parts.split_last().ok_or_else(&missing)?;
    let candidates: Vec<toml::Value> = [
        value.parse::<i64>().ok().map(toml::Value::Integer),
        value.parse::<f64>().ok().map(toml::Value::Float),
        value.parse::<bool>().ok().map(toml::Value::Boolean),
        Some(toml::Value::String(value.to_string())),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut first_err = None;
    for c in candidates {
        let mut cur = &mut doc;
        for p in path {
            cur = cur.get_mut(*p).ok_or_else(&missing)?;
        }
        let table = cur.as_table_mut().ok_or_else(&missing)?;
        table.insert(last.to_string(), c);
        match doc.clone().try_into::<T>() {
            Ok(t) => return Ok(t),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    let e = first_err.map(|e| e.message().trim().to_string());
    if e.as_deref().is_some_and(|m| m.contains("unknown field")) {
        return Err(missing());
    }
    Err(SimError::Invalid {
        name: "setting",
        value: format!("{key}={value}"),
        allowed: format!(
            "a value the field's type accepts ({})",
            e.unwrap_or_default()
        ),
    })
}

/// `v` with the value at dotted path `key` replaced by `value` parsed as the same type.
pub fn set_value<T: Serialize + DeserializeOwned>(
    v: &T,
    origin: &str,
    key: &str,
    value: &str,
) -> Result<T, SimError> {
    let cfg = |e: String| SimError::Config {
        origin: origin.to_string(),
        message: e,
    };
    let mut doc = toml::Value::try_from(v).map_err(|e| cfg(e.to_string()))?;
    let missing = || SimError::Invalid {
        name: "setting",
        value: key.to_string(),
        allowed: "a dotted path to an existing value of the machine description".into(),
    };
    let mut cur = &mut doc;
    let parts: Vec<&str> = key.split('.').collect();
    for p in &parts[..parts.len() - 1] {
        cur = cur.get_mut(*p).ok_or_else(missing)?;
    }
    let last = parts[parts.len() - 1];
    if cur.get(last).is_none() {
        return set_absent(doc, &parts, key, value, missing);
    }
    let slot = cur.get_mut(last).ok_or_else(missing)?;
    let parsed: Option<toml::Value> = match slot {
        toml::Value::Integer(_) => value.parse::<i64>().map(toml::Value::Integer).ok(),
        toml::Value::Float(_) => value.parse::<f64>().map(toml::Value::Float).ok(),
        toml::Value::Boolean(_) => value.parse::<bool>().map(toml::Value::Boolean).ok(),
        toml::Value::String(_) => Some(toml::Value::String(value.to_string())),
        _ => None,
    };
    *slot = parsed.ok_or_else(|| SimError::Invalid {
        name: "setting",
        value: format!("{key}={value}"),
        allowed: format!("a value of the same type as the current {slot}"),
    })?;
    doc.try_into()
        .map_err(|e: toml::de::Error| SimError::Invalid {
            name: "setting",
            value: format!("{key}={value}"),
            allowed: format!("a value the field's type accepts ({})", e.message().trim()),
        })
}
