//! Instruction streams: the trace format, a recorder, the trace backend (records, computes
//! nothing) and the recording wrapper (records and forwards to a computing backend).
//!
//! ## Format `tessera-trace`, version 2
//! JSON Lines. The first line is a header
//! `{"format":"tessera-trace","version":2,"n":N,"moduli":[q_0,...]}` (the ring's moduli, chain
//! then special, indexed by position). Every further line is one [`Instr`]:
//! `{"seq":k,"op":"ntt","dst":7,"srcs":[7],"limbs":[0,1,2],"n":N,"kind":"ciphertext",...}`.
//! `limbs` is the destination's limb set as ring indices; `srcs` and `dst` are buffer ids (a
//! buffer id is assigned when an instruction creates a buffer and never reused); `kind` says
//! what the destination holds (`ciphertext`, `evalkey`, `plaintext`, `constant`). Op-specific
//! fields: `galois` (automorphism), `mode` (`approximate` / `exact`, BConv). HE-operation
//! boundaries are `begin` (with `name` and `level`) and `end` records. In-place operations
//! (NTT, INTT, MAC) name the same id as source and destination. Version 2 adds `host` on
//! `load` records: the host object loaded (see [`Instr::host`]); version-1 streams, which lack
//! it, still read.
//!
//! In memory an instruction is compact (issue 25 item 1): its limb set is one shared copy per
//! distinct set ([`Limbs`], interned by the [`Recorder`]), its sources sit inline up to three
//! ([`Srcs`]), and `kind` and `mode` are enums ([`Kind`], [`BconvMode`]); the file form above
//! is unchanged, so files of either version still read and files written now are the same
//! bytes as before.
//!
//! A trace file is untrusted input: [`read_trace`] reads at most [`MAX_LINE_BYTES`] a line and
//! [`MAX_TRACE_BYTES`] in all, and checks the header's ring and every record
//! ([`validate_trace`]) before a simulator sees them; [`read_trace_file`] reads regular files
//! only.

mod compact;

pub use compact::{LimbInterner, Limbs, Srcs};

use crate::{Backend, HostPoly, HostShape, Kind};
use serde::{Deserialize, Deserializer, Serialize};
use std::io::Write;
use std::sync::Arc;
use tessera_math::automorphism::galois_check;
use tessera_math::poly::check_operands;
use tessera_math::sampling::Seed;
use tessera_math::{ConversionMode, MathError, Representation, RingContext, RnsPoly};

/// Trace format version written in the header.
pub const TRACE_VERSION: u32 = 2;

/// One primary function (or an HE-operation marker).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Load,
    Store,
    ExpandSeed,
    Ntt,
    Intt,
    Add,
    Sub,
    Neg,
    Mul,
    MulAcc,
    Dot,
    AddScalar,
    MulScalar,
    Automorphism,
    Bconv,
    SelectLimbs,
    Concat,
    ExtendLimb,
    Begin,
    End,
}

impl Op {
    /// The name the trace format uses for this operation (its serde name).
    pub fn name(self) -> &'static str {
        match self {
            Op::Load => "load",
            Op::Store => "store",
            Op::ExpandSeed => "expand_seed",
            Op::Ntt => "ntt",
            Op::Intt => "intt",
            Op::Add => "add",
            Op::Sub => "sub",
            Op::Neg => "neg",
            Op::Mul => "mul",
            Op::MulAcc => "mul_acc",
            Op::Dot => "dot",
            Op::AddScalar => "add_scalar",
            Op::MulScalar => "mul_scalar",
            Op::Automorphism => "automorphism",
            Op::Bconv => "bconv",
            Op::SelectLimbs => "select_limbs",
            Op::Concat => "concat",
            Op::ExtendLimb => "extend_limb",
            Op::Begin => "begin",
            Op::End => "end",
        }
    }
}

/// One instruction record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instr {
    /// Position in the stream.
    pub seq: u64,
    /// The operation.
    pub op: Op,
    /// Destination buffer id.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub dst: Option<u64>,
    /// Source buffer ids (inline up to three).
    #[serde(skip_serializing_if = "no_srcs", default)]
    pub srcs: Srcs,
    /// Destination limb set (ring indices), shared by the instructions that have it.
    #[serde(skip_serializing_if = "no_limbs", default)]
    pub limbs: Limbs,
    /// Ring degree.
    pub n: usize,
    /// What the destination holds.
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "kind_field"
    )]
    pub kind: Option<Kind>,
    /// Galois element of an automorphism.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub galois: Option<u64>,
    /// BConv mode.
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "mode_field"
    )]
    pub mode: Option<BconvMode>,
    /// HE operation name (`begin`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub name: Option<String>,
    /// HE operation input level (`begin`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub level: Option<usize>,
    /// Host object a `load` reads, or the seed an `expand_seed` expands (version 2): loads of
    /// the same key or plaintext, at any level, carry the same id, so a simulator can tell a
    /// repeated load (an on-chip hit) from new data. Ids are numbered in order of first
    /// appearance, whether the recorder named the object by its data ([`Recorder::host_id`])
    /// or by the identity of its shape ([`Recorder::shape_id`]).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub host: Option<u64>,
}

fn no_srcs(s: &Srcs) -> bool {
    s.is_empty()
}

fn no_limbs(l: &Limbs) -> bool {
    l.is_empty()
}

/// A BConv's mode, as the trace names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BconvMode {
    /// Approximate (fast) base conversion (`approximate`).
    Approximate,
    /// Exact, centred base conversion (`exact`).
    Exact,
}

impl From<ConversionMode> for BconvMode {
    fn from(m: ConversionMode) -> Self {
        match m {
            ConversionMode::Approximate => BconvMode::Approximate,
            ConversionMode::ExactCentered => BconvMode::Exact,
        }
    }
}

/// `kind` of a trace record, with an error that names the field and its allowed values.
fn kind_field<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Kind>, D::Error> {
    let Some(k) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    Kind::ALL
        .into_iter()
        .find(|x| x.name() == k)
        .map(Some)
        .ok_or_else(|| {
            let names: Vec<_> = Kind::ALL.iter().map(|x| x.name()).collect();
            serde::de::Error::custom(format!("kind {k:?}; allowed {}", names.join(", ")))
        })
}

/// `mode` of a BConv record, with an error that names the field and its allowed values.
fn mode_field<'de, D: Deserializer<'de>>(d: D) -> Result<Option<BconvMode>, D::Error> {
    match Option::<String>::deserialize(d)?.as_deref() {
        None => Ok(None),
        Some("approximate") => Ok(Some(BconvMode::Approximate)),
        Some("exact") => Ok(Some(BconvMode::Exact)),
        Some(m) => Err(serde::de::Error::custom(format!(
            "bconv: mode {m:?}; allowed approximate, exact"
        ))),
    }
}

