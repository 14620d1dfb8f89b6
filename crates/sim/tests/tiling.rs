//! Limb tiling in the scheduling pass (issue 25 item 2): the split of recorded traces into
//! limb tiles computes the recorded dataflow with the same work (checked tile by tile and
//! limb by limb), its checker rejects broken splits, the tile size follows the scratchpad,
//! and a machine file names the policy.

use tessera_backend::trace::{Instr, Op};
use tessera_programs::workloads::{record, WorkloadSpec};
use tessera_sim::machine::Machine;
use tessera_sim::schedule::tiling::{peak_live_buffers, split, tile_limbs, LimbTiled};
use tessera_sim::schedule::verify::{check_tiled, tiled_work};
use tessera_sim::schedule::{apply, reorder, PolicyName, DEFAULT_WINDOW};

fn trace(workload: &str) -> Vec<Instr> {
    record(&WorkloadSpec::new(workload, "test-boot"))
        .unwrap()
        .instrs
}

#[test]
fn limb_tiled_streams_of_recorded_traces_compute_the_recorded_dataflow() {
    for name in ["keyswitch", "bootstrap"] {
        let t = trace(name);
        for tile in [1, 2, 5, 64] {
            let s = split(&t, tile);
            check_tiled(&t, &s.instrs, s.base)
                .unwrap_or_else(|e| panic!("{name}, tile {tile}, split: {e}"));
            for window in [DEFAULT_WINDOW, 500] {
                let out = reorder(&mut LimbTiled::default(), &s.instrs, window);
                check_tiled(&t, &out, s.base)
                    .unwrap_or_else(|e| panic!("{name}, tile {tile}, window {window}: {e}"));
            }
            if tile < 64 {
                assert!(s.tiles > s.split, "{name}, tile {tile}: nothing split");
            }
            // The same multiply-adds: limbs per operation, BConv's input times output limbs.
            assert_eq!(tiled_work(&t, s.base), tiled_work(&s.instrs, s.base));
        }
    }
}

#[test]
fn the_tile_checker_rejects_broken_splits() {
    let t = trace("keyswitch");
    let s = split(&t, 2);
    let base = s.base;
    let tile_pos = |op: Op| {
        s.instrs
            .iter()
            .position(|i| i.op == op && i.dst.is_some_and(|d| d >= base))
            .unwrap()
    };
    // A dropped tile: its limbs are not computed (and the work differs).
    let mut dropped = s.instrs.clone();
    dropped.remove(tile_pos(Op::Ntt));
    assert!(check_tiled(&t, &dropped, base).is_err());
    // A tile computed twice.
    let mut twice = s.instrs.clone();
    let k = tile_pos(Op::Intt);
    twice.insert(k + 1, twice[k].clone());
    assert!(check_tiled(&t, &twice, base).is_err());
    // A consumer tile moved before the tile it reads.
    let mut early = s.instrs.clone();
    let k = tile_pos(Op::Dot);
    let d = early.remove(k);
    early.insert(tile_pos(Op::Bconv), d);
    assert!(check_tiled(&t, &early, base).is_err());
    // A BConv tile that reads only one tile of its input.
    let mut partial = s.instrs.clone();
    let k = partial
        .iter()
        .position(|i| i.op == Op::Bconv && i.srcs.len() > 1)
        .unwrap();
    partial[k].srcs = partial[k].srcs[..1].into();
    assert!(check_tiled(&t, &partial, base).is_err());
}

#[test]
fn the_tile_follows_the_scratchpad_and_the_machine_file_names_the_policy() {
    let t = trace("keyswitch");
    let h3 = Machine::load("h3-hbm").unwrap();
    let n = t.iter().find(|i| i.n > 0).unwrap().n as f64;
    let limbs = (h3.scratchpad_mb() * 1048576.0 / (n * h3.word_bytes())) as usize;
    // One tile of every buffer live at once (at least the inner product's eight sources
    // and its destination) fits the scratchpad.
    let live = peak_live_buffers(&t).max(9);
    assert_eq!(tile_limbs(&h3, &t), Some((limbs / live).max(1)));
    let small = h3
        .with_setting("memory.scratchpad.capacity_mb", "2")
        .unwrap();
    assert!(tile_limbs(&small, &t) < tile_limbs(&h3, &t));
    let fixed = h3.with_setting("schedule.tile_limbs", "3").unwrap();
    assert_eq!(tile_limbs(&fixed, &t), Some(3));
    let e = h3
        .with_setting("schedule.tile_limbs", "100000")
        .unwrap_err()
        .to_string();
    assert!(e.contains("schedule.tile_limbs"), "{e}");
    let lt = h3.with_setting("schedule.policy", "limb-tiled").unwrap();
    assert_eq!(lt.schedule.policy, PolicyName::LimbTiled);
    let out = apply(
        &fixed.with_setting("schedule.policy", "limb-tiled").unwrap(),
        &t,
    );
    assert!(out.len() > t.len(), "limb-tiled split nothing");
    check_tiled(&t, &out, split(&t, 3).base).unwrap();
}

