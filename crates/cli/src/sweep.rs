//! `tessera sweep`: workloads on a grid of machine settings, using every core, with a
//! progress bar; writes CSV and an SVG plot of time against the first swept key. Several
//! workloads and parameter sets (`--workload a,b --params x,y`) make a cross product with the
//! grid: each (workload, parameter set) is recorded once and simulated on every point.

use crate::output::{emit, json_line, table};
use crate::schema::Schema;
use crate::simulate::{progress, SimulateArgs};
use indicatif::{ProgressBar, ProgressStyle};
use tessera_lab::LabError;
use tessera_sim::arch::Arch;
use tessera_sim::sweep::{self, Axis};
use tessera_sim::SimError;

/// Arguments of `tessera sweep`.
#[derive(clap::Args, Debug, Clone)]
pub struct SweepArgs {
    /// Machine: a built-in name (ark, reed, reed-512x128, reed-28nm, reed-512x128-28nm, cifher,
    /// cifher-8/16/32/64, h3, h3-hbm, h3-ddr4, cofhee) or a TOML file.
    #[arg(long, default_value = "reed")]
    pub arch: String,
    /// A swept key and its values, e.g. --set chip.clusters=1,2,4,8 (repeatable: a grid);
    /// `arch=cifher,cifher-16` sweeps over machines.
    #[arg(long = "set", value_name = "KEY=V1,V2,...", required = true)]
    pub set: Vec<String>,
    /// Workload (as for `tessera simulate`), or several separated by commas: each is
    /// recorded once per parameter set and simulated on every grid point.
    #[arg(long, default_value = "hmult")]
    pub workload: String,
    /// Parameter preset of the workload (default: ark on vector machines), or several
    /// separated by commas (a cross product with the workloads).
    #[arg(long)]
    pub params: Option<String>,
    /// Input level of an HE-operation workload.
    #[arg(long)]
    pub level: Option<usize>,
    /// Key switching one digit at a time (reed.md Algorithm 3).
    #[arg(long)]
    pub streamed_keyswitch: bool,
    /// Bootstrapping with OF-Limb plaintexts (ark.md IV-B).
    #[arg(long)]
    pub of_limb: bool,
    /// Bootstrapping with minimum key-switching / multi-hop rotations (ark.md IV-A).
    #[arg(long)]
    pub min_ks: bool,
    /// Bootstrapping without hoisting (each baby step does its own ModUp).
    #[arg(long)]
    pub no_hoisting: bool,
    /// Bootstrapping with double hoisting (one ModDown per part per DFT matrix).
    #[arg(long)]
    pub double_hoisting: bool,
    /// What the plot shows against the swept key: time, energy, area, edap, offchip, noc,
    /// yield or cost (the CSV has them all).
    #[arg(long, default_value = "time")]
    pub metric: String,
    /// Output prefix: writes PREFIX.csv and PREFIX.svg.
    #[arg(long, default_value = "sweep")]
    pub out: String,
    /// One JSON object per point (schema `tessera.sweep/1`, docs/json.md) instead of the
    /// table; no progress bar. The CSV and the plot are still written.
    #[arg(long)]
    pub json: bool,
    /// Run each point as a task on a Ray cluster: `auto` (a running cluster), an address, or
    /// `local` (start one here). Delegates to the Python package (`python -m tessera sweep`,
    /// the interpreter from $TESSERA_PYTHON, else python3), which writes PREFIX.jsonl
    /// (resumable), PREFIX.csv and PREFIX.png (docs/python.md).
    #[arg(long, value_name = "auto|ADDRESS|local")]
    pub ray: Option<String>,
}

/// `tessera sweep --ray`: the same sweep through the Python package on Ray.
fn on_ray(a: &SweepArgs, address: &str) -> Result<(), LabError> {
    let python = std::env::var("TESSERA_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut cmd = std::process::Command::new(&python);
    cmd.args([
        "-m",
        "tessera",
        "sweep",
        "--arch",
        &a.arch,
        "--workload",
        &a.workload,
    ]);
    cmd.args(["--out", &a.out, "--metric", &a.metric, "--ray", address]);
    for s in &a.set {
        cmd.args(["--set", s]);
    }
    if let Some(p) = &a.params {
        cmd.args(["--params", p]);
    }
    if let Some(l) = a.level {
        cmd.args(["--level", &l.to_string()]);
    }
    for (flag, on) in [
        ("--streamed-keyswitch", a.streamed_keyswitch),
        ("--of-limb", a.of_limb),
        ("--min-ks", a.min_ks),
        ("--no-hoisting", a.no_hoisting),
        ("--double-hoisting", a.double_hoisting),
        ("--json", a.json),
    ] {
        if on {
            cmd.arg(flag);
        }
    }
    let status = cmd.status().map_err(|e| SimError::Io {
        path: python.clone(),
        message: format!(
            "{e}: --ray runs the Python package (pip install ./crates/python 'ray>=2'; $TESSERA_PYTHON names the interpreter)"
        ),
    })?;
    if !status.success() {
        return Err(SimError::Unsupported(format!(
            "the Ray sweep ({python} -m tessera sweep) exited with {status}"
        ))
        .into());
    }
    Ok(())
}

/// The values of a comma-separated option (`--workload hmult,hrot`), each once, in order.
fn list(name: &'static str, s: &str) -> Result<Vec<String>, SimError> {
    let mut out: Vec<String> = Vec::new();
    for v in s.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        if out.iter().any(|o| o == v) {
            return Err(SimError::Invalid {
                name,
                value: s.into(),
                allowed: format!("each value once ('{v}' is repeated)"),
            });
        }
        out.push(v.to_string());
    }
    if out.is_empty() {
        return Err(SimError::Invalid {
            name,
            value: s.into(),
            allowed: "one or more names separated by commas".into(),
        });
    }
    Ok(out)
}

