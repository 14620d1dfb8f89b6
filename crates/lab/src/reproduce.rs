//! Calibration targets: the papers' figures next to the model's, with the ratio, hit or miss.
//! The rows are data (`configs/targets/*.toml`, [`crate::targets`]); the model never sees a
//! paper's result, these rows only compare. The tally counts inputs (figures the model was
//! built from) and predictions apart.

use crate::error::Result;
use crate::measure::{report_key, trace_key, Lab, Measured, NotRun};
use crate::targets::{self, fill, placeholders, Compare, Kind, Metric, Row, TargetFile};
use serde::Serialize;
use std::collections::HashMap;

/// Papers with targets, in order.
pub fn papers() -> Vec<&'static str> {
    targets::BUILTIN.iter().map(|(p, _)| *p).collect()
}

/// One row: a paper's figure and the model's.
#[derive(Clone, Debug, Serialize)]
pub struct Target {
    pub paper: String,
    pub item: String,
    pub unit: String,
    /// Input (restates a figure the model was built from) or prediction.
    pub kind: Kind,
    pub paper_value: Option<f64>,
    /// `None`: the model cannot produce this figure here (the source says why).
    pub model_value: Option<f64>,
    /// model / paper.
    pub ratio: Option<f64>,
    /// Allowed band for the ratio, e.g. 0.8..1.2.
    pub tolerance: Option<(f64, f64)>,
    /// Whether the ratio is inside the band (`None`: reported).
    pub hit: Option<bool>,
    pub source: String,
    /// Wall seconds this row took here, the recordings it was the first to need included
    /// (rows run side by side, so on a loaded host this is an upper bound of its cost).
    pub seconds: f64,
}

/// Hits, misses and reported rows of one kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub hits: usize,
    pub misses: usize,
    pub reported: usize,
}

/// The tally of a set of rows, inputs and predictions apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub inputs: Counts,
    pub predictions: Counts,
}

impl Tally {
    /// Counts `rows`.
    pub fn of(rows: &[Target]) -> Self {
        let mut t = Tally::default();
        for r in rows {
            let c = match r.kind {
                Kind::Input => &mut t.inputs,
                Kind::Prediction => &mut t.predictions,
            };
            match r.hit {
                Some(true) => c.hits += 1,
                Some(false) => c.misses += 1,
                None => c.reported += 1,
            }
        }
        t
    }
}

impl std::fmt::Display for Tally {
    /// "N targets: H hits, M misses, R reported (inputs: ...; predictions: ...)".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (i, p) = (self.inputs, self.predictions);
        let n = |c: Counts| c.hits + c.misses + c.reported;
        let part = |c: Counts| {
            format!(
                "{} hits, {} misses, {} reported",
                c.hits, c.misses, c.reported
            )
        };
        write!(
            f,
            "{} targets: {} hits, {} misses, {} reported (inputs: {}; predictions: {})",
            n(i) + n(p),
            i.hits + p.hits,
            i.misses + p.misses,
            i.reported + p.reported,
            part(i),
            part(p)
        )
    }
}

/// What a row's text reports is told to `progress`; it may be called from several threads.
pub type Progress<'a> = &'a (dyn Fn(&str) + Sync);

/// The targets of `paper` (all papers when `None`) without the extended group
/// ([`targets_with`]); `progress` is told what is running.
pub fn targets(paper: Option<&str>, progress: Progress) -> Result<Vec<Target>> {
    targets_with(paper, false, progress)
}

/// The targets of `paper` (all papers when `None`), with the extended group's rows
/// ([`crate::targets::Row::extended`]) when `extended`.
pub fn targets_with(
    paper: Option<&str>,
    extended: bool,
    progress: Progress,
) -> Result<Vec<Target>> {
    let files: Vec<TargetFile> = match paper {
        None => papers()
            .into_iter()
            .map(|p| Ok(targets::builtin(p)?.group(extended)))
            .collect::<Result<_>>()?,
        Some(p) => vec![targets::builtin(p)?.group(extended)],
    };
    run_files(&files, progress)
}

