//! The additive model of a program: the sum of its HE operations' warm times.
//!
//! Some papers obtain a long workload's time this way: REED times each macro-instruction
//! (KeySwitch, MULT, ...) from its static micro-instruction schedule, then adds them up along
//! OpenFHE's sequence of operations (reed.md 6.1). The whole-program simulation
//! ([`crate::engine::run`]) also charges what the sum leaves out: ciphertexts that do not fit
//! on chip between operations go off-chip and come back, and operations do not overlap. Both
//! figures side by side show how much of a gap is that method.

use crate::engine::{run_with, RunOptions};
use crate::error::SimError;
use crate::machine::Machine;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use tessera_backend::trace::{Instr, Op};

/// The additive model of a program, in total and by HE operation.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Additive {
    /// Seconds: the sum of every operation's warm time.
    pub total_s: f64,
    /// By operation name (the trace's span names: `HRot`, `HMultRescale`, ...): how many
    /// there are and their seconds together.
    pub by_op: BTreeMap<String, OpSum>,
}

/// One operation's share of [`Additive`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct OpSum {
    /// Operations of this kind.
    pub count: usize,
    /// Their warm times summed, in seconds.
    pub seconds: f64,
}

/// Seconds: the sum over the trace's outermost HE operations (its `begin`/`end` spans) of
/// each one simulated alone and warm ([`RunOptions::warm`]): its input ciphertexts on chip,
/// its keys and plaintexts loaded from off-chip memory, its results left on chip.
/// Instructions outside every span are ignored (the program's own input loads and final
/// stores).
pub fn sum_of_operations(m: &Machine, instrs: &[Instr]) -> Result<f64, SimError> {
    Ok(operations(m, instrs)?.total_s)
}

/// [`sum_of_operations`] with its breakdown by operation.
pub fn operations(m: &Machine, instrs: &[Instr]) -> Result<Additive, SimError> {
    let mut ops = Operations::new(m);
    for i in instrs {
        ops.push(i)?;
    }
    ops.finish()
}

/// The additive model taken one instruction at a time, so that a stream can feed it beside
/// the whole-program engine (`tessera simulate --additive` without holding the trace). An
/// operation is simulated when its outermost span ends, its inputs loaded in the shapes
/// (limbs, ring degree) their buffers have at that point. It holds the instructions of the
/// current outermost operation and the shape of every buffer written so far (about 60 bytes
/// a buffer: the one term that grows with the program).
pub struct Operations<'a> {
    m: &'a Machine,
    opts: RunOptions,
    /// Shape of every buffer written so far, for the loads that stand in for an operation's
    /// inputs.
    shape: HashMap<u64, (tessera_backend::trace::Limbs, usize)>,
    depth: usize,
    group: Vec<Instr>,
    name: String,
    out: Additive,
}

impl<'a> Operations<'a> {
    /// An empty sum on `m`.
    pub fn new(m: &'a Machine) -> Self {
        Self {
            m,
            opts: RunOptions {
                keep_slots: false,
                warm: true,
                ..Default::default()
            },
            shape: HashMap::new(),
            depth: 0,
            group: Vec::new(),
            name: String::new(),
            out: Additive::default(),
        }
    }

    /// Takes the next instruction of the program; an operation whose outermost span it ends
    /// is simulated now.
    pub fn push(&mut self, i: &Instr) -> Result<(), SimError> {
        if let Some(d) = i.dst {
            self.shape.insert(d, (i.limbs.clone(), i.n));
        }
        match i.op {
            Op::Begin => {
                self.depth += 1;
                if self.depth == 1 {
                    self.group.clear();
                    self.name = i.name.clone().unwrap_or_else(|| "(unnamed)".into());
                    return Ok(());
                }
            }
            Op::End => {
                self.depth = self
                    .depth
                    .checked_sub(1)
                    .ok_or_else(|| SimError::Trace(format!("seq {}: end without begin", i.seq)))?;
                if self.depth == 0 {
                    let one = with_inputs(&self.group, &self.shape)?;
                    let t = run_with(self.m, &one, &self.opts)?.cycles / (self.m.clock.ghz * 1e9);
                    self.out.total_s += t;
                    let e = self.out.by_op.entry(self.name.clone()).or_default();
                    e.count += 1;
                    e.seconds += t;
                    return Ok(());
                }
            }
            _ => {}
        }
        if self.depth > 0 {
            self.group.push(i.clone());
        }
        Ok(())
    }

    /// The sum, once the program has ended; an error if an operation is still open.
    pub fn finish(self) -> Result<Additive, SimError> {
        if self.depth != 0 {
            return Err(SimError::Trace(format!(
                "{} HE operation(s) begun and never ended",
                self.depth
            )));
        }
        Ok(self.out)
    }
}

/// `group` preceded by a ciphertext load of every buffer it reads but does not write.
fn with_inputs(
    group: &[Instr],
    shape: &HashMap<u64, (tessera_backend::trace::Limbs, usize)>,
) -> Result<Vec<Instr>, SimError> {
    let mut written: HashSet<u64> = HashSet::new();
    let mut loads = Vec::new();
    for i in group {
        for s in &i.srcs {
            if !written.contains(s) {
                let (limbs, n) = shape.get(s).cloned().ok_or_else(|| {
                    SimError::Trace(format!(
                        "seq {}: source buffer {s} was never written",
                        i.seq
                    ))
                })?;
                written.insert(*s);
                loads.push(Instr {
                    seq: i.seq,
                    op: Op::Load,
                    dst: Some(*s),
                    srcs: Default::default(),
                    limbs,
                    n,
                    kind: Some(tessera_backend::Kind::Ciphertext),
                    galois: None,
                    mode: None,
                    name: None,
                    level: None,
                    host: None,
                });
            }
        }
        if let Some(d) = i.dst {
            written.insert(d);
        }
    }
    loads.extend(group.iter().cloned());
    Ok(loads)
}
