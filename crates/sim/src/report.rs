//! Cost models over a schedule: time, utilization, energy (component peak power x
//! utilization, the papers' method), area (sum of components), traffic.

use crate::engine::Schedule;
use crate::machine::{Activity, Machine, Per};
use crate::mapping::{Layout, Resource};
use serde::Serialize;
use std::collections::BTreeMap;

/// One area / power line, resolved for this configuration.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ComponentCost {
    /// Its name.
    pub name: String,
    /// How many (units, clusters, ...).
    pub count: f64,
    /// Area in mm^2.
    pub area_mm2: f64,
    /// Peak power in watts.
    pub peak_w: f64,
    /// Busy fraction over the run (0 to 1).
    pub utilization: f64,
    /// Energy in joules.
    pub energy_j: f64,
}

/// The result of one simulation.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The machine.
    pub arch: String,
    /// What was simulated.
    pub workload: String,
    /// Simulated time in seconds.
    pub time_s: f64,
    /// Simulated time in cycles.
    pub cycles: f64,
    /// Energy in joules.
    pub energy_j: f64,
    /// Energy / time, in watts.
    pub avg_power_w: f64,
    /// Area in mm^2.
    pub area_mm2: f64,
    /// The design's peak power in watts.
    pub peak_power_w: f64,
    /// Off-chip traffic in bytes.
    pub offchip_bytes: f64,
    /// Link-bytes moved on the interconnect (energy is charged on these).
    pub noc_bytes: f64,
    /// The part of `noc_bytes` moved between the I/O dies and the clusters by off-chip
    /// transfers (`memory.offchip.io_dies`); `noc_bytes - io_noc_bytes` is cluster-to-cluster.
    pub io_noc_bytes: f64,
    /// Busy fraction by unit class.
    pub utilization: BTreeMap<String, f64>,
    /// Off-chip bytes by data kind (ciphertext, evalkey, ...).
    pub offchip_by_kind_bytes: BTreeMap<String, f64>,
    /// Peak on-chip footprint in bytes.
    pub peak_onchip_bytes: f64,
    /// Trace instructions simulated.
    pub instructions: u64,
    /// Area, power, energy and utilization by component.
    pub components: Vec<ComponentCost>,
    /// Seconds of the makespan added while each (outermost) HE operation ran.
    pub time_by_op_s: BTreeMap<String, f64>,
    /// Energy x delay x area (J s mm^2), the papers' efficiency metric.
    pub edap: f64,
    /// `latency` (one task over the whole machine) or `throughput` (one task per cluster).
    pub mode: String,
    /// Tasks finished per minute in this mode.
    pub tasks_per_minute: f64,
    /// Timed warm: the inputs on chip and the results left there
    /// ([`crate::engine::RunOptions::warm`]).
    pub warm: bool,
    /// This package's yield and cost, and one monolithic die of the same logic (when the
    /// machine has a cost model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<crate::cost::PackageCost>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The same design as one die, for comparison with a chiplet package.
    pub monolithic: Option<crate::cost::PackageCost>,
    /// What `energy_j` (and the average power and EDAP derived from it) covers.
    pub energy_scope: EnergyScope,
    /// Where `area_mm2` and `peak_power_w` come from: [`crate::area::INPUT_LABEL`], the
    /// component tables copied into the description, or, for a description without one,
    /// [`crate::area::PREDICTED_LABEL`].
    pub area_source: &'static str,
    /// The area, peak power and cost predicted from the description's units, memories and
    /// node ([`crate::area`]); absent for a description without an `[area]` section.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub area_predicted: Option<crate::area::AreaPowerPrediction>,
    /// The two-level storage's traffic and fill time ([`crate::storage`]); absent for a
    /// machine whose register files have no capacity (the single-level model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub register_file: Option<crate::storage::StorageReport>,
    /// `limb-tiled` with shared BConv inputs: output tiles that found their staged input
    /// dropped from the scratchpad for room and moved it again (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bconv_inputs_re_moved: Option<u64>,
    /// The engine's issue window and what it did (printed as top-level fields); absent for a
    /// model the engine does not run (the single-PE CoFHEE model). In throughput mode, one
    /// task's schedule.
    #[serde(flatten)]
    pub issue: Option<IssueStats>,
}

