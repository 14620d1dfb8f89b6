//! Maps a target row's [`Measure`] to a figure: records the workload (once: recordings are
//! shared by the rows that need them and dropped after the last), simulates it on the machine
//! (once per machine and option set), and computes the metric and the values the row's text
//! refers to.

use crate::error::{LabError, Result};
use crate::source::Window;
use crate::targets::{Measure, Metric};
use std::collections::HashMap;
use std::rc::Rc;
use tessera_backend::trace::Instr;
use tessera_programs::workloads::{self, wide, WorkloadSpec};
use tessera_sim::arch::Arch;
use tessera_sim::machine::{KeySwitchFlow, Machine, Per};
use tessera_sim::report::{area_power, component_count};
use tessera_sim::{Report, SimError};

/// What a recording is, kept after its instructions are dropped: its label, slots, the
/// levels it leaves and, for a program, its window.
#[derive(Clone, Debug)]
pub struct Meta {
    pub label: String,
    pub slots: usize,
    pub level: usize,
    pub window: Option<Window>,
}

/// Why a measure gives no figure here.
#[derive(Clone, Debug)]
pub struct NotRun {
    pub why: String,
    /// A target that is not run counts as a miss, except a program not registered yet
    /// (reported until it lands).
    pub counts_as_miss: bool,
}

/// A figure and the values a row's text may refer to.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    pub value: f64,
    pub values: Vec<(&'static str, f64)>,
    pub words: Vec<(&'static str, String)>,
}

fn key_of(m: &Measure) -> Result<String> {
    trace_key(m).ok_or_else(|| {
        SimError::Unsupported(format!("the metric {:?} without a workload", m.metric)).into()
    })
}

/// Identity of a recording: what was recorded, with which options.
pub fn trace_key(m: &Measure) -> Option<String> {
    let w = m.workload.as_ref()?;
    Some(format!(
        "{w}|{:?}|{:?}|{:?}|{}|{}|{}",
        m.params, m.level, m.size, m.min_ks, m.of_limb, m.streamed_keyswitch
    ))
}

/// Identity of a simulation: the recording, the machine and the options.
pub fn report_key(m: &Measure, warm: bool) -> String {
    format!(
        "{}|{}|{:?}|{warm}|{:?}|{}|{}",
        trace_key(m).unwrap_or_default(),
        m.arch,
        m.sets,
        m.mode,
        m.one_tower,
        m.unbounded_scratchpad
    )
}

/// Recordings and simulations shared between rows. A recording's instructions are dropped
/// when no later row needs a simulation of them that is not cached ([`Lab::retain`]); its
/// [`Meta`] stays.
pub struct Lab<'a> {
    traces: HashMap<String, Rc<Vec<Instr>>>,
    metas: HashMap<String, Meta>,
    reports: HashMap<String, Report>,
    progress: &'a dyn Fn(&str),
}

impl<'a> Lab<'a> {
    pub fn new(progress: &'a dyn Fn(&str)) -> Self {
        Self {
            traces: HashMap::new(),
            metas: HashMap::new(),
            reports: HashMap::new(),
            progress,
        }
    }

    /// Drops the instructions of the recordings `keep` rejects (no later row needs them).
    pub fn retain(&mut self, keep: &dyn Fn(&str) -> bool) {
        self.traces.retain(|k, _| keep(k));
    }

    /// What `m`'s recording is, recording it if no earlier row did.
    fn meta(&mut self, m: &Measure) -> Result<std::result::Result<Meta, NotRun>> {
        let key = key_of(m)?;
        if let Some(meta) = self.metas.get(&key) {
            return Ok(Ok(meta.clone()));
        }
        Ok(self.instrs(m)?.map(|_| self.metas[&key].clone()))
    }