#[test]
fn prefetch_and_fusion_keep_the_dataflow() {
    use tessera_sim::schedule::verify::check_equivalent;
    use tessera_sim::schedule::working_set::WorkingSet;
    use tessera_sim::schedule::{reorder_with, Refine};
    let t = trace("bootstrap");
    for refine in [
        Refine {
            prefetch: 8,
            fuse: false,
        },
        Refine {
            prefetch: 0,
            fuse: true,
        },
        Refine {
            prefetch: 64,
            fuse: true,
        },
    ] {
        let out = reorder_with(&mut WorkingSet::default(), &t, DEFAULT_WINDOW, refine);
        check_equivalent(&t, &out).unwrap_or_else(|e| panic!("{refine:?}: {e}"));
    }
    // Fusion makes an element-wise chain adjacent: two products, each scaled, in program
    // order interleaved.
    let ct = |seq, op, dst, srcs: &[u64]| {
        Instr::on_tower(
            seq,
            4096,
            op,
            dst,
            srcs,
            0,
            tessera_backend::Kind::Ciphertext,
        )
    };
    let chains = vec![
        ct(0, Op::Load, 1, &[]),
        ct(1, Op::Mul, 3, &[1, 1]),
        ct(2, Op::Mul, 4, &[1, 1]),
        ct(3, Op::MulScalar, 5, &[3]),
        ct(4, Op::MulScalar, 6, &[4]),
        ct(5, Op::Store, 5, &[5]),
        ct(6, Op::Store, 6, &[6]),
    ];
    let fused = reorder_with(
        &mut tessera_sim::schedule::program_order::ProgramOrder,
        &chains,
        DEFAULT_WINDOW,
        Refine {
            prefetch: 0,
            fuse: true,
        },
    );
    check_equivalent(&chains, &fused).unwrap();
    let seqs: Vec<u64> = fused.iter().map(|i| i.seq).collect();
    assert_eq!(seqs, [0, 1, 3, 2, 4, 5, 6]);
    // Prefetch moves a key fetch earlier: its first fetch comes no later than without.
    let first_key = |v: &[Instr]| {
        v.iter()
            .position(|i| i.op == Op::Load && i.kind == Some(tessera_backend::Kind::EvalKey))
            .unwrap()
    };
    let plain = reorder_with(
        &mut WorkingSet::default(),
        &t,
        DEFAULT_WINDOW,
        Refine::default(),
    );
    let pre = reorder_with(
        &mut WorkingSet::default(),
        &t,
        DEFAULT_WINDOW,
        Refine {
            prefetch: 8,
            fuse: false,
        },
    );
    assert!(first_key(&pre) < first_key(&plain));
}

#[test]
fn a_design_in_files_picks_the_new_policies() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../configs/example-tiled.toml"
    );
    let m = Machine::load(path).unwrap();
    assert_eq!(m.schedule.policy, PolicyName::LimbTiled);
    assert!(m.schedule.fuse && m.schedule.prefetch == 8);
    assert_eq!(m.chip.policy, tessera_sim::machine::Policy::Mix);
    let t = trace("keyswitch");
    let r = tessera_sim::simulate(&m, "keyswitch", &t).unwrap();
    assert!(r.cycles > 0.0);
    // Every distribution policy runs a key switch.
    let h3 = Machine::load("h3-hbm").unwrap();
    for p in [
        "alternating",
        "limb-wise",
        "ring",
        "limb-duplication",
        "coefficient-wise",
    ] {
        let mp = h3.with_setting("chip.policy", p).unwrap();
        let s = tessera_sim::simulate(&mp, "keyswitch", &t).unwrap();
        assert!(s.noc_bytes > 0.0, "{p}");
    }
    // Coefficient-wise: a transform exchanges its data, a BConv does not; alternating the
    // other way round.
    use tessera_sim::mapping::{lower, Net, Shape};
    let limbs: Vec<usize> = (0..8).collect();
    let noc = |p: &str, shape| {
        let mp = h3.with_setting("chip.policy", p).unwrap();
        lower(&mp, &Net::of(&mp), shape, &limbs, 4096, 0, 1.0).noc_bytes
    };
    assert!(noc("coefficient-wise", Shape::Transform) > 0.0);
    assert_eq!(noc("alternating", Shape::Transform), 0.0);
    assert_eq!(noc("coefficient-wise", Shape::Bconv { l_in: 4 }), 0.0);
    assert!(noc("alternating", Shape::Bconv { l_in: 4 }) > 0.0);
    // A mix needs its table, and its table needs the mix.
    let e = h3
        .with_setting("chip.policy", "mix")
        .unwrap_err()
        .to_string();
    assert!(e.contains("chip.mix"), "{e}");
    let ark = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../configs/ark.toml"
    ))
    .unwrap();
    let table =
        "\n[chip.mix]\nlayout = \"alternating\"\nbconv = \"ring\"\nkey_dot = \"limb-wise\"\n";
    let e = Machine::from_toml(&format!("{ark}{table}"), "t")
        .unwrap_err()
        .to_string();
    assert!(e.contains("chip.mix"), "{e}");
    let alt = "policy = \"alternating\"";
    assert!(ark.contains(alt));
    let mixed = format!("{}{table}", ark.replacen(alt, "policy = \"mix\"", 1));
    let m = Machine::from_toml(&mixed, "t").unwrap();
    assert!(tessera_sim::simulate(&m, "keyswitch", &t).unwrap().cycles > 0.0);
}

