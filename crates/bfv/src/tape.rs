//! The command stream a BFV computation issues, in the trace format the CoFHEE model
//! consumes (`tessera_backend::trace::Instr`): NTT, iNTT, pointwise multiply / add / subtract,
//! multiply by a constant, and host transfers (`load` / `store`) for the steps CoFHEE's
//! command set (cofhee.md Table I) has no command for, which the host computes.
//!
//! `limbs` holds the basis index of the one tower a command works on: `0..L` the towers of
//! `q`, `L..` the auxiliary primes of the multiplication basis.

use std::sync::atomic::{AtomicU64, Ordering};
use tessera_backend::trace::{Instr, Op};
use tessera_backend::Kind;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh buffer id (process-wide, so ids of different polynomials never collide).
pub(crate) fn fresh_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// An instruction stream being recorded.
#[derive(Debug, Default)]
pub struct Tape {
    instrs: Vec<Instr>,
    n: usize,
}

impl Tape {
    /// An empty tape for ring degree `n`.
    pub fn new(n: usize) -> Self {
        Self {
            instrs: Vec::new(),
            n,
        }
    }

    /// Records `op` on basis index `tower`, writing `dst` from `srcs`.
    pub fn push(&mut self, op: Op, dst: u64, srcs: &[u64], tower: usize, kind: Kind) {
        let seq = self.instrs.len() as u64;
        self.instrs
            .push(Instr::on_tower(seq, self.n, op, dst, srcs, tower, kind));
    }

    /// An operation marker: `Some(name)` opens, `None` closes.
    pub fn marker(&mut self, name: Option<&str>) {
        let seq = self.instrs.len() as u64;
        self.instrs.push(Instr::marker(seq, self.n, name));
    }

    /// The recorded stream.
    pub fn into_instrs(self) -> Vec<Instr> {
        self.instrs
    }
}
