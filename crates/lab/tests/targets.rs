//! The target files: every built-in one parses and names known machines and parameter sets;
//! malformed rows are errors naming the file and the row; rows naming a program that is not
//! registered are reported, not errors; relative rows and templates compute what they say.

use tessera_lab::reproduce::{run_files, Tally};
use tessera_lab::targets::{self, parse, Kind, BUILTIN};

#[test]
fn every_target_file_parses_and_names_known_machines_and_parameter_sets() {
    let mut rows = 0;
    for (paper, _) in BUILTIN {
        // `builtin` checks every row (machine, parameter set, band, paper value, metric).
        let f = targets::builtin(paper).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.paper, *paper);
        assert!(!f.rows.is_empty(), "{paper}");
        for r in &f.rows {
            let ms = [Some(&r.measure), r.measure.baseline.as_deref()];
            for m in ms.into_iter().flatten() {
                assert!(
                    tessera_sim::arch::Arch::load(&m.arch).is_ok(),
                    "{paper}: {}",
                    m.arch
                );
                if let Some(p) = &m.params {
                    assert!(targets::known_params(p), "{paper}: {p}");
                }
            }
        }
        rows += f.rows.len();
    }
    assert!(rows >= 80, "{rows} rows");
    let e = targets::builtin("nope").unwrap_err().to_string();
    assert!(e.contains("paper") && e.contains("ark"), "{e}");
}

const GOOD: &str = r#"
paper = "test"

[[row]]
item = "area"
unit = "mm2"
paper = 9.8345
band = [0.99, 1.01]
kind = "input"
cite = "cofhee.md Table VIII"
measure = { arch = "cofhee", metric = "area_mm2" }
"#;