/// `m` with a scratchpad large enough for any staged input at test size, limb-tiled with a
/// fixed tile.
fn tiled(m: &Machine, tile: usize, share: bool) -> Machine {
    m.with_setting("schedule.policy", "limb-tiled")
        .and_then(|m| m.with_setting("schedule.tile_limbs", &tile.to_string()))
        .and_then(|m| m.with_setting("schedule.share_bconv_input", &share.to_string()))
        .unwrap()
}

#[test]
fn a_shared_bconv_input_keeps_the_dataflow_and_the_checker_rejects_a_broken_staging() {
    use tessera_sim::schedule::tiling::{split_sharing, Share};
    let h3 = Machine::load("h3-hbm")
        .unwrap()
        .with_setting("memory.scratchpad.capacity_mb", "4096")
        .unwrap();
    for name in ["keyswitch", "bootstrap"] {
        let t = trace(name);
        for tile in [1, 2, 5] {
            let share = Share::of(&h3, &t, tile).unwrap();
            let s = split_sharing(&t, tile, Some(&share));
            assert!(s.shared > 0 && s.re_moved == 0, "{name}, tile {tile}");
            check_tiled(&t, &s.instrs, s.base)
                .unwrap_or_else(|e| panic!("{name}, tile {tile}, shared split: {e}"));
            for window in [DEFAULT_WINDOW, 500] {
                let out = reorder(&mut LimbTiled::default(), &s.instrs, window);
                check_tiled(&t, &out, s.base)
                    .unwrap_or_else(|e| panic!("{name}, tile {tile}, window {window}: {e}"));
            }
            assert_eq!(tiled_work(&t, s.base), tiled_work(&s.instrs, s.base));
        }
    }
    let t = trace("keyswitch");
    let share = Share::of(&h3, &t, 2).unwrap();
    let s = split_sharing(&t, 2, Some(&share));
    let stage = s
        .instrs
        .iter()
        .position(|i| i.op == Op::Concat && i.mode.is_some())
        .unwrap();
    // A staging that leaves out an input limb.
    let mut short = s.instrs.clone();
    let l = short[stage].limbs[1..].to_vec();
    short[stage].limbs = l.into();
    assert!(check_tiled(&t, &short, s.base).is_err());
    // An output tile before the staging it reads.
    let mut early = s.instrs.clone();
    let st = early.remove(stage);
    let last_tile = early
        .iter()
        .rposition(|i| i.op == Op::Bconv && i.srcs.first() == st.dst.as_ref())
        .unwrap();
    early.insert(last_tile + 1, st);
    assert!(check_tiled(&t, &early, s.base).is_err());
    // A staging outside its BConv's span.
    let mut outside = s.instrs.clone();
    let st = outside.remove(stage);
    outside.insert(0, st);
    assert!(check_tiled(&t, &outside, s.base).is_err());
}

