//! HELR at CI size: computed on the CPU at `test-program` (N = 2^10, 10 levels between
//! bootstrappings), checked against the replica, and recorded on the trace backend with the
//! same operation counts.

use tessera_programs::helr::{record, run_cpu, HelrConfig};

/// Mini-batch 16 (8 ciphertexts of 2 samples), 4 iterations: two per bootstrapping.
fn small() -> HelrConfig {
    HelrConfig {
        iterations: 4,
        ..HelrConfig::new("test-program", 16)
    }
}

#[test]
fn helr_small_matches_replica_and_its_recording() {
    let cfg = small();
    let r = run_cpu(&cfg, &mut |_, _, _| {}).unwrap();
    eprintln!("{r:#?}");
    assert!(r.passed(), "{:?}", r.checks);
    assert_eq!(r.boots, 1);
    assert_eq!(r.levels_per_boot, 10);
    // 8 ciphertexts: 4 HMult each; 16 row rotations each plus 1 sample-sum rotation (2
    // samples per ciphertext); a mask PMult per ciphertext; a CMult per ciphertext and 2 for
    // the update (the merged bootstrapping's own operations count as the bootstrapping).
    assert_eq!(r.counts.get("HMult"), 4 * 8 * 4);
    assert_eq!(r.counts.get("HRot"), 4 * (8 * 16 + 1));
    assert_eq!(r.counts.get("PMult"), 4 * 8);
    assert_eq!(r.counts.get("CMult"), 4 * (8 + 2));
    assert_eq!(r.counts.get("HConj"), 0);
    assert_eq!(r.counts.get("Boot"), 1);
    let rec = record(&cfg, false).unwrap();
    assert_eq!(rec.counts, r.counts);
    assert_eq!(rec.boots, r.boots);
}

#[test]
fn helr_bad_input_is_a_clear_error() {
    let e = run_cpu(&HelrConfig::new("nope", 16), &mut |_, _, _| {})
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("ark, cifher, reed, h3"), "{e}");
    let e = run_cpu(&HelrConfig::new("test-program", 24), &mut |_, _, _| {})
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("power of two"), "{e}");
    let cfg = HelrConfig {
        data_dir: Some("/nonexistent/data".into()),
        ..small()
    };
    let e = run_cpu(&cfg, &mut |_, _, _| {}).err().unwrap().to_string();
    assert!(
        e.contains("mnist-10k.npz") && e.contains("/nonexistent/data"),
        "{e}"
    );
}

/// logreg (the HELR machinery at 32 features, the iDASH sigmoid) at CI size: weights against
/// the replica, and the same counts recorded.
#[test]
fn logreg_small_matches_replica_and_its_recording() {
    let cfg = HelrConfig {
        iterations: 3,
        ..HelrConfig::new("test-program", 512)
    };
    let r = tessera_programs::logreg::run_cpu(&cfg, &mut |_, _, _| {}).unwrap();
    assert!(r.passed(), "{:?}", r.checks);
    assert!(r.checks[0].value < 1e-4, "{:?}", r.checks[0]);
    // 512 rows of 32 features, 16 per ciphertext at N = 2^10: 32 ciphertexts.
    assert_eq!(r.counts.get("HMult"), 3 * 32 * 4);
    assert_eq!(r.counts.get("Boot"), 1);
    let rec = tessera_programs::logreg::record(&cfg, false).unwrap();
    assert_eq!(rec.counts, r.counts);
}

/// linreg (the HELR machinery with the linear model, 16-slot rows) at CI size: weights and
/// test predictions against the replica, and the same training counts recorded.
#[test]
fn linreg_small_matches_replica_and_its_recording() {
    let cfg = HelrConfig {
        iterations: 4,
        ..HelrConfig::new("test-program", 512)
    };
    let r = tessera_programs::linreg::run_cpu(&cfg, &mut |_, _, _| {}).unwrap();
    eprintln!("{r:#?}");
    assert!(r.passed(), "{:?}", r.checks);
    assert!(
        r.checks[0].value < 1e-4 && r.checks[1].value < 1e-4,
        "{:?}",
        r.checks
    );
    // 512 rows of 16 slots, 32 per ciphertext at N = 2^10: 16 ciphertexts; 4 levels per
    // iteration, so two iterations per bootstrapping at 10 levels. Per ciphertext: 1 HMult
    // for the inner products and 1 for the gradient, the kappa mask and the target-clearing
    // mask (2 PMult).
    assert_eq!(r.counts.get("HMult"), 4 * 16 * 2);
    assert_eq!(r.counts.get("PMult"), 4 * 16 * 2);
    // 8 row rotations per ciphertext, 5 sample-sum rotations (16 .. 256).
    assert_eq!(r.counts.get("HRot"), 4 * (16 * 8 + 5));
    assert_eq!(r.boots, 1);
    let rec = tessera_programs::linreg::record(&cfg, false).unwrap();
    assert_eq!(rec.counts, r.counts);
}
