//! sort at CI size: 16 values at `test-program` (N = 2^10, 10 levels between bootstrappings;
//! the same network, comparison polynomials and level rule as the 2^14 run, fewer values),
//! checked against the sorted input and the replica, and recorded on the trace backend with
//! the same operation counts.

use tessera_programs::sort::{record, run_cpu, SortConfig};

fn small() -> SortConfig {
    SortConfig {
        params: "test-program".into(),
        size: 16,
    }
}

#[test]
fn sort_16_values_matches_sorted_input_and_its_recording() {
    let cfg = small();
    let r = run_cpu(&cfg, &mut |_, _, _| {}).unwrap();
    eprintln!("{r:#?}");
    assert!(r.passed(), "{:?}", r.checks);
    // 10 steps: 2 HRot, 3 PMult and 1 HMult each, plus the comparison's products.
    assert_eq!(r.iterations, 10);
    assert_eq!(r.counts.get("HRot"), 2 * 10);
    assert_eq!(r.counts.get("PMult"), 3 * 10);
    assert!(r.counts.get("HMult") > 10 * 12 * 3, "{:?}", r.counts);
    // 10 levels: three 3-level pieces per bootstrapping, 12 pieces per comparison.
    assert!(r.boots >= 10 * 3, "{}", r.boots);
    assert!(r.checks[1].value < 1e-3, "{:?}", r.checks[1]);
    let rec = record(&cfg, false).unwrap();
    assert_eq!(rec.counts, r.counts);
    assert_eq!(rec.boots, r.boots);
    // The steady window: whole steps, each bootstrapping, fewer operations than the sort.
    let st = record(&cfg, true).unwrap();
    assert!(st.iterations >= 1 && st.iterations <= 10, "{}", st.window);
    assert!(st.boots >= st.iterations && st.counts.get("HRot") == 2 * st.iterations as u64);
}

#[test]
fn sort_bad_input_is_a_clear_error() {
    let e = run_cpu(
        &SortConfig {
            size: 24,
            ..small()
        },
        &mut |_, _, _| {},
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("power of two from 4"), "{e}");
    let e = run_cpu(
        &SortConfig {
            size: 1024,
            ..small()
        },
        &mut |_, _, _| {},
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("size") && e.contains("N/2 = 512"), "{e}");
    let e = run_cpu(
        &SortConfig {
            params: "nope".into(),
            size: 16,
        },
        &mut |_, _, _| {},
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("ark, cifher"), "{e}");
}
