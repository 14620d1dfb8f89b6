//! Trace files are untrusted input (issue 24, items 6 and 7): the header's ring and every
//! instruction are checked before a simulator sees them, and reading is bounded.

use std::io::Write;
use std::sync::{Arc, Mutex};
use tessera_backend::trace::{read_trace, read_trace_file, Recording, MAX_LINE_BYTES};
use tessera_backend::{Backend, Kind, MetaBackend};
use tessera_math::primes::generate_ntt_primes;
use tessera_math::{ConversionMode, Representation, RingContext, RnsPoly};

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A small valid trace (N = 2^10, three moduli) exercising every field: loads with host ids,
/// transforms, BConv with a mode, an automorphism with a Galois element, a limb selection,
/// markers, and a store.
fn valid() -> String {
    let primes = generate_ntt_primes(40, 1 << 10, 3, &[]).unwrap();
    let ring = RingContext::new(1 << 10, &primes).unwrap();
    let sink = Shared::default();
    let mut b =
        Recording::streaming(MetaBackend::new(ring.clone()), Box::new(sink.clone())).unwrap();
    let host = RnsPoly::zero(&ring, &[0, 1], Representation::Evaluation).unwrap();
    let key = RnsPoly::zero(&ring, &[0, 1, 2], Representation::Evaluation).unwrap();
    b.begin_op("test", 1);
    let x = b.load(&host, Kind::Ciphertext).unwrap();
    let k = b.load(&key, Kind::EvalKey).unwrap();
    let mut c = b.select_limbs(&x, &[0]).unwrap();
    b.intt(&mut c).unwrap();
    let mut up = b.bconv(&c, &[1, 2], ConversionMode::Approximate).unwrap();
    b.ntt(&mut up).unwrap();
    let k12 = b.select_limbs(&k, &[1, 2]).unwrap();
    let y = b.mul(&up, &k12).unwrap();
    let z = b.add(&y, &up).unwrap();
    let r = b.automorphism(&z, 5).unwrap();
    b.end_op();
    b.record_store(&r);
    b.recorder().flush().unwrap();
    let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
    text
}

/// `valid()` with line `k` (0: the header) edited by `f` as JSON.
fn edit(k: usize, f: impl Fn(&mut serde_json::Value)) -> String {
    let text = valid();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut v: serde_json::Value = serde_json::from_str(&lines[k]).unwrap();
    f(&mut v);
    lines[k] = v.to_string();
    lines.join("\n") + "\n"
}

fn line_of(text: &str, op: &str) -> usize {
    text.lines()
        .position(|l| l.contains(&format!("\"op\":\"{op}\"")))
        .unwrap()
}

fn err(text: &str) -> String {
    read_trace(text.as_bytes()).unwrap_err()
}

#[test]
fn a_recorded_trace_reads_back() {
    let text = valid();
    let (h, instrs) = read_trace(text.as_bytes()).unwrap();
    assert_eq!(h.n, 1024);
    assert_eq!(instrs.len(), text.lines().count() - 1);
}

/// The header's `n` and moduli describe a ring: a power of two in range, distinct primes
/// that are 1 mod 2n. Before, any `n` was taken (a simulator then computed with it).
#[test]
fn the_header_ring_is_checked() {
    for (f, needle) in [
        (
            Box::new(|v: &mut serde_json::Value| v["n"] = 1000.into())
                as Box<dyn Fn(&mut serde_json::Value)>,
            "n:",
        ),
        (Box::new(|v| v["n"] = (1u64 << 40).into()), "n:"),
        (
            Box::new(|v| v["moduli"][0] = 1_000_000u64.into()),
            "modulus 0",
        ),
        (
            Box::new(|v| v["moduli"][1] = 1_000_003u64.into()),
            "modulus 1",
        ),
        (
            Box::new(|v| {
                let q = v["moduli"][0].clone();
                v["moduli"][2] = q;
            }),
            "repeats",
        ),
        (Box::new(|v| v["moduli"] = serde_json::json!([])), "moduli"),
    ] {
        let e = err(&edit(0, f));
        assert!(e.contains("line 1") && e.contains(needle), "{needle}: {e}");
    }
}

