//! The scheduling pass (issue 25 item 2): its schedules of recorded traces are valid (every
//! read sees the same write, the same work, markers balanced around the same instructions),
//! its checker rejects invalid ones, its working-set policy lowers the live bytes where
//! program order keeps many temporaries (a heuristic: on recorded traces it may not), and
//! machines name the policy in their files.

use std::collections::HashMap;
use tessera_backend::trace::{Instr, Op};
use tessera_backend::Kind;
use tessera_programs::workloads::{record, WorkloadSpec};
use tessera_sim::machine::Machine;
use tessera_sim::schedule::program_order::ProgramOrder;
use tessera_sim::schedule::verify::check_equivalent;
use tessera_sim::schedule::working_set::WorkingSet;
use tessera_sim::schedule::{apply, reorder, PolicyName, DEFAULT_WINDOW};

/// The most limbs of temporaries live at once when `instrs` run in order (a buffer lives
/// from its write to its last use; keys and plaintexts are not counted).
fn peak_live_limbs(instrs: &[Instr]) -> usize {
    let mut last: HashMap<u64, usize> = HashMap::new();
    for (p, i) in instrs.iter().enumerate() {
        for &b in i.srcs.iter().chain(i.dst.iter()) {
            last.insert(b, p);
        }
    }
    let mut live: HashMap<u64, usize> = HashMap::new();
    let mut hosts: std::collections::HashSet<u64> = Default::default();
    let (mut now, mut peak) = (0usize, 0usize);
    for (p, i) in instrs.iter().enumerate() {
        if let Some(d) = i.dst {
            let host = (matches!(i.op, Op::Load | Op::ExpandSeed)
                && i.kind != Some(Kind::Ciphertext))
                || (i.op == Op::SelectLimbs && i.srcs.first().is_some_and(|s| hosts.contains(s)));
            if host {
                hosts.insert(d);
            }
            if !host && !live.contains_key(&d) && !i.srcs.contains(&d) {
                live.insert(d, i.limbs.len());
                now += i.limbs.len();
            }
        }
        peak = peak.max(now);
        for &b in i.srcs.iter().chain(i.dst.iter()) {
            if last.get(&b) == Some(&p) {
                now -= live.remove(&b).unwrap_or(0);
            }
        }
    }
    peak
}

fn bootstrap() -> Vec<Instr> {
    record(&WorkloadSpec::new("bootstrap", "test-boot"))
        .unwrap()
        .instrs
}

fn helr() -> Vec<Instr> {
    let o = tessera_programs::RunOptions {
        params: Some("test-program".into()),
        size: Some(16),
        iterations: Some(1),
        ..Default::default()
    };
    tessera_programs::record("helr", &o, false).unwrap().instrs
}

#[test]
fn working_set_schedules_of_recorded_traces_are_valid() {
    for (name, t) in [("bootstrap", bootstrap()), ("helr", helr())] {
        for window in [DEFAULT_WINDOW, 1000, 7] {
            let out = reorder(&mut WorkingSet::default(), &t, window);
            check_equivalent(&t, &out).unwrap_or_else(|e| panic!("{name}, window {window}: {e}"));
        }
        let out = reorder(&mut WorkingSet::default(), &t, DEFAULT_WINDOW);
        assert_ne!(out, t, "{name}: the working-set policy moved nothing");
        // Program order through the same machinery gives back the recorded primaries.
        let same = reorder(&mut ProgramOrder, &t, 1000);
        check_equivalent(&t, &same).unwrap();
        let prim = |v: &[Instr]| -> Vec<u64> {
            v.iter()
                .filter(|i| !matches!(i.op, Op::Begin | Op::End))
                .map(|i| i.seq)
                .collect()
        };
        assert_eq!(prim(&same), prim(&t), "{name}");
    }
}

fn ct(seq: u64, op: Op, dst: u64, srcs: &[u64]) -> Instr {
    Instr::on_tower(seq, 4096, op, dst, srcs, 0, Kind::Ciphertext)
}

/// Eight products of one input, each stored: program order computes all eight before the
/// stores; the working-set policy stores each as soon as it exists.
fn fan_out() -> Vec<Instr> {
    let mut t = vec![ct(0, Op::Load, 1, &[])];
    let mut seq = 1;
    for k in 0..8u64 {
        t.push(ct(seq, Op::Mul, 10 + k, &[1, 1]));
        seq += 1;
    }
    for k in 0..8u64 {
        t.push(ct(seq, Op::Store, 10 + k, &[10 + k]));
        seq += 1;
    }
    t
}

