//! When each resource is busy: the static scheduler's reservation table.
//!
//! HE programs have no data-dependent control flow, so a compiler schedules them ahead of
//! time, and a list scheduler is not bound to program order: an instruction whose sources are
//! ready goes into the earliest idle slot of its units that is long enough, even if an
//! instruction later in time was placed before it. (REED's non-blocking KeySwitch, reed.md
//! Algorithm 3, relies on exactly that: the next limb's INTT runs in the gaps of the current
//! limb's NTTs.) Each resource keeps its busy intervals; [`Table::place`] finds the earliest
//! common start of a phase's tasks at or after a given time.
//!
//! Off-chip transfers are the exception (the engine places them after the channel's last
//! reservation): they leave a DMA queue in program order, so a load cannot move into idle
//! channel time long before its use, where the capacity model, which runs in program order,
//! would not have room for it.

/// Busy intervals of one resource, sorted and disjoint, as half-open `[start, end)`.
///
/// Kept in chunks of at most `2 * CHUNK` intervals: a resource holds tens of thousands of
/// intervals (the engine's issue window bounds them, [`Intervals::retire_before`]; without it
/// a long program had hundreds of thousands), and backfilling inserts in the middle, which in one flat `Vec`
/// moved every later interval (`memmove` was 23 % of `tessera reproduce`'s cycles). A chunk
/// bounds that move; the intervals and every answer are the flat list's (tested against it).
#[derive(Clone, Debug, Default)]
pub struct Intervals {
    /// Non-empty chunks, in order: each chunk's intervals are sorted, and every interval of a
    /// chunk precedes every interval of the next.
    chunks: Vec<Vec<(f64, f64)>>,
    len: usize,
    /// The latest end among retired intervals ([`Intervals::retire_before`]), so that
    /// [`Intervals::last_end`] stays the resource's last busy cycle.
    retired_end: f64,
}

/// Chunks split when they reach twice this many intervals.
const CHUNK: usize = 256;

/// Gaps shorter than this many cycles are treated as busy (rounding noise in f64 cycle sums).
const EPS: f64 = 1e-9;

/// A position in [`Intervals`]: chunk and index in it (`(chunks.len(), 0)` is the end).
type Pos = (usize, usize);

impl Intervals {
    /// The first position whose interval does not satisfy `pred` (a predicate true on a
    /// prefix of the sorted intervals).
    fn locate(&self, pred: impl Fn(&(f64, f64)) -> bool) -> Pos {
        let c = self
            .chunks
            .partition_point(|ch| ch.last().is_some_and(&pred));
        match self.chunks.get(c) {
            Some(ch) => (c, ch.partition_point(&pred)),
            None => (c, 0),
        }
    }

    fn get(&self, (c, i): Pos) -> Option<(f64, f64)> {
        self.chunks.get(c).and_then(|ch| ch.get(i)).copied()
    }

    /// The position after `p` (which is not the end).
    fn next(&self, (c, i): Pos) -> Pos {
        if i + 1 < self.chunks[c].len() {
            (c, i + 1)
        } else {
            (c + 1, 0)
        }
    }

    /// The position before `p` (`None` at the start).
    fn prev(&self, (c, i): Pos) -> Option<Pos> {
        if i > 0 {
            Some((c, i - 1))
        } else if c > 0 {
            Some((c - 1, self.chunks[c - 1].len() - 1))
        } else {
            None
        }
    }

    fn at_mut(&mut self, (c, i): Pos) -> &mut (f64, f64) {
        &mut self.chunks[c][i]
    }

    /// The earliest `s >= t` with `[s, s + dur)` idle.
    pub fn earliest(&self, t: f64, dur: f64) -> f64 {
        // The first interval that ends after t (ends are sorted too: intervals are disjoint).
        let mut p = self.locate(|&(_, e)| e <= t + EPS);
        let mut s = t;
        while let Some((b, e)) = self.get(p) {
            if b >= s + dur - EPS {
                return s;
            }
            s = s.max(e);
            p = self.next(p);
        }
        s
    }

    /// Marks `[s, s + dur)` busy (it must be idle), merging with touching neighbours.
    pub fn reserve(&mut self, s: f64, dur: f64) {
        if dur <= 0.0 {
            return;
        }
        let e = s + dur;
        let p = self.locate(|&(b, _)| b < s);
        let before = self.prev(p).filter(|&q| self.chunks[q.0][q.1].1 >= s - EPS);
        let after = self.get(p).filter(|&(b, _)| b <= e + EPS);
        match (before, after) {
            (Some(q), Some((_, next_end))) => {
                let x = self.at_mut(q);
                x.1 = next_end.max(e);
                self.remove(p);
            }
            (Some(q), None) => {
                let x = self.at_mut(q);
                x.1 = x.1.max(e);
            }
            (None, Some(_)) => self.at_mut(p).0 = s,
            (None, None) => self.insert(p, (s, e)),
        }
    }

    fn remove(&mut self, (c, i): Pos) {
        self.chunks[c].remove(i);
        if self.chunks[c].is_empty() {
            self.chunks.remove(c);
        }
        self.len -= 1;
    }

