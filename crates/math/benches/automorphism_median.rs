//! The evaluation-form automorphism (`apply_permutation_with`) on one limb of N = 2^16, per
//! kernel: scalar indexing against the AVX2 and AVX-512 gathers, alternating one call of each
//! for `REPS` rounds in one process and reporting medians and minima (the `ntt_median` method).
//! Kernels the CPU lacks are reported as skipped.
//!
//! Run: `cargo bench -p tessera-math --bench automorphism_median`. The `rot1-cold` rows cycle
//! over 48 limbs (24 MiB), as a key switch reads them: the case the prefetching is for.

use std::hint::black_box;
use std::time::Instant;
use tessera_math::automorphism::{
    apply_permutation_with, automorphism_permutation, galois_element,
};
use tessera_math::{AlignedVec, Kernel};

const REPS: usize = 1001;

fn main() {
    let n = 1usize << 16;
    let input = AlignedVec::from(
        (0..n as u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9))
            .collect::<Vec<_>>(),
    );
    let kernels: Vec<Kernel> = [Kernel::Scalar, Kernel::Avx2, Kernel::Avx512]
        .into_iter()
        .filter(|k| {
            let ok = k.cpu_supports();
            if !ok {
                eprintln!(
                    "automorphism_median: kernel {} skipped (not on this CPU)",
                    k.name()
                );
            }
            ok
        })
        .collect();
    // A rotation by one slot and complex conjugation: the two permutation shapes HRot and
    // conjugation use.
    for (name, g) in [
        ("rot1", galois_element(1, n).unwrap()),
        ("conj", 2 * n as u64 - 1),
    ] {
        let perm = automorphism_permutation(g, n).unwrap();
        let mut out = AlignedVec::from(vec![0u64; n]);
        let mut t = vec![Vec::with_capacity(REPS); kernels.len()];
        for _ in 0..REPS {
            for (i, &k) in kernels.iter().enumerate() {
                let s = Instant::now();
                apply_permutation_with(k, black_box(&input), &perm, black_box(&mut out)).unwrap();
                t[i].push(s.elapsed().as_secs_f64());
            }
        }
        report(&format!("N=2^16/{name}"), &kernels, t);
    }
    // Cold: one call per limb over COLD_LIMBS limbs (24 MiB, more than the caches), as in a
    // key switch, where the limbs come from memory; the row the prefetching is for.
    let perm = automorphism_permutation(galois_element(1, n).unwrap(), n).unwrap();
    let limbs: Vec<AlignedVec> = (0..COLD_LIMBS as u64)
        .map(|l| AlignedVec::from((0..n as u64).map(|i| i ^ l << 40).collect::<Vec<_>>()))
        .collect();
    let mut outs: Vec<AlignedVec> = (0..COLD_LIMBS)
        .map(|_| AlignedVec::from(vec![0u64; n]))
        .collect();
    let mut t = vec![Vec::with_capacity(COLD_REPS); kernels.len()];
    for _ in 0..COLD_REPS {
        for (i, &k) in kernels.iter().enumerate() {
            let s = Instant::now();
            for (a, o) in limbs.iter().zip(outs.iter_mut()) {
                apply_permutation_with(k, black_box(a), &perm, black_box(o)).unwrap();
            }
            t[i].push(s.elapsed().as_secs_f64() / COLD_LIMBS as f64);
        }
    }
    report("N=2^16/rot1-cold", &kernels, t);
}

/// Limbs cycled by the cold rows, and their rounds.
const COLD_LIMBS: usize = 48;
const COLD_REPS: usize = 41;

/// One JSON line per kernel: median and minimum of its timings.
fn report(case: &str, kernels: &[Kernel], t: Vec<Vec<f64>>) {
    for (k, mut v) in kernels.iter().zip(t) {
        v.sort_by(f64::total_cmp);
        println!(
            "{{\"bench\":\"automorphism_median/{case}\",\"kernel\":\"{}\",\"median_us\":{:.2},\"min_us\":{:.2},\"reps\":{}}}",
            k.name(),
            v[v.len() / 2] * 1e6,
            v[0] * 1e6,
            v.len()
        );
    }
}