#[test]
fn working_set_lowers_live_limbs_and_spills() {
    let t = fan_out();
    let out = reorder(&mut WorkingSet::default(), &t, DEFAULT_WINDOW);
    check_equivalent(&t, &out).unwrap();
    assert_eq!(peak_live_limbs(&t), 9);
    assert_eq!(peak_live_limbs(&out), 2);
    // On a scratchpad of four limbs, program order spills and the scheduled stream does not.
    // ARK: one shared scratchpad, no limb streaming; room for four limbs.
    let ark = Machine::load("ark").unwrap();
    let mb = 4.0 * 4096.0 * ark.word_bytes() / 1048576.0;
    let m = ark
        .with_setting("memory.scratchpad.capacity_mb", &mb.to_string())
        .unwrap();
    let before = tessera_sim::simulate(&m, "fan-out", &t).unwrap();
    let ws = m.with_setting("schedule.policy", "working-set").unwrap();
    let after = tessera_sim::simulate(&ws, "fan-out", &t).unwrap();
    assert!(
        after.offchip_bytes < before.offchip_bytes,
        "{} bytes off chip scheduled, {} in program order",
        after.offchip_bytes,
        before.offchip_bytes
    );
}

#[test]
fn the_checker_rejects_broken_schedules() {
    let t = fan_out();
    // A store before its product: the store reads nothing written.
    let mut bad = t.clone();
    bad.swap(1, 9);
    assert!(check_equivalent(&t, &bad).unwrap_err().contains("seq"));
    // A dropped instruction is different work.
    assert!(check_equivalent(&t, &t[1..]).is_err());
    // Markers moved so an instruction leaves its span.
    let mut spans = vec![Instr::marker(100, 4096, Some("A"))];
    spans.extend(t.iter().cloned());
    let mut end = Instr::marker(101, 4096, None);
    end.level = None;
    spans.push(end.clone());
    let mut moved = spans.clone();
    let e = moved.pop().unwrap();
    moved.insert(3, e);
    assert!(check_equivalent(&spans, &moved)
        .unwrap_err()
        .contains("spans"));
}

#[test]
fn program_order_is_the_default_and_the_policy_is_a_setting() {
    let t = fan_out();
    for name in ["ark", "reed", "cifher", "h3", "h3-hbm"] {
        let m = Machine::load(name).unwrap();
        assert_eq!(m.schedule.policy, PolicyName::ProgramOrder, "{name}");
        assert!(matches!(apply(&m, &t), std::borrow::Cow::Borrowed(_)));
    }
    let m = Machine::load("ark").unwrap();
    let ws = m.with_setting("schedule.policy", "working-set").unwrap();
    assert_eq!(ws.schedule.policy, PolicyName::WorkingSet);
    let e = m
        .with_setting("schedule.policy", "greedy")
        .unwrap_err()
        .to_string();
    assert!(e.contains("working-set"), "{e}");
    let e = m
        .with_setting("schedule.window", "0")
        .unwrap_err()
        .to_string();
    assert!(e.contains("schedule.window"), "{e}");
    assert!(PolicyName::parse("greedy")
        .unwrap_err()
        .to_string()
        .contains("program-order"));
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../configs/ark.toml"
    ))
    .unwrap();
    let po = "policy = \"program-order\"";
    assert!(text.contains(po), "ark.toml names its schedule");
    let with = text.replace(po, "policy = \"working-set\"\nwindow = 4096");
    let m = Machine::from_toml(&with, "test").unwrap();
    assert_eq!(m.schedule.policy, PolicyName::WorkingSet);
    assert_eq!(m.schedule.window, 4096);
    let bad = text.replace(po, "policy = \"greedy\"");
    let e = Machine::from_toml(&bad, "test").unwrap_err().to_string();
    assert!(e.contains("program-order"), "{e}");
}

/// Full size (ignored by default; docs/simulator.md "Scheduling pass"): the working-set
/// schedule of H3's bootstrapping (N = 2^16) is valid (and its peak live limbs printed).
#[test]
#[ignore]
fn working_set_schedule_of_h3_bootstrapping_is_valid() {
    let t = record(&WorkloadSpec::new("bootstrap", "h3"))
        .unwrap()
        .instrs;
    let out = reorder(&mut WorkingSet::default(), &t, DEFAULT_WINDOW);
    check_equivalent(&t, &out).unwrap();
    eprintln!(
        "h3 bootstrapping: {} instructions, peak live limbs {} scheduled, {} program order",
        t.len(),
        peak_live_limbs(&out),
        peak_live_limbs(&t)
    );
}
