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

/// What one recorded instruction saw: per source buffer and limb, the write it read; per
/// destination limb, the write it followed; the span path around it.
struct Seen {
    reads: HashMap<(u64, usize), Option<u64>>,
    prev: HashMap<usize, Option<u64>>,
    spans: Vec<(String, usize)>,
}

/// Per (buffer, limb), the instruction (`seq`) that last wrote it, and per buffer its limbs.
#[derive(Default)]
struct Writes {
    writer: HashMap<(u64, usize), u64>,
    limbs: HashMap<u64, Vec<usize>>,
}

fn seen(recorded: &[Instr]) -> Result<HashMap<u64, Seen>, String> {
    let mut w = Writes::default();
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut out = HashMap::new();
    for i in recorded {
        match i.op {
            Op::Begin => open.push((i.name.clone().unwrap_or_default(), i.level.unwrap_or(0))),
            Op::End => {
                open.pop()
                    .ok_or_else(|| format!("seq {}: end without begin", i.seq))?;
            }
            _ => {
                let mut reads = HashMap::new();
                for &s in i.srcs.iter() {
                    for &l in w.limbs.get(&s).into_iter().flatten() {
                        reads.insert((s, l), w.writer.get(&(s, l)).copied());
                    }
                }
                let d = i.dst.unwrap_or(u64::MAX);
                let prev = i
                    .limbs
                    .iter()
                    .map(|&l| (l, w.writer.get(&(d, l)).copied()))
                    .collect();
                let s = Seen {
                    reads,
                    prev,
                    spans: open.clone(),
                };
                if out.insert(i.seq, s).is_some() {
                    return Err(format!("seq {} appears twice in the recording", i.seq));
                }
                if let Some(d) = i.dst {
                    for &l in i.limbs.iter() {
                        w.writer.insert((d, l), i.seq);
                    }
                    w.limbs.insert(d, i.limbs.to_vec());
                }
            }
        }
    }
    Ok(out)
}

/// Multiply-add units of work of a stream by operation: limbs, times the input limbs for a
/// BConv (every output limb reads every input limb). Joins (see [`check_tiled`]) are not
/// work. The limb split must leave these unchanged.
pub fn tiled_work(instrs: &[Instr], base: u64) -> HashMap<Op, u64> {
    let mut limbs: HashMap<u64, usize> = HashMap::new();
    let mut work = HashMap::new();
    for i in instrs
        .iter()
        .filter(|i| !matches!(i.op, Op::Begin | Op::End))
    {
        let join = is_join(i, base) || is_stage(i, base);
        if !join {
            let per = if i.op == Op::Bconv {
                i.srcs
                    .iter()
                    .map(|s| limbs.get(s).copied().unwrap_or(0))
                    .sum::<usize>()
            } else {
                1
            };
            *work.entry(i.op).or_insert(0) += (i.limbs.len() * per) as u64;
        }
        if let Some(d) = i.dst {
            limbs.insert(d, i.limbs.len());
        }
    }
    work
}

/// A staged BConv input ([`super::tiling::Share`]): a `concat` carrying a BConv mode into a
/// tile id.
fn is_stage(i: &Instr, base: u64) -> bool {
    crate::engine::is_stage(i) && i.dst.is_some_and(|d| d >= base)
}

/// A join of tiles back into a recorded buffer: a `concat` of tile ids into a recorded id.
fn is_join(i: &Instr, base: u64) -> bool {
    i.op == Op::Concat
        && i.dst.is_some_and(|d| d < base)
        && !i.srcs.is_empty()
        && i.srcs.iter().all(|&s| s >= base)
}

