//! `--backend cpu|cuda`, chosen once for the process (crates/backend/src/compute.rs): `info`
//! shows the choice and whether each backend can run here; a backend this build or machine
//! cannot run is a typed "not supported" error before any work; an unknown name lists the
//! allowed values; `bench` records the backend in its JSON line.

mod common;
use common::{tessera, tessera_env};

/// Whether this binary was built with CUDA support (the cuda backend's row says so).
fn cuda_built(info: &serde_json::Value) -> bool {
    info["backends"]
        .as_array()
        .expect("backend list")
        .iter()
        .find(|b| b["backend"] == "cuda")
        .is_some_and(|b| {
            !b["detail"]
                .as_str()
                .unwrap_or("")
                .contains("no CUDA support")
        })
}

#[test]
fn info_shows_the_choice_and_each_backends_availability() {
    let (code, out, err) = tessera(&["info", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["backend"], "cpu");
    let cpu = &v["backends"][0];
    assert_eq!(cpu["backend"], "cpu");
    assert_eq!(cpu["available"], true);
    let cuda = &v["backends"][1];
    assert_eq!(cuda["backend"], "cuda");
    if !cuda_built(&v) {
        assert_eq!(cuda["available"], false);
    }
    // The option and the environment variable both choose; the text form says it too.
    for (envs, args) in [
        (vec![], vec!["--backend", "cuda", "info"]),
        (vec![("TESSERA_BACKEND", "cuda")], vec!["info"]),
    ] {
        let (code, out, err) = tessera_env(&envs, &args);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("backend in force: cuda"), "{out}");
        assert!(out.contains("cuda: "), "{out}");
    }
    // The option wins over the environment.
    let (code, out, _) = tessera_env(
        &[("TESSERA_BACKEND", "cuda")],
        &["info", "--backend", "cpu", "--json"],
    );
    assert_eq!(code, 0);
    assert!(out.contains("\"backend\":\"cpu\""), "{out}");
}

#[test]
fn cuda_without_support_is_a_typed_error_before_any_work() {
    let (_, out, _) = tessera(&["info", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    if cuda_built(&v) && v["backends"][1]["available"] == true {
        eprintln!("skipped: this binary has a working CUDA backend");
        return;
    }
    let cases: [&[&str]; 3] = [
        &[
            "--backend",
            "cuda",
            "bench",
            "hmult",
            "--params",
            "test-small",
            "--reps",
            "1",
        ],
        &[
            "bench",
            "bootstrap",
            "--params",
            "test-boot",
            "--reps",
            "1",
            "--backend",
            "cuda",
        ],
        &["--backend", "cuda", "run", "lola", "--size", "2"],
    ];
    for args in cases {
        let (code, out, err) = tessera(args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(err.contains("not supported"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        if !cuda_built(&v) {
            assert!(err.contains("--features cuda"), "{err}");
        }
    }
    let (code, _, err) = tessera_env(
        &[("TESSERA_BACKEND", "cuda")],
        &["bench", "hmult", "--params", "test-small", "--reps", "1"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("not supported"), "{err}");
}

#[test]
fn unknown_backends_name_the_allowed_values() {
    let (code, _, err) = tessera(&["--backend", "gpu", "info"]);
    assert_eq!(code, 2);
    assert!(err.contains("gpu") && err.contains("cpu, cuda"), "{err}");
    let (code, _, err) = tessera_env(&[("TESSERA_BACKEND", "gpu")], &["info"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("TESSERA_BACKEND") && err.contains("cpu, cuda"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bench_records_the_backend() {
    let (code, out, err) = tessera(&[
        "--backend",
        "cpu",
        "bench",
        "hmult",
        "--params",
        "test-small",
        "--reps",
        "1",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["backend"], "cpu");
}
