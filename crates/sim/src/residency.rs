//! On-chip capacity: what lives in the scratchpad, in program order.
//!
//! Keys and plaintexts are cached per (host object, limb): a later load of the same object,
//! at any level, hits the limbs still resident and fetches only the others. Ciphertext
//! temporaries live from the instruction that creates them to their last use. When the
//! scratchpad is full, the entry whose next use is farthest away goes first (Belady's
//! replacement: the program is static, so its compiler knows the future, as ARK's
//! VLIW-style scheduler does): a cached limb is dropped (it is clean), a live temporary is
//! spilled off-chip and reloaded at its next use. Eviction is limb-granular: only as many
//! limbs of the victim go as the new data needs, and only those come back at its next use.

use std::collections::{BTreeMap, HashMap, HashSet};

/// One resident object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Entry {
    /// Limb `limb` (ring index) of host object `host`.
    Host(u64, usize),
    /// A temporary buffer.
    Temp(u64),
}

/// Scratchpad occupancy with LRU replacement.
#[derive(Debug)]
pub struct Residency {
    capacity: f64,
    used: f64,
    peak: f64,
    clock: u64,
    /// Entries by (next use, insertion order): the last one is evicted first.
    lru: BTreeMap<(usize, u64), Entry>,
    /// Per resident entry: its LRU key, resident bytes, and eviction grain (one limb).
    stamp: HashMap<Entry, ((usize, u64), f64, f64)>,
    spilled: HashMap<u64, f64>,
    /// Bytes that did not fit even after evicting everything else.
    pub overflow_bytes: f64,
}

/// Off-chip traffic caused by keeping within capacity.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Spills {
    /// Temporaries written out: (buffer id, bytes).
    pub stores: Vec<(u64, f64)>,
}

impl Residency {
    /// A scratchpad of `capacity` bytes.
    pub fn new(capacity: f64) -> Self {
        Self {
            capacity,
            used: 0.0,
            peak: 0.0,
            clock: 0,
            lru: BTreeMap::new(),
            stamp: HashMap::new(),
            spilled: HashMap::new(),
            overflow_bytes: 0.0,
        }
    }

    /// Highest occupancy seen, in bytes.
    pub fn peak(&self) -> f64 {
        self.peak
    }

    /// Whether `e` is resident.
    pub fn resident(&self, e: Entry) -> bool {
        self.stamp.contains_key(&e)
    }

    /// Records that `e` (if resident) is next used at position `next` (`usize::MAX`: never).
    pub fn touch(&mut self, e: Entry, next: usize) {
        if let Some((old, bytes, grain)) = self.stamp.get(&e).copied() {
            self.lru.remove(&old);
            self.clock += 1;
            self.lru.insert((next, self.clock), e);
            self.stamp.insert(e, ((next, self.clock), bytes, grain));
        }
    }

    /// Makes `e` (of `bytes`, next used at `next`) resident, evicting others; the temporaries
    /// spilled are added to `spills`. `grain` is the unit a temporary is evicted in (a limb).
    pub fn insert(
        &mut self,
        e: Entry,
        bytes: f64,
        grain: f64,
        next: usize,
        keep: &HashSet<Entry>,
        spills: &mut Spills,
    ) {
        if self.resident(e) {
            self.touch(e, next);
            return;
        }
        self.make_room(bytes, keep, spills);
        self.clock += 1;
        self.lru.insert((next, self.clock), e);
        self.stamp.insert(e, ((next, self.clock), bytes, grain));
        self.used += bytes;
        self.peak = self.peak.max(self.used);
    }

    fn make_room(&mut self, bytes: f64, keep: &HashSet<Entry>, spills: &mut Spills) {
        let mut skipped = Vec::new();
        while self.used + bytes > self.capacity {
            let Some((&s, &e)) = self.lru.iter().next_back() else {
                break;
            };
            if keep.contains(&e) {
                self.lru.remove(&s);
                skipped.push((s, e));
                continue;
            }
            let (_, b, grain) = self.stamp[&e];
            match e {
                Entry::Temp(id) => {
                    // Only the limbs needed: the rest of the victim stays.
                    let need = self.used + bytes - self.capacity;
                    let out = if grain > 0.0 {
                        ((need / grain).ceil() * grain).min(b)
                    } else {
                        b
                    };
                    *self.spilled.entry(id).or_default() += out;
                    spills.stores.push((id, out));
                    self.used -= out;
                    if out < b {
                        self.stamp.get_mut(&e).expect("resident").1 = b - out;
                    } else {
                        self.lru.remove(&s);
                        self.stamp.remove(&e);
                    }
                }
                Entry::Host(..) => {
                    self.lru.remove(&s);
                    self.stamp.remove(&e);
                    self.used -= b;
                }
            }
        }
        for (s, e) in skipped {
            self.lru.insert(s, e);
        }
        if self.used + bytes > self.capacity {
            self.overflow_bytes += self.used + bytes - self.capacity;
        }
    }

    /// Frees a dead temporary (no traffic).
    pub fn free(&mut self, id: u64) {
        let e = Entry::Temp(id);
        if let Some((s, b, _)) = self.stamp.remove(&e) {
            self.lru.remove(&s);
            self.used -= b;
        }
        self.spilled.remove(&id);
    }

    /// If temporary `id` was spilled (wholly or some of its limbs), brings the spilled part
    /// back and returns the bytes reloaded; `next` is its next use after this one, `grain`
    /// its limb size.
    pub fn reload(
        &mut self,
        id: u64,
        grain: f64,
        next: usize,
        keep: &HashSet<Entry>,
        spills: &mut Spills,
    ) -> f64 {
        let e = Entry::Temp(id);
        match self.spilled.remove(&id) {
            Some(b) => {
                match self.stamp.get(&e).copied() {
                    Some((_, have, _)) => {
                        // Partly resident: the resident limbs must stay while the rest returns.
                        let mut keep = keep.clone();
                        keep.insert(e);
                        self.make_room(b, &keep, spills);
                        self.stamp.get_mut(&e).expect("resident").1 = have + b;
                        self.used += b;
                        self.peak = self.peak.max(self.used);
                        self.touch(e, next);
                    }
                    None => self.insert(e, b, grain, next, keep, spills),
                }
                b
            }
            None => {
                self.touch(e, next);
                0.0
            }
        }
    }
}
