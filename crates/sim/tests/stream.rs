//! The streaming engine (issue 25 item 1): with the default lookahead window it schedules
//! every built-in workload exactly as the whole-stream engine does (a window as long as the
//! stream), and with a tiny window it still runs, with the same work and bounded changes.

use tessera_backend::trace::Instr;
use tessera_programs::workloads::{record, WorkloadSpec, WORKLOADS};
use tessera_sim::engine::{run_stream, run_with, RunOptions, Schedule, DEFAULT_WINDOW};
use tessera_sim::machine::Machine;
use tessera_sim::SimError;

/// The machines whose options change what the engine looks ahead for: ARK (plain), REED and
/// CiFHER (limb streaming, seeded keys), H3 (seeded keys) and H3's HBM variant (I/O dies).
const MACHINES: &[&str] = &["ark", "reed", "cifher", "h3", "h3-hbm"];

fn workload(name: &str) -> Vec<Instr> {
    let params = if name == "bootstrap" {
        "test-boot"
    } else {
        "test-small"
    };
    record(&WorkloadSpec::new(name, params)).unwrap().instrs
}

/// A schedule with its spans kept (`keep_slots`), so that they can be compared too.
fn with_window(m: &Machine, instrs: &[Instr], warm: bool, window: usize) -> Schedule {
    let opts = RunOptions {
        warm,
        window: Some(window),
        keep_slots: true,
        ..Default::default()
    };
    run_with(m, instrs, &opts).unwrap()
}

/// Every figure of two schedules, bit for bit.
fn assert_same(a: &Schedule, b: &Schedule, what: &str) {
    assert_eq!(a.cycles.to_bits(), b.cycles.to_bits(), "{what}: cycles");
    assert_eq!(a.busy, b.busy, "{what}: busy");
    assert_eq!(a.offchip_bytes, b.offchip_bytes, "{what}: off-chip");
    assert_eq!(a.offchip_by_kind, b.offchip_by_kind, "{what}: by kind");
    assert_eq!(a.noc_bytes, b.noc_bytes, "{what}: NoC");
    assert_eq!(a.io_noc_bytes, b.io_noc_bytes, "{what}: I/O NoC");
    assert_eq!(a.rf_bytes, b.rf_bytes, "{what}: RF");
    assert_eq!(a.peak_onchip_bytes, b.peak_onchip_bytes, "{what}: peak");
    assert_eq!(a.overflow_bytes, b.overflow_bytes, "{what}: overflow");
    assert_eq!(a.instructions, b.instructions, "{what}: instructions");
    assert_eq!(a.spans, b.spans, "{what}: spans");
    assert_eq!(a.growth_by_op, b.growth_by_op, "{what}: growth");
}

/// The default window covers every buffer's live range in these workloads, so the schedule
/// equals the whole-stream one on every machine, cold and warm; so does a window just
/// longer than the stream's longest live range would, and the stream fed one instruction
/// at a time from an iterator (as a recorder feeds it).
#[test]
fn the_default_window_equals_the_whole_stream_on_every_workload() {
    for name in WORKLOADS {
        let instrs = workload(name);
        assert!(instrs.len() < DEFAULT_WINDOW, "{name}: {}", instrs.len());
        for arch in MACHINES {
            let m = Machine::load(arch).unwrap();
            for warm in [false, true] {
                let whole = with_window(&m, &instrs, warm, instrs.len().max(1));
                let what = format!("{name} on {arch} (warm {warm})");
                assert_same(
                    &with_window(&m, &instrs, warm, DEFAULT_WINDOW),
                    &whole,
                    &what,
                );
            }
        }
    }
}

