//! Single-processing-element designs (CoFHEE, cofhee.md): a command-level model. The
//! 128-bit workloads it runs are recorded in `tessera_programs::workloads::wide`.
//!
//! CoFHEE executes Table I commands one at a time from a 32-entry FIFO: NTT / iNTT as
//! `(n/2) log n` radix-2 butterflies on one PE, pointwise commands one coefficient per
//! initiation interval. The interval is 1 when the operands sit in dual-port SRAMs (a read
//! and a write each cycle) and 2 with single-port SRAMs (section III-C). Each NTT stage and
//! each pointwise command drains the PE pipeline once. The workloads (NTT, PolyMul and the
//! BFV ciphertext tensor product of Algorithm 3 / Eq. 4) are computed for real with the
//! math crate's 128-bit arithmetic, and the instruction stream they record drives the model.

use crate::error::SimError;
use crate::report::{ComponentCost, Report};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tessera_backend::trace::{Instr, Op};

/// Clock and word.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeClock {
    /// Clock in MHz.
    pub mhz: f64,
    /// Datapath word in bits.
    pub word_bits: u32,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// The processing element.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pe {
    /// Initiation interval (cycles per butterfly) with dual-port SRAMs.
    pub ii_dual_port: u64,
    /// Initiation interval with single-port SRAMs.
    pub ii_single_port: u64,
    /// Pipeline depth in cycles.
    pub pipeline_depth_cycles: u64,
    /// Cycles to issue one command.
    pub command_issue_cycles: u64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// On-chip SRAMs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeMemory {
    /// Dual-port SRAM banks.
    pub dual_port_srams: usize,
    /// Single-port SRAM banks.
    pub single_port_srams: usize,
    /// Words per SRAM.
    pub sram_words: usize,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// Host interface.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// Commands the FIFO holds.
    pub command_fifo_depth: usize,
    /// Host link bandwidth in Mbit/s.
    pub link_mbps: f64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// Average power per command class.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PePower {
    /// Power during an NTT, in mW.
    pub ntt_mw: f64,
    /// Power during an inverse NTT, in mW.
    pub intt_mw: f64,
    /// Power during point-wise operations, in mW.
    pub pointwise_mw: f64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// An area line.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeComponent {
    /// Its name.
    pub name: String,
    /// Area in mm^2.
    pub area_mm2: f64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// A single-PE machine description (`model = "pe"`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeMachine {
    /// The model kind (`pe`).
    pub model: String,
    /// Its name.
    pub name: String,
    /// One line on what it is.
    pub description: String,
    /// Clock and word size.
    pub clock: PeClock,
    /// The processing element's timing.
    pub pe: Pe,
    /// SRAM banks.
    pub memory: PeMemory,
    /// The host link.
    pub host: Host,
    /// Power per command kind.
    pub power: PePower,
    #[serde(rename = "component")]
    /// Area by component.
    pub components: Vec<PeComponent>,
    /// What the predictive area model needs (optional; see [`crate::area`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub area: Option<crate::area::spec::AreaSpec>,
}

impl PeMachine {
    /// Range checks ([`crate::limits`]), every field named by its dotted path.
    pub fn validate(&self) -> Result<(), SimError> {
        use crate::limits::*;
        positive("clock.mhz", self.clock.mhz, MAX_GHZ * 1e3)?;
        count("clock.word_bits", self.clock.word_bits, 8, 1024)?;
        count("pe.ii_dual_port", self.pe.ii_dual_port, 1, MAX_UNITS)?;
        count("pe.ii_single_port", self.pe.ii_single_port, 1, MAX_UNITS)?;
        count(
            "pe.pipeline_depth_cycles",
            self.pe.pipeline_depth_cycles,
            0,
            MAX_LATENCY_CYCLES,
        )?;
        count(
            "pe.command_issue_cycles",
            self.pe.command_issue_cycles,
            0,
            MAX_LATENCY_CYCLES,
        )?;
        count(
            "memory.dual_port_srams",
            self.memory.dual_port_srams,
            0,
            MAX_UNITS,
        )?;
        count(
            "memory.single_port_srams",
            self.memory.single_port_srams,
            0,
            MAX_UNITS,
        )?;
        count("memory.sram_words", self.memory.sram_words, 1, 1 << 40)?;
        count(
            "host.command_fifo_depth",
            self.host.command_fifo_depth,
            1,
            MAX_WIDTH,
        )?;
        positive("host.link_mbps", self.host.link_mbps, MAX_GBS)?;
        non_negative("power.ntt_mw", self.power.ntt_mw, MAX_QUANTITY)?;
        non_negative("power.intt_mw", self.power.intt_mw, MAX_QUANTITY)?;
        non_negative("power.pointwise_mw", self.power.pointwise_mw, MAX_QUANTITY)?;
        for c in &self.components {
            non_negative(
                &format!("component[{}].area_mm2", c.name),
                c.area_mm2,
                MAX_QUANTITY,
            )?;
        }
        if let Some(a) = &self.area {
            a.validate(&crate::area::tech::Technology::builtin()?)?;
        }
        Ok(())
    }

