//! Machine descriptions: one TOML file per design (`configs/*.toml`), every constant with a
//! citation. Built-in names (`ark`) resolve to the files shipped in the repository; any other
//! argument is read as a path.

use crate::error::SimError;
use serde::{Deserialize, Serialize};

/// A cited number: every hardware constant carries the paper section or table it comes from.
pub type Cite = String;

/// Clock and word size.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clock {
    /// Clock frequency in GHz.
    pub ghz: f64,
    /// Machine word in bits (one RNS residue per word).
    pub word_bits: u32,
    /// Where the values come from (paper, section or table).
    pub cite: Cite,
}

/// How polynomials are spread over the clusters (ark.md section V-B).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// Limb-wise everywhere, switching to coefficient-wise around every BConv with an
    /// all-to-all exchange on the NoC (ARK's policy).
    Alternating,
    /// Limb-wise only: a BConv runs on one cluster and key-switch accumulation moves the
    /// partial products over the NoC (ark.md section V-B, the comparison design of VI-D).
    LimbWise,
    /// REED's interleaved limbs with the non-blocking ring KeySwitch (reed.md 5.2-5.3,
    /// Algorithm 3): a BConv's input limbs travel the ring once and each cluster computes its
    /// own output limbs; nothing else moves between clusters.
    Ring,
    /// CiFHER's limb duplication (cifher.md V-A): per BConv, broadcast the input limbs to
    /// every cluster and compute the output limbs where they live, when Eq. 3 says that moves
    /// less than ARK's redistribution of inputs and outputs; otherwise ARK's alternating
    /// method.
    LimbDuplication,
    /// Every limb split by coefficients over all the clusters, all the time (CiFHER's
    /// coefficient scattering, cifher.md IV-C): transforms exchange, BConvs do not.
    CoefficientWise,
    /// A user-defined mix: one of the others per job, named in `[chip.mix]`.
    Mix,
}

/// `[chip.mix]`: the policy of each job under `chip.policy = "mix"` ([`crate::dataflow`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixSpec {
    /// How limbs are laid out, and what a transform or automorphism exchanges.
    pub layout: Policy,
    /// How a BConv is spread.
    pub bconv: Policy,
    /// What a key-switch inner product moves.
    pub key_dot: Policy,
}

impl Default for MixSpec {
    fn default() -> Self {
        Self {
            layout: Policy::Alternating,
            bconv: Policy::Alternating,
            key_dot: Policy::Alternating,
        }
    }
}

/// The clusters and how data is spread over them.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chip {
    /// Clusters (each with its own functional units and scratchpad slice).
    pub clusters: usize,
    /// Vector lanes per cluster.
    pub lanes: usize,
    /// Data-distribution policy.
    pub policy: Policy,
    /// Dies the clusters are split over: 1 monolithic, 0 one die per cluster (REED's
    /// chiplets), otherwise that many.
    #[serde(default = "one")]
    pub dies: usize,
    /// CiFHER's block clustering (cifher.md IV-C), `dx x dy-BK-block_rows x block_cols` on
    /// a mesh: each block of cores is a limb cluster (its cores split every limb it holds by
    /// coefficients, so (i)NTTs and automorphisms exchange data inside the block), and the
    /// cores at the same place in every block form a coefficient cluster (BConv exchanges
    /// data there). 1 x 1 is limb scattering, the whole mesh coefficient scattering, one
    /// column `dy x 1` dimension-wise clustering.
    #[serde(default = "one")]
    pub block_rows: usize,
    #[serde(default = "one")]
    /// Columns of the blocks a cluster's limbs are laid out in.
    pub block_cols: usize,
    /// The per-job policies of `policy = "mix"` (required by it, refused otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<MixSpec>,
    /// Where the values come from (paper, section or table).
    pub cite: Cite,
}

impl Chip {
    /// Cores per block (limb cluster).
    pub fn block_size(&self) -> usize {
        self.block_rows * self.block_cols
    }
}

