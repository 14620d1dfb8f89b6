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
use std::collections::{HashMap, HashSet};
use tessera_backend::trace::{Instr, Op};

/// One scheduled instruction (for timelines).
#[derive(Clone, Debug, PartialEq)]
pub struct Slot {
    pub seq: u64,
    pub op: &'static str,
    pub start: f64,
    pub end: f64,
    /// Resources busy and for how many cycles from `start` of their phase.
    pub busy: Vec<(Resource, f64, f64)>,
}

/// The span of one HE operation (between its begin and end markers).
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub name: String,
    pub level: usize,
    pub depth: usize,
    pub start: f64,
    pub end: f64,
}

/// Everything a run produced, in cycles and bytes.
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    pub cycles: f64,
    /// Busy cycles per resource (dense index, see [`Resource::index`]).
    pub busy: Vec<f64>,
    pub offchip_bytes: f64,
    pub offchip_by_kind: HashMap<&'static str, f64>,
    pub noc_bytes: f64,
    /// The part of `noc_bytes` that off-chip transfers move between the I/O dies and the
    /// clusters (the rest is cluster-to-cluster data).
    pub io_noc_bytes: f64,
    pub rf_bytes: f64,
    pub peak_onchip_bytes: f64,
    pub overflow_bytes: f64,
    pub instructions: u64,
    pub slots: Vec<Slot>,
    pub spans: Vec<Span>,
    /// Makespan growth attributed to the outermost HE operation running when it happened,
    /// in cycles: where the time goes.
    pub growth_by_op: HashMap<String, f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backing {
    Host(u64),
    Temp,
    /// Streamed from off-chip straight to its limb-wise consumers (`limb_streaming`).
    Stream,
}

struct Buf {
    limbs: Vec<usize>,
    kind: &'static str,
    backing: Backing,
    /// When its first limb is available (chained consumers may start then).
    first: f64,
    /// When all of it is available.
    ready: f64,
}

fn kind_of(i: &Instr) -> &'static str {
    match i.kind.as_deref() {
        Some("evalkey") => "evalkey",
        Some("plaintext") => "plaintext",
        Some("constant") => "constant",
        _ => "ciphertext",
    }
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
    /// Keep every instruction's slot (for timelines).
    pub keep_slots: bool,
    /// Time the program as one step inside a longer one, as micro-benchmarks time an
    /// operation: its input ciphertexts (loaded before the first compute instruction) are
    /// already on chip and its results (stored after the last) stay there, so neither moves
    /// off-chip. Keys and plaintexts still come from off-chip memory.
    pub warm: bool,
    /// Keys and plaintexts shared by synchronous tasks on every cluster (throughput mode on
    /// a machine with `options.synchronous_sharing`).
    pub shared: Option<SharedLoads>,
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

