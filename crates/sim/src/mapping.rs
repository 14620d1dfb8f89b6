//! The data-mapping policy: how one whole-polynomial instruction splits into work on each
//! cluster's functional units, scratchpad and the NoC (ark.md section V-B).
//!
//! A limb's home cluster is its ring index modulo the cluster count, so every instruction
//! agrees on where a limb lives. Under the alternating policy a BConv first exchanges its
//! input limbs all-to-all so each cluster holds N / k coefficients of every limb (the
//! coefficient-wise distribution), runs on every BConvU, and exchanges its output back; the
//! paper counts `(alpha + L + 1) N` words per BConvRoutine, of which a cluster keeps 1/k.
//! Under the limb-wise policy a BConv runs whole on one cluster and a key-switch
//! inner product (a `dot` reading an evaluation key) moves its partial products over the NoC.

use crate::machine::{Machine, Policy};

/// A resource an instruction occupies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    Ntt(usize),
    Bconv(usize),
    Auto(usize),
    Madu(usize),
    Prng(usize),
    Scratchpad(usize),
    Noc,
    Offchip,
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
            Resource::Noc => "noc",
            Resource::Offchip => "offchip",
        }
    }

    /// Dense index for `k` clusters.
    pub fn index(self, k: usize) -> usize {
        match self {
            Resource::Ntt(c) => c,
            Resource::Bconv(c) => k + c,
            Resource::Auto(c) => 2 * k + c,
            Resource::Madu(c) => 3 * k + c,
            Resource::Prng(c) => 4 * k + c,
            Resource::Scratchpad(c) => 5 * k + c,
            Resource::Noc => 6 * k,
            Resource::Offchip => 6 * k + 1,
        }
    }

    /// All resources of a `k`-cluster machine, in index order.
    pub fn all(k: usize) -> Vec<Resource> {
        let mut v = Vec::with_capacity(6 * k + 2);
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
        v.push(Resource::Noc);
        v.push(Resource::Offchip);
        v
    }
}

/// Work that runs at the same time on several resources; the phase ends when the slowest
/// finishes (plus the pipeline fill `latency`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Phase {
    pub tasks: Vec<(Resource, f64)>,
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
    Bconv { l_in: usize },
    /// Automorphism.
    Permute,
    /// Element-wise: `reads` operand streams, `macs` multiplies (or adds) per coefficient.
    Elementwise { reads: usize, ops: usize },
    /// Key-switch inner product over `pairs` digit pairs (reads an evaluation key).
    KeyDot { pairs: usize },
    /// One limb reduced into the output limbs (OF-Limb).
    ExtendLimb,
    /// PRNG expansion.
    Expand,
}

/// Splits `limbs` (ring indices) over `k` clusters by home cluster.
pub fn per_cluster(limbs: &[usize], k: usize) -> Vec<usize> {
    let mut c = vec![0usize; k];
    for &l in limbs {
        c[l % k] += 1;
    }
    c
}