    fn insert(&mut self, (c, i): Pos, x: (f64, f64)) {
        let (c, i) = match self.chunks.len() {
            0 => {
                self.chunks.push(Vec::new());
                (0, 0)
            }
            n if c == n => (n - 1, self.chunks[n - 1].len()),
            _ => (c, i),
        };
        self.chunks[c].insert(i, x);
        if self.chunks[c].len() >= 2 * CHUNK {
            let tail = self.chunks[c].split_off(CHUNK);
            self.chunks.insert(c + 1, tail);
        }
        self.len += 1;
    }

    /// The end of the last busy interval (0 when never busy), retired ones included.
    pub fn last_end(&self) -> f64 {
        self.chunks
            .last()
            .and_then(|ch| ch.last())
            .map_or(self.retired_end, |&(_, e)| e.max(self.retired_end))
    }

    /// Forgets the intervals that end before `h` (by more than the rounding tolerance), when
    /// no future query or reservation starts before `h` (the engine's issue window,
    /// `engine/issue.rs`). Exact under that condition: [`Intervals::earliest`] from `t >= h`
    /// skips every interval that ends at or before `t`, and [`Intervals::reserve`] at
    /// `s >= h` merges only with an interval that ends at `s - EPS` or later. Returns how
    /// many were dropped.
    pub fn retire_before(&mut self, h: f64) -> usize {
        let cut = h - 2.0 * EPS;
        let whole = self
            .chunks
            .partition_point(|ch| ch.last().is_some_and(|&(_, e)| e < cut));
        let mut dropped: usize = self.chunks[..whole].iter().map(Vec::len).sum();
        for ch in self.chunks.drain(..whole) {
            if let Some(&(_, e)) = ch.last() {
                self.retired_end = self.retired_end.max(e);
            }
        }
        if let Some(ch) = self.chunks.first_mut() {
            let k = ch.partition_point(|&(_, e)| e < cut);
            if k > 0 {
                self.retired_end = self.retired_end.max(ch[k - 1].1);
                ch.drain(..k);
                dropped += k;
            }
        }
        self.len -= dropped;
        dropped
    }

    /// Number of disjoint busy intervals held (retired ones are not counted).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the resource was never reserved.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The intervals in order.
    pub fn iter(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.chunks.iter().flatten().copied()
    }
}

/// The reservation table: one [`Intervals`] per resource index.
#[derive(Clone, Debug)]
pub struct Table {
    res: Vec<Intervals>,
}

impl Table {
    /// A table of `n` idle resources.
    pub fn new(n: usize) -> Self {
        Self {
            res: vec![Intervals::default(); n],
        }
    }

    /// The earliest `t0 >= t` at which every `(resource, cycles)` task can run from `t0`
    /// for its cycles (tasks of one phase start together).
    pub fn place(&self, t: f64, tasks: &[(usize, f64)]) -> f64 {
        let mut t0 = t;
        loop {
            let mut moved = false;
            for &(r, c) in tasks {
                if c <= 0.0 {
                    continue;
                }
                let s = self.res[r].earliest(t0, c);
                if s > t0 {
                    t0 = s;
                    moved = true;
                }
            }
            if !moved {
                return t0;
            }
        }
    }

    /// Reserves every task from `t0` (see [`Table::place`]).
    pub fn reserve(&mut self, t0: f64, tasks: &[(usize, f64)]) {
        for &(r, c) in tasks {
            self.res[r].reserve(t0, c);
        }
    }

    /// One resource's intervals.
    pub fn resource(&self, r: usize) -> &Intervals {
        &self.res[r]
    }

    /// Retires, on every resource, the intervals that end before `h`, below which nothing
    /// will be placed again (see [`Intervals::retire_before`]).
    pub fn retire_before(&mut self, h: f64) {
        for r in &mut self.res {
            r.retire_before(h);
        }
    }

