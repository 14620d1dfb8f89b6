//! The engine on hand-made traces with known answers, the machine description's checks, and
//! a small bootstrapping trace cross-checked against the trace's own closed-form counts.

use tessera_backend::trace::{Instr, Op, TraceCounts};
use tessera_programs::workloads::{record, WorkloadSpec};
use tessera_sim::engine::run;
use tessera_sim::machine::Machine;
use tessera_sim::report::area_power;

const N: usize = 4096;
/// One limb of 4096 64-bit words.
const LIMB: f64 = 4096.0 * 8.0;

/// ARK with one cluster, no pipeline fills, an unbounded scratchpad port and a 1000 B/cycle
/// off-chip channel without latency: every answer below is a small sum.
fn machine() -> Machine {
    let mut m = Machine::load("ark").unwrap();
    for (k, v) in [
        ("chip.clusters", "1"),
        ("units.ntt.latency_cycles", "0"),
        ("units.bconv.latency_cycles", "0"),
        ("memory.scratchpad.bandwidth_gbs", "1e12"),
        ("memory.offchip.latency_ns", "0.0"),
    ] {
        m = m.with_setting(k, v).unwrap();
    }
    m
}

fn ins(seq: u64, op: Op, dst: u64, srcs: &[u64], limbs: usize) -> Instr {
    Instr {
        seq,
        op,
        dst: Some(dst),
        srcs: srcs.into(),
        limbs: (0..limbs).collect(),
        n: N,
        kind: Some(tessera_backend::Kind::Ciphertext),
        galois: None,
        mode: None,
        name: None,
        level: None,
        host: None,
    }
}

#[test]
fn a_dependency_chain_adds_up() {
    // load (32768 B at 1000 B/cycle) -> NTT -> INTT -> NTT (4096 / 256 = 16 cycles each).
    let t = vec![
        ins(0, Op::Load, 1, &[], 1),
        ins(1, Op::Ntt, 1, &[1], 1),
        ins(2, Op::Intt, 1, &[1], 1),
        ins(3, Op::Ntt, 1, &[1], 1),
    ];
    let s = run(&machine(), &t, false).unwrap();
    assert!((s.cycles - (32.768 + 48.0)).abs() < 1e-6, "{}", s.cycles);
    assert_eq!(s.offchip_bytes, LIMB);
}

#[test]
fn a_fork_runs_on_two_units_at_once() {
    // After the load, an automorphism (AutoU, 16 cycles) and an add (two MADUs, 8 cycles)
    // read the same buffer and overlap.
    let t = vec![
        ins(0, Op::Load, 1, &[], 1),
        ins(1, Op::Automorphism, 2, &[1], 1),
        ins(2, Op::Add, 3, &[1, 1], 1),
    ];
    let m = machine();
    let s = run(&m, &t, false).unwrap();
    assert!((s.cycles - (32.768 + 16.0)).abs() < 1e-6, "{}", s.cycles);
    use tessera_sim::mapping::{Layout, Resource};
    let lay = Layout::of(&m);
    assert!((s.busy[Resource::Auto(0).index(&lay)] - 16.0).abs() < 1e-9);
    assert!((s.busy[Resource::Madu(0).index(&lay)] - 8.0).abs() < 1e-9);
}

#[test]
fn ready_work_fills_an_earlier_gap_of_its_unit() {
    // Two loads back to back (32.768 cycles each); the NTT of the second comes first in
    // program order. The NTT of the first is ready at 32.768 and fits in the NTTU's idle
    // slot before the other NTT (65.536 to 81.536), as a static list scheduler places it:
    // the program ends at 81.536, not 97.536 as in strict program order.
    let t = vec![
        ins(0, Op::Load, 1, &[], 1),
        ins(1, Op::Load, 2, &[], 1),
        ins(2, Op::Ntt, 2, &[2], 1),
        ins(3, Op::Ntt, 1, &[1], 1),
    ];
    let s = run(&machine(), &t, false).unwrap();
    assert!(
        (s.cycles - (2.0 * 32.768 + 16.0)).abs() < 1e-6,
        "{}",
        s.cycles
    );
    // An in-place write does not overtake an earlier reader of the old value: the add reads
    // buffer 1 only once buffer 2 is loaded (65.536); the in-place NTT of buffer 1, ready
    // at 32.768, would otherwise run before it and overwrite what the add reads.
    let t = vec![
        ins(0, Op::Load, 1, &[], 1),
        ins(1, Op::Load, 2, &[], 1),
        ins(2, Op::Add, 3, &[1, 2], 1),
        ins(3, Op::Ntt, 1, &[1], 1),
    ];
    let s = run(&machine(), &t, true).unwrap();
    let add = s.slots.iter().find(|x| x.op == "add").unwrap().start;
    let ntt = s.slots.iter().find(|x| x.op == "ntt").unwrap().start;
    assert!((add - 2.0 * 32.768).abs() < 1e-6, "add at {add}");
    assert!(ntt >= add, "ntt at {ntt}, add at {add}");
    // Off-chip transfers leave in program order (a DMA queue): the last load does not take
    // the channel's idle time during the four NTTs (32.768 to 96.768) ahead of the store.
    let t = vec![
        ins(0, Op::Load, 1, &[], 1),
        ins(1, Op::Ntt, 1, &[1], 1),
        ins(2, Op::Intt, 1, &[1], 1),
        ins(3, Op::Ntt, 1, &[1], 1),
        ins(4, Op::Intt, 1, &[1], 1),
        ins(5, Op::Store, 2, &[1], 1),
        ins(6, Op::Load, 3, &[], 1),
    ];
    let s = run(&machine(), &t, true).unwrap();
    let store = s.slots.iter().find(|x| x.op == "store").unwrap();
    let load = s.slots.iter().rfind(|x| x.op == "load").unwrap().start;
    assert!(store.start > 32.768 * 2.0, "store at {}", store.start);
    assert!(
        load >= store.end - 1e-9,
        "load at {load}, store ends {}",
        store.end
    );
}

