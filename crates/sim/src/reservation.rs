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
#[derive(Clone, Debug, Default)]
pub struct Intervals {
    busy: Vec<(f64, f64)>,
}

/// Gaps shorter than this many cycles are treated as busy (rounding noise in f64 cycle sums).
const EPS: f64 = 1e-9;

impl Intervals {
    /// The earliest `s >= t` with `[s, s + dur)` idle.
    pub fn earliest(&self, t: f64, dur: f64) -> f64 {
        // The first interval that ends after t (ends are sorted too: intervals are disjoint).
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

    /// Marks `[s, s + dur)` busy (it must be idle), merging with touching neighbours.
    pub fn reserve(&mut self, s: f64, dur: f64) {
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

    /// The end of the last busy interval (0 when never busy).
    pub fn last_end(&self) -> f64 {
        self.busy.last().map_or(0.0, |&(_, e)| e)
    }

    /// Number of disjoint busy intervals.
    pub fn len(&self) -> usize {
        self.busy.len()
    }

    /// Whether the resource was never reserved.
    pub fn is_empty(&self) -> bool {
        self.busy.is_empty()
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
