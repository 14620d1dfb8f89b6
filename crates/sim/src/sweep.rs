//! Design-space sweeps: one recorded workload simulated on a grid of machine settings.

use crate::arch::Arch;
use crate::error::SimError;
use crate::plot::{line_plot, Axes, Series};
use crate::report::Report;
use rayon::prelude::*;
use tessera_backend::trace::Instr;

/// One swept key and its values (`chip.clusters=1,2,4`).
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The dotted key (`chip.clusters`) or `arch`.
    pub key: String,
    /// Its values, in order.
    pub values: Vec<String>,
}

impl Axis {
    /// Parses `KEY=V1,V2,...`.
    pub fn parse(s: &str) -> Result<Self, SimError> {
        let (k, v) = s.split_once('=').ok_or_else(|| SimError::Invalid {
            name: "--set",
            value: s.into(),
            allowed: "KEY=V1,V2,... with KEY a dotted path such as chip.clusters".into(),
        })?;
        let values: Vec<String> = v
            .split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect();
        if values.is_empty() {
            return Err(SimError::Invalid {
                name: "--set",
                value: s.into(),
                allowed: "at least one value after '='".into(),
            });
        }
        Ok(Self {
            key: k.trim().to_string(),
            values,
        })
    }
}

/// The axes of `--set KEY=V1,V2,...` arguments, checked with [`grid_size`].
pub fn axes(sets: &[String]) -> Result<Vec<Axis>, SimError> {
    let axes: Vec<Axis> = sets
        .iter()
        .map(|s| Axis::parse(s))
        .collect::<Result<_, _>>()?;
    grid_size(&axes)?;
    Ok(axes)
}

/// The number of grid points of `axes`, checked before anything is allocated: each key at
/// most once (a repeated key made two columns of one setting, the later silently
/// overriding the earlier) and at most [`crate::limits::MAX_SWEEP_POINTS`] points.
pub fn grid_size(axes: &[Axis]) -> Result<usize, SimError> {
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.key == a.key) {
            return Err(SimError::Invalid {
                name: "--set",
                value: a.key.clone(),
                allowed: "each swept key once (list all its values in one --set KEY=V1,V2,...)"
                    .into(),
            });
        }
    }
    crate::limits::grid_points(axes.iter().map(|a| a.values.len()))
}

/// Every combination of the axes' values, the first axis varying slowest.
pub fn grid(axes: &[Axis]) -> Vec<Vec<(String, String)>> {
    let mut out = vec![Vec::new()];
    for a in axes {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                a.values.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push((a.key.clone(), v.clone()));
                    p
                })
            })
            .collect();
    }
    out
}

/// One grid point and its report.
#[derive(Clone, Debug)]
pub struct Point {
    /// The point's (key, value) pairs, in axis order.
    pub settings: Vec<(String, String)>,
    /// The point's report.
    pub report: Report,
}

/// Simulates `instrs` on `arch` with every grid point's settings, in parallel; `tick` is
/// called once per finished point. The pseudo-key `arch` sweeps over machines
/// (`arch=cifher,cifher-16,cifher-64`).
///
/// ```
/// use tessera_backend::trace::read_trace;
/// use tessera_sim::sweep::{self, Axis};
/// let text = r#"{"format":"tessera-trace","version":2,"n":4096,"moduli":[40961]}
/// {"seq":0,"op":"load","dst":1,"srcs":[],"limbs":[0],"n":4096,"kind":"ciphertext"}
/// {"seq":1,"op":"ntt","dst":1,"srcs":[1],"limbs":[0],"n":4096,"kind":"ciphertext"}
/// "#;
/// let (_, instrs) = read_trace(text.as_bytes()).unwrap();
/// let axes = sweep::axes(&["chip.clusters=1,2,4".into(), "arch=ark,reed".into()])?;
/// let points = sweep::run("ark", &axes, "one NTT", &instrs, &|| {})?;
/// assert_eq!(points.len(), 6);
/// assert_eq!(points[5].settings, [("chip.clusters".into(), "4".into()), ("arch".into(), "reed".into())]);
/// assert!(points.iter().all(|p| p.report.time_s > 0.0));
/// # Ok::<(), tessera_sim::SimError>(())
/// ```
pub fn run(
    arch: &str,
    axes: &[Axis],
    label: &str,
    instrs: &[Instr],
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<Point>, SimError> {
    grid_size(axes)?;
    grid(axes)
        .into_par_iter()
        .map(|settings| {
            let name = settings
                .iter()
                .find(|(k, _)| k == "arch")
                .map(|(_, v)| v.as_str())
                .unwrap_or(arch);
            let sets: Vec<String> = settings
                .iter()
                .filter(|(k, _)| k != "arch")
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let a = Arch::load_with(name, &sets)?;
            let report = a.simulate(label, instrs)?;
            tick();
            Ok(Point { settings, report })
        })
        .collect()
}

/// CSV: the settings, then time, energy, power, area, traffic, yield and cost. Energy, power
/// and EDAP are empty where the machine models no energy at all, and `energy_scope` says
/// what they cover ([`crate::report::EnergyScope`]).
pub fn csv(axes: &[Axis], points: &[Point]) -> String {
    let mut s = axes
        .iter()
        .map(|a| a.key.clone())
        .collect::<Vec<_>>()
        .join(",");
    s += ",time_s,energy_j,avg_power_w,area_mm2,offchip_bytes,noc_bytes,io_noc_bytes,edap,die_yield,cost_per_good_package_usd,energy_scope\n";
    for p in points {
        let r = &p.report;
        let vals: Vec<&str> = p.settings.iter().map(|(_, v)| v.as_str()).collect();
        let (y, c) = r
            .package
            .as_ref()
            .map(|p| {
                (
                    p.die_yield.to_string(),
                    p.cost_per_good_package_usd.to_string(),
                )
            })
            .unwrap_or_default();
        let scope = r.energy_scope;
        let energy = |x: f64| {
            if scope == crate::report::EnergyScope::None {
                String::new()
            } else {
                x.to_string()
            }
        };
        let scope_name = serde_json::to_value(scope)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        s += &format!(
            "{},{},{},{},{},{},{},{},{},{y},{c},{scope_name}\n",
            vals.join(","),
            r.time_s,
            energy(r.energy_j),
            energy(r.avg_power_w),
            r.area_mm2,
            r.offchip_bytes,
            r.noc_bytes,
            r.io_noc_bytes,
            energy(r.edap)
        );
    }
    s
}

/// What a sweep plot shows on its y axis (`tessera sweep --metric`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Simulated time.
    Time,
    /// Energy.
    Energy,
    /// Chip area.
    Area,
    /// Energy x delay x area.
    Edap,
    /// Off-chip traffic.
    Offchip,
    /// On-chip network traffic.
    Noc,
    /// Die yield.
    Yield,
    /// Cost per good package.
    Cost,
}