impl Instr {
    /// An operation marker at position `seq` of a stream over ring degree `n`: `Some(name)`
    /// opens an HE operation, `None` closes the open one. Recorders that write instructions
    /// by hand (CoFHEE's 128-bit workloads, the BFV tape) share this one form.
    pub fn marker(seq: u64, n: usize, name: Option<&str>) -> Self {
        Self {
            seq,
            op: if name.is_some() { Op::Begin } else { Op::End },
            dst: None,
            srcs: Srcs::default(),
            limbs: Limbs::default(),
            n,
            kind: None,
            galois: None,
            mode: None,
            name: name.map(str::to_string),
            level: Some(0),
            host: None,
        }
    }

    /// Primary `op` at position `seq` on the one residue `tower`, writing buffer `dst` (which
    /// holds a `kind`) from `srcs`.
    pub fn on_tower(
        seq: u64,
        n: usize,
        op: Op,
        dst: u64,
        srcs: &[u64],
        tower: usize,
        kind: Kind,
    ) -> Self {
        Self {
            seq,
            op,
            dst: Some(dst),
            srcs: srcs.into(),
            limbs: Limbs::from(&[tower][..]),
            n,
            kind: Some(kind),
            galois: None,
            mode: None,
            name: None,
            level: None,
            host: None,
        }
    }
}

/// Where a recorder hands each instruction as it records it (issue 25 item 1): a simulator
/// consuming the stream while the program runs, so that no whole-program `Vec` is held.
pub trait InstrSink: Send {
    /// Takes the next instruction of the stream.
    fn take(&mut self, i: Instr);
}

/// A bounded channel to a simulating thread: recording blocks while the simulator is a
/// channel's length behind.
impl InstrSink for std::sync::mpsc::SyncSender<Instr> {
    fn take(&mut self, i: Instr) {
        // A receiver that has gone ended with its own error, which its owner reports; the
        // recording runs to its end regardless.
        let _ = self.send(i);
    }
}

thread_local! {
    /// The feed [`feeding`] installs for the next in-memory recorder made on this thread,
    /// and whether that recorder also keeps its instructions.
    static FEED: std::cell::RefCell<Option<(Box<dyn InstrSink>, bool)>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `f` with `feed` installed on this thread: the first in-memory recorder `f` makes on
/// this thread (the trace backend of a program's recording, which the programs make
/// themselves) hands every instruction to `feed` and keeps none (with `keep`, it keeps them
/// too, for `--save-trace`). The feed is dropped when that recorder is, or when `f` returns
/// if it made none, so a channel behind it closes.
pub fn feeding<T>(feed: Box<dyn InstrSink>, keep: bool, f: impl FnOnce() -> T) -> T {
    FEED.with(|c| *c.borrow_mut() = Some((feed, keep)));
    let out = f();
    FEED.with(|c| c.borrow_mut().take());
    out
}

/// Collects instructions in memory and optionally streams them as JSON Lines.
pub struct Recorder {
    n: usize,
    next_id: u64,
    seq: u64,
    instrs: Vec<Instr>,
    sink: Option<Box<dyn Write + Send>>,
    keep: bool,
    /// Host-object ids by fingerprint, in order of first appearance.
    hosts: std::collections::HashMap<u64, u64>,
    /// The host id the next recorded instruction (a `load`) carries.
    next_host: Option<u64>,
    /// One shared copy of every limb set recorded.
    limb_sets: LimbInterner,
    /// Where each instruction goes as it is recorded ([`feeding`]).
    feed: Option<Box<dyn InstrSink>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("instructions", &self.instrs.len())
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// Keeps the stream in memory, or hands it to the feed [`feeding`] installed on this
    /// thread (the first recorder made takes it).
    pub fn in_memory(ring: &RingContext) -> Self {
        let (feed, keep) = match FEED.with(|c| c.borrow_mut().take()) {
            Some((f, keep)) => (Some(f), keep),
            None => (None, true),
        };
        Self {
            n: ring.n(),
            next_id: 0,
            seq: 0,
            instrs: Vec::new(),
            sink: None,
            keep,
            hosts: Default::default(),
            next_host: None,
            limb_sets: LimbInterner::default(),
            feed,
        }
    }

    /// Streams to `sink` (header first), keeping nothing in memory.
    pub fn streaming(ring: &RingContext, mut sink: Box<dyn Write + Send>) -> std::io::Result<Self> {
        let header = serde_json::json!({
            "format": "tessera-trace",
            "version": TRACE_VERSION,
            "n": ring.n(),
            "moduli": ring.moduli().iter().map(|m| m.value()).collect::<Vec<_>>(),
        });
        writeln!(sink, "{header}")?;
        Ok(Self {
            n: ring.n(),
            next_id: 0,
            seq: 0,
            instrs: Vec::new(),
            sink: Some(sink),
            keep: false,
            hosts: Default::default(),
            next_host: None,
            limb_sets: LimbInterner::default(),
            feed: None,
        })
    }

    /// The recorded instructions (in-memory recorders).
    pub fn instructions(&self) -> &[Instr] {
        &self.instrs
    }

    /// A fresh buffer id.
    pub fn fresh(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn push(&mut self, mut i: Instr) {
        i.host = i.host.or(self.next_host.take());
        i.seq = self.seq;
        self.seq += 1;
        i.n = self.n;
        if let Some(s) = self.sink.as_mut() {
            // A failing sink must not abort the computation; the error surfaces on `flush`.
            let _ = writeln!(
                s,
                "{}",
                serde_json::to_string(&i).expect("instructions serialise")
            );
        }
        match (self.feed.as_mut(), self.keep) {
            (Some(f), true) => {
                f.take(i.clone());
                self.instrs.push(i);
            }
            (Some(f), false) => f.take(i),
            (None, true) => self.instrs.push(i),
            (None, false) => {}
        }
    }

    /// Records a primary function writing buffer `dst` (limb set `limbs`, holding `kind`)
    /// from `srcs`.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        op: Op,
        dst: u64,
        limbs: &[usize],
        kind: Kind,
        srcs: &[u64],
        galois: Option<u64>,
        mode: Option<ConversionMode>,
    ) {
        let limbs = self.limb_sets.intern(limbs);
        self.push(Instr {
            seq: 0,
            op,
            dst: Some(dst),
            srcs: srcs.into(),
            limbs,
            n: 0,
            kind: Some(kind),
            galois,
            mode: mode.map(BconvMode::from),
            name: None,
            level: None,
            host: None,
        });
    }

    /// The id of the host object `p`: identified by a fingerprint of its lowest-index limb
    /// (16 words spread over it, plus the ring index), which a key or plaintext keeps at every
    /// level, so loads of the same object at different levels share an id.
    pub fn host_id(&mut self, p: &RnsPoly) -> u64 {
        let n = p.n();
        let (pos, &idx) = p
            .limb_indices()
            .iter()
            .enumerate()
            .min_by_key(|(_, i)| **i)
            .expect("polynomials have at least one limb");
        let limb = p.limb(pos);
        let mut h = blake3::Hasher::new();
        h.update(&(idx as u64).to_le_bytes());
        for k in 0..16 {
            h.update(&limb[k * n / 16].to_le_bytes());
        }
        let fp = u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("8 bytes"));
        let next = self.hosts.len() as u64;
        *self.hosts.entry(fp).or_insert(next)
    }

    /// The id of the shape-only object `s` ([`HostShape`]): by its identity, the way
    /// [`Recorder::host_id`] names an object with data by its fingerprint. Both number ids in
    /// one sequence of first appearance, so a recording of shapes whose identities are equal
    /// exactly when the objects' data would be gives the ids a recording of data gives.
    pub fn shape_id(&mut self, s: &HostShape) -> u64 {
        let mut h = blake3::Hasher::new_derive_key("tessera 2026 host shape id");
        h.update(&s.id.to_le_bytes());
        let fp = u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("8 bytes"));
        let next = self.hosts.len() as u64;
        *self.hosts.entry(fp).or_insert(next)
    }

    /// The id of the object a seed expands to (the `a` half of a seeded key): the same at
    /// every level, distinct from every loaded object's id.
    pub fn seed_id(&mut self, seed: &Seed) -> u64 {
        let h = blake3::hash(&seed.0);
        let fp = u64::from_le_bytes(h.as_bytes()[..8].try_into().expect("8 bytes")) ^ 0x5eed;
        let next = self.hosts.len() as u64;
        *self.hosts.entry(fp).or_insert(next)
    }

    /// Records an HE-operation marker.
    pub fn marker(&mut self, begin: Option<(&'static str, usize)>) {
        self.push(Instr {
            seq: 0,
            op: if begin.is_some() { Op::Begin } else { Op::End },
            dst: None,
            srcs: Srcs::default(),
            limbs: Limbs::default(),
            n: 0,
            kind: None,
            galois: None,
            mode: None,
            name: begin.map(|(n, _)| n.to_string()),
            level: begin.map(|(_, l)| l),
            host: None,
        });
    }

    /// Flushes a streaming sink.
    pub fn flush(&mut self) -> std::io::Result<()> {
        match self.sink.as_mut() {
            Some(s) => s.flush(),
            None => Ok(()),
        }
    }
}

