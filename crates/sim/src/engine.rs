//! The engine: static list scheduling of an instruction stream on a machine.
//!
//! HE programs have no data-dependent control flow, so the schedule is computed in program
//! order (ARK's simulator is a VLIW compiler in the same sense). Every instruction starts
//! when its sources are ready and the resources of its first phase are free; each resource
//! (a cluster's NTTU, BConvU, AutoU, MADUs, PRNG and scratchpad port, the NoC, the off-chip
//! channel) keeps the cycle it is next free, so independent instructions on different units
//! overlap and loads run ahead of their use (prefetch) as far as off-chip bandwidth allows.
//! Scratchpad capacity is tracked in program order by [`Residency`]: misses, spills and
//! reloads become off-chip transfers.

use crate::error::SimError;
use crate::machine::Machine;
use crate::mapping::{lower, Layout, Lowered, Net, Phase, Resource, Shape};
use crate::reservation::Table;
use crate::residency::{Entry, Residency, Spills};
use crate::storage::{Operand, RegisterFiles};
use issue::IssueWindow;
use lookahead::{is_compute, Flags, Lookahead};
use std::collections::{HashMap, HashSet, VecDeque};
use tessera_backend::trace::{IdSet, Instr, Limbs, Op};

mod issue;
mod lookahead;

pub use issue::{check_issue_window, DEFAULT_ISSUE_WINDOW};
pub use lookahead::{check_window, DEFAULT_WINDOW, MAX_WINDOW};

/// Buffers retired as dead (no use left in the lookahead window) that the engine remembers,
/// so that one read again beyond the window comes back as spilled data rather than an
/// error. Each takes about a hundred bytes; past this many the oldest is forgotten.
const PARKED: usize = 1 << 16;

/// One scheduled instruction (for timelines).
#[derive(Clone, Debug, PartialEq)]
pub struct Slot {
    /// The instruction's sequence number in the trace.
    pub seq: u64,
    /// Its primary function (`Op::name`).
    pub op: &'static str,
    /// Cycle its first phase starts.
    pub start: f64,
    /// Cycle its last phase ends.
    pub end: f64,
    /// Resources busy and for how many cycles from `start` of their phase.
    pub busy: Vec<(Resource, f64, f64)>,
}

/// The span of one HE operation (between its begin and end markers).
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// The HE operation's name from its begin marker ("HMult", "Boot", ...).
    pub name: String,
    /// Its input level, as its begin marker records it (0 when the marker has none).
    pub level: usize,
    /// Nesting depth: 0 for an outermost operation, 1 for one inside it, ...
    pub depth: usize,
    /// Cycle of its first instruction's start.
    pub start: f64,
    /// Cycle of its last instruction's end.
    pub end: f64,
}

/// Everything a run produced, in cycles and bytes.
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    /// Makespan: the cycle the last instruction ends.
    pub cycles: f64,
    /// Busy cycles per resource (dense index, see [`Resource::index`]).
    pub busy: Vec<f64>,
    /// Bytes moved over the off-chip channel (loads, spills and reloads).
    pub offchip_bytes: f64,
    /// `offchip_bytes` by kind of data (keys, plaintexts, ciphertexts, spills, ...).
    pub offchip_by_kind: HashMap<&'static str, f64>,
    /// Bytes over the on-chip network.
    pub noc_bytes: f64,
    /// The part of `noc_bytes` that off-chip transfers move between the I/O dies and the
    /// clusters (the rest is cluster-to-cluster data).
    pub io_noc_bytes: f64,
    /// Bytes through the register files (every functional-unit operand and result).
    pub rf_bytes: f64,
    /// The most scratchpad bytes resident at once.
    pub peak_onchip_bytes: f64,
    /// The two-level storage's figures (zero without a register-file capacity; see
    /// [`crate::storage`]): chained sources read back from the scratchpad, results
    /// written back to it, the scratchpad-port cycles (per cluster) both took, and the most
    /// register-file bytes resident at once.
    pub rf_refill_bytes: f64,
    /// Results written back from the register files to the scratchpad when evicted.
    pub rf_writeback_bytes: f64,
    /// Scratchpad-port cycles per cluster spent on refills and write-backs.
    pub rf_fill_cycles: f64,
    /// The most register-file bytes resident at once (operands streaming through included).
    pub rf_peak_bytes: f64,
    /// Bytes that did not fit in the scratchpad even after evicting everything else.
    pub overflow_bytes: f64,
    /// Instructions scheduled.
    pub instructions: u64,
    /// Output tiles of BConvs with a staged input (`schedule::tiling`) that found it dropped
    /// from the scratchpad for room and moved the input again.
    pub bconv_inputs_re_moved: u64,
    /// Every scheduled instruction, when a timeline was asked for (empty otherwise).
    pub slots: Vec<Slot>,
    /// Every HE operation's span, outermost and nested, when a timeline was asked for
    /// ([`RunOptions::keep_slots`]; empty otherwise, so that a run's memory does not grow with
    /// the program: the per-operation breakdown is `growth_by_op`, summed as it goes).
    pub spans: Vec<Span>,
    /// Makespan growth attributed to the outermost HE operation running when it happened,
    /// in cycles: where the time goes.
    pub growth_by_op: HashMap<String, f64>,
    /// Instructions whose placement the issue window held back ([`RunOptions::issue_window`]):
    /// at 0 the schedule is the one without the window, bit for bit.
    pub window_holds: u64,
    /// The most busy intervals the reservation table held at once (over all resources):
    /// bounded by the issue window, not by the program's length.
    pub peak_intervals: usize,
    /// The issue window this schedule was made with, in placed instructions
    /// ([`RunOptions::issue_window`], or [`DEFAULT_ISSUE_WINDOW`]).
    pub issue_window: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backing {
    Host(u64),
    Temp,
    /// Streamed from off-chip straight to its limb-wise consumers (`limb_streaming`).
    Stream,
}

struct Buf {
    limbs: Limbs,
    kind: &'static str,
    backing: Backing,
    /// When its first limb is available (chained consumers may start then).
    first: f64,
    /// When all of it is available.
    ready: f64,
}

fn kind_of(i: &Instr) -> &'static str {
    i.kind.unwrap_or(tessera_backend::Kind::Ciphertext).name()
}

/// Simulates `instrs` (one stream, ring degree from the instructions) on `m`. With
/// `keep_slots`, every instruction's placement is kept for a timeline.
pub fn run(m: &Machine, instrs: &[Instr], keep_slots: bool) -> Result<Schedule, SimError> {
    run_with(
        m,
        instrs,
        &RunOptions {
            keep_slots,
            ..Default::default()
        },
    )
}