/// Warm timing (`RunOptions::warm`): the input ciphertexts loaded before the first compute
/// instruction and the stores after the last move nothing off-chip; a key loaded in between
/// still does.
#[test]
fn warm_runs_keep_inputs_and_results_on_chip() {
    use tessera_sim::engine::{run_with, RunOptions};
    let mut key = ins(2, Op::Load, 3, &[], 1);
    key.kind = Some(tessera_backend::Kind::EvalKey);
    key.host = Some(7);
    let t = vec![
        ins(0, Op::Load, 1, &[], 2),
        ins(1, Op::Ntt, 1, &[1], 2),
        key,
        ins(3, Op::Mul, 2, &[1, 3], 1),
        ins(4, Op::Store, 4, &[2], 1),
    ];
    let m = machine();
    let cold = run(&m, &t, false).unwrap();
    assert_eq!(cold.offchip_bytes, 4.0 * LIMB);
    let opts = RunOptions {
        keep_slots: false,
        warm: true,
        ..Default::default()
    };
    let warm = run_with(&m, &t, &opts).unwrap();
    assert_eq!(warm.offchip_bytes, LIMB);
    assert_eq!(warm.offchip_by_kind["evalkey"], LIMB);
    assert!(warm.cycles < cold.cycles);
    // The tensor workload is the four products of HMult and nothing else.
    let w = record(&WorkloadSpec::new("tensor", "test-small")).unwrap();
    let ops: Vec<_> = w
        .instrs
        .iter()
        .filter(|i| !matches!(i.op, Op::Load | Op::Store | Op::Begin | Op::End))
        .map(|i| i.op)
        .collect();
    assert_eq!(ops, [Op::Mul, Op::Mul, Op::MulAcc, Op::Mul]);
}

#[test]
fn loads_are_bound_by_offchip_bandwidth() {
    // Two loads of 10 limbs each queue on the one channel: 2 x 327.68 cycles.
    let t = vec![ins(0, Op::Load, 1, &[], 10), ins(1, Op::Load, 2, &[], 10)];
    let m = machine();
    let s = run(&m, &t, false).unwrap();
    assert!((s.cycles - 655.36).abs() < 1e-6, "{}", s.cycles);
    let r = tessera_sim::report::report(&m, "loads", &s);
    assert!((r.utilization["offchip"] - 1.0).abs() < 1e-9);
    // Twice the bandwidth halves it.
    let m2 = m
        .with_setting("memory.offchip.bandwidth_gbs", "2000.0")
        .unwrap();
    assert!((run(&m2, &t, false).unwrap().cycles - 327.68).abs() < 1e-6);
}

#[test]
fn a_full_scratchpad_spills_the_value_needed_last() {
    // Room for three limbs. A, B, C are loaded; D = A + C (read twice later, so it is
    // stored) needs a fourth slot, so B (next used last) is spilled, then reloaded for B + D.
    let m = machine()
        .with_setting("memory.scratchpad.capacity_mb", "0.09375")
        .unwrap();
    let t = vec![
        ins(0, Op::Load, 1, &[], 1),
        ins(1, Op::Load, 2, &[], 1),
        ins(2, Op::Load, 3, &[], 1),
        ins(3, Op::Add, 4, &[1, 3], 1),
        ins(4, Op::Add, 5, &[2, 4], 1),
        ins(5, Op::Add, 6, &[4, 5], 1),
    ];
    let s = run(&m, &t, false).unwrap();
    assert_eq!(s.offchip_by_kind["spill"], LIMB);
    assert_eq!(s.offchip_by_kind["reload"], LIMB);
    assert_eq!(s.offchip_bytes, 5.0 * LIMB);
    assert_eq!(s.overflow_bytes, 0.0);
    // With room for everything nothing spills.
    let s = run(&machine(), &t, false).unwrap();
    assert_eq!(s.offchip_bytes, 3.0 * LIMB);
}

#[test]
fn a_reload_is_prefetched_behind_its_spill() {
    // Room for two limbs. Loading C spills A (next used last); D = B + C is ready at
    // 3 x 32.768 + 32.768 (A's spill) + 8. A's reload for E = A + D queues right behind C's
    // load (131.072) instead of waiting for D, so E ends at 131.072 + 32.768 + 8.
    let m = machine()
        .with_setting("memory.scratchpad.capacity_mb", "0.0625")
        .unwrap();
    let t = vec![
        ins(0, Op::Load, 1, &[], 1),
        ins(1, Op::Load, 2, &[], 1),
        ins(2, Op::Load, 3, &[], 1),
        ins(3, Op::Add, 4, &[2, 3], 1),
        ins(4, Op::Add, 5, &[1, 4], 1),
        ins(5, Op::Store, 6, &[5], 1),
    ];
    let s = run(&m, &t, true).unwrap();
    assert_eq!(s.offchip_by_kind["spill"], LIMB);
    let e = s.slots.iter().find(|x| x.seq == 4).unwrap();
    assert!(
        (e.start - 4.0 * 32.768).abs() < 1e-6,
        "reload at {}",
        e.start
    );
    assert!(
        (e.end - (5.0 * 32.768 + 8.0)).abs() < 1e-6,
        "E ends at {}",
        e.end
    );
}

