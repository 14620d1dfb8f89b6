//! Element-wise primaries on 32-bit limbs: `a += b`, `a -= b`, `a *= b` (Barrett) and
//! `a *= c` for a constant `c` (Shoup), on the kernel of the `TESSERA_SIMD` limit or a chosen
//! one. Inputs are residues below `q`; outputs are canonical. Every vector kernel equals the
//! scalar one bit for bit (the same [`Lanes32`] code, and canonical outputs are unique).

use super::lanes::{small_mod, Lanes32, Scalar};
use super::modulus::Modulus32;
use super::ntt::{lanes, word32};
use crate::error::{MathError, Result};
use crate::ntt::Kernel;

/// One element-wise operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    /// Product by `c < q` with Shoup quotient `cs`.
    MulScalar {
        c: u32,
        cs: u32,
    },
}

/// Runs `op` over the whole vectors of `a` (and `b`), returning how many words it did.
#[inline(always)]
unsafe fn run<S: Lanes32>(op: Op, m: &Modulus32, a: &mut [u32], b: &[u32]) -> usize {
    let whole = a.len() - a.len() % S::L;
    let (q, mu, k) = (S::splat(m.value()), S::splat(m.barrett_mu()), m.bits());
    let (pa, pb) = (a.as_mut_ptr(), b.as_ptr());
    macro_rules! each {
        (|$x:ident, $y:ident| $e:expr) => {{
            let mut i = 0;
            while i < whole {
                let $x = S::load(pa.add(i));
                let $y = S::load(pb.add(i));
                S::store(pa.add(i), $e);
                i += S::L;
            }
        }};
    }
    match op {
        Op::Add => each!(|x, y| small_mod::<S>(S::add(x, y), q)),
        Op::Sub => each!(|x, y| small_mod::<S>(S::add(S::sub(x, y), q), q)),
        Op::Mul => each!(|x, y| S::mul_barrett(x, y, q, mu, k)),
        Op::MulScalar { c, cs } => {
            let (c, cs) = (S::splat(c), S::splat(cs));
            let mut i = 0;
            while i < whole {
                let x = S::load(pa.add(i));
                S::store(
                    pa.add(i),
                    small_mod::<S>(S::mul_shoup_bcast(x, c, cs, q), q),
                );
                i += S::L;
            }
        }
    }
    whole
}

/// `op` over all of `a` on lanes `S`, the tail on scalar code. `b` is as long as `a`, or empty
/// for [`Op::MulScalar`].
#[inline(always)]
pub(crate) unsafe fn apply<S: Lanes32>(op: Op, m: &Modulus32, a: &mut [u32], b: &[u32]) {
    let done = run::<S>(op, m, a, b);
    let tail_b = if b.is_empty() { b } else { &b[done..] };
    run::<Scalar>(op, m, &mut a[done..], tail_b);
}

fn dispatch(kernel: Option<Kernel>, op: Op, m: &Modulus32, a: &mut [u32], b: &[u32]) -> Result<()> {
    if !matches!(op, Op::MulScalar { .. }) && a.len() != b.len() {
        return Err(MathError::LengthMismatch {
            what: "32-bit element-wise operand",
            expected: a.len(),
            found: b.len(),
        });
    }
    let kernel = word32(kernel.unwrap_or_else(crate::simd::active));
    if !kernel.cpu_supports() {
        return Err(MathError::Unsupported(format!(
            "kernel {} for 32-bit element-wise products on this CPU",
            kernel.name()
        )));
    }
    debug_assert!(a.iter().chain(b).all(|&x| x < m.value()));
    debug_assert!(lanes(kernel) <= 16);
    // SAFETY: the kernel's CPU features were checked; lengths match (or `b` is unused).
    unsafe {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => super::x86::apply_avx2(op, m, a, b),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => super::x86::apply_avx512(op, m, a, b),
            _ => apply::<Scalar>(op, m, a, b),
        }
    }
    Ok(())
}

