//! Times the limb-parallel primitives that dominate a key switch at N = 2^16 (ark-like sizes:
//! 24 chain limbs, 6 special limbs): `cargo run --release -p tessera-math --example prims`.
use std::time::Instant;
use tessera_math::primes::generate_ntt_primes;
use tessera_math::sampling::Seed;
use tessera_math::{parallel, ConversionMode, Representation, RingContext, RnsPoly};

fn time(name: &str, reps: usize, mut f: impl FnMut()) {
    f();
    let mut ts: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ts.sort_by(f64::total_cmp);
    println!(
        "{name:>28}: median {:8.3} ms  min {:8.3} ms",
        ts[reps / 2],
        ts[0]
    );
}

fn main() {
    xof_raw();
    let threads: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1);
    parallel::set_num_threads(threads).unwrap();
    let n = 1 << 16;
    let ps = generate_ntt_primes(60, n, 30, &[]).unwrap();
    let ring = RingContext::new(n, &ps).unwrap();
    let all: Vec<usize> = (0..30).collect();
    let digit: Vec<usize> = (0..6).collect();
    let rest: Vec<usize> = (6..30).collect();
    let chain: Vec<usize> = (0..24).collect();
    let seed = Seed([7u8; 32]);
    let x = RnsPoly::expand_seed(&ring, &all, &seed).unwrap();
    let d = RnsPoly::from_data(
        &ring,
        &digit,
        x.data()[..6 * n].to_vec(),
        Representation::Coefficient,
    )
    .unwrap();
    println!("N = 2^16, 60-bit primes, {threads} thread(s)");
    parallel::install(|| {
        time("clone 30 limbs", 9, || {
            drop(std::hint::black_box(x.clone()))
        });
        time("select_limbs 24 of 30", 9, || {
            drop(x.select_limbs(&chain).unwrap())
        });
        time("expand_seed 30 limbs", 9, || {
            drop(RnsPoly::expand_seed(&ring, &all, &seed).unwrap())
        });
        time("bconv 6->24 approx", 9, || {
            drop(d.bconv(&rest, ConversionMode::Approximate).unwrap())
        });
        time("bconv 6->24 exact", 9, || {
            drop(d.bconv(&rest, ConversionMode::ExactCentered).unwrap())
        });
        let y = x.select_limbs(&chain).unwrap();
        let c: Vec<u64> = (0..24).map(|i| 12345 + i).collect();
        time("mul_scalar 24 (clone+op)", 9, || {
            let mut r = y.clone();
            r.mul_scalar_limbs(&c).unwrap();
            drop(r)
        });
        let mut r = y.clone();
        time("mul_scalar 24 in place", 9, || {
            r.mul_scalar_limbs(&c).unwrap()
        });
        let a: Vec<RnsPoly> = (0..4).map(|_| x.clone()).collect();
        let ar: Vec<&RnsPoly> = a.iter().collect();
        time("dot 4 x 30 limbs", 9, || {
            drop(RnsPoly::dot(&ar, &ar).unwrap())
        });
        let seeds: Vec<Seed> = (0..4).map(|i| Seed([i as u8; 32])).collect();
        let b: Vec<RnsPoly> = seeds
            .iter()
            .map(|s| RnsPoly::expand_seed(&ring, &all, s).unwrap())
            .collect();
        let br: Vec<&RnsPoly> = b.iter().collect();
        time("dot 4 x 30 limbs, distinct", 9, || {
            drop(RnsPoly::dot(&br, &ar).unwrap())
        });
        time("dot_pair_seeded 4 x 30 limbs", 9, || {
            drop(RnsPoly::dot_pair_seeded(&br, &ar, &seeds).unwrap())
        });
        let mut z = y.clone();
        // `y` is in evaluation form: each rep is one inverse and one forward transform.
        time("intt+ntt 24 limbs", 9, || {
            z.intt().unwrap();
            z.ntt().unwrap()
        });
    });
}

#[allow(dead_code)]
fn xof_raw() {
    let mut h = blake3::Hasher::new();
    h.update(b"x");
    for buf_len in [4096usize, 16384, 65536] {
        let mut r = h.finalize_xof();
        let mut buf = vec![0u8; buf_len];
        let total = 15_728_640usize;
        let t = Instant::now();
        for _ in 0..total / buf_len {
            r.fill(&mut buf);
        }
        println!(
            "blake3 xof fill {buf_len}: {:.3} ms for 15.7 MB",
            t.elapsed().as_secs_f64() * 1e3
        );
    }
}
