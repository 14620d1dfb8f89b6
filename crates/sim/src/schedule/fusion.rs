//! Fusion of element-wise chains (`schedule.fuse = true`): when an element-wise instruction's
//! result has exactly one reader in the window and that reader is element-wise too, the
//! reader is placed right after it (with the loads it still needs), so the pair runs as one
//! chain through the register files: the engine's operator chaining (ark.md V-C, Fig. 2a)
//! keeps a result that only the next compute instruction reads out of the scratchpad, so a
//! fused chain does not round-trip it. Chains extend transitively. Off by default.

use super::graph::Graph;
use tessera_backend::trace::Op;

fn elementwise(op: Op) -> bool {
    matches!(
        op,
        Op::Add | Op::Sub | Op::Neg | Op::Mul | Op::MulAcc | Op::AddScalar | Op::MulScalar
    )
}

/// The one element-wise reader of `k`'s result, if `k` is element-wise and has exactly one
/// reader in the window.
fn sole_reader(g: &Graph<'_>, k: u32) -> Option<u32> {
    let ins = g.node(k).instr().filter(|i| elementwise(i.op))?;
    let d = ins.dst?;
    let mut readers = g.node(k).succs.iter().copied().filter(|&s| {
        g.node(s)
            .instr()
            .is_some_and(|i| i.srcs.contains(&d) && i.dst != Some(d))
    });
    let r = readers.next()?;
    if readers.next().is_some() {
        return None;
    }
    g.node(r).instr().filter(|i| elementwise(i.op)).map(|_| r)
}

/// `order` with element-wise chains made adjacent (see the module doc). Every node keeps its
/// dependences: a reader moves up only when all it depends on, but fetches it may pull along,
/// is already placed.
pub fn fuse(g: &Graph<'_>, order: &[u32]) -> Vec<u32> {
    let mut placed = vec![false; g.len()];
    let mut out = Vec::with_capacity(order.len());
    for &k in order {
        if placed[k as usize] {
            continue;
        }
        placed[k as usize] = true;
        out.push(k);
        let mut cur = k;
        while let Some(r) = sole_reader(g, cur) {
            if placed[r as usize] {
                break;
            }
            let pulls: Vec<u32> = g
                .node(r)
                .preds
                .iter()
                .copied()
                .filter(|&p| !placed[p as usize])
                .collect();
            let ready = pulls.iter().all(|&p| {
                g.node(p).is_source() && g.node(p).preds.iter().all(|&q| placed[q as usize])
            });
            if !ready {
                break;
            }
            for p in pulls {
                placed[p as usize] = true;
                out.push(p);
            }
            placed[r as usize] = true;
            out.push(r);
            cur = r;
        }
    }
    out
}
