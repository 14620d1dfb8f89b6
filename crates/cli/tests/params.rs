//! Parameter sets as files (`tessera params`, `--params FILE`) and the simulator's friction
//! fixes of issue 25 item 7: `--save-trace`, the JSON's context fields, a preset's own circuit
//! options, the word-width check.

mod common;

use common::tessera;
use serde_json::Value;

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tessera-params-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn json(args: &[&str]) -> Value {
    let (code, out, err) = tessera(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(out.lines().last().unwrap_or("")).expect("one JSON line")
}

/// The figures a simulation reports, without its wall time and labels.
fn figures(v: &Value) -> Vec<f64> {
    [
        "time_s",
        "cycles",
        "energy_j",
        "offchip_bytes",
        "noc_bytes",
        "peak_onchip_bytes",
    ]
    .iter()
    .map(|k| v[k].as_f64().unwrap())
    .collect()
}

/// show -> file -> load is the preset, and the file simulates to the preset's figures.
#[test]
fn a_shown_preset_simulates_like_the_preset() {
    let (code, text, err) = tessera(&["params", "show", "test-medium"]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("name = \"test-medium\"") && text.contains("NOT SECURE"));
    let path = tmp("medium.toml");
    std::fs::write(&path, &text).unwrap();
    let p = path.to_str().unwrap();
    // The file shown again is the same text.
    let (_, again, _) = tessera(&["params", "show", p]);
    assert_eq!(again, text);
    let sim = |params: &str| {
        json(&[
            "simulate",
            "--arch",
            "ark",
            "--workload",
            "keyswitch",
            "--params",
            params,
            "--json",
        ])
    };
    let (a, b) = (sim("test-medium"), sim(p));
    assert_eq!(figures(&a), figures(&b));
    assert_eq!(a["params"]["name"], "test-medium");
    // The same through plan and the JSON form.
    let (code, _, err) = tessera(&["plan", "--params", p, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v = json(&["params", "show", "ark", "--format", "json"]);
    assert_eq!(v["name"], "ark");
    assert_eq!(v["derived"]["max_level"], 23);
    assert_eq!(v["derived"]["secure_128"], true);
    let (code, list, _) = tessera(&["params", "list"]);
    assert_eq!(code, 0);
    assert!(list.contains("cifher-boot") && list.contains("yes (--params cifher)"));
}

/// A model-only file runs and is labelled insecure in the JSON and the printed report; a bad
/// field names the file and the line.
#[test]
fn model_only_sets_are_labelled_and_bad_files_located() {
    let (_, text, _) = tessera(&["params", "show", "test-small"]);
    let text = text
        .replace("name = \"test-small\"", "name = \"my-design\"")
        .replace("security = \"test\"", "security = \"model-only\"");
    let path = tmp("model.toml");
    std::fs::write(&path, &text).unwrap();
    let p = path.to_str().unwrap();
    let args = ["simulate", "--workload", "hmult", "--params", p];
    let v = json(&[&args[..], &["--json"]].concat());
    assert_eq!(v["params"]["model_only"], true);
    assert_eq!(v["params"]["secure_128"], false);
    assert!(v["params"]["security"]
        .as_str()
        .unwrap()
        .starts_with("NOT SECURE (model-only"));
    let (code, out, _) = tessera(&args);
    assert_eq!(code, 0);
    assert!(
        out.contains("parameters 'my-design': NOT SECURE (model-only"),
        "{out}"
    );
    let bad = text.replace("dnum = 4", "dnum = 40");
    std::fs::write(&path, bad).unwrap();
    let (code, _, err) = tessera(&args);
    let line = text.lines().position(|l| l == "dnum = 4").unwrap() + 1;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "model.toml, line {line}: dnum = 40 is invalid: allowed an integer from 1 to 4"
        )),
        "{err}"
    );
}

/// `--save-trace` writes the trace that ran; it simulates to the same figures. The JSON
/// carries slots, the level (L_eff for bootstrapping), the policy and the word width.
#[test]
fn saved_traces_simulate_to_the_same_figures() {
    let path = tmp("hmult.trace");
    let p = path.to_str().unwrap();
    let args = [
        "simulate",
        "--arch",
        "reed",
        "--workload",
        "hmult",
        "--params",
        "test-small",
        "--json",
    ];
    let a = json(&[&args[..], &["--save-trace", p]].concat());
    assert_eq!(
        (&a["slots"], &a["level"], &a["policy"], &a["word_bits"]),
        (
            &Value::from(512),
            &Value::from(3),
            &Value::from("ring"),
            &Value::from(54)
        )
    );
    let b = json(&["simulate", "--arch", "reed", "--workload", p, "--json"]);
    assert_eq!(figures(&a), figures(&b));
    assert_eq!(a["instructions"], b["instructions"]);
}

/// A bootstrapping set's own circuit options stay on without repeating the flag (`cifher`
/// keeps minimum key-switching): a file with `min_ks = true` simulates as `--min-ks`.
#[test]
fn a_sets_own_min_ks_is_kept() {
    let (_, text, _) = tessera(&["params", "show", "test-boot"]);
    let path = tmp("boot-minks.toml");
    std::fs::write(&path, text.replace("min_ks = false", "min_ks = true")).unwrap();
    let sim = |params: &str, extra: &[&str]| {
        json(
            &[
                &[
                    "simulate",
                    "--workload",
                    "bootstrap",
                    "--params",
                    params,
                    "--json",
                ][..],
                extra,
            ]
            .concat(),
        )
    };
    let file = sim(path.to_str().unwrap(), &[]);
    let flag = sim("test-boot", &["--min-ks"]);
    let plain = sim("test-boot", &[]);
    assert!(file["workload"].as_str().unwrap().ends_with("+min-ks"));
    assert_eq!(figures(&file), figures(&flag));
    assert_ne!(figures(&file), figures(&plain));
    assert_eq!(file["l_eff"], flag["l_eff"]);
    assert!(file["l_eff"].as_u64().unwrap() >= 1);
    // `--params cifher` resolves its bootstrapping to `cifher-boot`, whose file says
    // `min_ks = true`: the file test above is what `--params cifher` runs through (a full-size
    // CiFHER recording takes 0.6 GB, too much for this test).
    let (code, text, err) = tessera(&["params", "show", "cifher-boot"]);
    assert_eq!(code, 0, "{err}");
    let boot = text
        .split("[bootstrap]")
        .nth(1)
        .expect("a [bootstrap] table");
    assert!(boot.lines().any(|l| l.trim() == "min_ks = true"), "{text}");
}

/// A machine whose word is narrower than the set's primes is refused, naming both.
#[test]
fn narrow_machine_words_are_refused() {
    let (code, _, err) = tessera(&[
        "simulate",
        "--arch",
        "ark",
        "--set",
        "clock.word_bits=32",
        "--workload",
        "hmult",
        "--params",
        "test-small",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("clock.word_bits") && err.contains("46 bits") && err.contains("test-small"),
        "{err}"
    );
}
