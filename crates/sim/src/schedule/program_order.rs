//! `program-order`: the recorded order (every window's nodes as they came).

use super::graph::Graph;
use super::SchedulePolicy;

/// The identity schedule. [`super::apply`] does not even build a graph for it; through
/// [`super::reorder`] it round-trips the stream (markers included), which the tests use.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProgramOrder;

impl SchedulePolicy for ProgramOrder {
    fn name(&self) -> &'static str {
        "program-order"
    }

    fn order(&mut self, g: &Graph<'_>) -> Vec<u32> {
        (0..g.len() as u32).collect()
    }
}
