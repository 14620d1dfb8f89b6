//! LoLa at CI size: one ciphertext of eight images at `lola-n14` (N = 2^14, 128-bit secure),
//! top-1 agreement with the float network, and the same operation counts recorded.

use tessera_programs::lola::{record, run_cpu, LolaConfig};

#[test]
fn lola_eight_images_agree_with_the_float_network() {
    let cfg = LolaConfig {
        params: "lola-n14".into(),
        images: 8,
        data_dir: None,
    };
    let r = run_cpu(&cfg, &mut |_, _, _| {}).unwrap();
    assert!(r.passed(), "{:?}", r.checks);
    assert_eq!(r.checks[0].value, 1.0);
    assert!(r.checks[1].value < 1e-4, "{:?}", r.checks[1]);
    // 25 conv PMults and one per diagonal of the dense layers (128 and 16); the dense
    // layers' BSGS rotations (7 baby + 16 giant over 128 diagonals, 3 + 4 over 16) and their
    // folds (3 each): 36 HRot per ciphertext of 8 images, against 1,178 one row at a time.
    assert_eq!(r.counts.get("PMult"), 25 + 128 + 16);
    assert_eq!(r.counts.get("HRot"), 23 + 3 + 7 + 3);
    assert_eq!(r.counts.get("HMult"), 2);
    let rec = record(&cfg).unwrap();
    assert_eq!(rec.counts, r.counts);
}

#[test]
fn lola_bad_input_is_a_clear_error() {
    let cfg = LolaConfig {
        params: "ark".into(),
        images: 8,
        data_dir: None,
    };
    let e = run_cpu(&cfg, &mut |_, _, _| {}).err().unwrap().to_string();
    assert!(e.contains("lola-n14"), "{e}");
    let cfg = LolaConfig {
        params: "lola-n14".into(),
        images: 0,
        data_dir: None,
    };
    let e = run_cpu(&cfg, &mut |_, _, _| {}).err().unwrap().to_string();
    assert!(e.contains("1 to 10000"), "{e}");
}
