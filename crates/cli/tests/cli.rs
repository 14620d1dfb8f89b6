//! End-to-end checks of the `tessera` binary: results on good input, typed errors (exit code 2,
//! a message naming the parameter) on bad input, never a panic.

mod common;
use common::tessera;

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
    // 32-bit words are refused, naming the prime, where a prime is 2^30 or more; the JSON
    // names the word measured.
    let (code, _, err) = tessera(&["bench", "hmult", "--params", "test-small", "--word", "32"]);
    assert_ne!(code, 0);
    assert!(err.contains("2^30") && err.contains("word size"), "{err}");
    let (code, out, err) = tessera(&[
        "bench",
        "hrot",
        "--params",
        "test-small",
        "--word",
        "64",
        "--reps",
        "1",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["word_bits"], 64);
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
    // The CPU backend fuses ModUp (BConv and NTT) with the seeded key's expansion and the
    // inner product (`Backend::mod_up_dot_pair_seeded_key`, profiled as `bconv+ntt+dot`).
    for p in ["ntt", "intt", "bconv+ntt+dot", "automorphism"] {
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
    assert_eq!(v["double_hoisting"], false);
    // Double hoisting: the same precision, fewer NTTs (one ModDown per part per matrix).
    let (code, out, err) = tessera(&[
        "bench",
        "bootstrap",
        "--params",
        "test-boot",
        "--reps",
        "1",
        "--hoisting",
        "double",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let d: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(d["double_hoisting"], true);
    assert!(d["precision_bits"].as_f64().unwrap() > 20.0, "{d}");
    assert!(
        d["trace"]["ntt_limbs"].as_u64().unwrap() < v["trace"]["ntt_limbs"].as_u64().unwrap(),
        "{d}"
    );
    let (code, _, err) = tessera(&["bench", "bootstrap", "--hoisting", "triple"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("single") && err.contains("double"), "{err}");
    // META-BTS: a second bootstrapping of the error, one level more, many bits more.
    let (code, out, err) = tessera(&[
        "bench",
        "bootstrap",
        "--params",
        "test-boot",
        "--threads",
        "1",
        "--reps",
        "1",
        "--meta-bts",
        "18",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["levels_left"], 3, "{v}");
    assert_eq!(v["meta_bts"], 18, "{v}");
    assert!(v["precision_bits"].as_f64().unwrap() > 34.0, "{v}");
    // Double-prime rescaling: levels_left counts rescales (pairs of primes), not primes.
    let (code, out, err) = tessera(&[
        "bench",
        "bootstrap",
        "--params",
        "test-boot-double",
        "--threads",
        "1",
        "--reps",
        "1",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["levels_left"], 4, "{v}");
    assert!(v["precision_bits"].as_f64().unwrap() > 20.0, "{v}");
    let (code, _, err) = tessera(&["bench", "bootstrap", "--params", "test-small"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("'test-small' has no bootstrapping circuit") && err.contains("test-boot"),
        "{err}"
    );
}

#[test]
fn simulate_json_has_the_documented_fields() {
    let (code, out, err) = tessera(&[
        "simulate",
        "--arch",
        "ark",
        "--workload",
        "bootstrap",
        "--params",
        "test-boot",
        "--min-ks",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["arch"], "ark");
    for key in [
        "time_s",
        "cycles",
        "energy_j",
        "avg_power_w",
        "area_mm2",
        "offchip_bytes",
        "noc_bytes",
    ] {
        assert!(v[key].as_f64().unwrap() >= 0.0, "{key}");
    }
    assert!(v["time_s"].as_f64().unwrap() > 0.0);
    assert_eq!(v["energy_scope"], "full");
    for unit in ["ntt", "bconv", "auto", "madu", "offchip", "noc"] {
        let u = v["utilization"][unit].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&u), "{unit} {u}");
    }
}

#[test]
fn simulate_additive_reports_the_sum_of_operations() {
    let args = [
        "simulate",
        "--arch",
        "reed",
        "--workload",
        "hmult",
        "--params",
        "test-small",
    ];
    let (code, out, err) = tessera(&[&args[..], &["--additive", "--json"]].concat());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    // One HE operation: its sum is that operation timed warm.
    let (_, warm, _) = tessera(&[&args[..], &["--warm", "--json"]].concat());
    let w: serde_json::Value = serde_json::from_str(warm.trim()).unwrap();
    let (a, t) = (
        v["additive_s"].as_f64().unwrap(),
        w["time_s"].as_f64().unwrap(),
    );
    assert!(a > 0.0 && (a - t).abs() <= 1e-9 * t, "{a} vs {t}");
    assert_eq!(v["energy_scope"], "none");
    let (code, table, _) = tessera(&[&args[..], &["--additive"]].concat());
    assert_eq!(code, 0);
    assert!(
        table.contains("additive (sum of warm operations)"),
        "{table}"
    );
    assert!(table.contains("not modelled"), "{table}");
    // Outside latency mode it is an error naming the flag.
    let (code, _, err) = tessera(&[&args[..], &["--additive", "--mode", "throughput"]].concat());
    assert_eq!(code, 2);
    assert!(err.contains("--additive"), "{err}");
}

#[test]
fn simulate_reads_a_trace_file_and_writes_timeline_and_plot() {
    // A hand-written two-instruction trace (format documented in tessera_backend::trace):
    // the header names the ring (two 40-bit primes = 1 mod 2n), which `read_trace` checks.
    let dir = std::env::temp_dir();
    let pid = std::process::id();
    let trace = dir.join(format!("tessera-cli-trace-{pid}.jsonl"));
    std::fs::write(
        &trace,
        "{\"format\":\"tessera-trace\",\"version\":2,\"n\":4096,\"moduli\":[1099511799809,1099511922689]}\n\
         {\"seq\":0,\"op\":\"load\",\"dst\":1,\"limbs\":[0,1],\"n\":4096,\"kind\":\"ciphertext\"}\n\
         {\"seq\":1,\"op\":\"ntt\",\"dst\":1,\"srcs\":[1],\"limbs\":[0,1],\"n\":4096,\"kind\":\"ciphertext\"}\n",
    )
    .unwrap();
    let tl = dir.join(format!("tessera-cli-tl-{pid}.json"));
    let svg = dir.join(format!("tessera-cli-ut-{pid}.svg"));
    let (code, out, err) = tessera(&[
        "simulate",
        "--workload",
        trace.to_str().unwrap(),
        "--timeline",
        tl.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("time") && out.contains("utilization ntt"),
        "{out}"
    );
    assert!(std::fs::metadata(&tl).unwrap().len() > 0);
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    for p in [trace, tl, svg] {
        std::fs::remove_file(p).ok();
    }
}

#[test]
fn simulate_and_reproduce_errors_name_the_parameter() {
    let (code, _, err) = tessera(&["simulate", "--arch", "nope", "--workload", "ntt"]);
    assert_eq!(code, 2);
    assert!(err.contains("arch"), "{err}");
    let (code, _, err) = tessera(&["simulate", "--set", "chip.clusters=0", "--workload", "ntt"]);
    assert_eq!(code, 2);
    assert!(err.contains("chip.clusters"), "{err}");
    let (code, _, err) = tessera(&["reproduce", "--paper", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("paper"), "{err}");
}

#[test]
fn reproduce_prints_a_tally_and_a_markdown_table() {
    let (code, out, err) = tessera(&["reproduce", "--paper", "cofhee"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("15 targets: 10 hits, 2 misses, 3 reported"),
        "{out}"
    );
    let (code, md, err) = tessera(&["reproduce", "--paper", "cofhee", "--markdown"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        md.starts_with("| paper | item | paper | model | ratio | target |"),
        "{md}"
    );
    assert!(
        md.contains("| CoFHEE | NTT cycles, n = 2^12 (cycles) | 24,841.0 |"),
        "{md}"
    );
    assert!(err.contains("15 targets"), "{err}");
    let (code, _, err) = tessera(&["reproduce", "--json", "--markdown"]);
    assert_eq!(code, 2);
    assert!(err.contains("--markdown"), "{err}");
}

#[test]
fn plan_draws_cost_and_key_size_per_level() {
    let prefix = std::env::temp_dir().join(format!("tessera-plan-{}", std::process::id()));
    let prefix = prefix.to_str().unwrap();
    let (code, out, err) = tessera(&["plan", "--params", "test-medium", "--plot", prefix]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("summed over levels"), "{out}");
    for suffix in ["cost", "keys"] {
        let path = format!("{prefix}-{suffix}.svg");
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("dynamic"), "{path}");
        std::fs::remove_file(path).ok();
    }
    let (code, _, err) = tessera(&["plan", "--params", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("preset"), "{err}");
}

#[test]
fn sweep_writes_csv_and_plot() {
    let dir = std::env::temp_dir();
    let out = dir.join(format!("tessera-sweep-{}", std::process::id()));
    let (code, stdout, err) = tessera(&[
        "sweep",
        "--arch",
        "reed",
        "--set",
        "chip.clusters=1,2,4",
        "--set",
        "memory.noc.bandwidth_gbs=315.0,630.0",
        "--workload",
        "keyswitch",
        "--params",
        "test-small",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("chip.clusters"), "{stdout}");
    let csv = std::fs::read_to_string(out.with_extension("csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 6, "{csv}");
    assert!(csv.starts_with("chip.clusters,memory.noc.bandwidth_gbs,time_s"));
    let svg = std::fs::read_to_string(out.with_extension("svg")).unwrap();
    assert!(svg.contains("<polyline"));
    std::fs::remove_file(out.with_extension("csv")).ok();
    std::fs::remove_file(out.with_extension("svg")).ok();
    let (code, _, err) = tessera(&["sweep", "--set", "chip.clusters"]);
    assert_eq!(code, 2);
    assert!(err.contains("--set"), "{err}");
}

/// The sweep plot's x axis is the first key with distinct numeric values (for `arch`,
/// distinct cluster counts); without one, the first key's values are categories.
#[test]
fn sweep_plots_against_a_numeric_key_or_categories() {
    let dir = std::env::temp_dir();
    let svg_of = |name: &str, sets: &[&str]| -> String {
        let out = dir.join(format!("tessera-sweep-{name}-{}", std::process::id()));
        let mut args = vec!["sweep", "--arch", "h3"];
        for s in sets {
            args.extend(["--set", s]);
        }
        let o = out.to_str().unwrap().to_string();
        args.extend([
            "--workload",
            "keyswitch",
            "--params",
            "test-small",
            "--out",
            &o,
        ]);
        let (code, _, err) = tessera(&args);
        assert_eq!(code, 0, "{err}");
        let svg = std::fs::read_to_string(out.with_extension("svg")).unwrap();
        std::fs::remove_file(out.with_extension("csv")).ok();
        std::fs::remove_file(out.with_extension("svg")).ok();
        svg
    };
    // `h3` and `h3-hbm` both have 16 tiles: the SRAM size is the x axis, a line per machine.
    let svg = svg_of(
        "numeric",
        &["arch=h3,h3-hbm", "memory.scratchpad.capacity_mb=1,4"],
    );
    assert!(svg.contains(">memory.scratchpad.capacity_mb<"), "{svg}");
    assert_eq!(svg.matches("<polyline").count(), 2);
    assert!(svg.contains(">arch=h3-hbm<"));
    // No numeric key: the policies are categories on the x axis.
    let svg = svg_of("categories", &["chip.policy=limb-duplication,alternating"]);
    assert!(
        svg.contains(">chip.policy<") && svg.contains(">alternating<"),
        "{svg}"
    );
    assert_eq!(svg.matches("<polyline").count(), 1);
}

/// Options that do not apply to a workload are refused, not ignored: bootstrapping's circuit
/// options elsewhere, a level for bootstrapping, a key-switch dataflow for 128-bit workloads.
#[test]
fn options_that_do_not_apply_are_refused() {
    for flag in [
        "--min-ks",
        "--of-limb",
        "--no-hoisting",
        "--double-hoisting",
    ] {
        let (code, _, err) = tessera(&[
            "simulate",
            "--workload",
            "hmult",
            "--params",
            "test-small",
            flag,
        ]);
        assert_eq!(code, 2, "{flag}: {err}");
        assert!(err.contains(flag) && err.contains("bootstrap"), "{err}");
    }
    // Nor does an option apply where it has no meaning.
    for (args, said) in [
        (
            &[
                "--workload",
                "bootstrap",
                "--params",
                "test-boot",
                "--level",
                "3",
            ][..],
            "--level",
        ),
        (
            &[
                "--arch",
                "cofhee",
                "--workload",
                "ntt",
                "--params",
                "cofhee-n12",
                "--streamed-keyswitch",
            ][..],
            "--streamed-keyswitch",
        ),
    ] {
        let mut all = vec!["simulate"];
        all.extend_from_slice(args);
        let (code, _, err) = tessera(&all);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(said) && err.contains("not supported"), "{err}");
    }
}

/// `--issue-window N` (issue 25 follow-up): 0, more than 2^26 and a single-PE machine are
/// refused by name before anything is recorded; the JSON reports the window used and what it
/// did (`issue_window`, `window_holds`, `peak_intervals`); a window longer than the program
/// holds nothing back and gives the default's figures, a window of a few instructions holds
/// some back, keeps fewer intervals and changes the time but not the traffic.
#[test]
fn the_issue_window_option_is_checked_reported_and_used() {
    let base = [
        "simulate",
        "--arch",
        "ark",
        "--workload",
        "hmult",
        "--params",
        "test-small",
    ];
    for bad in ["0", "67108865", "-3"] {
        let opt = format!("--issue-window={bad}");
        let (code, _, err) = tessera(&[&base[..], &[opt.as_str()]].concat());
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("issue") && !err.contains("panic"), "{err}");
        assert!(
            !err.contains("recording"),
            "{bad} refused after recording: {err}"
        );
        if bad != "-3" {
            assert!(
                err.contains("issue_window") && err.contains("67108864"),
                "{err}"
            );
        }
    }
    let (code, _, err) = tessera(&[
        "simulate",
        "--arch",
        "cofhee",
        "--workload",
        "ntt",
        "--issue-window",
        "16",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--issue-window") && err.contains("single-PE"),
        "{err}"
    );
    // Without the option the single-PE model runs, and its report has no issue window.
    let (code, out, err) = tessera(&[
        "simulate",
        "--arch",
        "cofhee",
        "--workload",
        "ntt",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let pe: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    for k in ["issue_window", "window_holds", "peak_intervals"] {
        assert!(pe.get(k).is_none(), "{k} in {pe}");
    }
    let json = |extra: &[&str]| -> serde_json::Value {
        let (code, out, err) = tessera(&[&base[..], extra, &["--json"]].concat());
        assert_eq!(code, 0, "{extra:?}: {err}");
        serde_json::from_str(out.trim()).expect("one JSON line")
    };
    let default = json(&[]);
    assert_eq!(default["issue_window"], 65536);
    assert_eq!(default["window_holds"], 0);
    let peak = default["peak_intervals"].as_u64().unwrap();
    assert!(peak > 0, "{default}");
    let long = json(&["--issue-window", "1048576"]);
    assert_eq!(long["issue_window"], 1048576);
    for k in ["time_s", "window_holds", "peak_intervals", "offchip_bytes"] {
        assert_eq!(long[k], default[k], "{k}");
    }
    let tiny = json(&["--issue-window", "1"]);
    assert_eq!(tiny["issue_window"], 1);
    assert!(tiny["window_holds"].as_u64().unwrap() > 0, "{tiny}");
    assert!(tiny["peak_intervals"].as_u64().unwrap() < peak, "{tiny}");
    assert_ne!(tiny["time_s"], default["time_s"]);
    assert_eq!(tiny["offchip_bytes"], default["offchip_bytes"]);
    // Throughput mode passes the window to one task's schedule.
    let thr = json(&["--mode", "throughput", "--issue-window", "1"]);
    assert_eq!(thr["issue_window"], 1);
    assert!(thr["window_holds"].as_u64().unwrap() > 0, "{thr}");
    // The table says it too.
    let (code, out, err) = tessera(&[&base[..], &["--issue-window", "1"]].concat());
    assert_eq!(code, 0, "{err}");
    let row = out
        .lines()
        .find(|l| l.contains("issue window"))
        .expect(&out);
    assert!(
        row.contains("1 instructions") && row.contains("held back"),
        "{row}"
    );
}

/// `--metric` picks the plotted quantity; one the machine does not model fails the plot
/// (exit 2, saying why) but still writes the CSV.
#[test]
fn sweep_plots_the_chosen_metric() {
    let dir = std::env::temp_dir();
    let run = |metric: &str| {
        let out = dir.join(format!(
            "tessera-sweep-metric-{metric}-{}",
            std::process::id()
        ));
        let o = out.to_str().unwrap().to_string();
        let (code, _, err) = tessera(&[
            "sweep",
            "--arch",
            "reed",
            "--set",
            "chip.clusters=1,2",
            "--workload",
            "hmult",
            "--params",
            "test-small",
            "--metric",
            metric,
            "--out",
            &o,
        ]);
        let svg = std::fs::read_to_string(out.with_extension("svg")).ok();
        let csv = out.with_extension("csv").exists();
        std::fs::remove_file(out.with_extension("csv")).ok();
        std::fs::remove_file(out.with_extension("svg")).ok();
        (code, err, svg, csv)
    };
    let (code, err, svg, _) = run("cost");
    assert_eq!(code, 0, "{err}");
    assert!(svg.unwrap().contains("cost per good package (USD)"));
    // REED's description cites no power: no energy plot, but the CSV is there.
    let (code, err, svg, csv) = run("energy");
    assert_eq!(code, 2);
    assert!(
        err.contains("--metric energy") && err.contains("no energy"),
        "{err}"
    );
    assert!(svg.is_none() && csv);
    let (code, err, _, _) = run("nope");
    assert_eq!(code, 2);
    assert!(err.contains("--metric") && err.contains("edap"), "{err}");
}

fn tessera_with_simd(simd: &str, args: &[&str]) -> (i32, String, String) {
    common::tessera_env(&[("TESSERA_SIMD", simd)], args)
}

/// TESSERA_SIMD picks the kernel of every primary: `info` shows it, HMult runs correctly under
/// each kernel the CPU has and records it; a kernel the CPU lacks, or an unknown name, is a
/// clear error (exit 2), never a panic.
#[test]
fn simd_override_is_shown_recorded_and_checked() {
    let (code, out, err) = tessera(&["info", "--json"]);
    assert_eq!(code, 0, "{err}");
    let info: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert!(info["cpu"].as_str().is_some_and(|c| !c.is_empty()));
    for k in info["kernels"].as_array().expect("kernel list") {
        let name = k["kernel"].as_str().expect("name");
        // Every kernel takes 49-bit primes where the CPU has its instructions.
        let here = k["primes_49_bit"].as_bool().expect("bool");
        let (code, out, err) = tessera_with_simd(name, &["info", "--json"]);
        if !here {
            assert_eq!(code, 2, "{name}: {out}");
            assert!(err.contains("lacks") && !err.contains("panicked"), "{err}");
            // Written past the harness's capture, so CI's log shows the skip.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "kernel {name} skipped (this CPU lacks it): refused as it should be"
            );
            continue;
        }
        assert_eq!(code, 0, "{name}: {err}");
        let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
        assert_eq!(v["kernel"], name);
        assert_eq!(v["kernel_source"], "TESSERA_SIMD");
        let (code, out, err) = tessera_with_simd(
            name,
            &[
                "bench",
                "hmult",
                "--params",
                "test-small",
                "--reps",
                "1",
                "--json",
            ],
        );
        assert_eq!(code, 0, "{name}: {err}");
        let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
        assert_eq!(v["kernel"], name);
        assert_eq!(v["simd"], name);
        assert!(v["cpu"].as_str().is_some());
        assert!(v["precision_bits"].as_f64().unwrap() > 15.0, "{name}: {v}");
    }
    let (code, out, _) = tessera_with_simd("scalar", &["bench", "ntt", "--logn", "10", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["kernel"], "scalar");
    for args in [
        vec!["info"],
        vec!["bench", "hmult", "--params", "test-small"],
    ] {
        let (code, _, err) = tessera_with_simd("avx3", &args);
        assert_eq!(code, 2, "{args:?}");
        assert!(
            err.contains("TESSERA_SIMD") && err.contains("avx512-ifma"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// `sweep --ray` delegates to the Python package; without an interpreter it says how to get
/// one instead of failing obscurely (the Ray sweep itself is tested from Python).
#[test]
fn sweep_on_ray_names_the_interpreter_it_needs() {
    let (code, _, err) = common::tessera_env(
        &[("TESSERA_PYTHON", "/nonexistent/python-for-tessera")],
        &[
            "sweep",
            "--set",
            "chip.clusters=1,2",
            "--workload",
            "hadd",
            "--params",
            "test-small",
            "--ray",
            "local",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/python-for-tessera"), "{err}");
    assert!(err.contains("TESSERA_PYTHON"), "{err}");
}

/// Session 29's application rows through the CLI: a sort's time per run (105 steps at 2^14,
/// 6 at 8 values), CoFHEE Table X's CryptoNets mix on the PE model (and refused on a vector
/// machine), and the linreg inference program run and simulated at CI size.
#[test]
fn sort_per_run_bfv_on_cofhee_and_inference_programs() {
    let json = |args: &[&str]| -> serde_json::Value {
        let (code, out, err) = tessera(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        serde_json::from_str(out.trim()).expect("one JSON line")
    };
    let v = json(&[
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
    assert_eq!(v["units_per_run"], 6, "{v}");
    let step = v["time_per_step_s"].as_f64().unwrap();
    let run = v["time_per_run_s"].as_f64().unwrap();
    assert!((run / step - 6.0).abs() < 1e-9, "{v}");

    let v = json(&[
        "simulate",
        "--workload",
        "cryptonets",
        "--arch",
        "cofhee",
        "--params",
        "bfv-n12",
        "--json",
    ]);
    let classes = v["op_mix"].as_array().unwrap();
    let sum: f64 = classes
        .iter()
        .map(|c| c["count"].as_f64().unwrap() * c["per_op_s"].as_f64().unwrap())
        .sum();
    let total = v["time_s"].as_f64().unwrap();
    // The parts plus the whole program's FIFO refills: a little more than the parts' sum.
    assert!(total >= sum && total < sum * 1.05, "{total} vs {sum}");
    assert_eq!(classes[0]["count"], 457_550, "{v}");
    let (code, _, err) = tessera(&["simulate", "--workload", "cryptonets", "--arch", "ark"]);
    assert_eq!(code, 2);
    assert!(err.contains("single-PE"), "{err}");
    let (code, _, err) = tessera(&[
        "simulate",
        "--workload",
        "lr-inference",
        "--arch",
        "cofhee",
        "--params",
        "ark",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("bfv-n12"), "{err}");

    let v = json(&[
        "run",
        "linreg-inference",
        "--params",
        "test-program",
        "--json",
    ]);
    assert_eq!(v["passed"], true, "{v}");
    let v = json(&[
        "simulate",
        "--workload",
        "logreg-inference",
        "--params",
        "test-program",
        "--arch",
        "ark",
        "--json",
    ]);
    assert!(v["time_per_inference_s"].as_f64().unwrap() > 0.0, "{v}");
    assert_eq!(v["units_per_run"], 4, "{v}");
}
