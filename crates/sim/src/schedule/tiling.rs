//! Limb tiling: splits limb-parallel instructions over limb tiles so that a scheduling policy
//! can order key switching (ModUp, the inner product with the key digits, ModDown) tile by
//! tile, with only one tile of each extended digit and key live at a time, instead of whole
//! polynomials (issue 25 item 2; the papers' compilers do this by limb or by digit: h3.md
//! 3.2, ark.md V-B, cifher.md V, reed.md 5.3).
//!
//! Tiles are blocks of ring indices: tile `t` holds limbs `t * tile .. (t + 1) * tile`, the
//! same partition for every buffer, so a tile of a producer is exactly what the same tile of
//! its consumer reads. A tile of a buffer is a buffer of its own (a fresh id at or above
//! [`Split::base`]), so the engine's residency, spills and reloads work on tiles unchanged.
//!
//! Which instructions split, and what each tile reads:
//! - loads, seed expansions, stores, NTT / INTT, element-wise operations, dot products,
//!   automorphisms, limb selections and concatenations are limb-parallel: tile `t` computes
//!   the destination limbs of tile `t` from the same tile of each tiled source (a source
//!   still whole is read whole by every tile);
//! - a BConv is split by output limbs only: every output limb needs every input limb, so
//!   each output tile reads every tile of its input (the engine charges it the input limbs
//!   of all its sources: the same multiply-adds in total, and on machines that broadcast a
//!   BConv's input, one broadcast per output tile, which is the honest cost of tiling it);
//! - a limb extension, and any instruction whose tiled source lacks a tile it would need, or
//!   that writes in place into a whole buffer, stays whole. A whole instruction that reads a
//!   tiled buffer first gets a `concat` of its tiles back into the original buffer (a join),
//!   counted in [`Split::joins`].
//!
//! The split moves no work: every instruction's destination limbs are covered by its tiles
//! exactly once, and a BConv's multiply-adds (input limbs times output limbs) are unchanged
//! ([`super::verify::check_tiled`] checks both, and that every limb read sees the same
//! write as recorded).

use super::graph::Graph;
use super::SchedulePolicy;
use crate::dataflow::Staging;
use crate::machine::Machine;
use std::collections::{BTreeMap, HashMap};
use tessera_backend::trace::{Instr, Limbs, Op, Srcs};

/// A stream split into limb tiles.
#[derive(Clone, Debug, Default)]
pub struct Split {
    /// The tiled stream (markers as recorded; tiles keep their instruction's `seq`).
    pub instrs: Vec<Instr>,
    /// Tile ids are at or above this (every recorded buffer id is below it).
    pub base: u64,
    /// Recorded instructions that were split (into two or more tiles, or one tile of a tiled
    /// buffer).
    pub split: u64,
    /// Tiles emitted for them.
    pub tiles: u64,
    /// Joins: `concat`s of a tiled buffer's tiles before a whole instruction that reads it.
    pub joins: u64,
    /// BConvs split into two or more output tiles whose input was staged once and shared by
    /// the tiles ([`Share`]).
    pub shared: u64,
    /// BConvs split into two or more output tiles whose staged input would not fit in the
    /// scratchpad beside the tiles ([`Share::budget_limbs`]): each tile moves the input again.
    pub re_moved: u64,
}

/// How a BConv split by output limbs shares its input: the machine's distribution policy
/// ([`crate::dataflow::Distribution::staging`]) says how the input is moved once and how
/// many copies of it the chip then holds; the staged input stays live until the BConv's last
/// output tile, so it must fit in the scratchpad beside one tile of every other live buffer.
pub struct Share {
    net: crate::mapping::Net,
    dist: crate::dataflow::mix::Mix,
    clusters: usize,
    /// Limbs of scratchpad (all clusters together) a staged input may take: the capacity
    /// less the BConv's output tile. Whether it stays resident beside everything else live
    /// is the engine's residency's call (it drops a staged input for room like a clean
    /// cached limb, and the next output tile moves the input again).
    pub budget_limbs: usize,
}

impl Share {
    /// Sharing on `m` with tiles of `tile` limbs: `None` when the scratchpad's capacity is
    /// not modelled (nothing to fit, so nothing is split).
    pub fn of(m: &Machine, instrs: &[Instr], tile: usize) -> Option<Self> {
        let cap = capacity_limbs(m, instrs)?;
        Some(Self {
            net: crate::mapping::Net::of(m),
            dist: crate::dataflow::of(m),
            clusters: m.chip.clusters,
            budget_limbs: cap.saturating_sub(tile),
        })
    }