/// How to run a trace.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Keep every instruction's slot and every HE operation's span (for timelines).
    pub keep_slots: bool,
    /// Time the program as one step inside a longer one, as micro-benchmarks time an
    /// operation: its input ciphertexts (loaded before the first compute instruction) are
    /// already on chip and its results (stored after the last) stay there, so neither moves
    /// off-chip. Keys and plaintexts still come from off-chip memory.
    pub warm: bool,
    /// Keys and plaintexts shared by synchronous tasks on every cluster (throughput mode on
    /// a machine with `options.synchronous_sharing`).
    pub shared: Option<SharedLoads>,
    /// The lookahead window in instructions ([`DEFAULT_WINDOW`] when `None`): the engine
    /// holds this many instructions ahead of the one it schedules, and its figures equal the
    /// whole-stream schedule's when every buffer's live range is shorter (see
    /// `engine/lookahead.rs`).
    pub window: Option<usize>,
    /// The issue window in placed instructions ([`DEFAULT_ISSUE_WINDOW`] when `None`): an
    /// instruction is dispatched no earlier than the one this many places before it, which
    /// bounds the reservation table (see `engine/issue.rs`). Checked as `window` is.
    pub issue_window: Option<usize>,
}

/// Common data of synchronous tasks (h3.md 4.2: "H3 employs a multi-core synchronous
/// execution approach for efficient data sharing"): every cluster runs the same program on
/// its own ciphertext, so each key or plaintext is read once, `1 / tasks` of it from each
/// cluster's memory, and all-gathered over the NoC.
#[derive(Clone, Copy, Debug)]
pub struct SharedLoads {
    /// Clusters running a task each.
    pub tasks: usize,
    /// Bytes on the busiest NoC link per byte all-gathered (the full machine's schedule):
    /// the all-gather's time.
    pub busiest_link_per_byte: f64,
    /// Bytes on all links together per byte all-gathered: its traffic and energy, shared by
    /// the `tasks` tasks.
    pub link_bytes_per_byte: f64,
}

/// [`run`] with options over a slice: the streaming engine ([`run_stream`]) fed from it.
pub fn run_with(m: &Machine, instrs: &[Instr], opts: &RunOptions) -> Result<Schedule, SimError> {
    run_stream(m, instrs.iter().cloned().map(Ok), opts)
}

/// Simulates a stream of instructions on `m`, holding at most the lookahead window
/// ([`RunOptions::window`]) of them, and the reservation table holds the busy intervals of
/// about the last [`RunOptions::issue_window`] instructions (`engine/issue.rs`): memory is
/// bounded independently of the stream's length (beyond, with `keep_slots`, the schedule's
/// spans and slots). A source error (a trace
/// line that does not parse) ends the run with that error.
///
/// One [`Run`] steps through the stream; each instruction is taken through the engine's
/// jobs in order: its sources (residency: hits, reloads), its issue (lowering onto the
/// units, register-file chaining), its off-chip traffic (loads, stores, spills), its timing
/// (placement in the reservation tables) and the bookkeeping of its result.
pub fn run_stream<I>(m: &Machine, instrs: I, opts: &RunOptions) -> Result<Schedule, SimError>
where
    I: IntoIterator<Item = Result<Instr, SimError>>,
{
    let flags = Flags {
        seeded_keys: m.options.seeded_keys,
        limb_streaming: m.options.limb_streaming,
    };
    let window = opts.window.unwrap_or(DEFAULT_WINDOW);
    check_issue_window(opts.issue_window.unwrap_or(DEFAULT_ISSUE_WINDOW))?;
    let look = Lookahead::new(instrs.into_iter(), window, flags)?;
    let mut r = Run::new(m, look, opts);
    while let Some((pos, ins)) = r.look.next_instr()? {
        r.step(pos, &ins)?;
        r.look.leave(pos, &ins);
    }
    r.finish()
}

/// What an instruction's sources give it: when they are ready, what must stay on chip while
/// it runs, and the reload of any that went off-chip.
struct Sources {
    keep: HashSet<Entry>,
    /// When every source is whole.
    ready: f64,
    /// When every source's first limb exists (a chained consumer may start).
    first: f64,
    /// The reload phase (empty when nothing is reloaded).
    pre: Phase,
    reload_bytes: f64,
}

/// Reloads of an instruction's sources: bytes per off-chip channel, and (limbs, bytes per
/// limb) for the I/O-die paths.
struct Reloads {
    per_chan: Vec<f64>,
    io: Vec<(Limbs, f64)>,
}

/// An instruction's off-chip transfers ([`Run::transfers`]).
struct Transfers {
    /// Bytes per off-chip channel.
    per_chan: Vec<f64>,
    /// Limbs moved (each a limb's bytes), for the I/O-die paths.
    io_limbs: Vec<usize>,
    /// A shared load's all-gather over the NoC.
    shared_noc: Option<(Resource, f64)>,
    /// How the result is backed.
    backing: Backing,
}

/// Where an instruction was placed.
struct Placed {
    start: f64,
    end: f64,
    /// When its first limb is out.
    first_out: f64,
    busy: Vec<(Resource, f64, f64)>,
}

/// The state of one run: the machine's constants, the lookahead window, the schedule so
/// far, and what is on chip.
struct Run<'a, I> {
    m: &'a Machine,
    look: Lookahead<I>,
    opts: &'a RunOptions,
    word: f64,
    off_bpc: f64,
    off_lat: f64,
    noc_bpc: f64,
    lay: Layout,
    net: Net,
    /// Whether off-chip transfers cross the NoC from I/O dies (only then are reloads listed).
    via_io: bool,
    /// Whether the instruction being scheduled writes a limb-streamed buffer.
    streamed: bool,
    res: Residency,
    table: Table,
    /// When the latest reader of each buffer started (write-after-read order for in-place ops).
    read_start: HashMap<u64, f64>,
    s: Schedule,
    produced_at: HashMap<u64, usize>,
    produced_op: HashMap<u64, Op>,
    prev_compute: usize,
    prev_reads: HashSet<u64>,
    bufs: HashMap<u64, Buf>,
    /// Buffers retired with no use left in the window, newest last (at most [`PARKED`]).
    parked: HashMap<u64, Buf>,
    parked_order: VecDeque<u64>,
    /// Every buffer retired before the end of the stream was in sight (as ranges of ids).
    retired: IdSet,
    open: Vec<(String, usize, f64, f64)>,
    rr: usize,
    spills: Spills,
    /// Dispatch times of the last placed instructions: the floor of the next one.
    issue: IssueWindow,
    /// The next instruction's floor ([`IssueWindow::floor`]), and whether it raised one of
    /// its placements' lower bounds.
    floor: f64,
    held: bool,
    /// The register-file level, when the machine has one ([`crate::storage`]).
    rf: Option<RegisterFiles>,
    /// Staged BConv inputs still live: how each was staged, read by its output tiles
    /// (`schedule::tiling`).
    staged: HashMap<u64, crate::dataflow::Staging>,
}

