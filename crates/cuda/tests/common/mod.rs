//! Checks shared by the emulator tests and the GPU tests: every device operation against the
//! CPU's `RnsPoly` on random inputs, bit for bit, over several ring degrees and limb sets.

use std::sync::Arc;
use tessera_cuda::{CudaError, Device, DevicePoly, DeviceRing};
use tessera_math::automorphism::{conjugation_element, galois_element};
use tessera_math::primes::generate_ntt_primes;
use tessera_math::sampling::{Seed, Xof};
use tessera_math::{ConversionMode, MathError, Representation, RingContext, RnsPoly};

/// A ring of degree `n` over 3 primes of 61 bits (near the 62-bit limit, where Barrett and
/// Shoup bounds are tightest), 2 of 50, 2 of 36 and 1 of 20 bits.
pub fn ring(n: usize) -> Arc<RingContext> {
    let mut primes = generate_ntt_primes(61, n, 3, &[]).unwrap();
    for (bits, count) in [(50, 2), (36, 2), (20, 1)] {
        primes.extend(generate_ntt_primes(bits, n, count, &primes).unwrap());
    }
    RingContext::new(n, &primes).unwrap()
}

/// A ring of degree `n` whose primes all fit 32-bit words (below 2^30): 3 primes of 30 bits
/// (the top of the range, where the 32-bit lazy NTT's `4q` bound is tightest), 2 of 25, 2 of
/// 23 and 1 of 22 bits (up to N = 2^16). The device ring runs it with the `_w32` kernels.
pub fn ring32(n: usize) -> Arc<RingContext> {
    let mut primes = generate_ntt_primes(30, n, 3, &[]).unwrap();
    for (bits, count) in [(25, 2), (23, 2), (22, 1)] {
        primes.extend(generate_ntt_primes(bits, n, count, &primes).unwrap());
    }
    RingContext::new(n, &primes).unwrap()
}

/// Uniform residues over `limbs` from a deterministic stream labelled `tag`.
pub fn random(ring: &Arc<RingContext>, limbs: &[usize], repr: Representation, tag: u8) -> RnsPoly {
    let mut xof = Xof::new(&Seed([tag; 32]), b"tessera-cuda test");
    let n = ring.n();
    let mut data = Vec::with_capacity(limbs.len() * n);
    for &i in limbs {
        let q = ring.moduli()[i].value();
        // Mix in the extreme residues 0, 1, q - 1 where carries and reductions go wrong.
        data.extend((0..n).map(|k| match k % 97 {
            0 => 0,
            1 => q - 1,
            2 => 1,
            _ => xof.below(q),
        }));
    }
    RnsPoly::from_data(ring, limbs, data, repr).unwrap()
}

/// Limb sets to test: all, a prefix, a scattered subset, one limb.
pub fn limb_sets(ring: &RingContext) -> Vec<Vec<usize>> {
    let l = ring.moduli().len();
    vec![(0..l).collect(), vec![0, 1, 2], vec![7, 2, 4], vec![5]]
}

/// Every operation of `dr` against `RnsPoly` on one ring, in 64-bit words, or in 32-bit
/// words where the ring's primes fit them (then also in 64-bit words: both layouts of the
/// same ring give the CPU's words).
pub fn check_ring(dev: &Arc<Device>, ring: &Arc<RingContext>) {
    let dr = DeviceRing::new(dev, ring).unwrap();
    check_ring_words(&dr, ring);
    if dr.word_bits() == 32 {
        check_ring_words(&DeviceRing::with_words(dev, ring, false).unwrap(), ring);
    }
}