    /// How the input of a BConv of `l_in` input and `l_out` output limbs is staged, and the
    /// limbs its staged form takes on chip.
    pub fn staging(&self, l_in: usize, l_out: usize) -> (Staging, usize) {
        use crate::dataflow::Distribution;
        let s = self.dist.staging(&self.net, self.clusters, l_in, l_out);
        (s, l_in * s.copies(&self.net))
    }
}

/// One tile of a buffer: its block index, its id and limbs.
#[derive(Clone, Debug)]
struct Tile {
    block: usize,
    id: u64,
    limbs: Limbs,
}

/// The limb-parallel operations (split by destination limbs).
fn limb_parallel(op: Op) -> bool {
    matches!(
        op,
        Op::Load
            | Op::ExpandSeed
            | Op::Store
            | Op::Ntt
            | Op::Intt
            | Op::Add
            | Op::Sub
            | Op::Neg
            | Op::Mul
            | Op::MulAcc
            | Op::Dot
            | Op::AddScalar
            | Op::MulScalar
            | Op::Automorphism
            | Op::SelectLimbs
            | Op::Concat
    )
}

/// Whether `op` may be split at all: the limb-parallel ones, and BConv by output limbs.
pub fn splittable(op: Op) -> bool {
    limb_parallel(op) || op == Op::Bconv
}

/// `limbs` grouped by block of `tile` ring indices, blocks in increasing order.
fn blocks(limbs: &[usize], tile: usize) -> BTreeMap<usize, Vec<usize>> {
    let mut b: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &l in limbs {
        b.entry(l / tile).or_default().push(l);
    }
    b
}

/// The tile size for `m` on `instrs`: the machine file's `schedule.tile_limbs` when not 0,
/// else the most limbs per tile such that one tile of every buffer live at once fits the
/// scratchpad: its capacity in limbs divided by the most buffers the recorded stream keeps
/// live at once (from a buffer's write to its last use; keys and plaintexts included), or
/// by the most operands of one splittable instruction if that is more. `None` when the
/// scratchpad's capacity is not modelled (nothing to fit) or the stream has no instruction.
pub fn tile_limbs(m: &Machine, instrs: &[Instr]) -> Option<usize> {
    if m.schedule.tile_limbs > 0 {
        return Some(m.schedule.tile_limbs);
    }
    let cap = capacity_limbs(m, instrs)?;
    Some((cap / live_operands(instrs)).max(1))
}

/// The scratchpad's capacity in limbs of the stream's ring degree (all clusters together);
/// `None` when it is not modelled or the stream has no instruction.
fn capacity_limbs(m: &Machine, instrs: &[Instr]) -> Option<usize> {
    let spm = m.scratchpad_mb() * 1048576.0;
    if !spm.is_finite() {
        return None;
    }
    let first = instrs
        .iter()
        .find(|i| !matches!(i.op, Op::Begin | Op::End))?;
    let limb_bytes = first.n as f64 * m.word_bytes();
    Some((spm / limb_bytes) as usize)
}

/// The buffers a tile of each must fit for: the most the recorded stream keeps live at once,
/// or the most operands of one splittable instruction if that is more (at least 1).
fn live_operands(instrs: &[Instr]) -> usize {
    let operands = instrs
        .iter()
        .filter(|i| splittable(i.op))
        .map(|i| i.srcs.len() + usize::from(i.dst.is_some_and(|d| !i.srcs.contains(&d))))
        .max()
        .unwrap_or(1);
    peak_live_buffers(instrs).max(operands).max(1)
}

/// The most buffers live at once in `instrs` (a buffer lives from its first write to its
/// last use).
pub fn peak_live_buffers(instrs: &[Instr]) -> usize {
    let mut last: HashMap<u64, usize> = HashMap::new();
    for (p, i) in instrs.iter().enumerate() {
        for b in i.srcs.iter().copied().chain(i.dst) {
            last.insert(b, p);
        }
    }
    let mut live = std::collections::HashSet::new();
    let mut peak = 0;
    for (p, i) in instrs.iter().enumerate() {
        if let Some(d) = i.dst {
            live.insert(d);
        }
        peak = peak.max(live.len());
        for b in i.srcs.iter().chain(i.dst.iter()) {
            if last.get(b) == Some(&p) {
                live.remove(b);
            }
        }
    }
    peak
}

/// One tile of an instruction: its block, its destination limbs and its sources.
type TilePlan = (usize, Vec<usize>, Vec<u64>);