impl<'a, I: Iterator<Item = Result<Instr, SimError>>> Run<'a, I> {
    fn new(m: &'a Machine, look: Lookahead<I>, opts: &'a RunOptions) -> Self {
        let lay = Layout::of(m);
        let net = Net::of(m);
        Self {
            m,
            look,
            opts,
            word: m.word_bytes(),
            off_bpc: m.memory.offchip.bandwidth_gbs / m.clock.ghz,
            off_lat: m.memory.offchip.latency_ns * m.clock.ghz,
            noc_bpc: m.memory.noc.bandwidth_gbs / m.clock.ghz,
            via_io: net.links.io_dies > 0,
            streamed: false,
            res: Residency::new(m.scratchpad_mb() * 1048576.0),
            table: Table::new(lay.len()),
            read_start: HashMap::new(),
            s: Schedule {
                busy: vec![0.0; lay.len()],
                issue_window: opts.issue_window.unwrap_or(DEFAULT_ISSUE_WINDOW),
                ..Default::default()
            },
            produced_at: HashMap::new(),
            produced_op: HashMap::new(),
            prev_compute: usize::MAX,
            prev_reads: HashSet::new(),
            bufs: HashMap::new(),
            parked: HashMap::new(),
            parked_order: VecDeque::new(),
            retired: IdSet::default(),
            open: Vec::new(),
            rr: 0,
            spills: Spills::default(),
            issue: IssueWindow::new(opts.issue_window.unwrap_or(DEFAULT_ISSUE_WINDOW)),
            floor: 0.0,
            held: false,
            rf: RegisterFiles::of(m),
            staged: HashMap::new(),
            lay,
            net,
        }
    }

    /// One instruction through the engine's jobs.
    fn step(&mut self, pos: usize, ins: &Instr) -> Result<(), SimError> {
        if self.span(ins)? {
            return Ok(());
        }
        self.s.instructions += 1;
        self.floor = self.issue.floor();
        self.held = false;
        self.res.set_now(pos);
        self.streamed = self.look.streamable(pos, ins);
        let mut src = self.sources(pos, ins)?;
        let kind = kind_of(ins);
        let (mut lowered, through_rf) = self.issue(pos, ins);
        let backing = self.offchip(pos, ins, &mut src.keep, &mut lowered);
        let reloads = !src.pre.tasks.is_empty();
        if reloads {
            lowered.phases.insert(0, std::mem::take(&mut src.pre));
        }
        let in_place = self.occupy(pos, ins, backing, through_rf, &mut src.keep);
        self.drain_spills();
        let placed = self.place(ins, &lowered, &src, reloads, in_place);
        self.account(ins, &lowered, &placed);
        self.retire(pos, ins, kind, backing, &placed);
        self.dispatched(placed.start);
        Ok(())
    }

    /// A placement's lower bound, raised to the issue window's floor (noted when it is).
    fn floored(&mut self, t: f64) -> f64 {
        if self.floor > t {
            self.held = true;
            self.floor
        } else {
            t
        }
    }

    /// The instruction just placed was dispatched at `start` (its first phase, or, without
    /// phases, when its sources were ready; never before its floor): the issue window moves
    /// on, and the intervals no later instruction can reach are retired.
    fn dispatched(&mut self, start: f64) {
        self.s.window_holds += u64::from(self.held);
        self.s.peak_intervals = self.s.peak_intervals.max(self.table.held());
        if let Some(h) = self.issue.push(start.max(self.floor)) {
            self.table.retire_before(h);
        }
    }

    /// An off-chip channel per cluster (each limb to its home's) or one shared.
    fn chan(&self, limb: usize) -> usize {
        if self.lay.channels > 1 {
            limb % self.lay.channels
        } else {
            0
        }
    }

    fn off_tasks(&self, per: &[f64]) -> Vec<(Resource, f64)> {
        per.iter()
            .enumerate()
            .filter(|(_, b)| **b > 0.0)
            .map(|(c, b)| (Resource::Offchip(c), b / self.off_bpc))
            .collect()
    }

    /// Under `warm`, the ciphertexts loaded before the first compute instruction are on chip
    /// already.
    fn on_chip_input(&self, pos: usize, kind: &str) -> bool {
        self.opts.warm && self.look.before_first_compute(pos) && kind == "ciphertext"
    }

    /// Under `warm`, the results stored after the last compute instruction stay on chip.
    fn on_chip_output(&self, pos: usize) -> bool {
        self.opts.warm && self.look.after_last_compute(pos)
    }