/// One functional-unit class, per cluster.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unit {
    /// Units of this class per cluster (their throughput adds).
    pub count: usize,
    /// Coefficients (or MACs, for BConv: see [`BconvUnit`]) one unit processes per cycle.
    pub elements_per_cycle: usize,
    /// Pipeline fill per instruction, in cycles.
    #[serde(default)]
    pub latency_cycles: u64,
    /// Where the values come from (paper, section or table).
    pub cite: Cite,
}

/// The BConv unit: `lanes` lanes, each a 1 x `macs_per_lane` output-stationary array. A
/// design without one omits `[units.bconv]` (or writes `count = 0` alone): BConv then runs as
/// multiply-accumulates on the MADUs, and `lanes` and `macs_per_lane` are not used.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BconvUnit {
    /// BConv units per cluster.
    pub count: usize,
    #[serde(default)]
    /// Lanes per unit.
    pub lanes: usize,
    #[serde(default)]
    /// Multiply-accumulators per lane.
    pub macs_per_lane: usize,
    #[serde(default)]
    /// Pipeline latency in cycles.
    pub latency_cycles: u64,
    /// Where the values come from (paper, section or table).
    pub cite: Cite,
}

impl Default for BconvUnit {
    fn default() -> Self {
        Self {
            count: 0,
            lanes: 0,
            macs_per_lane: 0,
            latency_cycles: 0,
            cite: "absent: no BConv unit (BConv runs on the MADUs)".into(),
        }
    }
}

/// The functional units of one cluster. `bconv` and `prng` may be omitted by designs without
/// them (see [`BconvUnit`]; a PRNG is used only with `options.seeded_keys`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Units {
    /// NTT units.
    pub ntt: Unit,
    #[serde(default)]
    /// Base-conversion units.
    pub bconv: BconvUnit,
    /// Automorphism units.
    pub auto: Unit,
    /// Element-wise multiply-add units.
    pub madu: Unit,
    #[serde(default = "Unit::absent_prng")]
    /// PRNG units (key and plaintext expansion).
    pub prng: Unit,
}

impl Unit {
    /// No PRNG (`count = 0`): allowed while `options.seeded_keys` is off.
    fn absent_prng() -> Self {
        Self {
            count: 0,
            elements_per_cycle: 0,
            latency_cycles: 0,
            cite: "absent: no PRNG (used only with options.seeded_keys)".into(),
        }
    }
}

/// A memory level.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    /// Capacity in MB (2^20 bytes); absent for memories whose capacity is not modelled.
    #[serde(default)]
    pub capacity_mb: Option<f64>,
    /// Aggregate bandwidth in GB/s (10^9 bytes per second).
    pub bandwidth_gbs: f64,
    /// Access latency in ns (off-chip only).
    #[serde(default)]
    pub latency_ns: f64,
    /// Stacks or channels (for area and power scaling).
    #[serde(default = "one")]
    pub stacks: usize,
    /// Capacity and bandwidth are per cluster (they scale with the cluster count). Off-chip:
    /// every cluster (die) has its own memory and loads go to the home cluster of each limb
    /// (REED's exclusive HBM per chiplet).
    #[serde(default)]
    pub per_cluster: bool,
    /// NoC only: `crossbar` (one shared resource of `bandwidth_gbs`, the default) or `ring`
    /// (k unidirectional links of `bandwidth_gbs` each).
    #[serde(default)]
    pub topology: Topology,
    /// NoC only, `mesh`: clusters per row (the mesh is `mesh_dx` x clusters / `mesh_dx`).
    #[serde(default)]
    pub mesh_dx: usize,
    /// NoC only: all-gathers follow the XY multicast routes (false) or the conflict-free
    /// hop-by-hop schedule of [`crate::topology::Links::all_gather_schedule`] (H3's 8-hop
    /// broadcast, h3.md 4.2).
    #[serde(default)]
    pub scheduled_broadcast: bool,
    /// Energy per bit moved over this interconnect or memory, in pJ (0: not modelled).
    #[serde(default)]
    pub pj_per_bit: f64,
    /// Off-chip only, with a mesh NoC: I/O dies (1 or 2) beside the mesh through which the
    /// shared memory reaches the clusters, every transfer crossing the NoC links from the
    /// die to the data's home clusters (cifher.md VI-A). 0: memory attaches directly.
    #[serde(default)]
    pub io_dies: usize,
    /// Where the values come from (paper, section or table).
    pub cite: Cite,
}