    /// Initiation interval for polynomials of `n` words: dual-port SRAMs hold them up to
    /// `sram_words`, beyond that the single-port SRAMs are used.
    pub fn ii(&self, n: usize) -> u64 {
        if n <= self.memory.sram_words && self.memory.dual_port_srams > 0 {
            self.pe.ii_dual_port
        } else {
            self.pe.ii_single_port
        }
    }

    /// Cycles of one NTT of `n` points (a power of two): `(n/2) log n` butterflies, one
    /// stage drain each. An error if the count does not fit 64 bits.
    pub fn ntt_cycles(&self, n: usize) -> Result<u64, SimError> {
        if !n.is_power_of_two() {
            return Err(SimError::Invalid {
                name: "n",
                value: n.to_string(),
                allowed: "a power of two (the ring degree of an NTT)".into(),
            });
        }
        let logn = n.trailing_zeros() as u64;
        let butterflies = (n as u64 / 2).checked_mul(logn);
        let drains = logn.checked_mul(self.pe.pipeline_depth_cycles);
        butterflies
            .and_then(|b| b.checked_mul(self.ii(n)))
            .and_then(|b| b.checked_add(drains?))
            .and_then(|c| c.checked_add(self.pe.command_issue_cycles))
            .ok_or_else(|| cycles_overflow("an NTT", n))
    }

    /// Cycles of one pointwise command (PMODMUL, PMODADD, CMODMUL, ...) on `n` words.
    pub fn pointwise_cycles(&self, n: usize) -> Result<u64, SimError> {
        (n as u64)
            .checked_mul(self.ii(n))
            .and_then(|c| c.checked_add(self.pe.pipeline_depth_cycles))
            .and_then(|c| c.checked_add(self.pe.command_issue_cycles))
            .ok_or_else(|| cycles_overflow("a pointwise command", n))
    }

    /// Cycles of an iNTT: the transform, then the `n^-1` scaling pass (cofhee.md VI-A).
    pub fn intt_cycles(&self, n: usize) -> Result<u64, SimError> {
        self.ntt_cycles(n)?
            .checked_add(self.pointwise_cycles(n)? - self.pe.command_issue_cycles)
            .ok_or_else(|| cycles_overflow("an iNTT", n))
    }

    /// Total area of the listed components.
    pub fn area_mm2(&self) -> f64 {
        self.components.iter().map(|c| c.area_mm2).sum()
    }
}

fn cycles_overflow(what: &str, n: usize) -> SimError {
    SimError::Overflow(format!(
        "the cycles of {what} on {n} words do not fit 64 bits (pe.pipeline_depth_cycles, pe.ii_* and the ring degree together are too large)"
    ))
}

/// Seconds the host spends refilling the command FIFO for a program of `commands` commands:
/// the FIFO holds `depth` commands; a longer program is refilled by the host, one 32-bit
/// command word per entry over the link. Not additive over parts of a program (a part shorter
/// than the FIFO needs no refill), so a program costed part by part adds the whole program's
/// refills to its parts' cycles.
pub fn refill_s(m: &PeMachine, commands: usize) -> f64 {
    let refills = commands.saturating_sub(1) / m.host.command_fifo_depth;
    refills as f64 * m.host.command_fifo_depth as f64 * 32.0 / (m.host.link_mbps * 1e6)
}

