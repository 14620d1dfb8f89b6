//! The issue window: how far ahead of program order the list scheduler may place an
//! instruction, and so which busy intervals no future instruction can touch.
//!
//! Why: the reservation table (`reservation`) lets an instruction backfill any idle gap at
//! or after its ready time, and an instruction with no sources (a seed expansion, a load)
//! is ready at cycle 0, so without a limit no interval could ever be dropped and the table
//! grows with the program (0.65 MB a bootstrapping, session 31). Neither a static compiler
//! nor the hardware that runs its code considers the whole program at once: a compiler's
//! list scheduler picks among the instructions in its window, and the machine's instruction
//! queue is a circular buffer in which instruction `p` takes the slot that instruction
//! `p - W` frees when it is dispatched. The rule modelled here is that one: **an instruction
//! is dispatched no earlier than the instruction `W` places before it in program order**
//! (among instructions that are placed: HE-operation markers are not).
//!
//! What it bounds: every reservation made for the instruction at `p` starts at or after that
//! floor, and by induction every future instruction's floor is at least the smallest
//! dispatch time of the last `W` instructions. Busy intervals that end before that
//! [`IssueWindow::horizon`] can never be the answer to a placement again and are retired
//! (`reservation::Table::retire_before`), so the table holds the intervals of about `W`
//! instructions, whatever the program's length.
//!
//! When it is exact: when no placement's lower bound is raised by the floor. The engine
//! counts the instructions whose placement was (`Schedule::window_holds`); at zero the
//! schedule is bit for bit the unbounded one (retired intervals end before every query's
//! start, so no answer changes). A program shorter than the window is never held; every row
//! of `tessera reproduce` and 40 to 320 ARK bootstrappings in a row give the same figures
//! as before the window (docs/simulator.md, "Bounded memory (session 32)").

use std::collections::VecDeque;

/// The default issue window in placed instructions: the same size as the default lookahead
/// window (`DEFAULT_WINDOW`), so the scheduler considers the instructions it can see.
pub const DEFAULT_ISSUE_WINDOW: usize = super::DEFAULT_WINDOW;

/// Checks an issue-window size ([`super::RunOptions::issue_window`], `--issue-window`): 1 to
/// `MAX_WINDOW` instructions, as the lookahead window is checked. At 0 no instruction could
/// be dispatched; above the bound the window's dispatch times alone would take GBs.
pub fn check_issue_window(size: usize) -> Result<(), crate::error::SimError> {
    super::lookahead::check_length("issue_window", size)
}

/// Dispatch times of the last `W` placed instructions.
#[derive(Debug)]
pub struct IssueWindow {
    size: usize,
    /// Dispatch times in program order; the front is the instruction `W` places back once
    /// the window is full.
    starts: VecDeque<f64>,
    /// Instructions placed since the horizon was last computed.
    since: usize,
}

impl IssueWindow {
    /// A window of `size` instructions (at least one).
    pub fn new(size: usize) -> Self {
        Self {
            size: size.max(1),
            starts: VecDeque::new(),
            since: 0,
        }
    }

    /// The earliest cycle the next instruction may be dispatched: the dispatch time of the
    /// instruction `W` places before it (0 while fewer than `W` were placed).
    pub fn floor(&self) -> f64 {
        if self.starts.len() == self.size {
            self.starts.front().copied().unwrap_or(0.0)
        } else {
            0.0
        }
    }

    /// Records the next instruction's dispatch time (at least [`IssueWindow::floor`]).
    /// Returns a new horizon every `W / 16` instructions (at least every one), `None` in
    /// between: the caller retires the intervals that end before it.
    pub fn push(&mut self, start: f64) -> Option<f64> {
        if self.starts.len() == self.size {
            self.starts.pop_front();
        }
        self.starts.push_back(start);
        self.since += 1;
        if self.since < (self.size / 16).max(1) {
            return None;
        }
        self.since = 0;
        Some(self.horizon())
    }

    /// A lower bound on every future instruction's dispatch time, and so on every future
    /// reservation: the earliest dispatch time of the last `W` instructions (0 while fewer
    /// than `W` were placed). Instruction `q >= p` (with `p` the next) has floor
    /// `start(q - W)`, and following `q - W`, `q - 2W`, ... back lands on one of the last `W`.
    pub fn horizon(&self) -> f64 {
        if self.starts.len() < self.size {
            return 0.0;
        }
        self.starts.iter().copied().fold(f64::INFINITY, f64::min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_is_the_dispatch_time_w_places_back() {
        let mut w = IssueWindow::new(3);
        assert_eq!(w.floor(), 0.0);
        for s in [5.0, 2.0, 9.0] {
            w.push(s);
        }
        assert_eq!(w.floor(), 5.0);
        assert_eq!(w.horizon(), 2.0);
        w.push(6.0);
        assert_eq!(w.floor(), 2.0);
        w.push(7.0);
        assert_eq!(w.floor(), 9.0);
        assert_eq!(w.horizon(), 6.0);
    }

    #[test]
    fn no_horizon_before_the_window_fills() {
        let mut w = IssueWindow::new(32);
        for i in 0..31 {
            if let Some(h) = w.push(100.0 + i as f64) {
                assert_eq!(h, 0.0);
            }
        }
        assert_eq!(w.horizon(), 0.0);
        w.push(200.0);
        assert_eq!(w.horizon(), 100.0);
    }
}
