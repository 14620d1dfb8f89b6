//! Two-level on-chip storage (issue 25 item 5): a register-file level of finite capacity in
//! front of the scratchpad, switched on by `memory.register_file.capacity_mb` in a machine
//! file (docs/simulator.md, "Two-level storage (session 32)").
//!
//! Without the level, the engine's operator chaining (ark.md V-C, Fig. 2a; see
//! `engine::Run::issue`) lets a source the previous compute instruction produced or read
//! bypass the scratchpad, and a result only the next compute instruction reads skip it, as
//! if the register files could hold any operand. With the level, the register files are a
//! [`Residency`] of their capacity (the scratchpad's replacement code, not a second copy:
//! Belady's choice weighted by cost, limb-granular eviction): every compute instruction's
//! operands pass through it, and what chaining keeps out of the scratchpad must still be
//! resident when it is read. After each instruction the level is trimmed to its capacity
//! (its operands may exceed it while they stream through, limb by limb); what does not fit
//! moves over the scratchpad ports:
//! - a *write-back*: an evicted result that never reached the scratchpad (a dirty entry);
//! - a *refill*: a chained source no longer (wholly) resident, read back from the scratchpad.
//!
//! Sources that are not chained are read from the scratchpad as in the single-level model
//! (their copy in the register files is clean: dropping it costs nothing now, one read at
//! its next chained use), so these two are the only extra traffic. An unbounded register
//! file never evicts, and the schedule equals the single-level one exactly.
//!
//! What is approximated: the register files of all clusters form one pool (as the
//! scratchpad's residency does), a write-back occupies the scratchpad's ports but not its
//! capacity, and a reloaded partly written-back result counts as dirty again as a whole.

use crate::engine::Schedule;
use crate::machine::Machine;
use crate::mapping::{Layout, Lowered, Phase, Resource};
use crate::residency::{Entry, Residency, Spills};
use serde::Serialize;
use std::collections::HashSet;

/// One operand of a compute instruction, as the register-file level sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Operand {
    /// The buffer's id in the trace.
    pub id: u64,
    /// Its bytes (limbs x limb bytes).
    pub bytes: f64,
    /// Bytes of one limb (the eviction grain).
    pub grain: f64,
    /// Its next use after this instruction (`usize::MAX`: none, so a source read for the
    /// last time leaves the register files with no write-back).
    pub next: usize,
}

/// The traffic between the register files and the scratchpad that capacity caused.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Traffic {
    /// Chained sources read back from the scratchpad.
    pub refill: f64,
    /// Results written back to the scratchpad when evicted.
    pub writeback: f64,
}

impl Traffic {
    /// Both together: what the scratchpad's ports move beyond the single-level model.
    pub fn total(&self) -> f64 {
        self.refill + self.writeback
    }
}

/// The register-file level of a run.
#[derive(Debug)]
pub struct RegisterFiles {
    res: Residency,
    spills: Spills,
    /// Buffers the level has held since they were written (until they die): a chained
    /// source it never held is another buffer's view (`select_limbs`, `concat`) or the
    /// result of an instruction without operand streams, and is taken as resident.
    held: HashSet<u64>,
    /// Totals over the run.
    pub traffic: Traffic,
}

impl RegisterFiles {
    /// The level of `m`, or `None` when its file gives the register files no capacity (the
    /// single-level model).
    pub fn of(m: &Machine) -> Option<Self> {
        m.register_file_bytes().map(|c| Self {
            res: Residency::new(c),
            spills: Spills::default(),
            held: HashSet::new(),
            traffic: Traffic::default(),
        })
    }

    /// The register files' occupancy peak, in bytes.
    pub fn peak(&self) -> f64 {
        self.res.peak()
    }

    /// One compute instruction at `pos`: its sources (each with whether the single-level
    /// model chains it, i.e. reads it from the register files and not the scratchpad) and
    /// its result (with whether the single-level model writes it to the scratchpad too).
    /// Returns the scratchpad traffic this instruction adds: refills of chained sources no
    /// longer resident, and write-backs of dirty results evicted to make room.
    pub fn instruction(
        &mut self,
        pos: usize,
        srcs: &[(Operand, bool)],
        dst: Option<(Operand, bool)>,
    ) -> Traffic {
        self.res.set_now(pos);
        let keep: HashSet<Entry> = srcs
            .iter()
            .map(|(o, _)| o.id)
            .chain(dst.map(|(o, _)| o.id))
            .flat_map(|id| [Entry::Temp(id), Entry::Clean(id)])
            .collect();
        let mut t = Traffic::default();
        for &(o, chained) in srcs {
            let refill = self.source(o, &keep);
            if chained {
                t.refill += refill;
            }
        }
        if let Some((o, written)) = dst {
            self.result(o, written, &keep);
        }
        // Sources read for the last time are dead now: they leave with no write-back.
        for &(o, _) in srcs {
            if o.next == usize::MAX && dst.is_none_or(|(d, _)| d.id != o.id) {
                self.free(o.id);
            }
        }
        // The operands streamed through; what exceeds the capacity now leaves.
        self.res.fit(&HashSet::new(), &mut self.spills);
        t.writeback = self.spills.stores.drain(..).map(|(_, b)| b).sum();
        self.traffic.refill += t.refill;
        self.traffic.writeback += t.writeback;
        t
    }

