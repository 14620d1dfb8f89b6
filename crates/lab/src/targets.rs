//! The papers' targets as data: one TOML file per paper in `configs/targets/`, one `[[row]]`
//! per figure. A row states the paper's value, its band (or none: reported), whether it is an
//! `input` (restates a figure the model was built from, such as an area total summed from the
//! paper's own component table) or a `prediction`, its citation, and what to measure
//! ([`Measure`]). `reproduce` maps each measure to a simulation; nothing of a paper's result
//! is in Rust.

use crate::error::{LabError, Result};
use serde::{Deserialize, Serialize};

/// The built-in target files, by paper, in `tessera reproduce`'s order.
pub const BUILTIN: &[(&str, &str)] = &[
    ("ark", include_str!("../../../configs/targets/ark.toml")),
    (
        "cofhee",
        include_str!("../../../configs/targets/cofhee.toml"),
    ),
    ("reed", include_str!("../../../configs/targets/reed.toml")),
    (
        "cifher",
        include_str!("../../../configs/targets/cifher.toml"),
    ),
    ("h3", include_str!("../../../configs/targets/h3.toml")),
];

/// Whether a row restates a figure the model was built from or predicts one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A figure the model was built from (e.g. an area total of the paper's own components).
    Input,
    /// A figure nothing of which entered the model.
    Prediction,
}

/// What a measurement returns ([`crate::measure`] computes each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Chip area from the machine's components and counts.
    AreaMm2,
    /// Peak power from the machine's components and counts.
    PeakPowerW,
    /// Chip area predicted from the machine's units, memories and node by the component
    /// model ([`tessera_sim::area`]); the paper's component table is not read.
    PredictedAreaMm2,
    /// Peak power predicted the same way.
    PredictedPeakPowerW,
    /// Area of the per-cluster components, per cluster.
    ClusterAreaMm2,
    /// Sum of the listed components' own areas ([`Measure::only`] / [`Measure::except`]),
    /// times the cluster count with [`Measure::times_clusters`].
    ComponentsAreaMm2,
    /// The same for peak power.
    ComponentsPowerW,
    /// Simulated time.
    TimeS,
    TimeMs,
    /// Time divided by the levels the workload leaves (bootstrapping's usable levels).
    TimePerLevelMs,
    /// Time per usable level per slot.
    TimePerLevelSlotNs,
    /// ARK's T_A.S.: bootstrapping plus HMult at every level it leaves, per level per slot
    /// (ark.md VI-B); HMult recorded at [`Measure::hmult_params`].
    TasNs,
    /// A program's time per unit of its window (HELR: per iteration).
    TimePerUnitMs,
    /// A program's time per whole run: time per unit of its window times the units of one
    /// run (sort: the network's steps; HELR: its iterations).
    TimePerRunMs,
    /// The same in seconds.
    TimePerRunS,
    /// A program's units per minute in throughput mode (LoLa: images per minute).
    UnitsPerMinute,
    /// Simulated cycles (single-PE models).
    Cycles,
    AvgPowerW,
    AvgPowerMw,
    /// The additive model (sum of the operations' warm times).
    AdditiveMs,
    /// Bytes between clusters (cores, chiplets).
    ClusterToClusterBytes,
    TasksPerMinute,
    /// Key-switching key memory at the top level, schoolbook (one limb per digit, K = 1).
    KskSchoolbookMb,
    /// The same with dynamic decomposition (h3.md Algorithm 2).
    KskDynamicMb,
    /// Key-switch computation saved by dynamic decomposition over all levels.
    KeyswitchSavedPct,
    /// 1 when the key-switch working set fits on chip at the top level, 2 otherwise.
    KeyswitchFlowCase,
}

impl Metric {
    /// Whether the metric simulates a workload (and so needs one).
    pub fn needs_workload(self) -> bool {
        !matches!(
            self,
            Metric::AreaMm2
                | Metric::PeakPowerW
                | Metric::PredictedAreaMm2
                | Metric::PredictedPeakPowerW
                | Metric::ClusterAreaMm2
                | Metric::ComponentsAreaMm2
                | Metric::ComponentsPowerW
                | Metric::KskSchoolbookMb
                | Metric::KskDynamicMb
                | Metric::KeyswitchSavedPct
                | Metric::KeyswitchFlowCase
        )
    }
}

/// How a row combines its measure with its baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compare {
    /// measure / baseline.
    Ratio,
    /// baseline / measure (a speed-up when both are times).
    Speedup,
    /// 100 (1 - measure / baseline).
    ReductionPct,
}