/// The issue window's statistics (`engine/issue.rs`): whether the bound on the reservation
/// table changed the schedule, and how much it held. A run whose `window_holds` is 0 has the
/// schedule of an unbounded window bit for bit, so a user who shrinks `--issue-window` to
/// save memory can see whether the figures moved.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct IssueStats {
    /// The issue window in placed instructions ([`crate::engine::RunOptions::issue_window`]).
    pub issue_window: u64,
    /// Instructions whose placement the window held back (`Schedule::window_holds`).
    pub window_holds: u64,
    /// The most busy intervals the reservation table held at once, over all resources: the
    /// engine's memory for timing, bounded by the issue window.
    pub peak_intervals: u64,
}

impl IssueStats {
    /// The statistics of schedule `s`.
    pub fn of(s: &Schedule) -> Self {
        Self {
            issue_window: s.issue_window as u64,
            window_holds: s.window_holds,
            peak_intervals: s.peak_intervals as u64,
        }
    }
}

/// What a report's energy covers, from what the machine description cites: a paper that
/// gives no component power (REED, CiFHER) leaves the logic's energy out, and saying so
/// keeps a 0 J or a links-only figure from reading as a measurement of the whole chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EnergyScope {
    /// Components' power x utilization, plus the per-bit energies of memories and links.
    Full,
    /// Only the cited per-bit energies of off-chip memory and links: no component power.
    DataMovement,
    /// Nothing: the description cites neither component power nor per-bit energies.
    None,
}

impl Report {
    /// Bytes moved between clusters: the NoC's link-bytes less the I/O dies' share.
    pub fn cluster_to_cluster_bytes(&self) -> f64 {
        self.noc_bytes - self.io_noc_bytes
    }
}

impl EnergyScope {
    /// The scope of `m`'s energy figures.
    pub fn of(m: &Machine) -> Self {
        let components = m.components.iter().any(|c| c.peak_w > 0.0);
        let per_bit = m.memory.noc.pj_per_bit > 0.0 || m.memory.offchip.pj_per_bit > 0.0;
        match (components, per_bit) {
            (true, _) => Self::Full,
            (false, true) => Self::DataMovement,
            (false, false) => Self::None,
        }
    }

    /// A short note for tables, empty for [`EnergyScope::Full`].
    pub fn note(self) -> &'static str {
        match self {
            Self::Full => "",
            Self::DataMovement => {
                " (off-chip memory and links only: the description gives no component power)"
            }
            Self::None => " (not modelled: the description gives no power or per-bit energy)",
        }
    }
}

/// How many of a component this configuration has.
pub fn component_count(m: &Machine, per: Per, count: f64) -> f64 {
    count
        * match per {
            Per::Chip => 1.0,
            Per::Cluster => m.chip.clusters as f64,
            Per::ScratchpadMb => {
                let mb = m.scratchpad_mb();
                if mb.is_finite() {
                    mb
                } else {
                    0.0
                }
            }
            Per::OffchipStack => m.memory.offchip.stacks as f64,
            Per::Link => m.links() as f64,
        }
}

/// Area and peak power of `m` (sums of per-unit figures times counts).
pub fn area_power(m: &Machine) -> (f64, f64) {
    m.components.iter().fold((0.0, 0.0), |(a, p), c| {
        let n = component_count(m, c.per, c.count);
        (a + n * c.area_mm2, p + n * c.peak_w)
    })
}

/// Utilization per activity class over a schedule of `cycles`.
pub fn utilization(m: &Machine, s: &Schedule) -> BTreeMap<String, f64> {
    let lay = Layout::of(m);
    let mut sums: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for r in Resource::all(&lay) {
        let e = sums.entry(r.class().to_string()).or_default();
        e.0 += s.busy.get(r.index(&lay)).copied().unwrap_or(0.0);
        e.1 += 1.0;
    }
    let cycles = s.cycles.max(1e-9);
    let mut out: BTreeMap<String, f64> = sums
        .into_iter()
        .map(|(c, (b, n))| (c, (b / (n * cycles)).min(1.0)))
        .collect();
    let rf_bpc = m.total_gbs(&m.memory.register_file) / m.clock.ghz;
    out.insert(
        "register_file".into(),
        (s.rf_bytes / (rf_bpc * cycles)).min(1.0),
    );
    out
}

