//! `tessera simulate`: runs a workload (built in, or a trace file) on a machine model and
//! prints time, energy, area, traffic and utilization; optionally a Perfetto timeline and a
//! utilization plot.

use crate::output::{emit, json_line, table};
use crate::schema::Schema;
use serde_json::json;
use tessera_lab::{LabError, Mode, Request};
use tessera_sim::arch::Arch;
use tessera_sim::SimError;

/// Arguments of `tessera simulate`.
#[derive(clap::Args, Debug, Clone)]
pub struct SimulateArgs {
    /// Machine: a built-in name (ark, reed, reed-512x128, reed-28nm, reed-512x128-28nm, cifher,
    /// cifher-8/16/32/64, h3, h3-hbm, h3-ddr4, cofhee) or a TOML machine description.
    #[arg(long, default_value = "ark")]
    pub arch: String,
    /// Workload: a program (helr: one steady-state window, the iterations between two
    /// bootstrappings and that bootstrapping, reported per iteration too; lola: --size images,
    /// reported per image); bootstrap, hmult, hrot, keyswitch, keyswitch-ext (ModUp and inner product, no ModDown: REED's KeySwitch), hadd, pmult, tensor, ntt (CKKS presets);
    /// ntt, intt, polymul, ctmult (128-bit words: cofhee-n12, cofhee-n13); or a tessera-trace
    /// file.
    #[arg(long, default_value = "bootstrap")]
    pub workload: String,
    /// Program size of a program workload (helr: the mini-batch, default 256; lola: images,
    /// default 8).
    #[arg(long)]
    pub size: Option<usize>,
    /// Data directory of a program workload (default: $TESSERA_DATA, else ../shared/data).
    #[arg(long)]
    pub data: Option<std::path::PathBuf>,
    /// Parameter preset or parameter file (docs/parameters.md; `tessera params show ark`) of
    /// a built-in workload (default: ark on vector machines, cofhee-n12 on single-PE
    /// machines; bootstrap: ark, lattigo, h3, reed, reed-dnum3, cifher, test-boot, or a file
    /// with a [bootstrap] table, whose circuit options stay on without repeating them).
    #[arg(long)]
    pub params: Option<String>,
    /// Input level of an HE-operation workload (default: the top level).
    #[arg(long)]
    pub level: Option<usize>,
    /// Bootstrapping with OF-Limb plaintexts (ark.md IV-B).
    #[arg(long)]
    pub of_limb: bool,
    /// Bootstrapping with minimum key-switching / multi-hop rotations (ark.md IV-A).
    #[arg(long)]
    pub min_ks: bool,
    /// Bootstrapping without hoisting: each baby-step rotation of the DFTs does its own ModUp
    /// (as a machine whose rotation macro-instruction recomputes it would run them).
    #[arg(long)]
    pub no_hoisting: bool,
    /// Bootstrapping with double hoisting: the DFTs' baby and giant steps kept over Q P, one
    /// ModDown per part per matrix.
    #[arg(long)]
    pub double_hoisting: bool,
    /// Key switching one digit at a time, accumulated (reed.md Algorithm 3), instead of all
    /// digits then the inner products.
    #[arg(long)]
    pub streamed_keyswitch: bool,
    /// Override a machine value by its dotted path, e.g. --set chip.clusters=8 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// latency: one task over the whole machine; throughput: one task per cluster / tile /
    /// chiplet, reporting tasks per minute.
    #[arg(long, default_value = "latency", value_parser = ["latency", "throughput"])]
    pub mode: String,
    /// Time the workload as one step of a longer program, as micro-benchmarks time an
    /// operation: its input ciphertexts are already on chip and its results stay there
    /// (keys and plaintexts still come from off-chip memory).
    #[arg(long)]
    pub warm: bool,
    /// Also report the additive model: the sum of the HE operations' warm times, each
    /// simulated alone (how reed.md 6.1 times a bootstrapping from its macro-instructions).
    /// Vector machines in latency mode.
    #[arg(long)]
    pub additive: bool,
    /// One JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write a Chrome-trace / Perfetto JSON timeline to this file.
    #[arg(long)]
    pub timeline: Option<String>,
    /// Write a utilization-over-time plot (SVG) to this file.
    #[arg(long)]
    pub plot: Option<String>,
    /// Write the instruction trace that was simulated to this file (tessera-trace JSON
    /// Lines; simulate it again with --workload FILE).
    #[arg(long)]
    pub save_trace: Option<String>,
    /// The engine's lookahead window in instructions (default 65,536; 1 to 67,108,864): the
    /// engine holds this many instructions ahead of the one it schedules. Figures equal the
    /// whole-stream schedule's when every buffer's live range is shorter; a shorter window
    /// uses less memory, a longer one is exact over longer reuse distances
    /// (docs/simulator.md, "The streaming engine"). Vector machines only.
    #[arg(long)]
    pub window: Option<usize>,
    /// The engine's issue window in placed instructions (default 65,536; 1 to 67,108,864): an
    /// instruction is dispatched no earlier than the one this many places before it, which
    /// bounds the reservation table's memory whatever the program's length. The report's
    /// window_holds counts the instructions it held back; at 0 the schedule is the unbounded
    /// one, bit for bit (docs/simulator.md, "The issue window from the CLI and Python").
    /// Vector machines only.
    #[arg(long)]
    pub issue_window: Option<usize>,
}

