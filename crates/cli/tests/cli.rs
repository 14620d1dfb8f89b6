//! End-to-end checks of the `tessera` binary: results on good input, typed errors (exit code 2,
//! a message naming the parameter) on bad input, never a panic.

use std::process::Command;

fn tessera(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .output()
        .expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bench_ntt_json_has_the_documented_fields() {
    let (code, out, _) = tessera(&["bench", "ntt", "--logn", "10", "--reps", "5", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["op"], "ntt");
    assert_eq!(v["logn"], 10);
    assert_eq!(v["bits"], 60);
    assert_eq!(v["threads"], 1);
    assert!(v["median_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn bench_ntt_table_is_readable() {
    let (code, out, _) = tessera(&[
        "bench",
        "ntt",
        "--logn",
        "11",
        "--reps",
        "3",
        "--threads",
        "2",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("median_us"));
    assert!(out.contains("2^11"));
}

#[test]
fn bad_input_is_a_clear_error_not_a_panic() {
    for (args, needle) in [
        (vec!["bench", "ntt", "--logn", "20"], "logn"),
        (vec!["bench", "ntt", "--logn", "0"], "logn"),
        (vec!["bench", "ntt", "--logn", "10", "--bits", "70"], "bits"),
        (
            vec!["bench", "ntt", "--logn", "10", "--threads", "0"],
            "threads",
        ),
        (
            vec!["bench", "ntt", "--logn", "10", "--limbs", "0"],
            "limbs",
        ),
    ] {
        let (code, _, err) = tessera(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn bench_ckks_ops_print_the_documented_json() {
    for op in ["hmult", "hrot", "hoisted16"] {
        let (code, out, err) = tessera(&[
            "bench",
            op,
            "--params",
            "test-small",
            "--reps",
            "1",
            "--json",
        ]);
        assert_eq!(code, 0, "{op}: {err}");
        let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
        assert_eq!(v["op"], op);
        assert_eq!(v["params"], "test-small");
        assert_eq!(v["threads"], 1);
        assert!(v["median_s"].as_f64().unwrap() > 0.0);
        assert!(v["precision_bits"].as_f64().unwrap() > 15.0, "{op}: {v}");
    }
    let (code, _, err) = tessera(&["bench", "hmult", "--params", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown parameter preset"), "{err}");
}

#[test]
fn bench_profile_and_plan_report_what_they_say() {
    // --profile adds one line per primary function after the result line.
    let (code, out, err) = tessera(&[
        "bench",
        "hrot",
        "--params",
        "test-small",
        "--reps",
        "1",
        "--json",
        "--profile",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    assert_eq!(lines[0]["op"], "hrot");
    let prims: Vec<&str> = lines[1..]
        .iter()
        .map(|v| v["primary"].as_str().unwrap())
        .collect();
    for p in ["ntt", "intt", "bconv", "dot", "automorphism", "expand_seed"] {
        assert!(prims.contains(&p), "{p} missing from {prims:?}");
    }
    // plan: one line per level, dynamic never costlier than fixed.
    let (code, out, err) = tessera(&["plan", "--params", "test-medium", "--json"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 9);
    for r in &rows {
        assert!(
            r["dynamic"]["cost"].as_f64().unwrap() <= r["fixed"]["cost"].as_f64().unwrap() + 1e-9
        );
    }
    let (code, _, err) = tessera(&["plan", "--params", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown parameter preset"), "{err}");
}

#[test]
fn bench_bootstrap_prints_the_documented_json() {
    let (code, out, err) = tessera(&[
        "bench",
        "bootstrap",
        "--params",
        "test-boot",
        "--reps",
        "1",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["op"], "bootstrap");
    assert_eq!(v["params"], "test-boot");
    assert_eq!(v["threads"], 1);
    assert!(v["median_s"].as_f64().unwrap() > 0.0);
    assert!(v["precision_bits"].as_f64().unwrap() > 20.0, "{v}");
    assert!(v["max_error_bits"].as_f64().unwrap() > 16.0, "{v}");
    assert!(v["levels_left"].as_u64().unwrap() >= 1);
    let (code, _, err) = tessera(&["bench", "bootstrap", "--params", "reed"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown parameter preset"), "{err}");
}
