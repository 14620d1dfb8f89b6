//! The engine's bounded view of the future: a window of the next instructions and the
//! lookahead tables over it (last uses, next uses for Belady replacement, readers for limb
//! streaming, compute positions), kept up to date as instructions enter the window at its
//! back and leave it at its front.
//!
//! Why a window: the schedule is static, so the engine looks ahead (Belady replacement needs
//! each buffer's next use, freeing a temporary needs its last use), but holding the whole
//! stream costs memory in proportion to the program. With a window of `W` instructions the
//! engine holds at most `W` instructions and the table entries of the buffers they name, so
//! its memory is bounded independently of the program's length.
//!
//! When it is exact: at position `p` the engine knows the instructions `p..p + W`. If every
//! buffer's live range (its write to its last read) and every host object's distance between
//! consecutive uses is shorter than `W`, every query below answers as it would over the whole
//! stream, and the schedule equals the whole-stream engine's (`run_with` over a slice with a
//! window of the slice's length). Otherwise a use beyond the window counts as "never":
//! Belady sees it as infinitely far, a buffer with no use left in the window is retired as
//! dead (its scratchpad space freed), and a retired buffer read again later is brought back
//! as if it had been spilled (see `Run::revive`).

use crate::error::SimError;
use std::collections::{HashMap, VecDeque};
use tessera_backend::trace::{Instr, Limbs, Op};

/// The default lookahead window, in instructions: ten ARK bootstrappings at `ark`
/// (6,597 instructions each) fit in it, so every built-in workload's reuse distances do.
pub const DEFAULT_WINDOW: usize = 1 << 16;

/// The most instructions a window may hold (about 2^26 instructions take several GB).
pub const MAX_WINDOW: usize = 1 << 26;

/// Positions of one key's occurrences in the window, and how many have left it.
#[derive(Debug, Default)]
struct Positions {
    gone: usize,
    at: VecDeque<usize>,
}

impl Positions {
    /// The first position after `pos` in the window (`usize::MAX`: none).
    fn after(&self, pos: usize) -> usize {
        let i = self.at.partition_point(|&p| p <= pos);
        self.at.get(i).copied().unwrap_or(usize::MAX)
    }
}

/// Occurrences by key: pushed at the window's back, popped at its front.
#[derive(Debug)]
struct Occurrences<K>(HashMap<K, Positions>);

impl<K: std::hash::Hash + Eq> Occurrences<K> {
    fn new() -> Self {
        Self(HashMap::new())
    }

    fn push(&mut self, k: K, pos: usize) {
        self.0.entry(k).or_default().at.push_back(pos);
    }

    /// Drops the occurrences of `k` at `pos` (the window's front); a key with none left in
    /// the window is forgotten.
    fn pop(&mut self, k: &K, pos: usize) {
        if let Some(e) = self.0.get_mut(k) {
            while e.at.front() == Some(&pos) {
                e.at.pop_front();
                e.gone += 1;
            }
            if e.at.is_empty() {
                self.0.remove(k);
            }
        }
    }

    fn after(&self, k: &K, pos: usize) -> usize {
        self.0.get(k).map_or(usize::MAX, |e| e.after(pos))
    }

    /// The one occurrence of `k`, if it has exactly one (as far as the window shows).
    fn only(&self, k: &K) -> Option<usize> {
        self.0
            .get(k)
            .filter(|e| e.gone == 0 && e.at.len() == 1)
            .map(|e| e.at[0])
    }
}

/// What the machine changes in the tables: seeded keys make `expand_seed` compute, limb
/// streaming asks for readers.
#[derive(Clone, Copy, Debug)]
pub struct Flags {
    /// `options.seeded_keys`.
    pub seeded_keys: bool,
    /// `options.limb_streaming`.
    pub limb_streaming: bool,
}

/// The window over an instruction stream and its lookahead tables.
pub struct Lookahead<I> {
    src: I,
    window: usize,
    flags: Flags,
    /// Instructions not yet scheduled; `ahead[0]` is at position `front`.
    ahead: VecDeque<Instr>,
    front: usize,
    /// Position of the next instruction the source gives.
    back: usize,
    ended: bool,
    /// Every occurrence (source or destination) of each buffer: its last use.
    occ: Occurrences<u64>,
    /// Reads of temporaries (buffers not backed by a host object): their next use.
    temp: Occurrences<u64>,
    /// Uses of every cached host limb.
    host: Occurrences<(u64, usize)>,
    /// Buffers backed by a cached host object, with the limbs they hold.
    host_of: HashMap<u64, (u64, Limbs)>,
    /// Reads of every buffer, and loads of every host object (limb streaming only).
    reads: Occurrences<u64>,
    loads: Occurrences<u64>,
    /// BConvs and limb extensions (limb streaming only).
    barriers: VecDeque<usize>,
    compute: VecDeque<usize>,
    first_compute: Option<usize>,
    last_compute: Option<usize>,
}