/// A polynomial of a recording backend: its buffer id, what it holds, and the inner backend's
/// polynomial.
#[derive(Clone, Debug)]
pub struct Recorded<P> {
    /// Buffer id in the trace.
    pub id: u64,
    /// What the buffer holds.
    pub kind: Kind,
    /// The wrapped backend's polynomial.
    pub inner: P,
}

/// Records every primary function into a [`Recorder`] and forwards it to `B`. With
/// `B = CpuBackend` it computes and records; with `B = MetaBackend` it is the trace backend.
#[derive(Debug)]
pub struct Recording<B: Backend> {
    inner: B,
    recorder: Recorder,
}

impl<B: Backend> Recording<B> {
    /// Wraps `inner`, recording in memory.
    pub fn new(inner: B) -> Self {
        let recorder = Recorder::in_memory(inner.ring());
        Self { inner, recorder }
    }

    /// Wraps `inner`, streaming the trace to `sink`.
    pub fn streaming(inner: B, sink: Box<dyn Write + Send>) -> std::io::Result<Self> {
        let recorder = Recorder::streaming(inner.ring(), sink)?;
        Ok(Self { inner, recorder })
    }

    /// The recorder (instructions, flush).
    pub fn recorder(&mut self) -> &mut Recorder {
        &mut self.recorder
    }

    /// The recorded instructions.
    pub fn instructions(&self) -> &[Instr] {
        self.recorder.instructions()
    }

    /// Records the off-chip store of `p` without reading its data back: how a workload built
    /// on the trace backend (which holds no data) writes its result out.
    pub fn record_store(&mut self, p: &Recorded<B::Poly>) {
        self.emit_in_place(Op::Store, p, &[p.id]);
    }

    /// The wrapped backend.
    pub fn inner(&self) -> &B {
        &self.inner
    }

    fn emit(
        &mut self,
        op: Op,
        inner: B::Poly,
        kind: Kind,
        srcs: &[u64],
        galois: Option<u64>,
        mode: Option<ConversionMode>,
    ) -> Recorded<B::Poly> {
        let id = self.recorder.fresh();
        let limbs = self.inner.limbs(&inner);
        self.recorder
            .record(op, id, &limbs, kind, srcs, galois, mode);
        Recorded { id, kind, inner }
    }

    fn emit_in_place(&mut self, op: Op, p: &Recorded<B::Poly>, srcs: &[u64]) {
        let limbs = self.inner.limbs(&p.inner);
        self.recorder
            .record(op, p.id, &limbs, p.kind, srcs, None, None);
    }
}

type R<P> = Result<Recorded<P>, MathError>;

impl<B: Backend> Backend for Recording<B> {
    type Poly = Recorded<B::Poly>;