fn check_ring_words(dr: &DeviceRing, ring: &Arc<RingContext>) {
    let n = ring.n();
    for limbs in limb_sets(ring) {
        let ctx = format!("n = {n}, limbs {limbs:?}");
        let ca = random(ring, &limbs, Representation::Coefficient, 1);
        let ea = random(ring, &limbs, Representation::Evaluation, 2);
        let eb = random(ring, &limbs, Representation::Evaluation, 3);
        let ec = random(ring, &limbs, Representation::Evaluation, 4);
        let (dca, dea, deb, dec) = (
            dr.upload(&ca).unwrap(),
            dr.upload(&ea).unwrap(),
            dr.upload(&eb).unwrap(),
            dr.upload(&ec).unwrap(),
        );
        assert_eq!(dr.download(&dea).unwrap(), ea, "round trip, {ctx}");

        // NTT and INTT.
        let mut want = ca.clone();
        want.ntt().unwrap();
        let mut got = dca.clone();
        dr.ntt(&mut got).unwrap();
        assert_eq!(dr.download(&got).unwrap(), want, "NTT, {ctx}");
        assert_eq!(
            dr.download(&dca).unwrap(),
            ca,
            "NTT left a clone alone, {ctx}"
        );
        let mut want = ea.clone();
        want.intt().unwrap();
        let mut got = dea.clone();
        dr.intt(&mut got).unwrap();
        assert_eq!(dr.download(&got).unwrap(), want, "INTT, {ctx}");

        // Element-wise.
        let mut w = ea.clone();
        w.add_assign(&eb).unwrap();
        assert_eq!(
            dr.download(&dr.add(&dea, &deb).unwrap()).unwrap(),
            w,
            "add, {ctx}"
        );
        let mut w = ea.clone();
        w.sub_assign(&eb).unwrap();
        assert_eq!(
            dr.download(&dr.sub(&dea, &deb).unwrap()).unwrap(),
            w,
            "sub, {ctx}"
        );
        let mut w = ca.clone();
        w.neg_assign();
        assert_eq!(
            dr.download(&dr.neg(&dca).unwrap()).unwrap(),
            w,
            "neg, {ctx}"
        );
        let mut w = ea.clone();
        w.mul_assign(&eb).unwrap();
        assert_eq!(
            dr.download(&dr.mul(&dea, &deb).unwrap()).unwrap(),
            w,
            "mul, {ctx}"
        );
        let mut w = ec.clone();
        w.mul_acc(&ea, &eb).unwrap();
        let mut got = dec.clone();
        dr.mul_acc(&mut got, &dea, &deb).unwrap();
        assert_eq!(dr.download(&got).unwrap(), w, "mul_acc, {ctx}");
        let w = RnsPoly::dot(&[&ea, &eb, &ec], &[&eb, &ec, &ea]).unwrap();
        let got = dr.dot(&[&dea, &deb, &dec], &[&deb, &dec, &dea]).unwrap();
        assert_eq!(dr.download(&got).unwrap(), w, "dot, {ctx}");
        // Eleven terms: two launches of the eight-operand kernel, the second accumulating.
        let (hs, ds) = ([&ea, &eb, &ec], [&dea, &deb, &dec]);
        let ha: Vec<&RnsPoly> = (0..11).map(|t| hs[t % 3]).collect();
        let hb: Vec<&RnsPoly> = (0..11).map(|t| hs[(t / 3 + t) % 3]).collect();
        let da: Vec<&DevicePoly> = (0..11).map(|t| ds[t % 3]).collect();
        let db: Vec<&DevicePoly> = (0..11).map(|t| ds[(t / 3 + t) % 3]).collect();
        let w = RnsPoly::dot(&ha, &hb).unwrap();
        assert_eq!(
            dr.download(&dr.dot(&da, &db).unwrap()).unwrap(),
            w,
            "dot of 11, {ctx}"
        );
        let c: Vec<u64> = (0..limbs.len() as u64)
            .map(|k| u64::MAX - 977 * k)
            .collect();
        let mut w = ea.clone();
        w.add_scalar_limbs(&c).unwrap();
        assert_eq!(
            dr.download(&dr.add_scalar(&dea, &c).unwrap()).unwrap(),
            w,
            "add_scalar, {ctx}"
        );
        let mut w = ca.clone();
        w.mul_scalar_limbs(&c).unwrap();
        assert_eq!(
            dr.download(&dr.mul_scalar(&dca, &c).unwrap()).unwrap(),
            w,
            "mul_scalar, {ctx}"
        );

        // Automorphisms in both representations.
        for g in [
            galois_element(1, n).unwrap(),
            galois_element(-3, n).unwrap(),
            conjugation_element(n).unwrap(),
        ] {
            for (h, d) in [(&ca, &dca), (&ea, &dea)] {
                let w = h.automorphism(g).unwrap();
                let got = dr.download(&dr.automorphism(d, g).unwrap()).unwrap();
                assert_eq!(got, w, "automorphism {g}, {ctx}");
            }
        }

        // Limb movement.
        let keep: Vec<usize> = limbs.iter().rev().step_by(2).copied().collect();
        let w = ca.select_limbs(&keep).unwrap();
        assert_eq!(
            dr.download(&dr.select_limbs(&dca, &keep).unwrap()).unwrap(),
            w,
            "select, {ctx}"
        );
        let other: Vec<usize> = (0..ring.moduli().len())
            .filter(|i| !limbs.contains(i))
            .collect();
        if !other.is_empty() {
            let co = random(ring, &other, Representation::Coefficient, 5);
            let all: Vec<usize> = other.iter().chain(&limbs).rev().copied().collect();
            let w = RnsPoly::concat(&[&ca, &co], &all).unwrap();
            let got = dr.concat(&[&dca, &dr.upload(&co).unwrap()], &all).unwrap();
            assert_eq!(dr.download(&got).unwrap(), w, "concat, {ctx}");

            // BConv in both modes, to the other limbs.
            for mode in [ConversionMode::Approximate, ConversionMode::ExactCentered] {
                let w = ca.bconv(&other, mode).unwrap();
                let got = dr.download(&dr.bconv(&dca, &other, mode).unwrap()).unwrap();
                assert_eq!(got, w, "bconv {mode:?}, {ctx}");
            }
        }

        // Extending one limb.
        let one = ca.select_limbs(&limbs[..1]).unwrap();
        let to: Vec<usize> = (0..ring.moduli().len()).collect();
        let w = one.extend_limb(&to).unwrap();
        let got = dr.extend_limb(&dr.upload(&one).unwrap(), &to).unwrap();
        assert_eq!(dr.download(&got).unwrap(), w, "extend_limb, {ctx}");

        // Seed expansion.
        let seed = Seed([9; 32]);
        let w = RnsPoly::expand_seed(ring, &limbs, &seed).unwrap();
        assert_eq!(
            dr.download(&dr.expand_seed(&seed, &limbs).unwrap())
                .unwrap(),
            w,
            "expand_seed, {ctx}"
        );
    }
}