/// Whether `op` runs on a functional unit (and so takes part in RF chaining).
pub fn is_compute(seeded_keys: bool, op: Op) -> bool {
    match op {
        Op::Load | Op::Store | Op::SelectLimbs | Op::Concat | Op::Begin | Op::End => false,
        Op::ExpandSeed => seeded_keys,
        _ => true,
    }
}

fn barrier(op: Op) -> bool {
    matches!(op, Op::Bconv | Op::ExtendLimb)
}

fn view(op: Op) -> bool {
    matches!(op, Op::SelectLimbs | Op::Concat)
}

fn ciphertext(i: &Instr) -> bool {
    i.kind.unwrap_or(tessera_backend::Kind::Ciphertext) == tessera_backend::Kind::Ciphertext
}

/// Checks a window size: 1 to [`MAX_WINDOW`] instructions.
pub fn check_window(window: usize) -> Result<(), SimError> {
    check_length("window", window)
}

/// Checks a window length named `name` (the lookahead or the issue window): 1 to
/// [`MAX_WINDOW`] instructions, so that 0 (no instruction could ever be placed) and sizes
/// whose bookkeeping would not fit a host's memory are refused by name.
pub(super) fn check_length(name: &'static str, n: usize) -> Result<(), SimError> {
    if (1..=MAX_WINDOW).contains(&n) {
        Ok(())
    } else {
        Err(SimError::Invalid {
            name,
            value: n.to_string(),
            allowed: format!("1 to {MAX_WINDOW} instructions"),
        })
    }
}

impl<I: Iterator<Item = Result<Instr, SimError>>> Lookahead<I> {
    /// A window of `window` instructions over `src`.
    pub fn new(src: I, window: usize, flags: Flags) -> Result<Self, SimError> {
        check_window(window)?;
        Ok(Self {
            src,
            window,
            flags,
            ahead: VecDeque::new(),
            front: 0,
            back: 0,
            ended: false,
            occ: Occurrences::new(),
            temp: Occurrences::new(),
            host: Occurrences::new(),
            host_of: HashMap::new(),
            reads: Occurrences::new(),
            loads: Occurrences::new(),
            barriers: VecDeque::new(),
            compute: VecDeque::new(),
            first_compute: None,
            last_compute: None,
        })
    }

    /// The next instruction to schedule and its position, with the window filled behind it;
    /// `None` at the end of the stream.
    pub fn next_instr(&mut self) -> Result<Option<(usize, Instr)>, SimError> {
        while !self.ended && self.ahead.len() <= self.window {
            match self.src.next() {
                Some(i) => self.enter(i?),
                None => self.ended = true,
            }
        }
        Ok(self.ahead.pop_front().map(|i| {
            let pos = self.front;
            self.front += 1;
            (pos, i)
        }))
    }

    /// Adds `i` at the window's back.
    fn enter(&mut self, i: Instr) {
        let pos = self.back;
        self.back += 1;
        for &id in i.srcs.iter().chain(i.dst.iter()) {
            self.occ.push(id, pos);
        }
        for id in &i.srcs {
            match self.host_of.get(id) {
                Some((h, limbs)) => {
                    for &l in limbs {
                        self.host.push((*h, l), pos);
                    }
                }
                None => self.temp.push(*id, pos),
            }
        }
        let cached = i.op == Op::Load || (i.op == Op::ExpandSeed && !self.flags.seeded_keys);
        match (i.dst, i.host) {
            (Some(d), Some(h)) if cached && !ciphertext(&i) => {
                for &l in &i.limbs {
                    self.host.push((h, l), pos);
                }
                self.host_of.insert(d, (h, i.limbs.clone()));
            }
            (Some(d), _) if i.op == Op::SelectLimbs => {
                if let Some((h, _)) = i.srcs.first().and_then(|s| self.host_of.get(s)).cloned() {
                    self.host_of.insert(d, (h, i.limbs.clone()));
                }
            }
            _ => {}
        }
        if self.flags.limb_streaming {
            for &id in &i.srcs {
                self.reads.push(id, pos);
            }
            if let (Op::Load | Op::ExpandSeed, Some(h)) = (i.op, i.host) {
                self.loads.push(h, pos);
            }
            if barrier(i.op) {
                self.barriers.push_back(pos);
            }
        }
        if is_compute(self.flags.seeded_keys, i.op) {
            self.compute.push_back(pos);
            self.first_compute.get_or_insert(pos);
            self.last_compute = Some(pos);
        }
        self.ahead.push_back(i);
    }

