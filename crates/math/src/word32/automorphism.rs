//! Automorphisms `X -> X^g` on 32-bit limbs: the same maps as [`crate::automorphism`]
//! (coefficient form: an index map with negation; evaluation form: the slot permutation of
//! [`crate::automorphism::automorphism_permutation`]) on `u32` words, so a 32-bit limb maps to
//! exactly the words a 64-bit limb of the same residues maps to.

use super::ntt::{lanes, word32};
use crate::automorphism::galois_check;
use crate::error::{MathError, Result};
use crate::ntt::Kernel;

/// The portable loop `out[k] = input[perm[k]]`, also the tail and fallback of the vector
/// kernels (panics on an index out of range, like indexing).
pub(crate) fn permute_scalar(input: &[u32], perm: &[u32], out: &mut [u32]) {
    for (o, &p) in out.iter_mut().zip(perm) {
        *o = input[p as usize];
    }
}

/// `out[k] = input[perm[k]]` for `k < min(out.len(), perm.len())` on `kernel` (`None`: the
/// `TESSERA_SIMD` limit). Why vectors pay: in bit-reversed slot order an automorphism maps
/// each aligned block of output slots to one aligned block of input slots, so a vector of
/// outputs is one load and one in-register permute (see
/// [`crate::automorphism::apply_permutation_with`]); other vectors run the scalar loop.
///
/// # Errors
/// A kernel this CPU lacks.
pub fn apply_permutation_u32(
    kernel: Option<Kernel>,
    input: &[u32],
    perm: &[u32],
    out: &mut [u32],
) -> Result<()> {
    let kernel = word32(kernel.unwrap_or_else(crate::simd::active));
    if !kernel.cpu_supports() {
        return Err(MathError::Unsupported(format!(
            "kernel {} for 32-bit automorphisms on this CPU",
            kernel.name()
        )));
    }
    debug_assert!(lanes(kernel) <= 16);
    crate::automorphism::permute_blocks(input, perm, out, |perm, out| {
        // SAFETY: the kernel's features were checked; the vector code reads only whole blocks
        // it has checked to lie inside `input`.
        let done = unsafe {
            match kernel {
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 => super::x86::permute_avx2(input, perm, out),
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512 => super::x86::permute_avx512(input, perm, out),
                _ => 0,
            }
        };
        permute_scalar(input, &perm[done..], &mut out[done..]);
    });
    Ok(())
}

/// `X -> X^g` on one limb in coefficient representation modulo `q`: `a_i X^i` goes to
/// `+-a_i X^(i g mod N)`, negated when `i g mod 2N >= N`.
pub fn automorphism_coeff_u32(input: &[u32], g: u64, q: u32, out: &mut [u32]) -> Result<()> {
    let n = input.len();
    galois_check(g, n)?;
    if out.len() != n {
        return Err(MathError::LengthMismatch {
            what: "32-bit automorphism output",
            expected: n,
            found: out.len(),
        });
    }
    let mask = 2 * n - 1;
    let g = g as usize;
    for (i, &a) in input.iter().enumerate() {
        let j = (i * g) & mask;
        if j < n {
            out[j] = a;
        } else {
            out[j - n] = if a == 0 { 0 } else { q - a };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::automorphism::{
        apply_permutation_with, automorphism_coeff, automorphism_permutation, galois_element,
    };

    /// Every kernel writes the 64-bit automorphism's words, in both representations.
    #[test]
    fn equals_the_64_bit_automorphism() {
        let q = 786_433u32;
        let mut r = crate::testutil::XorShift::new(7);
        for log_n in [3usize, 4, 5, 10] {
            let n = 1 << log_n;
            let a: Vec<u32> = (0..n).map(|_| (r.next_u64() % q as u64) as u32).collect();
            let a64: Vec<u64> = a.iter().map(|&x| x as u64).collect();
            for g in [
                galois_element(1, n).unwrap(),
                galois_element(-3, n).unwrap(),
                2 * n as u64 - 1,
            ] {
                let perm = automorphism_permutation(g, n).unwrap();
                let mut want = vec![0u64; n];
                apply_permutation_with(Kernel::Scalar, &a64, &perm, &mut want).unwrap();
                for kernel in crate::simd::kernels_for_tests("automorphism32") {
                    let mut out = vec![0u32; n];
                    apply_permutation_u32(Some(kernel), &a, &perm, &mut out).unwrap();
                    assert!(
                        out.iter().zip(&want).all(|(&o, &w)| o as u64 == w),
                        "n {n} g {g}"
                    );
                }
                // A permutation that is not an automorphism's takes the scalar path.
                let rev: Vec<u32> = (0..n as u32).rev().collect();
                for kernel in crate::simd::kernels_for_tests("automorphism32") {
                    let mut out = vec![0u32; n];
                    apply_permutation_u32(Some(kernel), &a, &rev, &mut out).unwrap();
                    assert!(out.iter().zip(a.iter().rev()).all(|(o, w)| o == w));
                }
                let mut want = vec![0u64; n];
                automorphism_coeff(&a64, g, q as u64, &mut want).unwrap();
                let mut out = vec![0u32; n];
                automorphism_coeff_u32(&a, g, q, &mut out).unwrap();
                assert!(out.iter().zip(&want).all(|(&o, &w)| o as u64 == w));
            }
        }
        let mut out = vec![0u32; 8];
        assert!(automorphism_coeff_u32(&[0; 8], 2, q, &mut out).is_err());
        assert!(automorphism_coeff_u32(&[0; 8], 3, q, &mut out[..4]).is_err());
    }
}
