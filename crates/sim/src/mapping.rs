//! The data mapping: how one whole-polynomial instruction splits into work on each
//! cluster's functional units, scratchpad and the NoC (ark.md section V-B). The distribution
//! policy (how limbs are laid out, and what a BConv, a transform and a key-switch inner
//! product exchange) is a [`crate::dataflow::Distribution`], one file per policy.
//!
//! A limb's home cluster is its ring index modulo the cluster count, so every instruction
//! agrees on where a limb lives. Under the alternating policy a BConv first exchanges its
//! input limbs all-to-all so each cluster holds N / k coefficients of every limb (the
//! coefficient-wise distribution), runs on every BConvU, and exchanges its output back; the
//! paper counts `(alpha + L + 1) N` words per BConvRoutine, of which a cluster keeps 1/k.
//! Under the limb-wise policy a BConv runs whole on one cluster and a key-switch
//! inner product (a `dot` reading an evaluation key) moves its partial products over the NoC.

use crate::dataflow::Distribution;
use crate::machine::Machine;
use crate::topology::Links;

/// A resource an instruction occupies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    /// NTT units of cluster i.
    Ntt(usize),
    /// BConv units of cluster i.
    Bconv(usize),
    /// Automorphism units of cluster i.
    Auto(usize),
    /// Element-wise units of cluster i.
    Madu(usize),
    /// PRNG units of cluster i.
    Prng(usize),
    /// Scratchpad ports of cluster i.
    Scratchpad(usize),
    /// A NoC resource: the crossbar (0) or ring link `i` (from cluster i to i+1).
    Noc(usize),
    /// An off-chip channel: the shared one (0) or cluster `c`'s.
    Offchip(usize),
}

/// How many resources of each kind a machine has (for dense indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Clusters the work is spread over.
    pub clusters: usize,
    /// Inter-cluster links.
    pub links: usize,
    /// Off-chip channels.
    pub channels: usize,
}

impl Layout {
    /// The layout of `m`.
    pub fn of(m: &Machine) -> Self {
        Self {
            clusters: m.chip.clusters,
            links: m.links(),
            channels: m.channels(),
        }
    }

    /// Number of resources.
    pub fn len(&self) -> usize {
        6 * self.clusters + self.links + self.channels
    }

    /// Whether there are none (never: a machine has at least one cluster).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Resource {
    /// Unit-class name (utilization keys, timeline tracks).
    pub fn class(self) -> &'static str {
        match self {
            Resource::Ntt(_) => "ntt",
            Resource::Bconv(_) => "bconv",
            Resource::Auto(_) => "auto",
            Resource::Madu(_) => "madu",
            Resource::Prng(_) => "prng",
            Resource::Scratchpad(_) => "scratchpad",
            Resource::Noc(_) => "noc",
            Resource::Offchip(_) => "offchip",
        }
    }

    /// Dense index in `lay`.
    pub fn index(self, lay: &Layout) -> usize {
        let k = lay.clusters;
        match self {
            Resource::Ntt(c) => c,
            Resource::Bconv(c) => k + c,
            Resource::Auto(c) => 2 * k + c,
            Resource::Madu(c) => 3 * k + c,
            Resource::Prng(c) => 4 * k + c,
            Resource::Scratchpad(c) => 5 * k + c,
            Resource::Noc(i) => 6 * k + i,
            Resource::Offchip(c) => 6 * k + lay.links + c,
        }
    }

    /// All resources of `lay`, in index order.
    pub fn all(lay: &Layout) -> Vec<Resource> {
        let k = lay.clusters;
        let mut v = Vec::with_capacity(lay.len());
        for make in [
            Resource::Ntt as fn(usize) -> Resource,
            Resource::Bconv,
            Resource::Auto,
            Resource::Madu,
            Resource::Prng,
            Resource::Scratchpad,
        ] {
            v.extend((0..k).map(make));
        }
        v.extend((0..lay.links).map(Resource::Noc));
        v.extend((0..lay.channels).map(Resource::Offchip));
        v
    }
}

