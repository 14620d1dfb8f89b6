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