fn activity_key(a: Activity) -> &'static str {
    match a {
        Activity::Ntt => "ntt",
        Activity::Bconv => "bconv",
        Activity::Auto => "auto",
        Activity::Madu => "madu",
        Activity::Prng => "prng",
        Activity::Scratchpad => "scratchpad",
        Activity::RegisterFile => "register_file",
        Activity::Noc => "noc",
        Activity::Offchip => "offchip",
        Activity::None => "none",
    }
}

/// The report of schedule `s` of `workload` on `m`.
pub fn report(m: &Machine, workload: &str, s: &Schedule) -> Report {
    if let Some(with) = crate::area::with_predicted_components(m) {
        return Report {
            area_source: crate::area::PREDICTED_LABEL,
            ..report(&with, workload, s)
        };
    }
    let time_s = s.cycles / (m.clock.ghz * 1e9);
    let util = utilization(m, s);
    let components: Vec<ComponentCost> = m
        .components
        .iter()
        .map(|c| {
            let n = component_count(m, c.per, c.count);
            let u = util.get(activity_key(c.activity)).copied().unwrap_or(0.0);
            ComponentCost {
                name: c.name.clone(),
                count: n,
                area_mm2: n * c.area_mm2,
                peak_w: n * c.peak_w,
                utilization: u,
                energy_j: n * c.peak_w * u * time_s,
            }
        })
        .collect();
    let (area, peak) = area_power(m);
    // Per-bit energies of links and memories, where a config cites them, on top of the
    // components' peak-power x utilization.
    let per_bit = 8e-12
        * (s.noc_bytes * m.memory.noc.pj_per_bit + s.offchip_bytes * m.memory.offchip.pj_per_bit);
    let energy: f64 = components.iter().map(|c| c.energy_j).sum::<f64>() + per_bit;
    Report {
        arch: m.name.clone(),
        workload: workload.to_string(),
        time_s,
        cycles: s.cycles,
        energy_j: energy,
        avg_power_w: if time_s > 0.0 { energy / time_s } else { 0.0 },
        area_mm2: area,
        peak_power_w: peak,
        offchip_bytes: s.offchip_bytes,
        noc_bytes: s.noc_bytes,
        io_noc_bytes: s.io_noc_bytes,
        utilization: util,
        offchip_by_kind_bytes: s
            .offchip_by_kind
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        peak_onchip_bytes: s.peak_onchip_bytes,
        instructions: s.instructions,
        components,
        time_by_op_s: s
            .growth_by_op
            .iter()
            .map(|(k, v)| (k.clone(), v / (m.clock.ghz * 1e9)))
            .collect(),
        edap: energy * time_s * area,
        energy_scope: EnergyScope::of(m),
        mode: "latency".into(),
        warm: false,
        tasks_per_minute: if time_s > 0.0 { 60.0 / time_s } else { 0.0 },
        package: m.cost.as_ref().map(|c| c.package(area, m.die_count())),
        monolithic: m.cost.as_ref().map(|c| c.package(area, 1)),
        area_source: crate::area::INPUT_LABEL,
        area_predicted: m.area.as_ref().and_then(|_| crate::area::predict(m).ok()),
        register_file: crate::storage::StorageReport::of(m, s),
        bconv_inputs_re_moved: crate::schedule::shares_bconv_inputs(m)
            .then_some(s.bconv_inputs_re_moved),
        issue: Some(IssueStats::of(s)),
    }
}

/// Throughput mode: every cluster runs its own copy of the task on its slice of the machine
/// ([`Machine::slice`]); time is one task's, throughput `clusters` tasks per that time, energy
/// and power those of all clusters, area and cost the whole machine's.
pub fn throughput(
    m: &Machine,
    workload: &str,
    instrs: &[tessera_backend::trace::Instr],
) -> Result<Report, crate::error::SimError> {
    throughput_window(m, workload, instrs, &Default::default())
}