/// The splitter's state over one stream.
struct Splitter<'a> {
    tile: usize,
    next_id: u64,
    tiled: HashMap<u64, Vec<Tile>>,
    /// Limbs of every buffer written so far (a whole source's limbs, for a staged input).
    limbs: HashMap<u64, Limbs>,
    share: Option<&'a Share>,
    out: Split,
}

impl Splitter<'_> {
    /// The tiles each block of `ins` would read, or `None` when `ins` stays whole.
    fn plan(&self, ins: &Instr) -> Option<Vec<TilePlan>> {
        if !splittable(ins.op) || ins.limbs.is_empty() {
            return None;
        }
        let dst_blocks = blocks(&ins.limbs, self.tile);
        let any_tiled_src = ins.srcs.iter().any(|s| self.tiled.contains_key(s));
        if dst_blocks.len() < 2 && !any_tiled_src {
            return None;
        }
        let in_place = ins.dst.is_some_and(|d| ins.srcs.contains(&d));
        if in_place && !ins.dst.is_some_and(|d| self.tiled.contains_key(&d)) {
            return None;
        }
        let mut plan = Vec::with_capacity(dst_blocks.len());
        for (&b, limbs) in &dst_blocks {
            let mut srcs = Vec::with_capacity(ins.srcs.len());
            for s in ins.srcs.iter() {
                match self.tiled.get(s) {
                    None => srcs.push(*s),
                    Some(tiles) if ins.op == Op::Bconv => srcs.extend(tiles.iter().map(|t| t.id)),
                    Some(tiles) => match tiles.iter().find(|t| t.block == b) {
                        Some(t) => srcs.push(t.id),
                        // A concatenation's source covers only some of its limbs.
                        None if ins.op == Op::Concat => {}
                        None => return None,
                    },
                }
            }
            if srcs.is_empty() && !ins.srcs.is_empty() {
                return None;
            }
            plan.push((b, limbs.clone(), srcs));
        }
        Some(plan)
    }

    /// A `concat` of `id`'s tiles back into `id`, before `ins` reads it whole.
    fn join(&mut self, id: u64, ins: &Instr) {
        let Some(tiles) = self.tiled.remove(&id) else {
            return;
        };
        let mut limbs: Vec<usize> = tiles.iter().flat_map(|t| t.limbs.iter().copied()).collect();
        limbs.sort_unstable();
        self.out.instrs.push(Instr {
            seq: ins.seq,
            op: Op::Concat,
            dst: Some(id),
            srcs: tiles.iter().map(|t| t.id).collect(),
            limbs: Limbs::from(limbs),
            n: ins.n,
            kind: ins.kind,
            galois: None,
            mode: None,
            name: None,
            level: None,
            host: None,
        });
        self.out.joins += 1;
    }

    /// Stages the input of BConv `ins`, split into `plan`'s output tiles, when the machine's
    /// policy moves BConv inputs and the staged input fits beside the tiles: a `concat`
    /// (carrying the BConv's mode, which marks it as a staging) of the input into a new
    /// buffer that every output tile then reads instead. Counts a BConv whose input does
    /// not fit as re-moved.
    fn stage(&mut self, ins: &Instr, plan: &mut [TilePlan]) {
        let Some(share) = self.share else { return };
        if ins.op != Op::Bconv || plan.len() < 2 || ins.srcs.len() != 1 {
            return;
        }
        let src = ins.srcs[0];
        let mut limbs: Vec<usize> = match self.tiled.get(&src) {
            Some(tiles) => tiles.iter().flat_map(|t| t.limbs.iter().copied()).collect(),
            None => self.limbs.get(&src).map(|l| l.to_vec()).unwrap_or_default(),
        };
        limbs.sort_unstable();
        let (staging, on_chip) = share.staging(limbs.len(), ins.limbs.len());
        if staging == Staging::None || limbs.is_empty() {
            return;
        }
        if on_chip > share.budget_limbs {
            self.out.re_moved += 1;
            return;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.out.instrs.push(Instr {
            seq: ins.seq,
            op: Op::Concat,
            dst: Some(id),
            srcs: Srcs::from(&plan[0].2[..]),
            limbs: Limbs::from(limbs),
            n: ins.n,
            kind: ins.kind,
            galois: None,
            mode: ins.mode,
            name: None,
            level: None,
            host: None,
        });
        for p in plan.iter_mut() {
            p.2 = vec![id];
        }
        self.out.shared += 1;
    }

    fn step(&mut self, ins: &Instr) {
        if matches!(ins.op, Op::Begin | Op::End) {
            self.out.instrs.push(ins.clone());
            return;
        }
        if let Some(d) = ins.dst {
            self.limbs.insert(d, ins.limbs.clone());
        }
        let Some(mut plan) = self.plan(ins) else {
            for s in ins.srcs.iter() {
                self.join(*s, ins);
            }
            if let Some(d) = ins.dst {
                // A whole write replaces the tiles of its destination.
                self.tiled.remove(&d);
            }
            self.out.instrs.push(ins.clone());
            return;
        };
        self.stage(ins, &mut plan);
        let in_place = ins.dst.is_some_and(|d| ins.srcs.contains(&d));
        let old = ins.dst.and_then(|d| self.tiled.get(&d).cloned());
        let mut new_tiles = Vec::with_capacity(plan.len());
        for (b, limbs, srcs) in plan {
            let limbs = Limbs::from(limbs);
            let dst = ins.dst.map(|_| {
                match old
                    .as_ref()
                    .filter(|_| in_place)
                    .and_then(|o| o.iter().find(|t| t.block == b).map(|t| t.id))
                {
                    Some(id) => id,
                    None => {
                        self.next_id += 1;
                        self.next_id - 1
                    }
                }
            });
            if let Some(id) = dst {
                new_tiles.push(Tile {
                    block: b,
                    id,
                    limbs: limbs.clone(),
                });
            }
            self.out.instrs.push(Instr {
                dst,
                srcs: Srcs::from(&srcs[..]),
                limbs,
                ..ins.clone()
            });
            self.out.tiles += 1;
        }
        self.out.split += 1;
        if let Some(d) = ins.dst {
            if in_place {
                // Tiles of the buffer this instruction did not touch keep their data.
                let mut all = old.unwrap_or_default();
                for t in new_tiles {
                    match all.iter_mut().find(|o| o.block == t.block) {
                        Some(o) => *o = t,
                        None => all.push(t),
                    }
                }
                all.sort_by_key(|t| t.block);
                self.tiled.insert(d, all);
            } else {
                self.tiled.insert(d, new_tiles);
            }
        }
    }
}

