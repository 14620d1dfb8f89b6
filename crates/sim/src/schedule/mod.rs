//! The scheduling pass between the trace and the engine (issue 25 item 2): it builds the
//! instruction dataflow graph over a window of the stream ([`graph`]) and lets a policy
//! reorder it for the machine. The engine times instructions in the order it receives them,
//! and its scratchpad holds whatever that order keeps live, so the order decides the spills.
//!
//! A machine names its policy in its file (`[schedule] policy = "working-set"`, `window`), and
//! `--set schedule.policy=...` overrides it for sweeps:
//! - `program-order` ([`program_order`]): the recorded order, untouched (the default);
//! - `working-set` ([`working_set`]): a list scheduler that runs first whatever frees
//!   ciphertext bytes (most first), pulls key and plaintext loads to just before their first
//!   consumer, and otherwise keeps program order.
//!
//! Two options refine any policy's order (both off by default, so the calibrated designs'
//! figures do not move): `prefetch = D` moves key and plaintext fetches up to D
//! instructions earlier ([`prefetch`]), `fuse = true` places the sole element-wise reader of
//! an element-wise result right after it so the chain stays in the register files
//! ([`fusion`]).
//!
//! Every policy only permutes instructions within a window and keeps every dependence: a
//! buffer read sees the same write as in the recorded order (read-after-write), and writes
//! to a buffer keep their order with each other (write-after-write) and with the reads
//! before them (write-after-read, for in-place operations). HE-operation markers are
//! re-emitted around the instructions they enclosed: each instruction stays inside spans of
//! the same names and levels, nested as recorded; an operation whose instructions are
//! interleaved with another's appears as several spans of its name ([`verify`] checks all
//! this on recorded traces).
//!
//! - `limb-tiled` ([`tiling`]): splits limb-parallel instructions (and BConv by output
//!   limbs) into tiles of ring indices sized from the scratchpad, then orders the tiles as
//!   `working-set` does, so key switching runs tile by tile ([`verify::check_tiled`] checks
//!   that the tiled stream computes the recorded dataflow).

pub mod fusion;
pub mod graph;
pub mod prefetch;
pub mod program_order;
pub mod spans;
pub mod tiling;
pub mod verify;
pub mod working_set;

use crate::error::SimError;
use crate::machine::Machine;
use graph::Graph;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use tessera_backend::trace::Instr;

/// A scheduling policy: an order of one window's dataflow graph.
pub trait SchedulePolicy {
    /// The name a machine description gives it.
    fn name(&self) -> &'static str;
    /// Called once per stream, before its first window.
    fn start(&mut self, _instrs: &[Instr]) {}
    /// A topological order of `g`'s nodes (every node once, every predecessor first).
    fn order(&mut self, g: &Graph<'_>) -> Vec<u32>;
}

/// The policies a machine description may name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyName {
    /// The recorded order.
    #[default]
    ProgramOrder,
    /// Free live ciphertext bytes first, loads just in time ([`working_set`]).
    WorkingSet,
    /// Limb tiles, then the working-set order ([`tiling`]).
    LimbTiled,
}

impl PolicyName {
    /// Every policy's name, as `schedule.policy` takes it.
    pub const NAMES: &'static [&'static str] = &["program-order", "working-set", "limb-tiled"];

    /// Its name.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// Parses a policy name, with an error that lists the allowed ones.
    pub fn parse(s: &str) -> Result<Self, SimError> {
        match s {
            "program-order" => Ok(Self::ProgramOrder),
            "working-set" => Ok(Self::WorkingSet),
            "limb-tiled" => Ok(Self::LimbTiled),
            _ => Err(SimError::Invalid {
                name: "schedule.policy",
                value: s.into(),
                allowed: Self::NAMES.join(", "),
            }),
        }
    }

    fn policy(self) -> Box<dyn SchedulePolicy> {
        match self {
            Self::ProgramOrder => Box::new(program_order::ProgramOrder),
            Self::WorkingSet => Box::new(working_set::WorkingSet::default()),
            Self::LimbTiled => Box::new(tiling::LimbTiled::default()),
        }
    }
}

