//! Prefetch (`schedule.prefetch = D`): every load or seed expansion of a key or plaintext is
//! moved up to `D` instructions earlier than the policy placed it, so its transfer is queued
//! on the DMA ahead of the compute that precedes its consumer rather than just before the
//! consumer (the engine issues off-chip transfers in stream order, so a load placed earlier
//! starts as soon as the queue is free). A load never moves above an instruction it depends
//! on (an earlier reader or writer of the buffer it writes), and loads keep their order with
//! each other. The cost is residency: a prefetched limb occupies the scratchpad for longer,
//! and the engine may evict it before its use (a second fetch). 0 turns it off (the default).

use super::graph::Graph;
use tessera_backend::trace::Op;
use tessera_backend::Kind;

/// Whether node `k` is a key or plaintext fetch (a ciphertext input is not prefetched: it is
/// a temporary that would occupy the scratchpad).
fn prefetchable(g: &Graph<'_>, k: u32) -> bool {
    let n = g.node(k);
    n.is_source()
        && n.instr().is_some_and(|i| {
            matches!(i.op, Op::Load | Op::ExpandSeed) && i.kind != Some(Kind::Ciphertext)
        })
}

/// `order` with every key and plaintext fetch moved up to `distance` places earlier (see the
/// module doc).
pub fn prefetch(g: &Graph<'_>, order: Vec<u32>, distance: usize) -> Vec<u32> {
    if distance == 0 {
        return order;
    }
    let mut pos = vec![0usize; g.len()];
    for (p, &k) in order.iter().enumerate() {
        pos[k as usize] = p;
    }
    // Sort keys: (slot, 0) for a moved fetch, (slot, 1) for the rest; a moved fetch goes
    // just before the node at its slot, after everything it depends on.
    let mut last_fetch = 0usize;
    let mut keyed: Vec<(usize, u8, u32)> = Vec::with_capacity(order.len());
    for (p, &k) in order.iter().enumerate() {
        if prefetchable(g, k) {
            let after_preds = g
                .node(k)
                .preds
                .iter()
                .map(|&q| pos[q as usize] + 1)
                .max()
                .unwrap_or(0);
            let slot = p.saturating_sub(distance).max(after_preds).max(last_fetch);
            last_fetch = slot;
            keyed.push((slot, 0, k));
        } else {
            keyed.push((p, 1, k));
        }
    }
    keyed.sort_by_key(|&(s, c, _)| (s, c));
    keyed.into_iter().map(|(_, _, k)| k).collect()
}
