//! Times fast base conversion (BConv) at the key-switching shapes of the `ark` preset (ModDown
//! from six 61-bit special limbs to 24 chain limbs; ModUp from a digit of six 50-bit limbs to
//! the special limbs and to the other chain limbs), per kernel named on the command line, and
//! checks every kernel's output against the scalar one. One thread gives per-core figures:
//! `RAYON_NUM_THREADS=1 cargo run --release -p tessera-math --example bconv_shapes -- avx2 avx512`
//! (a kernel this CPU lacks is an error).
use std::time::Instant;
use tessera_math::primes::generate_ntt_primes;
use tessera_math::{BaseConverter, ConversionMode, Kernel, RnsBasis};

fn time(
    conv: &BaseConverter,
    k: Kernel,
    input: &[u64],
    out: &mut [u64],
    n: usize,
    mode: ConversionMode,
) -> f64 {
    let mut ts = Vec::new();
    for _ in 0..15 {
        let t = Instant::now();
        conv.convert_with(k, input, out, n, mode).unwrap();
        ts.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ts.sort_by(f64::total_cmp);
    ts[ts.len() / 2]
}

fn main() {
    let n = 1 << 16;
    let q50 = generate_ntt_primes(50, n, 24, &[]).unwrap();
    let p61 = generate_ntt_primes(61, n, 6, &q50).unwrap();
    let mut seed = 12345u64;
    let mut rnd = |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    };
    let shapes: Vec<(&str, Vec<u64>, Vec<u64>, ConversionMode)> = vec![
        (
            "moddown 6x61 -> 24x50",
            p61.clone(),
            q50.clone(),
            ConversionMode::ExactCentered,
        ),
        (
            "modup 6x50 -> 6x61",
            q50[..6].to_vec(),
            p61.clone(),
            ConversionMode::Approximate,
        ),
        (
            "modup 6x50 -> 18x50",
            q50[..6].to_vec(),
            q50[6..].to_vec(),
            ConversionMode::Approximate,
        ),
    ];
    let mut kernels = Vec::new();
    for arg in std::env::args().skip(1) {
        let k = match tessera_math::simd::parse(&arg) {
            Ok(k) => k,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        };
        if !k.cpu_supports() {
            eprintln!("kernel {arg} is not supported by this CPU");
            std::process::exit(2);
        }
        kernels.push(k);
    }
    for (name, from, to, mode) in shapes {
        let conv = BaseConverter::new(&RnsBasis::new(&from).unwrap(), &RnsBasis::new(&to).unwrap())
            .unwrap();
        let input: Vec<u64> = from
            .iter()
            .flat_map(|&q| (0..n).map(|_| rnd(q)).collect::<Vec<_>>())
            .collect();
        let mut reference = vec![0u64; to.len() * n];
        conv.convert_with(Kernel::Scalar, &input, &mut reference, n, mode)
            .unwrap();
        for &k in &kernels {
            let mut out = vec![0u64; to.len() * n];
            let ms = time(&conv, k, &input, &mut out, n, mode);
            assert!(out == reference, "{name} {k:?} differs from scalar");
            println!("{name:24} {:8} {ms:8.3} ms", format!("{k:?}"));
        }
    }
}