#[test]
fn a_spill_takes_only_the_limbs_needed() {
    // Room for six limbs. X (4 limbs) and Y (2) fill it; Z = Y + Y (2 limbs, read twice, so
    // stored) needs two more, so X (next used last) gives up two of its four limbs, and only
    // those two come back when X is read.
    let m = machine()
        .with_setting("memory.scratchpad.capacity_mb", "0.1875")
        .unwrap();
    let t = vec![
        ins(0, Op::Load, 1, &[], 4),
        ins(1, Op::Load, 2, &[], 2),
        ins(2, Op::Add, 3, &[2, 2], 2),
        ins(3, Op::Add, 4, &[1, 3], 4),
        ins(4, Op::Add, 5, &[4, 3], 4),
    ];
    let s = run(&m, &t, false).unwrap();
    assert_eq!(s.offchip_by_kind["spill"], 2.0 * LIMB);
    assert_eq!(s.offchip_by_kind["reload"], 2.0 * LIMB);
    assert_eq!(s.offchip_bytes, 10.0 * LIMB);
    assert_eq!(s.overflow_bytes, 0.0);
}

/// A source the previous instruction also read is still in the RFs: of two products that
/// share an operand (the two halves of a key-switch inner product share the digits), the
/// second reads only its other operand from the scratchpad. Port accesses: 3 + 2 against
/// 3 + 3 when the operands differ.
#[test]
fn a_source_the_previous_instruction_read_comes_from_the_rfs() {
    use tessera_sim::mapping::{Layout, Resource};
    let port = |second: u64| {
        let mut t = vec![
            ins(0, Op::Load, 1, &[], 1),
            ins(1, Op::Load, 2, &[], 1),
            ins(2, Op::Load, 3, &[], 1),
            ins(3, Op::Load, 4, &[], 1),
            ins(4, Op::Mul, 5, &[1, 2], 1),
            ins(5, Op::Mul, 6, &[second, 3], 1),
        ];
        t.push(ins(6, Op::Store, 7, &[5], 1));
        t.push(ins(7, Op::Store, 8, &[6], 1));
        let m = machine()
            .with_setting("memory.scratchpad.bandwidth_gbs", "1000.0")
            .unwrap();
        let s = run(&m, &t, false).unwrap();
        s.busy[Resource::Scratchpad(0).index(&Layout::of(&m))]
    };
    let (shared, distinct) = (port(1), port(4));
    assert!(
        (shared / distinct - 5.0 / 6.0).abs() < 1e-9,
        "{shared} vs {distinct}"
    );
}

#[test]
fn a_result_chained_to_its_only_consumer_takes_no_scratchpad() {
    // Room for two limbs: A and B are loaded, C = A + B streams through the RFs into
    // D = C * C, so nothing spills.
    let m = machine()
        .with_setting("memory.scratchpad.capacity_mb", "0.0625")
        .unwrap();
    let t = vec![
        ins(0, Op::Load, 1, &[], 1),
        ins(1, Op::Load, 2, &[], 1),
        ins(2, Op::Add, 3, &[1, 2], 1),
        ins(3, Op::Mul, 4, &[3, 3], 1),
    ];
    let s = run(&m, &t, false).unwrap();
    assert_eq!(s.offchip_bytes, 2.0 * LIMB);
    assert_eq!(s.overflow_bytes, 0.0);
}

#[test]
fn a_multiply_add_pair_takes_one_madu_pass() {
    // P = A * B whose only consumer is S = P + C: one multiply-add on the MADUs (8 cycles for
    // one limb on two 256-lane MADUs), not a multiply and then an add (16 cycles).
    let t = vec![
        ins(0, Op::Load, 1, &[], 1),
        ins(1, Op::Load, 2, &[], 1),
        ins(2, Op::Load, 3, &[], 1),
        ins(3, Op::Mul, 4, &[1, 2], 1),
        ins(4, Op::Add, 5, &[4, 3], 1),
    ];
    let m = machine();
    let s = run(&m, &t, false).unwrap();
    use tessera_sim::mapping::{Layout, Resource};
    let lay = Layout::of(&m);
    assert!((s.busy[Resource::Madu(0).index(&lay)] - 8.0).abs() < 1e-9);
    // A product read twice is not fused: two passes.
    let mut t2 = t.clone();
    t2.push(ins(5, Op::Add, 6, &[4, 5], 1));
    let s = run(&m, &t2, false).unwrap();
    assert!((s.busy[Resource::Madu(0).index(&lay)] - 24.0).abs() < 1e-9);
    // A product by a per-limb constant fuses the same way (a * c + b).
    let mut t3 = t.clone();
    t3[3] = ins(3, Op::MulScalar, 4, &[1], 1);
    let s = run(&m, &t3, false).unwrap();
    assert!((s.busy[Resource::Madu(0).index(&lay)] - 8.0).abs() < 1e-9);
}

#[test]
fn repeated_loads_of_one_object_hit_on_chip() {
    let mut a = ins(0, Op::Load, 1, &[], 4);
    a.kind = Some(tessera_backend::Kind::EvalKey);
    a.host = Some(7);
    let mut b = ins(1, Op::Load, 2, &[], 3);
    b.kind = Some(tessera_backend::Kind::EvalKey);
    b.host = Some(7);
    let s = run(&machine(), &[a, b], false).unwrap();
    assert_eq!(
        s.offchip_bytes,
        4.0 * LIMB,
        "the second load's limbs are resident"
    );
}

