//! The dataflow graph of one window: a node per instruction (and per span that enclosed no
//! instruction), an edge for every dependence on buffer ids: read-after-write (a source and
//! the write that produced it), write-after-write and write-after-read (an in-place write and
//! the earlier writes and reads of its buffer). Dependences on instructions of earlier
//! windows need no edge: windows run in order.

use std::collections::HashMap;
use tessera_backend::trace::{Instr, Op};

/// What a node stands for.
#[derive(Clone, Copy, Debug)]
pub enum Item<'a> {
    /// A primary function.
    Instr(&'a Instr),
    /// A span that enclosed no instruction (kept so its markers are not lost).
    EmptySpan(u32),
}

/// One node.
#[derive(Clone, Debug)]
pub struct Node<'a> {
    /// The instruction or empty span.
    pub item: Item<'a>,
    /// The innermost span it belongs in.
    pub span: Option<u32>,
    /// Nodes that must come first.
    pub preds: Vec<u32>,
    /// Nodes that must come after.
    pub succs: Vec<u32>,
}

impl Node<'_> {
    /// The instruction, for instruction nodes.
    pub fn instr(&self) -> Option<&Instr> {
        match self.item {
            Item::Instr(i) => Some(i),
            Item::EmptySpan(_) => None,
        }
    }

    /// A load or seed expansion: no sources, so it may run whenever its consumer wants it.
    pub fn is_source(&self) -> bool {
        self.instr()
            .is_some_and(|i| matches!(i.op, Op::Load | Op::ExpandSeed) && i.srcs.is_empty())
    }
}

/// The dataflow graph of a window (nodes in stream order).
#[derive(Debug, Default)]
pub struct Graph<'a> {
    nodes: Vec<Node<'a>>,
}

impl<'a> Graph<'a> {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether it has no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Node `k`.
    pub fn node(&self, k: u32) -> &Node<'a> {
        &self.nodes[k as usize]
    }

    /// Every node, in stream order.
    pub fn nodes(&self) -> &[Node<'a>] {
        &self.nodes
    }

    /// Appends an instruction inside span `span`.
    pub fn push_instr(&mut self, ins: &'a Instr, span: Option<u32>) {
        self.nodes.push(Node {
            item: Item::Instr(ins),
            span,
            preds: Vec::new(),
            succs: Vec::new(),
        });
    }

    /// Appends an empty span (inside `parent`): it follows the node before it.
    pub fn push_empty_span(&mut self, s: u32, parent: Option<u32>) {
        self.nodes.push(Node {
            item: Item::EmptySpan(s),
            span: parent,
            preds: Vec::new(),
            succs: Vec::new(),
        });
    }

    /// Builds the edges (after the last push).
    pub fn link(&mut self) {
        let mut last_write: HashMap<u64, u32> = HashMap::new();
        let mut reads_since: HashMap<u64, Vec<u32>> = HashMap::new();
        for k in 0..self.nodes.len() {
            let mut preds = Vec::new();
            match self.nodes[k].item {
                Item::EmptySpan(_) => {
                    if k > 0 {
                        preds.push(k as u32 - 1);
                    }
                }
                Item::Instr(ins) => {
                    for s in ins.srcs.iter() {
                        if let Some(&w) = last_write.get(s) {
                            preds.push(w);
                        }
                    }
                    if let Some(d) = ins.dst {
                        if let Some(&w) = last_write.get(&d) {
                            preds.push(w);
                        }
                        if let Some(r) = reads_since.remove(&d) {
                            preds.extend(r);
                        }
                    }
                    for &s in ins.srcs.iter() {
                        if Some(s) != ins.dst {
                            reads_since.entry(s).or_default().push(k as u32);
                        }
                    }
                    if let Some(d) = ins.dst {
                        last_write.insert(d, k as u32);
                    }
                }
            }
            preds.retain(|&p| p != k as u32);
            preds.sort_unstable();
            preds.dedup();
            for &p in &preds {
                self.nodes[p as usize].succs.push(k as u32);
            }
            self.nodes[k].preds = preds;
        }
    }

    /// Drops every node (the next window starts empty).
    pub fn clear(&mut self) {
        self.nodes.clear();
    }
}
