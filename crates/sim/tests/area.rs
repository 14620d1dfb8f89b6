//! The predictive area / power model (tessera_sim::area): scaling properties, every shipped
//! description predicted, independence from the copied tables, and clear errors.

use tessera_sim::arch::{Arch, BUILTIN};
use tessera_sim::area::{predict, predict_arch, AreaPowerPrediction, INPUT_LABEL};
use tessera_sim::machine::Machine;

fn ark_with(sets: &[&str]) -> Machine {
    let mut m = Machine::load("ark").unwrap();
    for s in sets {
        let (k, v) = s.split_once('=').unwrap();
        m = m.with_setting(k, v).unwrap();
    }
    m
}

fn area_of(p: &AreaPowerPrediction, name: &str) -> f64 {
    p.components
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no component {name}"))
        .area_mm2
}

#[test]
fn every_shipped_description_is_predicted() {
    for (name, _) in BUILTIN {
        let p = predict_arch(&Arch::load(name).unwrap()).unwrap();
        let sum: f64 = p.components.iter().map(|c| c.area_mm2).sum();
        assert!(
            p.total_area_mm2 > 0.0 && p.total_area_mm2.is_finite(),
            "{name}"
        );
        assert!((sum - p.total_area_mm2).abs() < 1e-9, "{name}");
        assert!(
            p.total_peak_w.is_finite() && p.total_peak_w >= 0.0,
            "{name}"
        );
        assert!(p.components.iter().all(|c| c.area_mm2 >= 0.0), "{name}");
    }
}

#[test]
fn doubling_lanes_doubles_lane_area() {
    let base = predict(&ark_with(&[])).unwrap();
    let cases = [
        ("units.madu.elements_per_cycle=512", "Element-wise units"),
        ("units.madu.count=4", "Element-wise units"),
        ("units.bconv.lanes=512", "BConv units"),
        ("units.bconv.count=2", "BConv units"),
        ("units.ntt.count=2", "NTT units"),
        ("units.auto.count=2", "Automorphism units"),
        ("memory.scratchpad.capacity_mb=1024.0", "Scratchpad"),
        ("memory.offchip.stacks=4", "HBM PHYs"),
    ];
    for (set, name) in cases {
        let p = predict(&ark_with(&[set])).unwrap();
        let r = area_of(&p, name) / area_of(&base, name);
        assert!((r - 2.0).abs() < 1e-9, "{set}: {name} x{r}");
    }
    // Doubling the clusters doubles every per-cluster unit.
    let p = predict(&ark_with(&["chip.clusters=8"])).unwrap();
    for name in [
        "NTT units",
        "BConv units",
        "Automorphism units",
        "Element-wise units",
    ] {
        assert!(
            (area_of(&p, name) / area_of(&base, name) - 2.0).abs() < 1e-9,
            "{name}"
        );
    }
    // Wider words: multipliers grow as the square, so element-wise lanes by more than 2x.
    let p = predict(&ark_with(&["clock.word_bits=128"])).unwrap();
    assert!(area_of(&p, "Element-wise units") > 3.0 * area_of(&base, "Element-wise units"));
}

#[test]
fn interconnect_follows_the_description() {
    // A crossbar's wires: one track per bit of the network, one cluster side long, so twice
    // the bandwidth is twice the wire area, and they widen with the node.
    let base = predict(&ark_with(&[])).unwrap();
    let p = predict(&ark_with(&["memory.noc.bandwidth_gbs=16000.0"])).unwrap();
    let r = area_of(&p, "NoC wires") / area_of(&base, "NoC wires");
    assert!((r - 2.0).abs() < 1e-9, "x{r}");
    let p = predict(&ark_with(&["area.node_nm=28.0"])).unwrap();
    assert!(area_of(&p, "NoC wires") > area_of(&base, "NoC wires"));
    // More scratchpad: bigger clusters, longer wires.
    let p = predict(&ark_with(&["memory.scratchpad.capacity_mb=1024.0"])).unwrap();
    assert!(area_of(&p, "NoC wires") > area_of(&base, "NoC wires"));
    // H3's MAU array has a lane interconnect that grows with its lanes and word; a mesh has
    // no wire area (its links join adjacent routers over the tiles).
    let h3 = Machine::load("h3").unwrap();
    let a = predict(&h3).unwrap();
    assert!(a.not_modelled.iter().any(|n| n.name == "NoC wires"));
    let wide = predict(
        &h3.with_setting("units.madu.elements_per_cycle", "1024")
            .unwrap(),
    )
    .unwrap();
    assert!(area_of(&wide, "Lane interconnect") > 2.0 * area_of(&a, "Lane interconnect"));
    let narrow = predict(&h3.with_setting("clock.word_bits", "32").unwrap()).unwrap();
    assert!(area_of(&narrow, "Lane interconnect") < area_of(&a, "Lane interconnect"));
    // CiFHER's I/O dies: their links to the cores are sized for the HBM bandwidth they
    // carry, so more I/O links do not grow them, and more HBM bandwidth does.
    let cifher = |name: &str| predict(&Machine::load(name).unwrap()).unwrap();
    let (c4, c8) = (cifher("cifher"), cifher("cifher-8"));
    assert!((area_of(&c4, "I/O dies") - area_of(&c8, "I/O dies")).abs() < 1e-9);
    let m = Machine::load("cifher").unwrap();
    let more = m
        .with_setting("memory.offchip.bandwidth_gbs", "2000.0")
        .unwrap();
    assert!(area_of(&predict(&more).unwrap(), "I/O dies") > area_of(&c4, "I/O dies"));
}