/// Runs a stream on a single-PE machine. Compute commands run one after another (the FIFO
/// issues one at a time); loads and stores are host transfers over the link, reported
/// separately (`host_io_s`) because cofhee.md VI measures commands on resident data.
pub fn simulate_pe(m: &PeMachine, workload: &str, instrs: &[Instr]) -> Result<Report, SimError> {
    let mut cycles = 0u64;
    let mut by_class: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut io_bits = 0.0;
    let mut commands = 0usize;
    for i in instrs {
        let n = i.n;
        let towers = i.limbs.len().max(1) as u64;
        let (class, c) = match i.op {
            Op::Begin | Op::End => continue,
            Op::Load | Op::Store => {
                io_bits += n as f64 * i.limbs.len() as f64 * m.clock.word_bits as f64;
                continue;
            }
            Op::SelectLimbs | Op::Concat => continue,
            Op::Ntt => ("ntt", m.ntt_cycles(n)?),
            Op::Intt => ("intt", m.intt_cycles(n)?),
            Op::Mul | Op::Add | Op::Sub | Op::MulScalar | Op::AddScalar | Op::Neg => {
                ("pointwise", m.pointwise_cycles(n)?)
            }
            other => {
                return Err(SimError::Unsupported(format!(
                    "{} has no '{}' command (cofhee.md Table I: NTT, iNTT, PMODADD, PMODMUL, PMODSQR, PMODSUB, CMODMUL, PMUL, MEMCPY, MEMCPYR)",
                    m.name,
                    other.name()
                )))
            }
        };
        let overflow = || {
            SimError::Overflow(format!(
                "seq {}: the program's cycle count does not fit 64 bits",
                i.seq
            ))
        };
        let c = c.checked_mul(towers).ok_or_else(overflow)?;
        commands += towers as usize;
        cycles = cycles.checked_add(c).ok_or_else(overflow)?;
        // Never larger than `cycles`, so it cannot overflow where `cycles` did not.
        *by_class.entry(class).or_default() += c;
    }
    let refill_s = refill_s(m, commands);
    let hz = m.clock.mhz * 1e6;
    let time_s = cycles as f64 / hz + refill_s;
    let energy_j: f64 = by_class
        .iter()
        .map(|(k, c)| {
            let mw = match *k {
                "ntt" => m.power.ntt_mw,
                "intt" => m.power.intt_mw,
                _ => m.power.pointwise_mw,
            };
            *c as f64 / hz * mw * 1e-3
        })
        .sum();
    let mut utilization = BTreeMap::new();
    utilization.insert(
        "pe".to_string(),
        if time_s > 0.0 {
            cycles as f64 / hz / time_s
        } else {
            0.0
        },
    );
    let mut time_by_op_s = BTreeMap::new();
    for (k, c) in &by_class {
        time_by_op_s.insert(k.to_string(), *c as f64 / hz);
    }
    let io_s = io_bits / (m.host.link_mbps * 1e6);
    let mut offchip_by_kind_bytes = BTreeMap::new();
    offchip_by_kind_bytes.insert("host_io".to_string(), io_bits / 8.0);
    time_by_op_s.insert("host_io (not in time_s)".to_string(), io_s);
    Ok(Report {
        arch: m.name.clone(),
        workload: workload.to_string(),
        time_s,
        cycles: cycles as f64,
        energy_j,
        avg_power_w: if time_s > 0.0 { energy_j / time_s } else { 0.0 },
        area_mm2: m.area_mm2(),
        peak_power_w: m
            .power
            .ntt_mw
            .max(m.power.intt_mw)
            .max(m.power.pointwise_mw)
            * 1e-3,
        offchip_bytes: io_bits / 8.0,
        noc_bytes: 0.0,
        io_noc_bytes: 0.0,
        register_file: None,
        energy_scope: crate::report::EnergyScope::Full,
        utilization,
        offchip_by_kind_bytes,
        peak_onchip_bytes: 0.0,
        instructions: commands as u64,
        components: m
            .components
            .iter()
            .map(|c| ComponentCost {
                name: c.name.clone(),
                count: 1.0,
                area_mm2: c.area_mm2,
                peak_w: 0.0,
                utilization: 0.0,
                energy_j: 0.0,
            })
            .collect(),
        edap: energy_j * time_s * m.area_mm2(),
        mode: "latency".into(),
        tasks_per_minute: if time_s > 0.0 { 60.0 / time_s } else { 0.0 },
        warm: false,
        package: None,
        monolithic: None,
        time_by_op_s,
        area_source: crate::area::INPUT_LABEL,
        area_predicted: m.area.as_ref().and_then(|_| {
            crate::area::tech::Technology::builtin()
                .and_then(|t| crate::area::predict_pe_with(m, &t))
                .ok()
        }),
        bconv_inputs_re_moved: None,
        issue: None,
    })
}
