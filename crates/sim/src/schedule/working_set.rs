//! `working-set`: a list scheduler that keeps the live ciphertext bytes low.
//!
//! The engine's scratchpad holds every temporary from its write to its last use and spills
//! what does not fit (two transfers: out and back), while a key or plaintext limb that does
//! not fit is dropped and fetched again (one transfer). So this policy counts the limbs of
//! live temporaries only. At every step, among the instructions whose dependences are met:
//! 1. any that does not add live limbs (in-place work, stores, the last reader of a buffer)
//!    runs first, the one that frees most first;
//! 2. otherwise the one that reads a temporary with at most [`NEAR`] uses left (fewest
//!    first), so a chain that ends a live value is finished before a new one starts;
//! 3. otherwise the earliest in program order.
//!
//! Rule 2 is a heuristic, not a guarantee: on the small HELR trace it raises the peak live
//! limbs (172 against program order's 159), while on H3-HBM's bootstrapping the engine's
//! time falls further with it (23.19 ms) than without it (25.28 ms), docs/simulator.md
//! "Scheduling pass".
//!
//! Loads and seed expansions (no sources) do not run on their own: the first consumer to run
//! pulls them in just before itself, so a key or plaintext arrives when it is needed rather
//! than when the recording happened to ask for it, and a consumer waiting only on loads
//! counts as ready. Ties go to program order, so a window with nothing to gain keeps it.

use super::graph::Graph;
use super::SchedulePolicy;
use std::collections::{BTreeSet, HashMap};
use tessera_backend::trace::{Instr, Op};
use tessera_backend::Kind;

/// The policy's state over one stream: remaining uses of every buffer and the live limbs of
/// each written temporary.
#[derive(Debug, Default)]
pub struct WorkingSet {
    uses: HashMap<u64, u32>,
    size: HashMap<u64, u64>,
}

type Key = (u8, i64, u32);

/// Remaining uses at or below which a temporary counts as nearly dead (rule 2).
const NEAR: u32 = 2;

/// Remaining uses at or below which a buffer's readers are re-ranked as its uses run out
/// (re-ranking only the last few keeps the work linear for buffers read many times).
const RERANK: u32 = 3;

/// Limbs the write of `ins` keeps live: 0 for keys and plaintexts (clean, droppable), and
/// for views of them.
fn write_size(ins: &Instr, size: &HashMap<u64, u64>) -> u64 {
    let host = matches!(ins.op, Op::Load | Op::ExpandSeed)
        && ins.kind.is_some_and(|k| k != Kind::Ciphertext);
    let view_of_host = ins.op == Op::SelectLimbs
        && ins
            .srcs
            .first()
            .is_some_and(|s| size.get(s).copied() == Some(0));
    if host || view_of_host {
        0
    } else {
        ins.limbs.len() as u64
    }
}

/// Each buffer `ins` uses (sources, then the destination) with its number of uses.
fn uses_of(ins: &Instr) -> Vec<(u64, u32)> {
    let mut v: Vec<(u64, u32)> = Vec::with_capacity(ins.srcs.len() + 1);
    for b in ins.srcs.iter().copied().chain(ins.dst) {
        match v.iter_mut().find(|(x, _)| *x == b) {
            Some(e) => e.1 += 1,
            None => v.push((b, 1)),
        }
    }
    v
}

struct Window<'g, 'a> {
    g: &'g Graph<'a>,
    done: Vec<bool>,
    pending: Vec<u32>,
    key: Vec<Option<Key>>,
    ready: BTreeSet<Key>,
    users: HashMap<u64, Vec<u32>>,
    order: Vec<u32>,
}

impl WorkingSet {
    /// Live limbs added by running `k` (with the loads it pulls) less those it frees.
    fn net(&self, w: &Window<'_, '_>, k: u32) -> i64 {
        let Some(ins) = w.g.node(k).instr() else {
            return 0;
        };
        let mut net = 0i64;
        for &p in &w.g.node(k).preds {
            if !w.done[p as usize] && w.g.node(p).is_source() {
                let l = w.g.node(p).instr().expect("sources are instructions");
                net += write_size(l, &self.size) as i64;
            }
        }
        let fresh = ins.dst.filter(|d| !ins.srcs.contains(d));
        if let Some(_d) = fresh {
            net += write_size(ins, &self.size) as i64;
        }
        for (b, n) in uses_of(ins) {
            if self.uses.get(&b).copied().unwrap_or(0) <= n {
                let bytes = if Some(b) == fresh {
                    write_size(ins, &self.size)
                } else {
                    self.size.get(&b).copied().unwrap_or_else(|| {
                        // A source whose producer has not run: a pulled load.
                        w.g.node(k)
                            .preds
                            .iter()
                            .filter_map(|&p| w.g.node(p).instr())
                            .find(|p| p.dst == Some(b))
                            .map_or(0, |p| write_size(p, &self.size))
                    })
                };
                net -= bytes as i64;
            }
        }
        net
    }

