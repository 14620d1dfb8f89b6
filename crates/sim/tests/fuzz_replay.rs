//! The CI form of the fuzz targets (docs/fuzzing.md): the same entry points
//! (`fuzz/src/entry.rs`, included below), driven by the seed inputs, every input a fuzz run
//! saved as a regression (`fuzz/regressions/<target>/`), and a few thousand deterministic
//! mutations of the seeds. Any panic fails the test. Runs in seconds.
//!
//! `TESSERA_WRITE_SEEDS=DIR cargo test -p tessera-sim --test fuzz_replay` also writes the
//! seeds to `DIR/<target>/` to start a fuzz run from.

#[allow(dead_code)]
#[path = "../../../fuzz/src/entry.rs"]
mod entry;

/// xorshift64*: a fixed, dependency-free sequence, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Values that sit on boundaries of the fields the parsers read.
const INTERESTING: [&[u8]; 12] = [
    b"0",
    b"-1",
    b"NaN",
    b"inf",
    b"4294967296",
    b"9223372036854775807",
    b"1e308",
    b"\xff",
    b"\x00",
    b"[]",
    b"\"\"",
    b"extends = \"ark\"\n",
];

/// One libFuzzer-style mutation of `x`: bit flips, byte stores, boundary values spliced in,
/// deletions, duplications, truncation, or a splice with another input.
fn mutate(x: &mut Vec<u8>, other: &[u8], rng: &mut Rng) {
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(x.len() + 1);
        match rng.below(7) {
            0 if !x.is_empty() => {
                let i = rng.below(x.len());
                x[i] ^= 1 << rng.below(8);
            }
            1 if !x.is_empty() => {
                let i = rng.below(x.len());
                x[i] = rng.next() as u8;
            }
            2 => {
                let v = INTERESTING[rng.below(INTERESTING.len())];
                x.splice(at..at, v.iter().copied());
            }
            3 if !x.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(x.len());
                x.drain(at.min(end)..end);
            }
            4 => {
                let end = (at + 1 + rng.below(64)).min(x.len());
                let piece: Vec<u8> = x[at.min(end)..end].to_vec();
                x.splice(at..at, piece);
            }
            5 => x.truncate(at),
            _ if !other.is_empty() => {
                let from = rng.below(other.len());
                let end = (from + 1 + rng.below(256)).min(other.len());
                x.splice(at..at, other[from..end].iter().copied());
            }
            _ => {}
        }
    }
}

fn replay(target: &str, mutations: usize) {
    let seeds = entry::seeds(target);
    if let Some(dir) = std::env::var_os("TESSERA_WRITE_SEEDS") {
        let dir = std::path::Path::new(&dir).join(target);
        std::fs::create_dir_all(&dir).unwrap();
        for (k, s) in seeds.iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{k}")), s).unwrap();
        }
    }
    // Every seed is a valid input: otherwise the mutations below start from rejected input
    // and would pass whatever the parsers did.
    for (k, s) in seeds.iter().enumerate() {
        assert!(entry::run(target, s), "{target}: seed {k} is not accepted");
    }
    let mut inputs = seeds.clone();
    let saved = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/regressions/");
    if let Ok(dir) = std::fs::read_dir(std::path::Path::new(saved).join(target)) {
        for f in dir.flatten() {
            inputs.push(std::fs::read(f.path()).unwrap());
        }
    }
    for x in &inputs[seeds.len()..] {
        entry::run(target, x);
    }
    let mut rng = Rng(0x7e55_e4a0_0000_0001 ^ target.len() as u64);
    for _ in 0..mutations {
        let mut x = seeds[rng.below(seeds.len())].clone();
        let other = &inputs[rng.below(inputs.len())];
        mutate(&mut x, other, &mut rng);
        entry::run(target, &x);
    }
}

#[test]
fn trace_parser_survives_mutated_traces() {
    replay("trace_parser", 3000);
}

#[test]
fn machine_loader_survives_mutated_descriptions() {
    replay("machine_description", 2000);
}

#[test]
fn ckks_deserialisers_survive_mutated_objects() {
    replay("ckks_deserialize", 3000);
}

#[test]
fn params_loader_survives_mutated_files() {
    replay("params_file", 3000);
}