/// H3's two key-switch execution flows (h3.md 3.2, Fig. 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeySwitchFlow {
    /// Case 1: intermediates stay on chip; only keys stream in.
    OnChip,
    /// Case 2: every step loads and stores its intermediates.
    Streamed,
}

/// How clusters (or dies) are connected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Topology {
    /// One shared network (ARK's multiplexer NoC).
    #[default]
    Crossbar,
    /// A unidirectional ring of point-to-point links (REED's C2C ring).
    Ring,
    /// A 2D mesh with XY routing (CiFHER's network-on-package).
    Mesh,
}

fn one() -> usize {
    1
}

/// Memories and interconnect.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memories {
    /// On-chip scratchpad (all clusters together).
    pub scratchpad: Memory,
    /// Register files (all clusters together).
    pub register_file: Memory,
    /// Off-chip memory (HBM).
    pub offchip: Memory,
    /// Network-on-chip between clusters.
    pub noc: Memory,
}

/// Algorithm and hardware options that can be switched per run. Every option is off when
/// absent (and the `[options]` table may be omitted): a design has a feature only if its file
/// says so.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// Evaluation keys stored as (b, seed): the `a` half is regenerated by the PRNG instead
    /// of loaded from off-chip.
    #[serde(default)]
    pub seeded_keys: bool,
    /// On-the-fly twisting-factor generation in the NTTU (ark.md V-C); without it every limb
    /// transform also streams N twisting factors from the scratchpad.
    #[serde(default)]
    pub of_twist: bool,
    /// The first BConv step (scaling by qhat^-1) is fused into the INTT pipeline (ark.md
    /// V-C, "BConv mult unit"); otherwise it runs on the MADUs.
    #[serde(default)]
    pub bconv_scale_in_intt: bool,
    /// One unified array of modular-arithmetic lanes runs NTTs, element-wise work, BConv and
    /// automorphisms alike (H3's FHEU, h3.md 4.3): their work shares the `ntt` resource.
    #[serde(default)]
    pub unified_mau: bool,
    /// Limb-granular execution (the micro-instructions of CiFHER's simulator, cifher.md
    /// VI-A; REED's limb-by-limb Algorithm 3 through ping-pong buffers, reed.md 4.5): a
    /// value produced and consumed by limb-wise work with no BConv in between streams
    /// through the scratchpad two limbs at a time instead of occupying it whole; a key or
    /// plaintext load used that way streams from off-chip without being cached.
    #[serde(default)]
    pub limb_streaming: bool,
    /// A BConv from one limb is a modular reduction (both `qhat` factors are 1), which the
    /// NTT that consumes each output limb applies at its input, so it takes no multiplier
    /// pass: REED's KeySwitch with K = 1 goes straight from `INTT(d)_(q_i)` to
    /// `NTT(d)_(q_j)` (reed.md 5, Fig. 1). Without it, such a BConv costs what any other does.
    #[serde(default)]
    pub single_limb_bconv_in_ntt: bool,
    /// In throughput mode the clusters run their tasks in lockstep and share keys and
    /// plaintexts: each cluster reads `1 / clusters` of every one from its own memory and
    /// the pieces are all-gathered on the NoC (h3.md 4.2, "multi-core synchronous execution
    /// approach for efficient data sharing"). Without it each task loads its own copy.
    #[serde(default)]
    pub synchronous_sharing: bool,
    /// Where the options come from (may be omitted when every option is off).
    #[serde(default)]
    pub cite: Cite,
}

/// How a component's count follows the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Per {
    /// One per chip.
    Chip,
    /// One per cluster.
    Cluster,
    /// Per MB of scratchpad capacity.
    ScratchpadMb,
    /// Per off-chip memory stack.
    OffchipStack,
    /// Per interconnect link (a ring of k clusters has k).
    Link,
}