/// Default window: instructions (markers excluded) scheduled together. Large enough to hold
/// one BSGS linear transform of a bootstrapping at N = 2^16 and its key switches.
pub const DEFAULT_WINDOW: usize = 1 << 16;
/// Largest window (the graph of a window is held in memory).
pub const MAX_WINDOW: u64 = 1 << 24;

fn default_window() -> usize {
    DEFAULT_WINDOW
}

fn default_true() -> bool {
    true
}

/// A machine's `[schedule]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleSpec {
    /// The policy (`program-order` when absent).
    #[serde(default)]
    pub policy: PolicyName,
    /// Instructions (markers excluded) per window; windows are scheduled one after another.
    #[serde(default = "default_window")]
    pub window: usize,
    /// Limbs per tile of `limb-tiled` (0, the default: derived from the scratchpad
    /// capacity, [`tiling::tile_limbs`]).
    #[serde(default)]
    pub tile_limbs: usize,
    /// Instructions a key or plaintext fetch moves ahead of where the policy put it (0: off,
    /// the default).
    #[serde(default)]
    pub prefetch: usize,
    /// Fuse element-wise chains (off by default).
    #[serde(default)]
    pub fuse: bool,
    /// `limb-tiled`: stage the input of a BConv split by output limbs once and share it
    /// between the output tiles, kept on chip until the last one ([`tiling::Share`]; the
    /// default). `false`: every output tile moves the whole input again (session 31).
    #[serde(default = "default_true")]
    pub share_bconv_input: bool,
    /// Where the choice comes from (the paper's compiler or scheduler, or "ours").
    #[serde(default)]
    pub cite: String,
}

impl Default for ScheduleSpec {
    fn default() -> Self {
        Self {
            policy: PolicyName::ProgramOrder,
            window: DEFAULT_WINDOW,
            tile_limbs: 0,
            prefetch: 0,
            fuse: false,
            share_bconv_input: true,
            cite: String::new(),
        }
    }
}

impl ScheduleSpec {
    /// Whether [`apply`] hands every stream through untouched (program order, no prefetch,
    /// no fusion): only then may a stream skip the pass.
    pub fn is_identity(&self) -> bool {
        self.policy == PolicyName::ProgramOrder && self.prefetch == 0 && !self.fuse
    }

    /// Checks the window's and the tile's ranges.
    pub fn validate(&self) -> Result<(), SimError> {
        crate::limits::count("schedule.window", self.window, 1, MAX_WINDOW)?;
        crate::limits::count("schedule.tile_limbs", self.tile_limbs, 0, MAX_TILE_LIMBS)?;
        crate::limits::count("schedule.prefetch", self.prefetch, 0, MAX_WINDOW)?;
        Ok(())
    }
}

/// Largest `schedule.tile_limbs` (more limbs than any modulus chain has).
pub const MAX_TILE_LIMBS: u64 = 1 << 16;

/// Whether `m` runs `limb-tiled` with BConv inputs staged and shared by their output tiles.
pub fn shares_bconv_inputs(m: &Machine) -> bool {
    m.schedule.policy == PolicyName::LimbTiled && m.schedule.share_bconv_input
}

/// What `limb-tiled` did to a stream (for the report): its tile, and [`tiling::Split`]'s
/// counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TileStats {
    /// Limbs per tile.
    pub tile_limbs: usize,
    /// Recorded instructions split.
    pub split: u64,
    /// Tiles emitted for them.
    pub tiles: u64,
    /// Joins of tiles before whole instructions.
    pub joins: u64,
    /// BConvs whose input was staged once and shared by their output tiles.
    pub bconv_inputs_shared: u64,
    /// BConvs whose staged input would not fit beside the tiles: every output tile moves
    /// the input.
    pub bconv_inputs_not_fitting: u64,
}

