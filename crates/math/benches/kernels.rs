//! Criterion benches for the math kernels, with tfhe-ntt's prime64 plan measured in the same
//! run as the peer for the NTT and INTT.
//!
//! Run: `cargo bench -p tessera-math --bench kernels`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use tessera_math::automorphism::{automorphism_coeff, galois_element};
use tessera_math::pointwise::{dot2_row, mul_row};
use tessera_math::primes::generate_ntt_primes;
use tessera_math::sampling::{limb_stream, Seed};
use tessera_math::{
    AlignedVec, BaseConverter, ConversionMode, Kernel, Modulus, NttPlan, Representation,
    RingContext, RnsBasis, RnsPoly,
};

/// Test data in a cache-line-aligned buffer (both libraries get the same kind of buffer).
fn data(n: usize, q: u64, salt: u64) -> AlignedVec {
    let words: Vec<u64> = (0..n as u64)
        .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt) % q)
        .collect();
    AlignedVec::from(words)
}

fn ntt(c: &mut Criterion) {
    for (log_n, bits) in [(16u32, 60u32), (16, 49), (14, 60)] {
        let n = 1usize << log_n;
        let q = generate_ntt_primes(bits, n, 1, &[]).unwrap()[0];
        let ours = NttPlan::new(n, q).unwrap();
        let peer = tfhe_ntt::prime64::Plan::try_new(n, q).unwrap();
        let mut g = c.benchmark_group(format!("ntt/N=2^{log_n}/{bits}-bit"));
        let mut a = data(n, q, 1);
        g.bench_function(BenchmarkId::new("forward", "tessera"), |b| {
            b.iter(|| ours.forward(black_box(&mut a)).unwrap())
        });
        g.bench_function(BenchmarkId::new("forward", "tfhe-ntt"), |b| {
            b.iter(|| peer.fwd(black_box(&mut a)))
        });
        let mut a = data(n, q, 2);
        g.bench_function(BenchmarkId::new("inverse", "tessera"), |b| {
            b.iter(|| ours.inverse(black_box(&mut a)).unwrap())
        });
        // tfhe-ntt's inverse leaves out the 1/N scaling; ours includes it.
        g.bench_function(BenchmarkId::new("inverse", "tfhe-ntt"), |b| {
            b.iter(|| peer.inv(black_box(&mut a)))
        });
        g.finish();
    }
}

fn bconv(c: &mut Criterion) {
    let n = 1 << 16;
    let qs = generate_ntt_primes(60, n, 24, &[]).unwrap();
    let ps = generate_ntt_primes(61, n, 6, &qs).unwrap();
    let all: Vec<u64> = qs.iter().chain(&ps).copied().collect();
    let ctx = RingContext::new(n, &all).unwrap();
    let from: Vec<usize> = (0..24).collect();
    let to: Vec<usize> = (24..30).collect();
    let input: Vec<u64> = qs.iter().flat_map(|&q| data(n, q, q).to_vec()).collect();
    let x = RnsPoly::from_data(&ctx, &from, input, Representation::Coefficient).unwrap();
    let mut g = c.benchmark_group("bconv/N=2^16/24->6");
    g.sample_size(20);
    g.bench_function("approximate", |b| {
        b.iter(|| x.bconv(&to, ConversionMode::Approximate).unwrap())
    });
    g.bench_function("exact-centered", |b| {
        b.iter(|| x.bconv(&to, ConversionMode::ExactCentered).unwrap())
    });
    g.finish();
}

fn automorphism(c: &mut Criterion) {
    let n = 1 << 16;
    let q = generate_ntt_primes(60, n, 1, &[]).unwrap()[0];
    let ctx = RingContext::new(n, &[q]).unwrap();
    let g5 = galois_element(1, n).unwrap();
    let a = data(n, q, 3);
    let mut out = vec![0u64; n];
    let mut grp = c.benchmark_group("automorphism/N=2^16/one limb");
    grp.bench_function("coefficient", |b| {
        b.iter(|| automorphism_coeff(black_box(&a), g5, q, &mut out).unwrap())
    });
    let mut p = RnsPoly::from_data(&ctx, &[0], a.to_vec(), Representation::Coefficient).unwrap();
    p.ntt().unwrap();
    grp.bench_function("evaluation", |b| b.iter(|| p.automorphism(g5).unwrap()));
    grp.finish();
}

/// The element-wise primaries, the XOF's rejection loop and the exact BConv on each kernel this
/// CPU has (IFMA's primaries are the AVX-512 code, so it is left out): what the AVX2 paths gain
/// over the scalar loops, one limb of N = 2^16 with a 60-bit prime.
fn primaries_per_kernel(c: &mut Criterion) {
    let n = 1 << 16;
    let qs = generate_ntt_primes(60, n, 24, &[]).unwrap();
    let ps = generate_ntt_primes(61, n, 6, &qs).unwrap();
    let m = Modulus::new(qs[0]).unwrap();
    let rows: Vec<AlignedVec> = (0..12).map(|i| data(n, qs[0], 10 + i)).collect();
    let (xs, rest) = rows.split_at(4);
    let (ys0, ys1) = rest.split_at(4);
    fn view(v: &[AlignedVec]) -> Vec<&[u64]> {
        v.iter().map(|r| &r[..]).collect()
    }
    let (xs, ys0, ys1) = (view(xs), view(ys0), view(&ys1[..4]));
    let conv =
        BaseConverter::new(&RnsBasis::new(&ps).unwrap(), &RnsBasis::new(&qs).unwrap()).unwrap();
    let input: Vec<u64> = ps.iter().flat_map(|&p| data(n, p, p).to_vec()).collect();
    let mut out = vec![0u64; qs.len() * n];
    let seed = Seed([7; 32]);
    let mut g = c.benchmark_group("primaries/N=2^16/60-bit");
    g.sample_size(20);
    for kernel in [Kernel::Scalar, Kernel::Avx2, Kernel::Avx512] {
        if !kernel.cpu_supports() {
            println!(
                "primaries: kernel {} skipped (this CPU lacks it)",
                kernel.name()
            );
            continue;
        }
        let (mut o0, mut o1) = (vec![0u64; n], vec![0u64; n]);
        g.bench_function(BenchmarkId::new("dot2 of 4 terms", kernel.name()), |b| {
            b.iter(|| dot2_row(kernel, &m, &xs, &ys0, &ys1, &mut o0, &mut o1).unwrap())
        });
        let mut a = data(n, qs[0], 5);
        g.bench_function(BenchmarkId::new("mul", kernel.name()), |b| {
            b.iter(|| mul_row(kernel, &m, &mut a, black_box(xs[0])).unwrap())
        });
        let mut u = vec![0u64; n];
        g.bench_function(BenchmarkId::new("xof fill_below", kernel.name()), |b| {
            b.iter(|| limb_stream(&seed, qs[0]).fill_below_with(kernel, qs[0], &mut u))
        });
        g.bench_function(BenchmarkId::new("bconv exact 6->24", kernel.name()), |b| {
            b.iter(|| {
                conv.convert_with(kernel, &input, &mut out, n, ConversionMode::ExactCentered)
                    .unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, ntt, bconv, automorphism, primaries_per_kernel);
criterion_main!(benches);
