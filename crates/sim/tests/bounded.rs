//! Bounded memory (session 32): the issue window (`engine/issue.rs`) bounds the reservation
//! table independently of the program's length, and where it holds no instruction back the
//! schedule is the unbounded one, bit for bit.

use tessera_backend::trace::{Instr, Srcs};
use tessera_programs::workloads::{record, WorkloadSpec};
use tessera_sim::engine::{run_with, RunOptions, Schedule, MAX_WINDOW};
use tessera_sim::machine::Machine;

/// `test-boot`'s bootstrapping, recorded once.
fn bootstrapping() -> Vec<Instr> {
    record(&WorkloadSpec::new("bootstrap", "test-boot"))
        .unwrap()
        .instrs
}

/// `copies` bootstrappings one after the other: fresh buffer ids per copy (offset by the
/// copy's number times the largest id), the same keys and plaintexts, `seq` renumbered.
fn repeated(one: &[Instr], copies: usize) -> Vec<Instr> {
    let ids = one
        .iter()
        .flat_map(|i| i.srcs.iter().copied().chain(i.dst))
        .max()
        .unwrap_or(0)
        + 1;
    let mut out = Vec::with_capacity(one.len() * copies);
    for c in 0..copies as u64 {
        for i in one {
            let mut j = i.clone();
            j.seq = out.len() as u64;
            j.dst = i.dst.map(|d| d + c * ids);
            j.srcs = Srcs::from(i.srcs.iter().map(|s| s + c * ids).collect::<Vec<_>>());
            out.push(j);
        }
    }
    out
}

fn with_issue_window(m: &Machine, instrs: &[Instr], issue_window: usize) -> Schedule {
    let opts = RunOptions {
        issue_window: Some(issue_window),
        // The lookahead covers the whole stream, so only the issue window differs.
        window: Some(instrs.len().max(1)),
        keep_slots: true,
        ..Default::default()
    };
    run_with(m, instrs, &opts).unwrap()
}

/// Everything the issue window cannot change: residency runs in program order, and busy
/// cycles are sums of durations, so only placements in time (makespan, spans, growth) may
/// move when an instruction is held.
fn assert_same_work(a: &Schedule, b: &Schedule, what: &str) {
    assert_eq!(a.busy, b.busy, "{what}: busy");
    assert_eq!(a.offchip_bytes, b.offchip_bytes, "{what}: off-chip");
    assert_eq!(a.offchip_by_kind, b.offchip_by_kind, "{what}: by kind");
    assert_eq!(a.noc_bytes, b.noc_bytes, "{what}: NoC");
    assert_eq!(a.rf_bytes, b.rf_bytes, "{what}: RF");
    assert_eq!(a.peak_onchip_bytes, b.peak_onchip_bytes, "{what}: peak");
    assert_eq!(a.overflow_bytes, b.overflow_bytes, "{what}: overflow");
    assert_eq!(a.instructions, b.instructions, "{what}: instructions");
}

/// Every placement too, bit for bit.
fn assert_same(a: &Schedule, b: &Schedule, what: &str) {
    assert_same_work(a, b, what);
    assert_eq!(a.cycles.to_bits(), b.cycles.to_bits(), "{what}: cycles");
    assert_eq!(a.spans, b.spans, "{what}: spans");
    assert_eq!(a.slots, b.slots, "{what}: slots");
    assert_eq!(a.growth_by_op, b.growth_by_op, "{what}: growth");
}

/// The reservation table's peak does not grow with the program under an issue window (it
/// does without one: the check can fail), and every instruction is still scheduled.
#[test]
fn the_reservation_table_is_bounded_independently_of_program_length() {
    let one = bootstrapping();
    let m = Machine::load("ark").unwrap();
    let w = 1024;
    let peak = |copies: usize, issue: usize| {
        let instrs = repeated(&one, copies);
        let s = with_issue_window(&m, &instrs, issue);
        eprintln!(
            "{copies} bootstrappings, issue window {issue}: peak intervals {}, holds {}, {} instructions",
            s.peak_intervals, s.window_holds, s.instructions
        );
        s.peak_intervals
    };
    let (two, six) = (peak(2, w), peak(6, w));
    assert!(
        six as f64 <= 1.1 * two as f64,
        "window {w}: {six} intervals at 6 copies against {two} at 2"
    );
    let (two, six) = (peak(2, MAX_WINDOW), peak(6, MAX_WINDOW));
    assert!(six as f64 > 2.0 * two as f64, "unbounded: {six} vs {two}");
}

/// At any issue window the work (bytes, busy cycles, residency) is the unbounded run's; when
/// no instruction was held the whole schedule is, bit for bit; the makespan of a held run
/// stays within a factor of two. The default window holds nothing on the bootstrapping, on
/// any machine.
#[test]
fn without_holds_the_schedule_is_the_unbounded_one() {
    let one = bootstrapping();
    let instrs = repeated(&one, 2);
    for arch in ["ark", "reed", "cifher", "h3-hbm"] {
        let m = Machine::load(arch).unwrap();
        let free = with_issue_window(&m, &instrs, MAX_WINDOW);
        assert_eq!(free.window_holds, 0, "{arch}");
        let default = run_with(
            &m,
            &instrs,
            &RunOptions {
                window: Some(instrs.len()),
                keep_slots: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(default.window_holds, 0, "{arch}, default window");
        assert_same(&default, &free, &format!("{arch}, default window"));
        let mut held_any = false;
        for w in [64, 1024, instrs.len() / 2] {
            let s = with_issue_window(&m, &instrs, w);
            let what = format!("{arch}, issue window {w}");
            eprintln!(
                "{what}: holds {}, cycles x{:.4}, peak intervals {} (unbounded {})",
                s.window_holds,
                s.cycles / free.cycles,
                s.peak_intervals,
                free.peak_intervals
            );
            assert_same_work(&s, &free, &what);
            if s.window_holds == 0 {
                assert_same(&s, &free, &what);
                assert!(s.peak_intervals <= free.peak_intervals, "{what}");
            } else {
                held_any = true;
                let ratio = s.cycles / free.cycles;
                assert!((0.5..=2.0).contains(&ratio), "{what}: cycles x{ratio}");
            }
        }
        // A window of 64 instructions is far shorter than a bootstrapping's parallelism.
        assert!(held_any, "{arch}: no window held anything");
    }
}

/// An issue window of 0 or beyond the largest is refused by name.
#[test]
fn the_issue_window_is_checked() {
    let m = Machine::load("ark").unwrap();
    for bad in [0, MAX_WINDOW + 1] {
        let opts = RunOptions {
            issue_window: Some(bad),
            ..Default::default()
        };
        let e = run_with(&m, &[], &opts).unwrap_err().to_string();
        assert!(e.contains("issue_window"), "{e}");
    }
}
