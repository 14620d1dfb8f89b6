//! The 32-bit-word backend equals the 64-bit CPU backend bit for bit: every primary of the
//! [`Backend`] trait on random inputs, over several degrees and limb sets, on every kernel
//! this CPU has (a kernel it lacks is reported as skipped on standard error).

use std::sync::Arc;
use tessera_backend::{Backend, Cpu32Backend, CpuBackend, HostPoly, Kind};
use tessera_math::automorphism::{conjugation_element, galois_element};
use tessera_math::sampling::Seed;
use tessera_math::word32::generate_ntt_primes32;
use tessera_math::{ConversionMode, Kernel, MathError, Representation, RingContext, RnsPoly};

/// A ring of degree `n` over `count` primes below 2^30 (a mix of 30-, 28- and 25-bit ones).
fn ring(n: usize, count: usize) -> Arc<RingContext> {
    let mut primes: Vec<u64> = Vec::new();
    for (k, bits) in (0..count).zip([30u32, 28, 25].iter().cycle()) {
        let exclude: Vec<u32> = primes.iter().map(|&q| q as u32).collect();
        let _ = k;
        primes.push(generate_ntt_primes32(*bits, n, 1, &exclude).unwrap()[0] as u64);
    }
    RingContext::new(n, &primes).unwrap()
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A random polynomial over `limbs` with edge values (0, q - 1, q / 2, q / 2 + 1) mixed in.
fn random(
    ring: &Arc<RingContext>,
    limbs: &[usize],
    repr: Representation,
    rng: &mut Rng,
) -> RnsPoly {
    let n = ring.n();
    let data = limbs
        .iter()
        .flat_map(|&i| {
            let q = ring.moduli()[i].value();
            (0..n)
                .map(|k| match k % 11 {
                    0 => 0,
                    1 => q - 1,
                    2 => q / 2,
                    3 => q / 2 + 1,
                    _ => rng.next() % q,
                })
                .collect::<Vec<_>>()
        })
        .collect();
    RnsPoly::from_data(ring, limbs, data, repr).unwrap()
}

/// Runs the same primary on both backends and compares the stored results.
struct Pair {
    c64: CpuBackend,
    c32: Cpu32Backend,
}

impl Pair {
    fn load(&mut self, p: &RnsPoly) -> (RnsPoly, tessera_backend::Poly32) {
        (
            self.c64.load(p, Kind::Ciphertext).unwrap(),
            self.c32.load(p, Kind::Ciphertext).unwrap(),
        )
    }
    fn same(&mut self, what: &str, a: &RnsPoly, b: &tessera_backend::Poly32) {
        let b = self.c32.store(b).unwrap();
        assert_eq!(a.limb_indices(), b.limb_indices(), "{what}: limbs");
        assert_eq!(a.repr(), b.repr(), "{what}: representation");
        assert!(
            a.data() == b.data(),
            "{what}: residues differ ({})",
            self.c32.kernel().name()
        );
    }
}

fn check_ring(n: usize, count: usize, kernel: Kernel, seed: u64) {
    let ring = ring(n, count);
    let c32 = match Cpu32Backend::with_kernel(ring.clone(), kernel) {
        Ok(b) => b,
        Err(e) => panic!("kernel {}: {e}", kernel.name()),
    };
    let mut t = Pair {
        c64: CpuBackend::new(ring.clone()),
        c32,
    };
    let mut rng = Rng(seed | 1);
    let all: Vec<usize> = (0..count).collect();
    // A strided, unordered limb set as key switching's digits and special limbs make.
    let odd: Vec<usize> = all.iter().rev().copied().step_by(2).collect();
    for limbs in [all.clone(), odd.clone(), vec![count - 1]] {
        let e = |r: &mut Rng| random(&ring, &limbs, Representation::Evaluation, r);
        let c = |r: &mut Rng| random(&ring, &limbs, Representation::Coefficient, r);
        let (xa, xb) = (e(&mut rng), e(&mut rng));
        let ((a64, a32), (b64, b32)) = (t.load(&xa), t.load(&xb));
        let r = (
            t.c64.add(&a64, &b64).unwrap(),
            t.c32.add(&a32, &b32).unwrap(),
        );
        t.same("add", &r.0, &r.1);
        let r = (
            t.c64.sub(&a64, &b64).unwrap(),
            t.c32.sub(&a32, &b32).unwrap(),
        );
        t.same("sub", &r.0, &r.1);
        let r = (t.c64.neg(&a64).unwrap(), t.c32.neg(&a32).unwrap());
        t.same("neg", &r.0, &r.1);
        let r = (
            t.c64.mul(&a64, &b64).unwrap(),
            t.c32.mul(&a32, &b32).unwrap(),
        );
        t.same("mul", &r.0, &r.1);
        let (mut acc64, mut acc32) = t.load(&e(&mut rng));
        t.c64.mul_acc(&mut acc64, &a64, &b64).unwrap();
        t.c32.mul_acc(&mut acc32, &a32, &b32).unwrap();
        t.same("mul_acc", &acc64, &acc32);
        let consts: Vec<u64> = limbs
            .iter()
            .map(|_| rng.next() >> (rng.next() % 64))
            .collect();
        let r = (
            t.c64.add_scalar(&a64, &consts).unwrap(),
            t.c32.add_scalar(&a32, &consts).unwrap(),
        );
        t.same("add_scalar", &r.0, &r.1);
        let r = (
            t.c64.mul_scalar(&a64, &consts).unwrap(),
            t.c32.mul_scalar(&a32, &consts).unwrap(),
        );
        t.same("mul_scalar", &r.0, &r.1);
        // Dot products of 1, 3 and 17 terms (17 crosses the 15-term accumulator chunk).
        for terms in [1usize, 3, 17] {
            let xs: Vec<RnsPoly> = (0..terms).map(|_| e(&mut rng)).collect();
            let ys: Vec<RnsPoly> = (0..terms).map(|_| e(&mut rng)).collect();
            let (x64, x32): (Vec<_>, Vec<_>) = xs.iter().map(|p| t.load(p)).unzip();
            let (y64, y32): (Vec<_>, Vec<_>) = ys.iter().map(|p| t.load(p)).unzip();
            let d64 = t.c64.dot(
                &x64.iter().collect::<Vec<_>>(),
                &y64.iter().collect::<Vec<_>>(),
            );
            let d32 = t.c32.dot(
                &x32.iter().collect::<Vec<_>>(),
                &y32.iter().collect::<Vec<_>>(),
            );
            t.same("dot", &d64.unwrap(), &d32.unwrap());
            let seeds: Vec<Seed> = (0..terms)
                .map(|i| Seed([i as u8 + seed as u8; 32]))
                .collect();
            let kb: Vec<HostPoly> = ys.iter().cloned().map(HostPoly::Data).collect();
            let (p0, p1) = t
                .c64
                .dot_pair_seeded_key(&x64.iter().collect::<Vec<_>>(), &kb, &seeds, &limbs)
                .unwrap();
            let (q0, q1) = t
                .c32
                .dot_pair_seeded_key(&x32.iter().collect::<Vec<_>>(), &kb, &seeds, &limbs)
                .unwrap();
            t.same("dot_pair_seeded_key b", &p0, &q0);
            t.same("dot_pair_seeded_key a", &p1, &q1);
            let r = (
                t.c64.expand_seed(&seeds[0], &limbs, Kind::EvalKey).unwrap(),
                t.c32.expand_seed(&seeds[0], &limbs, Kind::EvalKey).unwrap(),
            );
            t.same("expand_seed", &r.0, &r.1);
        }
        // Transforms both ways.
        let (mut c64, mut c32) = t.load(&c(&mut rng));
        t.c64.ntt(&mut c64).unwrap();
        t.c32.ntt(&mut c32).unwrap();
        t.same("ntt", &c64, &c32);
        t.c64.intt(&mut a64.clone()).unwrap();
        let (mut i64_, mut i32_) = (a64.clone(), a32.clone());
        t.c64.intt(&mut i64_).unwrap();
        t.c32.intt(&mut i32_).unwrap();
        t.same("intt", &i64_, &i32_);
        // Automorphisms in both representations: rotations and conjugation.
        let (cf64, cf32) = t.load(&c(&mut rng));
        for g in [
            galois_element(1, n).unwrap(),
            galois_element(-5, n).unwrap(),
            conjugation_element(n).unwrap(),
        ] {
            let r = (
                t.c64.automorphism(&a64, g).unwrap(),
                t.c32.automorphism(&a32, g).unwrap(),
            );
            t.same("automorphism (evaluation)", &r.0, &r.1);
            let r = (
                t.c64.automorphism(&cf64, g).unwrap(),
                t.c32.automorphism(&cf32, g).unwrap(),
            );
            t.same("automorphism (coefficient)", &r.0, &r.1);
        }
        // Data movement.
        let keep: Vec<usize> = limbs
            .iter()
            .rev()
            .copied()
            .take(limbs.len().div_ceil(2))
            .collect();
        let r = (
            t.c64.select_limbs(&a64, &keep).unwrap(),
            t.c32.select_limbs(&a32, &keep).unwrap(),
        );
        t.same("select_limbs", &r.0, &r.1);
        // A run of leading limbs is a shared view: writing to it leaves the source as it was.
        let lead = &limbs[..limbs.len().div_ceil(2)];
        let sel = |t: &mut Pair, x: &(RnsPoly, tessera_backend::Poly32), l: &[usize]| {
            (
                t.c64.select_limbs(&x.0, l).unwrap(),
                t.c32.select_limbs(&x.1, l).unwrap(),
            )
        };
        let (a, b) = ((a64.clone(), a32.clone()), (b64.clone(), b32.clone()));
        let (mut v64, mut v32) = sel(&mut t, &a, lead);
        let (w64, w32) = sel(&mut t, &b, lead);
        t.c64.mul_acc(&mut v64, &w64, &w64).unwrap();
        t.c32.mul_acc(&mut v32, &w32, &w32).unwrap();
        t.same("mul_acc on a selected view", &v64, &v32);
        t.same("the view's source after a write", &a64, &a32);
        let r = sel(&mut t, &a, &limbs[limbs.len() / 2..]);
        let r = (t.c64.neg(&r.0).unwrap(), t.c32.neg(&r.1).unwrap());
        t.same("neg of a trailing view", &r.0, &r.1);
        let rest: Vec<usize> = all.iter().copied().filter(|i| !limbs.contains(i)).collect();
        if !rest.is_empty() {
            let (o64, o32) = t.load(&random(&ring, &rest, Representation::Evaluation, &mut rng));
            let r = (
                t.c64.concat(&[&a64, &o64], &all).unwrap(),
                t.c32.concat(&[&a32, &o32], &all).unwrap(),
            );
            t.same("concat", &r.0, &r.1);
        }
        // One limb extended to every limb (rescaling's lift), and BConv both modes.
        let (one64, one32) = t.load(&random(
            &ring,
            &limbs[..1],
            Representation::Coefficient,
            &mut rng,
        ));
        let r = (
            t.c64.extend_limb(&one64, &all).unwrap(),
            t.c32.extend_limb(&one32, &all).unwrap(),
        );
        t.same("extend_limb", &r.0, &r.1);
        if !rest.is_empty() {
            for mode in [ConversionMode::Approximate, ConversionMode::ExactCentered] {
                let r = (
                    t.c64.bconv(&cf64, &rest, mode).unwrap(),
                    t.c32.bconv(&cf32, &rest, mode).unwrap(),
                );
                t.same("bconv", &r.0, &r.1);
            }
        }
    }
}

#[test]
fn every_primary_equals_the_64_bit_backend() {
    for kernel in tessera_math::simd::kernels_for_tests("cpu32 backend") {
        for (n, count, seed) in [
            (1usize << 5, 3usize, 1u64),
            (1 << 10, 7, 2),
            (1 << 12, 10, 3),
        ] {
            check_ring(n, count, kernel, seed);
        }
    }
}

#[test]
fn refuses_primes_of_30_bits_or_more_and_bad_operands() {
    let n = 1 << 10;
    let p = tessera_math::primes::generate_ntt_primes(31, n, 1, &[]).unwrap();
    let small = generate_ntt_primes32(28, n, 1, &[]).unwrap()[0] as u64;
    let ring = RingContext::new(n, &[small, p[0]]).unwrap();
    let e = Cpu32Backend::new(ring.clone()).unwrap_err();
    assert!(
        matches!(&e, MathError::OutOfRange { value, allowed, .. } if *value == p[0].to_string() && allowed.contains("2^30")),
        "{e}"
    );
    assert!(!Cpu32Backend::supports(&ring));
    // Mismatched operands are typed errors, as on the 64-bit backend.
    let ring = self::ring(n, 3);
    let mut b = Cpu32Backend::new(ring.clone()).unwrap();
    let mut rng = Rng(5);
    let x = b
        .load(
            &random(&ring, &[0, 1], Representation::Evaluation, &mut rng),
            Kind::Ciphertext,
        )
        .unwrap();
    let y = b
        .load(
            &random(&ring, &[0, 2], Representation::Evaluation, &mut rng),
            Kind::Ciphertext,
        )
        .unwrap();
    let z = b
        .load(
            &random(&ring, &[0, 1], Representation::Coefficient, &mut rng),
            Kind::Ciphertext,
        )
        .unwrap();
    assert!(matches!(b.add(&x, &y), Err(MathError::LimbMismatch { .. })));
    assert!(matches!(
        b.mul(&z, &z),
        Err(MathError::RepresentationMismatch { .. })
    ));
    assert!(matches!(
        b.bconv(&x, &[2], ConversionMode::Approximate),
        Err(MathError::RepresentationMismatch { .. })
    ));
    assert!(matches!(
        b.mul_scalar(&x, &[1]),
        Err(MathError::LengthMismatch { .. })
    ));
    assert!(b.select_limbs(&x, &[2]).is_err());
    assert!(b.automorphism(&x, 2).is_err());
    let other = self::ring(n, 3);
    let foreign = random(&other, &[0], Representation::Evaluation, &mut rng);
    assert!(matches!(
        b.load(&foreign, Kind::Ciphertext),
        Err(MathError::RingMismatch { .. })
    ));
}

/// The generic conformance suite (crates/backend/src/conformance.rs) on every kernel: against
/// the CPU backend at every degree 2^4 ..= 2^12, and against the slow reference backend at the
/// small degrees. Rings with primes of 2^30 or more are refused, and the suite reports them
/// as skipped with the reason.
#[test]
fn conformance_suite_on_every_kernel() {
    use tessera_backend::conformance::{check, check_against, Config};
    use tessera_backend::ReferenceBackend;
    for kernel in tessera_math::simd::kernels_for_tests("cpu32 conformance") {
        for (cfg, reference) in [(Config::standard(), false), (Config::degrees(4..=7), true)] {
            let make = |r| Cpu32Backend::with_kernel(r, kernel);
            let s = if reference {
                check_against(ReferenceBackend::new, make, &cfg)
            } else {
                check(make, &cfg)
            }
            .unwrap_or_else(|f| panic!("kernel {}: {f}", kernel.name()));
            // Of each degree's three prime families, the 28-bit one runs; the 49- and
            // 60-bit ones are refused with the 2^30 bound named.
            let degrees = cfg.rings.len() / 3;
            assert_eq!(s.skipped.len(), 2 * degrees, "{:?}", s.skipped);
            assert!(
                s.skipped.iter().all(|(_, why)| why.contains("2^30")),
                "{:?}",
                s.skipped
            );
            assert!(s.checks > 0);
        }
    }
}
