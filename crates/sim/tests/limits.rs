//! Input validation and resource limits of machine descriptions, `--set` values and sweeps
//! (issue 24, items 5 and 7): every out-of-range value is a typed error naming the field and
//! its allowed range, never a silently wrong report or an aborted process.

use tessera_backend::trace::{Instr, Op};
use tessera_sim::arch::{Arch, BUILTIN};
use tessera_sim::cofhee::simulate_pe;

fn set_err(arch: &str, set: &str) -> String {
    match Arch::load_with(arch, &[set.to_string()]) {
        Ok(_) => panic!("{arch} with {set} loaded"),
        Err(e) => e.to_string(),
    }
}

/// The issue's examples, each of which used to give a report with exit status 0: a MADU count
/// of 2^32 ("time inf"), a NaN or negative off-chip latency (a time 40x too short), a negative
/// energy per bit (negative energy), a bonding yield of 2 (a package yield of 16), CoFHEE's
/// pipeline depth of 2^63 - 1 (cycles wrapped below the baseline), and 10^12 clusters (the
/// process aborted allocating them, and Python's interpreter with it).
#[test]
fn the_issue_examples_are_refused_naming_the_field_and_its_range() {
    for (arch, set, field) in [
        ("reed", "units.madu.count=4294967296", "units.madu.count"),
        ("ark", "units.madu.count=4294967296", "units.madu.count"),
        (
            "reed",
            "memory.offchip.latency_ns=NaN",
            "memory.offchip.latency_ns",
        ),
        (
            "reed",
            "memory.offchip.latency_ns=-200",
            "memory.offchip.latency_ns",
        ),
        (
            "reed",
            "memory.offchip.pj_per_bit=-5",
            "memory.offchip.pj_per_bit",
        ),
        ("reed", "memory.noc.pj_per_bit=inf", "memory.noc.pj_per_bit"),
        ("reed", "cost.bond_yield=2", "cost.bond_yield"),
        ("reed", "cost.bond_yield=0", "cost.bond_yield"),
        ("ark", "clock.ghz=NaN", "clock.ghz"),
        ("ark", "chip.clusters=1000000000000", "chip.clusters"),
        (
            "ark",
            "memory.scratchpad.bandwidth_gbs=-1",
            "memory.scratchpad.bandwidth_gbs",
        ),
        ("ark", "memory.offchip.stacks=0", "memory.offchip.stacks"),
        ("ark", "units.ntt.latency_cycles=-1", "setting"),
        (
            "cofhee",
            "pe.pipeline_depth_cycles=9223372036854775807",
            "pe.pipeline_depth_cycles",
        ),
        ("cofhee", "power.ntt_mw=-1", "power.ntt_mw"),
        ("cofhee", "host.link_mbps=NaN", "host.link_mbps"),
    ] {
        let e = set_err(arch, set);
        assert!(
            e.contains(field) && e.contains("allowed"),
            "{arch} {set}: {e}"
        );
    }
}