    /// The instructions of `m`'s recording, recorded now if they are not held.
    fn instrs(&mut self, m: &Measure) -> Result<std::result::Result<Rc<Vec<Instr>>, NotRun>> {
        let key = key_of(m)?;
        if let Some(r) = self.traces.get(&key) {
            return Ok(Ok(r.clone()));
        }
        let name = m.workload.clone().unwrap_or_default();
        let program = tessera_programs::PROGRAMS.contains(&name.as_str());
        let builtin = workloads::WORKLOADS.contains(&name.as_str())
            || wide::WIDE_WORKLOADS.contains(&name.as_str());
        if !program && !builtin {
            return Ok(Err(NotRun {
                why: format!("not available: program {name} not registered"),
                counts_as_miss: false,
            }));
        }
        if let Some(gb) = m.memory_gb {
            if let Some(avail) = crate::reproduce::memory_short_of(gb) {
                let what = if program {
                    format!(
                        "{}{} at '{}'",
                        name.to_uppercase(),
                        m.size.map(|s| s.to_string()).unwrap_or_default(),
                        m.params.as_deref().unwrap_or_default()
                    )
                } else {
                    format!("{}-boot", m.params.as_deref().unwrap_or_default())
                };
                return Ok(Err(NotRun {
                    why: crate::reproduce::not_run_here(&what, gb, Some(avail)),
                    counts_as_miss: true,
                }));
            }
        }
        let params = m.params.clone().unwrap_or_else(|| "ark".into());
        (self.progress)(&format!("recording {name} at '{params}'"));
        let rec = if program {
            let opts = tessera_programs::RunOptions {
                params: Some(params),
                size: m.size,
                iterations: None,
                data_dir: None,
                first: None,
            };
            let circuit = tessera_programs::setup::CircuitOptions {
                min_ks: m.min_ks,
                of_limb: m.of_limb,
                dataflow: tessera_ckks::KeySwitchDataflow::streamed_if(m.streamed_keyswitch),
                ..Default::default()
            };
            match tessera_programs::registry::record_with_circuit(&name, &opts, true, circuit) {
                Ok(r) => (
                    Meta {
                        window: Some(Window::of(&r)),
                        label: r.label,
                        slots: r.slots,
                        level: 0,
                    },
                    r.instrs,
                ),
                Err(e @ tessera_programs::ProgramError::Data { .. }) => {
                    return Ok(Err(NotRun {
                        why: format!("not run here: {e}"),
                        counts_as_miss: true,
                    }))
                }
                Err(e) => return Err(e.into()),
            }
        } else {
            let mut spec = WorkloadSpec::new(&name, &params);
            spec.level = m.level;
            spec.min_ks = m.min_ks;
            spec.of_limb = m.of_limb;
            spec.dataflow = tessera_ckks::KeySwitchDataflow::streamed_if(m.streamed_keyswitch);
            let w = workloads::load(&spec)?;
            (
                Meta {
                    label: w.label,
                    slots: w.slots,
                    level: w.level,
                    window: None,
                },
                w.instrs,
            )
        };
        let instrs = Rc::new(rec.1);
        self.metas.insert(key.clone(), rec.0);
        self.traces.insert(key, instrs.clone());
        Ok(Ok(instrs))
    }

    /// `m`'s machine with its overrides.
    fn arch(m: &Measure) -> Result<Arch> {
        let a = Arch::load_with(&m.arch, &m.sets)?;
        Ok(match a {
            Arch::Vector(v) if m.unbounded_scratchpad => {
                Arch::Vector(v.with_unbounded_scratchpad())
            }
            a => a,
        })
    }

    fn vector(m: &Measure) -> Result<Machine> {
        match Self::arch(m)? {
            Arch::Vector(v) => Ok(v),
            Arch::Pe(_) => Err(SimError::Unsupported(format!(
                "the metric {:?} on '{}', a single-PE model",
                m.metric, m.arch
            ))
            .into()),
        }
    }

    /// The simulation of `m`'s recording as `m` asks (`warm` overrides `m.warm`); `m` has
    /// been recorded ([`Lab::meta`]).
    fn report(&mut self, m: &Measure, warm: bool) -> Result<Report> {
        let key = report_key(m, warm);
        if let Some(r) = self.reports.get(&key) {
            return Ok(r.clone());
        }
        let label = self.metas[&key_of(m)?].label.clone();
        let instrs = match self.instrs(m)? {
            Ok(i) => i,
            Err(n) => return Err(SimError::Unsupported(n.why).into()),
        };
        (self.progress)(&format!("simulating {} on {}", label, m.arch));
        let arch = Self::arch(m)?;
        let throughput = m.mode.as_deref() == Some("throughput");
        let r = match &arch {
            Arch::Vector(v) if throughput => tessera_sim::report::throughput(v, &label, &instrs)?,
            Arch::Vector(v) if warm => tessera_sim::simulate_warm(v, &label, &instrs)?,
            _ if m.one_tower => {
                // One tower: Table V measures single commands on one polynomial.
                let one: Vec<_> = instrs
                    .iter()
                    .filter(|i| i.limbs.first() != Some(&1))
                    .cloned()
                    .collect();
                arch.simulate(&label, &one)?
            }
            _ => arch.simulate(&label, &instrs)?,
        };
        self.reports.insert(key, r.clone());
        Ok(r)
    }

