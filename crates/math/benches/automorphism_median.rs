//! The evaluation-form automorphism (`apply_permutation_with`) on one limb of N = 2^16, per
//! kernel: scalar indexing against the AVX2 and AVX-512 gathers, alternating one call of each
//! for `REPS` rounds in one process and reporting medians and minima (the `ntt_median` method).
//! Kernels the CPU lacks are reported as skipped.
//!
//! Run: `cargo bench -p tessera-math --bench automorphism_median`

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
        for (k, mut v) in kernels.iter().zip(t) {
            v.sort_by(f64::total_cmp);
            println!(
                "{{\"bench\":\"automorphism_median/N=2^16/{name}\",\"kernel\":\"{}\",\"median_us\":{:.2},\"min_us\":{:.2},\"reps\":{REPS}}}",
                k.name(),
                v[v.len() / 2] * 1e6,
                v[0] * 1e6
            );
        }
    }
}
