//! Distribution policies (issue 25 item 5): how the clusters share the work of the
//! instructions whose data does not stay where its limbs live. A limb's home cluster is its
//! ring index modulo the blocks (`mapping::Net::home_limbs`), and limb-wise work runs there;
//! a policy decides (1) how limbs are laid out over the clusters, (2) what an (i)NTT or
//! automorphism exchanges, (3) how a BConv (every output limb needs every input limb) is
//! spread, and (4) what a key-switch inner product moves. One trait, one file per policy:
//! - `alternating` ([`alternating`], ARK): limb-wise, coefficient-wise around every BConv;
//! - `limb-wise` ([`limb_wise`]): a BConv whole on one cluster, partial sums moved;
//! - `ring` ([`ring`], REED): a BConv's input travels the ring once;
//! - `limb-duplication` ([`limb_duplication`], CiFHER): broadcast or alternate by Eq. 3;
//! - `coefficient-wise` ([`coefficient_wise`]): every limb split by coefficients over all
//!   clusters all the time (CiFHER's coefficient scattering, cifher.md IV-C);
//! - `mix` ([`mix`]): a user-defined mix naming one of the above per job in the machine
//!   file (`[chip.mix]`).

pub mod alternating;
pub mod coefficient_wise;
pub mod limb_duplication;
pub mod limb_wise;
pub mod mix;
pub mod ring;

use crate::machine::{Machine, Policy};
use crate::mapping::{transfer, Lowered, Net, Pattern, Phase, Resource};

/// How a BConv split by output limbs (`schedule::tiling`) shares its input: moved between
/// the clusters once, by a staging instruction, and held on chip until its last output tile
/// has read it, instead of being moved again for every output tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Staging {
    /// The policy moves no BConv input between clusters (one cluster, limb-wise, or
    /// coefficient-wise): there is nothing to share.
    None,
    /// ARK's redistribution: the input is exchanged all-to-all once into the
    /// coefficient-wise distribution (one copy on chip); each output tile is converted on
    /// every cluster and exchanged back all-to-all ([`alternating`]).
    Redistribute,
    /// Broadcast (ring all-gather, limb duplication): every block (limb cluster) receives
    /// all the input limbs once, so the chip holds one copy per block; each output tile is
    /// converted at its limbs' homes and moves nothing ([`ring`]).
    Replicate,
}

impl Staging {
    /// Copies of the input the staged form holds on chip, all clusters together.
    pub fn copies(self, net: &Net) -> usize {
        match self {
            Staging::None | Staging::Redistribute => 1,
            Staging::Replicate => net.blocks.max(1),
        }
    }

    /// Moves `l_in` input limbs into the staged form, once for the whole BConv.
    pub fn lower_input(self, cx: &Ctx<'_>, l_in: usize, out: &mut Lowered) {
        let pattern = match self {
            Staging::None => return,
            Staging::Redistribute => Pattern::AllToAll,
            Staging::Replicate => Pattern::AllGather,
        };
        let tasks = cx.comm(pattern, l_in as f64 * cx.nf * cx.w, out);
        out.phases.push(Phase {
            tasks,
            latency: 0.0,
        });
    }

    /// One output tile of `l_out` limbs (`home[c]` of them homed at cluster `c`, each
    /// cluster holding `frac` of a limb's coefficients) from the staged input of `l_in`
    /// limbs: the BConv lowering of [`Distribution::bconv`] without the input's move.
    pub fn lower_tile(
        self,
        cx: &Ctx<'_>,
        l_in: usize,
        l_out: usize,
        home: &[usize],
        frac: f64,
        out: &mut Lowered,
    ) {
        match self {
            Staging::None => cx.bconv_on_one(l_in, l_out, out),
            Staging::Redistribute => {
                alternating::Alternating::convert_and_return(cx, l_in, l_out, out)
            }
            Staging::Replicate => ring::Ring::convert_at_home(cx, l_in, home, frac, out),
        }
    }
}

/// What a policy's lowering needs of the machine and the instruction.
pub struct Ctx<'a> {
    /// The machine.
    pub m: &'a Machine,
    /// Its interconnect.
    pub net: &'a Net,
    /// Coefficients per limb (the ring degree).
    pub nf: f64,
    /// Bytes per word.
    pub w: f64,
    /// Clusters.
    pub k: usize,
    /// Scratchpad bytes per cycle per cluster for this instruction's operand streams.
    pub spm_bpc: f64,
    /// Element-wise operations per cycle of one cluster's MADUs.
    pub madu_epc: f64,
    /// Round-robin counter for work placed whole on one cluster.
    pub rr: usize,
}