    /// The figure of `m`, with the template values `names` asks for.
    pub fn measure(
        &mut self,
        m: &Measure,
        names: &[String],
    ) -> Result<std::result::Result<Measured, NotRun>> {
        if !m.metric.needs_workload() {
            return Ok(Ok(self.static_metric(m)?));
        }
        if let Some(w) = m
            .workload
            .as_deref()
            .filter(|w| crate::bfv::is_bfv_program(w))
        {
            return Ok(Ok(self.bfv_metric(m, w)?));
        }
        let w = match self.meta(m)? {
            Ok(meta) => meta,
            Err(n) => return Ok(Err(n)),
        };
        let r = self.report(m, m.warm)?;
        let wants = |n: &str| names.iter().any(|x| x == n);
        let units = w.window.as_ref().map(|w| w.units as f64);
        let need_units = || {
            units.ok_or_else(|| {
                LabError::from(SimError::Unsupported(format!(
                    "the metric {:?} needs a program workload (one with a window of units)",
                    m.metric
                )))
            })
        };
        let per_run = || {
            w.window.as_ref().and_then(|w| w.per_run).ok_or_else(|| {
                LabError::from(SimError::Unsupported(format!(
                    "the metric {:?} needs a program whose run has a fixed number of units",
                    m.metric
                )))
            })
        };
        let per_level_slot = 1e9 / (w.level as f64 * w.slots as f64);
        let wants_additive = m.metric == Metric::AdditiveMs
            || wants("additive_ms")
            || wants("additive_per_level_slot_ns");
        let additive = if wants_additive {
            let instrs = match self.instrs(m)? {
                Ok(i) => i,
                Err(n) => return Ok(Err(n)),
            };
            (self.progress)(&format!("the additive model of {} on {}", w.label, m.arch));
            Some(tessera_sim::additive::sum_of_operations(
                &Self::vector(m)?,
                &instrs,
            )?)
        } else {
            None
        };
        let value = match m.metric {
            Metric::TimeS => r.time_s,
            Metric::TimeMs => r.time_s * 1e3,
            Metric::TimePerLevelMs => r.time_s * 1e3 / w.level as f64,
            Metric::TimePerLevelSlotNs => r.time_s * per_level_slot,
            Metric::TasNs => self.tas(m, &w, r.time_s)? * 1e9,
            Metric::TimePerUnitMs => r.time_s * 1e3 / need_units()?,
            Metric::TimePerRunMs => r.time_s * 1e3 / need_units()? * per_run()? as f64,
            Metric::TimePerRunS => r.time_s / need_units()? * per_run()? as f64,
            Metric::UnitsPerMinute => r.tasks_per_minute * need_units()?,
            Metric::Cycles => r.cycles,
            Metric::AvgPowerW => r.avg_power_w,
            Metric::AvgPowerMw => r.avg_power_w * 1e3,
            Metric::AdditiveMs => additive.unwrap_or_default() * 1e3,
            Metric::ClusterToClusterBytes => r.cluster_to_cluster_bytes(),
            Metric::TasksPerMinute => r.tasks_per_minute,
            other => {
                return Err(SimError::Unsupported(format!(
                    "the metric {other:?} is a machine metric, not a simulated one"
                ))
                .into())
            }
        };
        let mut out = Measured {
            value,
            ..Default::default()
        };
        out.values.push(("time_ms", r.time_s * 1e3));
        out.values.push(("levels", w.level as f64));
        out.values.push(("slots", w.slots as f64));
        if let Some(win) = &w.window {
            out.values.push(("units", win.units as f64));
            out.values.push(("boots", win.boots as f64));
            if let Some(p) = win.per_run {
                out.values.push(("units_per_run", p as f64));
                out.values
                    .push(("time_per_unit_ms", r.time_s * 1e3 / win.units as f64));
            }
        }
        if wants("boot_share_pct") {
            out.values.push(("boot_share_pct", boot_share_pct(&r)));
        }
        if wants("cold_ms") {
            let cold = self.report(m, false)?;
            out.values.push(("cold_ms", cold.time_s * 1e3));
        }
        if let Some(sum) = additive {
            out.values.push(("additive_ms", sum * 1e3));
            out.values
                .push(("additive_per_level_slot_ns", sum * per_level_slot));
        }
        if wants("task_ms_per_cluster") {
            let clusters = Self::vector(m)?.chip.clusters as f64;
            out.values
                .push(("task_ms_per_cluster", 60e3 * clusters / r.tasks_per_minute));
        }
        Ok(Ok(out))
    }