/// What a component's dynamic power follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Activity {
    /// NTT unit busy time.
    Ntt,
    /// BConv unit busy time.
    Bconv,
    /// Automorphism unit busy time.
    Auto,
    /// Element-wise unit busy time.
    Madu,
    /// PRNG unit busy time.
    Prng,
    /// Scratchpad accesses.
    Scratchpad,
    /// Register-file accesses.
    RegisterFile,
    /// On-chip network transfers.
    Noc,
    /// Off-chip transfers.
    Offchip,
    /// No utilization-based energy (area and peak power only; e.g. a memory whose energy is
    /// charged per bit instead).
    None,
}

/// An area / peak-power line of the design.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Component {
    /// Its name.
    pub name: String,
    /// What one unit of `per` costs.
    pub area_mm2: f64,
    /// Peak power in watts.
    pub peak_w: f64,
    /// Units per `per` (e.g. 2 MADUs per cluster).
    #[serde(default = "one_f")]
    pub count: f64,
    /// Whether the figures are per unit, per cluster or per chip.
    pub per: Per,
    /// The activity its energy scales with.
    pub activity: Activity,
    /// Where the values come from (paper, section or table).
    pub cite: Cite,
}

fn one_f() -> f64 {
    1.0
}

/// A machine description.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Machine {
    /// `"vector"` or absent (see [`crate::arch`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Its name.
    pub name: String,
    /// One line on what it is.
    pub description: String,
    /// Clock frequency and word size.
    pub clock: Clock,
    /// Clusters and their layout.
    pub chip: Chip,
    /// Functional units per cluster.
    pub units: Units,
    /// On-chip and off-chip memories.
    pub memory: Memories,
    #[serde(default)]
    /// Modelling options.
    pub options: Options,
    /// The papers' area and peak-power tables, copied (optional: without them reports use
    /// the predicted area, [`crate::area`]).
    #[serde(rename = "component", default)]
    pub components: Vec<Component>,
    /// Yield and cost constants (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::cost::CostModel>,
    /// What the predictive area / power model needs beyond the above (optional; see
    /// [`crate::area`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub area: Option<crate::area::spec::AreaSpec>,
    /// The scheduling pass between trace and engine (`[schedule]`; program order when
    /// absent, see [`crate::schedule`]).
    #[serde(default)]
    pub schedule: crate::schedule::ScheduleSpec,
}