/// `instrs` with every splittable instruction split into tiles of `tile` limbs (see the
/// module doc). Tiled buffers still live at the end of the stream stay tiled. Every output
/// tile of a BConv reads (and, on machines that move it, moves) the whole input.
pub fn split(instrs: &[Instr], tile: usize) -> Split {
    split_sharing(instrs, tile, None)
}

/// [`split`], with the input of every BConv split into two or more output tiles staged
/// once and shared by its tiles where `share` says the machine moves it and it fits.
pub fn split_sharing(instrs: &[Instr], tile: usize, share: Option<&Share>) -> Split {
    let base = instrs
        .iter()
        .flat_map(|i| i.srcs.iter().copied().chain(i.dst))
        .max()
        .map_or(0, |m| m + 1);
    let mut s = Splitter {
        tile: tile.max(1),
        next_id: base,
        tiled: HashMap::new(),
        limbs: HashMap::new(),
        share,
        out: Split {
            instrs: Vec::with_capacity(instrs.len() * 2),
            base,
            ..Split::default()
        },
    };
    for ins in instrs {
        s.step(ins);
    }
    s.out
}

/// The split `limb-tiled` makes of `instrs` on `m`: tiles of [`tile_limbs`], with BConv
/// inputs staged and shared ([`Share`]) when `schedule.share_bconv_input` (the default),
/// else with every BConv output tile moving its input.
/// `None` when nothing is split (the scratchpad's capacity is not modelled). Returns the
/// tile with the split.
pub fn plan(m: &Machine, instrs: &[Instr]) -> Option<(usize, Split)> {
    let tile = tile_limbs(m, instrs)?;
    let share = m
        .schedule
        .share_bconv_input
        .then(|| Share::of(m, instrs, tile))
        .flatten();
    Some((tile, split_sharing(instrs, tile, share.as_ref())))
}

/// `limb-tiled`: the stream split into limb tiles ([`split`]), then ordered by the
/// working-set list scheduler ([`super::working_set`]), which runs a tile's chain (BConv
/// output tile, its NTT, the inner-product tile that reads it) before starting the next tile
/// because the chain frees what it made live.
#[derive(Debug, Default)]
pub struct LimbTiled {
    inner: super::working_set::WorkingSet,
}

impl SchedulePolicy for LimbTiled {
    fn name(&self) -> &'static str {
        "limb-tiled"
    }

    fn start(&mut self, instrs: &[Instr]) {
        self.inner.start(instrs);
    }

    fn order(&mut self, g: &Graph<'_>) -> Vec<u32> {
        self.inner.order(g)
    }
}