#[test]
fn malformed_traces_are_errors() {
    let t = vec![ins(0, Op::Ntt, 1, &[9], 1)];
    let e = run(&machine(), &t, false).unwrap_err().to_string();
    assert!(e.contains("never written"), "{e}");
    let mut begin = ins(0, Op::Begin, 0, &[], 0);
    begin.dst = None;
    let e = run(&machine(), &[begin], false).unwrap_err().to_string();
    assert!(e.contains("never ended"), "{e}");
}

#[test]
fn area_and_power_follow_the_unit_counts() {
    let ark = Machine::load("ark").unwrap();
    let (a4, p4) = area_power(&ark);
    assert!((a4 - 418.3).abs() / 418.3 < 0.01 && (p4 - 281.3).abs() < 0.01);
    let (a8, p8) = area_power(&ark.with_setting("chip.clusters", "8").unwrap());
    // Per-cluster lines double; the scratchpad (512 MB) and the HBM stacks do not.
    let per_cluster = 9.3 + 57.2 + 20.6 + 8.9 + 42.8 + 20.6;
    assert!((a8 - a4 - per_cluster).abs() < 1e-9, "{a8}");
    assert!(p8 > p4);
}

#[test]
fn machine_descriptions_are_checked() {
    let e = Machine::load("no-such-machine").unwrap_err().to_string();
    assert!(e.contains("arch") && e.contains("ark"), "{e}");
    let ark = Machine::load("ark").unwrap();
    let e = ark
        .with_setting("chip.clusters", "0")
        .unwrap_err()
        .to_string();
    assert!(e.contains("chip.clusters"), "{e}");
    let e = ark
        .with_setting("chip.nothing", "1")
        .unwrap_err()
        .to_string();
    assert!(e.contains("chip.nothing"), "{e}");
    let e = ark
        .with_setting("chip.clusters", "many")
        .unwrap_err()
        .to_string();
    assert!(e.contains("chip.clusters=many"), "{e}");
    let e = Machine::from_toml("name = 1", "inline")
        .unwrap_err()
        .to_string();
    assert!(e.contains("inline"), "{e}");
}

/// The small bootstrapping trace: with no room on chip every key load misses, so the
/// evaluation-key traffic equals the trace's own count; with ARK's 512 MB, keys are reused
/// across levels and the traffic falls.
#[test]
fn bootstrapping_key_traffic_matches_the_trace_counts() {
    let w = record(&WorkloadSpec::new("bootstrap", "test-boot")).unwrap();
    let counts = TraceCounts::from_instructions(&w.instrs);
    let seeded = Machine::load("ark")
        .unwrap()
        .with_setting("options.seeded_keys", "true")
        .unwrap();
    let tiny = seeded
        .with_setting("memory.scratchpad.capacity_mb", "0.001")
        .unwrap();
    let s = run(&tiny, &w.instrs, false).unwrap();
    assert_eq!(s.offchip_by_kind["evalkey"], counts.key_bytes_loaded as f64);
    let big = run(&seeded, &w.instrs, false).unwrap();
    assert!(big.offchip_by_kind["evalkey"] < s.offchip_by_kind["evalkey"]);
    assert!(big.cycles < s.cycles);
    // ARK without seeds loads the a halves too.
    let unseeded = run(&Machine::load("ark").unwrap(), &w.instrs, false).unwrap();
    assert!(unseeded.offchip_by_kind["evalkey"] > big.offchip_by_kind["evalkey"]);
    // The PRNG runs only with seeds.
    let k = seeded.chip.clusters;
    let lay = tessera_sim::mapping::Layout::of(&seeded);
    let prng: f64 = (0..k)
        .map(|c| big.busy[tessera_sim::mapping::Resource::Prng(c).index(&lay)])
        .sum();
    assert!(prng > 0.0);
}

/// Timeline and plot files are written and parse.
#[test]
fn timeline_and_plot_are_written() {
    let w = record(&WorkloadSpec::new("hmult", "test-small")).unwrap();
    let m = Machine::load("ark").unwrap();
    let s = run(&m, &w.instrs, true).unwrap();
    let dir = std::env::temp_dir();
    let tl = dir.join(format!("tessera-tl-{}.json", std::process::id()));
    let svg = dir.join(format!("tessera-ut-{}.svg", std::process::id()));
    tessera_sim::timeline::write_chrome_trace(&m, &s, tl.to_str().unwrap()).unwrap();
    tessera_sim::timeline::write_utilization_svg(&m, &s, "hmult", svg.to_str().unwrap()).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tl).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    assert!(events.iter().any(|e| e["name"] == "HMultRescale"));
    assert!(events.iter().any(|e| e["name"] == "ntt"));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<polyline"));
    std::fs::remove_file(tl).ok();
    std::fs::remove_file(svg).ok();
}