/// Runs the rows of `files` and returns them in order. Rows that share a recording form a
/// group ([`groups`]); groups share nothing, so they run side by side on rayon's threads,
/// each with its own [`Lab`]. Within a group, rows run in order: a recording is made once,
/// when the first row needs it, and dropped after the last row that does, so a group holds
/// no more recordings at once than neighbouring rows share. Every figure is the one a
/// sequential run gives (a simulation depends only on its recording, machine and options);
/// only the rows' `seconds` depend on what else ran at the time.
pub fn run_files(files: &[TargetFile], progress: Progress) -> Result<Vec<Target>> {
    use rayon::prelude::*;
    let rows: Vec<(&str, &Row)> = files
        .iter()
        .flat_map(|f| f.rows.iter().map(move |r| (f.paper.as_str(), r)))
        .collect();
    let done: Vec<Vec<(usize, Result<Target>)>> = groups(&rows)
        .into_par_iter()
        .with_max_len(1)
        .map(|g| run_group(&rows, &g, progress))
        .collect();
    let mut out: Vec<Option<Result<Target>>> = (0..rows.len()).map(|_| None).collect();
    for (i, t) in done.into_iter().flatten() {
        out[i] = Some(t);
    }
    // The first error in row order, as a sequential run would stop at. A group stops at its
    // first error, so a row left unrun comes after an error of its own group.
    let mut rows_out = Vec::with_capacity(out.len());
    for t in out.into_iter().flatten() {
        rows_out.push(t?);
    }
    Ok(rows_out)
}

