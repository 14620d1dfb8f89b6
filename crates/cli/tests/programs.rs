//! `tessera run` and `tessera simulate --workload PROGRAM` end to end at CI size (the insecure
//! `test-program` set, N = 2^10): results on good input, typed errors on bad input.

mod common;
use common::tessera;

/// `tessera run helr` at CI size (`test-program`, a mini-batch of 16) for `iterations`, with
/// `extra` flags: its JSON report, after checking that it exits 0.
fn run_helr(iterations: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "run",
        "helr",
        "--params",
        "test-program",
        "--size",
        "16",
        "--iterations",
        iterations,
        "--json",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = tessera(&args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(out.trim()).expect("one JSON line")
}

#[test]
fn run_helr_json_passes_and_counts() {
    let v = run_helr("3", &[]);
    assert_eq!(v["passed"], true);
    assert_eq!(v["program"], "helr");
    assert_eq!(v["boots"], 1);
    assert_eq!(v["counts"]["HMult"], 3 * 32);
    assert!(v["phases"]["compute_s"].as_f64().unwrap() > 0.0);
    let err = v["checks"][0]["value"].as_f64().unwrap();
    assert!(err < 1e-3, "{err}");
}

/// `tessera simulate --workload helr` at CI size on ARK with `extra` flags: its JSON report,
/// after checking that it exits 0.
fn simulate_helr(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "simulate",
        "--workload",
        "helr",
        "--params",
        "test-program",
        "--size",
        "16",
        "--arch",
        "ark",
        "--json",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = tessera(&args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(out.trim()).expect("one JSON line")
}

#[test]
fn simulate_helr_reports_time_per_iteration() {
    let v = simulate_helr(&[]);
    assert_eq!(v["window_units"], 2);
    let t = v["time_s"].as_f64().unwrap();
    let per = v["time_per_iteration_s"].as_f64().unwrap();
    assert!(t > 0.0 && (per - t / 2.0).abs() < 1e-12 * t);
}

/// sort and linreg through the CLI at CI size: `run` passes its check, `simulate` reports a
/// time per unit of its window (sort: steps of the steady state; linreg: iterations).
#[test]
fn run_and_simulate_sort_and_linreg() {
    let (code, out, err) = tessera(&[
        "run",
        "sort",
        "--params",
        "test-program",
        "--size",
        "8",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(
        (v["passed"].as_bool(), v["iterations"].as_u64()),
        (Some(true), Some(6))
    );
    let (code, out, err) = tessera(&[
        "simulate",
        "--workload",
        "sort",
        "--params",
        "test-program",
        "--size",
        "8",
        "--arch",
        "ark",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert!(v["time_per_step_s"].as_f64().unwrap() > 0.0, "{v}");
    let (code, out, err) = tessera(&[
        "run",
        "linreg",
        "--params",
        "test-program",
        "--iterations",
        "2",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["passed"], true);
    let (code, out, err) = tessera(&[
        "simulate",
        "--workload",
        "linreg",
        "--params",
        "test-program",
        "--arch",
        "ark",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert!(v["time_per_iteration_s"].as_f64().unwrap() > 0.0, "{v}");
}

#[test]
fn bad_program_input_is_a_clear_error() {
    let (code, _, err) = tessera(&["run", "resnet56"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("allowed: helr, lola, logreg, linreg, sort"),
        "{err}"
    );
    let (code, _, err) = tessera(&["run", "sort", "--params", "test-program", "--size", "12"]);
    assert_eq!(code, 2);
    assert!(err.contains("power of two from 4"), "{err}");
    let (code, _, err) = tessera(&["run", "sort", "--iterations", "3"]);
    assert_eq!(code, 2);
    assert!(err.contains("none for sort"), "{err}");
    let (code, _, err) = tessera(&["run", "lola", "--params", "ark"]);
    assert_eq!(code, 2);
    assert!(err.contains("lola-n14"), "{err}");
    let (code, _, err) = tessera(&["run", "helr", "--params", "test-boot"]);
    assert_eq!(code, 2);
    assert!(err.contains("test-program"), "{err}");
    let (code, _, err) = tessera(&["run", "helr", "--params", "test-program", "--size", "3"]);
    assert_eq!(code, 2);
    assert!(err.contains("power of two"), "{err}");
    let (code, _, err) = tessera(&[
        "run",
        "helr",
        "--params",
        "test-program",
        "--size",
        "16",
        "--data",
        "/nonexistent",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("mnist-10k.npz") && err.contains("/nonexistent"),
        "{err}"
    );
    let (code, _, err) = tessera(&["simulate", "--workload", "hmult", "--size", "4"]);
    assert_eq!(code, 2);
    assert!(err.contains("--size"), "{err}");
}

/// `--streamed-keyswitch` with a program: `run` computes with it and passes, saying so;
/// `simulate` records it and reports the same window with a smaller peak on-chip working set
/// than the batched order (one extended digit alive at a time instead of all of them).
/// A BFV program refuses it, and every other CKKS circuit option, before it runs.
#[test]
fn programs_take_the_streamed_key_switch() {
    let v = run_helr("2", &["--streamed-keyswitch"]);
    assert_eq!(v["passed"], true);
    assert!(
        v["notes"].to_string().contains("streamed key switching"),
        "{v}"
    );
    let (batched, streamed) = (simulate_helr(&[]), simulate_helr(&["--streamed-keyswitch"]));
    assert_eq!(batched["window_units"], streamed["window_units"]);
    let peak = |v: &serde_json::Value| v["peak_onchip_bytes"].as_f64().unwrap();
    assert!(
        peak(&streamed) < peak(&batched),
        "streamed {} against batched {}",
        peak(&streamed),
        peak(&batched)
    );
    for flag in ["--streamed-keyswitch", "--min-ks"] {
        let (code, _, err) = tessera(&["run", "cryptonets", "--size", "2", flag]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("BFV program") && err.contains(flag), "{err}");
    }
}

/// Bootstrapping options given to a program that bootstraps nowhere at this size
/// (`linreg-inference` sets up a circuit and never uses it) change nothing: `simulate`
/// refuses them, and `run`, whose results stand, says so instead of "added to the circuit".
#[test]
fn bootstrapping_options_that_change_nothing_are_said() {
    let base = ["--workload", "linreg-inference", "--params", "test-program"];
    let (code, _, err) = tessera(&[&["simulate"][..], &base[..], &["--min-ks"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("holds no bootstrapping"), "{err}");
    let (code, out, err) = tessera(&[
        "run",
        "linreg-inference",
        "--params",
        "test-program",
        "--min-ks",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["boots"], 0);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("changed nothing") && !notes.contains("added to the circuit"),
        "{notes}"
    );
}