/// cifher.md Eq. 3 on constructed cases: the broadcast overhead follows from the topology
/// (2 x 2 mesh: all-gather moves 3x what all-to-all does; 4-ring: 2x), and limb
/// duplication is chosen exactly when `l_out - l_in (overhead - 1) > 0`.
#[test]
fn limb_duplication_follows_eq_3() {
    use tessera_sim::mapping::Net;
    // Limb scattering on the 2 x 2 mesh (the default maps dimension-wise).
    let mesh = Machine::load("cifher")
        .unwrap()
        .with_setting("chip.block_rows", "1")
        .unwrap();
    let net = Net::of(&mesh);
    assert!((net.broadcast_overhead() - 3.0).abs() < 1e-12);
    assert!(net.duplication_saving(6, 24) > 0.0); // 24 - 6 * 2 = 12
    assert!(net.duplication_saving(12, 24) == 0.0); // break-even: not taken
    assert!(net.duplication_saving(12, 12) < 0.0);
    let ring = Machine::load("reed").unwrap();
    let rnet = Net::of(&ring);
    assert!((rnet.broadcast_overhead() - 2.0).abs() < 1e-12);
    assert!(rnet.duplication_saving(4, 5) > 0.0);
    // In the engine: a BConv 6 -> 24 duplicates (no output exchange), 12 -> 12 does not.
    let bconv = |l_in: usize, l_out: usize| {
        let mut t = vec![ins(0, Op::Load, 1, &[], l_in)];
        let mut b = ins(1, Op::Bconv, 2, &[1], 0);
        b.limbs = (l_in..l_in + l_out).collect();
        t.push(b);
        let dup = run(&mesh, &t, false).unwrap().noc_bytes;
        let ark = run(
            &mesh.with_setting("chip.policy", "alternating").unwrap(),
            &t,
            false,
        )
        .unwrap()
        .noc_bytes;
        (dup, ark)
    };
    let (dup, ark) = bconv(6, 24);
    assert!(dup < ark, "{dup} {ark}");
    let (dup, ark) = bconv(12, 12);
    assert_eq!(dup, ark);
    // Dimension-wise (2x2-BK-2x1): coefficient clusters of two cores; broadcasting to one
    // other core costs what redistributing does, so Eq. 3 pays for any BConv with outputs.
    let dw = Net::of(&Machine::load("cifher").unwrap());
    assert!((dw.broadcast_overhead() - 2.0).abs() < 1e-12);
}

/// Limb streaming: a chain of limb-wise instructions holds two limbs of each value on chip;
/// a value a BConv reads (it needs every limb of a coefficient) keeps its whole footprint.
#[test]
fn limb_streaming_holds_two_limbs_of_limb_wise_chains() {
    let peak = |streaming: bool, t: &[Instr]| {
        let m = machine()
            .with_setting("options.limb_streaming", &streaming.to_string())
            .unwrap();
        run(&m, t, false).unwrap().peak_onchip_bytes / LIMB
    };
    let mut chain = vec![
        ins(0, Op::Load, 1, &[], 8),
        ins(1, Op::Mul, 2, &[1, 1], 8),
        ins(2, Op::Mul, 3, &[2, 2], 8),
        ins(3, Op::Add, 4, &[3, 2], 8),
    ];
    let mut st = ins(4, Op::Store, 5, &[4], 8);
    st.dst = None;
    chain.push(st);
    let (off, on) = (peak(false, &chain), peak(true, &chain));
    assert!(off >= 16.0, "{off} limbs");
    assert!(on <= 8.0, "{on} limbs");
    // The same chain with a BConv reading value 2: it stays whole.
    let mut b = ins(5, Op::Bconv, 6, &[2], 0);
    b.limbs = (8..12).collect();
    let mut barrier = chain.clone();
    barrier.insert(3, b);
    assert!(peak(true, &barrier) >= 8.0 + 2.0);
}

/// cifher.md IV-C on 16 cores (`cifher-16`, a 4 x 4 mesh): limb scattering (1 x 1 blocks)
/// moves nothing for an NTT and everything a BConv redistributes; coefficient scattering
/// (one 4 x 4 block) the reverse; 2 x 2 blocks move some of both. The work per core is the
/// same limbs x coefficients either way.
#[test]
fn block_clustering_moves_ntt_or_bconv_data() {
    let m = Machine::load("cifher-16")
        .unwrap()
        .with_setting("chip.policy", "alternating")
        .unwrap()
        .with_setting("chip.block_rows", "1")
        .unwrap()
        .with_setting("chip.block_cols", "1")
        .unwrap();
    let with_blocks = |r: &str, c: &str| {
        m.with_setting("chip.block_rows", r)
            .unwrap()
            .with_setting("chip.block_cols", c)
            .unwrap()
    };
    let ntt = vec![ins(0, Op::Load, 1, &[], 16), ins(1, Op::Ntt, 1, &[1], 16)];
    let mut bconv = vec![ins(0, Op::Load, 1, &[], 16)];
    let mut b = ins(1, Op::Bconv, 2, &[1], 0);
    b.limbs = (16..32).collect();
    bconv.push(b);
    // Core-to-core bytes (the loads' way from the I/O dies is counted apart).
    let noc = |m: &Machine, t: &[Instr]| {
        let s = run(m, t, false).unwrap();
        s.noc_bytes - s.io_noc_bytes
    };
    let (limb, block, coeff) = (m.clone(), with_blocks("2", "2"), with_blocks("4", "4"));
    assert_eq!(noc(&limb, &ntt), 0.0);
    assert_eq!(noc(&coeff, &bconv), 0.0);
    let (n_block, n_coeff) = (noc(&block, &ntt), noc(&coeff, &ntt));
    assert!(n_block > 0.0 && n_block < n_coeff, "{n_block} {n_coeff}");
    let (b_limb, b_block) = (noc(&limb, &bconv), noc(&block, &bconv));
    assert!(b_block > 0.0 && b_block < b_limb, "{b_block} {b_limb}");
    // Blocks must tile the mesh, and need a mesh.
    let e = m
        .with_setting("chip.block_rows", "3")
        .unwrap_err()
        .to_string();
    assert!(e.contains("chip.block_rows"), "{e}");
    let e = Machine::load("reed")
        .unwrap()
        .with_setting("chip.block_cols", "2")
        .unwrap_err()
        .to_string();
    assert!(e.contains("mesh"), "{e}");
}