    /// HE-operation markers: opens or closes a span. Returns whether `ins` was one.
    fn span(&mut self, ins: &Instr) -> Result<bool, SimError> {
        match ins.op {
            Op::Begin => {
                self.open.push((
                    ins.name.clone().unwrap_or_default(),
                    ins.level.unwrap_or(0),
                    f64::INFINITY,
                    0.0,
                ));
                Ok(true)
            }
            Op::End => {
                let (name, level, start, end) = self.open.pop().ok_or_else(|| {
                    SimError::Trace(format!("seq {}: end without begin", ins.seq))
                })?;
                let start = if start.is_finite() { start } else { end };
                if let Some(parent) = self.open.last_mut() {
                    parent.2 = parent.2.min(start);
                    parent.3 = parent.3.max(end);
                }
                if self.opts.keep_slots {
                    self.s.spans.push(Span {
                        name,
                        level,
                        depth: self.open.len(),
                        start,
                        end,
                    });
                }
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Residency of the sources: their ready times, and reloads of spilled temporaries or
    /// evicted cached limbs.
    fn sources(&mut self, pos: usize, ins: &Instr) -> Result<Sources, SimError> {
        let limb_bytes = ins.n as f64 * self.word;
        let channels = self.lay.channels;
        for id in &ins.srcs {
            if !self.bufs.contains_key(id) {
                self.revive(*id, ins, limb_bytes);
            }
        }
        let mut keep: HashSet<Entry> = HashSet::new();
        for id in &ins.srcs {
            if self.bufs.get(id).map(|b| b.backing) == Some(Backing::Temp) {
                keep.insert(Entry::Temp(*id));
            }
            if self.staged.contains_key(id) {
                keep.insert(Entry::Staged(*id));
            }
        }
        let (mut ready, mut first) = (0.0f64, 0.0f64);
        let mut reloads = Reloads {
            per_chan: vec![0.0f64; channels],
            io: Vec::new(),
        };
        for id in &ins.srcs {
            let b = self.bufs.get(id).ok_or_else(|| {
                SimError::Trace(format!(
                    "seq {}: source buffer {id} was never written",
                    ins.seq
                ))
            })?;
            ready = ready.max(b.ready);
            first = first.max(b.first);
            self.reload_source(pos, *id, limb_bytes, &keep, &mut reloads);
        }
        let (pre, reload_bytes) = self.reload_phase(reloads);
        Ok(Sources {
            keep,
            ready,
            first,
            pre,
            reload_bytes,
        })
    }

    /// The reload of source `id` of the instruction at `pos`, if it is off-chip: a spilled
    /// temporary's spilled limbs, or the limbs of a cached object no longer resident (which
    /// become resident again).
    fn reload_source(
        &mut self,
        pos: usize,
        id: u64,
        limb_bytes: f64,
        keep: &HashSet<Entry>,
        out: &mut Reloads,
    ) {
        let Some((backing, limbs)) = self.bufs.get(&id).map(|b| (b.backing, b.limbs.clone()))
        else {
            return;
        };
        match backing {
            Backing::Temp => {
                let next = self.look.next_temp(id, pos);
                let bytes = self
                    .res
                    .reload(id, limb_bytes, next, keep, &mut self.spills);
                if bytes > 0.0 {
                    let per = bytes / limbs.len().max(1) as f64;
                    for &l in &limbs {
                        out.per_chan[self.chan(l)] += per;
                    }
                    if self.via_io {
                        out.io.push((limbs, per));
                    }
                }
            }
            Backing::Stream => {}
            Backing::Host(h) => {
                for &l in &limbs {
                    let e = Entry::Host(h, l);
                    let next = self.look.next_host(h, l, pos);
                    if self.res.resident(e) {
                        self.res.touch(e, next);
                    } else {
                        self.res
                            .insert(e, limb_bytes, limb_bytes, next, keep, &mut self.spills);
                        out.per_chan[self.chan(l)] += limb_bytes;
                        if self.via_io {
                            out.io.push((Limbs::from(&[l][..]), limb_bytes));
                        }
                    }
                }
            }
        }
    }

    /// The reload phase of an instruction's sources (empty when nothing is reloaded) and
    /// its bytes: the off-chip channels, then the way from the I/O dies.
    fn reload_phase(&mut self, reloads: Reloads) -> (Phase, f64) {
        let reload_bytes: f64 = reloads.per_chan.iter().sum();
        let mut pre = Phase::default();
        if reload_bytes > 0.0 {
            pre.tasks = self.off_tasks(&reloads.per_chan);
            for (limbs, per) in &reloads.io {
                let (io, moved) = self.net.io_transfer(self.m, limbs, *per, true);
                pre.tasks.extend(io);
                self.s.noc_bytes += moved;
                self.s.io_noc_bytes += moved;
            }
            pre.latency = self.off_lat;
            self.s.offchip_bytes += reload_bytes;
            *self.s.offchip_by_kind.entry("reload").or_default() += reload_bytes;
        }
        (pre, reload_bytes)
    }

    /// Whether the instruction at `consumer` (`ins` at `pos`, or one after it in the
    /// window) is the add or subtract of a multiply-add pair.
    fn mad_pair(&self, consumer: usize, pos: usize, ins: &Instr) -> bool {
        let op = if consumer == pos {
            ins.op
        } else {
            self.look.at(consumer).op
        };
        matches!(op, Op::Add | Op::Sub)
    }

    fn is_temp(&self, id: &u64) -> bool {
        self.bufs.get(id).map(|b| b.backing) == Some(Backing::Temp)
    }

    /// The add or subtract of a multiply-add pair (see the RF chaining in [`Run::issue`]) is
    /// the adder stage of the MADU pass its multiply already made (ark.md V: multiply-add
    /// units compute a * b + c per lane per cycle, b a vector or a per-limb constant): it
    /// moves data but takes no MADU pass of its own.
    fn shape(&self, pos: usize, ins: &Instr) -> Option<Shape> {
        let mad_tail = matches!(ins.op, Op::Add | Op::Sub)
            && ins.srcs.iter().any(|id| {
                self.produced_op.get(id).is_some_and(|&o| is_multiply(o))
                    && self.look.single_use(*id) == Some(pos)
                    && self.is_temp(id)
            });
        let src_limbs = |j: usize| -> usize {
            ins.srcs
                .get(j)
                .and_then(|id| self.bufs.get(id))
                .map(|b| b.limbs.len())
                .unwrap_or(0)
        };
        match ins.op {
            Op::Ntt | Op::Intt => Some(Shape::Transform),
            Op::Automorphism => Some(Shape::Permute),
            // Every source's limbs: a BConv split by output limbs reads its input as tiles
            // (`schedule::tiling`); recorded BConvs have one source. An output tile that
            // reads a staged input moves none of it.
            Op::Bconv => {
                let l_in = (0..ins.srcs.len()).map(src_limbs).sum();
                // An output tile reads its staged input if it is still on chip; if it was
                // dropped for room, the tile moves the input again.
                Some(
                    match ins
                        .srcs
                        .first()
                        .and_then(|s| self.staged.get(s).map(|g| (s, g)))
                    {
                        Some((&s, &staging))
                            if ins.srcs.len() == 1 && self.res.resident(Entry::Staged(s)) =>
                        {
                            Shape::StagedBconv { l_in, staging }
                        }
                        _ => Shape::Bconv { l_in },
                    },
                )
            }
            Op::Concat if is_stage(ins) => Some(Shape::BconvInput {
                l_in: ins.limbs.len(),
                staging: self.staging_of(pos, ins),
            }),
            Op::Add | Op::Sub => Some(Shape::Elementwise {
                reads: 2,
                ops: usize::from(!mad_tail),
            }),
            Op::Mul => Some(Shape::Elementwise { reads: 2, ops: 1 }),
            Op::Neg | Op::AddScalar | Op::MulScalar => {
                Some(Shape::Elementwise { reads: 1, ops: 1 })
            }
            Op::MulAcc => Some(Shape::Elementwise { reads: 3, ops: 1 }),
            Op::Dot => {
                let pairs = ins.srcs.len() / 2;
                let reads_key = ins
                    .srcs
                    .iter()
                    .any(|id| self.bufs.get(id).map(|b| b.kind) == Some("evalkey"));
                Some(if reads_key {
                    Shape::KeyDot { pairs }
                } else {
                    Shape::Elementwise {
                        reads: 2 * pairs,
                        ops: pairs,
                    }
                })
            }
            Op::ExtendLimb => Some(Shape::ExtendLimb),
            Op::ExpandSeed if self.m.options.seeded_keys => Some(Shape::Expand),
            _ => None,
        }
    }

    /// How the machine's policy stages the input `ins` (a staging `concat` at `pos`) holds:
    /// decided on the whole BConv, every output tile that reads it (in the window) together,
    /// as the untiled BConv's lowering would decide.
    fn staging_of(&self, pos: usize, ins: &Instr) -> crate::dataflow::Staging {
        use crate::dataflow::Distribution;
        let mut l_out = 0;
        if let Some(d) = ins.dst {
            let mut p = self.look.next_temp(d, pos);
            while p != usize::MAX {
                l_out += self.look.at(p).limbs.len();
                p = self.look.next_temp(d, p);
            }
        }
        crate::dataflow::of(self.m).staging(&self.net, self.m.chip.clusters, ins.limbs.len(), l_out)
    }

    /// Issue: the instruction lowered onto the units, with the share of its operands that
    /// touch the scratchpad. Returns the lowering and whether its result only streams
    /// through the RFs to its one consumer (and so never occupies the scratchpad).
    ///
    /// Operator chaining through the register files (ark.md V-C, Fig. 2a): a source the
    /// previous compute instruction produced or read is still in the RFs (the two stream the
    /// same limbs in lockstep: the two halves of a key-switch inner product read each
    /// extended digit once), and a result only the next compute instruction reads need not
    /// reach the scratchpad. A multiply (by a vector or a per-limb constant) whose only
    /// consumer is an add or subtract runs with it as one multiply-add on the MADU (ark.md V:
    /// "multiply-add units"), so the product never reaches the scratchpad.
    fn issue(&mut self, pos: usize, ins: &Instr) -> (Lowered, bool) {
        let Some(shape) = self.shape(pos, ins) else {
            return (Lowered::default(), false);
        };
        let chained = |id: &u64| {
            let prev = self.prev_compute != usize::MAX
                && self.produced_at.get(id) == Some(&self.prev_compute)
                || self.prev_reads.contains(id);
            let mad = self.produced_op.get(id).is_some_and(|&o| is_multiply(o))
                && self.look.single_use(*id) == Some(pos)
                && self.mad_pair(pos, pos, ins);
            self.is_temp(id) && (prev || mad)
        };
        let reads = ins.srcs.len();
        let spm_reads = ins.srcs.iter().filter(|id| !chained(id)).count();
        let nc = self.look.next_compute(pos);
        let write = match ins.dst {
            Some(d) => {
                let next_only = nc != usize::MAX
                    && self.look.next_temp(d, pos) == nc
                    && self.look.last_use(d, nc);
                let fused = is_multiply(ins.op)
                    && self
                        .look
                        .single_use(d)
                        .is_some_and(|c| self.mad_pair(c, pos, ins));
                !(next_only || fused)
            }
            None => true,
        };
        let spm_scale = (spm_reads + write as usize) as f64 / (reads + 1) as f64;
        let srcs: Vec<(u64, bool)> = ins.srcs.iter().map(|id| (*id, chained(id))).collect();
        let mut lowered = lower(
            self.m, &self.net, shape, &ins.limbs, ins.n, self.rr, spm_scale,
        );
        self.register_files(pos, ins, &srcs, write, &mut lowered);
        if matches!(shape, Shape::Bconv { .. } | Shape::StagedBconv { .. }) {
            self.rr += 1;
        }
        if let (Shape::BconvInput { staging, .. }, Some(d)) = (shape, ins.dst) {
            self.staged.insert(d, staging);
        }
        (lowered, !write)
    }

    /// The two-level storage ([`crate::storage`]): the instruction's operands pass through
    /// the register files; refills and write-backs that capacity forces take scratchpad-port
    /// time in its operand phase. Nothing happens without a register-file capacity.
    fn register_files(
        &mut self,
        pos: usize,
        ins: &Instr,
        srcs: &[(u64, bool)],
        written: bool,
        lowered: &mut Lowered,
    ) {
        if self.rf.is_none() {
            return;
        }
        let grain = ins.n as f64 * self.word;
        let operand = |id: u64, limbs: usize| Operand {
            id,
            bytes: limbs as f64 * grain,
            grain,
            next: self.look.next_temp(id, pos),
        };
        let srcs: Vec<(Operand, bool)> = srcs
            .iter()
            .map(|&(id, chained)| {
                let limbs = self
                    .bufs
                    .get(&id)
                    .map_or(ins.limbs.len(), |b| b.limbs.len());
                (operand(id, limbs), chained)
            })
            .collect();
        let dst = ins.dst.map(|d| (operand(d, ins.limbs.len()), written));
        let Some(rf) = self.rf.as_mut() else {
            return;
        };
        let t = rf.instruction(pos, &srcs, dst);
        if t.total() > 0.0 {
            let spm_bpc = self.m.total_gbs(&self.m.memory.scratchpad) / self.m.clock.ghz;
            let cycles = t.total() / spm_bpc;
            crate::storage::charge(lowered, self.lay.clusters, cycles);
            self.s.rf_fill_cycles += cycles;
        }
    }

    /// Off-chip traffic of a load, a seed expansion or a store: what moves per channel, the
    /// limbs it moves (for the I/O-die paths), a shared load's all-gather, and how the
    /// result is backed. Loads of keys and plaintexts are cached per host limb.
    fn transfers(&mut self, pos: usize, ins: &Instr, keep: &HashSet<Entry>) -> Transfers {
        let mut t = Transfers {
            per_chan: vec![0.0f64; self.lay.channels],
            io_limbs: Vec::new(),
            shared_noc: None,
            backing: Backing::Temp,
        };
        match ins.op {
            Op::Load | Op::ExpandSeed => self.load(pos, ins, keep, &mut t),
            Op::Store if self.on_chip_output(pos) => {}
            Op::Store => {
                self.uncached(ins, &mut t);
                *self.s.offchip_by_kind.entry("store").or_default() +=
                    t.per_chan.iter().sum::<f64>();
            }
            _ => {}
        }
        t
    }

    /// A load or a seed expansion: a key or plaintext is cached per host limb (or streamed
    /// to its consumers), a ciphertext always moves (unless `warm` has it on chip), and a
    /// seeded key regenerated on chip moves nothing.
    fn load(&mut self, pos: usize, ins: &Instr, keep: &HashSet<Entry>, t: &mut Transfers) {
        let kind = kind_of(ins);
        let cacheable = kind != "ciphertext";
        let fetched = ins.op == Op::Load || !self.m.options.seeded_keys;
        match (ins.host, cacheable) {
            (Some(h), true) if self.streamed && fetched => {
                t.backing = Backing::Stream;
                self.fetch_host(pos, h, ins, keep, t);
            }
            (Some(h), true) if fetched => {
                t.backing = Backing::Host(h);
                self.fetch_host(pos, h, ins, keep, t);
            }
            // Regenerated on chip: a temporary, not a cached object.
            (Some(_), true) => {}
            _ if self.on_chip_input(pos, kind) => {}
            _ if fetched => self.uncached(ins, t),
            _ => {}
        }
        if let (Some(sh), true) = (self.opts.shared, cacheable) {
            let bytes: f64 = t.per_chan.iter().sum();
            t.per_chan.iter_mut().for_each(|b| *b /= sh.tasks as f64);
            if bytes > 0.0 && sh.tasks > 1 {
                let busiest = bytes * sh.busiest_link_per_byte;
                t.shared_noc = Some((Resource::Noc(0), busiest / self.noc_bpc));
                self.s.noc_bytes += bytes * sh.link_bytes_per_byte / sh.tasks as f64;
            }
        }
        *self.s.offchip_by_kind.entry(kind).or_default() += t.per_chan.iter().sum::<f64>();
    }

    /// Every limb of `ins` moves over its channel.
    fn uncached(&self, ins: &Instr, t: &mut Transfers) {
        let limb_bytes = ins.n as f64 * self.word;
        for &l in &ins.limbs {
            t.per_chan[self.chan(l)] += limb_bytes;
            t.io_limbs.push(l);
        }
    }

    /// The limbs of host object `h` that `ins` loads: resident ones are hits, the others
    /// move. A cached load makes them resident until their next use; a streamed one keeps
    /// none (its readers read the stream, so a resident copy is needed by nothing later and
    /// goes first).
    fn fetch_host(
        &mut self,
        pos: usize,
        h: u64,
        ins: &Instr,
        keep: &HashSet<Entry>,
        t: &mut Transfers,
    ) {
        let limb_bytes = ins.n as f64 * self.word;
        let cached = t.backing != Backing::Stream;
        for &l in &ins.limbs {
            let e = Entry::Host(h, l);
            let resident = self.res.resident(e);
            match (resident, cached) {
                (true, true) => self.res.touch(e, self.look.next_host(h, l, pos)),
                (true, false) => self.res.touch(e, usize::MAX),
                (false, true) => {
                    let next = self.look.next_host(h, l, pos);
                    let spills = &mut self.spills;
                    self.res
                        .insert(e, limb_bytes, limb_bytes, next, keep, spills);
                }
                (false, false) => {}
            }
            if !resident {
                t.per_chan[self.chan(l)] += limb_bytes;
                t.io_limbs.push(l);
            }
        }
    }

    /// The off-chip phase of `ins` (before its compute phases), and how its result is
    /// backed.
    fn offchip(
        &mut self,
        pos: usize,
        ins: &Instr,
        keep: &mut HashSet<Entry>,
        lowered: &mut Lowered,
    ) -> Backing {
        let Transfers {
            per_chan,
            io_limbs,
            shared_noc,
            backing,
        } = self.transfers(pos, ins, keep);
        let offchip: f64 = per_chan.iter().sum();
        if offchip > 0.0 {
            // A shared load's all-gather, and the NoC path from the I/O dies, pipeline with
            // the memory's reads.
            let limb_bytes = ins.n as f64 * self.word;
            let mut tasks = self.off_tasks(&per_chan);
            tasks.extend(shared_noc);
            let (io, moved) =
                self.net
                    .io_transfer(self.m, &io_limbs, limb_bytes, ins.op != Op::Store);
            tasks.extend(io);
            self.s.noc_bytes += moved;
            self.s.io_noc_bytes += moved;
            lowered.phases.insert(
                0,
                Phase {
                    tasks,
                    latency: self.off_lat,
                },
            );
            self.s.offchip_bytes += offchip;
        }
        backing
    }

    /// Destination occupancy: a new temporary takes scratchpad space (in-place ops reuse
    /// their buffer). Returns whether the instruction writes in place.
    fn occupy(
        &mut self,
        pos: usize,
        ins: &Instr,
        backing: Backing,
        through_rf: bool,
        keep: &mut HashSet<Entry>,
    ) -> bool {
        let in_place = ins.dst.is_some_and(|d| ins.srcs.contains(&d));
        if self.stage_resident(pos, ins, keep) {
            return in_place;
        }
        if let Some(d) = ins.dst {
            if !in_place && backing == Backing::Temp && ins.op != Op::Store && !through_rf {
                keep.insert(Entry::Temp(d));
                // A streamed value holds a ping-pong pair of limbs at a time; a staged BConv
                // input holds every copy its staging made.
                let limbs = if self.streamed {
                    ins.limbs.len().min(2)
                } else {
                    ins.limbs.len()
                };
                let limb_bytes = ins.n as f64 * self.word;
                let next = self.look.next_temp(d, pos);
                self.res.insert(
                    Entry::Temp(d),
                    limbs as f64 * limb_bytes,
                    limb_bytes,
                    next,
                    keep,
                    &mut self.spills,
                );
            }
        }
        in_place
    }

    /// A staged BConv input on chip (`schedule::tiling`): a staging makes it resident (every
    /// copy its staging made), until the last output tile that reads it; an output tile
    /// keeps it resident, or, when it was dropped for room and the tile moved the input
    /// again ([`Schedule::bconv_inputs_re_moved`]), makes the re-moved input resident again
    /// for the tiles after it. Returns whether `ins` was the staging (whose destination
    /// needs nothing more).
    fn stage_resident(&mut self, pos: usize, ins: &Instr, keep: &mut HashSet<Entry>) -> bool {
        let (id, staging) = match (ins.op, ins.dst, ins.srcs.first()) {
            (Op::Concat, Some(d), _) => match self.staged.get(&d) {
                Some(&g) => (d, g),
                None => return false,
            },
            (Op::Bconv, _, Some(&s)) if ins.srcs.len() == 1 => match self.staged.get(&s) {
                Some(&g) => (s, g),
                None => return false,
            },
            _ => return false,
        };
        let e = Entry::Staged(id);
        let next = self.look.next_temp(id, pos);
        if self.res.resident(e) {
            self.res.touch(e, next);
        } else {
            if ins.op == Op::Bconv {
                self.s.bconv_inputs_re_moved += 1;
            }
            if next != usize::MAX {
                let limbs = self
                    .bufs
                    .get(&id)
                    .map_or(ins.limbs.len(), |b| b.limbs.len());
                let bytes = (limbs * staging.copies(&self.net)) as f64 * ins.n as f64 * self.word;
                keep.insert(e);
                self.res
                    .insert(e, bytes, bytes, next, keep, &mut self.spills);
            }
        }
        ins.op == Op::Concat
    }

    /// Spill stores triggered so far occupy the off-chip channel once their data is ready,
    /// in the DMA queue's order, then the way from their home clusters to the I/O dies.
    fn drain_spills(&mut self) {
        let stores: Vec<(u64, f64)> = self.spills.stores.drain(..).collect();
        for (victim, bytes) in stores {
            let (r, vl) = self
                .bufs
                .get(&victim)
                .map(|b| (b.ready, b.limbs.clone()))
                .unwrap_or_else(|| (0.0, Limbs::from(&[0][..])));
            let mut per = vec![0.0f64; self.lay.channels];
            for &l in &vl {
                per[self.chan(l)] += bytes / vl.len().max(1) as f64;
            }
            let mut start = r;
            for (r_, c) in self.off_tasks(&per) {
                let task = [(r_.index(&self.lay), c)];
                let last = self.table.resource(task[0].0).last_end();
                let lower = self.floored(r.max(last));
                let t0 = self.table.place(lower, &task);
                self.table.reserve(t0, &task);
                self.s.busy[task[0].0] += c;
                start = start.max(t0);
            }
            let per_limb = bytes / vl.len().max(1) as f64;
            let (io, moved) = self.net.io_transfer(self.m, &vl, per_limb, false);
            if !io.is_empty() {
                let tasks: Vec<(usize, f64)> =
                    io.iter().map(|&(r_, c)| (r_.index(&self.lay), c)).collect();
                let lower = self.floored(start);
                let t0 = self.table.place(lower, &tasks);
                self.table.reserve(t0, &tasks);
                for &(i, c) in &tasks {
                    self.s.busy[i] += c;
                }
                self.s.noc_bytes += moved;
                self.s.io_noc_bytes += moved;
            }
            self.s.offchip_bytes += bytes;
            *self.s.offchip_by_kind.entry("spill").or_default() += bytes;
        }
    }

    /// Timing: each phase goes into the earliest idle slot of all its resources (the
    /// reservation table backfills gaps: see `reservation`). Limb-wise instructions chain
    /// (vector chaining through the RFs, ark.md Fig. 2a): they may start once their sources'
    /// first limbs exist, and end no earlier than one limb's work after their last source
    /// limb. A BConv needs every input limb (it reads all of them per coefficient), and a
    /// reload needs the data.
    fn place(
        &mut self,
        ins: &Instr,
        lowered: &Lowered,
        src: &Sources,
        reloads: bool,
        in_place: bool,
    ) -> Placed {
        let chain = !matches!(ins.op, Op::Bconv) && src.reload_bytes == 0.0;
        let parts = ins.limbs.len().div_ceil(self.net.blocks).max(1) as f64;
        let mut t = if chain { src.first } else { src.ready };
        // An in-place write (an accumulation) must not overtake an earlier reader of the old
        // value; it may follow it limb by limb, as a chained reader would.
        if let Some(d) = ins.dst.filter(|_| in_place) {
            t = t.max(self.read_start.get(&d).copied().unwrap_or(0.0));
        }
        let mut start_first = t;
        let mut busy = Vec::new();
        let mut first_out = t;
        let deps = t;
        for (i, ph) in lowered.phases.iter().enumerate() {
            let tasks: Vec<(usize, f64)> = ph
                .tasks
                .iter()
                .map(|&(r, c)| (r.index(&self.lay), c))
                .collect();
            // A reload of spilled sources is prefetched: it waits for its place in the DMA
            // queue (behind the spill that wrote the data out), not for the instruction's
            // other sources. Off-chip transfers leave a DMA queue in program order: they
            // fill no earlier gap.
            let lower = if i == 0 && reloads { 0.0 } else { t };
            let queue = ph
                .tasks
                .iter()
                .zip(&tasks)
                .filter(|((r, _), _)| matches!(r, Resource::Offchip(_)))
                .map(|(_, &(idx, _))| self.table.resource(idx).last_end())
                .fold(lower, f64::max);
            // The issue window: no earlier than the instruction W places back (later phases
            // follow the first, so only the first can be raised).
            let queue = self.floored(queue);
            let t0 = self.table.place(queue, &tasks);
            self.table.reserve(t0, &tasks);
            if i == 0 {
                start_first = t0;
            }
            let mut longest = 0.0f64;
            for (&(r, c), &(idx, _)) in ph.tasks.iter().zip(&tasks) {
                self.s.busy[idx] += c;
                longest = longest.max(c);
                if self.opts.keep_slots {
                    busy.push((r, t0, c));
                }
            }
            first_out = t0 + longest / parts + ph.latency;
            t = (t0 + longest + ph.latency).max(deps);
        }
        let tail = lowered
            .phases
            .last()
            .map(|ph| ph.tasks.iter().map(|x| x.1).fold(0.0, f64::max) / parts + ph.latency)
            .unwrap_or(0.0);
        let end = t.max(src.ready + tail);
        let first_out = if lowered.phases.is_empty() {
            src.first
        } else {
            first_out.min(end)
        };
        Placed {
            start: start_first,
            end,
            first_out,
            busy,
        }
    }

    /// The schedule's totals: the makespan and where it grew, NoC and RF bytes, the open
    /// span's extent and the timeline slot.
    fn account(&mut self, ins: &Instr, lowered: &Lowered, p: &Placed) {
        let s = &mut self.s;
        if p.end > s.cycles {
            let name = self
                .open
                .first()
                .map(|o| o.0.clone())
                .unwrap_or_else(|| "(none)".into());
            *s.growth_by_op.entry(name).or_default() += p.end - s.cycles;
        }
        s.cycles = s.cycles.max(p.end);
        s.noc_bytes += lowered.noc_bytes;
        s.rf_bytes += lowered.rf_bytes;
        if let Some(o) = self.open.last_mut() {
            if !lowered.phases.is_empty() {
                o.2 = o.2.min(p.start);
                o.3 = o.3.max(p.end);
            }
        }
        if self.opts.keep_slots {
            s.slots.push(Slot {
                seq: ins.seq,
                op: ins.op.name(),
                start: p.start,
                end: p.end,
                busy: p.busy.clone(),
            });
        }
    }

    /// Bookkeeping of the result: chaining state, readers' start times, where the
    /// destination was produced and how it is backed, and the temporaries whose last use this
    /// was.
    fn retire(
        &mut self,
        pos: usize,
        ins: &Instr,
        kind: &'static str,
        backing: Backing,
        p: &Placed,
    ) {
        if is_compute(self.m.options.seeded_keys, ins.op) {
            self.prev_compute = pos;
            self.prev_reads = ins.srcs.iter().copied().collect();
        }
        for id in &ins.srcs {
            let r = self.read_start.entry(*id).or_insert(p.start);
            *r = r.max(p.start);
        }
        if let Some(d) = ins.dst {
            self.record_result(pos, ins, d, kind, backing, p);
        }
        // Free temporaries whose last use this was.
        for &id in ins.srcs.iter().chain(ins.dst.iter()) {
            if self.look.last_use(id, pos) {
                if let Some(rf) = self.rf.as_mut() {
                    rf.free(id);
                }
                if let Some(b) = self.bufs.remove(&id) {
                    if b.backing == Backing::Temp {
                        self.res.free(id);
                    }
                    self.produced_at.remove(&id);
                    self.produced_op.remove(&id);
                    self.staged.remove(&id);
                    self.read_start.remove(&id);
                    if !self.look.ended() {
                        self.park(id, b);
                    }
                }
            }
        }
    }

    /// Remembers a buffer retired before the end of the stream was in sight: a use beyond
    /// the window may still come ([`Run::revive`]).
    fn park(&mut self, id: u64, b: Buf) {
        if self.parked_order.len() == PARKED {
            if let Some(old) = self.parked_order.pop_front() {
                self.parked.remove(&old);
            }
        }
        self.parked.insert(id, b);
        self.parked_order.push_back(id);
        self.retired.insert(id);
    }

    /// Brings back a buffer retired as dead and read again (its reuse distance exceeded the
    /// window), as the whole-stream engine would most likely have had it, given its far next
    /// use: a temporary as spilled (its store and, at this read, its reload), a streamed
    /// value as off-chip data to reload, a cached object's view as it was (its limbs hit or
    /// miss in the scratchpad). A buffer retired so long ago that it is no longer parked
    /// comes back as a spilled temporary of the reading instruction's limbs, ready since the
    /// start (its own limbs and kind are forgotten).
    fn revive(&mut self, id: u64, ins: &Instr, limb_bytes: f64) {
        let mut b = match self.parked.remove(&id) {
            Some(b) => b,
            None if self.retired.contains(&id) => Buf {
                limbs: ins.limbs.clone(),
                kind: "ciphertext",
                backing: Backing::Temp,
                first: 0.0,
                ready: 0.0,
            },
            None => return,
        };
        let bytes = b.limbs.len() as f64 * limb_bytes;
        match b.backing {
            Backing::Temp => {
                self.res.spilled_out(id, bytes);
                self.spills.stores.push((id, bytes));
            }
            Backing::Stream => {
                self.res.spilled_out(id, bytes);
                b.backing = Backing::Temp;
            }
            Backing::Host(_) => {}
        }
        self.bufs.insert(id, b);
    }

    /// Records the destination `d`; `select_limbs` of a cached object stays that object.
    fn record_result(
        &mut self,
        pos: usize,
        ins: &Instr,
        d: u64,
        kind: &'static str,
        backing: Backing,
        p: &Placed,
    ) {
        let at = match ins.op {
            Op::SelectLimbs | Op::Concat => ins
                .srcs
                .iter()
                .filter_map(|id| self.produced_at.get(id))
                .max()
                .copied(),
            _ => Some(pos),
        };
        if let Some(at) = at {
            self.produced_at.insert(d, at);
        }
        if !matches!(ins.op, Op::SelectLimbs | Op::Concat) {
            self.produced_op.insert(d, ins.op);
        }
        let source = ins.srcs.first().and_then(|id| self.bufs.get(id));
        let (backing, kind) = match (ins.op, source) {
            (Op::SelectLimbs, Some(b)) => (b.backing, b.kind),
            (Op::SelectLimbs, None) => (Backing::Temp, kind),
            _ => (backing, kind),
        };
        self.bufs.insert(
            d,
            Buf {
                limbs: ins.limbs.clone(),
                kind,
                backing,
                first: p.first_out,
                ready: p.end,
            },
        );
    }

    /// The schedule, with its peaks; an error for unbalanced spans or non-finite counts.
    fn finish(self) -> Result<Schedule, SimError> {
        if !self.open.is_empty() {
            return Err(SimError::Trace(format!(
                "{} HE operation(s) begun and never ended",
                self.open.len()
            )));
        }
        let mut s = self.s;
        s.peak_onchip_bytes = self.res.peak();
        s.overflow_bytes = self.res.overflow_bytes;
        if let Some(rf) = &self.rf {
            s.rf_refill_bytes = rf.traffic.refill;
            s.rf_writeback_bytes = rf.traffic.writeback;
            s.rf_peak_bytes = rf.peak();
        }
        // Cycles and bytes are f64 sums: they cannot wrap, but a stream too large for the
        // machine would reach infinity (a report of "time inf") rather than a number.
        for (what, v) in [
            ("cycles", s.cycles),
            ("off-chip bytes", s.offchip_bytes),
            ("NoC bytes", s.noc_bytes),
            ("peak on-chip bytes", s.peak_onchip_bytes),
        ] {
            if !v.is_finite() {
                return Err(SimError::Overflow(format!(
                    "the schedule's {what} came to {v} (the stream is too large for f64 counts)"
                )));
            }
        }
        Ok(s)
    }
}

/// Whether `ins` stages a BConv's input for its output tiles: a `concat` that carries the
/// BConv's mode (only `schedule::tiling` emits one).
pub fn is_stage(ins: &Instr) -> bool {
    ins.op == Op::Concat && ins.mode.is_some()
}

/// A product a multiply-add unit can fuse with the add or subtract that consumes it: of two
/// vectors, or of a vector and a per-limb constant.
fn is_multiply(op: Op) -> bool {
    matches!(op, Op::Mul | Op::MulScalar)
}