/// Runs `tessera sweep`: the cross product of the workloads, the parameter sets and the
/// `--set` grid.
pub fn run(a: &SweepArgs) -> Result<(), LabError> {
    if let Some(address) = &a.ray {
        return on_ray(a, address);
    }
    let mut axes: Vec<Axis> = sweep::axes(&a.set)?;
    let metric = sweep::Metric::parse(&a.metric)?;
    let arch = Arch::load(&a.arch)?;
    let workloads = list("--workload", &a.workload)?;
    let params: Vec<Option<String>> = match &a.params {
        Some(p) => list("--params", p)?.into_iter().map(Some).collect(),
        None => vec![None],
    };
    let grid_points = sweep::grid_size(&axes)?;
    // Several workloads or parameter sets make `workload` and `params` swept keys of their
    // own (after the --set ones, so the plot's x axis stays the first --set key).
    let extra: Vec<Axis> = [
        ("workload", workloads.clone()),
        (
            "params",
            params
                .iter()
                .map(|p| p.clone().unwrap_or_default())
                .collect(),
        ),
    ]
    .into_iter()
    .filter(|_| workloads.len() > 1 || params.len() > 1)
    .map(|(k, values)| Axis {
        key: k.to_string(),
        values,
    })
    .collect();
    axes.extend(extra.iter().cloned());
    let total = sweep::grid_size(&axes)?;
    let bar = if a.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(total as u64)
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} points")
            .expect("valid template"),
    );
    let mut points = Vec::with_capacity(total);
    let mut labels = Vec::new();
    let mut named = Vec::with_capacity(total);
    for w in &workloads {
        for p in &params {
            let request = SimulateArgs {
                arch: a.arch.clone(),
                workload: w.clone(),
                params: p.clone(),
                size: None,
                data: None,
                level: a.level,
                of_limb: a.of_limb,
                min_ks: a.min_ks,
                no_hoisting: a.no_hoisting,
                double_hoisting: a.double_hoisting,
                streamed_keyswitch: a.streamed_keyswitch,
                set: Vec::new(),
                mode: "latency".into(),
                warm: false,
                additive: false,
                json: false,
                timeline: None,
                plot: None,
                save_trace: None,
                window: None,
                issue_window: None,
            }
            .request()?;
            // Recorded once, simulated on every grid point.
            let quiet = |_: &str| {};
            let say: &dyn Fn(&str) = if a.json { &quiet } else { &progress };
            let (trace, _) = tessera_lab::workload(&request, &arch, say)?;
            let mut these = sweep::run(
                &a.arch,
                &axes[..axes.len() - extra.len()],
                &trace.label,
                &trace.instrs,
                &|| bar.inc(1),
            )?;
            for pt in &mut these {
                for x in &extra {
                    let v = if x.key == "workload" {
                        w.clone()
                    } else {
                        p.clone().unwrap_or_default()
                    };
                    pt.settings.push((x.key.clone(), v));
                }
                named.push((w.clone(), p.clone()));
            }
            debug_assert_eq!(these.len(), grid_points);
            points.extend(these);
            labels.push(trace.label);
        }
    }
    bar.finish_and_clear();
    let csv_path = format!("{}.csv", a.out);
    let svg_path = format!("{}.svg", a.out);
    let io = |p: &str, e: std::io::Error| SimError::Io {
        path: p.to_string(),
        message: e.to_string(),
    };
    std::fs::write(&csv_path, sweep::csv(&axes, &points)).map_err(|e| io(&csv_path, e))?;
    let keys: Vec<&str> = axes.iter().map(|x| x.key.as_str()).collect();
    let title = format!(
        "{} on {}: sweep of {}",
        labels.join(", "),
        arch.name(),
        keys.join(", ")
    );
    // A metric the machines do not model fails the plot, not the sweep: the table and the
    // CSV still come out.
    let svg = sweep::plot(&title, &axes, &points, metric);
    if let Ok(svg) = &svg {
        std::fs::write(&svg_path, svg).map_err(|e| io(&svg_path, e))?;
    }
    if a.json {
        for (pt, (w, p)) in points.iter().zip(&named) {
            let report =
                serde_json::to_value(&pt.report).map_err(|e| SimError::Trace(e.to_string()))?;
            let settings: serde_json::Map<String, serde_json::Value> = pt
                .settings
                .iter()
                .map(|(k, v)| (k.clone(), v.clone().into()))
                .collect();
            json_line(
                Schema::Sweep,
                &serde_json::json!({
                    "workload": w, "params": p, "settings": settings, "report": report,
                }),
            );
        }
        return svg.map(|_| ()).map_err(Into::into);
    }
    let mut headers: Vec<&str> = axes.iter().map(|x| x.key.as_str()).collect();
    headers.extend(["time (ms)", "area (mm2)", "die yield", "cost/good pkg ($)"]);
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            let mut r: Vec<String> = p.settings.iter().map(|(_, v)| v.clone()).collect();
            r.push(format!("{:.4}", p.report.time_s * 1e3));
            r.push(format!("{:.1}", p.report.area_mm2));
            let (y, c) = p
                .report
                .package
                .as_ref()
                .map(|k| {
                    (
                        format!("{:.3}", k.die_yield),
                        format!("{:.0}", k.cost_per_good_package_usd),
                    )
                })
                .unwrap_or(("-".into(), "-".into()));
            r.push(y);
            r.push(c);
            r
        })
        .collect();
    table(&headers, &rows);
    match svg {
        Ok(_) => {
            emit(&format!("wrote {csv_path} and {svg_path}"));
            Ok(())
        }
        Err(e) => {
            emit(&format!("wrote {csv_path}; no plot"));
            Err(e.into())
        }
    }
}