/// Work that runs at the same time on several resources; the phase ends when the slowest
/// finishes (plus the pipeline fill `latency`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Phase {
    /// Busy cycles per resource.
    pub tasks: Vec<(Resource, f64)>,
    /// Cycles from the phase's start to its end.
    pub latency: f64,
}

/// One instruction lowered onto the machine.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lowered {
    /// Phases run one after the other.
    pub phases: Vec<Phase>,
    /// Bytes over the NoC.
    pub noc_bytes: f64,
    /// Bytes through the register files (every functional-unit operand and result).
    pub rf_bytes: f64,
}

/// The element-wise shapes of instructions (what the mapping needs to know).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Forward or inverse NTT.
    Transform,
    /// BConv from `l_in` limbs.
    Bconv {
        /// Input limbs.
        l_in: usize,
    },
    /// The input of a BConv split by output limbs, moved once into the staged form its
    /// output tiles share (`schedule::tiling`): `l_in` limbs, staged as `staging` says.
    BconvInput {
        /// Input limbs.
        l_in: usize,
        /// How the policy stages them.
        staging: crate::dataflow::Staging,
    },
    /// One output tile of a BConv whose input was staged ([`Shape::BconvInput`]): no input
    /// moves.
    StagedBconv {
        /// Input limbs.
        l_in: usize,
        /// How the input was staged.
        staging: crate::dataflow::Staging,
    },
    /// Automorphism.
    Permute,
    /// Element-wise: `reads` operand streams, `ops` MADU passes per coefficient (0 for the
    /// adder stage of a fused multiply-add).
    Elementwise {
        /// Operand streams read.
        reads: usize,
        /// MADU passes per coefficient.
        ops: usize,
    },
    /// Key-switch inner product over `pairs` digit pairs (reads an evaluation key).
    KeyDot {
        /// Digit pairs.
        pairs: usize,
    },
    /// One limb reduced into the output limbs (OF-Limb).
    ExtendLimb,
    /// PRNG expansion.
    Expand,
}

/// Collective patterns on the interconnect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Every cluster sends 1/k of its share to each other cluster (re-distribution), inside
    /// each coefficient cluster under block clustering.
    AllToAll,
    /// Every cluster's share reaches every other cluster (REED's ring of INTT results), inside
    /// each coefficient cluster under block clustering.
    AllGather,
    /// One cluster's data reaches every other cluster (one per coefficient cluster under
    /// block clustering).
    Broadcast,
    /// An all-to-all inside every block (limb cluster): the coefficient exchange of an
    /// (i)NTT or automorphism when a block splits its limbs by coefficients.
    InBlock,
}

/// The interconnect of a run: its links, the block clustering, and each collective's load
/// per link for one byte (all groups together), computed once.
#[derive(Clone, Debug)]
pub struct Net {
    /// The links between clusters.
    pub links: Links,
    /// Block (limb cluster) of each cluster; with 1 x 1 blocks, the cluster itself.
    pub block_of: Vec<usize>,
    /// Clusters per block.
    pub block_size: usize,
    /// Number of blocks.
    pub blocks: usize,
    all_to_all: Vec<f64>,
    all_gather: Vec<f64>,
    broadcast: Vec<f64>,
    in_block: Vec<f64>,
    /// Per cluster, the (link, bytes per byte) of a transfer from the I/O dies to it, and
    /// from it to them (empty without I/O dies): computed once, used by every transfer.
    io_in: Vec<Vec<(usize, f64)>>,
    io_out: Vec<Vec<(usize, f64)>>,
}

impl Net {
    /// Bytes on the busiest link, and on all links together, per byte of an all-gather
    /// over every cluster.
    pub fn all_gather_load(&self) -> (f64, f64) {
        let busiest = self.all_gather.iter().copied().fold(0.0, f64::max);
        (busiest, self.all_gather.iter().sum())
    }