impl SimulateArgs {
    /// The request these arguments make (shared with `tessera sweep`).
    pub fn request(&self) -> Result<Request, SimError> {
        Ok(Request {
            arch: self.arch.clone(),
            sets: self.set.clone(),
            workload: self.workload.clone(),
            params: self.params.clone(),
            level: self.level,
            of_limb: self.of_limb,
            min_ks: self.min_ks,
            hoisting: !self.no_hoisting,
            double_hoisting: self.double_hoisting,
            streamed_keyswitch: self.streamed_keyswitch,
            size: self.size,
            data: self.data.clone(),
            mode: Mode::parse(&self.mode)?,
            warm: self.warm,
            additive: self.additive,
            keep_schedule: self.timeline.is_some() || self.plot.is_some(),
            save_trace: self.save_trace.clone(),
            window: self.window,
            issue_window: self.issue_window,
        })
    }
}

/// Prints what is being recorded.
pub fn progress(msg: &str) {
    eprintln!("{msg}...");
}

pub fn run(a: &SimulateArgs) -> Result<(), LabError> {
    let out = tessera_lab::run(&a.request()?, &progress)?;
    if let (Some(s), Arch::Vector(m)) = (&out.schedule, &out.arch) {
        if let Some(path) = &a.timeline {
            tessera_sim::timeline::write_chrome_trace(m, s, path)?;
            eprintln!(
                "timeline written to {path} (open it in ui.perfetto.dev or chrome://tracing)"
            );
        }
        if let Some(path) = &a.plot {
            tessera_sim::timeline::write_utilization_svg(m, s, &out.report.workload, path)?;
            eprintln!("utilization plot written to {path}");
        }
    }
    let (r, additive_s, window) = (&out.report, &out.additive, &out.window);
    let sim_s = out.simulation_s;
    if a.json {
        let mut v = out.to_json()?;
        v["simulation_s"] = json!(sim_s);
        json_line(Schema::Simulate, &v);
        return Ok(());
    }
    emit(&format!(
        "{} on {} ({} instructions, simulated in {:.2} s){}",
        r.workload,
        r.arch,
        r.instructions,
        sim_s,
        if r.warm {
            "; warm: inputs on chip, results left there"
        } else {
            ""
        }
    ));
    if let Some(l) = &out.params {
        emit(&format!("parameters '{}': {}", l.name, l.security));
    }
    let mut rows = vec![vec!["time".into(), format!("{:.3} ms", r.time_s * 1e3)]];
    for (k, x) in &out.context {
        rows.push(vec![
            k.replace('_', " "),
            x.to_string().trim_matches('"').into(),
        ]);
    }
    if let Some(w) = &window {
        rows.push(vec![
            format!("time per {} ({})", w.unit, w.what),
            format!("{:.3} ms", r.time_s * 1e3 / w.units as f64),
        ]);
        if let Some(p) = w.per_run {
            rows.push(vec![
                format!("time per run ({p} x {})", w.unit),
                format!("{:.3} s", r.time_s / w.units as f64 * p as f64),
            ]);
        }
    }
    rows.extend([vec!["cycles".into(), format!("{:.0}", r.cycles)]]);
    if let Some(a) = &additive_s {
        rows.push(vec![
            "additive (sum of warm operations)".into(),
            format!("{:.3} ms", a.total_s * 1e3),
        ]);
        for (op, o) in &a.by_op {
            rows.push(vec![
                format!("  additive: {op}"),
                format!("{} x, {:.3} ms", o.count, o.seconds * 1e3),
            ]);
        }
    }
    rows.extend([
        vec![
            format!("tasks per minute ({})", r.mode),
            format!("{:.1}", r.tasks_per_minute),
        ],
        vec![
            "energy".into(),
            format!("{:.4} J{}", r.energy_j, r.energy_scope.note()),
        ],
        vec![
            "average power".into(),
            format!("{:.1} W (peak {:.1} W)", r.avg_power_w, r.peak_power_w),
        ],
        vec![
            "area".into(),
            format!("{:.1} mm2 ({})", r.area_mm2, r.area_source),
        ],
        vec![
            "off-chip traffic".into(),
            format!("{:.1} MB", r.offchip_bytes / 1e6),
        ],
        vec!["NoC traffic".into(), format!("{:.1} MB", r.noc_bytes / 1e6)],
        vec![
            "peak on-chip".into(),
            format!("{:.1} MB", r.peak_onchip_bytes / 1048576.0),
        ],
    ]);
    if let Some(p) = r
        .area_predicted
        .as_ref()
        .filter(|_| r.area_source != tessera_sim::area::PREDICTED_LABEL)
    {
        rows.push(vec![
            "  predicted (tessera area)".into(),
            format!("{:.1} mm2, peak {:.1} W", p.total_area_mm2, p.total_peak_w),
        ]);
    }
    if let Some(i) = &r.issue {
        rows.push(vec![
            "issue window".into(),
            format!(
                "{} instructions, {} held back, peak {} busy intervals",
                i.issue_window, i.window_holds, i.peak_intervals
            ),
        ]);
    }
    if let Some(rf) = &r.register_file {
        rows.extend(register_file_rows(rf));
    }
    if r.io_noc_bytes > 0.0 {
        rows.push(vec![
            "  NoC traffic between I/O dies and clusters".into(),
            format!("{:.1} MB", r.io_noc_bytes / 1e6),
        ]);
    }
    for (k, v) in &r.offchip_by_kind_bytes {
        rows.push(vec![
            format!("  off-chip {k}"),
            format!("{:.1} MB", v / 1e6),
        ]);
    }
    rows.push(vec![
        "EDAP".into(),
        format!("{:.4e} J s mm2{}", r.edap, r.energy_scope.note()),
    ]);
    if let (Some(p), Some(mono)) = (&r.package, &r.monolithic) {
        rows.push(vec![
            "package".into(),
            format!(
                "{} die(s) of {:.1} mm2, die yield {:.1} %, ${:.0} per good package",
                p.dies,
                p.die_area_mm2,
                p.die_yield * 100.0,
                p.cost_per_good_package_usd
            ),
        ]);
        rows.push(vec![
            "  as one monolithic die".into(),
            format!(
                "yield {:.1} %, ${:.0} per good die",
                mono.die_yield * 100.0,
                mono.cost_per_good_package_usd
            ),
        ]);
    }
    for (k, v) in &r.time_by_op_s {
        rows.push(vec![format!("  time in {k}"), format!("{:.3} ms", v * 1e3)]);
    }
    for (k, v) in &r.utilization {
        rows.push(vec![
            format!("utilization {k}"),
            format!("{:.1} %", v * 100.0),
        ]);
    }
    table(&["metric", "value"], &rows);
    Ok(())
}

/// The two-level storage's rows of the text report (`memory.register_file.capacity_mb`).
fn register_file_rows(rf: &tessera_sim::storage::StorageReport) -> Vec<Vec<String>> {
    let mb = |b: f64| format!("{:.1} MB", b / 1e6);
    vec![
        vec![
            "register files".into(),
            format!(
                "{:.3} MB capacity, peak {:.3} MB resident",
                rf.capacity_bytes / 1048576.0,
                rf.peak_bytes / 1048576.0
            ),
        ],
        vec!["  RF traffic".into(), mb(rf.rf_bytes)],
        vec!["  scratchpad traffic".into(), mb(rf.scratchpad_bytes)],
        vec!["  RF refills (from scratchpad)".into(), mb(rf.refill_bytes)],
        vec![
            "  RF write-backs (to scratchpad)".into(),
            mb(rf.writeback_bytes),
        ],
        vec![
            "  RF fill stall (scratchpad-port time)".into(),
            format!(
                "{:.3} ms ({:.0} cycles)",
                rf.fill_time_s * 1e3,
                rf.fill_cycles
            ),
        ],
    ]
}