/// Component lines: negative or non-finite area, power or count name the component.
#[test]
fn component_values_are_finite_and_non_negative() {
    let dir = std::env::temp_dir().join(format!("tessera-limits-comp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("inf.toml");
    std::fs::write(
        &p,
        "extends = \"ark\"\n[[component]]\nname = \"NTTU\"\narea_mm2 = inf\n",
    )
    .unwrap();
    let e = Arch::load(p.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("NTTU") && e.contains("area_mm2"), "{e}");
    assert!(e.contains("line 4"), "{e}");
}

/// A value out of range in a file names the file and the line it is on.
#[test]
fn a_value_out_of_range_in_a_file_names_its_file_and_line() {
    let dir = std::env::temp_dir().join(format!("tessera-limits-line-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("slow.toml");
    std::fs::write(
        &p,
        "extends = \"reed\"\nname = \"slow\"\n\n[memory.offchip]\nlatency_ns = -3.0\n",
    )
    .unwrap();
    let e = Arch::load(p.to_str().unwrap()).unwrap_err().to_string();
    assert!(
        e.contains("slow.toml") && e.contains("line 5") && e.contains("memory.offchip.latency_ns"),
        "{e}"
    );
}

/// Every shipped description is within the limits.
#[test]
fn every_builtin_description_is_within_the_limits() {
    for (name, _) in BUILTIN {
        Arch::load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// CoFHEE's cycle counts are checked: at the largest pipeline depth the description allows and
/// a huge ring degree in the stream, the sum overflows u64 and is an error, not a wrapped count.
#[test]
fn cofhee_cycle_arithmetic_does_not_wrap() {
    let Arch::Pe(m) =
        Arch::load_with("cofhee", &["pe.pipeline_depth_cycles=4294967296".into()]).unwrap()
    else {
        panic!("cofhee is a single-PE machine")
    };
    let instr = |n: usize| Instr {
        seq: 0,
        op: Op::Ntt,
        dst: Some(1),
        srcs: [1].into(),
        limbs: (0..64).collect(),
        n,
        kind: Some(tessera_backend::Kind::Ciphertext),
        galois: None,
        mode: None,
        name: None,
        level: None,
        host: None,
    };
    let ok = simulate_pe(&m, "t", &[instr(1 << 12)]).unwrap();
    assert!(ok.cycles > 64.0 * 12.0 * 4294967296.0);
    let e = simulate_pe(&m, "t", &[instr(1 << 60)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("overflow"), "{e}");
}

/// Input files must be regular files of bounded size: a FIFO (which blocked `open`) or
/// `/dev/zero` (which read until the process aborted) is an error at once.
#[cfg(unix)]
#[test]
fn a_description_that_is_not_a_regular_file_is_refused() {
    let dir = std::env::temp_dir().join(format!("tessera-limits-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("pipe.toml");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for path in [fifo.to_str().unwrap(), "/dev/zero"] {
        let e = Arch::load(path).unwrap_err().to_string();
        assert!(e.contains("regular file"), "{path}: {e}");
    }
    // The same through `extends`.
    let child = dir.join("child.toml");
    std::fs::write(&child, "extends = \"pipe.toml\"\n").unwrap();
    let e = Arch::load(child.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("regular file"), "{e}");
    // And a regular file over the size limit.
    let big = dir.join("big.toml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(tessera_sim::arch::MAX_DESCRIPTION_BYTES + 1)
        .unwrap();
    let e = Arch::load(big.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("bytes"), "{e}");
}

/// `extends` merging is near-linear in the number of components: 40,000 components (a
/// description of every lane, say) merged over a base took over 120 s with the quadratic
/// name lookup; now it takes a few seconds.
#[test]
fn extends_merging_is_near_linear() {
    use std::fmt::Write;
    let dir = std::env::temp_dir().join(format!("tessera-limits-many-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let k = 40_000;
    let mut base = String::from(
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../configs/ark.toml"
        ))
        .unwrap()
        .as_str(),
    );
    for i in 0..k {
        write!(
            base,
            "\n[[component]]\nname = \"lane {i}\"\narea_mm2 = 0.001\npeak_w = 0.001\nper = \"chip\"\nactivity = \"none\"\ncite = \"test\"\n"
        )
        .unwrap();
    }
    std::fs::write(dir.join("base.toml"), &base).unwrap();
    let mut child = String::from("extends = \"base.toml\"\nname = \"child\"\n");
    for i in (0..k).rev() {
        write!(
            child,
            "\n[[component]]\nname = \"lane {i}\"\narea_mm2 = 0.002\n"
        )
        .unwrap();
    }
    let p = dir.join("child.toml");
    std::fs::write(&p, &child).unwrap();
    let t = std::time::Instant::now();
    let Arch::Vector(m) = Arch::load(p.to_str().unwrap()).unwrap() else {
        panic!("a vector machine")
    };
    let s = t.elapsed().as_secs_f64();
    let lanes: Vec<_> = m
        .components
        .iter()
        .filter(|c| c.name.starts_with("lane "))
        .collect();
    assert_eq!(lanes.len(), k);
    assert!(lanes.iter().all(|c| c.area_mm2 == 0.002));
    assert!(s < 30.0, "{s} s");
    eprintln!("{k} components merged and loaded in {s:.2} s");
}

/// The trace checks accept every program the recorder writes: each built-in workload at a
/// test preset, and bootstrapping (with and without ARK's options) at `test-boot`, written
/// as a trace file and read back unchanged.
#[test]
fn recorded_programs_pass_the_trace_checks() {
    use tessera_ckks::bootstrap::BootstrapParameters;
    use tessera_ckks::{CkksContext, Parameters};
    use tessera_programs::workloads::{record, WorkloadSpec, WORKLOADS};
    let header = |preset: &str| {
        let ctx = CkksContext::new(Parameters::preset(preset).unwrap()).unwrap();
        serde_json::json!({
            "format": "tessera-trace",
            "version": tessera_backend::trace::TRACE_VERSION,
            "n": ctx.params().n(),
            "moduli": ctx.ring().moduli().iter().map(|m| m.value()).collect::<Vec<_>>(),
        })
    };
    let (boot_ckks, _) = BootstrapParameters::preset("test-boot").unwrap();
    let mut specs: Vec<(WorkloadSpec, serde_json::Value)> = WORKLOADS
        .iter()
        .filter(|w| **w != "bootstrap")
        .map(|w| (WorkloadSpec::new(w, "test-small"), header("test-small")))
        .collect();
    for (min_ks, of_limb) in [(false, false), (true, true)] {
        let mut s = WorkloadSpec::new("bootstrap", "test-boot");
        s.min_ks = min_ks;
        s.of_limb = of_limb;
        specs.push((s, header(boot_ckks)));
    }
    for (spec, h) in specs {
        let w = record(&spec).unwrap();
        let mut text = format!("{h}\n");
        for i in &w.instrs {
            text += &serde_json::to_string(i).unwrap();
            text.push('\n');
        }
        let (_, back) = tessera_backend::trace::read_trace(text.as_bytes())
            .unwrap_or_else(|e| panic!("{}: {e}", w.label));
        assert_eq!(back, w.instrs, "{}", w.label);
    }
}

/// Routes look their links up by index: a 1024-cluster mesh (32 x 32, CiFHER) used to spend
/// 42 s finding each hop's link by a linear search before simulating anything; now it
/// takes about a second.
#[test]
fn a_large_mesh_sets_up_in_seconds() {
    use tessera_programs::workloads::{record, WorkloadSpec};
    let w = record(&WorkloadSpec::new("hadd", "test-small")).unwrap();
    let t = std::time::Instant::now();
    let m = Arch::load_with(
        "cifher",
        &["chip.clusters=1024".into(), "memory.noc.mesh_dx=32".into()],
    )
    .unwrap();
    m.simulate(&w.label, &w.instrs).unwrap();
    let s = t.elapsed().as_secs_f64();
    assert!(s < 20.0, "{s} s");
}