#[test]
fn a_tiled_bconv_moves_its_input_once_as_the_untiled_one_does() {
    // Cluster-to-cluster NoC bytes (off-chip transfers' ways from the I/O dies excluded:
    // they follow the spills, which tiling changes) of a key switch on 16 clusters, for
    // every policy that moves BConv inputs: tiled with a shared input, the same as untiled;
    // tiled with every output tile moving the input (session 31), more.
    let t = trace("keyswitch");
    let h3 = Machine::load("h3-hbm")
        .unwrap()
        .with_setting("memory.scratchpad.capacity_mb", "4096")
        .unwrap();
    let noc = |m: &Machine| {
        let s = tessera_sim::engine::run(m, &apply(m, &t), false).unwrap();
        s.noc_bytes - s.io_noc_bytes
    };
    for p in ["alternating", "ring", "limb-duplication"] {
        let m = h3.with_setting("chip.policy", p).unwrap();
        let untiled = noc(&m.with_setting("schedule.policy", "working-set").unwrap());
        assert!(untiled > 0.0, "{p}");
        for tile in [1, 2, 3] {
            let shared = noc(&tiled(&m, tile, true));
            assert!(
                (shared - untiled).abs() <= 1e-9 * untiled,
                "{p}, tile {tile}: {shared} NoC bytes, untiled {untiled}"
            );
            let per_tile = noc(&tiled(&m, tile, false));
            assert!(
                per_tile > untiled * 1.01,
                "{p}, tile {tile}: {per_tile} vs {untiled}"
            );
        }
    }
}

#[test]
fn a_staged_input_that_does_not_fit_is_moved_per_tile() {
    use tessera_sim::schedule::tiling::{split_sharing, Share};
    let t = trace("keyswitch");
    let h3 = Machine::load("h3-hbm").unwrap();
    // The budget is the scratchpad less the output tile; an input staged as 16 copies
    // (limb duplication broadcasts on H3-HBM's 16 clusters) that exceeds it is moved per
    // tile.
    let n = t.iter().find(|i| i.n > 0).unwrap().n as f64;
    let cap = (h3.scratchpad_mb() * 1048576.0 / (n * h3.word_bytes())) as usize;
    assert_eq!(Share::of(&h3, &t, 2).unwrap().budget_limbs, cap - 2);
    let tiny = h3
        .with_setting(
            "memory.scratchpad.capacity_mb",
            &(2.0 * n * h3.word_bytes() / 1048576.0).to_string(),
        )
        .unwrap();
    let s = split_sharing(&t, 1, Share::of(&tiny, &t, 1).as_ref());
    assert!(s.re_moved > 0, "{} {}", s.shared, s.re_moved);
    check_tiled(&t, &s.instrs, s.base).unwrap();
    let s = split_sharing(&t, 1, Share::of(&h3, &t, 1).as_ref());
    assert!(
        s.shared > 0 && s.re_moved == 0,
        "{} {}",
        s.shared,
        s.re_moved
    );
    // Policies that move no BConv input stage nothing and count nothing.
    for p in ["limb-wise", "coefficient-wise"] {
        let m = h3.with_setting("chip.policy", p).unwrap();
        let s = split_sharing(&t, 2, Share::of(&m, &t, 2).as_ref());
        assert_eq!((s.shared, s.re_moved), (0, 0), "{p}");
        check_tiled(&t, &s.instrs, s.base).unwrap();
    }
}

#[test]
fn a_tile_sweep_is_monotone_in_traffic_with_a_shared_input() {
    // Off-chip bytes of a bootstrapping on H3-HBM with a 48-limb scratchpad (polynomials
    // spill at test size): smaller tiles never move more, with the staged inputs (16 copies
    // each on 16 clusters) on chip. One-limb tiles are left out: there every BConv of two
    // or more output limbs is staged, and at this size its 16 copies crowd the scratchpad
    // (the full-size sweep is in docs/simulator.md).
    let t = trace("bootstrap");
    let n = t.iter().find(|i| i.n > 0).unwrap().n as f64;
    let h3 = Machine::load("h3-hbm").unwrap();
    let mb = 48.0 * n * h3.word_bytes() / 1048576.0;
    let small = h3
        .with_setting("memory.scratchpad.capacity_mb", &mb.to_string())
        .unwrap();
    let mut last = f64::INFINITY;
    for tile in [16, 8, 4, 2] {
        let m = tiled(&small, tile, true);
        let s = tessera_sim::engine::run(&m, &apply(&m, &t), false).unwrap();
        assert!(
            s.offchip_bytes <= last,
            "tile {tile}: {} > {last}",
            s.offchip_bytes
        );
        last = s.offchip_bytes;
    }
    // The engine's residency holds the staged copies: at one limb per tile some are dropped
    // for room, and the tiles after it move the input again.
    let m = tiled(&small, 1, true);
    let s = tessera_sim::engine::run(&m, &apply(&m, &t), false).unwrap();
    assert!(s.bconv_inputs_re_moved > 0);
}