/// Throughput mode: every cluster runs its own task on its slice of the machine (shared
/// bandwidth divided by the clusters), so throughput is clusters tasks per slice time.
#[test]
fn throughput_mode_runs_one_task_per_cluster() {
    let w = record(&WorkloadSpec::new("hmult", "test-small")).unwrap();
    let h3 = Machine::load("h3")
        .unwrap()
        .with_setting("options.synchronous_sharing", "false")
        .unwrap();
    let t = tessera_sim::report::throughput(&h3, &w.label, &w.instrs).unwrap();
    assert_eq!(t.mode, "throughput");
    let one = run(&h3.slice(), &w.instrs, false).unwrap();
    let slice_s = one.cycles / 1e9;
    assert!((t.time_s - slice_s).abs() < 1e-12);
    assert!((t.tasks_per_minute - 16.0 * 60.0 / slice_s).abs() / t.tasks_per_minute < 1e-9);
    // The slice keeps per-tile memories and divides shared ones.
    let ark = Machine::load("ark").unwrap();
    let s = ark.slice();
    assert_eq!(s.chip.clusters, 1);
    assert!((s.memory.offchip.bandwidth_gbs - 250.0).abs() < 1e-9);
    assert_eq!(h3.slice().memory.offchip.bandwidth_gbs, 405.0);
    // Area and peak power stay the whole machine's.
    assert!((t.area_mm2 - 384.0).abs() < 1e-9);
}

/// h3.md 4.2's synchronous sharing: in throughput mode each tile reads 1/16 of a key from its
/// own bank and the pieces are all-gathered on the NoC, so a key load costs each task a
/// sixteenth of the DRAM traffic plus the all-gather on the busiest link, in parallel.
#[test]
fn synchronous_tiles_share_key_loads() {
    let h3 = Machine::load("h3").unwrap();
    assert!(h3.options.synchronous_sharing);
    let mut key = ins(0, Op::Load, 1, &[], 32);
    key.kind = Some(tessera_backend::Kind::EvalKey);
    key.host = Some(7);
    let t = vec![key];
    let shared = tessera_sim::report::throughput(&h3, "key", &t).unwrap();
    let own = tessera_sim::report::throughput(
        &h3.with_setting("options.synchronous_sharing", "false")
            .unwrap(),
        "key",
        &t,
    )
    .unwrap();
    let bytes = 32.0 * N as f64 * h3.word_bytes();
    assert!((own.offchip_bytes - 16.0 * bytes).abs() < 1e-6);
    assert!((shared.offchip_bytes - bytes).abs() < 1e-6);
    // The 8-hop schedule puts at most one block (1/16 of the data) on a link per hop.
    let (busiest, total) = tessera_sim::mapping::Net::of(&h3).all_gather_load();
    assert!(busiest > 0.0 && busiest <= 8.0 / 16.0 + 1e-12, "{busiest}");
    // Every tile receives the 15 blocks it lacks, at least one link crossing each.
    assert!(total >= 15.0 - 1e-9, "{total}");
    let lat = h3.memory.offchip.latency_ns * h3.clock.ghz;
    let dram = bytes / 16.0 / (h3.memory.offchip.bandwidth_gbs / h3.clock.ghz);
    let noc = bytes * busiest / (h3.memory.noc.bandwidth_gbs / h3.clock.ghz);
    let expect = lat + dram.max(noc);
    assert!(
        (shared.time_s * 1e9 - expect).abs() < 1e-6,
        "{} vs {expect}",
        shared.time_s * 1e9
    );
    let own_expect = lat + bytes / (h3.memory.offchip.bandwidth_gbs / h3.clock.ghz);
    assert!((own.time_s * 1e9 - own_expect).abs() < 1e-6);
    assert!((shared.noc_bytes - bytes * total).abs() < 1e-3);
}

/// cifher.md VI-A: HBM data reaches the cores through the I/O dies' edges. On the 2 x 2
/// CiFHER with limb scattering, limb l lives on core l; half of each limb enters from the
/// west die and half from the east one, on its row. Each die edge then carries half of the
/// two limbs of its row, one limb in all: with 10 B/cycle links that edge, not the HBM,
/// sets the time.
#[test]
fn offchip_data_crosses_the_io_die_edges() {
    let mut m = Machine::load("cifher").unwrap();
    for (k, v) in [
        ("chip.block_rows", "1"),
        ("chip.block_cols", "1"),
        ("memory.noc.bandwidth_gbs", "10.0"),
    ] {
        m = m.with_setting(k, v).unwrap();
    }
    assert_eq!(m.memory.offchip.io_dies, 2);
    let limb = N as f64 * 4.0; // 32-bit words
    let mut load = ins(0, Op::Load, 1, &[], 4);
    load.kind = Some(tessera_backend::Kind::Ciphertext);
    let t = vec![load];
    let s = run(&m, &t, false).unwrap();
    let lat = m.memory.offchip.latency_ns * m.clock.ghz;
    assert!(
        (s.cycles - (lat + limb / 10.0)).abs() < 1e-6,
        "{}",
        s.cycles
    );
    // Link-bytes: per limb, one hop from its near die and two from the far one, half each.
    assert!(
        (s.noc_bytes - 4.0 * 1.5 * limb).abs() < 1e-6,
        "{}",
        s.noc_bytes
    );
    assert_eq!(s.io_noc_bytes, s.noc_bytes);
    // Without the dies the HBM (1000 B/cycle) sets the time and the NoC carries nothing.
    let direct = m.with_setting("memory.offchip.io_dies", "0").unwrap();
    let d = run(&direct, &t, false).unwrap();
    assert!(
        (d.cycles - (lat + 4.0 * limb / 1000.0)).abs() < 1e-6,
        "{}",
        d.cycles
    );
    assert_eq!(d.noc_bytes, 0.0);
    // The dies need a mesh and a shared memory.
    let e = m
        .with_setting("memory.offchip.per_cluster", "true")
        .unwrap_err()
        .to_string();
    assert!(e.contains("memory.offchip.io_dies"), "{e}");
}