impl Machine {
    /// Parses a TOML description and checks every value's range.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self, SimError> {
        let m: Machine = toml::from_str(text).map_err(|e| SimError::Config {
            origin: origin.to_string(),
            message: e.to_string(),
        })?;
        m.validate()
            .map_err(|e| crate::limits::locate(e, origin, Some(text)))?;
        Ok(m)
    }

    /// A built-in name (`ark`) or a path to a TOML file describing a vector machine.
    pub fn load(name_or_path: &str) -> Result<Self, SimError> {
        match crate::arch::Arch::load(name_or_path)? {
            crate::arch::Arch::Vector(m) => Ok(m),
            crate::arch::Arch::Pe(m) => Err(SimError::Unsupported(format!(
                "'{}' is a single-PE model; load it with Arch::load",
                m.name
            ))),
        }
    }

    /// Checks every numeric field against its range ([`crate::limits`]): positive finite
    /// clocks, bandwidths and capacities; non-negative finite latencies and energies; counts
    /// from 1 (0 where a design may lack the part) to bounds that keep the simulator's
    /// memory and arithmetic in range; then the structural rules (mesh shape, I/O dies,
    /// block clustering). Errors name the field by its dotted path.
    pub fn validate(&self) -> Result<(), SimError> {
        use crate::limits::*;
        positive("clock.ghz", self.clock.ghz, MAX_GHZ)?;
        count("clock.word_bits", self.clock.word_bits, 16, 128)?;
        let c = &self.chip;
        count("chip.clusters", c.clusters, 1, MAX_CLUSTERS)?;
        count("chip.lanes", c.lanes, 1, MAX_WIDTH)?;
        count("chip.dies", c.dies, 0, c.clusters as u64)?;
        count("chip.block_rows", c.block_rows, 1, c.clusters as u64)?;
        count("chip.block_cols", c.block_cols, 1, c.clusters as u64)?;
        // A PRNG is needed only to regenerate seeded keys.
        let prng_min = u64::from(self.options.seeded_keys);
        for (name, u, min) in [
            ("units.ntt", &self.units.ntt, 1),
            ("units.auto", &self.units.auto, 1),
            ("units.madu", &self.units.madu, 1),
            ("units.prng", &self.units.prng, prng_min),
        ] {
            if u.count == 0 && min == 0 {
                continue;
            }
            if u.count == 0 && name == "units.prng" {
                return Err(SimError::Invalid {
                    name: "units.prng",
                    value: "absent (count = 0)".into(),
                    allowed: "a [units.prng] table with count >= 1 when options.seeded_keys = true (keys are regenerated by the PRNG)".into(),
                });
            }
            count(&format!("{name}.count"), u.count, 1, MAX_UNITS)?;
            count(
                &format!("{name}.elements_per_cycle"),
                u.elements_per_cycle,
                1,
                MAX_WIDTH,
            )?;
            count(
                &format!("{name}.latency_cycles"),
                u.latency_cycles,
                0,
                MAX_LATENCY_CYCLES,
            )?;
        }
        let b = &self.units.bconv;
        // A design without a BConvU (count = 0) runs BConv on its MADUs.
        count("units.bconv.count", b.count, 0, MAX_UNITS)?;
        if b.count > 0 {
            count("units.bconv.lanes", b.lanes, 1, MAX_WIDTH)?;
            count("units.bconv.macs_per_lane", b.macs_per_lane, 1, MAX_WIDTH)?;
        }
        count(
            "units.bconv.latency_cycles",
            b.latency_cycles,
            0,
            MAX_LATENCY_CYCLES,
        )?;
        for (name, m) in [
            ("memory.scratchpad", &self.memory.scratchpad),
            ("memory.register_file", &self.memory.register_file),
            ("memory.offchip", &self.memory.offchip),
            ("memory.noc", &self.memory.noc),
        ] {
            positive(&format!("{name}.bandwidth_gbs"), m.bandwidth_gbs, MAX_GBS)?;
            if let Some(c) = m.capacity_mb {
                positive(&format!("{name}.capacity_mb"), c, MAX_MB)?;
            }
            non_negative(&format!("{name}.latency_ns"), m.latency_ns, MAX_LATENCY_NS)?;
            non_negative(&format!("{name}.pj_per_bit"), m.pj_per_bit, MAX_PJ_PER_BIT)?;
            count(&format!("{name}.stacks"), m.stacks, 1, MAX_UNITS)?;
            count(&format!("{name}.mesh_dx"), m.mesh_dx, 0, c.clusters as u64)?;
        }
        if self.memory.noc.topology == Topology::Mesh {
            let dx = self.memory.noc.mesh_dx;
            if dx == 0 || !self.chip.clusters.is_multiple_of(dx) {
                return Err(SimError::Invalid {
                    name: "memory.noc.mesh_dx",
                    value: dx.to_string(),
                    allowed: format!(
                        "a divisor of chip.clusters = {} (the mesh's width)",
                        self.chip.clusters
                    ),
                });
            }
        }
        let io = self.memory.offchip.io_dies;
        if io > 0
            && (io > 2
                || self.memory.noc.topology != Topology::Mesh
                || self.memory.offchip.per_cluster)
        {
            return Err(SimError::Invalid {
                name: "memory.offchip.io_dies",
                value: io.to_string(),
                allowed: "0, or 1 to 2 with a mesh NoC (memory.noc.topology = \"mesh\") and a \
                          shared off-chip memory (memory.offchip.per_cluster = false)"
                    .into(),
            });
        }
        for (name, m) in [
            ("memory.scratchpad.io_dies", &self.memory.scratchpad),
            ("memory.register_file.io_dies", &self.memory.register_file),
            ("memory.noc.io_dies", &self.memory.noc),
        ] {
            if m.io_dies != 0 {
                return Err(SimError::Invalid {
                    name,
                    value: m.io_dies.to_string(),
                    allowed: "0 (I/O dies belong to memory.offchip)".into(),
                });
            }
        }
        if self.chip.block_size() != 1 {
            let dx = self.memory.noc.mesh_dx.max(1);
            let dy = self.chip.clusters / dx;
            let mesh = self.memory.noc.topology == Topology::Mesh;
            let tiles = self.chip.block_cols >= 1
                && self.chip.block_rows >= 1
                && dx.is_multiple_of(self.chip.block_cols)
                && dy.is_multiple_of(self.chip.block_rows);
            if !mesh || !tiles {
                return Err(SimError::Invalid {
                    name: "chip.block_rows x chip.block_cols",
                    value: format!("{} x {}", self.chip.block_rows, self.chip.block_cols),
                    allowed: if mesh {
                        format!("blocks that tile the {dx} x {dy} mesh (rows dividing {dy}, columns dividing {dx})")
                    } else {
                        format!(
                            "1 x 1 on a {:?} interconnect (block clustering needs memory.noc.topology = mesh)",
                            self.memory.noc.topology
                        )
                    },
                });
            }
            if !matches!(
                self.chip.policy,
                Policy::Alternating | Policy::LimbDuplication
            ) {
                return Err(SimError::Invalid {
                    name: "chip.policy",
                    value: format!("{:?}", self.chip.policy),
                    allowed: "alternating or limb-duplication with block clustering".into(),
                });
            }
        }
        self.validate_mix()?;
        for c in &self.components {
            let field = |f: &str| format!("component[{}].{f}", c.name);
            non_negative(&field("area_mm2"), c.area_mm2, MAX_QUANTITY)?;
            non_negative(&field("peak_w"), c.peak_w, MAX_QUANTITY)?;
            non_negative(&field("count"), c.count, MAX_QUANTITY)?;
        }
        self.schedule.validate()?;
        if let Some(cost) = &self.cost {
            cost.validate()?;
        }
        if let Some(a) = &self.area {
            a.validate(&crate::area::tech::Technology::builtin()?)?;
        }
        Ok(())
    }

    /// `chip.mix` goes with `chip.policy = "mix"`, and names no mix itself.
    fn validate_mix(&self) -> Result<(), SimError> {
        match (&self.chip.mix, self.chip.policy) {
            (None, Policy::Mix) => Err(SimError::Invalid {
                name: "chip.mix",
                value: "(absent)".into(),
                allowed: "a [chip.mix] table (layout, bconv, key_dot) with chip.policy = mix"
                    .into(),
            }),
            (Some(_), p) if p != Policy::Mix => Err(SimError::Invalid {
                name: "chip.mix",
                value: format!("with chip.policy = {p:?}"),
                allowed: "only with chip.policy = mix".into(),
            }),
            (Some(m), _) if [m.layout, m.bconv, m.key_dot].contains(&Policy::Mix) => {
                Err(SimError::Invalid {
                    name: "chip.mix",
                    value: "mix".into(),
                    allowed: "alternating, limb-wise, ring, limb-duplication, coefficient-wise"
                        .into(),
                })
            }
            _ => Ok(()),
        }
    }

    /// H3's choice of key-switch execution flow (h3.md 3.2) at `level` with `k` special
    /// limbs and ring degree `n`: Case 1 when the on-chip memory holds the key switch's input
    /// and its result before ModDown, `3 l + 2 k` residue polynomials; otherwise Case 2,
    /// where every step loads and stores its intermediates.
    pub fn keyswitch_flow(&self, level: usize, k: usize, n: usize) -> KeySwitchFlow {
        let need = (3 * level + 2 * k) as f64 * n as f64 * self.word_bytes();
        if need <= self.scratchpad_mb() * 1048576.0 {
            KeySwitchFlow::OnChip
        } else {
            KeySwitchFlow::Streamed
        }
    }

    /// One cluster (tile, chiplet) of this machine with its share of everything shared: what
    /// runs one task in throughput mode, where every cluster works on its own task.
    pub fn slice(&self) -> Self {
        let k = self.chip.clusters as f64;
        let mut m = self.clone();
        m.chip.clusters = 1;
        m.chip.dies = 1;
        m.chip.block_rows = 1;
        m.chip.block_cols = 1;
        for mem in [
            &mut m.memory.scratchpad,
            &mut m.memory.register_file,
            &mut m.memory.offchip,
        ] {
            if !mem.per_cluster {
                mem.bandwidth_gbs /= k;
                mem.capacity_mb = mem.capacity_mb.map(|c| c / k);
            }
        }
        m.memory.noc.topology = Topology::Crossbar;
        m.memory.noc.mesh_dx = 0;
        // A slice's share of the memory reaches it directly.
        m.memory.offchip.io_dies = 0;
        m
    }

    /// This machine with a scratchpad that never overflows: only keys, plaintexts and the
    /// program's own inputs and outputs move off-chip. That is the memory accounting of a
    /// model that charges "the total capacity of each key-switch and plaintext" (h3.md 3.1),
    /// used to show what a paper's figure implies, never as a target's machine.
    pub fn with_unbounded_scratchpad(&self) -> Self {
        let mut m = self.clone();
        m.memory.scratchpad.capacity_mb = None;
        m.name = format!("{} (unbounded scratchpad)", self.name);
        m
    }

    /// Dies of the package.
    pub fn die_count(&self) -> usize {
        if self.chip.dies == 0 {
            self.chip.clusters
        } else {
            self.chip.dies
        }
    }

    /// Scratchpad capacity of the whole machine, in MB (infinite when not modelled).
    pub fn scratchpad_mb(&self) -> f64 {
        let s = &self.memory.scratchpad;
        let per = if s.per_cluster {
            self.chip.clusters as f64
        } else {
            1.0
        };
        s.capacity_mb.map_or(f64::INFINITY, |c| c * per)
    }

    /// Register-file capacity of the whole machine in bytes, when the file states one
    /// (`memory.register_file.capacity_mb`, per cluster with `per_cluster`): the two-level
    /// storage model ([`crate::storage`]). `None`: the single-level model, where chaining
    /// through the register files is limited by nothing.
    pub fn register_file_bytes(&self) -> Option<f64> {
        let r = &self.memory.register_file;
        let per = if r.per_cluster {
            self.chip.clusters as f64
        } else {
            1.0
        };
        r.capacity_mb.map(|c| c * per * 1048576.0)
    }

    /// Aggregate bandwidth of `mem` in GB/s (a per-cluster figure times the clusters).
    pub fn total_gbs(&self, mem: &Memory) -> f64 {
        if mem.per_cluster {
            mem.bandwidth_gbs * self.chip.clusters as f64
        } else {
            mem.bandwidth_gbs
        }
    }

    /// NoC resources: one for a crossbar, one per link for a ring.
    pub fn links(&self) -> usize {
        self.net().len().max(1)
    }

    /// The interconnect's links and routes.
    pub fn net(&self) -> crate::topology::Links {
        crate::topology::Links::new(
            self.memory.noc.topology,
            self.chip.clusters,
            self.memory.noc.mesh_dx,
        )
        .with_io_dies(self.memory.offchip.io_dies)
    }

    /// Off-chip channels: one shared, or one per cluster.
    pub fn channels(&self) -> usize {
        if self.memory.offchip.per_cluster {
            self.chip.clusters
        } else {
            1
        }
    }

    /// Bytes of one machine word.
    pub fn word_bytes(&self) -> f64 {
        self.clock.word_bits as f64 / 8.0
    }

    /// Sets a value by its dotted TOML path (`chip.clusters=8`), re-validating: what sweeps
    /// and `--set` use.
    pub fn with_setting(&self, key: &str, value: &str) -> Result<Self, SimError> {
        let m: Machine = crate::arch::set_value(self, &self.name, key, value)?;
        m.validate()
            .map_err(|e| crate::arch::at_setting(e, &self.name, key, value))?;
        Ok(m)
    }
}