/// Lowers one instruction of shape `shape` over destination limbs `limbs` at ring degree `n`.
/// `rr` picks the cluster for work the limb-wise policy places whole on one cluster;
/// `spm_scale` is the fraction of operand streams that touch the scratchpad (the rest are
/// chained through the register files).
pub fn lower(
    m: &Machine,
    shape: Shape,
    limbs: &[usize],
    n: usize,
    rr: usize,
    spm_scale: f64,
) -> Lowered {
    let k = m.chip.clusters;
    let w = m.word_bytes();
    let nf = n as f64;
    let spm_bpc = m.memory.scratchpad.bandwidth_gbs / m.clock.ghz / k as f64 / spm_scale.max(1e-9);
    let noc_bpc = m.memory.noc.bandwidth_gbs / m.clock.ghz;
    let share = per_cluster(limbs, k);
    let u = &m.units;
    let mut out = Lowered::default();
    let limb_wise =
        |unit: fn(usize) -> Resource, epc: f64, words_per_coeff: f64, out: &mut Lowered| {
            let mut ph = Phase::default();
            for (c, &lc) in share.iter().enumerate() {
                if lc == 0 {
                    continue;
                }
                let elems = lc as f64 * nf;
                ph.tasks.push((unit(c), elems / epc));
                let bytes = elems * words_per_coeff * w;
                ph.tasks.push((Resource::Scratchpad(c), bytes / spm_bpc));
                out.rf_bytes += bytes;
            }
            ph
        };
    match shape {
        Shape::Transform => {
            let words = if m.options.of_twist { 2.0 } else { 3.0 };
            let epc = (u.ntt.count * u.ntt.elements_per_cycle) as f64;
            let mut ph = limb_wise(Resource::Ntt, epc, words, &mut out);
            ph.latency = u.ntt.latency_cycles as f64;
            out.phases.push(ph);
        }
        Shape::Permute => {
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
            let epc = (u.madu.count * u.madu.elements_per_cycle) as f64 / ops.max(1) as f64;
            let mut ph = limb_wise(Resource::Madu, epc, (reads + 1) as f64, &mut out);
            ph.latency = u.madu.latency_cycles as f64;
            out.phases.push(ph);
        }
        Shape::KeyDot { pairs } => {
            let epc = (u.madu.count * u.madu.elements_per_cycle) as f64 / pairs.max(1) as f64;
            let mut ph = limb_wise(Resource::Madu, epc, (2 * pairs + 1) as f64, &mut out);
            ph.latency = u.madu.latency_cycles as f64;
            if m.chip.policy == Policy::LimbWise && k > 1 {
                // Each digit's product was formed on its own cluster: the partial sums of
                // every limb travel to the limb's home (ark.md V-B).
                let bytes = pairs as f64 * limbs.len() as f64 * nf * w * (k - 1) as f64 / k as f64;
                ph.tasks.push((Resource::Noc, bytes / noc_bpc));
                out.noc_bytes += bytes;
            }
            out.phases.push(ph);
        }
        Shape::ExtendLimb => {
            // The one loaded limb is broadcast to every cluster, then reduced per limb.
            if k > 1 {
                let bytes = nf * w;
                out.phases.push(Phase {
                    tasks: vec![(Resource::Noc, bytes / noc_bpc)],
                    latency: 0.0,
                });
                out.noc_bytes += bytes;
            }
            let epc = (u.madu.count * u.madu.elements_per_cycle) as f64;
            let mut ph = limb_wise(Resource::Madu, epc, 1.0, &mut out);
            ph.latency = u.madu.latency_cycles as f64;
            out.phases.push(ph);
        }
        Shape::Bconv { l_in } => {
            let l_out = limbs.len();
            let b = &u.bconv;
            // Block matrix product: output rows in blocks of macs_per_lane, each block reads
            // every input limb once per column group of `lanes` coefficients.
            let blocks = l_out.div_ceil(b.macs_per_lane) as f64;
            let scale_epc = (u.madu.count * u.madu.elements_per_cycle) as f64;
            match m.chip.policy {
                Policy::Alternating if k > 1 => {
                    let frac = (k - 1) as f64 / k as f64;
                    let bytes_in = l_in as f64 * nf * w * frac;
                    let bytes_out = l_out as f64 * nf * w * frac;
                    out.noc_bytes += bytes_in + bytes_out;
                    out.phases.push(Phase {
                        tasks: vec![(Resource::Noc, bytes_in / noc_bpc)],
                        latency: 0.0,
                    });
                    let cols = (nf / k as f64 / (b.count * b.lanes) as f64).ceil();
                    let mut ph = Phase {
                        tasks: Vec::new(),
                        latency: b.latency_cycles as f64,
                    };
                    for c in 0..k {
                        ph.tasks
                            .push((Resource::Bconv(c), l_in as f64 * blocks * cols));
                        let bytes = (l_in + l_out) as f64 * nf / k as f64 * w;
                        ph.tasks.push((Resource::Scratchpad(c), bytes / spm_bpc));
                        out.rf_bytes += bytes;
                        if !m.options.bconv_scale_in_intt {
                            ph.tasks
                                .push((Resource::Madu(c), l_in as f64 * nf / k as f64 / scale_epc));
                        }
                    }
                    out.phases.push(ph);
                    out.phases.push(Phase {
                        tasks: vec![(Resource::Noc, bytes_out / noc_bpc)],
                        latency: 0.0,
                    });
                }
                _ => {
                    let c = rr % k;
                    let cols = (nf / (b.count * b.lanes) as f64).ceil();
                    let bytes = (l_in + l_out) as f64 * nf * w;
                    out.rf_bytes += bytes;
                    let mut tasks = vec![
                        (Resource::Bconv(c), l_in as f64 * blocks * cols),
                        (Resource::Scratchpad(c), bytes / spm_bpc),
                    ];
                    if !m.options.bconv_scale_in_intt {
                        tasks.push((Resource::Madu(c), l_in as f64 * nf / scale_epc));
                    }
                    out.phases.push(Phase {
                        tasks,
                        latency: b.latency_cycles as f64,
                    });
                }
            }
        }
    }
    out
}
