//! Times the forward and the inverse NTT at N = 2^16 for a prime of the given size, per kernel
//! named on the command line, alternating the kernels round by round so that host noise falls
//! on all of them alike, and checks every kernel's output against the scalar one:
//! `cargo run --release -p tessera-math --example ntt_kernels -- 60 avx512 avx512-ifma`
//! (the first argument is the prime's bit size, 20 to 62; a kernel this CPU lacks is an error).
use std::time::Instant;
use tessera_math::primes::generate_ntt_primes;
use tessera_math::{simd, AlignedVec, Kernel, NttPlan};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    }
}

fn fail(msg: String) -> ! {
    eprintln!("{msg}");
    std::process::exit(2);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let bits: u32 = args
        .next()
        .and_then(|b| b.parse().ok())
        .filter(|b| (20..=62).contains(b))
        .unwrap_or_else(|| fail("the first argument is the prime's bit size, 20 to 62".into()));
    let kernels: Vec<Kernel> = args
        .map(|a| match simd::parse(&a) {
            Ok(k) if k.cpu_supports() => k,
            Ok(_) => fail(format!("kernel {a} is not supported by this CPU")),
            Err(e) => fail(e.to_string()),
        })
        .collect();
    let n = 1 << 16;
    let q = generate_ntt_primes(bits, n, 1, &[]).unwrap()[0];
    let plan = NttPlan::new(n, q).unwrap();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let input: Vec<u64> = (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % q
        })
        .collect();
    let mut want = input.clone();
    plan.forward_with(Kernel::Scalar, &mut want).unwrap();
    let (rounds, reps) = (5, 41);
    let mut times = vec![(Vec::new(), Vec::new()); kernels.len()];
    for _ in 0..rounds {
        for (i, &k) in kernels.iter().enumerate() {
            // Cache-line aligned, as `RnsPoly` stores limbs (a `Vec` lands at whatever
            // offset the allocator gives, which moves the timings by several percent).
            let mut a = AlignedVec::from_slice(&input);
            for _ in 0..reps {
                a.copy_from_slice(&input);
                let t = Instant::now();
                plan.forward_with(k, &mut a).unwrap();
                times[i].0.push(t.elapsed().as_secs_f64() * 1e6);
                assert!(
                    a[..] == want[..],
                    "{} forward differs from scalar",
                    k.name()
                );
                let t = Instant::now();
                plan.inverse_with(k, &mut a).unwrap();
                times[i].1.push(t.elapsed().as_secs_f64() * 1e6);
                assert!(a[..] == input[..], "{} inverse does not invert", k.name());
            }
        }
    }
    println!("N = 2^16, q = {q} ({bits} bits), medians of {rounds} x {reps} alternated calls");
    for (k, (f, i)) in kernels.iter().zip(times) {
        println!(
            "{:12} forward {:8.1} us  inverse {:8.1} us",
            k.name(),
            median(f),
            median(i)
        );
    }
}