    fn ring(&self) -> &Arc<RingContext> {
        self.inner.ring()
    }
    fn limbs(&self, p: &Self::Poly) -> Vec<usize> {
        self.inner.limbs(&p.inner)
    }
    fn repr(&self, p: &Self::Poly) -> Representation {
        self.inner.repr(&p.inner)
    }
    fn load(&mut self, host: &RnsPoly, kind: Kind) -> R<B::Poly> {
        let p = self.inner.load(host, kind)?;
        let tag = self.recorder.host_id(host);
        self.recorder.next_host = Some(tag);
        Ok(self.emit(Op::Load, p, kind, &[], None, None))
    }
    fn load_host(&mut self, host: &HostPoly, kind: Kind) -> R<B::Poly> {
        match host {
            HostPoly::Data(_) | HostPoly::Limbs { .. } => self.load(&*host.data()?, kind),
            HostPoly::Shape(s) => {
                let p = self.inner.load_host(host, kind)?;
                let tag = self.recorder.shape_id(s);
                self.recorder.next_host = Some(tag);
                Ok(self.emit(Op::Load, p, kind, &[], None, None))
            }
        }
    }
    fn store(&mut self, p: &Self::Poly) -> Result<RnsPoly, MathError> {
        let host = self.inner.store(&p.inner)?;
        self.emit_in_place(Op::Store, p, &[p.id]);
        Ok(host)
    }
    fn expand_seed(&mut self, seed: &Seed, limbs: &[usize], kind: Kind) -> R<B::Poly> {
        let p = self.inner.expand_seed(seed, limbs, kind)?;
        let tag = self.recorder.seed_id(seed);
        self.recorder.next_host = Some(tag);
        Ok(self.emit(Op::ExpandSeed, p, kind, &[], None, None))
    }
    fn ntt(&mut self, p: &mut Self::Poly) -> Result<(), MathError> {
        self.inner.ntt(&mut p.inner)?;
        self.emit_in_place(Op::Ntt, p, &[p.id]);
        Ok(())
    }
    fn intt(&mut self, p: &mut Self::Poly) -> Result<(), MathError> {
        self.inner.intt(&mut p.inner)?;
        self.emit_in_place(Op::Intt, p, &[p.id]);
        Ok(())
    }
    fn add(&mut self, a: &Self::Poly, b: &Self::Poly) -> R<B::Poly> {
        let r = self.inner.add(&a.inner, &b.inner)?;
        Ok(self.emit(Op::Add, r, Kind::Ciphertext, &[a.id, b.id], None, None))
    }
    fn sub(&mut self, a: &Self::Poly, b: &Self::Poly) -> R<B::Poly> {
        let r = self.inner.sub(&a.inner, &b.inner)?;
        Ok(self.emit(Op::Sub, r, Kind::Ciphertext, &[a.id, b.id], None, None))
    }
    fn neg(&mut self, a: &Self::Poly) -> R<B::Poly> {
        let r = self.inner.neg(&a.inner)?;
        Ok(self.emit(Op::Neg, r, Kind::Ciphertext, &[a.id], None, None))
    }
    fn mul(&mut self, a: &Self::Poly, b: &Self::Poly) -> R<B::Poly> {
        let r = self.inner.mul(&a.inner, &b.inner)?;
        Ok(self.emit(Op::Mul, r, Kind::Ciphertext, &[a.id, b.id], None, None))
    }
    fn mul_acc(
        &mut self,
        acc: &mut Self::Poly,
        a: &Self::Poly,
        b: &Self::Poly,
    ) -> Result<(), MathError> {
        self.inner.mul_acc(&mut acc.inner, &a.inner, &b.inner)?;
        self.emit_in_place(Op::MulAcc, acc, &[acc.id, a.id, b.id]);
        Ok(())
    }
    fn dot(&mut self, a: &[&Self::Poly], b: &[&Self::Poly]) -> R<B::Poly> {
        let ia: Vec<&B::Poly> = a.iter().map(|p| &p.inner).collect();
        let ib: Vec<&B::Poly> = b.iter().map(|p| &p.inner).collect();
        let r = self.inner.dot(&ia, &ib)?;
        let ids: Vec<u64> = a.iter().zip(b).flat_map(|(x, y)| [x.id, y.id]).collect();
        Ok(self.emit(Op::Dot, r, Kind::Ciphertext, &ids, None, None))
    }
    fn add_scalar(&mut self, a: &Self::Poly, c: &[u64]) -> R<B::Poly> {
        let r = self.inner.add_scalar(&a.inner, c)?;
        Ok(self.emit(Op::AddScalar, r, Kind::Ciphertext, &[a.id], None, None))
    }
    fn mul_scalar(&mut self, a: &Self::Poly, c: &[u64]) -> R<B::Poly> {
        let r = self.inner.mul_scalar(&a.inner, c)?;
        Ok(self.emit(Op::MulScalar, r, Kind::Ciphertext, &[a.id], None, None))
    }
    fn automorphism(&mut self, a: &Self::Poly, g: u64) -> R<B::Poly> {
        let r = self.inner.automorphism(&a.inner, g)?;
        Ok(self.emit(
            Op::Automorphism,
            r,
            Kind::Ciphertext,
            &[a.id],
            Some(g),
            None,
        ))
    }
    fn bconv(&mut self, a: &Self::Poly, to: &[usize], mode: ConversionMode) -> R<B::Poly> {
        let r = self.inner.bconv(&a.inner, to, mode)?;
        Ok(self.emit(Op::Bconv, r, Kind::Ciphertext, &[a.id], None, Some(mode)))
    }
    fn select_limbs(&mut self, a: &Self::Poly, keep: &[usize]) -> R<B::Poly> {
        let r = self.inner.select_limbs(&a.inner, keep)?;
        Ok(self.emit(Op::SelectLimbs, r, a.kind, &[a.id], None, None))
    }
    fn concat(&mut self, parts: &[&Self::Poly], limbs: &[usize]) -> R<B::Poly> {
        let inner: Vec<&B::Poly> = parts.iter().map(|p| &p.inner).collect();
        let r = self.inner.concat(&inner, limbs)?;
        let ids: Vec<u64> = parts.iter().map(|p| p.id).collect();
        Ok(self.emit(Op::Concat, r, Kind::Ciphertext, &ids, None, None))
    }
    fn extend_limb(&mut self, a: &Self::Poly, to: &[usize]) -> R<B::Poly> {
        let r = self.inner.extend_limb(&a.inner, to)?;
        Ok(self.emit(Op::ExtendLimb, r, Kind::Ciphertext, &[a.id], None, None))
    }
    fn begin_op(&mut self, name: &'static str, level: usize) {
        self.inner.begin_op(name, level);
        self.recorder.marker(Some((name, level)));
    }
    fn end_op(&mut self) {
        self.inner.end_op();
        self.recorder.marker(None);
    }
    fn synchronize(&mut self) -> Result<(), MathError> {
        self.inner.synchronize()
    }
    fn device_report(&self) -> Option<crate::DeviceReport> {
        self.inner.device_report()
    }
}

/// The header of a streamed trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceHeader {
    /// Always `tessera-trace`.
    pub format: String,
    /// Format version (1 or 2).
    pub version: u32,
    /// Ring degree.
    pub n: usize,
    /// The ring's moduli (chain then special).
    pub moduli: Vec<u64>,
}

impl TraceHeader {
    /// The header of a trace of this format version over a ring of degree `n` and `moduli`
    /// (chain, then special primes).
    pub fn new(n: usize, moduli: Vec<u64>) -> Self {
        Self {
            format: "tessera-trace".into(),
            version: TRACE_VERSION,
            n,
            moduli,
        }
    }
}