    /// Makes source `o` resident; returns the bytes that had to come from the scratchpad.
    fn source(&mut self, o: Operand, keep: &HashSet<Entry>) -> f64 {
        let (dirty, clean) = (Entry::Temp(o.id), Entry::Clean(o.id));
        if self.held.insert(o.id) {
            self.res
                .insert(clean, o.bytes, o.grain, o.next, keep, &mut self.spills);
            return 0.0;
        }
        if self.res.spilled_bytes(o.id) > 0.0 {
            // A result partly or wholly written back: the written-back limbs return.
            return self
                .res
                .reload(o.id, o.grain, o.next, keep, &mut self.spills);
        }
        if self.res.resident(dirty) {
            self.res.touch(dirty, o.next);
            return 0.0;
        }
        let have = self.res.resident_bytes(clean);
        if have >= o.bytes {
            self.res.touch(clean, o.next);
            return 0.0;
        }
        self.res.drop_entry(clean);
        self.res
            .insert(clean, o.bytes, o.grain, o.next, keep, &mut self.spills);
        o.bytes - have
    }

    /// Makes result `o` resident: clean if the scratchpad also receives it, dirty if only
    /// the register files hold it.
    fn result(&mut self, o: Operand, written: bool, keep: &HashSet<Entry>) {
        let (dirty, clean) = (Entry::Temp(o.id), Entry::Clean(o.id));
        // An in-place result replaces the old value, wherever it was.
        self.res.drop_entry(clean);
        self.res.free(o.id);
        self.held.insert(o.id);
        let e = if written { clean } else { dirty };
        self.res
            .insert(e, o.bytes, o.grain, o.next, keep, &mut self.spills);
    }

    /// Buffer `id` is dead: its register-file copy goes with no traffic.
    pub fn free(&mut self, id: u64) {
        self.held.remove(&id);
        self.res.free(id);
        self.res.drop_entry(Entry::Clean(id));
    }
}

/// The two-level storage's figures in a report (`register_file` in `simulate --json`,
/// docs/json.md): present only for a machine with a register-file capacity.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StorageReport {
    /// Register-file capacity of the whole machine, in bytes.
    pub capacity_bytes: f64,
    /// The most register-file bytes resident at once (operands streaming through included:
    /// above the capacity when one instruction's operands exceed it).
    pub peak_bytes: f64,
    /// Bytes through the register files: every functional-unit operand and result.
    pub rf_bytes: f64,
    /// Bytes over the scratchpad ports: operand streams not chained, refills and
    /// write-backs.
    pub scratchpad_bytes: f64,
    /// Chained sources read back from the scratchpad because the register files had
    /// evicted them (RF fills the capacity caused).
    pub refill_bytes: f64,
    /// Results only the register files held, written back to the scratchpad when evicted.
    pub writeback_bytes: f64,
    /// Scratchpad-port cycles per cluster the refills and write-backs took: the stall they
    /// can cause at most (the part on the critical path is the time difference to the same
    /// machine without `capacity_mb`, which `tessera sweep` shows).
    pub fill_cycles: f64,
    /// `fill_cycles` in seconds.
    pub fill_time_s: f64,
}

impl StorageReport {
    /// The figures of schedule `s` on `m` (`None` without a register-file capacity).
    pub fn of(m: &Machine, s: &Schedule) -> Option<Self> {
        let capacity_bytes = m.register_file_bytes()?;
        let lay = Layout::of(m);
        let port_bpc = m.total_gbs(&m.memory.scratchpad) / m.clock.ghz / m.chip.clusters as f64;
        let port_cycles: f64 = (0..lay.clusters)
            .map(|c| {
                s.busy
                    .get(Resource::Scratchpad(c).index(&lay))
                    .copied()
                    .unwrap_or(0.0)
            })
            .sum();
        Some(Self {
            capacity_bytes,
            peak_bytes: s.rf_peak_bytes,
            rf_bytes: s.rf_bytes,
            scratchpad_bytes: port_cycles * port_bpc,
            refill_bytes: s.rf_refill_bytes,
            writeback_bytes: s.rf_writeback_bytes,
            fill_cycles: s.rf_fill_cycles,
            fill_time_s: s.rf_fill_cycles / (m.clock.ghz * 1e9),
        })
    }