    /// A BFV program's Table X op mix on a single-PE machine ([`crate::bfv`]): `time_s`,
    /// `time_ms` or `cycles`; template values `<class>_ms` (one op) for each class.
    fn bfv_metric(&mut self, m: &Measure, program: &str) -> Result<Measured> {
        let params = m
            .params
            .clone()
            .unwrap_or_else(|| tessera_programs::registry::default_params(program).into());
        (self.progress)(&format!(
            "recording {program}'s op mix at '{params}' and simulating it on {}",
            m.arch
        ));
        let mix = crate::bfv::simulate_mix(&Self::arch(m)?, program, &params)?;
        let r = &mix.report;
        let value = match m.metric {
            Metric::TimeS => r.time_s,
            Metric::TimeMs => r.time_s * 1e3,
            Metric::Cycles => r.cycles,
            other => {
                return Err(SimError::Unsupported(format!(
                    "the metric {other:?} for the BFV program '{program}' (time_s, time_ms, cycles)"
                ))
                .into())
            }
        };
        let mut out = Measured {
            value,
            ..Default::default()
        };
        out.values.push(("time_ms", r.time_s * 1e3));
        for c in &mix.classes {
            let name: &'static str = match c.class {
                "ct_add" => "ct_add_ms",
                "pt_add" => "pt_add_ms",
                "ct_pt_mul" => "ct_pt_mul_ms",
                "ct_scalar_mul" => "ct_scalar_mul_ms",
                "ct_ct_mul" => "ct_ct_mul_ms",
                _ => "relin_ms",
            };
            out.values.push((name, c.per_op_s * 1e3));
        }
        Ok(out)
    }

    /// ARK's T_A.S. in seconds: bootstrapping (`t_boot`) plus HMult at every level 1..=L_eff
    /// it leaves, at `hmult_params`, per level per slot.
    fn tas(&mut self, m: &Measure, boot: &Meta, t_boot: f64) -> Result<f64> {
        let hp = m.hmult_params.as_deref().unwrap_or_default();
        (self.progress)(&format!(
            "recording and simulating HMult at levels 1..{} of '{hp}'",
            boot.level
        ));
        let machine = Self::vector(m)?;
        let levels: Vec<Option<usize>> = (1..=boot.level).map(Some).collect();
        let mut t_hmult = 0.0;
        for w in workloads::record_levels(&WorkloadSpec::new("hmult", hp), &levels)? {
            t_hmult += tessera_sim::simulate(&machine, &w.label, &w.instrs)?.time_s;
        }
        Ok((t_boot + t_hmult) / boot.level as f64 / boot.slots as f64)
    }

    /// Metrics of the machine (and parameter set) alone.
    fn static_metric(&mut self, m: &Measure) -> Result<Measured> {
        let arch = Self::arch(m)?;
        let pick = |name: &str| {
            (m.only.is_empty() || m.only.iter().any(|o| o == name))
                && !m.except.iter().any(|e| e == name)
        };
        let mut out = Measured::default();
        out.value = match (&arch, m.metric) {
            (_, Metric::PredictedAreaMm2) => tessera_sim::area::predict_arch(&arch)?.total_area_mm2,
            (_, Metric::PredictedPeakPowerW) => {
                tessera_sim::area::predict_arch(&arch)?.total_peak_w
            }
            (Arch::Pe(p), Metric::AreaMm2) => p.area_mm2(),
            (Arch::Pe(_), metric) => {
                return Err(SimError::Unsupported(format!(
                    "the metric {metric:?} on '{}', a single-PE model",
                    m.arch
                ))
                .into())
            }
            (Arch::Vector(v), Metric::AreaMm2) => area_power(v).0,
            (Arch::Vector(v), Metric::PeakPowerW) => area_power(v).1,
            (Arch::Vector(v), Metric::ClusterAreaMm2) => {
                v.components
                    .iter()
                    .filter(|c| c.per == Per::Cluster)
                    .map(|c| component_count(v, c.per, c.count) * c.area_mm2)
                    .sum::<f64>()
                    / v.chip.clusters as f64
            }
            (Arch::Vector(v), Metric::ComponentsAreaMm2 | Metric::ComponentsPowerW) => {
                let sum = v
                    .components
                    .iter()
                    .filter(|c| pick(&c.name))
                    .fold(0.0, |a, c| {
                        a + if m.metric == Metric::ComponentsAreaMm2 {
                            c.area_mm2
                        } else {
                            c.peak_w
                        }
                    });
                if m.times_clusters {
                    sum * v.chip.clusters as f64
                } else {
                    sum
                }
            }
            (Arch::Vector(v), metric) => {
                let (value, flow) = keyswitch_metric(v, m, metric)?;
                if let Some(f) = flow {
                    out.words.push(("flow", format!("{f:?}")));
                }
                value
            }
        };
        Ok(out)
    }
}