/// Writes a trace in the form [`read_trace`] reads: the header line, then one instruction per
/// line (what `tessera simulate --save-trace` saves).
pub fn write_trace(
    mut w: impl std::io::Write,
    header: &TraceHeader,
    instrs: &[Instr],
) -> std::io::Result<()> {
    let line = |v: serde_json::Result<String>| v.map_err(std::io::Error::other);
    writeln!(w, "{}", line(serde_json::to_string(header))?)?;
    for i in instrs {
        writeln!(w, "{}", line(serde_json::to_string(i))?)?;
    }
    w.flush()
}

/// Largest trace file [`read_trace_file`] reads, in bytes (about 7 million instructions;
/// every instruction is held in memory while the simulator runs).
pub const MAX_TRACE_BYTES: u64 = 1 << 30;
/// Longest line of a trace, in bytes (an instruction names at most a few hundred limbs and
/// sources).
pub const MAX_LINE_BYTES: usize = 1 << 20;
/// Most moduli a trace's ring may have.
pub const MAX_TRACE_MODULI: usize = 4096;

/// Reads a JSON Lines trace (header, then one instruction per line) and checks it with
/// [`validate_trace`]. At most [`MAX_LINE_BYTES`] per line and [`MAX_TRACE_BYTES`] in all
/// are read. Errors name the line.
pub fn read_trace(r: impl std::io::BufRead) -> Result<(TraceHeader, Vec<Instr>), String> {
    let mut reader = TraceReader::new(r)?;
    let instrs = reader.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok((reader.header, instrs))
}

/// A trace read one instruction at a time, each checked as [`validate_trace`] checks it
/// (errors name the line), so that a simulator can consume a trace of any length without
/// holding it: what it keeps is the buffer ids written so far as ranges ([`IdSet`], for the
/// check that sources were written) and one copy of each limb set.
pub struct TraceReader<R> {
    r: R,
    header: TraceHeader,
    /// The line last read.
    line: usize,
    /// The line of the last instruction.
    last: usize,
    total: u64,
    buf: Vec<u8>,
    written: IdSet,
    depth: usize,
    limb_sets: LimbInterner,
    done: bool,
}

/// Buffer ids as disjoint inclusive ranges: a recorder numbers ids consecutively, so the ids
/// a trace of any length has written take a few ranges, not a set entry each.
#[derive(Debug, Default)]
pub struct IdSet(std::collections::BTreeMap<u64, u64>);

impl IdSet {
    /// Whether `id` is in the set.
    pub fn contains(&self, id: &u64) -> bool {
        self.0
            .range(..=*id)
            .next_back()
            .is_some_and(|(_, &last)| *id <= last)
    }

    /// Adds `id`, joining the ranges it touches.
    pub fn insert(&mut self, id: u64) {
        if self.contains(&id) {
            return;
        }
        let mut start = id;
        if let Some((&s, &l)) = self.0.range(..id).next_back() {
            if l.checked_add(1) == Some(id) {
                start = s;
            }
        }
        let mut last = id;
        if let Some(next) = id.checked_add(1) {
            if let Some(l) = self.0.remove(&next) {
                last = l;
            }
        }
        self.0.insert(start, last);
    }
}

impl<R: std::io::BufRead> TraceReader<R> {
    /// Reads and checks the header line.
    pub fn new(r: R) -> Result<Self, String> {
        let mut t = Self {
            r,
            header: TraceHeader::new(0, Vec::new()),
            line: 0,
            last: 1,
            total: 0,
            buf: Vec::new(),
            written: Default::default(),
            depth: 0,
            limb_sets: LimbInterner::default(),
            done: false,
        };
        let first = t
            .next_line()?
            .ok_or("empty trace: expected a tessera-trace header line")?;
        let header: TraceHeader =
            serde_json::from_str(&first).map_err(|e| format!("line 1 (header): {e}"))?;
        if header.format != "tessera-trace" || !(1..=TRACE_VERSION).contains(&header.version) {
            return Err(format!(
                "line 1: format '{}' version {}; expected tessera-trace version 1 to {TRACE_VERSION}",
                header.format, header.version
            ));
        }
        validate_header(&header).map_err(|e| format!("line 1 (header): {e}"))?;
        t.header = header;
        Ok(t)
    }

    /// The trace's header.
    pub fn header(&self) -> &TraceHeader {
        &self.header
    }

    /// The next line (without its end), or None at the end of the input.
    fn next_line(&mut self) -> Result<Option<String>, String> {
        use std::io::{BufRead, Read};
        self.line += 1;
        let k = self.line;
        self.buf.clear();
        let got = (&mut self.r as &mut dyn BufRead)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| format!("line {k}: {e}"))?;
        if got == 0 {
            return Ok(None);
        }
        self.total += got as u64;
        if self.total > MAX_TRACE_BYTES {
            return Err(format!(
                "line {k}: the trace is longer than {MAX_TRACE_BYTES} bytes"
            ));
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        } else if got > MAX_LINE_BYTES {
            return Err(format!("line {k}: longer than {MAX_LINE_BYTES} bytes"));
        }
        String::from_utf8(std::mem::take(&mut self.buf))
            .map(Some)
            .map_err(|_| format!("line {k}: not UTF-8"))
    }

    /// The next instruction, parsed and checked; `None` at the end (after the check that
    /// every HE operation ended).
    fn next_instr(&mut self) -> Result<Option<Instr>, String> {
        loop {
            let Some(line) = self.next_line()? else {
                if self.depth > 0 {
                    return Err(format!(
                        "line {}: {} HE operation(s) begun and never ended",
                        self.last, self.depth
                    ));
                }
                return Ok(None);
            };
            if line.trim().is_empty() {
                continue;
            }
            let k = self.line;
            let mut i: Instr = serde_json::from_str(&line).map_err(|e| format!("line {k}: {e}"))?;
            i.limbs = self.limb_sets.intern(&i.limbs);
            check_instr(&self.header, &i, &self.written, &mut self.depth)
                .map_err(|e| format!("line {k}: {e}"))?;
            if let Some(d) = i.dst {
                self.written.insert(d);
            }
            self.last = k;
            return Ok(Some(i));
        }
    }
}

impl<R: std::io::BufRead> Iterator for TraceReader<R> {
    type Item = Result<Instr, String>;

    /// The next instruction; after an error, `None`.
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let got = self.next_instr().transpose();
        if !matches!(got, Some(Ok(_))) {
            self.done = true;
        }
        got
    }
}

