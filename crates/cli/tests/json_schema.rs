//! Every command's `--json` output carries its versioned schema and the fields docs/json.md
//! documents for it, with the documented types (issue 26 item 4). The tables are read from
//! docs/json.md itself, so the page and the output cannot drift apart.

mod common;

use common::tessera;
use serde_json::Value;
use std::collections::BTreeMap;
use tessera_cli::schema::{Schema, VERSION};

/// docs/json.md's schemas: name -> [(field, type)].
fn documented() -> BTreeMap<String, Vec<(String, String)>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/json.md");
    let text = std::fs::read_to_string(path).expect("docs/json.md");
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("### `") {
            current = h.split('`').next().map(str::to_string);
            out.entry(current.clone().unwrap()).or_default();
        } else if line.starts_with("## ") {
            current = None;
        } else if let (Some(s), Some(rest)) = (&current, line.strip_prefix("| `")) {
            // `T\|null` is an escaped bar inside a cell.
            let row = rest.replace("\\|", "/");
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let field = cells[0].trim_end_matches('`').to_string();
            let ty = cells[1].replace('/', "|");
            out.get_mut(s).unwrap().push((field, ty));
        }
    }
    out
}

/// Whether `v` has the documented type (`number`, `integer`, `string|null`, ...).
fn has_type(v: &Value, ty: &str) -> bool {
    ty.split('|').any(|t| match t {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        // Present means one of the other types; absence is checked by the caller.
        "absent" => false,
        other => panic!("docs/json.md names an unknown type '{other}'"),
    })
}

/// Small runs of the commands behind each schema: `simulate` three times, so that the fields
/// printed only where they apply are seen both ways (an HE operation's `level`,
/// bootstrapping's `l_eff` and `--additive`'s sums on a vector machine; the single-PE
/// model, which the engine does not run, without `schedule` or the issue window's fields).
fn commands(s: Schema, out: &str) -> Vec<Vec<String>> {
    let own = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    if s == Schema::Simulate {
        return vec![
            own(&[
                "simulate",
                "--arch",
                "ark",
                "--workload",
                "hmult",
                "--params",
                "test-small",
                "--json",
            ]),
            own(&[
                "simulate",
                "--arch",
                "ark",
                "--workload",
                "bootstrap",
                "--params",
                "test-boot",
                "--additive",
                "--json",
            ]),
            own(&[
                "simulate",
                "--arch",
                "cofhee",
                "--workload",
                "ntt",
                "--json",
            ]),
        ];
    }
    vec![command(s, out)]
}

/// A small run of the command behind each schema but `simulate` ([`commands`]).
fn command(s: Schema, out: &str) -> Vec<String> {
    let args: &[&str] = match s {
        Schema::Simulate => unreachable!("simulate runs several commands"),
        Schema::Run => &[
            "run",
            "helr",
            "--params",
            "test-program",
            "--size",
            "16",
            "--iterations",
            "1",
            "--json",
        ],
        Schema::Sweep => &[
            "sweep",
            "--arch",
            "ark",
            "--set",
            "chip.clusters=1,2",
            "--workload",
            "hadd,hmult",
            "--params",
            "test-small",
            "--json",
            "--out",
            out,
        ],
        Schema::Reproduce => &["reproduce", "--paper", "cofhee", "--json"],
        Schema::Plan => &["plan", "--params", "test-small", "--json"],
        Schema::ParamsShow => &["params", "show", "test-small", "--format", "json"],
        Schema::ParamsList => &["params", "list", "--json"],
        Schema::Area => &["area", "--arch", "ark", "--json"],
        Schema::AreaTargets => &["area", "--targets", "--json"],
        Schema::Info => &["info", "--json"],
        Schema::BenchNtt => &["bench", "ntt", "--logn", "10", "--reps", "3", "--json"],
        Schema::BenchOp | Schema::BenchProfile => &[
            "bench",
            "hmult",
            "--params",
            "test-small",
            "--reps",
            "1",
            "--profile",
            "--json",
        ],
        Schema::BenchBootstrap => &[
            "bench",
            "bootstrap",
            "--params",
            "test-boot",
            "--reps",
            "1",
            "--json",
        ],
    };
    args.iter().map(|a| a.to_string()).collect()
}

#[test]
fn every_command_prints_its_documented_schema() {
    let docs = documented();
    let ids: Vec<String> = Schema::ALL.iter().map(|s| s.id()).collect();
    // docs/json.md documents exactly the schemas the CLI prints, at the current version.
    assert_eq!(
        docs.keys().cloned().collect::<Vec<_>>(),
        {
            let mut v = ids.clone();
            v.sort();
            v
        },
        "docs/json.md's schema sections"
    );
    let out = std::env::temp_dir().join(format!("tessera-json-schema-{}", std::process::id()));
    for s in Schema::ALL {
        let id = s.id();
        assert!(id.ends_with(&format!("/{VERSION}")), "{id}");
        for args in commands(s, out.to_str().unwrap()) {
            check_command(s, &args, &docs, &ids);
        }
        if s == Schema::Sweep {
            std::fs::remove_file(out.with_extension("csv")).ok();
            std::fs::remove_file(out.with_extension("svg")).ok();
        }
    }
}

/// Runs `args` and checks the objects of schema `s` it prints against `docs`.
fn check_command(
    s: Schema,
    args: &[String],
    docs: &BTreeMap<String, Vec<(String, String)>>,
    ids: &[String],
) {
    let id = s.id();
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, stdout, err) = tessera(&argv);
    assert_eq!(code, 0, "{argv:?}: {err}");
    let objects: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{argv:?}: {e}: {l}")))
        .collect();
    // Every line is an object with a schema this command prints.
    for o in &objects {
        let name = o["schema"]
            .as_str()
            .unwrap_or_else(|| panic!("{argv:?}: {o}"));
        assert!(
            ids.iter().any(|i| i == name),
            "{argv:?}: unknown schema {name}"
        );
    }
    let mine: Vec<&Value> = objects.iter().filter(|o| o["schema"] == id).collect();
    assert!(!mine.is_empty(), "{argv:?} printed no {id} object");
    for o in mine {
        for (field, ty) in &docs[&id] {
            // `T|absent`: a field the command prints only when it applies.
            let optional = ty.split('|').any(|t| t == "absent");
            let v = match o.get(field) {
                Some(v) => v,
                None if optional => continue,
                None => panic!("{id}: no field '{field}' in {o}"),
            };
            assert!(has_type(v, ty), "{id}: '{field}' = {v} is not {ty}");
        }
        // The simulate report documents every field it prints (docs/json.md).
        if s == Schema::Simulate {
            for field in o.as_object().unwrap().keys() {
                assert!(
                    docs[&id].iter().any(|(f, _)| f == field),
                    "{argv:?}: '{field}' is printed but not in docs/json.md's {id} table"
                );
            }
        }
    }
}