/// `a[i] = a[i] + b[i] mod q` on `kernel` (`None`: the `TESSERA_SIMD` limit).
pub fn add(kernel: Option<Kernel>, m: &Modulus32, a: &mut [u32], b: &[u32]) -> Result<()> {
    dispatch(kernel, Op::Add, m, a, b)
}

/// `a[i] = a[i] - b[i] mod q`.
pub fn sub(kernel: Option<Kernel>, m: &Modulus32, a: &mut [u32], b: &[u32]) -> Result<()> {
    dispatch(kernel, Op::Sub, m, a, b)
}

/// `a[i] = a[i] * b[i] mod q` (Barrett).
pub fn mul(kernel: Option<Kernel>, m: &Modulus32, a: &mut [u32], b: &[u32]) -> Result<()> {
    dispatch(kernel, Op::Mul, m, a, b)
}

/// `a[i] = a[i] * c mod q` for a constant `c < q` (Shoup).
pub fn mul_scalar(kernel: Option<Kernel>, m: &Modulus32, a: &mut [u32], c: u32) -> Result<()> {
    if c >= m.value() {
        return Err(MathError::OutOfRange {
            name: "constant",
            value: c.to_string(),
            allowed: format!("a residue below q = {}", m.value()),
        });
    }
    let op = Op::MulScalar { c, cs: m.shoup(c) };
    dispatch(kernel, op, m, a, &[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type Case = (u32, Vec<u32>, Vec<u32>, u32);

    fn case() -> impl Strategy<Value = Case> {
        (
            prop::sample::select(vec![3u32, 97, 65537, 268_369_921, (1 << 30) - 35]),
            0usize..80,
            any::<u64>(),
        )
            .prop_map(|(q, n, seed)| {
                let mut r = crate::testutil::XorShift::new(seed);
                let mut v = || -> Vec<u32> {
                    (0..n)
                        .map(|i| match i % 7 {
                            0 => q - 1,
                            1 => 0,
                            _ => (r.next_u64() % q as u64) as u32,
                        })
                        .collect()
                };
                let (a, b) = (v(), v());
                let c = (seed % q as u64) as u32;
                (q, a, b, c)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Each kernel equals the u64 reference (so each SIMD kernel equals the scalar one).
        #[test]
        fn kernels_match_the_u64_reference((q, a, b, c) in case()) {
            let m = Modulus32::new(q as u64).unwrap();
            let qq = q as u64;
            let refs: [Vec<u32>; 4] = [
                a.iter().zip(&b).map(|(&x, &y)| ((x as u64 + y as u64) % qq) as u32).collect(),
                a.iter().zip(&b).map(|(&x, &y)| ((x as u64 + qq - y as u64) % qq) as u32).collect(),
                a.iter().zip(&b).map(|(&x, &y)| (x as u64 * y as u64 % qq) as u32).collect(),
                a.iter().map(|&x| (x as u64 * c as u64 % qq) as u32).collect(),
            ];
            for k in crate::simd::kernels_for_tests("pointwise32") {
                let mut out = [a.clone(), a.clone(), a.clone(), a.clone()];
                add(Some(k), &m, &mut out[0], &b).unwrap();
                sub(Some(k), &m, &mut out[1], &b).unwrap();
                mul(Some(k), &m, &mut out[2], &b).unwrap();
                mul_scalar(Some(k), &m, &mut out[3], c).unwrap();
                for (i, (o, r)) in out.iter().zip(&refs).enumerate() {
                    prop_assert_eq!(o, r, "op {} kernel {}", i, k.name());
                }
            }
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let m = Modulus32::new(97).unwrap();
        let mut a = vec![1u32; 8];
        assert!(matches!(
            add(None, &m, &mut a, &[1; 7]),
            Err(MathError::LengthMismatch { .. })
        ));
        assert!(matches!(
            mul_scalar(None, &m, &mut a, 97),
            Err(MathError::OutOfRange { .. })
        ));
    }
}
