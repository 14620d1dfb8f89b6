//! Machine descriptions that extend others (`extends = "..."`).

use tessera_sim::arch::{resolve_extends, Arch};
use tessera_sim::machine::Machine;
use tessera_sim::report::area_power;

fn value(text: &str) -> toml::Value {
    toml::from_str(text).unwrap()
}

/// The merge rule on a hand-made base: scalars are replaced, tables merge key by key, and
/// `[[component]]` entries merge by name (matching names merged, new names appended, the
/// rest kept in order).
#[test]
fn a_child_is_merged_over_its_base_by_key_and_by_component_name() {
    let dir = std::env::temp_dir().join(format!("tessera-extends-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("base.toml"),
        r#"
name = "base"
[clock]
ghz = 1.0
word_bits = 64
[[component]]
name = "A"
area_mm2 = 1.0
peak_w = 2.0
[[component]]
name = "B"
area_mm2 = 3.0
"#,
    )
    .unwrap();
    let child = value(
        r#"
extends = "base.toml"
name = "child"
[clock]
ghz = 2.0
[[component]]
name = "B"
area_mm2 = 5.0
[[component]]
name = "C"
area_mm2 = 7.0
"#,
    );
    let v = resolve_extends(child, "child", Some(&dir), 0).unwrap();
    assert!(v.get("extends").is_none());
    assert_eq!(v["name"].as_str(), Some("child"));
    assert_eq!(v["clock"]["ghz"].as_float(), Some(2.0));
    assert_eq!(v["clock"]["word_bits"].as_integer(), Some(64));
    let comps = v["component"].as_array().unwrap();
    let names: Vec<_> = comps.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["A", "B", "C"]);
    assert_eq!(comps[0]["peak_w"].as_float(), Some(2.0));
    assert_eq!(comps[1]["area_mm2"].as_float(), Some(5.0));
    assert_eq!(comps[2]["area_mm2"].as_float(), Some(7.0));

    // `remove = true` deletes the base's component of that name; an unknown name is an error.
    let drop = value("extends = \"base.toml\"\n[[component]]\nname = \"A\"\nremove = true\n");
    let v = resolve_extends(drop, "child", Some(&dir), 0).unwrap();
    let names: Vec<_> = v["component"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["B"]);
    let typo = value("extends = \"base.toml\"\n[[component]]\nname = \"Z\"\nremove = true\n");
    let e = resolve_extends(typo, "child", Some(&dir), 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("remove") && e.contains('Z'), "{e}");

    // A cycle is refused with a message naming the key, not a stack overflow.
    std::fs::write(dir.join("x.toml"), "extends = \"y.toml\"\nname = \"x\"\n").unwrap();
    std::fs::write(dir.join("y.toml"), "extends = \"x.toml\"\nname = \"y\"\n").unwrap();
    let e = Arch::load(dir.join("x.toml").to_str().unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("extends") && e.contains("cycle"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_unknown_base_is_an_error_naming_the_choices() {
    let e = Arch::from_toml("extends = \"no-such-machine\"\nname = \"x\"\n", "inline")
        .unwrap_err()
        .to_string();
    assert!(e.contains("extends") && e.contains("reed"), "{e}");
    let e = Arch::from_toml("extends = 3\n", "inline")
        .unwrap_err()
        .to_string();
    assert!(e.contains("extends") && e.contains("string"), "{e}");
}

/// The 28 nm REED descriptions are the 7 nm design with Table 2's 28 nm areas: everything
/// but the areas and the wafer price is the same, and the area is the sum of the 28 nm
/// per-component figures times the counts (1024x64: 4 x 74.59 + 12.32 mm2).
/// H3's memory variants extend `h3`: the same tiles, another off-chip memory, and no stacked
/// DRAM component.
#[test]
fn h3_variants_drop_the_stacked_dram() {
    let h3 = Machine::load("h3").unwrap();
    for v in ["h3-hbm", "h3-ddr4"] {
        let m = Machine::load(v).unwrap();
        assert_eq!(m.components.len() + 1, h3.components.len(), "{v}");
        assert!(m.components.iter().all(|c| c.name != "Stacked DRAM"), "{v}");
        assert!(!m.memory.offchip.per_cluster, "{v}");
        assert_eq!(m.chip.clusters, h3.chip.clusters);
    }
}

#[test]
fn reed_at_28_nm_changes_areas_only() {
    for (seven, twenty_eight, expected) in [
        (
            "reed",
            "reed-28nm",
            4.0 * (38.2 + 3.1 + 0.15 + 0.14 + 16.1 + 16.9) + 12.32,
        ),
        (
            "reed-512x128",
            "reed-512x128-28nm",
            4.0 * (56.8 + 6.6 + 0.28 + 0.32 + 16.1 + 33.8) + 14.64,
        ),
    ] {
        let a = Machine::load(seven).unwrap();
        let b = Machine::load(twenty_eight).unwrap();
        assert!((area_power(&b).0 - expected).abs() < 1e-9, "{twenty_eight}");
        assert_eq!(a.clock.ghz, b.clock.ghz);
        assert_eq!(a.chip.lanes, b.chip.lanes);
        assert_eq!(a.components.len(), b.components.len());
        for (x, y) in a.components.iter().zip(&b.components) {
            assert_eq!((&x.name, x.count, x.per), (&y.name, y.count, y.per));
        }
        let (ca, cb) = (a.cost.unwrap(), b.cost.unwrap());
        assert_eq!(ca.defect_density_per_cm2, cb.defect_density_per_cm2);
        assert!(cb.wafer_cost_usd < ca.wafer_cost_usd);
    }
}