#[test]
fn reed_delay_lines_are_flip_flops() {
    // reed.md 4.1 and 6: the SDF pipelines' N words of delay lines are synthesised with the
    // NTT (SRAM macros are the memory units), so they are N x w flip-flops per NTT unit;
    // the description can still ask for two-port SRAM, and only the NTT units change.
    for arch in ["reed", "reed-28nm", "reed-512x128", "reed-512x128-28nm"] {
        let regs = Machine::load(arch).unwrap();
        let sram = regs.with_setting("area.sdf_delay", "sram").unwrap();
        let (pr, ps) = (predict(&regs).unwrap(), predict(&sram).unwrap());
        let spec = regs.area.as_ref().unwrap();
        let t = tessera_sim::area::tech::Technology::builtin().unwrap();
        let b = tessera_sim::area::blocks::Blocks::new(&t, spec.node_nm).unwrap();
        let bits = 65536.0 * 54.0;
        let per_unit =
            b.register_mm2(bits) - bits / 8.0 / 1048576.0 * b.sram_mm2_per_mb(2).unwrap();
        let units = (regs.units.ntt.count * regs.chip.clusters) as f64;
        let d = area_of(&pr, "NTT units") - area_of(&ps, "NTT units");
        assert!((d - units * per_unit).abs() < 1e-9, "{arch}: {d}");
        assert!(d > 0.0, "{arch}");
        assert!(
            (pr.total_area_mm2 - ps.total_area_mm2 - d).abs() < 1e-9,
            "{arch}: only the NTT units change"
        );
    }
}

#[test]
fn reed_automorphism_is_its_shuffle_tree() {
    // reed.md 4.2 / Fig. 5: log2(N2) stages of N2 registers with pairwise exchanges, so
    // doubling N2 (1024x64 -> 512x128) grows the unit 2 x 7/6, where F1's transpose unit
    // would grow 4x; and the description can still ask for the transpose organisation.
    let (r64, r128) = (
        Machine::load("reed").unwrap(),
        Machine::load("reed-512x128").unwrap(),
    );
    let (a64, a128) = (
        area_of(&predict(&r64).unwrap(), "Automorphism units"),
        area_of(&predict(&r128).unwrap(), "Automorphism units"),
    );
    assert!(
        (a128 / a64 - 2.0 * 7.0 / 6.0).abs() < 1e-9,
        "{a128} / {a64}"
    );
    let transpose = r64.with_setting("area.automorphism", "transpose").unwrap();
    let t64 = area_of(&predict(&transpose).unwrap(), "Automorphism units");
    assert!(t64 > a64, "transpose {t64} <= shuffle tree {a64}");
    assert!(r64
        .with_setting("area.automorphism", "benes")
        .and_then(|m| predict(&m))
        .is_err());
}

#[test]
fn node_scaling_is_monotone_and_phys_do_not_scale() {
    let mut prev: Option<AreaPowerPrediction> = None;
    for node in ["7.0", "10.0", "16.0", "22.0", "28.0", "40.0", "55.0"] {
        let p = predict(&ark_with(&[&format!("area.node_nm={node}")])).unwrap();
        if let Some(q) = &prev {
            for name in [
                "NTT units",
                "BConv units",
                "Element-wise units",
                "Scratchpad",
            ] {
                assert!(area_of(&p, name) > area_of(q, name), "{name} at {node} nm");
            }
            assert_eq!(area_of(&p, "HBM PHYs"), area_of(q, "HBM PHYs"));
            assert!(p.total_peak_w > q.total_peak_w, "{node}");
        }
        prev = Some(p);
    }
}