/// The rows of `rows` (indices, in order) that share recordings, transitively: a row joins
/// the group of every recording its measure or baseline needs. A row that needs none is a
/// group of its own. Groups come largest first, so the longest runs start first.
pub fn groups(rows: &[(&str, &Row)]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..rows.len()).collect();
    fn root(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    let mut owner: HashMap<String, usize> = HashMap::new();
    for (i, (_, r)) in rows.iter().enumerate() {
        let base = r.measure.baseline.as_deref();
        for m in [Some(&r.measure), base].into_iter().flatten() {
            let Some(t) = trace_key(m) else { continue };
            let o = *owner.entry(t).or_insert(i);
            let (a, b) = (root(&mut parent, o), root(&mut parent, i));
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut by_root: HashMap<usize, Vec<usize>> = HashMap::new();
    for i in 0..rows.len() {
        let r = root(&mut parent, i);
        by_root.entry(r).or_default().push(i);
    }
    let mut out: Vec<Vec<usize>> = by_root.into_values().collect();
    out.sort_by_key(|g| (std::cmp::Reverse(g.len()), g[0]));
    out
}

/// The rows `group` of `rows` in order with one [`Lab`], each with its wall time; a row
/// that fails ends the group (later rows of it are not run).
fn run_group(
    rows: &[(&str, &Row)],
    group: &[usize],
    progress: Progress,
) -> Vec<(usize, Result<Target>)> {
    let mine: Vec<(&str, &Row)> = group.iter().map(|&i| rows[i]).collect();
    let last = last_uses(&mine);
    let mut lab = Lab::new(progress);
    let mut out = Vec::with_capacity(group.len());
    for (k, (&i, (paper, r))) in group.iter().zip(&mine).enumerate() {
        let start = std::time::Instant::now();
        let t = evaluate(&mut lab, paper, r).map(|t| Target {
            seconds: start.elapsed().as_secs_f64(),
            ..t
        });
        let failed = t.is_err();
        out.push((i, t));
        if failed {
            break;
        }
        lab.retain(&|key| last.get(key).is_some_and(|&l| l > k));
    }
    out
}

/// For each recording, the last row that needs its instructions: the latest row that is the
/// first to ask for one of its simulations (later rows find that simulation cached), or that
/// runs the additive model over it.
fn last_uses(rows: &[(&str, &Row)]) -> HashMap<String, usize> {
    let mut first: HashMap<String, usize> = HashMap::new();
    let mut last: HashMap<String, usize> = HashMap::new();
    for (i, (_, r)) in rows.iter().enumerate() {
        let mut names = placeholders(&r.item);
        names.extend(placeholders(&r.cite));
        let base = r.measure.baseline.as_deref();
        for m in [Some(&r.measure), base].into_iter().flatten() {
            let Some(t) = trace_key(m) else { continue };
            let mut warmth = vec![m.warm];
            if names.iter().any(|n| n == "cold_ms") {
                warmth.push(false);
            }
            let mut need = warmth
                .into_iter()
                .map(|w| *first.entry(report_key(m, w)).or_insert(i))
                .max()
                .unwrap_or(i);
            if m.metric == Metric::AdditiveMs || names.iter().any(|n| n.starts_with("additive")) {
                need = i;
            }
            let e = last.entry(t).or_insert(need);
            *e = (*e).max(need);
        }
    }
    last
}

/// One row: its measure (and baseline), combined, filled into its text.
fn evaluate(lab: &mut Lab, paper: &str, r: &Row) -> Result<Target> {
    let mut names = placeholders(&r.item);
    names.extend(placeholders(&r.cite));
    let m = lab.measure(&r.measure, &names)?;
    let b = match &r.measure.baseline {
        Some(b) => Some(lab.measure(b, &names)?),
        None => None,
    };
    let band = r.band.map(|[lo, hi]| (lo, hi));
    let (m, b) = match (m, b) {
        (Err(n), _) | (Ok(_), Some(Err(n))) => return Ok(not_run(paper, r, band, n)),
        (Ok(m), b) => (m, b.map(|b| b.expect("handled above"))),
    };
    let value = match (r.compare, &b) {
        (Some(Compare::Ratio), Some(b)) => m.value / b.value,
        (Some(Compare::Speedup), Some(b)) => b.value / m.value,
        (Some(Compare::ReductionPct), Some(b)) => 100.0 * (1.0 - m.value / b.value),
        _ => m.value,
    };
    let (values, words) = template_values(&m, b.as_ref());
    let text = |t: &str, field: &str| {
        fill(t, &values, &words).map_err(|message| crate::error::LabError::Target {
            file: format!("configs/targets/{paper}.toml"),
            row: None,
            item: r.item.clone(),
            message: format!("{field}: {message}"),
        })
    };
    let ratio = r.paper.map(|p| value / p);
    Ok(Target {
        paper: paper.into(),
        item: text(&r.item, "item")?,
        unit: r.unit.clone(),
        kind: r.kind,
        paper_value: r.paper,
        model_value: Some(value),
        ratio,
        tolerance: band,
        hit: ratio.zip(band).map(|(x, (lo, hi))| x >= lo && x <= hi),
        source: text(&r.cite, "cite")?,
        seconds: 0.0,
    })
}

/// The values a row's text may name: the measure's, and its baseline's as `baseline_NAME`.
type Values = (Vec<(&'static str, f64)>, Vec<(&'static str, String)>);

fn template_values(m: &Measured, b: Option<&Measured>) -> Values {
    let (mut values, mut words) = (m.values.clone(), m.words.clone());
    if let Some(b) = b {
        let prefixed = |n: &str| -> &'static str {
            match n {
                "time_ms" => "baseline_time_ms",
                "levels" => "baseline_levels",
                "slots" => "baseline_slots",
                "flow" => "baseline_flow",
                _ => "baseline_other",
            }
        };
        values.extend(b.values.iter().map(|(n, v)| (prefixed(n), *v)));
        words.extend(b.words.iter().map(|(n, v)| (prefixed(n), v.clone())));
    }
    (values, words)
}

/// A row the model does not produce here, with the reason: a target (with its band) counts
/// as a miss, a reported row stays reported, and a program not registered yet is reported.
fn not_run(paper: &str, r: &Row, band: Option<(f64, f64)>, n: NotRun) -> Target {
    Target {
        paper: paper.into(),
        item: r.item.clone(),
        unit: r.unit.clone(),
        kind: r.kind,
        paper_value: r.paper,
        model_value: None,
        ratio: None,
        tolerance: band,
        hit: if n.counts_as_miss {
            band.map(|_| false)
        } else {
            None
        },
        source: n.why,
        seconds: 0.0,
    }
}

/// `Some(available GB)` when the host has less than `need_gb` available (hosts without
/// `/proc/meminfo` are assumed to have enough).
pub(crate) fn memory_short_of(need_gb: f64) -> Option<f64> {
    available_memory_gb().filter(|&gb| gb < need_gb)
}

/// The source text of a row whose recording did not fit this host.
pub(crate) fn not_run_here(preset: &str, need_gb: f64, available: Option<f64>) -> String {
    format!(
        "not run here: recording {preset} needs about {need_gb} GB of memory, {:.1} GB available",
        available.unwrap_or(0.0)
    )
}

/// `MemAvailable` from `/proc/meminfo` in GB, where the host has one.
fn available_memory_gb() -> Option<f64> {
    parse_mem_available(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// The `MemAvailable:  N kB` line of a meminfo text, in GB.
fn parse_mem_available(meminfo: &str) -> Option<f64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::parse_mem_available;

    #[test]
    fn mem_available_is_read_from_meminfo() {
        let text = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   20000000 kB\n";
        let gb = parse_mem_available(text).unwrap();
        assert!((gb - 20.48).abs() < 1e-9, "{gb}");
        assert_eq!(parse_mem_available("MemTotal: 1 kB\n"), None);
    }
}
