//! `tessera sweep`: one workload on a grid of machine settings, using every core, with a
//! progress bar; writes CSV and an SVG plot of time against the first swept key.

use crate::output::{emit, table};
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
    /// Workload (as for `tessera simulate`).
    #[arg(long, default_value = "hmult")]
    pub workload: String,
    /// Parameter preset of the workload (default: ark on vector machines).
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
    /// What the plot shows against the swept key: time, energy, area, edap, offchip, noc,
    /// yield or cost (the CSV has them all).
    #[arg(long, default_value = "time")]
    pub metric: String,
    /// Output prefix: writes PREFIX.csv and PREFIX.svg.
    #[arg(long, default_value = "sweep")]
    pub out: String,
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

pub fn run(a: &SweepArgs) -> Result<(), LabError> {
    if let Some(address) = &a.ray {
        return on_ray(a, address);
    }
    let axes: Vec<Axis> = sweep::axes(&a.set)?;
    let metric = sweep::Metric::parse(&a.metric)?;
    let arch = Arch::load(&a.arch)?;
    let request = SimulateArgs {
        arch: a.arch.clone(),
        workload: a.workload.clone(),
        params: a.params.clone(),
        size: None,
        data: None,
        level: a.level,
        of_limb: a.of_limb,
        min_ks: a.min_ks,
        no_hoisting: a.no_hoisting,
        streamed_keyswitch: a.streamed_keyswitch,
        set: Vec::new(),
        mode: "latency".into(),
        warm: false,
        additive: false,
        json: false,
        timeline: None,
        plot: None,
        save_trace: None,
    }
    .request()?;
    let (w, _) = tessera_lab::workload(&request, &arch, &progress)?;
    let total = sweep::grid_size(&axes)?;
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} points")
            .expect("valid template"),
    );
    let points = sweep::run(&a.arch, &axes, &w.label, &w.instrs, &|| bar.inc(1))?;
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
        w.label,
        arch.name(),
        keys.join(", ")
    );
    // A metric the machines do not model fails the plot, not the sweep: the table and the
    // CSV still come out.
    let svg = sweep::plot(&title, &axes, &points, metric);
    if let Ok(svg) = &svg {
        std::fs::write(&svg_path, svg).map_err(|e| io(&svg_path, e))?;
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