/// A report says what its energy covers: ARK cites component power, CiFHER only the per-bit
/// energies of its HBM and UCIe links (its energy is exactly those), REED neither.
#[test]
fn energy_scope_follows_what_the_description_cites() {
    use tessera_sim::report::{report, EnergyScope};
    let t = vec![ins(0, Op::Load, 1, &[], 10), ins(1, Op::Ntt, 1, &[1], 10)];
    for (arch, scope) in [
        ("ark", EnergyScope::Full),
        ("cifher", EnergyScope::DataMovement),
        ("reed", EnergyScope::None),
    ] {
        let m = Machine::load(arch).unwrap();
        let r = report(&m, "t", &run(&m, &t, false).unwrap());
        assert_eq!(r.energy_scope, scope, "{arch}");
        if scope == EnergyScope::DataMovement {
            let want = 8e-12
                * (r.offchip_bytes * m.memory.offchip.pj_per_bit
                    + r.noc_bytes * m.memory.noc.pj_per_bit);
            assert!(want > 0.0 && (r.energy_j - want).abs() <= 1e-12 * want);
        }
        if scope == EnergyScope::None {
            assert_eq!(r.energy_j, 0.0);
        }
    }
}

/// h3.md 3.2: the key-switch flow is Case 1 exactly when the SRAM holds 3 l + 2 k residue
/// polynomials.
#[test]
fn keyswitch_flow_switches_at_the_sram_capacity() {
    use tessera_sim::machine::KeySwitchFlow;
    let h3 = Machine::load("h3").unwrap();
    let (l, k, n) = (30usize, 12usize, 65536usize);
    let need_mb = (3 * l + 2 * k) as f64 * n as f64 * 4.5 / 1048576.0;
    let per_tile = |mb: f64| {
        h3.with_setting("memory.scratchpad.capacity_mb", &format!("{}", mb / 16.0))
            .unwrap()
    };
    assert_eq!(h3.keyswitch_flow(l, k, n), KeySwitchFlow::Streamed);
    assert_eq!(
        per_tile(need_mb).keyswitch_flow(l, k, n),
        KeySwitchFlow::OnChip
    );
    assert_eq!(
        per_tile(need_mb * 0.99).keyswitch_flow(l, k, n),
        KeySwitchFlow::Streamed
    );
    assert_eq!(
        per_tile(64.0).keyswitch_flow(l, k, n),
        KeySwitchFlow::OnChip
    );
    // At low levels even 1 MB per tile holds it.
    assert_eq!(h3.keyswitch_flow(2, 3, n), KeySwitchFlow::OnChip);
}

/// Per-bit link and memory energies add to the components' energy.
#[test]
fn per_bit_energies_are_charged() {
    let t = vec![ins(0, Op::Load, 1, &[], 10), ins(1, Op::Ntt, 1, &[1], 10)];
    let m = machine();
    let base = tessera_sim::report::report(&m, "t", &run(&m, &t, false).unwrap());
    let m2 = m.with_setting("memory.offchip.pj_per_bit", "5.0").unwrap();
    let more = tessera_sim::report::report(&m2, "t", &run(&m2, &t, false).unwrap());
    let want = 10.0 * LIMB * 8.0 * 5e-12;
    assert!(
        (more.energy_j - base.energy_j - want).abs() < 1e-15,
        "{}",
        more.energy_j
    );
}

#[test]
fn h3_memory_variants_order_by_offchip_bandwidth() {
    // h3.md 5.3's variants: the same tiles behind two HBM2 stacks (1 TB/s) or four DDR4
    // channels (102.4 GB/s). A key switch streaming its key from off-chip is slower on DDR4.
    let w = record(&WorkloadSpec::new("hmult", "test-medium")).unwrap();
    let time = |arch: &str| {
        let m = Machine::load(arch).unwrap();
        tessera_sim::simulate(&m, &w.label, &w.instrs)
            .unwrap()
            .time_s
    };
    let (hbm, ddr4) = (time("h3-hbm"), time("h3-ddr4"));
    assert!(ddr4 > 2.0 * hbm, "hbm {hbm}, ddr4 {ddr4}");
    // Neither variant has the stacked DRAM's area; their 64 MB of SRAM (16 x 4 MB) is four
    // times H3's 1 MB tile SRAM (16 x 1.87 mm2).
    let (a_h3, _) = area_power(&Machine::load("h3").unwrap());
    let (a_hbm, _) = area_power(&Machine::load("h3-hbm").unwrap());
    let sram = 16.0 * 3.0 * 1.87;
    assert!((a_h3 - a_hbm - 192.0 + sram).abs() < 1e-9, "{a_h3} {a_hbm}");
    for v in ["h3-hbm", "h3-ddr4"] {
        assert_eq!(Machine::load(v).unwrap().scratchpad_mb(), 64.0, "{v}");
    }
}