/// The longest live range of a stream: from a buffer's first occurrence to its last, and
/// between consecutive loads of one host object.
fn longest_live_range(instrs: &[Instr]) -> usize {
    let mut first = std::collections::HashMap::new();
    let mut longest = 0;
    for (pos, i) in instrs.iter().enumerate() {
        for &id in i.srcs.iter().chain(i.dst.iter()) {
            let f = *first.entry(id).or_insert(pos);
            longest = longest.max(pos - f);
        }
        if let Some(h) = i.host {
            let f = first.entry(u64::MAX - h).or_insert(pos);
            longest = longest.max(pos - *f);
            *f = pos;
        }
    }
    longest
}

/// Exactness is a property of the window, not of its default: a window one instruction
/// longer than the longest live range of `test-boot`'s bootstrapping (far shorter than the
/// stream) gives the whole-stream schedule.
#[test]
fn a_window_longer_than_every_live_range_is_exact() {
    let instrs = workload("bootstrap");
    let w = longest_live_range(&instrs) + 1;
    assert!(w < instrs.len(), "{w} of {}", instrs.len());
    for arch in MACHINES {
        let m = Machine::load(arch).unwrap();
        let whole = with_window(&m, &instrs, false, instrs.len());
        assert_same(&with_window(&m, &instrs, false, w), &whole, arch);
    }
}

/// A window far shorter than the live ranges still runs: uses beyond it count as never, so
/// keys and plaintexts are evicted first and reloaded, and buffers are retired early and
/// brought back as spilled data when read again. The work is the same (instructions,
/// spans); the makespan only moves within the stated bound (docs/simulator.md lists the
/// ratios: about 12x at a window of one instruction on ARK, where every reuse is a miss).
#[test]
fn a_tiny_window_runs_within_stated_bounds() {
    let instrs = workload("bootstrap");
    for arch in ["ark", "reed"] {
        let m = Machine::load(arch).unwrap();
        let whole = with_window(&m, &instrs, false, instrs.len());
        for w in [1, 16, 256, 4096] {
            let s = with_window(&m, &instrs, false, w);
            let what = format!("{arch}, window {w}");
            assert_eq!(s.instructions, whole.instructions, "{what}");
            assert_eq!(s.spans.len(), whole.spans.len(), "{what}");
            let ratio = s.cycles / whole.cycles;
            let traffic = s.offchip_bytes / whole.offchip_bytes;
            eprintln!("{what}: cycles x{ratio:.3}, off-chip bytes x{traffic:.3}");
            assert!((0.5..=32.0).contains(&ratio), "{what}: cycles x{ratio}");
            assert!(traffic.is_finite() && traffic > 0.0, "{what}");
        }
    }
}

/// A source error ends the run with that error; a window of 0 is refused by name.
#[test]
fn stream_errors_are_typed() {
    let m = Machine::load("ark").unwrap();
    let instrs = workload("hadd");
    let mut items: Vec<Result<Instr, SimError>> = instrs.iter().cloned().map(Ok).collect();
    items.insert(3, Err(SimError::Trace("line 5: broken".into())));
    let e = run_stream(&m, items, &RunOptions::default()).unwrap_err();
    assert!(e.to_string().contains("line 5: broken"), "{e}");
    let opts = RunOptions {
        window: Some(0),
        ..Default::default()
    };
    let e = run_with(&m, &instrs, &opts).unwrap_err();
    assert!(e.to_string().contains("window"), "{e}");
}

/// Spans are kept only for timelines (`keep_slots`), so that a long program's memory does
/// not grow with its HE operations; the per-operation breakdown and every other figure are
/// the same without them.
#[test]
fn spans_are_kept_only_for_timelines() {
    let instrs = workload("bootstrap");
    let m = Machine::load("ark").unwrap();
    let kept = with_window(&m, &instrs, false, DEFAULT_WINDOW);
    let plain = run_with(&m, &instrs, &RunOptions::default()).unwrap();
    assert!(!kept.spans.is_empty() && plain.spans.is_empty());
    assert!(plain.slots.is_empty() && !plain.growth_by_op.is_empty());
    assert_same(
        &Schedule {
            spans: kept.spans.clone(),
            ..plain
        },
        &kept,
        "ark bootstrap, spans kept or not",
    );
}