    /// Rule 2's rank: the fewest remaining uses of a temporary `k` reads, capped at
    /// [`NEAR`] + 1 (the cap when it reads none).
    fn urgency(&self, w: &Window<'_, '_>, k: u32) -> i64 {
        let cap = NEAR as i64 + 1;
        let Some(ins) = w.g.node(k).instr() else {
            return cap;
        };
        ins.srcs
            .iter()
            .filter(|b| self.size.get(b).is_some_and(|&s| s > 0))
            .map(|b| (self.uses.get(b).copied().unwrap_or(0) as i64).min(cap))
            .min()
            .unwrap_or(cap)
    }

    fn key(&self, w: &Window<'_, '_>, k: u32) -> Key {
        let net = self.net(w, k);
        if net <= 0 {
            (0, net, k)
        } else {
            (1, self.urgency(w, k), k)
        }
    }

    fn rekey(&self, w: &mut Window<'_, '_>, k: u32) {
        if let Some(old) = w.key[k as usize] {
            w.ready.remove(&old);
            let new = self.key(w, k);
            w.key[k as usize] = Some(new);
            w.ready.insert(new);
        }
    }

    fn make_ready(&self, w: &mut Window<'_, '_>, k: u32) {
        let key = self.key(w, k);
        w.key[k as usize] = Some(key);
        w.ready.insert(key);
    }

    /// Runs node `k`: records it, updates the remaining uses and sizes, readies its
    /// successors and re-ranks the nodes whose gain changed.
    fn run(&mut self, w: &mut Window<'_, '_>, k: u32) {
        w.done[k as usize] = true;
        if let Some(old) = w.key[k as usize].take() {
            w.ready.remove(&old);
        }
        w.order.push(k);
        let node = w.g.node(k);
        let mut touched = Vec::new();
        if let Some(ins) = node.instr() {
            if let Some(d) = ins.dst {
                if !ins.srcs.contains(&d) {
                    let s = write_size(ins, &self.size);
                    self.size.insert(d, s);
                }
            }
            for (b, n) in uses_of(ins) {
                let left = self.uses.entry(b).or_insert(0);
                *left = left.saturating_sub(n);
                if *left == 0 {
                    self.uses.remove(&b);
                    self.size.remove(&b);
                } else if *left <= RERANK {
                    touched.extend(w.users.get(&b).into_iter().flatten().copied());
                }
            }
        }
        let source = node.is_source();
        for &s in &node.succs {
            if source {
                touched.push(s);
            } else {
                w.pending[s as usize] -= 1;
                if w.pending[s as usize] == 0 {
                    self.make_ready(w, s);
                }
            }
        }
        for t in touched {
            if !w.done[t as usize] {
                self.rekey(w, t);
            }
        }
    }
}

impl SchedulePolicy for WorkingSet {
    fn name(&self) -> &'static str {
        "working-set"
    }

    fn start(&mut self, instrs: &[Instr]) {
        self.uses.clear();
        self.size.clear();
        for ins in instrs {
            for (b, n) in uses_of(ins) {
                *self.uses.entry(b).or_insert(0) += n;
            }
        }
    }

    fn order(&mut self, g: &Graph<'_>) -> Vec<u32> {
        let n = g.len();
        let mut w = Window {
            g,
            done: vec![false; n],
            pending: vec![0; n],
            key: vec![None; n],
            ready: BTreeSet::new(),
            users: HashMap::new(),
            order: Vec::with_capacity(n),
        };
        for (k, node) in g.nodes().iter().enumerate() {
            w.pending[k] = node
                .preds
                .iter()
                .filter(|&&p| !g.node(p).is_source())
                .count() as u32;
            if let Some(ins) = node.instr() {
                for (b, _) in uses_of(ins) {
                    w.users.entry(b).or_default().push(k as u32);
                }
            }
        }
        for k in 0..n as u32 {
            let node = g.node(k);
            // A load nobody in the window reads runs in program order; the others are pulled.
            let pulled = node.is_source() && !node.succs.is_empty();
            if w.pending[k as usize] == 0 && !pulled {
                self.make_ready(&mut w, k);
            }
        }
        while let Some(&(_, _, k)) = w.ready.first() {
            let pulls: Vec<u32> = g
                .node(k)
                .preds
                .iter()
                .copied()
                .filter(|&p| !w.done[p as usize] && g.node(p).is_source())
                .collect();
            for p in pulls {
                self.run(&mut w, p);
            }
            self.run(&mut w, k);
        }
        debug_assert_eq!(w.order.len(), n, "every node scheduled");
        w.order
    }
}