/// Opens the trace file at `path` for [`TraceReader`]: it must be a regular file (a FIFO
/// would block, a device such as `/dev/zero` never end) of at most [`MAX_TRACE_BYTES`].
pub fn open_trace_file(
    path: &std::path::Path,
) -> Result<TraceReader<std::io::BufReader<std::fs::File>>, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("a trace must be a regular file (not a directory, FIFO or device)".to_string());
    }
    if meta.len() > MAX_TRACE_BYTES {
        return Err(format!(
            "a trace of {} bytes; allowed at most {MAX_TRACE_BYTES} bytes",
            meta.len()
        ));
    }
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    TraceReader::new(std::io::BufReader::new(f))
}

/// [`read_trace`] of the file at `path`, which must be a regular file (a FIFO would block, a
/// device such as `/dev/zero` never end) of at most [`MAX_TRACE_BYTES`].
pub fn read_trace_file(path: &std::path::Path) -> Result<(TraceHeader, Vec<Instr>), String> {
    let mut reader = open_trace_file(path)?;
    let instrs = reader.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok((reader.header, instrs))
}

/// Checks a trace as the recorder writes it: the header's ring (`n` a supported power of
/// two; distinct NTT-friendly prime moduli for it), and every instruction's ring degree, limb
/// indices (distinct, in the ring), operand count for its operation, sources (written
/// earlier), destination (a new id, or the source of an in-place operation), kind, Galois
/// element (automorphisms only, valid for `n`), BConv mode (BConv only) and markers (balanced
/// `begin` / `end`). The error carries the index of the offending instruction (`None`: the
/// header).
pub fn validate_trace(h: &TraceHeader, instrs: &[Instr]) -> Result<(), (Option<usize>, String)> {
    validate_header(h).map_err(|e| (None, e))?;
    let mut written = IdSet::default();
    let mut depth = 0usize;
    for (pos, i) in instrs.iter().enumerate() {
        check_instr(h, i, &written, &mut depth).map_err(|e| (Some(pos), e))?;
        if let Some(d) = i.dst {
            written.insert(d);
        }
    }
    if depth > 0 {
        return Err((
            instrs.len().checked_sub(1),
            format!("{depth} HE operation(s) begun and never ended"),
        ));
    }
    Ok(())
}

/// The header's ring: `n` a supported power of two; distinct NTT-friendly prime moduli for
/// it.
fn validate_header(h: &TraceHeader) -> Result<(), String> {
    tessera_math::ntt::check_degree(h.n).map_err(|e| format!("n: {e}"))?;
    if h.moduli.is_empty() || h.moduli.len() > MAX_TRACE_MODULI {
        return Err(format!(
            "{} moduli; allowed 1 to {MAX_TRACE_MODULI}",
            h.moduli.len()
        ));
    }
    for (k, &q) in h.moduli.iter().enumerate() {
        tessera_math::primes::check_ntt_prime(q, h.n).map_err(|e| format!("modulus {k}: {e}"))?;
        if h.moduli[..k].contains(&q) {
            return Err(format!("modulus {k} ({q}) repeats an earlier one"));
        }
    }
    Ok(())
}

fn check_instr(
    h: &TraceHeader,
    i: &Instr,
    written: &IdSet,
    depth: &mut usize,
) -> Result<(), String> {
    let op = i.op.name();
    if i.n != h.n {
        return Err(format!("{op}: n = {} where the header says {}", i.n, h.n));
    }
    for (k, &l) in i.limbs.iter().enumerate() {
        if l >= h.moduli.len() || i.limbs[..k].contains(&l) {
            return Err(format!(
                "{op}: limb index {l}; allowed distinct indices below {} (the header's moduli)",
                h.moduli.len()
            ));
        }
    }
    let only = |present: bool, field: &str, ops: &str| {
        if present {
            Err(format!("{op}: '{field}' belongs to {ops} records only"))
        } else {
            Ok(())
        }
    };
    only(
        i.galois.is_some() && i.op != Op::Automorphism,
        "galois",
        "automorphism",
    )?;
    only(i.mode.is_some() && i.op != Op::Bconv, "mode", "bconv")?;
    only(
        (i.name.is_some() || i.level.is_some()) && i.op != Op::Begin,
        "name/level",
        "begin",
    )?;
    only(
        i.host.is_some() && !matches!(i.op, Op::Load | Op::ExpandSeed),
        "host",
        "load and expand_seed",
    )?;
    if matches!(i.op, Op::Begin | Op::End) {
        if i.dst.is_some() || !i.srcs.is_empty() || !i.limbs.is_empty() || i.kind.is_some() {
            return Err(format!("{op}: a marker has no dst, srcs, limbs or kind"));
        }
        if i.op == Op::Begin {
            if i.name.is_none() {
                return Err("begin: 'name' missing".into());
            }
            *depth += 1;
        } else {
            *depth = depth
                .checked_sub(1)
                .ok_or_else(|| "end without begin".to_string())?;
        }
        return Ok(());
    }
    let dst = i.dst.ok_or_else(|| format!("{op}: 'dst' missing"))?;
    if i.limbs.is_empty() {
        return Err(format!("{op}: 'limbs' is empty"));
    }
    if i.kind.is_none() {
        let names: Vec<_> = Kind::ALL.iter().map(|k| k.name()).collect();
        return Err(format!(
            "{op}: 'kind' missing; allowed {}",
            names.join(", ")
        ));
    }
    // (fewest sources, most sources, whether the first source is the destination)
    let (lo, hi, in_place) = match i.op {
        Op::Load | Op::ExpandSeed => (0, 0, false),
        Op::Store | Op::Ntt | Op::Intt => (1, 1, true),
        Op::MulAcc => (3, 3, true),
        Op::Add | Op::Sub | Op::Mul => (2, 2, false),
        Op::Neg
        | Op::AddScalar
        | Op::MulScalar
        | Op::Automorphism
        | Op::Bconv
        | Op::SelectLimbs
        | Op::ExtendLimb => (1, 1, false),
        Op::Dot | Op::Concat => (if i.op == Op::Dot { 2 } else { 1 }, usize::MAX, false),
        Op::Begin | Op::End => unreachable!("markers returned above"),
    };
    let n = i.srcs.len();
    if n < lo || n > hi || (i.op == Op::Dot && !n.is_multiple_of(2)) {
        let want = match (i.op, hi) {
            (Op::Dot, _) => "an even number, at least 2".to_string(),
            (_, usize::MAX) => format!("at least {lo}"),
            _ => lo.to_string(),
        };
        return Err(format!("{op}: {n} sources; allowed {want}"));
    }
    if let Some(s) = i.srcs.iter().find(|s| !written.contains(s)) {
        return Err(format!("{op}: source buffer {s} was never written"));
    }
    if in_place {
        if i.srcs[0] != dst {
            return Err(format!(
                "{op}: in place, so its first source is its destination ({dst}), not {}",
                i.srcs[0]
            ));
        }
    } else if written.contains(&dst) {
        return Err(format!(
            "{op}: destination buffer {dst} was written before (ids are never reused)"
        ));
    }
    match i.op {
        Op::Automorphism => {
            let g = i
                .galois
                .ok_or_else(|| "automorphism: 'galois' missing".to_string())?;
            galois_check(g, h.n).map_err(|e| format!("automorphism: {e}"))?;
        }
        Op::Bconv if i.mode.is_none() => {
            return Err("bconv: 'mode' missing; allowed approximate, exact".into())
        }
        _ => {}
    }
    Ok(())
}