#[test]
fn the_prediction_does_not_read_the_copied_tables() {
    let base = predict(&ark_with(&[])).unwrap();
    let mut m = ark_with(&[]);
    for c in &mut m.components {
        c.area_mm2 *= 10.0;
        c.peak_w *= 10.0;
    }
    m.components.truncate(1);
    assert_eq!(predict(&m).unwrap(), base);
}

#[test]
fn bad_area_values_are_clear_errors() {
    let m = Machine::load("ark").unwrap();
    for (k, v, field) in [
        ("area.node_nm", "3.0", "area.node_nm"),
        ("area.node_nm", "500.0", "area.node_nm"),
        ("area.ntt_points", "1000", "area.ntt_points"),
        ("area.scratchpad_ports", "3", "area.scratchpad_ports"),
        // ARK's NTT unit is four-step: it has no delay lines to build of registers.
        ("area.sdf_delay", "registers", "area.sdf_delay"),
    ] {
        let e = m.with_setting(k, v).unwrap_err().to_string();
        assert!(e.contains(field) && e.contains("allowed"), "{e}");
    }
    let e = m
        .with_setting("area.offchip_phy", "optical")
        .unwrap_err()
        .to_string();
    assert!(e.contains("area.offchip_phy=optical"), "{e}");
    // In a file: the error names the file and the line.
    let dir = std::env::temp_dir().join(format!("tessera-area-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("small-node.toml");
    std::fs::write(
        &path,
        "extends = \"ark\"\nname = \"x\"\n\n[area]\nnode_nm = 2.0\n",
    )
    .unwrap();
    let e = Arch::load(path.to_str().unwrap()).unwrap_err().to_string();
    assert!(
        e.contains("small-node.toml line 5") && e.contains("area.node_nm"),
        "{e}"
    );
    std::fs::write(&path, "extends = \"ark\"\nname = \"x\"\n[area]\nnode = 7\n").unwrap();
    let e = Arch::load(path.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("unknown field") && e.contains("node"), "{e}");
    // No [area] section: a clear "not supported", never a guess.
    let mut m = Machine::load("ark").unwrap();
    m.area = None;
    let e = predict(&m).unwrap_err().to_string();
    assert!(e.contains("not supported") && e.contains("[area]"), "{e}");
    // A vector machine with NTT units must say what transform they are built for.
    let mut m = Machine::load("ark").unwrap();
    m.area.as_mut().unwrap().ntt_points = None;
    let e = predict(&m).unwrap_err().to_string();
    assert!(e.contains("area.ntt_points"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn reports_carry_the_prediction_next_to_the_labelled_input() {
    let m = Machine::load("reed").unwrap();
    let w = tessera_programs::workloads::record(&tessera_programs::workloads::WorkloadSpec::new(
        "hmult",
        "test-small",
    ))
    .unwrap();
    let r = tessera_sim::simulate(&m, &w.label, &w.instrs).unwrap();
    assert_eq!(r.area_source, INPUT_LABEL);
    assert_eq!(r.area_predicted, Some(predict(&m).unwrap()));
    let t = tessera_sim::report::throughput(&m, &w.label, &w.instrs).unwrap();
    assert_eq!(t.area_predicted, r.area_predicted);
    let mut bare = m.clone();
    bare.area = None;
    let r = tessera_sim::simulate(&bare, &w.label, &w.instrs).unwrap();
    assert!(r.area_predicted.is_none());
    assert!(serde_json::to_value(&r)
        .unwrap()
        .get("area_predicted")
        .is_none());
}

/// A design of one's own, written as a file with no copied component table: its reports
/// use the predicted area and peak power, labelled so.
const OWN_DESIGN: &str = r#"
name = "two-core-28nm"
description = "2 clusters x 128 lanes, 48-bit words, 32 MB SRAM, one HBM stack, 28 nm"

[clock]
ghz = 1.0
word_bits = 48
cite = "example"

[chip]
clusters = 2
lanes = 128
policy = "alternating"
cite = "example"

[units.ntt]
count = 1
elements_per_cycle = 128
cite = "example"

[units.bconv]
count = 1
lanes = 128
macs_per_lane = 4
cite = "example"

[units.auto]
count = 1
elements_per_cycle = 128
cite = "example"

[units.madu]
count = 2
elements_per_cycle = 128
cite = "example"

[units.prng]
count = 1
elements_per_cycle = 128
cite = "example"

[memory.scratchpad]
capacity_mb = 32.0
bandwidth_gbs = 4000.0
cite = "example"

[memory.register_file]
bandwidth_gbs = 8000.0
cite = "example"

[memory.offchip]
bandwidth_gbs = 500.0
stacks = 1
cite = "example"

[memory.noc]
bandwidth_gbs = 1000.0
cite = "example"

[options]
seeded_keys = true
of_twist = true
bconv_scale_in_intt = true
cite = "example"

[area]
node_nm = 28.0
ntt_points = 65536
offchip_phy = "hbm"
register_file_shared = true
cite = "example"
"#;

#[test]
fn a_description_without_component_tables_reports_the_prediction() {
    let m = Machine::from_toml(OWN_DESIGN, "own.toml").unwrap();
    assert!(m.components.is_empty());
    let p = predict(&m).unwrap();
    let w = tessera_programs::workloads::record(&tessera_programs::workloads::WorkloadSpec::new(
        "hmult",
        "test-small",
    ))
    .unwrap();
    let r = tessera_sim::simulate(&m, &w.label, &w.instrs).unwrap();
    assert_eq!(r.area_source, tessera_sim::area::PREDICTED_LABEL);
    assert_eq!(r.area_mm2, p.total_area_mm2);
    assert_eq!(r.peak_power_w, p.total_peak_w);
    assert!(r.area_mm2 > 0.0 && r.edap.is_finite());
    // Its energy follows the predicted components' peak power and utilization.
    assert_eq!(r.energy_scope, tessera_sim::report::EnergyScope::Full);
    assert!(r.energy_j > 0.0 && r.avg_power_w > 0.0 && r.avg_power_w <= r.peak_power_w);
    let t = tessera_sim::report::throughput(&m, &w.label, &w.instrs).unwrap();
    assert_eq!(t.area_source, tessera_sim::area::PREDICTED_LABEL);
    assert!((t.area_mm2 - p.total_area_mm2).abs() < 1e-9);
    assert!(t.avg_power_w > 0.0 && t.avg_power_w <= t.peak_power_w * (1.0 + 1e-9));
    // With a copied table, the table overrides the prediction (and says so).
    let ark = Machine::load("ark").unwrap();
    let r = tessera_sim::simulate(&ark, &w.label, &w.instrs).unwrap();
    assert_eq!(r.area_source, INPUT_LABEL);
    assert_eq!(r.area_mm2, tessera_sim::report::area_power(&ark).0);
}

/// Identical chiplets (`area.router_ports`, CiFHER: one design reused for every chiplet with
/// 5x5 routers): every core builds the same ports, so the cores' PHYs and routers grow with
/// the core count alone, the edge cores pay for ports no neighbour uses, the I/O dies keep
/// only their own link ends, and a router with fewer ports than a core's links is refused.
#[test]
fn identical_chiplets_build_every_port() {
    let load = |name: &str, bw: &str| {
        Machine::load(name)
            .unwrap()
            .with_setting("memory.noc.bandwidth_gbs", bw)
            .unwrap()
    };
    let (c16, c64) = (load("cifher-16", "250.0"), load("cifher-64", "250.0"));
    assert_eq!(c16.area.as_ref().unwrap().router_ports, Some(4));
    let (p16, p64) = (predict(&c16).unwrap(), predict(&c64).unwrap());
    for name in ["Die-to-die PHYs", "Routers"] {
        let r = area_of(&p64, name) / area_of(&p16, name);
        assert!((r - 4.0).abs() < 1e-9, "{name}: x{r}");
    }
    // Only the links that exist: fewer ports on the mesh's edges, and the I/O dies also
    // hold the cores' ends of their links.
    let mut links = c16.clone();
    links.area.as_mut().unwrap().router_ports = None;
    let pl = predict(&links).unwrap();
    assert!(area_of(&pl, "Die-to-die PHYs") < area_of(&p16, "Die-to-die PHYs"));
    assert!(area_of(&pl, "Routers") < area_of(&p16, "Routers"));
    assert!(area_of(&pl, "I/O dies") > area_of(&p16, "I/O dies"));
    // A 4 x 4 mesh's inner cores have four links: two ports cannot hold them.
    let e = c16
        .with_setting("area.router_ports", "2")
        .and_then(|m| predict(&m).map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("area.router_ports") && e.contains("at least 4"),
        "{e}"
    );
    let e = c16
        .with_setting("area.router_ports", "0")
        .unwrap_err()
        .to_string();
    assert!(e.contains("area.router_ports"), "{e}");
}
