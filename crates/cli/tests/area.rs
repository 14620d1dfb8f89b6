//! `tessera area`: the predicted breakdown of one design, the comparison with the papers'
//! totals, and clear errors on bad input.

mod common;
use common::tessera;

#[test]
fn area_json_has_the_prediction_and_the_labelled_input() {
    let (code, out, err) = tessera(&["area", "--arch", "ark", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["arch"], "ark");
    assert_eq!(v["node_nm"], 7.0);
    assert!(v["total_area_mm2"].as_f64().unwrap() > 0.0);
    assert!(v["components"].as_array().unwrap().len() >= 5);
    assert_eq!(v["input_label"], "input: paper's table");
    assert!((v["input_area_mm2"].as_f64().unwrap() - 418.2).abs() < 0.1);
    // A --set reaches the prediction: a 28 nm ARK is larger.
    let (code, out, _) = tessera(&[
        "area",
        "--arch",
        "ark",
        "--set",
        "area.node_nm=28",
        "--json",
    ]);
    assert_eq!(code, 0);
    let w: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(w["total_area_mm2"].as_f64() > v["total_area_mm2"].as_f64());
}

#[test]
fn area_table_and_targets_print() {
    let (code, out, err) = tessera(&["area", "--arch", "cofhee"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Dual-port SRAMs") && out.contains("not modelled"));
    let (code, out, err) = tessera(&["area", "--targets", "--json"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for arch in ["ark", "reed", "reed-28nm", "cifher", "h3", "cofhee"] {
        let r = rows.iter().find(|r| r["arch"] == arch).expect(arch);
        let ratio = r["predicted_mm2"].as_f64().unwrap() / r["paper_mm2"].as_f64().unwrap();
        assert!((ratio - r["ratio"].as_f64().unwrap()).abs() < 1e-12);
        assert_eq!(r["hit"].as_bool().unwrap(), (ratio - 1.0).abs() <= 0.15);
    }
    let (code, out, _) = tessera(&["area", "--targets"]);
    assert_eq!(code, 0);
    assert!(out.contains("paper mm2") && out.contains("ark.md Table IV"));
}

#[test]
fn bad_area_input_is_a_clear_error_not_a_panic() {
    for (args, needle) in [
        (
            vec!["area", "--arch", "ark", "--set", "area.node_nm=3"],
            "area.node_nm",
        ),
        (vec!["area", "--arch", "nope"], "arch"),
        (vec!["area"], "--arch"),
        (vec!["area", "--arch", "ark", "--targets"], "--targets"),
    ] {
        let (code, _, err) = tessera(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