/// Every instruction: its ring degree, limb indices, operand count, sources, kind, Galois
/// element and BConv mode. Each of these used to be accepted and simulated.
#[test]
fn instructions_are_checked_and_the_error_names_the_line() {
    let text = valid();
    let add = line_of(&text, "add");
    let auto = line_of(&text, "automorphism");
    let bconv = line_of(&text, "bconv");
    let load = line_of(&text, "load");
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(usize, Edit, &str)> = vec![
        (add, Box::new(|v| v["n"] = 2048.into()), "n = 2048"),
        (
            add,
            Box::new(|v| v["limbs"] = serde_json::json!([1, 7])),
            "limb index 7",
        ),
        (
            add,
            Box::new(|v| v["limbs"] = serde_json::json!([1, 1])),
            "limb index 1",
        ),
        (
            add,
            Box::new(|v| v["srcs"] = serde_json::json!([1])),
            "1 sources",
        ),
        (
            add,
            Box::new(|v| v["srcs"] = serde_json::json!([1, 999])),
            "never written",
        ),
        (add, Box::new(|v| v["kind"] = "secret".into()), "kind"),
        (add, Box::new(|v| v["galois"] = 5.into()), "galois"),
        (add, Box::new(|v| v["dst"] = 1.into()), "written before"),
        (auto, Box::new(|v| v["galois"] = 4.into()), "Galois"),
        (auto, Box::new(|v| v["galois"] = 2049.into()), "Galois"),
        (
            auto,
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("galois");
            }),
            "galois",
        ),
        (bconv, Box::new(|v| v["mode"] = "fast".into()), "mode"),
        (
            load,
            Box::new(|v| v["srcs"] = serde_json::json!([1])),
            "sources",
        ),
        (
            load,
            Box::new(|v| v["limbs"] = serde_json::json!([])),
            "limbs",
        ),
    ];
    for (k, f, needle) in cases {
        let e = err(&edit(k, f));
        assert!(
            e.contains(&format!("line {}", k + 1)) && e.contains(needle),
            "line {}: want '{needle}': {e}",
            k + 1
        );
    }
    // Unbalanced markers.
    let no_end: String = text
        .lines()
        .filter(|l| !l.contains("\"op\":\"end\""))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(err(&no_end).contains("never ended"));
}

/// Reading is bounded: a line longer than the limit (what `/dev/zero` is) is an error
/// after at most that many bytes, not an allocation until the process aborts.
#[test]
fn reading_is_bounded() {
    let zeros = std::io::Read::take(std::io::repeat(0), 64 << 20);
    let e = read_trace(std::io::BufReader::new(zeros)).unwrap_err();
    assert!(
        e.contains("longer than") && e.contains(&MAX_LINE_BYTES.to_string()),
        "{e}"
    );
}

/// Trace files must be regular files: a FIFO blocked `open`, `/dev/zero` read forever.
#[cfg(unix)]
#[test]
fn a_trace_file_must_be_a_regular_file() {
    let dir = std::env::temp_dir().join(format!("tessera-trace-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("pipe.jsonl");
    let _ = std::fs::remove_file(&fifo);
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for p in [
        fifo.as_path(),
        std::path::Path::new("/dev/zero"),
        dir.as_path(),
    ] {
        let e = read_trace_file(p).unwrap_err();
        assert!(e.contains("regular file"), "{}: {e}", p.display());
    }
    let ok = dir.join("ok.jsonl");
    std::fs::write(&ok, valid()).unwrap();
    assert!(read_trace_file(&ok).is_ok());
}

/// A recorded trace written with `write_trace` reads back to the same header and instructions.
#[test]
fn written_traces_read_back_unchanged() {
    let text = valid();
    let (header, instrs) = read_trace(text.as_bytes()).unwrap();
    assert_eq!(
        header,
        tessera_backend::trace::TraceHeader::new(header.n, header.moduli.clone())
    );
    let mut out = Vec::new();
    tessera_backend::trace::write_trace(&mut out, &header, &instrs).unwrap();
    let (h2, i2) = read_trace(out.as_slice()).unwrap();
    assert_eq!((h2, i2), (header, instrs));
}

proptest::proptest! {
    /// The ranges of written ids answer as the set of the ids inserted (ids near each other
    /// and near `u64::MAX`, so ranges join and end at the top).
    #[test]
    fn id_ranges_equal_a_set(ids in proptest::collection::vec(0u64..64, 0..80), top in proptest::bool::ANY) {
        let mut set = std::collections::HashSet::new();
        let mut ranges = tessera_backend::trace::IdSet::default();
        let id = |x: u64| if top { u64::MAX - x } else { x };
        for &x in &ids {
            set.insert(id(x));
            ranges.insert(id(x));
        }
        for x in 0..66 {
            proptest::prop_assert_eq!(ranges.contains(&id(x)), set.contains(&id(x)), "{}", x);
        }
    }
}
