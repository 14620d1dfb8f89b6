//! HE-operation markers through the scheduling pass: the tree of recorded spans, and their
//! re-emission around reordered instructions so that each instruction sits inside spans of
//! the same names and levels as it was recorded in.

use tessera_backend::trace::{Instr, Op};

/// One recorded span (a `begin` ... `end` pair).
#[derive(Debug)]
struct Span {
    parent: Option<u32>,
    begin: Instr,
    /// Nodes (instructions, or spans with content) directly inside it so far.
    content: usize,
}

/// Every span of the stream, built as the stream is read.
#[derive(Debug, Default)]
pub struct SpanTree {
    spans: Vec<Span>,
    open: Vec<u32>,
}

/// What one instruction of the stream is, for the graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A primary function inside this innermost span (`None`: outside every span).
    Content(Option<u32>),
    /// The end of a span that enclosed no instruction: kept as a node of its own.
    Empty(u32),
    /// Any other marker.
    Marker,
}

impl SpanTree {
    /// Reads the next instruction of the stream.
    pub fn step(&mut self, ins: &Instr) -> Step {
        match ins.op {
            Op::Begin => {
                self.spans.push(Span {
                    parent: self.open.last().copied(),
                    begin: ins.clone(),
                    content: 0,
                });
                self.open.push(self.spans.len() as u32 - 1);
                Step::Marker
            }
            Op::End => {
                let Some(s) = self.open.pop() else {
                    // Unbalanced: the trace reader refuses these; ignore it here.
                    return Step::Marker;
                };
                if let Some(&p) = self.open.last() {
                    self.spans[p as usize].content += 1;
                }
                if self.spans[s as usize].content == 0 {
                    Step::Empty(s)
                } else {
                    Step::Marker
                }
            }
            _ => {
                if let Some(&p) = self.open.last() {
                    self.spans[p as usize].content += 1;
                }
                Step::Content(self.open.last().copied())
            }
        }
    }

    /// The span enclosing `s`.
    pub fn parent(&self, s: u32) -> Option<u32> {
        self.spans[s as usize].parent
    }

    /// The recorded `begin` of `s`.
    pub fn begin(&self, s: u32) -> &Instr {
        &self.spans[s as usize].begin
    }

    /// An `end` for `s`.
    pub fn end(&self, s: u32) -> Instr {
        Instr {
            op: Op::End,
            name: None,
            level: None,
            ..self.spans[s as usize].begin.clone()
        }
    }

    /// `s` and its ancestors, outermost first.
    fn chain(&self, s: Option<u32>) -> Vec<u32> {
        let mut v = Vec::new();
        let mut cur = s;
        while let Some(c) = cur {
            v.push(c);
            cur = self.parent(c);
        }
        v.reverse();
        v
    }
}

/// The spans open in the emitted stream.
#[derive(Debug, Default)]
pub struct Emitter {
    open: Vec<u32>,
}

impl Emitter {
    /// Makes `target` the innermost open span (`None`: no span open): closes the open spans
    /// that are not its ancestors and opens its ancestors that are not open.
    pub fn enter(&mut self, tree: &SpanTree, target: Option<u32>, out: &mut Vec<Instr>) {
        if self.open.last().copied() == target {
            return;
        }
        let chain = tree.chain(target);
        let common = self
            .open
            .iter()
            .zip(&chain)
            .take_while(|(a, b)| a == b)
            .count();
        while self.open.len() > common {
            let s = self.open.pop().expect("non-empty");
            out.push(tree.end(s));
        }
        for &s in &chain[common..] {
            out.push(tree.begin(s).clone());
            self.open.push(s);
        }
    }
}