    /// The interconnect of `m`.
    pub fn of(m: &Machine) -> Self {
        let links = m.net();
        let k = links.clusters;
        let b = m.chip.block_size().clamp(1, k);
        let blocks: Vec<Vec<usize>> = if b > 1 {
            links.blocks(m.chip.block_rows, m.chip.block_cols)
        } else {
            (0..k).map(|c| vec![c]).collect()
        };
        let g = blocks.len().max(1);
        let mut block_of = vec![0; k];
        for (j, members) in blocks.iter().enumerate() {
            for &c in members {
                block_of[c] = j;
            }
        }
        let coeff = Links::coefficient_clusters(&blocks);
        // Per byte of data held by the whole machine: each of the b coefficient clusters
        // (g members) holds 1/b of it, each of the g blocks (b members) 1/g.
        let all_gather = if m.memory.noc.scheduled_broadcast && b == 1 {
            // Each block (1/k of the data) crosses a link once per hop it is scheduled on.
            let mut load = vec![0.0; links.len()];
            for hop in links.all_gather_schedule() {
                for (l, _) in hop {
                    load[l] += 1.0 / k as f64;
                }
            }
            load
        } else {
            links.all_gather_in(&coeff, 1.0 / k as f64)
        };
        let mut broadcast = vec![0.0; links.len()];
        for group in &coeff {
            for (l, x) in links
                .multicast(group[0], group, 1.0 / b as f64)
                .into_iter()
                .enumerate()
            {
                broadcast[l] += x;
            }
        }
        Self {
            all_to_all: links.all_to_all_in(&coeff, 1.0 / (b * g * g) as f64),
            all_gather,
            broadcast,
            in_block: links.all_to_all_in(&blocks, 1.0 / (g * b * b) as f64),
            io_in: (0..k).map(|c| links.io_path(c, true)).collect(),
            io_out: (0..k).map(|c| links.io_path(c, false)).collect(),
            block_of,
            block_size: b,
            blocks: g,
            links,
        }
    }

    /// NoC tasks of an off-chip transfer of `bytes_per_limb` for each of `limbs` between
    /// the I/O dies and the limbs' home clusters (inbound: a load or reload; outbound: a
    /// store or spill), and the link-bytes it moves. Empty where memory attaches to the
    /// clusters directly (no I/O dies).
    pub fn io_transfer(
        &self,
        m: &Machine,
        limbs: &[usize],
        bytes_per_limb: f64,
        inbound: bool,
    ) -> (Vec<(Resource, f64)>, f64) {
        if self.links.io_dies == 0 || bytes_per_limb <= 0.0 {
            return (Vec::new(), 0.0);
        }
        let bpc = m.memory.noc.bandwidth_gbs / m.clock.ghz;
        let paths = if inbound { &self.io_in } else { &self.io_out };
        let mut load = vec![0.0f64; self.links.len()];
        for (c, n) in self.home_limbs(limbs).into_iter().enumerate() {
            let bytes = n as f64 * bytes_per_limb / self.block_size as f64;
            if bytes > 0.0 {
                for &(l, share) in &paths[c] {
                    load[l] += bytes * share;
                }
            }
        }
        let moved = load.iter().sum();
        let tasks = load
            .into_iter()
            .enumerate()
            .filter(|(_, b)| *b > 0.0)
            .map(|(l, b)| (Resource::Noc(l), b / bpc))
            .collect();
        (tasks, moved)
    }

    /// Limbs of `limbs` (ring indices) whose home is each cluster's block: limb `l` lives in
    /// block `l mod blocks`, split by coefficients over the block's clusters.
    pub fn home_limbs(&self, limbs: &[usize]) -> Vec<usize> {
        let mut per_block = vec![0usize; self.blocks];
        for &l in limbs {
            per_block[l % self.blocks] += 1;
        }
        self.block_of.iter().map(|&j| per_block[j]).collect()
    }
}