/// The key-switching metrics of `v` at `m.params` (h3.md 5.3, Fig. 9).
fn keyswitch_metric(
    v: &Machine,
    m: &Measure,
    metric: Metric,
) -> Result<(f64, Option<KeySwitchFlow>)> {
    use tessera_ckks::{KeySwitchPlan, Parameters};
    let params = m.params.as_deref().ok_or_else(|| {
        SimError::Unsupported(format!("the metric {metric:?} needs measure.params"))
    })?;
    let p = Parameters::preset(params).map_err(|e| SimError::Unsupported(e.to_string()))?;
    let top = p.max_level();
    let word = v.word_bytes();
    let ks = |e: tessera_ckks::CkksError| LabError::from(SimError::Unsupported(e.to_string()));
    Ok(match metric {
        // Schoolbook: one limb per digit (beta = l + 1) and one special prime (h3.md Fig. 1).
        Metric::KskSchoolbookMb => (((top + 1) * (top + 2) * p.n()) as f64 * word / 1e6, None),
        Metric::KskDynamicMb => (
            KeySwitchPlan::dynamic(&p, top).map_err(ks)?.key_words(&p) as f64 * word / 1e6,
            None,
        ),
        Metric::KeyswitchSavedPct => {
            let (mut fixed_cost, mut dyn_cost) = (0.0, 0.0);
            let fixed = KeySwitchPlan::fixed(&p);
            for level in 1..=top {
                fixed_cost += fixed.cost(&p, level);
                dyn_cost += KeySwitchPlan::dynamic(&p, level)
                    .map_err(ks)?
                    .cost(&p, level);
            }
            (100.0 * (1.0 - dyn_cost / fixed_cost), None)
        }
        Metric::KeyswitchFlowCase => {
            let flow = v.keyswitch_flow(top, p.p().len(), p.n());
            let case = if flow == KeySwitchFlow::OnChip {
                1.0
            } else {
                2.0
            };
            (case, Some(flow))
        }
        other => {
            return Err(SimError::Unsupported(format!(
                "the metric {other:?} is not a machine metric"
            ))
            .into())
        }
    })
}

/// Bootstrapping's share of `r`'s time, in percent: the makespan growth the simulator
/// attributes to the outermost `Boot` spans ([`tessera_programs::counter::BOOT`]) over all
/// of it (time that overlaps an earlier operation is not counted twice).
pub fn boot_share_pct(r: &Report) -> f64 {
    let total: f64 = r.time_by_op_s.values().sum();
    if total <= 0.0 {
        return 0.0;
    }
    let boot = r
        .time_by_op_s
        .get(tessera_programs::counter::BOOT)
        .copied()
        .unwrap_or(0.0);
    100.0 * boot / total
}