/// Operand errors are the CPU's typed errors, not panics.
pub fn check_errors(dev: &Arc<Device>) {
    let r = ring(16);
    let dr = DeviceRing::new(dev, &r).unwrap();
    let a = dr
        .upload(&random(&r, &[0, 1], Representation::Evaluation, 1))
        .unwrap();
    let b = dr
        .upload(&random(&r, &[0, 2], Representation::Evaluation, 2))
        .unwrap();
    let c = dr
        .upload(&random(&r, &[0, 1], Representation::Coefficient, 3))
        .unwrap();
    assert!(matches!(
        dr.add(&a, &b),
        Err(CudaError::Math(MathError::LimbMismatch { .. }))
    ));
    assert!(matches!(
        dr.mul(&a, &c),
        Err(CudaError::Math(MathError::RepresentationMismatch { .. }))
    ));
    assert!(matches!(
        dr.bconv(&a, &[3], ConversionMode::Approximate),
        Err(CudaError::Math(MathError::RepresentationMismatch { .. }))
    ));
    assert!(matches!(
        dr.automorphism(&c, 4),
        Err(CudaError::Math(MathError::OutOfRange { .. }))
    ));
    assert!(matches!(
        dr.mul_scalar(&a, &[1]),
        Err(CudaError::Math(MathError::LengthMismatch { .. }))
    ));
    assert!(matches!(
        dr.select_limbs(&a, &[5]),
        Err(CudaError::Math(MathError::LimbMismatch { .. }))
    ));
    assert!(matches!(
        dr.expand_seed(&Seed([0; 32]), &[0, 0]),
        Err(CudaError::Math(MathError::OutOfRange { .. }))
    ));
    let other = ring(16);
    let foreign = random(&other, &[0], Representation::Evaluation, 1);
    assert!(matches!(
        dr.upload(&foreign),
        Err(CudaError::Math(MathError::RingMismatch { .. }))
    ));
}