impl Metric {
    /// Every metric, in the order of [`Metric::NAMES`].
    const ALL: [Metric; 8] = [
        Metric::Time,
        Metric::Energy,
        Metric::Area,
        Metric::Edap,
        Metric::Offchip,
        Metric::Noc,
        Metric::Yield,
        Metric::Cost,
    ];

    /// The names `--metric` takes.
    pub const NAMES: &'static [&'static str] = &[
        "time", "energy", "area", "edap", "offchip", "noc", "yield", "cost",
    ];

    /// Parses a `--metric` name.
    pub fn parse(s: &str) -> Result<Self, SimError> {
        Self::NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| Self::ALL[i])
            .ok_or_else(|| SimError::Invalid {
                name: "--metric",
                value: s.into(),
                allowed: Self::NAMES.join(", "),
            })
    }

    /// The axis label.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Time => "time (ms)",
            Metric::Energy => "energy (J)",
            Metric::Area => "area (mm2)",
            Metric::Edap => "EDAP (J s mm2)",
            Metric::Offchip => "off-chip traffic (GB)",
            Metric::Noc => "NoC traffic (GB)",
            Metric::Yield => "die yield",
            Metric::Cost => "cost per good package (USD)",
        }
    }

    /// The value for one report; an error where the machine does not model it (no energy
    /// cited, no cost model), rather than a plotted zero.
    pub fn of(self, r: &Report) -> Result<f64, SimError> {
        let energy = |x: f64| {
            if r.energy_scope == crate::report::EnergyScope::None {
                Err(SimError::Unsupported(format!(
                    "--metric {}: '{}' models no energy (its description cites no power or per-bit energy)",
                    self.name(),
                    r.arch
                )))
            } else {
                Ok(x)
            }
        };
        let package = || {
            r.package.as_ref().ok_or_else(|| {
                SimError::Unsupported(format!(
                    "--metric {}: '{}' has no yield and cost model ([cost] in its description)",
                    self.name(),
                    r.arch
                ))
            })
        };
        match self {
            Metric::Time => Ok(r.time_s * 1e3),
            Metric::Energy => energy(r.energy_j),
            Metric::Area => Ok(r.area_mm2),
            Metric::Edap => energy(r.edap),
            Metric::Offchip => Ok(r.offchip_bytes / 1e9),
            Metric::Noc => Ok(r.noc_bytes / 1e9),
            Metric::Yield => Ok(package()?.die_yield),
            Metric::Cost => Ok(package()?.cost_per_good_package_usd),
        }
    }

    fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// The x coordinate of each of `axis`'s values, if they are distinct numbers: the values
/// themselves, or for `arch` the machines' cluster counts.
fn numeric_positions(axis: &Axis) -> Result<Option<Vec<f64>>, SimError> {
    let xs: Vec<f64> = if axis.key == "arch" {
        axis.values
            .iter()
            .map(|v| {
                Ok(match Arch::load(v)? {
                    Arch::Vector(m) => m.chip.clusters as f64,
                    Arch::Pe(_) => 1.0,
                })
            })
            .collect::<Result<_, SimError>>()?
    } else {
        match axis.values.iter().map(|v| v.parse::<f64>()).collect() {
            Ok(xs) => xs,
            Err(_) => return Ok(None),
        }
    };
    let mut sorted = xs.clone();
    sorted.sort_by(f64::total_cmp);
    sorted.dedup();
    Ok((sorted.len() == xs.len()).then_some(xs))
}