#[test]
fn bad_bands_values_and_names_are_errors_naming_the_file_and_row() {
    let second = |field: &str| {
        format!("{GOOD}\n[[row]]\nitem = \"second\"\nunit = \"x\"\nkind = \"prediction\"\ncite = \"c\"\n{field}\n")
    };
    let cases = [
        (
            second("paper = 1.0\nband = [1.2, 0.8]\nmeasure = { arch = \"ark\", metric = \"area_mm2\" }"),
            "band",
        ),
        (
            second("paper = 1.0\nband = [-1.0, 2.0]\nmeasure = { arch = \"ark\", metric = \"area_mm2\" }"),
            "band",
        ),
        (
            second("band = [0.8, 1.2]\nmeasure = { arch = \"ark\", metric = \"area_mm2\" }"),
            "band without a paper value",
        ),
        (
            second("paper = 0.0\nmeasure = { arch = \"ark\", metric = \"area_mm2\" }"),
            "paper = 0",
        ),
        (
            second("measure = { arch = \"no-such-machine\", metric = \"area_mm2\" }"),
            "measure.arch",
        ),
        (
            second("measure = { arch = \"ark\", params = \"no-such-set\", workload = \"hmult\", metric = \"time_ms\" }"),
            "measure.params",
        ),
        (
            second("measure = { arch = \"ark\", metric = \"time_ms\" }"),
            "needs a measure.workload",
        ),
        (
            second("compare = \"ratio\"\nmeasure = { arch = \"ark\", metric = \"area_mm2\" }"),
            "baseline",
        ),
    ];
    for (text, want) in cases {
        let e = parse(&text, "my-targets.toml").unwrap_err().to_string();
        assert!(
            e.contains("my-targets.toml") && e.contains("row 2") && e.contains("'second'"),
            "{e}"
        );
        assert!(e.contains(want), "{want}: {e}");
    }
    // A value of the wrong type and an unknown field are parse errors naming the row.
    let e = parse(
        &second("paper = \"big\"\nmeasure = { arch = \"ark\", metric = \"area_mm2\" }"),
        "t.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("t.toml") && e.contains("row 2"), "{e}");
    let e = parse(
        &second("colour = 1\nmeasure = { arch = \"ark\", metric = \"area_mm2\" }"),
        "t.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("t.toml") && e.contains("colour"), "{e}");
    assert!(parse(GOOD, "t.toml").is_ok());
}

#[test]
fn an_unregistered_program_is_a_reported_row_and_inputs_are_tallied_apart() {
    let text = format!(
        "{GOOD}
[[row]]
item = \"sorting\"
unit = \"ms\"
paper = 1990.0
band = [0.7, 1.3]
kind = \"prediction\"
cite = \"cifher.md Table III\"
measure = {{ arch = \"ark\", workload = \"no-such-program\", params = \"ark\", metric = \"time_per_unit_ms\" }}
"
    );
    let f = parse(&text, "t.toml").unwrap();
    let rows = run_files(&[f], &|_| {}).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].hit, Some(true));
    assert_eq!(rows[0].kind, Kind::Input);
    assert_eq!(rows[1].hit, None);
    assert_eq!(rows[1].model_value, None);
    assert_eq!(
        rows[1].source,
        "not available: program no-such-program not registered"
    );
    let t = Tally::of(&rows);
    assert_eq!((t.inputs.hits, t.predictions.reported), (1, 1));
    assert_eq!(
        t.to_string(),
        "2 targets: 1 hits, 0 misses, 1 reported (inputs: 1 hits, 0 misses, 0 reported; predictions: 0 hits, 0 misses, 1 reported)"
    );
}

/// A relative row is the named combination of two simulations, and the text's template
/// values are the measurement's.
#[test]
fn relative_rows_and_templates_compute_what_they_say() {
    let text = r#"
paper = "test"

[[row]]
item = "two towers vs one ({levels} levels, {slots} slots)"
unit = "x"
kind = "prediction"
cite = "n = 2^13 took {time_ms:.3} ms, n = 2^12 {baseline_time_ms:.3} ms"
compare = "ratio"
[row.measure]
arch = "cofhee"
workload = "ctmult"
params = "cofhee-n13"
metric = "time_s"
baseline = { arch = "cofhee", workload = "ctmult", params = "cofhee-n12", metric = "time_s" }

[[row]]
item = "one tower"
unit = "ms"
kind = "prediction"
cite = "c"
measure = { arch = "cofhee", workload = "ctmult", params = "cofhee-n12", metric = "time_ms" }
"#;
    let rows = run_files(&[parse(text, "t.toml").unwrap()], &|_| {}).unwrap();
    let arch = tessera_sim::arch::Arch::load("cofhee").unwrap();
    let time = |p: &str| {
        let w = tessera_programs::workloads::wide::record_wide("ctmult", p).unwrap();
        arch.simulate(&w.label, &w.instrs).unwrap().time_s
    };
    let (t13, t12) = (time("cofhee-n13"), time("cofhee-n12"));
    assert_eq!(rows[0].model_value, Some(t13 / t12));
    assert_eq!(rows[1].model_value, Some(t12 * 1e3));
    assert_eq!(rows[0].item, "two towers vs one (0 levels, 8192 slots)");
    assert_eq!(
        rows[0].source,
        format!(
            "n = 2^13 took {:.3} ms, n = 2^12 {:.3} ms",
            t13 * 1e3,
            t12 * 1e3
        )
    );
}

/// A program row's `boots` and `boot_share_pct` are its window's bootstrappings and the
/// share of the simulated time spent inside them.
#[test]
fn a_program_rows_boots_and_boot_share_are_its_windows() {
    let text = r#"
paper = "test"

[[row]]
item = "dnn-train step"
unit = "ms"
kind = "prediction"
cite = "{boots} bootstrappings, {boot_share_pct:.3} % of the time"
measure = { arch = "ark", workload = "dnn-train", params = "test-program", size = 2, metric = "time_per_unit_ms" }
"#;
    let rows = run_files(&[parse(text, "t.toml").unwrap()], &|_| {}).unwrap();
    let opts = tessera_programs::RunOptions {
        params: Some("test-program".into()),
        size: Some(2),
        ..Default::default()
    };
    let rec = tessera_programs::record("dnn-train", &opts, true).unwrap();
    let arch = tessera_sim::arch::Arch::load("ark").unwrap();
    let r = arch.simulate(&rec.label, &rec.instrs).unwrap();
    let share = tessera_lab::measure::boot_share_pct(&r);
    // The steady window is one step and its weights' bootstrapping (4 in all at 10 levels).
    assert_eq!(rec.boots, 4);
    assert!(share > 0.0 && share < 100.0, "{share}");
    assert_eq!(
        rows[0].source,
        format!("{} bootstrappings, {share:.3} % of the time", rec.boots)
    );
    assert_eq!(rows[0].model_value, Some(r.time_s * 1e3));
}

/// Rows marked `extended` run only in the extended group (`tessera reproduce --extended`).
#[test]
fn extended_rows_run_only_in_the_extended_group() {
    let text = format!("{GOOD}\n[[row]]\nitem = \"slow\"\nunit = \"mm2\"\nkind = \"input\"\ncite = \"x\"\nextended = true\nmeasure = {{ arch = \"cofhee\", metric = \"area_mm2\" }}\n");
    let f = parse(&text, "t.toml").unwrap();
    assert_eq!(f.rows.len(), 2);
    let items = |ext: bool| -> Vec<String> {
        f.clone()
            .group(ext)
            .rows
            .iter()
            .map(|r| r.item.clone())
            .collect()
    };
    assert_eq!(items(false), vec!["area"]);
    assert_eq!(items(true), vec!["area", "slow"]);
}