/// Memory accounting: allocations are counted and freed, the peak is kept, an allocation over
/// the limit is `OutOfMemory`, and keys are uploaded once.
pub fn check_memory(dev: &Arc<Device>) {
    // 32-bit words take half the bytes.
    let r32 = ring32(64);
    let dr32 = DeviceRing::new(dev, &r32).unwrap();
    assert_eq!(dr32.word_bits(), 32);
    let base = dev.bytes_in_use();
    let h32 = random(&r32, &[0, 1, 2], Representation::Evaluation, 1);
    let p32 = dr32.upload(&h32).unwrap();
    assert_eq!(dev.bytes_in_use(), base + 3 * 64 * 4);
    assert_eq!(dr32.download(&p32).unwrap(), h32);
    drop(p32);
    // A ring with a prime of 30 bits or more is refused 32-bit words, with the prime named.
    let e = DeviceRing::with_words(dev, &ring(64), true).unwrap_err();
    assert!(e.to_string().contains("not below 2^30"), "{e}");

    let r = ring(64);
    let dr = DeviceRing::new(dev, &r).unwrap();
    assert_eq!(dr.word_bits(), 64);
    let base = dev.bytes_in_use();
    let h = random(&r, &[0, 1, 2], Representation::Evaluation, 1);
    let p = dr.upload(&h).unwrap();
    assert_eq!(dev.bytes_in_use(), base + 3 * 64 * 8);
    drop(p);
    assert_eq!(dev.bytes_in_use(), base);
    assert!(dev.peak_bytes() >= base + 3 * 64 * 8);

    // Keys: the second load of the same host object is a cache hit sharing the device copy.
    let k1 = dr.upload_cached(&h).unwrap();
    let in_use = dev.bytes_in_use();
    let k2 = dr.upload_cached(&h.clone()).unwrap();
    assert_eq!(
        dev.bytes_in_use(),
        in_use,
        "a cached key is not uploaded again"
    );
    assert_eq!(dr.cache_stats().0, 1);
    assert_eq!(dr.download(&k2).unwrap(), dr.download(&k1).unwrap());
    let mut changed = h.clone();
    changed.neg_assign(); // copy-on-write: a new host buffer, so a new cache entry
    let k3 = dr.upload_cached(&changed).unwrap();
    assert_eq!(dr.download(&k3).unwrap(), changed);

    // Out of memory: a typed error, and nothing leaks.
    let old = dev.memory_limit();
    dev.set_memory_limit(dev.bytes_in_use() + 1000);
    let before = dev.bytes_in_use();
    let err = dr.upload(&random(&r, &[0, 1, 2, 3], Representation::Coefficient, 2));
    assert!(matches!(err, Err(CudaError::OutOfMemory { .. })), "{err:?}");
    assert_eq!(dev.bytes_in_use(), before);
    let e = MathError::from(err.unwrap_err());
    assert!(e.to_string().contains("out of memory"), "{e}");
    dev.set_memory_limit(old);
}