/// `instrs` in the order `m`'s policy gives: borrowed unchanged for `program-order`; split
/// into limb tiles first for `limb-tiled`.
pub fn apply<'a>(m: &Machine, instrs: &'a [Instr]) -> Cow<'a, [Instr]> {
    apply_with_stats(m, instrs).0
}

/// [`apply`], with what `limb-tiled` split (`None` for the other policies, or when nothing
/// is split).
pub fn apply_with_stats<'a>(
    m: &Machine,
    instrs: &'a [Instr],
) -> (Cow<'a, [Instr]>, Option<TileStats>) {
    let spec = &m.schedule;
    let refine = Refine {
        prefetch: spec.prefetch,
        fuse: spec.fuse,
    };
    let mut p = spec.policy.policy();
    let window = spec.window.max(1);
    match spec.policy {
        _ if spec.is_identity() => (Cow::Borrowed(instrs), None),
        PolicyName::LimbTiled => {
            let (tiled, stats) = match tiling::plan(m, instrs) {
                Some((tile, split)) => {
                    let stats = TileStats {
                        tile_limbs: tile,
                        split: split.split,
                        tiles: split.tiles,
                        joins: split.joins,
                        bconv_inputs_shared: split.shared,
                        bconv_inputs_not_fitting: split.re_moved,
                    };
                    (split.instrs, Some(stats))
                }
                None => (instrs.to_vec(), None),
            };
            (
                Cow::Owned(reorder_with(p.as_mut(), &tiled, window, refine)),
                stats,
            )
        }
        _ => (
            Cow::Owned(reorder_with(p.as_mut(), instrs, window, refine)),
            None,
        ),
    }
}

/// The options that refine a policy's order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refine {
    /// [`prefetch`] distance (0: off).
    pub prefetch: usize,
    /// [`fusion`] on.
    pub fuse: bool,
}

/// Schedules `instrs` window by window with `policy`, re-emitting the HE-operation markers
/// around the instructions they enclosed ([`spans`]).
pub fn reorder(policy: &mut dyn SchedulePolicy, instrs: &[Instr], window: usize) -> Vec<Instr> {
    reorder_with(policy, instrs, window, Refine::default())
}

/// [`reorder`], each window's order refined by `refine`.
pub fn reorder_with(
    policy: &mut dyn SchedulePolicy,
    instrs: &[Instr],
    window: usize,
    refine: Refine,
) -> Vec<Instr> {
    policy.start(instrs);
    let mut tree = spans::SpanTree::default();
    let mut out = Vec::with_capacity(instrs.len() + instrs.len() / 8);
    let mut emit = spans::Emitter::default();
    let mut g = Graph::new();
    for ins in instrs {
        match tree.step(ins) {
            spans::Step::Content(span) => g.push_instr(ins, span),
            spans::Step::Empty(span) => g.push_empty_span(span, tree.parent(span)),
            spans::Step::Marker => {}
        }
        if g.len() >= window {
            flush(policy, refine, &mut g, &tree, &mut emit, &mut out);
        }
    }
    flush(policy, refine, &mut g, &tree, &mut emit, &mut out);
    emit.enter(&tree, None, &mut out);
    out
}

fn flush(
    policy: &mut dyn SchedulePolicy,
    refine: Refine,
    g: &mut Graph<'_>,
    tree: &spans::SpanTree,
    emit: &mut spans::Emitter,
    out: &mut Vec<Instr>,
) {
    if g.is_empty() {
        return;
    }
    g.link();
    let mut order = policy.order(g);
    if refine.fuse {
        order = fusion::fuse(g, &order);
    }
    order = prefetch::prefetch(g, order, refine.prefetch);
    debug_assert_eq!(order.len(), g.len(), "a policy orders every node once");
    for k in order {
        match g.node(k).item {
            graph::Item::Instr(ins) => {
                emit.enter(tree, g.node(k).span, out);
                out.push(ins.clone());
            }
            graph::Item::EmptySpan(s) => {
                emit.enter(tree, tree.parent(s), out);
                out.push(tree.begin(s).clone());
                out.push(tree.end(s));
            }
        }
    }
    g.clear();
}