/// [`run`] with options.
pub fn run_with(m: &Machine, instrs: &[Instr], opts: &RunOptions) -> Result<Schedule, SimError> {
    let keep_slots = opts.keep_slots;
    let w = m.word_bytes();
    let cap = m.scratchpad_mb() * 1048576.0;
    let off_bpc = m.memory.offchip.bandwidth_gbs / m.clock.ghz;
    let off_lat = m.memory.offchip.latency_ns * m.clock.ghz;
    let noc_bpc = m.memory.noc.bandwidth_gbs / m.clock.ghz;
    let mut res = Residency::new(cap);
    let lay = Layout::of(m);
    let net = Net::of(m);
    // Whether off-chip transfers cross the NoC from I/O dies (only then are reloads listed).
    let via_io = net.links.io_dies > 0;
    let channels = lay.channels;
    // An off-chip channel per cluster (each limb to its home's) or one shared.
    let chan = |limb: usize| if channels > 1 { limb % channels } else { 0 };
    let off_tasks = |per: &[f64]| -> Vec<(Resource, f64)> {
        per.iter()
            .enumerate()
            .filter(|(_, b)| **b > 0.0)
            .map(|(c, b)| (Resource::Offchip(c), b / off_bpc))
            .collect()
    };
    let mut table = Table::new(lay.len());
    // When the latest reader of each buffer started (write-after-read order for in-place ops).
    let mut read_start: HashMap<u64, f64> = HashMap::new();
    let mut s = Schedule {
        busy: vec![0.0; lay.len()],
        ..Default::default()
    };
    // Last use of every buffer, to free temporaries.
    let mut last_use: HashMap<u64, usize> = HashMap::new();
    for (pos, i) in instrs.iter().enumerate() {
        for &id in i.srcs.iter().chain(i.dst.iter()) {
            last_use.insert(id, pos);
        }
    }
    let uses = Uses::new(m, instrs);
    let streamed = if m.options.limb_streaming {
        streamable(instrs)
    } else {
        HashSet::new()
    };
    let compute_pos: Vec<usize> = instrs
        .iter()
        .enumerate()
        .filter(|(_, i)| is_compute(m, i.op))
        .map(|(p, _)| p)
        .collect();
    // Under `warm`, the inputs before the first compute instruction and the results after
    // the last are on chip already / stay there.
    let (first_c, last_c) = (
        compute_pos.first().copied().unwrap_or(usize::MAX),
        compute_pos.last().copied().unwrap_or(0),
    );
    let on_chip_input = |pos: usize, kind: &str| opts.warm && pos < first_c && kind == "ciphertext";
    let on_chip_output = |pos: usize| opts.warm && pos > last_c;
    let next_compute = |pos: usize| -> usize {
        compute_pos
            .get(compute_pos.partition_point(|&p| p <= pos))
            .copied()
            .unwrap_or(usize::MAX)
    };
    let mut produced_at: HashMap<u64, usize> = HashMap::new();
    let mut produced_op: HashMap<u64, Op> = HashMap::new();
    let mut prev_compute = usize::MAX;
    let mut prev_reads: HashSet<u64> = HashSet::new();
    let mut bufs: HashMap<u64, Buf> = HashMap::new();
    let mut open: Vec<(String, usize, f64, f64)> = Vec::new();
    let mut rr = 0usize;
    let mut spills = Spills::default();
    for (pos, ins) in instrs.iter().enumerate() {
        let n = ins.n;
        let limb_bytes = n as f64 * w;
        match ins.op {
            Op::Begin => {
                open.push((
                    ins.name.clone().unwrap_or_default(),
                    ins.level.unwrap_or(0),
                    f64::INFINITY,
                    0.0,
                ));
                continue;
            }
            Op::End => {
                let (name, level, start, end) = open.pop().ok_or_else(|| {
                    SimError::Trace(format!("seq {}: end without begin", ins.seq))
                })?;
                let start = if start.is_finite() { start } else { end };
                if let Some(parent) = open.last_mut() {
                    parent.2 = parent.2.min(start);
                    parent.3 = parent.3.max(end);
                }
                s.spans.push(Span {
                    name,
                    level,
                    depth: open.len(),
                    start,
                    end,
                });
                continue;
            }
            _ => {}
        }
        s.instructions += 1;
        res.set_now(pos);
        // Sources: ready times, and reloads of spilled temporaries or evicted cached limbs.
        let mut keep: HashSet<Entry> = HashSet::new();
        for id in &ins.srcs {
            if bufs.get(id).map(|b| b.backing) == Some(Backing::Temp) {
                keep.insert(Entry::Temp(*id));
            }
        }
        let mut ready = 0.0f64;
        let mut first = 0.0f64;
        let mut pre = Phase::default();
        let mut reload = vec![0.0f64; channels];
        // (limbs, bytes per limb) reloaded, for the I/O-die paths.
        let mut reload_io: Vec<(Vec<usize>, f64)> = Vec::new();
        for id in &ins.srcs {
            let b = bufs.get(id).ok_or_else(|| {
                SimError::Trace(format!(
                    "seq {}: source buffer {id} was never written",
                    ins.seq
                ))
            })?;
            ready = ready.max(b.ready);
            first = first.max(b.first);
            match b.backing {
                Backing::Temp => {
                    let bytes = res.reload(
                        *id,
                        limb_bytes,
                        uses.next_temp(*id, pos),
                        &keep,
                        &mut spills,
                    );
                    if bytes > 0.0 {
                        let per = bytes / b.limbs.len().max(1) as f64;
                        for &l in &b.limbs {
                            reload[chan(l)] += per;
                        }
                        if via_io {
                            reload_io.push((b.limbs.clone(), per));
                        }
                    }
                }
                Backing::Stream => {}
                Backing::Host(h) => {
                    for &l in &b.limbs {
                        let e = Entry::Host(h, l);
                        let next = uses.next_host(h, l, pos);
                        if res.resident(e) {
                            res.touch(e, next);
                        } else {
                            res.insert(e, limb_bytes, limb_bytes, next, &keep, &mut spills);
                            reload[chan(l)] += limb_bytes;
                            if via_io {
                                reload_io.push((vec![l], limb_bytes));
                            }
                        }
                    }
                }
            }
        }
        let reload_bytes: f64 = reload.iter().sum();
        if reload_bytes > 0.0 {
            pre.tasks = off_tasks(&reload);
            for (limbs, per) in &reload_io {
                let (io, moved) = net.io_transfer(m, limbs, *per, true);
                pre.tasks.extend(io);
                s.noc_bytes += moved;
                s.io_noc_bytes += moved;
            }
            pre.latency = off_lat;
            s.offchip_bytes += reload_bytes;
            *s.offchip_by_kind.entry("reload").or_default() += reload_bytes;
        }
        // Lower the instruction.
        let src_limbs = |j: usize| -> usize {
            ins.srcs
                .get(j)
                .and_then(|id| bufs.get(id))
                .map(|b| b.limbs.len())
                .unwrap_or(0)
        };
        let kind = kind_of(ins);
        let mut backing = Backing::Temp;
        let mut lowered = Lowered::default();
        // A result that only streams through the RFs to its one consumer never occupies
        // the scratchpad.
        let mut through_rf = false;
        // The add or subtract of a multiply-add pair (see the RF chaining below) is the adder
        // stage of the MADU pass its multiply already made (ark.md V: multiply-add units
        // compute a * b + c per lane per cycle, b a vector or a per-limb constant): it moves
        // data but takes no MADU pass of its own.
        let mad_tail = matches!(ins.op, Op::Add | Op::Sub)
            && ins.srcs.iter().any(|id| {
                produced_op.get(id).is_some_and(|&o| is_multiply(o))
                    && uses
                        .temp
                        .get(id)
                        .is_some_and(|v| v.len() == 1 && v[0] == pos)
                    && bufs.get(id).map(|b| b.backing) == Some(Backing::Temp)
            });
        let shape = match ins.op {
            Op::Ntt | Op::Intt => Some(Shape::Transform),
            Op::Automorphism => Some(Shape::Permute),
            Op::Bconv => Some(Shape::Bconv { l_in: src_limbs(0) }),
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
                    .any(|id| bufs.get(id).map(|b| b.kind) == Some("evalkey"));
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
            Op::ExpandSeed if m.options.seeded_keys => Some(Shape::Expand),
            _ => None,
        };
        if let Some(shape) = shape {
            // Operator chaining through the register files (ark.md V-C, Fig. 2a): a source
            // the previous compute instruction produced or read is still in the RFs (the two
            // stream the same limbs in lockstep: the two halves of a key-switch inner product
            // read each extended digit once), and a result only the next compute instruction
            // reads need not reach the scratchpad.
            // A multiply (by a vector or a per-limb constant) whose only consumer is an add or
            // subtract runs with it as one multiply-add on the MADU (ark.md V: "multiply-add
            // units"), so the product never reaches the scratchpad.
            let single_use = |id: u64| uses.temp.get(&id).filter(|v| v.len() == 1).map(|v| v[0]);
            let mad_pair = |consumer: usize| matches!(instrs[consumer].op, Op::Add | Op::Sub);
            let chained = |id: &u64| {
                let temp = bufs.get(id).map(|b| b.backing) == Some(Backing::Temp);
                let prev = prev_compute != usize::MAX && produced_at.get(id) == Some(&prev_compute)
                    || prev_reads.contains(id);
                let mad = produced_op.get(id).is_some_and(|&o| is_multiply(o))
                    && single_use(*id) == Some(pos)
                    && mad_pair(pos);
                temp && (prev || mad)
            };
            let reads = ins.srcs.len();
            let spm_reads = ins.srcs.iter().filter(|id| !chained(id)).count();
            let nc = next_compute(pos);
            let write = match ins.dst {
                Some(d) => {
                    let next_only = uses.next_temp(d, pos) == nc && last_use.get(&d) == Some(&nc);
                    let fused = is_multiply(ins.op) && single_use(d).is_some_and(mad_pair);
                    !(next_only || fused)
                }
                None => true,
            };
            let spm_scale = (spm_reads + write as usize) as f64 / (reads + 1) as f64;
            through_rf = !write;
            lowered = lower(m, &net, shape, &ins.limbs, n, rr, spm_scale);
            if matches!(shape, Shape::Bconv { .. }) {
                rr += 1;
            }
        }
        // Off-chip movement: loads (cached per host limb), unseeded key halves, stores.
        let mut per_chan = vec![0.0f64; channels];
        let mut shared_noc = None;
        // Limbs this instruction moves off-chip (each `limb_bytes`), for the I/O-die paths.
        let mut io_limbs: Vec<usize> = Vec::new();
        match ins.op {
            Op::Load | Op::ExpandSeed => {
                let cacheable = kind != "ciphertext";
                let stream = ins.dst.is_some_and(|d| streamed.contains(&d));
                match (ins.host, cacheable) {
                    (Some(h), true) if stream && (ins.op == Op::Load || !m.options.seeded_keys) => {
                        // Streamed to its consumers: limbs still on chip are hits, the
                        // rest come from off-chip and are not kept.
                        backing = Backing::Stream;
                        for &l in &ins.limbs {
                            let e = Entry::Host(h, l);
                            if res.resident(e) {
                                // Its readers do not touch it again (they read the stream):
                                // nothing later needs this copy, so it goes first.
                                res.touch(e, usize::MAX);
                            } else {
                                per_chan[chan(l)] += limb_bytes;
                                io_limbs.push(l);
                            }
                        }
                    }
                    (Some(h), true) => {
                        backing = Backing::Host(h);
                        if ins.op == Op::Load || !m.options.seeded_keys {
                            for &l in &ins.limbs {
                                let e = Entry::Host(h, l);
                                let next = uses.next_host(h, l, pos);
                                if res.resident(e) {
                                    res.touch(e, next);
                                } else {
                                    res.insert(e, limb_bytes, limb_bytes, next, &keep, &mut spills);
                                    per_chan[chan(l)] += limb_bytes;
                                    io_limbs.push(l);
                                }
                            }
                        } else {
                            // Regenerated on chip: a temporary, not a cached object.
                            backing = Backing::Temp;
                        }
                    }
                    _ if on_chip_input(pos, kind) => {}
                    _ => {
                        if ins.op == Op::Load || !m.options.seeded_keys {
                            for &l in &ins.limbs {
                                per_chan[chan(l)] += limb_bytes;
                                io_limbs.push(l);
                            }
                        }
                    }
                }
                if let (Some(sh), true) = (opts.shared, cacheable) {
                    let bytes: f64 = per_chan.iter().sum();
                    per_chan.iter_mut().for_each(|b| *b /= sh.tasks as f64);
                    if bytes > 0.0 && sh.tasks > 1 {
                        let busiest = bytes * sh.busiest_link_per_byte;
                        shared_noc = Some((Resource::Noc(0), busiest / noc_bpc));
                        s.noc_bytes += bytes * sh.link_bytes_per_byte / sh.tasks as f64;
                    }
                }
                *s.offchip_by_kind.entry(kind).or_default() += per_chan.iter().sum::<f64>();
            }
            Op::Store if on_chip_output(pos) => {}
            Op::Store => {
                for &l in &ins.limbs {
                    per_chan[chan(l)] += limb_bytes;
                    io_limbs.push(l);
                }
                *s.offchip_by_kind.entry("store").or_default() += per_chan.iter().sum::<f64>();
            }
            _ => {}
        }
        let offchip: f64 = per_chan.iter().sum();
        if offchip > 0.0 {
            // A shared load's all-gather, and the NoC path from the I/O dies, pipeline with
            // the memory's reads.
            let mut tasks = off_tasks(&per_chan);
            tasks.extend(shared_noc);
            let (io, moved) = net.io_transfer(m, &io_limbs, limb_bytes, ins.op != Op::Store);
            tasks.extend(io);
            s.noc_bytes += moved;
            s.io_noc_bytes += moved;
            lowered.phases.insert(
                0,
                Phase {
                    tasks,
                    latency: off_lat,
                },
            );
            s.offchip_bytes += offchip;
        }
        let reloads = !pre.tasks.is_empty();
        if reloads {
            lowered.phases.insert(0, pre);
        }
        // Destination occupancy (new temporaries; in-place ops reuse their buffer).
        let dst = ins.dst;
        let in_place = dst.is_some_and(|d| ins.srcs.contains(&d));
        if let Some(d) = dst {
            if !in_place && backing == Backing::Temp && ins.op != Op::Store && !through_rf {
                keep.insert(Entry::Temp(d));
                // A streamed value holds a ping-pong pair of limbs at a time.
                let limbs = if streamed.contains(&d) {
                    ins.limbs.len().min(2)
                } else {
                    ins.limbs.len()
                };
                res.insert(
                    Entry::Temp(d),
                    limbs as f64 * limb_bytes,
                    limb_bytes,
                    uses.next_temp(d, pos),
                    &keep,
                    &mut spills,
                );
            }
        }
        // Spill stores triggered above occupy the off-chip channel once their data is ready.
        for (victim, bytes) in spills.stores.drain(..) {
            let (r, vl) = bufs
                .get(&victim)
                .map(|b| (b.ready, b.limbs.clone()))
                .unwrap_or((0.0, vec![0]));
            let mut per = vec![0.0f64; channels];
            for &l in &vl {
                per[chan(l)] += bytes / vl.len().max(1) as f64;
            }
            let mut start = r;
            for (r_, c) in off_tasks(&per) {
                let task = [(r_.index(&lay), c)];
                // In the DMA queue's order, like every off-chip transfer (see below).
                let t0 = table.place(r.max(table.resource(task[0].0).last_end()), &task);
                table.reserve(t0, &task);
                s.busy[task[0].0] += c;
                start = start.max(t0);
            }
            // The data's way from its home clusters to the I/O dies.
            let per_limb = bytes / vl.len().max(1) as f64;
            let (io, moved) = net.io_transfer(m, &vl, per_limb, false);
            if !io.is_empty() {
                let tasks: Vec<(usize, f64)> =
                    io.iter().map(|&(r_, c)| (r_.index(&lay), c)).collect();
                let t0 = table.place(start, &tasks);
                table.reserve(t0, &tasks);
                for &(i, c) in &tasks {
                    s.busy[i] += c;
                }
                s.noc_bytes += moved;
                s.io_noc_bytes += moved;
            }
            s.offchip_bytes += bytes;
            *s.offchip_by_kind.entry("spill").or_default() += bytes;
        }
        // Schedule the phases. Limb-wise instructions chain (vector chaining through the RFs,
        // ark.md Fig. 2a): they may start once their sources' first limbs exist, and end no
        // earlier than one limb's work after their last source limb. A BConv needs every
        // input limb (it reads all of them per coefficient), and a reload needs the data.
        let chain = !matches!(ins.op, Op::Bconv) && reload_bytes == 0.0;
        let parts = ins.limbs.len().div_ceil(net.blocks).max(1) as f64;
        // Each phase goes into the earliest idle slot of all its resources (the reservation
        // table backfills gaps: see `reservation`).
        let mut t = if chain { first } else { ready };
        // An in-place write (an accumulation) must not overtake an earlier reader of the old
        // value; it may follow it limb by limb, as a chained reader would.
        if let Some(d) = dst.filter(|_| in_place) {
            t = t.max(read_start.get(&d).copied().unwrap_or(0.0));
        }
        let mut start_first = t;
        let mut busy_slots = Vec::new();
        let mut first_out = t;
        let deps = t;
        for (i, ph) in lowered.phases.iter().enumerate() {
            let tasks: Vec<(usize, f64)> =
                ph.tasks.iter().map(|&(r, c)| (r.index(&lay), c)).collect();
            // A reload of spilled sources is prefetched: it waits for its place in the DMA
            // queue (behind the spill that wrote the data out), not for the instruction's
            // other sources.
            let lower = if i == 0 && reloads { 0.0 } else { t };
            // Off-chip transfers leave a DMA queue in program order: they fill no earlier gap.
            let queue = ph
                .tasks
                .iter()
                .zip(&tasks)
                .filter(|((r, _), _)| matches!(r, Resource::Offchip(_)))
                .map(|(_, &(idx, _))| table.resource(idx).last_end())
                .fold(lower, f64::max);
            let t0 = table.place(queue, &tasks);
            table.reserve(t0, &tasks);
            if i == 0 {
                start_first = t0;
            }
            let mut longest = 0.0f64;
            for (&(r, c), &(idx, _)) in ph.tasks.iter().zip(&tasks) {
                s.busy[idx] += c;
                longest = longest.max(c);
                if keep_slots {
                    busy_slots.push((r, t0, c));
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
        let end = t.max(ready + tail);
        let first_out = if lowered.phases.is_empty() {
            first
        } else {
            first_out.min(end)
        };
        if end > s.cycles {
            let name = open
                .first()
                .map(|o| o.0.clone())
                .unwrap_or_else(|| "(none)".into());
            *s.growth_by_op.entry(name).or_default() += end - s.cycles;
        }
        s.cycles = s.cycles.max(end);
        s.noc_bytes += lowered.noc_bytes;
        s.rf_bytes += lowered.rf_bytes;
        if let Some(o) = open.last_mut() {
            if !lowered.phases.is_empty() {
                o.2 = o.2.min(start_first);
                o.3 = o.3.max(end);
            }
        }
        if keep_slots {
            s.slots.push(Slot {
                seq: ins.seq,
                op: ins.op.name(),
                start: start_first,
                end,
                busy: busy_slots,
            });
        }
        if is_compute(m, ins.op) {
            prev_compute = pos;
            prev_reads = ins.srcs.iter().copied().collect();
        }
        for id in &ins.srcs {
            let r = read_start.entry(*id).or_insert(start_first);
            *r = r.max(start_first);
        }
        if let Some(d) = dst {
            let at = match ins.op {
                Op::SelectLimbs | Op::Concat => ins
                    .srcs
                    .iter()
                    .filter_map(|id| produced_at.get(id))
                    .max()
                    .copied(),
                _ => Some(pos),
            };
            if let Some(at) = at {
                produced_at.insert(d, at);
            }
            if !matches!(ins.op, Op::SelectLimbs | Op::Concat) {
                produced_op.insert(d, ins.op);
            }
        }
        // Record the destination; select_limbs of a cached object stays that object.
        if let Some(d) = dst {
            let backing = match ins.op {
                Op::SelectLimbs => ins
                    .srcs
                    .first()
                    .and_then(|id| bufs.get(id))
                    .map(|b| b.backing)
                    .unwrap_or(Backing::Temp),
                _ => backing,
            };
            let kind = match ins.op {
                Op::SelectLimbs => ins
                    .srcs
                    .first()
                    .and_then(|id| bufs.get(id))
                    .map(|b| b.kind)
                    .unwrap_or(kind),
                _ => kind,
            };
            bufs.insert(
                d,
                Buf {
                    limbs: ins.limbs.clone(),
                    kind,
                    backing,
                    first: first_out,
                    ready: end,
                },
            );
        }
        // Free temporaries whose last use this was.
        for &id in ins.srcs.iter().chain(dst.iter()) {
            if last_use.get(&id) == Some(&pos) {
                if let Some(b) = bufs.remove(&id) {
                    if b.backing == Backing::Temp {
                        res.free(id);
                    }
                    produced_at.remove(&id);
                    produced_op.remove(&id);
                    read_start.remove(&id);
                }
            }
        }
    }
    if !open.is_empty() {
        return Err(SimError::Trace(format!(
            "{} HE operation(s) begun and never ended",
            open.len()
        )));
    }
    s.peak_onchip_bytes = res.peak();
    s.overflow_bytes = res.overflow_bytes;
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

/// Whether `op` runs on a functional unit (and so takes part in RF chaining).
/// The buffers that can stream limb by limb (`limb_streaming`): written by a new-buffer
/// instruction, read only by limb-wise instructions (directly or through limb selections and
/// concatenations), with no BConv or limb extension (which read every limb of a coefficient)
/// from the write to the last read; for a key or plaintext, only its last load (an object
/// loaded again later stays cached). Whole-polynomial values that cross such a barrier, such
/// as key-switch accumulators and BSGS baby steps, keep their full footprint.
fn streamable(instrs: &[Instr]) -> HashSet<u64> {
    let barrier = |op: Op| matches!(op, Op::Bconv | Op::ExtendLimb);
    let mut prefix = vec![0usize; instrs.len() + 1];
    for (i, ins) in instrs.iter().enumerate() {
        prefix[i + 1] = prefix[i] + usize::from(barrier(ins.op));
    }
    let mut readers: HashMap<u64, Vec<usize>> = HashMap::new();
    for (pos, ins) in instrs.iter().enumerate() {
        for &id in &ins.srcs {
            readers.entry(id).or_default().push(pos);
        }
    }
    let view = |op: Op| matches!(op, Op::SelectLimbs | Op::Concat);
    // The last load of every host object: an object loaded again later stays cached.
    let mut last_load: HashMap<u64, usize> = HashMap::new();
    for (pos, ins) in instrs.iter().enumerate() {
        if let (Op::Load | Op::ExpandSeed, Some(h)) = (ins.op, ins.host) {
            last_load.insert(h, pos);
        }
    }
    let mut out = HashSet::new();
    for (pos, ins) in instrs.iter().enumerate() {
        let Some(d) = ins.dst else { continue };
        if ins.srcs.contains(&d) {
            continue;
        }
        if ins.host.is_some_and(|h| last_load.get(&h) != Some(&pos)) {
            continue;
        }
        // Readers, following views to their own readers.
        let mut stack = vec![d];
        let mut last = pos;
        let mut ok = true;
        let mut any = false;
        while let Some(id) = stack.pop() {
            for &r in readers.get(&id).map(Vec::as_slice).unwrap_or(&[]) {
                if r <= pos {
                    continue;
                }
                any = true;
                last = last.max(r);
                if barrier(instrs[r].op) {
                    ok = false;
                }
                if view(instrs[r].op) {
                    if let Some(v) = instrs[r].dst {
                        if v != id {
                            stack.push(v);
                        }
                    }
                }
            }
            if !ok {
                break;
            }
        }
        if ok && any && prefix[last + 1] == prefix[pos + 1] {
            out.insert(d);
        }
    }
    out
}

/// A product a multiply-add unit can fuse with the add or subtract that consumes it: of two
/// vectors, or of a vector and a per-limb constant.
fn is_multiply(op: Op) -> bool {
    matches!(op, Op::Mul | Op::MulScalar)
}

fn is_compute(m: &Machine, op: Op) -> bool {
    match op {
        Op::Load | Op::Store | Op::SelectLimbs | Op::Concat | Op::Begin | Op::End => false,
        Op::ExpandSeed => m.options.seeded_keys,
        _ => true,
    }
}

/// Where every buffer and every cached host limb is used, for Belady replacement.
struct Uses {
    temp: HashMap<u64, Vec<usize>>,
    host: HashMap<(u64, usize), Vec<usize>>,
}

impl Uses {
    fn new(m: &Machine, instrs: &[Instr]) -> Self {
        let mut u = Uses {
            temp: HashMap::new(),
            host: HashMap::new(),
        };
        let mut host_of: HashMap<u64, (u64, Vec<usize>)> = HashMap::new();
        for (pos, i) in instrs.iter().enumerate() {
            for id in &i.srcs {
                match host_of.get(id) {
                    Some((h, limbs)) => {
                        for &l in limbs {
                            u.host.entry((*h, l)).or_default().push(pos);
                        }
                    }
                    None => u.temp.entry(*id).or_default().push(pos),
                }
            }
            let cached =
                matches!(i.op, Op::Load) || (i.op == Op::ExpandSeed && !m.options.seeded_keys);
            match (i.dst, i.host) {
                (Some(d), Some(h)) if cached && kind_of(i) != "ciphertext" => {
                    for &l in &i.limbs {
                        u.host.entry((h, l)).or_default().push(pos);
                    }
                    host_of.insert(d, (h, i.limbs.clone()));
                }
                (Some(d), _) if i.op == Op::SelectLimbs => {
                    if let Some((h, _)) = i.srcs.first().and_then(|s| host_of.get(s)).cloned() {
                        host_of.insert(d, (h, i.limbs.clone()));
                    }
                }
                _ => {}
            }
        }
        u
    }

    fn after(list: Option<&Vec<usize>>, pos: usize) -> usize {
        list.and_then(|v| v.get(v.partition_point(|&p| p <= pos)).copied())
            .unwrap_or(usize::MAX)
    }

    fn next_temp(&self, id: u64, pos: usize) -> usize {
        Self::after(self.temp.get(&id), pos)
    }

    fn next_host(&self, h: u64, l: usize, pos: usize) -> usize {
        Self::after(self.host.get(&(h, l)), pos)
    }
}