/// [`throughput`] with the engine's lookahead and issue windows taken from `base`
/// ([`crate::engine::RunOptions::window`], [`crate::engine::RunOptions::issue_window`]).
pub fn throughput_window(
    m: &Machine,
    workload: &str,
    instrs: &[tessera_backend::trace::Instr],
    base: &crate::engine::RunOptions,
) -> Result<Report, crate::error::SimError> {
    let t = Throughput::of(m, base);
    let instrs = crate::schedule::apply(&t.slice, instrs);
    let s = crate::engine::run_with(&t.slice, &instrs, &t.options)?;
    Ok(t.report(workload, &s))
}

/// Throughput mode in two halves, so that the engine between them may be fed a stream
/// (`tessera_lab::stream`) or a held trace ([`throughput`]): the machine one task runs on
/// and its engine options, then the report from that task's schedule.
#[derive(Clone, Debug)]
pub struct Throughput {
    /// The whole machine (with its predicted components where it has no copied table, see
    /// [`crate::area::with_predicted_components`]).
    pub machine: Machine,
    /// Whether `machine`'s components are predicted.
    predicted: bool,
    /// One cluster's slice: what one task's schedule runs on.
    pub slice: Machine,
    /// The engine's options for that task (shared loads under synchronous sharing).
    pub options: crate::engine::RunOptions,
}

impl Throughput {
    /// The setup of `m` in throughput mode, with the engine's lookahead and issue windows of
    /// `base` (its other options are throughput mode's own: cold, no slots kept).
    pub fn of(m: &Machine, base: &crate::engine::RunOptions) -> Self {
        let (machine, predicted) = match crate::area::with_predicted_components(m) {
            Some(with) => (with, true),
            None => (m.clone(), false),
        };
        let shared =
            (machine.options.synchronous_sharing && machine.chip.clusters > 1).then(|| {
                let (busiest, total) = crate::mapping::Net::of(&machine).all_gather_load();
                crate::engine::SharedLoads {
                    tasks: machine.chip.clusters,
                    busiest_link_per_byte: busiest,
                    link_bytes_per_byte: total,
                }
            });
        let options = crate::engine::RunOptions {
            shared,
            window: base.window,
            issue_window: base.issue_window,
            ..Default::default()
        };
        Self {
            slice: machine.slice(),
            machine,
            predicted,
            options,
        }
    }

    /// The report of the whole machine from one task's schedule `s` on [`Self::slice`].
    pub fn report(&self, workload: &str, s: &Schedule) -> Report {
        let m = &self.machine;
        let k = m.chip.clusters as f64;
        let one = report(&self.slice, workload, s);
        let (area, peak) = area_power(m);
        let energy = one.energy_j * k;
        let r = Report {
            arch: m.name.clone(),
            mode: "throughput".into(),
            tasks_per_minute: if one.time_s > 0.0 {
                k * 60.0 / one.time_s
            } else {
                0.0
            },
            energy_j: energy,
            avg_power_w: if one.time_s > 0.0 {
                energy / one.time_s
            } else {
                0.0
            },
            area_mm2: area,
            peak_power_w: peak,
            edap: energy * one.time_s * area,
            package: m.cost.as_ref().map(|c| c.package(area, m.die_count())),
            monolithic: m.cost.as_ref().map(|c| c.package(area, 1)),
            offchip_bytes: one.offchip_bytes * k,
            noc_bytes: one.noc_bytes * k,
            io_noc_bytes: one.io_noc_bytes * k,
            area_predicted: m.area.as_ref().and_then(|_| crate::area::predict(m).ok()),
            register_file: one.register_file.as_ref().map(|r| r.times(k)),
            bconv_inputs_re_moved: crate::schedule::shares_bconv_inputs(m)
                .then_some(s.bconv_inputs_re_moved),
            ..one
        };
        if self.predicted {
            Report {
                area_source: crate::area::PREDICTED_LABEL,
                ..r
            }
        } else {
            r
        }
    }
}