/// An SVG of `metric` against one swept key, one line per combination of the others. The x
/// axis is the first key whose values are distinct numbers (for `arch`: distinct cluster
/// counts), on a log scale when they span a factor of 16 or more; if no key is numeric, the
/// first key's values are categories in the order given. The y axis goes on a log scale when
/// it spans a factor of 20 or more.
pub fn plot(
    title: &str,
    axes: &[Axis],
    points: &[Point],
    metric: Metric,
) -> Result<String, SimError> {
    if axes.is_empty() {
        return Err(SimError::Invalid {
            name: "--set",
            value: String::new(),
            allowed: "at least one swept key".into(),
        });
    }
    let mut numeric = None;
    for (i, a) in axes.iter().enumerate() {
        if let Some(xs) = numeric_positions(a)? {
            numeric = Some((i, xs));
            break;
        }
    }
    let (xi, xs, categorical) = match numeric {
        Some((i, xs)) => (i, xs, false),
        None => (
            0,
            (0..axes[0].values.len()).map(|k| k as f64).collect(),
            true,
        ),
    };
    let x_axis = &axes[xi];
    let mut series: Vec<Series> = Vec::new();
    for p in points {
        let value = &p.settings[xi].1;
        let k = x_axis
            .values
            .iter()
            .position(|v| v == value)
            .ok_or_else(|| SimError::Invalid {
                name: "--set",
                value: value.clone(),
                allowed: format!("a value of {}", x_axis.key),
            })?;
        let rest: Vec<String> = p
            .settings
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != xi)
            .map(|(_, (k, v))| format!("{k}={v}"))
            .collect();
        let name = if rest.is_empty() {
            "time".to_string()
        } else {
            rest.join(" ")
        };
        let pt = (xs[k], metric.of(&p.report)?);
        match series.iter_mut().find(|s| s.0 == name) {
            Some(s) => s.1.push(pt),
            None => series.push((name, vec![pt])),
        }
    }
    for s in &mut series {
        s.1.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let spread = |v: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = v.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
        if lo > 0.0 {
            hi / lo
        } else {
            1.0
        }
    };
    let x_log = !categorical && spread(&mut xs.iter().copied()) >= 16.0;
    let y_log = spread(&mut series.iter().flat_map(|s| s.1.iter().map(|p| p.1))) >= 20.0;
    // A tick per swept value (labelled with the value, or for `arch` the cluster count), as
    // long as numbers stay legible; categories are always labelled.
    let x_ticks = (categorical || xs.len() <= 12).then(|| {
        xs.iter()
            .zip(&x_axis.values)
            .map(|(&x, v)| {
                let label = if x_axis.key == "arch" && !categorical {
                    format!("{x}")
                } else {
                    v.clone()
                };
                (x, label)
            })
            .collect()
    });
    let x_label = if x_axis.key == "arch" && !categorical {
        "clusters (cores / chiplets)".to_string()
    } else {
        x_axis.key.clone()
    };
    Ok(line_plot(
        &Axes {
            title,
            x_label: &x_label,
            y_label: metric.label(),
            x_log,
            y_log,
            x_ticks,
            ..Default::default()
        },
        &series,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_cover_every_combination() {
        let a = [
            Axis::parse("chip.clusters=1,2").unwrap(),
            Axis::parse("memory.noc.bandwidth_gbs=1.0,2.0,3.0").unwrap(),
        ];
        let g = grid(&a);
        assert_eq!(g.len(), 6);
        assert_eq!(
            g[0],
            vec![
                ("chip.clusters".into(), "1".into()),
                ("memory.noc.bandwidth_gbs".into(), "1.0".into())
            ]
        );
        assert!(Axis::parse("chip.clusters").is_err());
    }

    #[test]
    fn metric_names_round_trip() {
        for (i, m) in Metric::ALL.iter().enumerate() {
            assert_eq!(*m as usize, i);
            assert_eq!(Metric::parse(m.name()).unwrap(), *m);
        }
        assert!(Metric::parse("joules").is_err());
        assert!(Axis::parse("chip.clusters=").is_err());
    }

    /// A repeated key was two columns of one setting, the later silently winning; a grid
    /// of 10^4 x 10^4 points was allocated before the first simulation.
    #[test]
    fn repeated_keys_and_oversized_grids_are_refused() {
        let sets = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let e = axes(&sets(&["chip.clusters=1,2", "chip.clusters=4"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("chip.clusters") && e.contains("once"), "{e}");
        let many: String = (1..=10_000).map(|i| format!("{i},")).collect();
        let e = axes(&sets(&[
            &format!("chip.clusters={many}"),
            &format!("chip.lanes={many}"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(e.contains("100000000 points"), "{e}");
        let a = axes(&sets(&["chip.clusters=1,2", "chip.lanes=64,128,256"])).unwrap();
        assert_eq!(grid_size(&a).unwrap(), 6);
        let e = run("ark", &[a[0].clone(), a[0].clone()], "x", &[], &|| {})
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("once"), "{e}");
    }
}
