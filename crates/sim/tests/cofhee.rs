//! The CoFHEE model: its workloads compute the right values (against a schoolbook product
//! with big integers) and its command timings follow the PE's rules.

use tessera_backend::trace::Op;
use tessera_math::wide::negacyclic_schoolbook;
use tessera_programs::workloads::wide::record_wide;
use tessera_sim::arch::Arch;
use tessera_sim::cofhee::PeMachine;

fn cofhee() -> PeMachine {
    match Arch::load("cofhee").unwrap() {
        Arch::Pe(m) => m,
        Arch::Vector(_) => panic!("cofhee is a single-PE model"),
    }
}

#[test]
fn the_ciphertext_tensor_product_is_correct_and_issues_algorithm_3() {
    let w = record_wide("ctmult", "test-cofhee").unwrap();
    let q = w.moduli[0];
    let [a0, a1, b0, b1] = [0, 1, 2, 3].map(|k| &w.inputs[0][k]);
    let add = |x: Vec<u128>, y: Vec<u128>| -> Vec<u128> {
        x.iter().zip(&y).map(|(a, b)| (a + b) % q).collect()
    };
    let c0 = negacyclic_schoolbook(a0, b0, q);
    let c1 = add(
        negacyclic_schoolbook(a0, b1, q),
        negacyclic_schoolbook(a1, b0, q),
    );
    let c2 = negacyclic_schoolbook(a1, b1, q);
    assert_eq!(w.outputs[0], vec![c0, c1, c2]);
    let count = |op: Op| w.instrs.iter().filter(|i| i.op == op).count();
    // cofhee.md III-B: 4 NTTs, 4 Hadamard products, 1 addition, 3 iNTTs.
    assert_eq!(
        (
            count(Op::Ntt),
            count(Op::Mul),
            count(Op::Add),
            count(Op::Intt)
        ),
        (4, 4, 1, 3)
    );
}

#[test]
fn polymul_matches_schoolbook() {
    let w = record_wide("polymul", "test-cofhee").unwrap();
    let q = w.moduli[0];
    assert_eq!(
        w.outputs[0][0],
        negacyclic_schoolbook(&w.inputs[0][0], &w.inputs[0][1], q)
    );
}

#[test]
fn command_cycles_follow_the_pe_rules() {
    let m = cofhee();
    let d = m.pe.pipeline_depth_cycles;
    // (n/2) log n butterflies at II = 1, one drain per stage, one issue cycle.
    assert_eq!(m.ntt_cycles(4096).unwrap(), 2048 * 12 + 12 * d + 1);
    assert_eq!(m.pointwise_cycles(4096).unwrap(), 4096 + d + 1);
    assert_eq!(
        m.intt_cycles(4096).unwrap(),
        m.ntt_cycles(4096).unwrap() + 4096 + d
    );
    // Beyond the dual-port SRAMs' capacity the PE runs at II = 2 (cofhee.md III-C).
    assert_eq!(m.ii(8192), 1);
    assert_eq!(m.ii(16384), 2);
    assert_eq!(m.ntt_cycles(16384).unwrap(), 8192 * 14 * 2 + 14 * d + 1);
}

#[test]
fn simulated_ciphertext_multiplication_sums_its_commands() {
    let arch = Arch::load("cofhee").unwrap();
    let m = cofhee();
    let w = record_wide("ctmult", "cofhee-n12").unwrap();
    let r = arch.simulate(&w.label, &w.instrs).unwrap();
    let want = 4 * m.ntt_cycles(4096).unwrap()
        + 5 * m.pointwise_cycles(4096).unwrap()
        + 3 * m.intt_cycles(4096).unwrap();
    assert_eq!(r.cycles, want as f64);
    assert!((r.time_s - want as f64 / 250e6).abs() < 1e-12);
    // Two towers at n = 2^13 cost twice one tower.
    let w13 = record_wide("ctmult", "cofhee-n13").unwrap();
    let r13 = arch.simulate(&w13.label, &w13.instrs).unwrap();
    let one = 4 * m.ntt_cycles(8192).unwrap()
        + 5 * m.pointwise_cycles(8192).unwrap()
        + 3 * m.intt_cycles(8192).unwrap();
    assert_eq!(r13.cycles, 2.0 * one as f64);
}

#[test]
fn unsupported_commands_and_bad_names_are_errors() {
    let arch = Arch::load("cofhee").unwrap();
    let w = tessera_programs::workloads::record(&tessera_programs::workloads::WorkloadSpec::new(
        "hrot",
        "test-small",
    ))
    .unwrap();
    let e = arch.simulate(&w.label, &w.instrs).unwrap_err().to_string();
    assert!(e.contains("not supported") && e.contains("Table I"), "{e}");
    assert!(record_wide("bootstrap", "cofhee-n12").is_err());
    let e = record_wide("ntt", "cofhee-n99").unwrap_err().to_string();
    assert!(e.contains("params"), "{e}");
    let e = Arch::load_with("cofhee", &["pe.ii_dual_port=0".into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("ii"), "{e}");
}