    /// `self` plus `k` times `other`'s traffic and fill time (the peak is the larger): a
    /// report summed over the parts of a program (`tessera_lab::bfv::scaled_sum`).
    pub fn add_scaled(&mut self, other: &Self, k: f64) {
        self.peak_bytes = self.peak_bytes.max(other.peak_bytes);
        self.rf_bytes += other.rf_bytes * k;
        self.scratchpad_bytes += other.scratchpad_bytes * k;
        self.refill_bytes += other.refill_bytes * k;
        self.writeback_bytes += other.writeback_bytes * k;
        self.fill_cycles += other.fill_cycles * k;
        self.fill_time_s += other.fill_time_s * k;
    }

    /// The same capacity with nothing counted yet.
    pub fn empty(&self) -> Self {
        Self {
            capacity_bytes: self.capacity_bytes,
            peak_bytes: 0.0,
            rf_bytes: 0.0,
            scratchpad_bytes: 0.0,
            refill_bytes: 0.0,
            writeback_bytes: 0.0,
            fill_cycles: 0.0,
            fill_time_s: 0.0,
        }
    }

    /// The byte counts times `k` (throughput mode: `k` tasks, one per cluster).
    pub fn times(&self, k: f64) -> Self {
        Self {
            rf_bytes: self.rf_bytes * k,
            scratchpad_bytes: self.scratchpad_bytes * k,
            refill_bytes: self.refill_bytes * k,
            writeback_bytes: self.writeback_bytes * k,
            ..self.clone()
        }
    }
}

/// Adds `cycles` of scratchpad-port time on each of `clusters` clusters to the last phase of
/// `lowered` (the one that streams the operands; a phase of its own for an instruction
/// without one): refills and write-backs share the ports with the instruction's own operand
/// streams, spread evenly over the clusters as the level's pool is.
pub fn charge(lowered: &mut Lowered, clusters: usize, cycles: f64) {
    if lowered.phases.is_empty() {
        lowered.phases.push(Phase::default());
    }
    let Some(ph) = lowered.phases.last_mut() else {
        return;
    };
    for c in 0..clusters {
        match ph.tasks.iter_mut().find(|t| t.0 == Resource::Scratchpad(c)) {
            Some(t) => t.1 += cycles,
            None => ph.tasks.push((Resource::Scratchpad(c), cycles)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(id: u64, bytes: f64, next: usize) -> Operand {
        Operand {
            id,
            bytes,
            grain: 1.0,
            next,
        }
    }

    fn rf(capacity: f64) -> RegisterFiles {
        RegisterFiles {
            res: Residency::new(capacity),
            spills: Spills::default(),
            held: HashSet::new(),
            traffic: Traffic::default(),
        }
    }

    /// A result only the register files hold, read chained by the next instruction: free
    /// when it fits, written back and refilled limb by limb when it does not.
    #[test]
    fn a_chained_result_costs_nothing_when_it_fits_and_a_writeback_and_refill_otherwise() {
        for (capacity, expect) in [(16.0, 0.0), (3.0, 1.0), (2.0, 2.0), (0.5, 4.0)] {
            let mut r = rf(capacity);
            // a = f(x): x read from the scratchpad, a kept in the RFs only (4 limbs).
            let t0 = r.instruction(
                0,
                &[(op(1, 4.0, usize::MAX), false)],
                Some((op(2, 4.0, 1), false)),
            );
            // b = g(a): a chained.
            let t1 = r.instruction(
                1,
                &[(op(2, 4.0, usize::MAX), true)],
                Some((op(3, 4.0, 9), true)),
            );
            assert_eq!(t0.writeback, expect, "capacity {capacity}: write-back");
            assert_eq!(t1.refill, expect, "capacity {capacity}: refill");
        }
    }

    /// Sources the single-level model reads from the scratchpad anyway add nothing, and a
    /// clean result is dropped without a write-back.
    #[test]
    fn unchained_sources_and_clean_results_add_no_traffic() {
        let mut r = rf(2.0);
        for pos in 0..4u64 {
            let t = r.instruction(
                pos as usize,
                &[(op(10 + pos, 4.0, usize::MAX), false)],
                Some((op(20 + pos, 4.0, usize::MAX), true)),
            );
            assert_eq!(t, Traffic::default());
        }
        assert!(r.peak() >= 8.0, "operands stream through beyond capacity");
    }
}
