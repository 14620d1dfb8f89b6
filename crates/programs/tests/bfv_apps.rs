//! CoFHEE's BFV applications at CI size (n = 2^13, two towers: the smallest secure set with
//! room for their depth): a reduced CryptoNets (6 convolution outputs, 2 hidden units, 4
//! images) and LR inference on 8 test rows, encrypted outputs equal to the integer replica's.

use tessera_programs::bfv_apps::cryptonets::{CryptonetsConfig, TABLE_X as CN};
use tessera_programs::bfv_apps::lr_inference::{LrConfig, TABLE_X as LR};
use tessera_programs::{run, RunOptions};

#[test]
fn reduced_cryptonets_equals_its_replica() {
    let mut cfg = CryptonetsConfig::new(4);
    cfg.conv_outputs = 6;
    cfg.hidden = 2;
    let r = tessera_programs::bfv_apps::cryptonets::run_cpu(&cfg, &mut |_, _, _| {}).unwrap();
    assert!(r.passed(), "{:?}", r.checks);
    assert_eq!(r.checks[0].value, 0.0);
    // Over the two plaintext moduli: one square per convolution output and hidden unit, one
    // bias per output of each layer.
    assert_eq!(r.iterations, 2);
    assert_eq!(r.counts.get("HMult"), 2 * 8);
    assert_eq!(r.counts.get("Relin"), 2 * 8);
    assert_eq!(r.counts.get("PAdd"), 2 * (6 + 2 + 10));
    eprintln!("{:?}", r.checks);
}

#[test]
fn lr_inference_equals_its_replica() {
    let cfg = LrConfig {
        params: "lr-n13".into(),
        rows: 8,
        data_dir: None,
    };
    let r = tessera_programs::bfv_apps::lr_inference::run_cpu(&cfg, &mut |_, _, _| {}).unwrap();
    assert!(r.passed(), "{:?}", r.checks);
    assert_eq!(r.checks[0].value, 0.0);
    assert_eq!(r.counts.get("HMult"), 2 * (18 + 2));
    assert_eq!(r.counts.get("CMult"), 2 * 3);
    eprintln!("{:?}", r.checks);
}

#[test]
fn table_x_mixes_and_bad_input() {
    assert_eq!(
        (CN.ct_add, CN.ct_scalar_mul, CN.ct_ct_mul),
        (457_550, 449_000, 10_200)
    );
    assert_eq!(
        (LR.ct_add, LR.ct_pt_mul, LR.ct_ct_mul),
        (168_298, 49_500, 128_700)
    );
    let o = |params: Option<&str>, size: Option<usize>, iterations: Option<usize>| RunOptions {
        params: params.map(str::to_string),
        size,
        iterations,
        data_dir: None,
        first: None,
    };
    let e = |p: &str, o: RunOptions| run(p, &o, &mut |_, _, _| {}).err().unwrap().to_string();
    assert!(e("cryptonets", o(Some("ark"), None, None)).contains("cryptonets-n13"));
    assert!(e("cryptonets", o(None, Some(0), None)).contains("images"));
    assert!(e("cryptonets", o(None, Some(1 << 20), None)).contains("images"));
    assert!(e("cryptonets", o(None, None, Some(2))).contains("iterations"));
    assert!(e("lr-inference", o(None, Some(58), None)).contains("rows"));
    assert!(e("lr-inference", o(Some("x"), None, None)).contains("lr-n13"));
    let rec = tessera_programs::record("cryptonets", &RunOptions::default(), false);
    assert!(rec
        .err()
        .unwrap()
        .to_string()
        .contains("tessera_bfv::record"));
}

/// The whole network on 8 images (about 2 x 945 ct x ct products at n = 2^13: minutes; run
/// with `--ignored`). The numbers it prints are in docs/bfv.md.
#[test]
#[ignore]
fn whole_cryptonets_on_eight_images() {
    let r = run("cryptonets", &RunOptions::default(), &mut |_, _, _| {}).unwrap();
    eprintln!("{r:#?}");
    assert!(r.passed(), "{:?}", r.checks);
    assert_eq!(r.counts.get("HMult"), 2 * (845 + 100));
}
