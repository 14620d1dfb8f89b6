//! Option checks of `tessera simulate` and `tessera sweep` (issue 24, items 5 to 7): each
//! used to run and report with exit status 0 (or block, or abort); each is now exit status 2
//! with a message naming the option.

mod common;

/// Exit code and stderr (what these checks read).
fn tessera(args: &[&str]) -> (i32, String) {
    let (code, _, err) = common::tessera(args);
    (code, err)
}

/// CoFHEE has one PE and no throughput mode: `--mode throughput` ran as latency.
#[test]
fn throughput_mode_on_a_single_pe_machine_is_refused() {
    let (code, err) = tessera(&[
        "simulate",
        "--arch",
        "cofhee",
        "--workload",
        "ntt",
        "--params",
        "test-cofhee",
        "--mode",
        "throughput",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--mode throughput") && err.contains("cofhee"),
        "{err}"
    );
}

/// A key swept twice made two columns of one setting, the later silently winning.
#[test]
fn a_repeated_sweep_key_is_refused() {
    let out = std::env::temp_dir().join(format!("tessera-sweep-rep-{}", std::process::id()));
    let (code, err) = tessera(&[
        "sweep",
        "--arch",
        "ark",
        "--params",
        "test-small",
        "--set",
        "chip.clusters=1,2",
        "--set",
        "chip.clusters=4",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("chip.clusters") && err.contains("once"),
        "{err}"
    );
}

/// `--set chip.clusters=10^12` aborted the process allocating per-cluster state.
#[test]
fn a_cluster_count_beyond_the_limit_is_an_error_not_an_abort() {
    let (code, err) = tessera(&[
        "simulate",
        "--arch",
        "ark",
        "--workload",
        "hadd",
        "--params",
        "test-small",
        "--set",
        "chip.clusters=1000000000000",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("chip.clusters") && err.contains("1024"),
        "{err}"
    );
}

/// A trace path that is a device read until memory ran out.
#[cfg(unix)]
#[test]
fn a_trace_that_is_not_a_regular_file_is_refused() {
    let (code, err) = tessera(&["simulate", "--arch", "ark", "--workload", "/dev/zero"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("regular file"), "{err}");
}

/// `--reps 0` ran once and reported that median as if asked for; every bench now refuses it
/// before any work (key generation included).
#[test]
fn zero_bench_repetitions_are_refused() {
    for args in [
        &["bench", "ntt", "--logn", "10", "--reps", "0"][..],
        &["bench", "hrot", "--params", "test-small", "--reps", "0"][..],
        &["bench", "bootstrap", "--params", "test-boot", "--reps", "0"][..],
    ] {
        let (code, err) = tessera(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("reps = 0") && err.contains("1 to 1000000"),
            "{args:?}: {err}"
        );
    }
}
