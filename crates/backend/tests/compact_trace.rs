//! Compact instructions (issue 25 item 1) against the representation they replaced: every
//! record serialises to the same line as the old form (plain vectors and strings), a trace
//! written and read back is the same stream, and limb sets are shared.

use serde::{Deserialize, Serialize};
use tessera_backend::trace::{read_trace, write_trace, Instr, Op, TraceHeader};
use tessera_backend::{Backend, Kind, TraceBackend};
use tessera_math::primes::generate_ntt_primes;
use tessera_math::{ConversionMode, Representation, RingContext, RnsPoly};

/// The instruction record before issue 25: heap vectors and strings.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct OldInstr {
    seq: u64,
    op: Op,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    dst: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    srcs: Vec<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    limbs: Vec<usize>,
    n: usize,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    galois: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    level: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    host: Option<u64>,
}

/// A recording with every field and operand count: loads with hosts, a BConv, an
/// automorphism, a dot product of four pairs (sources on the heap), a concatenation,
/// multiply-accumulate (three sources inline), markers and a store.
fn recorded() -> (TraceHeader, Vec<Instr>) {
    let primes = generate_ntt_primes(40, 1 << 10, 4, &[]).unwrap();
    let ring = RingContext::new(1 << 10, &primes).unwrap();
    let mut b = TraceBackend::trace(ring.clone());
    let host = RnsPoly::zero(&ring, &[0, 1], Representation::Evaluation).unwrap();
    let key = RnsPoly::zero(&ring, &[0, 1, 2, 3], Representation::Evaluation).unwrap();
    b.begin_op("test", 1);
    let x = b.load(&host, Kind::Ciphertext).unwrap();
    let k = b.load(&key, Kind::EvalKey).unwrap();
    let mut c = b.select_limbs(&x, &[0]).unwrap();
    b.intt(&mut c).unwrap();
    let mut up = b
        .bconv(&c, &[1, 2, 3], ConversionMode::ExactCentered)
        .unwrap();
    b.ntt(&mut up).unwrap();
    let k3 = b.select_limbs(&k, &[1, 2, 3]).unwrap();
    let d = b.dot(&[&up, &up, &k3, &up], &[&k3, &up, &up, &k3]).unwrap();
    let mut acc = b.mul(&d, &k3).unwrap();
    b.mul_acc(&mut acc, &up, &k3).unwrap();
    let r = b.automorphism(&acc, 5).unwrap();
    let lo = b.select_limbs(&r, &[1]).unwrap();
    let hi = b.select_limbs(&r, &[2, 3]).unwrap();
    let cat = b.concat(&[&lo, &hi], &[1, 2, 3]).unwrap();
    b.end_op();
    b.record_store(&cat);
    let header = TraceHeader::new(1 << 10, primes);
    (header, b.instructions().to_vec())
}

#[test]
fn records_serialise_as_the_old_form() {
    let (header, instrs) = recorded();
    assert!(
        instrs.iter().any(|i| i.srcs.len() > 3),
        "a heap-held source list"
    );
    let mut buf = Vec::new();
    write_trace(&mut buf, &header, &instrs).unwrap();
    let text = String::from_utf8(buf).unwrap();
    for (line, i) in text.lines().skip(1).zip(&instrs) {
        let old: OldInstr = serde_json::from_str(line).unwrap();
        assert_eq!(serde_json::to_string(&old).unwrap(), line);
        assert_eq!(old.srcs, i.srcs.to_vec());
        assert_eq!(old.limbs, i.limbs.to_vec());
        assert_eq!(old.kind.as_deref(), i.kind.map(Kind::name));
        let mode = i.mode.map(|m| serde_json::to_value(m).unwrap());
        assert_eq!(old.mode.map(serde_json::Value::from), mode);
        assert_eq!((old.seq, old.op, old.dst, old.n), (i.seq, i.op, i.dst, i.n));
    }
}

#[test]
fn written_and_read_back_is_the_same_stream() {
    let (header, instrs) = recorded();
    let mut buf = Vec::new();
    write_trace(&mut buf, &header, &instrs).unwrap();
    let (h, back) = read_trace(std::io::BufReader::new(&buf[..])).unwrap();
    assert_eq!(h, header);
    assert_eq!(back, instrs);
    // Reading shares limb sets as recording does.
    let same: Vec<&Instr> = back.iter().filter(|i| i.limbs[..] == [1, 2, 3]).collect();
    assert!(same.len() > 2);
    assert!(same
        .windows(2)
        .all(|w| std::ptr::eq(w[0].limbs.as_ptr(), w[1].limbs.as_ptr())));
}

#[test]
fn recording_shares_limb_sets() {
    let (_, instrs) = recorded();
    let first = instrs.iter().find(|i| i.limbs[..] == [1, 2, 3]).unwrap();
    for i in instrs.iter().filter(|i| i.limbs[..] == [1, 2, 3]) {
        assert!(std::ptr::eq(i.limbs.as_ptr(), first.limbs.as_ptr()));
    }
}