    /// Drops the table entries of `i` (at `pos`, just scheduled).
    pub fn leave(&mut self, pos: usize, i: &Instr) {
        for id in &i.srcs {
            self.temp.pop(id, pos);
            if let Some((h, limbs)) = self.host_of.get(id) {
                for &l in limbs {
                    self.host.pop(&(*h, l), pos);
                }
            }
            self.reads.pop(id, pos);
        }
        if let (Some(_), Some(h)) = (i.dst, i.host) {
            for &l in &i.limbs {
                self.host.pop(&(h, l), pos);
            }
            if matches!(i.op, Op::Load | Op::ExpandSeed) {
                self.loads.pop(&h, pos);
            }
        }
        for &id in i.srcs.iter().chain(i.dst.iter()) {
            self.occ.pop(&id, pos);
            if !self.occ.0.contains_key(&id) {
                self.host_of.remove(&id);
            }
        }
        while self.barriers.front().is_some_and(|&p| p <= pos) {
            self.barriers.pop_front();
        }
        while self.compute.front().is_some_and(|&p| p <= pos) {
            self.compute.pop_front();
        }
    }

    /// Whether the whole rest of the stream is in the window (its answers are then exact).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The instruction at `pos` (in the window, after the front).
    pub fn at(&self, pos: usize) -> &Instr {
        &self.ahead[pos - self.front]
    }

    /// Whether `pos` is the last use of buffer `id` (no later use in the window).
    pub fn last_use(&self, id: u64, pos: usize) -> bool {
        self.occ.after(&id, pos) == usize::MAX
    }

    /// The next read of temporary `id` after `pos` (`usize::MAX`: none in the window).
    pub fn next_temp(&self, id: u64, pos: usize) -> usize {
        self.temp.after(&id, pos)
    }

    /// The next use of limb `l` of host object `h` after `pos`.
    pub fn next_host(&self, h: u64, l: usize, pos: usize) -> usize {
        self.host.after(&(h, l), pos)
    }

    /// The one instruction that reads temporary `id`, if only one does.
    pub fn single_use(&self, id: u64) -> Option<usize> {
        self.temp.only(&id)
    }

    /// The next compute instruction after `pos` (`usize::MAX`: none in the window).
    pub fn next_compute(&self, pos: usize) -> usize {
        let i = self.compute.partition_point(|&p| p <= pos);
        self.compute.get(i).copied().unwrap_or(usize::MAX)
    }

    /// Whether no compute instruction comes at or before `pos` (exact: the window has seen
    /// every instruction up to its back).
    pub fn before_first_compute(&self, pos: usize) -> bool {
        pos < self.first_compute.unwrap_or(usize::MAX)
    }

    /// Whether no compute instruction comes after `pos`: known only once the stream's end
    /// is in the window (before that, more may follow).
    pub fn after_last_compute(&self, pos: usize) -> bool {
        self.ended && pos > self.last_compute.unwrap_or(0)
    }

    /// Whether the result of `i` (at `pos`, just taken from the window) can stream limb by
    /// limb (`limb_streaming`): written by a new-buffer instruction, read only by limb-wise
    /// instructions (directly or through limb selections and concatenations), with no BConv
    /// or limb extension (which read every limb of a coefficient) from the write to the last
    /// read; for a key or plaintext, only its last load (an object loaded again later stays
    /// cached). Whole-polynomial values that cross such a barrier, such as key-switch
    /// accumulators and BSGS baby steps, keep their full footprint.
    pub fn streamable(&self, pos: usize, i: &Instr) -> bool {
        if !self.flags.limb_streaming {
            return false;
        }
        let Some(d) = i.dst else { return false };
        if i.srcs.contains(&d) {
            return false;
        }
        // A key or plaintext streams only at its last load (one loaded again stays cached).
        if let Some(h) = i.host {
            let load = matches!(i.op, Op::Load | Op::ExpandSeed);
            if !load || self.loads.after(&h, pos) != usize::MAX {
                return false;
            }
        }
        // Readers, following views to their own readers.
        let mut stack = vec![d];
        let mut last = pos;
        let mut any = false;
        while let Some(id) = stack.pop() {
            let Some(rs) = self.reads.0.get(&id) else {
                continue;
            };
            for &r in rs.at.iter().filter(|&&r| r > pos) {
                any = true;
                last = last.max(r);
                let ins = self.at(r);
                if barrier(ins.op) {
                    return false;
                }
                if view(ins.op) {
                    if let Some(v) = ins.dst.filter(|&v| v != id) {
                        stack.push(v);
                    }
                }
            }
        }
        let i = self.barriers.partition_point(|&p| p <= pos);
        any && self.barriers.get(i).is_none_or(|&b| b > last)
    }
}
