//! The `[area]` section of a machine description: what the predictive model needs beyond
//! what the timing model reads (the technology node, the NTT unit's organisation, the kind
//! of off-chip PHY), each value cited in the file like every other constant.

use crate::error::SimError;
use crate::limits::{count, positive, MAX_MB, MAX_UNITS};
use serde::{Deserialize, Serialize};

/// How an NTT unit is organised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NttKind {
    /// The four-step (2D-FFT) pipeline of F1, ARK and CiFHER: `lanes / 2` butterflies per
    /// stage over `log2 N` stages, one twist multiplier per lane, a transpose buffer of
    /// `lanes x sqrt(N)` words.
    #[default]
    FourStep,
    /// REED's hybrid NTT (reed.md 4.1): `lanes` single-path delay-feedback pipelines of
    /// `N / lanes` points (one butterfly per stage each, `N` words of delay lines in all),
    /// a pre-processing and a Hadamard multiplier per lane, then an unrolled `lanes`-point NTT.
    Sdf,
}

/// What the delay lines of an SDF NTT unit are built of (`ntt = "sdf"` only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DelayLines {
    /// Two-port SRAM: each delay line a circular buffer read and written every cycle.
    #[default]
    Sram,
    /// Flip-flops: the delay lines are synthesised with the pipeline's logic, one register
    /// bit per stored bit (REED, whose on-chip SRAMs are its memory units, reed.md 6).
    Registers,
}

/// How an automorphism unit is organised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AutKind {
    /// Transposes of `lanes x lanes` tiles (F1's unit, the organisation ARK and CiFHER
    /// adopt): area as `lanes^2 x w` from F1's measured unit.
    #[default]
    Transpose,
    /// REED's pipelined binary shuffle tree (reed.md 4.2, Fig. 5): `log2 lanes` stages of
    /// `lanes` registers with pairwise exchanges between them.
    ShuffleTree,
}

/// The off-chip memory interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OffchipPhy {
    /// HBM PHYs, one per stack (`memory.offchip.stacks`).
    Hbm,
    /// DRAM bonded on the logic die (H3): no cited PHY area, so not modelled.
    HybridBond,
    /// DDR channels: no cited PHY area, so not modelled.
    Ddr,
    /// No off-chip memory on this die.
    None,
}

/// One SRAM the timing model does not use (a controller's memory), by capacity.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtraSram {
    /// What the SRAM holds.
    pub name: String,
    /// Capacity in KB.
    pub kb: f64,
    #[serde(default = "one")]
    /// Ports (1 or 2).
    pub ports: u32,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

fn one() -> u32 {
    1
}

/// The `[area]` section.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AreaSpec {
    /// Technology node in nm (within the anchors of configs/tech/nodes.toml).
    pub node_nm: f64,
    /// NTT unit organisation.
    #[serde(default)]
    pub ntt: NttKind,
    /// Ring degree the NTT unit is built for (its buffers and stages follow it).
    #[serde(default)]
    pub ntt_points: Option<u64>,
    /// What an SDF NTT unit's delay lines are built of (`ntt = "sdf"` only).
    #[serde(default)]
    pub sdf_delay: DelayLines,
    /// Automorphism unit organisation.
    #[serde(default)]
    pub automorphism: AutKind,
    /// Off-chip memory interface.
    pub offchip_phy: OffchipPhy,
    /// Die-to-die PHY data rate in GT/s (machines of more than one die).
    #[serde(default)]
    pub d2d_gts: Option<f64>,
    /// Identical chiplets: every cluster's router has this many link ports, each with its
    /// die-to-die PHY, built whether or not a neighbour is there (one design reused for every
    /// chiplet, as CiFHER's). Absent: each cluster has the ports of the links that exist.
    #[serde(default)]
    pub router_ports: Option<usize>,
    /// The scratchpad is also the register file (no separate register-file SRAM).
    #[serde(default)]
    pub register_file_shared: bool,
    /// Capacity of a separate register file, all clusters together, in MB (absent: not
    /// stated by the design, so not modelled).
    #[serde(default)]
    pub register_file_mb: Option<f64>,
    /// Ports of each scratchpad bank (1 or 2).
    #[serde(default = "one")]
    pub scratchpad_ports: u32,
    /// SRAMs outside the timing model.
    #[serde(default)]
    pub extra_srams: Vec<ExtraSram>,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

impl AreaSpec {
    /// Range checks, each error naming the field by its dotted path (`area.node_nm`); the
    /// node is checked against the technology's anchors.
    pub fn validate(&self, tech: &super::tech::Technology) -> Result<(), SimError> {
        tech.check_node(self.node_nm)?;
        if let Some(n) = self.ntt_points {
            if !(16..=1 << 24).contains(&n) || !n.is_power_of_two() {
                return Err(SimError::Field {
                    origin: String::new(),
                    line: None,
                    name: "area.ntt_points".into(),
                    value: n.to_string(),
                    allowed: "a power of two from 2^4 to 2^24".into(),
                });
            }
        }
        if self.sdf_delay != DelayLines::Sram && self.ntt != NttKind::Sdf {
            return Err(SimError::Field {
                origin: String::new(),
                line: None,
                name: "area.sdf_delay".into(),
                value: "registers".into(),
                allowed: "\"sram\" (the default) unless area.ntt = \"sdf\": only an SDF NTT \
                          unit has delay lines"
                    .into(),
            });
        }
        if let Some(g) = self.d2d_gts {
            positive("area.d2d_gts", g, 1e3)?;
        }
        if let Some(p) = self.router_ports {
            count("area.router_ports", p, 1, 64)?;
        }
        if let Some(mb) = self.register_file_mb {
            positive("area.register_file_mb", mb, MAX_MB)?;
        }
        count("area.scratchpad_ports", self.scratchpad_ports, 1, 2)?;
        for (i, s) in self.extra_srams.iter().enumerate() {
            positive(&format!("area.extra_srams[{i}].kb"), s.kb, MAX_MB * 1024.0)?;
            count(&format!("area.extra_srams[{i}].ports"), s.ports, 1, 2)?;
        }
        count("area.extra_srams", self.extra_srams.len(), 0, MAX_UNITS)?;
        Ok(())
    }
}