impl Ctx<'_> {
    /// NoC tasks of moving `bytes` in `pattern` (their link-bytes added to `out`).
    pub fn comm(&self, pattern: Pattern, bytes: f64, out: &mut Lowered) -> Vec<(Resource, f64)> {
        let (tasks, moved) = transfer(self.m, self.net, pattern, bytes);
        out.noc_bytes += moved;
        tasks
    }

    /// BConv work on cluster `c`: `l_in` input limbs into `l_out` output limbs over `cols`
    /// coefficients, on the BConvU (output rows in blocks of macs_per_lane) or, on designs
    /// without one, as multiply-accumulates on the MADUs.
    pub fn bconv_tasks(
        &self,
        c: usize,
        l_in: usize,
        l_out: usize,
        cols: f64,
    ) -> Vec<(Resource, f64)> {
        let (m, u) = (self.m, &self.m.units);
        let b = &u.bconv;
        let mut t = Vec::new();
        if l_in == 1 && m.options.single_limb_bconv_in_ntt {
            // A reduction at the consuming NTT's input: data moves, no multiplier pass.
        } else if b.count > 0 {
            let blocks = l_out.div_ceil(b.macs_per_lane) as f64;
            let groups = (cols / (b.count * b.lanes) as f64).ceil();
            t.push((Resource::Bconv(c), l_in as f64 * blocks * groups));
            if !m.options.bconv_scale_in_intt {
                t.push((Resource::Madu(c), l_in as f64 * cols / self.madu_epc));
            }
        } else {
            t.push((
                Resource::Madu(c),
                (l_in * l_out) as f64 * cols / self.madu_epc,
            ));
        }
        let bytes = (l_in + l_out) as f64 * cols * self.w;
        t.push((Resource::Scratchpad(c), bytes / self.spm_bpc));
        t
    }

    /// The BConv phase with every cluster converting its `N / k` coefficients of all
    /// `l_out` output limbs.
    pub fn bconv_everywhere(&self, l_in: usize, l_out: usize, out: &mut Lowered) {
        let mut ph = Phase {
            tasks: Vec::new(),
            latency: self.m.units.bconv.latency_cycles as f64,
        };
        for c in 0..self.k {
            ph.tasks
                .extend(self.bconv_tasks(c, l_in, l_out, self.nf / self.k as f64));
            out.rf_bytes += (l_in + l_out) as f64 * self.nf / self.k as f64 * self.w;
        }
        out.phases.push(ph);
    }

    /// A BConv whole on one cluster (round robin).
    pub fn bconv_on_one(&self, l_in: usize, l_out: usize, out: &mut Lowered) {
        let c = self.rr % self.k;
        out.rf_bytes += (l_in + l_out) as f64 * self.nf * self.w;
        out.phases.push(Phase {
            tasks: self.bconv_tasks(c, l_in, l_out, self.nf),
            latency: self.m.units.bconv.latency_cycles as f64,
        });
    }
}

/// One distribution policy.
pub trait Distribution {
    /// The name a machine file gives it (`chip.policy`).
    fn name(&self) -> &'static str;

    /// Per cluster, the limbs of `limbs` it works on, and the share of each limb's
    /// coefficients it holds. Default: each limb at its home block, split by coefficients
    /// over the block's clusters.
    fn layout(&self, net: &Net, limbs: &[usize]) -> (Vec<usize>, f64) {
        (net.home_limbs(limbs), 1.0 / net.block_size as f64)
    }

    /// The exchange an (i)NTT or automorphism of `bytes` needs before it runs. Default: an
    /// all-to-all inside every block when blocks split limbs by coefficients (cifher.md IV-B).
    fn transform_exchange(&self, cx: &Ctx<'_>, bytes: f64, out: &mut Lowered) {
        if cx.net.block_size > 1 {
            let tasks = cx.comm(Pattern::InBlock, bytes, out);
            if !tasks.is_empty() {
                out.phases.push(Phase {
                    tasks,
                    latency: 0.0,
                });
            }
        }
    }

    /// Lowers a BConv of `l_in` input limbs into `l_out` output limbs, `home[c]` of them
    /// homed at cluster `c`, each cluster holding `frac` of a limb's coefficients.
    fn bconv(
        &self,
        cx: &Ctx<'_>,
        l_in: usize,
        l_out: usize,
        home: &[usize],
        frac: f64,
        out: &mut Lowered,
    );

    /// How this policy stages the input of a BConv of `l_in` input and `l_out` output limbs
    /// (all output tiles together) on `k` clusters, when the BConv is split by output limbs.
    /// Default: [`Staging::None`] (the policy moves no input).
    fn staging(&self, _net: &Net, _k: usize, _l_in: usize, _l_out: usize) -> Staging {
        Staging::None
    }

    /// NoC tasks a key-switch inner product of `pairs` digit pairs over `limbs` limbs adds
    /// to its phase. Default: none (every digit's product forms at the limb's home).
    fn key_dot(
        &self,
        _cx: &Ctx<'_>,
        _pairs: usize,
        _limbs: usize,
        _out: &mut Lowered,
    ) -> Vec<(Resource, f64)> {
        Vec::new()
    }
}

/// The policy a machine names, as a [`mix::Mix`] (a single policy is the mix that names it
/// for every job), so that choosing it allocates nothing.
pub fn of(m: &Machine) -> mix::Mix {
    match (m.chip.policy, &m.chip.mix) {
        (Policy::Mix, Some(s)) => mix::Mix::from_spec(s),
        (p, _) => mix::Mix::uniform(simple(p)),
    }
}

/// A policy that is not a mix (a mix names these).
pub fn simple(p: Policy) -> &'static dyn Distribution {
    match p {
        Policy::Alternating => &alternating::Alternating,
        Policy::LimbWise => &limb_wise::LimbWise,
        Policy::Ring => &ring::Ring,
        Policy::LimbDuplication => &limb_duplication::LimbDuplication,
        Policy::CoefficientWise => &coefficient_wise::CoefficientWise,
        // A mix never names itself, and a mix without its table is refused (the machine
        // check); should one reach here, its jobs fall back to the alternating policy.
        Policy::Mix => &alternating::Alternating,
    }
}