    /// Busy intervals held over all resources (bounded by the issue window, not the
    /// program's length).
    pub fn held(&self) -> usize {
        self.res.iter().map(Intervals::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The flat sorted list the chunked [`Intervals`] replaced: the reference.
    #[derive(Default)]
    struct Flat {
        busy: Vec<(f64, f64)>,
    }

    impl Flat {
        fn earliest(&self, t: f64, dur: f64) -> f64 {
            let mut i = self.busy.partition_point(|&(_, e)| e <= t + EPS);
            let mut s = t;
            while let Some(&(b, e)) = self.busy.get(i) {
                if b >= s + dur - EPS {
                    return s;
                }
                s = s.max(e);
                i += 1;
            }
            s
        }

        fn reserve(&mut self, s: f64, dur: f64) {
            if dur <= 0.0 {
                return;
            }
            let e = s + dur;
            let i = self.busy.partition_point(|&(b, _)| b < s);
            let join_prev = i > 0 && self.busy[i - 1].1 >= s - EPS;
            let join_next = i < self.busy.len() && self.busy[i].0 <= e + EPS;
            match (join_prev, join_next) {
                (true, true) => {
                    self.busy[i - 1].1 = self.busy[i].1.max(e);
                    self.busy.remove(i);
                }
                (true, false) => self.busy[i - 1].1 = self.busy[i - 1].1.max(e),
                (false, true) => self.busy[i].0 = s,
                (false, false) => self.busy.insert(i, (s, e)),
            }
        }
    }

    proptest! {
        /// Placing tasks the way the engine does (each at the earliest idle start at or after
        /// its ready time) gives the flat list's starts and intervals, across many chunk
        /// splits and merges that empty chunks.
        #[test]
        fn chunked_intervals_equal_the_flat_list(
            tasks in proptest::collection::vec((0u32..20_000, 1u32..40, any::<bool>()), 1..3_000)
        ) {
            let (mut chunked, mut flat) = (Intervals::default(), Flat::default());
            for (t, dur, whole) in tasks {
                // Integral cycles make touching intervals merge; fractional ones leave gaps.
                let (t, dur) = if whole { (t as f64, dur as f64) } else { (t as f64 * 0.7, dur as f64 * 0.3) };
                let s = chunked.earliest(t, dur);
                prop_assert_eq!(s, flat.earliest(t, dur));
                chunked.reserve(s, dur);
                flat.reserve(s, dur);
                prop_assert_eq!(chunked.len(), flat.busy.len());
                prop_assert_eq!(chunked.last_end(), flat.busy.last().map_or(0.0, |x| x.1));
            }
            prop_assert_eq!(chunked.iter().collect::<Vec<_>>(), flat.busy);
        }
    }

    proptest! {
        /// Retiring the intervals that end before a horizon that every later query and
        /// reservation starts at or after changes no answer: starts equal the flat list's
        /// (which never retires), and so does the last end; the held intervals are the flat
        /// list's that end at or after the horizon.
        #[test]
        fn retiring_below_the_horizon_changes_no_answer(
            tasks in proptest::collection::vec((0u32..400, 1u32..40, any::<bool>(), 0u32..8), 1..3_000)
        ) {
            let (mut chunked, mut flat) = (Intervals::default(), Flat::default());
            let mut h = 0.0f64;
            for (ahead, dur, whole, step) in tasks {
                let (ahead, dur) = if whole { (ahead as f64, dur as f64) } else { (ahead as f64 * 0.7, dur as f64 * 0.3) };
                let t = h + ahead;
                let s = chunked.earliest(t, dur);
                prop_assert_eq!(s, flat.earliest(t, dur));
                chunked.reserve(s, dur);
                flat.reserve(s, dur);
                prop_assert_eq!(chunked.last_end(), flat.busy.last().map_or(0.0, |x| x.1));
                h += step as f64 * 3.5;
                chunked.retire_before(h);
            }
            let kept: Vec<_> = flat.busy.iter().copied().filter(|&(_, e)| e >= h - 2.0 * EPS).collect();
            prop_assert_eq!(chunked.iter().collect::<Vec<_>>(), kept);
        }
    }

    #[test]
    fn retiring_keeps_the_last_end() {
        let mut r = Intervals::default();
        r.reserve(0.0, 10.0);
        r.reserve(20.0, 5.0);
        assert_eq!(r.retire_before(100.0), 2);
        assert!(r.is_empty());
        assert_eq!(r.last_end(), 25.0);
        assert_eq!(r.earliest(100.0, 3.0), 100.0);
        r.reserve(100.0, 3.0);
        assert_eq!((r.len(), r.last_end()), (1, 103.0));
    }

    #[test]
    fn work_fills_the_earliest_gap_that_fits() {
        let mut r = Intervals::default();
        r.reserve(0.0, 10.0);
        r.reserve(15.0, 5.0);
        r.reserve(30.0, 10.0);
        assert_eq!(r.earliest(0.0, 5.0), 10.0); // the gap [10, 15) fits exactly
        assert_eq!(r.earliest(0.0, 6.0), 20.0); // [20, 30) is the first gap of 6
        assert_eq!(r.earliest(0.0, 11.0), 40.0); // none fits: after the last
        assert_eq!(r.earliest(12.0, 2.0), 12.0);
        assert_eq!(r.earliest(50.0, 100.0), 50.0);
        r.reserve(10.0, 5.0); // fills the gap and merges three intervals into one
        assert_eq!(r.len(), 2);
        assert_eq!(r.earliest(0.0, 1.0), 20.0);
        assert_eq!(r.last_end(), 40.0);
    }

    #[test]
    fn a_phase_starts_when_all_its_resources_are_idle_together() {
        let mut t = Table::new(2);
        t.reserve(0.0, &[(0, 10.0)]);
        t.reserve(12.0, &[(1, 8.0)]);
        // Resource 0 is idle from 10; resource 1 for 4 cycles must avoid [12, 20).
        assert_eq!(t.place(0.0, &[(0, 4.0), (1, 4.0)]), 20.0);
        assert_eq!(t.place(0.0, &[(0, 2.0), (1, 2.0)]), 10.0);
        // Zero-length tasks do not constrain the start.
        assert_eq!(t.place(0.0, &[(0, 0.0), (1, 5.0)]), 0.0);
    }
}