/// Shape of a polynomial without its data: what the trace backend tracks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Limb set (ring indices).
    pub limbs: Vec<usize>,
    /// Representation.
    pub repr: Representation,
}

/// Computes nothing; tracks limb sets and representations and applies the same operand checks
/// as the CPU backend, so a program that is valid on one is valid on the other.
#[derive(Clone, Debug)]
pub struct MetaBackend {
    ring: Arc<RingContext>,
}

impl MetaBackend {
    /// Over `ring`.
    pub fn new(ring: Arc<RingContext>) -> Self {
        Self { ring }
    }

    fn check_limbs(&self, limbs: &[usize]) -> Result<(), MathError> {
        for (k, &i) in limbs.iter().enumerate() {
            if i >= self.ring.moduli().len() || limbs[..k].contains(&i) {
                return Err(MathError::OutOfRange {
                    name: "limb index",
                    value: i.to_string(),
                    allowed: format!("distinct indices below {}", self.ring.moduli().len()),
                });
            }
        }
        Ok(())
    }

    fn moduli(&self, limbs: &[usize]) -> Vec<u64> {
        limbs
            .iter()
            .map(|&i| self.ring.moduli()[i].value())
            .collect()
    }

    fn same(
        &self,
        op: &'static str,
        a: &Meta,
        b: &Meta,
        need: Option<Representation>,
    ) -> Result<Meta, MathError> {
        check_operands(op, (&a.limbs, a.repr), (&b.limbs, b.repr), need, |l| {
            self.moduli(l)
        })?;
        Ok(a.clone())
    }
}

impl Backend for MetaBackend {
    type Poly = Meta;