/// The additive model: a program of one HE operation sums to that operation's warm time,
/// a bootstrapping (many spans) is summed span by span, and unbalanced spans are an error.
#[test]
fn the_sum_of_operations_adds_warm_operation_times() {
    use tessera_sim::additive::sum_of_operations;
    use tessera_sim::engine::{run_with, RunOptions};
    let m = Machine::load("ark").unwrap();
    let w = record(&WorkloadSpec::new("hmult", "test-small")).unwrap();
    let opts = RunOptions {
        keep_slots: false,
        warm: true,
        ..Default::default()
    };
    let warm = run_with(&m, &w.instrs, &opts).unwrap().cycles / 1e9;
    let sum = sum_of_operations(&m, &w.instrs).unwrap();
    assert!((sum - warm).abs() <= 1e-12 + 1e-9 * warm, "{sum} vs {warm}");
    let b = record(&WorkloadSpec::new("bootstrap", "test-boot")).unwrap();
    let sum = sum_of_operations(&m, &b.instrs).unwrap();
    let whole = run(&m, &b.instrs, false).unwrap().cycles / 1e9;
    assert!(sum > 0.0 && whole > 0.0);
    // The breakdown: one entry per span name, counting every outermost span, adding up.
    let by = tessera_sim::additive::operations(&m, &b.instrs).unwrap();
    let spans = |name: &str| {
        let mut depth = 0;
        let mut n = 0;
        for i in &b.instrs {
            match i.op {
                Op::Begin => {
                    depth += 1;
                    if depth == 1 && i.name.as_deref() == Some(name) {
                        n += 1;
                    }
                }
                Op::End => depth -= 1,
                _ => {}
            }
        }
        n
    };
    assert_eq!(by.by_op["HRot"].count, spans("HRot"));
    assert_eq!(by.by_op["HMultRescale"].count, spans("HMultRescale"));
    let parts: f64 = by.by_op.values().map(|o| o.seconds).sum();
    assert!((parts - sum).abs() <= 1e-9 * sum, "{parts} vs {sum}");
    // Unbalanced spans are an error, not a silent sum.
    let mut broken = w.instrs.clone();
    broken.retain(|i| i.op != Op::End);
    assert!(sum_of_operations(&m, &broken).is_err());
}

#[test]
fn keyswitch_ext_is_the_key_switch_without_moddown() {
    // REED's KeySwitch macro-instruction (reed.md Algorithm 3, Appendix): the whole key
    // switch's ModUp and inner product, and then nothing: no ModDown, no addition of c0.
    let compute = |w: &str| -> (Vec<Op>, Vec<usize>) {
        let mut spec = WorkloadSpec::new(w, "test-small");
        spec.dataflow = tessera_ckks::KeySwitchDataflow::Streamed;
        let t = record(&spec).unwrap().instrs;
        let ops = t
            .iter()
            .filter(|i| !matches!(i.op, Op::Load | Op::Store | Op::Begin | Op::End))
            .map(|i| i.op)
            .collect();
        let stored = t
            .iter()
            .filter(|i| i.op == Op::Store)
            .map(|i| i.limbs.len())
            .collect();
        (ops, stored)
    };
    let (ext, ext_out) = compute("keyswitch-ext");
    let (whole, whole_out) = compute("keyswitch");
    assert!(ext.len() < whole.len());
    assert_eq!(
        ext[..],
        whole[..ext.len()],
        "the same ModUp and inner product"
    );
    let rest = &whole[ext.len()..];
    assert!(
        rest.contains(&Op::Intt) && rest.contains(&Op::MulScalar),
        "{rest:?}"
    );
    assert!(!rest.contains(&Op::MulAcc) && !rest.contains(&Op::ExpandSeed));
    // The results stay over Q_l P: one special limb more than the whole switch's.
    let p = tessera_ckks::Parameters::preset("test-small")
        .unwrap()
        .p()
        .len();
    assert_eq!(ext_out.len(), 2);
    assert!(ext_out.iter().zip(&whole_out).all(|(e, w)| *e == w + p));
}

#[test]
fn bootstrapping_without_hoisting_rotates_each_baby_step_alone() {
    let spans = |hoisting: bool| -> std::collections::HashMap<String, usize> {
        let mut spec = WorkloadSpec::new("bootstrap", "test-boot");
        spec.hoisting = hoisting;
        let w = record(&spec).unwrap();
        assert_eq!(w.label.ends_with("+no-hoisting"), !hoisting);
        let mut n = std::collections::HashMap::new();
        for i in w.instrs.iter().filter(|i| i.op == Op::Begin) {
            *n.entry(i.name.clone().unwrap_or_default()).or_insert(0) += 1;
        }
        n
    };
    let (hoisted, plain) = (spans(true), spans(false));
    let get = |m: &std::collections::HashMap<String, usize>, k: &str| *m.get(k).unwrap_or(&0);
    assert!(get(&hoisted, "HRotHoisted") > 0 && get(&hoisted, "HoistedModUp") > 0);
    assert_eq!(get(&plain, "HRotHoisted") + get(&plain, "HoistedModUp"), 0);
    // Every hoisted rotation became a plain one.
    assert_eq!(
        get(&plain, "HRot"),
        get(&hoisted, "HRot") + get(&hoisted, "HRotHoisted")
    );
}