/// What to measure: a machine (with overrides), a workload and its options, and a metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measure {
    pub arch: String,
    #[serde(default)]
    pub sets: Vec<String>,
    pub metric: Metric,
    pub workload: Option<String>,
    pub params: Option<String>,
    pub level: Option<usize>,
    /// A program's size.
    pub size: Option<usize>,
    #[serde(default)]
    pub min_ks: bool,
    #[serde(default)]
    pub of_limb: bool,
    #[serde(default)]
    pub streamed_keyswitch: bool,
    /// Timed warm (inputs on chip, results left there).
    #[serde(default)]
    pub warm: bool,
    /// `latency` (default) or `throughput`.
    pub mode: Option<String>,
    /// Only the first tower of a 128-bit workload (cofhee.md Table V times single commands).
    #[serde(default)]
    pub one_tower: bool,
    /// An unbounded scratchpad (no ciphertext spills: h3.md 3.1's accounting).
    #[serde(default)]
    pub unbounded_scratchpad: bool,
    /// [`Metric::TasNs`]: the parameter set of the HMult levels.
    pub hmult_params: Option<String>,
    /// Component names for the component metrics.
    #[serde(default)]
    pub only: Vec<String>,
    #[serde(default)]
    pub except: Vec<String>,
    #[serde(default)]
    pub times_clusters: bool,
    /// Memory (GB) the recording needs; a host with less available gets a row saying so.
    pub memory_gb: Option<f64>,
    /// The measure this one is compared with ([`Row::compare`]); its template values are
    /// available as `{baseline_NAME}`.
    pub baseline: Option<Box<Measure>>,
}

/// One target.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// The figure; `{name}` / `{name:.N}` are filled from the measurement (see
    /// docs/simulator.md, "Targets as data").
    pub item: String,
    pub unit: String,
    /// The paper's value (absent: the model's figure is reported alone).
    pub paper: Option<f64>,
    /// The allowed band of model / paper (absent: reported, not a target).
    pub band: Option<[f64; 2]>,
    pub kind: Kind,
    /// The paper's section or table, and notes; templated like `item`.
    pub cite: String,
    pub measure: Measure,
    /// How the measure combines with its baseline.
    pub compare: Option<Compare>,
    /// In the extended group: run by `tessera reproduce --extended` only, for rows whose
    /// recording alone takes more than a few seconds of CPU (a whole ResNet-20 inference), so
    /// the default `reproduce` stays quick.
    #[serde(default)]
    pub extended: bool,
}

/// A paper's target file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetFile {
    pub paper: String,
    #[serde(rename = "row")]
    pub rows: Vec<Row>,
}

impl TargetFile {
    /// The file without its extended rows ([`Row::extended`]) unless `extended`.
    pub fn group(mut self, extended: bool) -> Self {
        self.rows.retain(|r| extended || !r.extended);
        self
    }
}

/// Parses and checks a target file; `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<TargetFile> {
    let err = |row: Option<usize>, item: &str, message: String| LabError::Target {
        file: origin.into(),
        row,
        item: item.into(),
        message,
    };
    let f: TargetFile = toml::from_str(text).map_err(|e| {
        // toml's message names the line; the row is the `[[row]]` tables above it.
        let row = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches("[[row]]").count())
            .filter(|&r| r > 0);
        err(row, "", e.message().to_string())
    })?;
    for (i, r) in f.rows.iter().enumerate() {
        check_row(r).map_err(|m| err(Some(i + 1), &r.item, m))?;
    }
    Ok(f)
}

/// A row's values and its measure's names, checked: a band of two finite positive bounds in
/// order, with a paper value to compare against; a finite paper value; a known machine and
/// parameter set; the options its metric needs.
fn check_row(r: &Row) -> std::result::Result<(), String> {
    if let Some(p) = r.paper {
        if !p.is_finite() || p == 0.0 {
            return Err(format!(
                "paper = {p}: allowed a finite, non-zero number (or no paper value)"
            ));
        }
    }
    if let Some([lo, hi]) = r.band {
        if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= hi) {
            return Err(format!(
                "band = [{lo}, {hi}]: allowed [lo, hi] with 0 < lo <= hi, finite (a ratio model / paper)"
            ));
        }
        if r.paper.is_none() {
            return Err("band without a paper value: a band bounds model / paper".into());
        }
    }
    if r.compare.is_some() && r.measure.baseline.is_none() {
        return Err("compare without a measure.baseline".into());
    }
    check_measure(&r.measure)?;
    if let Some(b) = &r.measure.baseline {
        check_measure(b).map_err(|e| format!("measure.baseline: {e}"))?;
    }
    Ok(())
}