    fn ring(&self) -> &Arc<RingContext> {
        &self.ring
    }
    fn limbs(&self, p: &Meta) -> Vec<usize> {
        p.limbs.clone()
    }
    fn repr(&self, p: &Meta) -> Representation {
        p.repr
    }
    fn load(&mut self, host: &RnsPoly, _kind: Kind) -> Result<Meta, MathError> {
        if !Arc::ptr_eq(host.context(), &self.ring) {
            return Err(MathError::RingMismatch { op: "load" });
        }
        Ok(Meta {
            limbs: host.limb_indices().to_vec(),
            repr: host.repr(),
        })
    }
    /// A shape loads as its limb set and representation (checked against the ring).
    fn load_host(&mut self, host: &HostPoly, kind: Kind) -> Result<Meta, MathError> {
        match host {
            HostPoly::Data(_) | HostPoly::Limbs { .. } => self.load(&*host.data()?, kind),
            HostPoly::Shape(s) => {
                self.check_limbs(&s.limbs)?;
                if s.limbs.is_empty() {
                    return Err(MathError::OutOfRange {
                        name: "limbs",
                        value: "0".into(),
                        allowed: "at least one limb".into(),
                    });
                }
                Ok(Meta {
                    limbs: s.limbs.clone(),
                    repr: s.repr,
                })
            }
        }
    }
    fn store(&mut self, _p: &Meta) -> Result<RnsPoly, MathError> {
        Err(MathError::Unsupported(
            "the trace backend records instructions and computes no data to store; run the same program on the CPU backend for values".into(),
        ))
    }
    fn expand_seed(
        &mut self,
        _seed: &Seed,
        limbs: &[usize],
        _kind: Kind,
    ) -> Result<Meta, MathError> {
        self.check_limbs(limbs)?;
        Ok(Meta {
            limbs: limbs.to_vec(),
            repr: Representation::Evaluation,
        })
    }
    fn ntt(&mut self, p: &mut Meta) -> Result<(), MathError> {
        p.repr.require("NTT", Some(Representation::Coefficient))?;
        p.repr = Representation::Evaluation;
        Ok(())
    }
    fn intt(&mut self, p: &mut Meta) -> Result<(), MathError> {
        p.repr.require("INTT", Some(Representation::Evaluation))?;
        p.repr = Representation::Coefficient;
        Ok(())
    }
    fn add(&mut self, a: &Meta, b: &Meta) -> Result<Meta, MathError> {
        self.same("add", a, b, None)
    }
    fn sub(&mut self, a: &Meta, b: &Meta) -> Result<Meta, MathError> {
        self.same("sub", a, b, None)
    }
    fn neg(&mut self, a: &Meta) -> Result<Meta, MathError> {
        Ok(a.clone())
    }
    fn mul(&mut self, a: &Meta, b: &Meta) -> Result<Meta, MathError> {
        self.same("multiply", a, b, Some(Representation::Evaluation))
    }
    fn mul_acc(&mut self, acc: &mut Meta, a: &Meta, b: &Meta) -> Result<(), MathError> {
        self.same(
            "multiply-accumulate",
            a,
            b,
            Some(Representation::Evaluation),
        )?;
        self.same(
            "multiply-accumulate",
            acc,
            a,
            Some(Representation::Evaluation),
        )?;
        Ok(())
    }
    fn dot(&mut self, a: &[&Meta], b: &[&Meta]) -> Result<Meta, MathError> {
        if a.is_empty() || a.len() != b.len() {
            return Err(MathError::LengthMismatch {
                what: "dot product operands",
                expected: a.len().max(1),
                found: b.len(),
            });
        }
        for (x, y) in a.iter().zip(b) {
            self.same("dot product", x, y, Some(Representation::Evaluation))?;
            self.same("dot product", a[0], x, Some(Representation::Evaluation))?;
        }
        Ok(a[0].clone())
    }
    fn add_scalar(&mut self, a: &Meta, c: &[u64]) -> Result<Meta, MathError> {
        a.repr
            .require("add scalar", Some(Representation::Evaluation))?;
        self.mul_scalar(a, c)
    }
    fn mul_scalar(&mut self, a: &Meta, c: &[u64]) -> Result<Meta, MathError> {
        if c.len() != a.limbs.len() {
            return Err(MathError::LengthMismatch {
                what: "per-limb constants",
                expected: a.limbs.len(),
                found: c.len(),
            });
        }
        Ok(a.clone())
    }
    fn automorphism(&mut self, a: &Meta, g: u64) -> Result<Meta, MathError> {
        galois_check(g, self.ring.n())?;
        Ok(a.clone())
    }
    fn bconv(&mut self, a: &Meta, to: &[usize], _mode: ConversionMode) -> Result<Meta, MathError> {
        a.repr.require("BConv", Some(Representation::Coefficient))?;
        self.check_limbs(to)?;
        Ok(Meta {
            limbs: to.to_vec(),
            repr: Representation::Coefficient,
        })
    }
    fn select_limbs(&mut self, a: &Meta, keep: &[usize]) -> Result<Meta, MathError> {
        if let Some(&bad) = keep.iter().find(|i| !a.limbs.contains(i)) {
            return Err(MathError::LimbMismatch {
                op: "select limbs",
                left: self.moduli(&a.limbs),
                right: self.moduli(&[bad]),
            });
        }
        Ok(Meta {
            limbs: keep.to_vec(),
            repr: a.repr,
        })
    }
    fn concat(&mut self, parts: &[&Meta], limbs: &[usize]) -> Result<Meta, MathError> {
        let first = parts.first().ok_or(MathError::OutOfRange {
            name: "parts",
            value: "0".into(),
            allowed: "at least one polynomial".into(),
        })?;
        for p in parts {
            p.repr.require("concat", Some(first.repr))?;
        }
        if let Some(&bad) = limbs
            .iter()
            .find(|i| !parts.iter().any(|p| p.limbs.contains(i)))
        {
            return Err(MathError::LimbMismatch {
                op: "concat",
                left: parts.iter().flat_map(|p| self.moduli(&p.limbs)).collect(),
                right: self.moduli(&[bad]),
            });
        }
        Ok(Meta {
            limbs: limbs.to_vec(),
            repr: first.repr,
        })
    }
    fn extend_limb(&mut self, a: &Meta, to: &[usize]) -> Result<Meta, MathError> {
        a.repr
            .require("extend limb", Some(Representation::Coefficient))?;
        if a.limbs.len() != 1 {
            return Err(MathError::OutOfRange {
                name: "limbs",
                value: a.limbs.len().to_string(),
                allowed: "exactly one limb to extend".into(),
            });
        }
        self.check_limbs(to)?;
        Ok(Meta {
            limbs: to.to_vec(),
            repr: Representation::Coefficient,
        })
    }
    fn begin_op(&mut self, _name: &'static str, _level: usize) {}
    fn end_op(&mut self) {}
}

/// The trace backend: records the instruction stream and computes nothing.
pub type TraceBackend = Recording<MetaBackend>;

impl TraceBackend {
    /// A trace backend over `ring`, keeping the stream in memory.
    pub fn trace(ring: Arc<RingContext>) -> Self {
        Recording::new(MetaBackend::new(ring))
    }
}

/// Work counted from an instruction stream, in the units of the closed forms
/// (`tessera_ckks::costs`): limb transforms, multiplies of N-coefficient limbs, words.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceCounts {
    /// Forward NTTs of one limb.
    pub ntt_limbs: u64,
    /// Inverse NTTs of one limb.
    pub intt_limbs: u64,
    /// BConv multiply-accumulates (`l_in * l_out * N`).
    pub bconv_macs: u64,
    /// BConv per-input-limb scalings by `qhat^-1` (`l_in * N`).
    pub bconv_scalings: u64,
    /// Element-wise modular multiplies (`mul`, `mul_acc`, `mul_scalar`; limbs * N).
    pub elementwise_mults: u64,
    /// Bytes of evaluation keys loaded (8 bytes a word).
    pub key_bytes_loaded: u64,
    /// Bytes of plaintexts loaded (8 bytes a word): what OF-Limb saves (ark.md Fig. 1).
    pub plaintext_bytes_loaded: u64,
    /// Words produced by PRNG expansion.
    pub prng_words: u64,
    /// Distinct evaluation-key objects loaded (one per key digit's `b` half; version-2
    /// traces): how many different keys the program needs, not how often it loads them.
    pub distinct_key_objects: u64,
    /// Bytes of the distinct evaluation-key limbs loaded (8 bytes a word): the key footprint
    /// the program touches (ark.md Fig. 1's aggregate key size).
    pub distinct_key_bytes: u64,
}

impl TraceCounts {
    /// Counts the work in `instrs` (buffer limb sets are tracked through the stream).
    pub fn from_instructions(instrs: &[Instr]) -> Self {
        let mut limbs: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
        let mut key_hosts = std::collections::HashSet::new();
        let mut key_limbs = std::collections::HashSet::new();
        let mut c = TraceCounts::default();
        for i in instrs {
            let n = i.n as u64;
            let dst_limbs = i.limbs.len() as u64;
            match i.op {
                Op::Ntt => c.ntt_limbs += dst_limbs,
                Op::Intt => c.intt_limbs += dst_limbs,
                Op::Bconv => {
                    let l_in = i
                        .srcs
                        .first()
                        .and_then(|s| limbs.get(s))
                        .copied()
                        .unwrap_or(0) as u64;
                    c.bconv_macs += l_in * dst_limbs * n;
                    c.bconv_scalings += l_in * n;
                }
                Op::Mul | Op::MulAcc | Op::MulScalar => c.elementwise_mults += dst_limbs * n,
                // srcs holds the (a_i, b_i) pairs: one multiply per pair.
                Op::Dot => c.elementwise_mults += (i.srcs.len() as u64 / 2) * dst_limbs * n,
                Op::Load if i.kind == Some(Kind::EvalKey) => {
                    c.key_bytes_loaded += 8 * dst_limbs * n;
                    if let Some(h) = i.host {
                        key_hosts.insert(h);
                        for &l in &i.limbs {
                            if key_limbs.insert((h, l)) {
                                c.distinct_key_bytes += 8 * n;
                            }
                        }
                    }
                }
                Op::Load if i.kind == Some(Kind::Plaintext) => {
                    c.plaintext_bytes_loaded += 8 * dst_limbs * n
                }
                Op::ExpandSeed => c.prng_words += dst_limbs * n,
                _ => {}
            }
            if let Some(d) = i.dst {
                limbs.insert(d, i.limbs.len());
            }
        }
        c.distinct_key_objects = key_hosts.len() as u64;
        c
    }
}
