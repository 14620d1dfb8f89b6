//! Two-level storage (issue 25 item 5, `tessera_sim::storage`): a register-file level of
//! finite capacity in front of the scratchpad. With a capacity no program fills, every figure
//! equals the single-level model's bit for bit; with a tiny one, chained operands are written
//! back and refilled over the scratchpad ports and time grows; bad capacities are typed
//! errors naming the key and the file.

use tessera_backend::trace::Instr;
use tessera_programs::workloads::{record, WorkloadSpec};
use tessera_sim::engine::{run, Schedule};
use tessera_sim::machine::Machine;
use tessera_sim::{simulate, SimError};

fn hmult() -> Vec<Instr> {
    record(&WorkloadSpec::new("hmult", "test-small"))
        .unwrap()
        .instrs
}

fn with_rf(m: &Machine, mb: &str) -> Machine {
    m.with_setting("memory.register_file.capacity_mb", mb)
        .unwrap()
}

fn assert_same(a: &Schedule, b: &Schedule, what: &str) {
    assert_eq!(a.cycles.to_bits(), b.cycles.to_bits(), "{what}: cycles");
    assert_eq!(a.busy, b.busy, "{what}: busy");
    assert_eq!(a.offchip_bytes, b.offchip_bytes, "{what}: off-chip");
    assert_eq!(a.noc_bytes, b.noc_bytes, "{what}: NoC");
    assert_eq!(a.rf_bytes, b.rf_bytes, "{what}: RF");
    assert_eq!(a.peak_onchip_bytes, b.peak_onchip_bytes, "{what}: peak");
}

/// An unbounded register file (1 TB) is the single-level model, on every calibrated
/// design and the example: same cycles, busy times and traffic, and no refill.
#[test]
fn a_huge_register_file_equals_the_single_level_model() {
    let instrs = hmult();
    for name in [
        "ark",
        "reed",
        "cifher",
        "h3-hbm",
        "configs/example-tiled.toml",
    ] {
        let path = format!("{}/../../{name}", env!("CARGO_MANIFEST_DIR"));
        let m = Machine::load(if name.ends_with(".toml") { &path } else { name }).unwrap();
        assert!(
            m.register_file_bytes().is_none(),
            "{name}: no RF level today"
        );
        let one = run(&m, &instrs, false).unwrap();
        let two = run(&with_rf(&m, "1e6"), &instrs, false).unwrap();
        assert_same(&one, &two, name);
        assert_eq!(two.rf_refill_bytes + two.rf_writeback_bytes, 0.0, "{name}");
        assert!(
            two.rf_peak_bytes > 0.0,
            "{name}: operands pass through the RFs"
        );
        assert!(
            one.rf_peak_bytes == 0.0,
            "{name}: single level has no RF figures"
        );
    }
}

/// A register file smaller than one limb holds nothing between instructions: every chained
/// operand is written back and refilled, the scratchpad ports carry that traffic, time
/// grows, and the report says so.
#[test]
fn a_tiny_register_file_costs_refills_and_time() {
    let instrs = hmult();
    let m = Machine::load("ark").unwrap();
    let one = simulate(&m, "hmult", &instrs).unwrap();
    let tiny = with_rf(&m, "0.001");
    let two = simulate(&tiny, "hmult", &instrs).unwrap();
    let rf = two.register_file.as_ref().expect("an RF section");
    assert!(one.register_file.is_none());
    assert!(rf.refill_bytes > 0.0 && rf.writeback_bytes > 0.0, "{rf:?}");
    assert!(rf.fill_cycles > 0.0 && rf.fill_time_s > 0.0);
    assert!(two.cycles > one.cycles, "{} vs {}", two.cycles, one.cycles);
    assert_eq!(rf.capacity_bytes, 0.001 * 1048576.0);
    // Refills and write-backs are on top of the single-level scratchpad traffic.
    let big = simulate(&with_rf(&m, "1e6"), "hmult", &instrs).unwrap();
    let base = big.register_file.unwrap().scratchpad_bytes;
    let extra = rf.scratchpad_bytes - base;
    let moved = rf.refill_bytes + rf.writeback_bytes;
    assert!((extra - moved).abs() <= 1e-6 * moved, "{extra} vs {moved}");
    // JSON carries the section.
    let j = serde_json::to_value(&two).unwrap();
    assert!(j["register_file"]["refill_bytes"].as_f64().unwrap() > 0.0);
    assert!(serde_json::to_value(&one)
        .unwrap()
        .get("register_file")
        .is_none());
}

/// Time does not fall as the register files shrink.
#[test]
fn time_grows_as_the_register_file_shrinks() {
    let instrs = hmult();
    let m = Machine::load("ark").unwrap();
    let mut last = 0.0f64;
    for mb in ["1e6", "64", "4", "0.25", "0.001"] {
        let s = run(&with_rf(&m, mb), &instrs, false).unwrap();
        assert!(
            s.cycles >= last * (1.0 - 1e-12),
            "{mb} MB: {} < {last}",
            s.cycles
        );
        last = s.cycles;
    }
}

/// 0, negative, NaN and infinite capacities are refused by key and file, from a file and
/// from `--set`.
#[test]
fn bad_capacities_are_typed_errors_naming_the_key_and_file() {
    let text = std::fs::read_to_string(format!(
        "{}/../../configs/ark.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    for bad in ["0.0", "-1.0", "nan", "inf"] {
        let t = text.replacen(
            "[memory.register_file]\n",
            &format!("[memory.register_file]\ncapacity_mb = {bad}\n"),
            1,
        );
        assert_ne!(t, text);
        let e = Machine::from_toml(&t, "my-rf.toml").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("memory.register_file.capacity_mb") && msg.contains("my-rf.toml"),
            "{bad}: {msg}"
        );
        assert!(matches!(e, SimError::Field { .. }), "{bad}: {e:?}");
        let m = Machine::load("ark").unwrap();
        let e = m
            .with_setting("memory.register_file.capacity_mb", bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("memory.register_file.capacity_mb"), "{bad}: {e}");
    }
}

/// `--set` may give an optional field a description omits, and still refuses a key the
/// description does not have.
#[test]
fn set_gives_an_absent_optional_field_and_refuses_an_unknown_one() {
    let m = Machine::load("ark").unwrap();
    assert_eq!(
        with_rf(&m, "2").register_file_bytes(),
        Some(2.0 * 1048576.0)
    );
    let e = m
        .with_setting("memory.register_file.no_such_key", "1")
        .unwrap_err()
        .to_string();
    assert!(e.contains("memory.register_file.no_such_key"), "{e}");
}
