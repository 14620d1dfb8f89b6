//! Forward and inverse NTT at N = 2^16 (60-bit prime): Tessera's plan (the `TESSERA_SIMD`
//! kernel) against tfhe-ntt 0.7's `prime64::Plan`, alternating one call of each for `REPS`
//! rounds in one process and reporting medians and minima.
//!
//! Which code the peer runs: tfhe-ntt 0.7 takes its AVX-512 path whenever its default `avx512`
//! feature is on and the CPU has AVX-512, whatever `TESSERA_SIMD` says. The workspace turns that
//! feature off, so by default the peer is tfhe-ntt's AVX2 plan on any AVX2 host; build with
//! `--features tfhe-ntt-avx512` to measure its AVX-512 plan instead. Each line names both
//! kernels (`kernel`, `peer_kernel`). tfhe-ntt's inverse leaves out the 1/N scaling; ours
//! includes it.
//!
//! Why besides the criterion group `ntt/...`: criterion reports means over long batches, and on
//! a shared host under load those absorb every preemption (here they read 2x the uncontended
//! time); the median of single calls, alternated, is what the CLI's `bench ntt` reports.
//!
//! Run: `TESSERA_SIMD=avx2 cargo bench -p tessera-math --bench ntt_median` (against tfhe-ntt's
//! AVX2 plan), `TESSERA_SIMD=avx512 cargo bench -p tessera-math --bench ntt_median --features
//! tfhe-ntt-avx512` (against its AVX-512 plan). `TESSERA_NTT_BITS=50` measures a 50-bit prime
//! instead (the size of `ark`'s chain primes; there the AVX2 kernel's product runs on the FMA
//! units, and `TESSERA_AVX2_FMA=0` measures its integer product).

use std::hint::black_box;
use std::time::Instant;
use tessera_math::primes::generate_ntt_primes;
use tessera_math::{AlignedVec, NttPlan};

const REPS: usize = 1001;

#[path = "common/peer_kernel.rs"]
mod peer;

fn main() {
    let n = 1usize << 16;
    let bits: u32 = match std::env::var("TESSERA_NTT_BITS") {
        Ok(v) => match v.parse() {
            Ok(b) if (20..=62).contains(&b) => b,
            _ => panic!("TESSERA_NTT_BITS = {v} is invalid; allowed: 20 to 62"),
        },
        Err(_) => 60,
    };
    let q = generate_ntt_primes(bits, n, 1, &[]).unwrap()[0];
    let ours = NttPlan::new(n, q).unwrap();
    let peer = tfhe_ntt::prime64::Plan::try_new(n, q).unwrap();
    let peer_kernel = peer::peer_kernel(peer.use_ifma());
    let words: Vec<u64> = (0..n as u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % q)
        .collect();
    let (mut a, mut b) = (AlignedVec::from(words.clone()), AlignedVec::from(words));
    let time = |f: &mut dyn FnMut()| {
        let s = Instant::now();
        f();
        s.elapsed().as_secs_f64()
    };
    let mut t = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..REPS {
        t[0].push(time(&mut || ours.forward(black_box(&mut a)).unwrap()));
        t[1].push(time(&mut || peer.fwd(black_box(&mut b))));
        t[2].push(time(&mut || ours.inverse(black_box(&mut a)).unwrap()));
        t[3].push(time(&mut || peer.inv(black_box(&mut b))));
    }
    let names = [
        "forward/tessera",
        "forward/tfhe-ntt",
        "inverse/tessera",
        "inverse/tfhe-ntt",
    ];
    for (name, mut v) in names.into_iter().zip(t) {
        v.sort_by(f64::total_cmp);
        println!(
            "{{\"bench\":\"ntt_median/N=2^16/{bits}-bit/{name}\",\"kernel\":\"{}\",\"peer_kernel\":\"{peer_kernel}\",\"median_us\":{:.2},\"min_us\":{:.2},\"reps\":{REPS}}}",
            ours.kernel().name(),
            v[v.len() / 2] * 1e6,
            v[0] * 1e6
        );
    }
}
