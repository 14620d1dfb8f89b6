//! Checks that a scheduled stream means what the recorded one did: the same instructions
//! (the same multiset of work), every read seeing the same write, every write following the
//! same earlier write of its buffer, balanced markers, and every instruction inside spans of
//! the same names and levels.

use std::collections::HashMap;
use tessera_backend::trace::{Instr, Op};

/// Per instruction (by `seq`): the writer each source sees, the previous writer of its
/// destination, and the names and levels of the spans around it.
type Facts = HashMap<u64, (Vec<Option<u64>>, Option<u64>, Vec<(String, usize)>)>;

fn facts(instrs: &[Instr]) -> Result<Facts, String> {
    let mut writer: HashMap<u64, u64> = HashMap::new();
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut out = Facts::new();
    for i in instrs {
        match i.op {
            Op::Begin => open.push((i.name.clone().unwrap_or_default(), i.level.unwrap_or(0))),
            Op::End => {
                open.pop()
                    .ok_or_else(|| format!("seq {}: end without begin", i.seq))?;
            }
            _ => {
                let reads = i.srcs.iter().map(|s| writer.get(s).copied()).collect();
                let prev = i.dst.and_then(|d| writer.get(&d).copied());
                if out.insert(i.seq, (reads, prev, open.clone())).is_some() {
                    return Err(format!("seq {} appears twice", i.seq));
                }
                if let Some(d) = i.dst {
                    writer.insert(d, i.seq);
                }
            }
        }
    }
    if !open.is_empty() {
        return Err(format!("{} span(s) left open", open.len()));
    }
    Ok(out)
}

/// Primary functions by (operation, limbs): the work a stream does.
pub fn work(instrs: &[Instr]) -> HashMap<(Op, usize), u64> {
    let mut w = HashMap::new();
    for i in instrs
        .iter()
        .filter(|i| !matches!(i.op, Op::Begin | Op::End))
    {
        *w.entry((i.op, i.limbs.len())).or_insert(0) += 1;
    }
    w
}

/// `Ok` when `scheduled` is a valid schedule of `recorded` (see the module doc); otherwise
/// the first difference found.
pub fn check_equivalent(recorded: &[Instr], scheduled: &[Instr]) -> Result<(), String> {
    if work(recorded) != work(scheduled) {
        return Err("different work (primary functions by operation and limbs)".into());
    }
    let a = facts(recorded)?;
    let b = facts(scheduled)?;
    if a.len() != b.len() {
        return Err(format!("{} instructions, recorded {}", b.len(), a.len()));
    }
    let by_seq: HashMap<u64, &Instr> = recorded.iter().map(|i| (i.seq, i)).collect();
    for i in scheduled
        .iter()
        .filter(|i| !matches!(i.op, Op::Begin | Op::End))
    {
        if by_seq.get(&i.seq) != Some(&i) {
            return Err(format!("seq {}: not the recorded instruction", i.seq));
        }
        let (x, y) = (&a[&i.seq], &b[&i.seq]);
        if x.0 != y.0 {
            return Err(format!(
                "seq {} ({}): its sources see writes {:?}, recorded {:?}",
                i.seq,
                i.op.name(),
                y.0,
                x.0
            ));
        }
        if x.1 != y.1 {
            return Err(format!(
                "seq {} ({}): follows write {:?} of its destination, recorded {:?}",
                i.seq,
                i.op.name(),
                y.1,
                x.1
            ));
        }
        if x.2 != y.2 {
            return Err(format!(
                "seq {} ({}): inside spans {:?}, recorded {:?}",
                i.seq,
                i.op.name(),
                y.2,
                x.2
            ));
        }
    }
    Ok(())
}