/// `Ok` when `scheduled` (a limb-tiled and reordered stream whose tile buffers have ids at or
/// above `base`, [`super::tiling::split`]) computes what `recorded` does: the same work
/// ([`tiled_work`]); every recorded instruction's destination limbs covered by its tiles
/// (the instructions with its `seq`) exactly once, each tile the recorded operation with its
/// sources' tiles; every limb a tile reads seeing the write the recorded instruction saw and
/// every limb it writes following the same earlier write; each tile of a limb-parallel
/// operation reading its own limbs of every source that had them; balanced markers and the
/// recorded span path around every tile. Joins (`concat`s of a buffer's tiles into the
/// buffer) move no data between limbs and must reassemble the tiles' limbs exactly. A staged
/// BConv input (a `concat` carrying the BConv's mode, with the BConv's `seq`) must sit in the
/// BConv's spans, hold every input limb the recorded BConv read, each as the write it saw
/// (checked when staged: the tiles read the staged copy, not the buffer).
pub fn check_tiled(recorded: &[Instr], scheduled: &[Instr], base: u64) -> Result<(), String> {
    if tiled_work(recorded, base) != tiled_work(scheduled, base) {
        return Err(format!(
            "different work: {:?}, recorded {:?}",
            tiled_work(scheduled, base),
            tiled_work(recorded, base)
        ));
    }
    let facts = seen(recorded)?;
    let by_seq: HashMap<u64, &Instr> = recorded
        .iter()
        .filter(|i| !matches!(i.op, Op::Begin | Op::End))
        .map(|i| (i.seq, i))
        .collect();
    let mut origin: HashMap<u64, u64> = HashMap::new();
    let orig = |origin: &HashMap<u64, u64>, b: u64| -> Result<u64, String> {
        if b < base {
            Ok(b)
        } else {
            origin
                .get(&b)
                .copied()
                .ok_or_else(|| format!("tile {b} read before it was written"))
        }
    };
    let mut w = Writes::default();
    let mut covered: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut staged = std::collections::HashSet::new();
    for i in scheduled {
        match i.op {
            Op::Begin => {
                open.push((i.name.clone().unwrap_or_default(), i.level.unwrap_or(0)));
                continue;
            }
            Op::End => {
                open.pop()
                    .ok_or_else(|| format!("seq {}: end without begin", i.seq))?;
                continue;
            }
            _ => {}
        }
        let at = format!("seq {} ({})", i.seq, i.op.name());
        if is_join(i, base) {
            let d = i.dst.expect("a join has a destination");
            let mut limbs = Vec::new();
            for &s in i.srcs.iter() {
                if orig(&origin, s)? != d {
                    return Err(format!("{at}: joins tile {s} of another buffer into {d}"));
                }
                limbs.extend(w.limbs.get(&s).into_iter().flatten().copied());
            }
            limbs.sort_unstable();
            if limbs != *i.limbs {
                return Err(format!("{at}: joins limbs {limbs:?} as {:?}", &i.limbs[..]));
            }
            w.limbs.insert(d, limbs);
            continue;
        }
        if is_stage(i, base) {
            let d = i.dst.expect("a staging has a destination");
            let r = by_seq
                .get(&i.seq)
                .filter(|r| r.op == Op::Bconv)
                .ok_or_else(|| format!("{at}: stages the input of no recorded BConv"))?;
            let f = &facts[&i.seq];
            if f.spans != open {
                return Err(format!(
                    "{at}: staged inside spans {open:?}, recorded {:?}",
                    f.spans
                ));
            }
            let mut limbs = Vec::new();
            for &s in i.srcs.iter() {
                let o = orig(&origin, s)?;
                if !r.srcs.contains(&o) {
                    return Err(format!("{at}: stages {o}, not the BConv's input"));
                }
                for &l in w.limbs.get(&s).into_iter().flatten() {
                    let was = f.reads.get(&(o, l));
                    if was.is_none_or(|was| w.writer.get(&(o, l)).copied() != *was) {
                        return Err(format!("{at}: stages limb {l} of {o} as another write"));
                    }
                    limbs.push(l);
                }
                origin.insert(d, o);
            }
            limbs.sort_unstable();
            let mut had: Vec<usize> = f.reads.keys().map(|&(_, l)| l).collect();
            had.sort_unstable();
            if limbs != *i.limbs || limbs != had {
                return Err(format!(
                    "{at}: stages limbs {limbs:?} as {:?}, recorded {had:?}",
                    &i.limbs[..]
                ));
            }
            w.limbs.insert(d, limbs);
            staged.insert(d);
            continue;
        }
        let r = by_seq
            .get(&i.seq)
            .ok_or_else(|| format!("{at}: no recorded instruction"))?;
        let f = &facts[&i.seq];
        let same = Instr {
            dst: r.dst,
            srcs: r.srcs.clone(),
            limbs: r.limbs.clone(),
            ..i.clone()
        };
        if same != **r {
            return Err(format!("{at}: not the recorded operation"));
        }
        if f.spans != open {
            return Err(format!(
                "{at}: inside spans {open:?}, recorded {:?}",
                f.spans
            ));
        }
        // Sources: tiles (or whole buffers) of the recorded sources, read as recorded.
        let mut read: HashMap<u64, Vec<usize>> = HashMap::new();
        for &s in i.srcs.iter() {
            let o = orig(&origin, s)?;
            if !r.srcs.contains(&o) {
                return Err(format!("{at}: reads {o}, not a recorded source"));
            }
            for &l in w.limbs.get(&s).into_iter().flatten() {
                let was = f
                    .reads
                    .get(&(o, l))
                    .ok_or_else(|| format!("{at}: reads limb {l} of {o}, not recorded"))?;
                if !staged.contains(&s) && w.writer.get(&(o, l)).copied() != *was {
                    return Err(format!(
                        "{at}: limb {l} of {o} sees write {:?}, recorded {was:?}",
                        w.writer.get(&(o, l))
                    ));
                }
                read.entry(o).or_default().push(l);
            }
        }
        let needs_all = i.op == Op::Bconv;
        for &o in r.srcs.iter() {
            let had: Vec<usize> = f
                .reads
                .keys()
                .filter(|(b, _)| *b == o)
                .map(|&(_, l)| l)
                .collect();
            let got = read.get(&o).map(Vec::as_slice).unwrap_or(&[]);
            let need: Vec<usize> = if needs_all {
                had
            } else {
                i.limbs
                    .iter()
                    .copied()
                    .filter(|l| had.contains(l))
                    .collect()
            };
            if let Some(l) = need.iter().find(|l| !got.contains(l)) {
                return Err(format!("{at}: does not read limb {l} of source {o}"));
            }
        }
        // Destination: a tile of the recorded destination, its limbs once each.
        if let Some(d) = i.dst {
            let o = if d < base {
                d
            } else {
                *origin.entry(d).or_insert(r.dst.unwrap_or(u64::MAX))
            };
            if Some(o) != r.dst {
                return Err(format!("{at}: writes {o}, recorded {:?}", r.dst));
            }
            for &l in i.limbs.iter() {
                let was = f
                    .prev
                    .get(&l)
                    .ok_or_else(|| format!("{at}: writes limb {l}, not recorded"))?;
                if w.writer.get(&(o, l)).copied() != *was {
                    return Err(format!(
                        "{at}: limb {l} follows write {:?}, recorded {was:?}",
                        w.writer.get(&(o, l))
                    ));
                }
                w.writer.insert((o, l), i.seq);
            }
            w.limbs.insert(d, i.limbs.to_vec());
        }
        let c = covered.entry(i.seq).or_default();
        for &l in i.limbs.iter() {
            if c.contains(&l) {
                return Err(format!("{at}: limb {l} computed twice"));
            }
            c.push(l);
        }
    }
    if !open.is_empty() {
        return Err(format!("{} span(s) left open", open.len()));
    }
    for (seq, r) in &by_seq {
        let mut c = covered
            .remove(seq)
            .ok_or_else(|| format!("seq {seq} ({}): missing", r.op.name()))?;
        c.sort_unstable();
        let mut want = r.limbs.to_vec();
        want.sort_unstable();
        if c != want && !(want.is_empty() && c.is_empty()) {
            return Err(format!(
                "seq {seq} ({}): tiles cover limbs {c:?}, recorded {want:?}",
                r.op.name()
            ));
        }
    }
    Ok(())
}