fn check_measure(m: &Measure) -> std::result::Result<(), String> {
    tessera_sim::arch::Arch::load(&m.arch).map_err(|e| format!("measure.arch: {e}"))?;
    if let Some(p) = &m.params {
        if !known_params(p) {
            return Err(format!(
                "measure.params = '{p}': allowed a CKKS preset ({}), a program parameter set ({}, {}) or a 128-bit set (cofhee-n12, cofhee-n13)",
                tessera_ckks::params::preset_names().join(", "),
                tessera_programs::setup::PARAMETER_SETS.join(", "),
                tessera_programs::lola::PARAMETER_SETS.join(", ")
            ));
        }
    }
    if let Some(mode) = &m.mode {
        crate::request::Mode::parse(mode).map_err(|e| format!("measure.mode: {e}"))?;
    }
    if m.metric.needs_workload() && m.workload.is_none() {
        return Err(format!(
            "measure.metric {:?} needs a measure.workload",
            m.metric
        ));
    }
    if m.metric == Metric::TasNs && m.hmult_params.is_none() {
        return Err("measure.metric tas_ns needs measure.hmult_params".into());
    }
    if let Some(g) = m.memory_gb {
        if !(g.is_finite() && g > 0.0) {
            return Err(format!(
                "measure.memory_gb = {g}: allowed a positive number"
            ));
        }
    }
    Ok(())
}

/// A parameter set some recorder knows.
pub fn known_params(p: &str) -> bool {
    tessera_ckks::params::preset_names().contains(&p)
        || tessera_programs::setup::PARAMETER_SETS.contains(&p)
        || tessera_programs::lola::PARAMETER_SETS.contains(&p)
        || tessera_programs::bfv_apps::cryptonets::PARAMETER_SETS.contains(&p)
        || tessera_programs::bfv_apps::lr_inference::PARAMETER_SETS.contains(&p)
        || crate::bfv::CIPHERTEXT_PRESETS.contains(&p)
        || tessera_programs::workloads::wide::wide_params(p).is_ok()
        || tessera_ckks::bootstrap::BootstrapParameters::preset(p).is_ok()
}

/// The target file of a built-in paper.
pub fn builtin(paper: &str) -> Result<TargetFile> {
    let (_, text) = BUILTIN.iter().find(|(p, _)| *p == paper).ok_or_else(|| {
        tessera_sim::SimError::Invalid {
            name: "paper",
            value: paper.into(),
            allowed: BUILTIN
                .iter()
                .map(|(p, _)| *p)
                .collect::<Vec<_>>()
                .join(", "),
        }
    })?;
    parse(text, &format!("configs/targets/{paper}.toml"))
}

/// Fills `{name}` and `{name:.N}` in `template` from `values` (numbers) and `words`
/// (strings); an unknown name is an error naming it.
///
/// ```
/// use tessera_lab::targets::fill;
/// let s = fill("took {t:.2} ms, {n} levels, {f}", &[("t", 1.2345), ("n", 15.0)], &[("f", "OnChip".into())]).unwrap();
/// assert_eq!(s, "took 1.23 ms, 15 levels, OnChip");
/// assert!(fill("{nope}", &[], &[]).is_err());
/// ```
pub fn fill(
    template: &str,
    values: &[(&str, f64)],
    words: &[(&str, String)],
) -> std::result::Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find('}')
            .ok_or_else(|| format!("unclosed '{{' in '{template}'"))?
            + start;
        let field = &rest[start + 1..end];
        let (name, decimals) = match field.split_once(":.") {
            Some((n, d)) => (
                n,
                Some(
                    d.parse::<usize>()
                        .map_err(|_| format!("'{{{field}}}': allowed {{name}} or {{name:.N}}"))?,
                ),
            ),
            None => (field, None),
        };
        if let Some((_, v)) = values.iter().find(|(n, _)| *n == name) {
            match decimals {
                Some(d) => out.push_str(&format!("{v:.d$}")),
                None => out.push_str(&format!("{v}")),
            }
        } else if let Some((_, w)) = words.iter().find(|(n, _)| *n == name) {
            out.push_str(w);
        } else {
            return Err(format!(
                "unknown template value '{{{name}}}' in '{template}'"
            ));
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The template names `template` uses.
pub fn placeholders(template: &str) -> Vec<String> {
    let mut v = Vec::new();
    let mut rest = template;
    while let Some(s) = rest.find('{') {
        let Some(e) = rest[s..].find('}') else { break };
        let f = &rest[s + 1..s + e];
        v.push(f.split_once(":.").map(|(n, _)| n).unwrap_or(f).to_string());
        rest = &rest[s + e + 1..];
    }
    v
}