impl Net {
    /// cifher.md Eq. 3's `broadcast_overhead`: link-bytes of broadcasting (all-gather)
    /// against evenly re-distributing (all-to-all) the same data on this interconnect.
    pub fn broadcast_overhead(&self) -> f64 {
        let ag: f64 = self.all_gather.iter().sum();
        let a2a: f64 = self.all_to_all.iter().sum();
        if a2a > 0.0 {
            ag / a2a
        } else {
            1.0
        }
    }

    /// cifher.md Eq. 3: limbs saved by limb duplication for a BConv of `l_in` input and
    /// `l_out` output limbs, `l_out - l_in (broadcast_overhead - 1)`; duplication pays when
    /// it is positive.
    pub fn duplication_saving(&self, l_in: usize, l_out: usize) -> f64 {
        l_out as f64 - l_in as f64 * (self.broadcast_overhead() - 1.0)
    }
}

/// The NoC tasks and link-bytes of moving `bytes` (the data involved, all clusters
/// together) in `pattern`: each link is busy for its share of the hops (the per-pair routes
/// of [`Links`]); the link-bytes summed over links are returned for traffic and energy.
pub fn transfer(
    m: &Machine,
    net: &Net,
    pattern: Pattern,
    bytes: f64,
) -> (Vec<(Resource, f64)>, f64) {
    if m.chip.clusters < 2 || bytes <= 0.0 || net.links.is_empty() {
        return (Vec::new(), 0.0);
    }
    let bpc = m.memory.noc.bandwidth_gbs / m.clock.ghz;
    let unit = match pattern {
        Pattern::AllToAll => &net.all_to_all,
        Pattern::AllGather => &net.all_gather,
        Pattern::Broadcast => &net.broadcast,
        Pattern::InBlock => &net.in_block,
    };
    let mut tasks = Vec::new();
    let mut moved = 0.0;
    for (i, u) in unit.iter().enumerate() {
        if *u > 0.0 {
            tasks.push((Resource::Noc(i), u * bytes / bpc));
            moved += u * bytes;
        }
    }
    (tasks, moved)
}

