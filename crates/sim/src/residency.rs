//! On-chip capacity: what lives in the scratchpad, in program order.
//!
//! Keys and plaintexts are cached per (host object, limb): a later load of the same object,
//! at any level, hits the limbs still resident and fetches only the others. Ciphertext
//! temporaries live from the instruction that creates them to their last use. When the
//! scratchpad is full, the entry whose next use is farthest away per transfer its eviction
//! costs goes first (Belady's replacement weighted by cost: the program is static, so its
//! compiler knows the future, as ARK's VLIW-style scheduler does): a cached limb is dropped
//! (it is clean: one reload), a live temporary is spilled off-chip and reloaded at its next
//! use (two transfers). Eviction is limb-granular: only as many limbs of the victim go as
//! the new data needs, and only those come back at its next use.

use std::collections::{BTreeMap, HashMap, HashSet};

/// One resident object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Entry {
    /// Limb `limb` (ring index) of host object `host`.
    Host(u64, usize),
    /// A temporary buffer.
    Temp(u64),
    /// A clean copy of buffer `id` whose data the level below also holds (the register-file
    /// level, `storage`): evicting it costs one refill at its next use, like a cached limb.
    Clean(u64),
    /// The staged input of a BConv split by output limbs (`schedule::tiling`): clean, since
    /// dropping it costs moving the input between the clusters again (the next output tile
    /// re-moves it), not an off-chip transfer.
    Staged(u64),
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
    now: usize,
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
            now: 0,
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

    /// The program position now: eviction weighs each entry by its distance to its next use.
    pub fn set_now(&mut self, pos: usize) {
        self.now = pos;
    }

    /// The entry to evict: the one whose next use is farthest per transfer its eviction
    /// costs. A clean cached limb costs one (its reload), a live temporary two (its spill and
    /// its reload), so a clean limb used at least half as far away goes first. Entries in
    /// `keep` are never chosen.
    fn victim(&self, keep: &HashSet<Entry>) -> Option<((usize, u64), Entry)> {
        let dist = |next: usize| next.saturating_sub(self.now) as f64;
        let mut best: Option<((usize, u64), Entry, f64)> = None;
        for (&s, &e) in self.lru.iter().rev() {
            if keep.contains(&e) {
                continue;
            }
            let d = dist(s.0);
            if let Some((_, _, score)) = best {
                // Farther entries come first: nothing nearer than half the best can win.
                if d < score {
                    break;
                }
            }
            let score = match e {
                Entry::Temp(_) => d / 2.0,
                Entry::Host(..) | Entry::Clean(_) | Entry::Staged(_) => d,
            };
            if best.is_none_or(|(_, _, b)| score > b) {
                best = Some((s, e, score));
            }
            if s.0 == usize::MAX {
                break;
            }
        }
        best.map(|(s, e, _)| (s, e))
    }

    fn make_room(&mut self, bytes: f64, keep: &HashSet<Entry>, spills: &mut Spills) {
        while self.used + bytes > self.capacity {
            let Some((s, e)) = self.victim(keep) else {
                break;
            };
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
                Entry::Host(..) | Entry::Clean(_) | Entry::Staged(_) => {
                    self.lru.remove(&s);
                    self.stamp.remove(&e);
                    self.used -= b;
                }
            }
        }
        if self.used + bytes > self.capacity {
            self.overflow_bytes += self.used + bytes - self.capacity;
        }
    }

    /// Records that `bytes` of temporary `id`, not resident, are off-chip: its next
    /// [`Residency::reload`] brings them back (the engine's lookahead window retired it as dead
    /// and it was read again).
    pub fn spilled_out(&mut self, id: u64, bytes: f64) {
        *self.spilled.entry(id).or_default() += bytes;
    }

    /// Evicts until the occupancy is within capacity, sparing only `keep`: what a level
    /// must write out after an instruction whose operands overflowed it while they streamed
    /// through (the register-file level, `storage`). Temporaries evicted go to `spills`.
    pub fn fit(&mut self, keep: &HashSet<Entry>, spills: &mut Spills) {
        self.make_room(0.0, keep, spills);
    }

    /// Drops a resident entry with no traffic (a clean copy no longer needed, or one about
    /// to be replaced by a dirty one).
    pub fn drop_entry(&mut self, e: Entry) {
        if let Some((s, b, _)) = self.stamp.remove(&e) {
            self.lru.remove(&s);
            self.used -= b;
        }
    }

    /// Bytes of `e` resident (0 when absent).
    pub fn resident_bytes(&self, e: Entry) -> f64 {
        self.stamp.get(&e).map_or(0.0, |x| x.1)
    }

    /// Bytes of temporary `id` spilled to the level below and not yet reloaded.
    pub fn spilled_bytes(&self, id: u64) -> f64 {
        self.spilled.get(&id).copied().unwrap_or(0.0)
    }

    /// Frees a dead temporary, and its staged copy if it is a staged BConv input (no
    /// traffic).
    pub fn free(&mut self, id: u64) {
        for e in [Entry::Temp(id), Entry::Staged(id)] {
            self.drop_entry(e);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Eviction weighs distance by cost: a clean cached limb (one reload) used at least half
    /// as far away as a live temporary (a spill and a reload) goes first.
    #[test]
    fn a_clean_limb_goes_before_a_temporary_used_less_than_twice_as_far() {
        let keep = HashSet::new();
        for (host_next, evicted_temp) in [(8usize, false), (6, false), (4, true)] {
            let mut r = Residency::new(2.0);
            let mut spills = Spills::default();
            r.insert(Entry::Temp(1), 1.0, 1.0, 10, &keep, &mut spills);
            r.insert(Entry::Host(7, 0), 1.0, 1.0, host_next, &keep, &mut spills);
            r.insert(Entry::Temp(2), 1.0, 1.0, 3, &keep, &mut spills);
            assert_eq!(
                !spills.stores.is_empty(),
                evicted_temp,
                "host next use {host_next}"
            );
            assert_eq!(r.resident(Entry::Host(7, 0)), evicted_temp);
            assert_eq!(r.resident(Entry::Temp(1)), !evicted_temp);
        }
    }
}
