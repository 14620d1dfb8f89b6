//! Every program of the registry at a small size, both ways: computed on the CPU
//! (`registry::run`, its check must pass) and recorded on the trace backend
//! (`registry::record` of the whole run), with the same operation counts. This is the test
//! behind "every program that can be simulated is one that `tessera run` has checked".

use tessera_programs::{record, run, RunOptions, PROGRAMS};

/// The small options of each program (the insecure `test-program` set where the program is
/// bootstrapped; LoLa has its own N = 2^14 set and one ciphertext of images).
fn small(program: &str) -> Option<RunOptions> {
    let (params, size, iterations) = match program {
        "helr" => (Some("test-program"), Some(16), Some(2)),
        "logreg" | "linreg" => (Some("test-program"), Some(512), Some(2)),
        "sort" => (Some("test-program"), Some(8), None),
        // All test rows (44 and 57): several ciphertexts at N = 2^10.
        "linreg-inference" | "logreg-inference" => (Some("test-program"), None, None),
        "lola" => (None, Some(8), None),
        "dnn-train" => (Some("test-program"), Some(2), Some(1)),
        "dnn-inference" => (Some("test-program"), Some(2), Some(2)),
        // The reduced network (test-program has fewer than 2^14 slots), one image.
        "resnet20" => (Some("test-program"), Some(1), None),
        // BFV programs: checked by tests/bfv_apps.rs; their CoFHEE command stream comes from
        // tessera_bfv::record, not from registry::record (which refuses them clearly).
        "cryptonets" | "lr-inference" => return None,
        other => panic!("add small options for the new program '{other}'"),
    };
    Some(RunOptions {
        params: params.map(Into::into),
        size,
        iterations,
        data_dir: None,
        first: None,
    })
}

#[test]
fn every_program_runs_checked_and_records_the_same_counts() {
    for &p in PROGRAMS {
        let Some(o) = small(p) else {
            let err = record(p, &RunOptions::default(), false).err();
            assert!(
                err.is_some(),
                "{p}: recording a BFV program must be refused, not faked"
            );
            continue;
        };
        let r = run(p, &o, &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{p}: {e}"));
        assert!(r.passed(), "{p}: {:?}", r.checks);
        let rec = record(p, &o, false).unwrap_or_else(|e| panic!("{p}: {e}"));
        assert_eq!(rec.counts, r.counts, "{p}");
        assert_eq!(rec.boots, r.boots, "{p}");
    }
}

/// Recording a program with keys and plaintexts as shapes (what `record` does, and what the
/// simulator is fed) gives exactly the instructions, host ids included, of recording it with
/// keys generated and plaintexts encoded for real: the steady-state windows the simulator
/// uses, and the whole reduced ResNet-20.
#[test]
fn shape_recording_is_the_recording_of_data() {
    for &p in PROGRAMS {
        let Some(o) = small(p) else { continue };
        let steady = p != "resnet20";
        let data = tessera_programs::registry::record_with_data(p, &o, steady)
            .unwrap_or_else(|e| panic!("{p}: {e}"));
        let shapes = record(p, &o, steady).unwrap_or_else(|e| panic!("{p}: {e}"));
        assert!(data.instrs.iter().any(|i| i.host.is_some()), "{p}");
        assert!(
            shapes.instrs == data.instrs,
            "{p}: the instruction streams differ"
        );
        assert_eq!(shapes.counts, data.counts, "{p}");
    }
}

/// `--streamed-keyswitch` reaches every key switch of a program, computed and recorded: HELR
/// (its own rotations and its bootstrapping) and LoLa (rotations, no bootstrapping) computed
/// with the streamed dataflow give every checked value (HELR's weight error, LoLa's
/// agreement; not a throughput) bit for bit as the batched order does,
/// and their recordings hold the same HE operations as other instruction streams.
#[test]
fn streamed_key_switching_reaches_every_key_switch_and_changes_no_value() {
    use tessera_ckks::KeySwitchDataflow::{Batched, Streamed};
    use tessera_programs::registry::{record_with_circuit, run_with_circuit};
    use tessera_programs::setup::CircuitOptions;
    let with = |dataflow| CircuitOptions {
        dataflow,
        ..Default::default()
    };
    for p in ["helr", "lola"] {
        let o = small(p).unwrap();
        let [batched, streamed] = [Batched, Streamed].map(|d| {
            run_with_circuit(p, &o, with(d), &mut |_, _, _| {})
                .unwrap_or_else(|e| panic!("{p}: {e}"))
        });
        assert!(streamed.passed(), "{p}: {:?}", streamed.checks);
        assert_eq!(batched.checks.len(), streamed.checks.len());
        for (b, s) in batched.checks.iter().zip(&streamed.checks) {
            assert_eq!(b.name, s.name);
            // Throughput is a time, not a value of the computation.
            if !b.name.contains("per minute") {
                assert_eq!(b.value.to_bits(), s.value.to_bits(), "{p}: {}", b.name);
            }
        }
        assert!(
            streamed
                .notes
                .iter()
                .any(|n| n.contains("streamed key switching")),
            "{p}: {:?}",
            streamed.notes
        );
        let [rb, rs] = [Batched, Streamed].map(|d| {
            record_with_circuit(p, &o, true, with(d)).unwrap_or_else(|e| panic!("{p}: {e}"))
        });
        assert_eq!(rb.counts, rs.counts, "{p}");
        assert!(
            rb.instrs != rs.instrs,
            "{p}: the dataflow did not reach the recording"
        );
    }
}