/// Lowers one instruction of shape `shape` over destination limbs `limbs` at ring degree `n`.
/// `rr` picks the cluster for work the limb-wise policy places whole on one cluster;
/// `spm_scale` is the fraction of operand streams that touch the scratchpad (the rest are
/// chained through the register files).
pub fn lower(
    m: &Machine,
    net: &Net,
    shape: Shape,
    limbs: &[usize],
    n: usize,
    rr: usize,
    spm_scale: f64,
) -> Lowered {
    let k = m.chip.clusters;
    let w = m.word_bytes();
    let nf = n as f64;
    let spm_bpc = m.total_gbs(&m.memory.scratchpad) / m.clock.ghz / k as f64 / spm_scale.max(1e-9);
    let dist = crate::dataflow::of(m);
    // Limbs each cluster works on, and the fraction of each limb's coefficients it holds.
    let (home, frac) = dist.layout(net, limbs);
    let u = &m.units;
    let mut out = Lowered::default();
    let madu_epc = (u.madu.count * u.madu.elements_per_cycle) as f64;
    let cx = crate::dataflow::Ctx {
        m,
        net,
        nf,
        w,
        k,
        spm_bpc,
        madu_epc,
        rr,
    };
    let limb_wise =
        |unit: fn(usize) -> Resource, epc: f64, words_per_coeff: f64, out: &mut Lowered| {
            let mut ph = Phase::default();
            for (c, &lc) in home.iter().enumerate() {
                if lc == 0 {
                    continue;
                }
                let elems = lc as f64 * nf * frac;
                ph.tasks.push((unit(c), elems / epc));
                let bytes = elems * words_per_coeff * w;
                ph.tasks.push((Resource::Scratchpad(c), bytes / spm_bpc));
                out.rf_bytes += bytes;
            }
            ph
        };
    match shape {
        Shape::Transform => {
            // A transform over data split by coefficients exchanges it first (the
            // transpose of the four-step form; cifher.md IV-B).
            dist.transform_exchange(&cx, limbs.len() as f64 * nf * w, &mut out);
            let words = if m.options.of_twist { 2.0 } else { 3.0 };
            let epc = (u.ntt.count * u.ntt.elements_per_cycle) as f64;
            let mut ph = limb_wise(Resource::Ntt, epc, words, &mut out);
            ph.latency = u.ntt.latency_cycles as f64;
            out.phases.push(ph);
        }
        Shape::Permute => {
            // An automorphism moves coefficients between the clusters holding a limb.
            dist.transform_exchange(&cx, limbs.len() as f64 * nf * w, &mut out);
            let epc = (u.auto.count * u.auto.elements_per_cycle) as f64;
            let mut ph = limb_wise(Resource::Auto, epc, 2.0, &mut out);
            ph.latency = u.auto.latency_cycles as f64;
            out.phases.push(ph);
        }
        Shape::Expand => {
            let epc = (u.prng.count * u.prng.elements_per_cycle) as f64;
            let mut ph = limb_wise(Resource::Prng, epc, 1.0, &mut out);
            ph.latency = u.prng.latency_cycles as f64;
            out.phases.push(ph);
        }
        Shape::Elementwise { reads, ops } => {
            // ops = 0: the adder stage of a fused multiply-add, no MADU pass of its own.
            let epc = if ops == 0 {
                f64::INFINITY
            } else {
                madu_epc / ops as f64
            };
            let mut ph = limb_wise(Resource::Madu, epc, (reads + 1) as f64, &mut out);
            ph.latency = u.madu.latency_cycles as f64;
            out.phases.push(ph);
        }
        Shape::KeyDot { pairs } => {
            let mut ph = limb_wise(
                Resource::Madu,
                madu_epc / pairs.max(1) as f64,
                (2 * pairs + 1) as f64,
                &mut out,
            );
            ph.latency = u.madu.latency_cycles as f64;
            ph.tasks
                .extend(dist.key_dot(&cx, pairs, limbs.len(), &mut out));
            out.phases.push(ph);
        }
        Shape::ExtendLimb => {
            // The one loaded limb is broadcast to every cluster, then reduced per limb.
            let tasks = cx.comm(Pattern::Broadcast, nf * w, &mut out);
            if !tasks.is_empty() {
                out.phases.push(Phase {
                    tasks,
                    latency: 0.0,
                });
            }
            let mut ph = limb_wise(Resource::Madu, madu_epc, 1.0, &mut out);
            ph.latency = u.madu.latency_cycles as f64;
            out.phases.push(ph);
        }
        Shape::Bconv { l_in } => {
            dist.bconv(&cx, l_in, limbs.len(), &home, frac, &mut out);
        }
        Shape::BconvInput { l_in, staging } => staging.lower_input(&cx, l_in, &mut out),
        Shape::StagedBconv { l_in, staging } => {
            staging.lower_tile(&cx, l_in, limbs.len(), &home, frac, &mut out);
        }
    }
    if m.options.unified_mau {
        // One array: work of a phase on the same cluster's array runs back to back.
        for ph in &mut out.phases {
            let mut merged: Vec<(Resource, f64)> = Vec::new();
            for &(r, c) in &ph.tasks {
                let r = match r {
                    Resource::Madu(i) | Resource::Bconv(i) | Resource::Auto(i) => Resource::Ntt(i),
                    r => r,
                };
                match merged.iter_mut().find(|t| t.0 == r) {
                    Some(t) => t.1 += c,
                    None => merged.push((r, c)),
                }
            }
            ph.tasks = merged;
        }
    }
    out
}
