//! Serialisation: round trips, and malformed bytes as errors (never panics), with a
//! mutation fuzzer whose budget is `TESSERA_FUZZ_SECS` (default 3 s in CI).

use std::time::{Duration, Instant};
use tessera_backend::CpuBackend;
use tessera_ckks::serialize::*;
use tessera_ckks::*;
use tessera_math::sampling::Seed;

fn setup() -> (
    std::sync::Arc<CkksContext>,
    SecretKey,
    PublicKey,
    EvaluationKeys,
    Ciphertext<tessera_math::RnsPoly>,
) {
    let ctx = CkksContext::new(Parameters::preset("test-small").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([8; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    let keys = kg.evaluation_keys(&sk, &[1], false).unwrap();
    let pt = ctx
        .encode_real(&[0.5, -0.5, 0.25, 1.0], 4, 2, ctx.params().default_scale())
        .unwrap();
    let ct = kg.encrypt_pk(&pt, &pk).unwrap();
    (ctx, sk, pk, keys, ct)
}

#[test]
fn round_trips_equal_the_originals() {
    let (ctx, sk, pk, keys, ct) = setup();
    let back = ciphertext_from_bytes(&ciphertext_to_bytes(&ct, &ctx), &ctx).unwrap();
    assert_eq!(
        (
            back.c0 == ct.c0,
            back.c1 == ct.c1,
            back.level,
            back.scale,
            back.slots
        ),
        (true, true, ct.level, ct.scale, ct.slots)
    );
    let pk2 = public_key_from_bytes(&public_key_to_bytes(&pk, &ctx), &ctx).unwrap();
    assert_eq!(
        public_key_to_bytes(&pk2, &ctx),
        public_key_to_bytes(&pk, &ctx)
    );
    let sk2 = secret_key_from_bytes(&secret_key_to_bytes(&sk, &ctx), &ctx).unwrap();
    assert!(sk2.poly() == sk.poly());
    let rk = &keys.galois[&5];
    let rk2 = switching_key_from_bytes(&switching_key_to_bytes(rk, &ctx), &ctx).unwrap();
    assert_eq!(
        switching_key_to_bytes(&rk2, &ctx),
        switching_key_to_bytes(rk, &ctx)
    );
    // The deserialised key works: rotate with it and decrypt.
    let mut ks = EvaluationKeys::default();
    ks.galois.insert(5, rk2);
    let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
    let x = ev.load(&back).unwrap();
    let r = ev.rotate(&x, 1, &ks).unwrap();
    let y = ev.store(&r).unwrap();
    let got = ctx.decode(&decrypt(&y, &sk2).unwrap()).unwrap();
    for (g, w) in got.iter().zip([-0.5, 0.25, 1.0, 0.5]) {
        assert!((g.re - w).abs() < 1e-4, "{g} vs {w}");
    }
}

#[test]
fn malformed_bytes_are_errors() {
    let (ctx, _, _, _, ct) = setup();
    let bytes = ciphertext_to_bytes(&ct, &ctx);
    // Every truncation.
    for len in (0..bytes.len()).step_by(97) {
        assert!(ciphertext_from_bytes(&bytes[..len], &ctx).is_err());
    }
    // Corruption is caught by the checksum.
    let mut bad = bytes.clone();
    bad[100] ^= 1;
    let e = ciphertext_from_bytes(&bad, &ctx).unwrap_err().to_string();
    assert!(e.contains("checksum"), "{e}");
    // Other parameters, other object types, other versions.
    let other = CkksContext::new(Parameters::preset("test-medium").unwrap()).unwrap();
    assert!(ciphertext_from_bytes(&bytes, &other)
        .unwrap_err()
        .to_string()
        .contains("other parameters"));
    assert!(public_key_from_bytes(&bytes, &ctx)
        .unwrap_err()
        .to_string()
        .contains("object type"));
    // Versions 1 and 2 (before the plan and the key-set identity) and a future version 4.
    for version in [1u8, 2, 4] {
        let mut other_version = bytes.clone();
        other_version[4] = version;
        assert!(ciphertext_from_bytes(&other_version, &ctx)
            .unwrap_err()
            .to_string()
            .contains("version"));
    }
    let mut v2 = bytes.clone();
    v2[4] = 9;
    assert!(ciphertext_from_bytes(&v2, &ctx)
        .unwrap_err()
        .to_string()
        .contains("version"));
    assert!(ciphertext_from_bytes(
        b"not a tessera object at all, but long enough to be read as one: ........",
        &ctx
    )
    .is_err());
}

/// Byte offsets of the version 3 header and the ciphertext payload.
const RESERVED: usize = 7;
const KEY_SET: usize = 40;
const PAYLOAD: usize = 56;

/// Issue 24 item 3: what a hostile file with a recomputed checksum can no longer slip past.
#[test]
fn resealed_edits_are_refused() {
    let (ctx, sk, pk, keys, ct) = setup();
    let bytes = ciphertext_to_bytes(&ct, &ctx);
    let refuse = |b: Vec<u8>, needle: &str| {
        let e = ciphertext_from_bytes(&reseal(b), &ctx)
            .unwrap_err()
            .to_string();
        assert!(e.contains(needle), "expected '{needle}' in: {e}");
    };
    // A non-zero reserved byte.
    let mut b = bytes.clone();
    b[RESERVED] = 1;
    refuse(b, "reserved");
    // A scale at or above Q_level (level 2 of test-small: about 2^117).
    for scale in [2f64.powi(200), 2f64.powi(117), f64::INFINITY, 0.5] {
        let mut b = bytes.clone();
        b[PAYLOAD + 4..PAYLOAD + 12].copy_from_slice(&scale.to_le_bytes());
        refuse(b, "scale");
    }
    // Slot counts that are not a power of two up to N/2.
    for slots in [0u32, 3, 1024] {
        let mut b = bytes.clone();
        b[PAYLOAD + 12..PAYLOAD + 16].copy_from_slice(&slots.to_le_bytes());
        refuse(b, "slots");
    }
    // c0 tagged as coefficient form (tag 0) or an unknown tag.
    for tag in [0u8, 2] {
        let mut b = bytes.clone();
        b[PAYLOAD + 16] = tag;
        refuse(b, "representation");
    }
    // The same for a public key and a switching key.
    let mut b = public_key_to_bytes(&pk, &ctx);
    b[PAYLOAD] = 0;
    assert!(public_key_from_bytes(&reseal(b), &ctx)
        .unwrap_err()
        .to_string()
        .contains("representation"));
    let rk = keys.relin.as_ref().unwrap();
    let mut b = switching_key_to_bytes(rk, &ctx);
    b[7] = 0x80;
    assert!(switching_key_from_bytes(&reseal(b), &ctx)
        .unwrap_err()
        .to_string()
        .contains("reserved"));
    // A secret key: zero, not ternary, or with an edited key-set identity.
    let good = secret_key_to_bytes(&sk, &ctx);
    let n = ctx.params().n();
    let limbs = ctx.ring().moduli().len();
    let words = PAYLOAD + 1 + 2 + 2 * limbs;
    let mut zero = good.clone();
    zero[words..words + 8 * n * limbs].fill(0);
    let e = secret_key_from_bytes(&reseal(zero), &ctx)
        .unwrap_err()
        .to_string();
    assert!(e.contains("zero"), "{e}");
    let mut big = good.clone();
    big[words..words + 8].copy_from_slice(&12345u64.to_le_bytes());
    let e = secret_key_from_bytes(&reseal(big), &ctx)
        .unwrap_err()
        .to_string();
    assert!(e.contains("-1, 0, 1") || e.contains("differs"), "{e}");
    let mut other_id = good.clone();
    other_id[KEY_SET] ^= 1;
    let e = secret_key_from_bytes(&reseal(other_id), &ctx)
        .unwrap_err()
        .to_string();
    assert!(e.contains("identity"), "{e}");
    assert!(secret_key_from_bytes(&good, &ctx).is_ok());
}

/// Issue 24 item 3: objects of two key generations of the same preset are errors together,
/// before and after serialisation, instead of decrypting to noise.
#[test]
fn objects_of_another_key_generation_are_refused() {
    let (ctx, sk, _, keys, ct) = setup();
    let mut kg2 = KeyGenerator::from_seed(&ctx, &Seed([9; 32])).unwrap();
    let sk2 = kg2.secret_key().unwrap();
    assert_ne!(sk.key_set(), sk2.key_set());
    let keys2 = kg2.evaluation_keys(&sk2, &[1], false).unwrap();
    let pk2 = kg2.public_key(&sk2).unwrap();
    let ct2 = kg2
        .encrypt_pk(&ctx.encode_real(&[0.5], 4, 2, ct.scale).unwrap(), &pk2)
        .unwrap();
    // Through bytes: the identity survives the round trip.
    let back = ciphertext_from_bytes(&ciphertext_to_bytes(&ct, &ctx), &ctx).unwrap();
    assert_eq!(back.key_set, sk.key_set());
    let sk_back = secret_key_from_bytes(&secret_key_to_bytes(&sk, &ctx), &ctx).unwrap();
    assert_eq!(sk_back.key_set(), sk.key_set());
    let rk2 =
        switching_key_from_bytes(&switching_key_to_bytes(&keys2.galois[&5], &ctx), &ctx).unwrap();
    assert_eq!(rk2.key_set(), sk2.key_set());
    let is_mismatch = |e: CkksError| matches!(e, CkksError::KeySetMismatch { .. });
    assert!(is_mismatch(decrypt(&back, &sk2).unwrap_err()));
    let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
    let (a, b) = (ev.load(&back).unwrap(), ev.load(&ct2).unwrap());
    assert!(is_mismatch(ev.add(&a, &b).unwrap_err()));
    assert!(is_mismatch(ev.mul_relin(&a, &b, &keys).unwrap_err()));
    assert!(is_mismatch(ev.mul_relin(&a, &a, &keys2).unwrap_err()));
    assert!(is_mismatch(ev.rotate(&a, 1, &keys2).unwrap_err()));
    assert!(is_mismatch(ev.switch_key(&a, &rk2).unwrap_err()));
    assert!(is_mismatch(
        ev.rotate_hoisted(&a, &[1], &keys2).unwrap_err()
    ));
    // The matching key set works.
    assert!(ev.rotate(&a, 1, &keys).is_ok());
    assert!(decrypt(&ev.store(&b).unwrap(), &sk2).is_ok());
}

/// Re-seals mutated bytes with a valid checksum so that the mutation reaches the parser.
fn reseal(mut body: Vec<u8>) -> Vec<u8> {
    if body.len() >= 32 {
        body.truncate(body.len() - 32);
    }
    let sum = blake3::hash(&body);
    body.extend_from_slice(sum.as_bytes());
    body
}

#[test]
fn fuzz_deserialisers() {
    let (ctx, _, pk, keys, ct) = setup();
    let sk = KeyGenerator::from_seed(&ctx, &Seed([3; 32]))
        .unwrap()
        .secret_key()
        .unwrap();
    let seeds = [
        ciphertext_to_bytes(&ct, &ctx),
        public_key_to_bytes(&pk, &ctx),
        switching_key_to_bytes(keys.relin.as_ref().unwrap(), &ctx),
        secret_key_to_bytes(&sk, &ctx),
    ];
    let secs: u64 = std::env::var("TESSERA_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut runs, mut accepted) = (0u64, 0u64);
    while Instant::now() < deadline {
        let mut m = seeds[(next() % 4) as usize].clone();
        for _ in 0..1 + next() % 4 {
            let pos = (next() as usize) % m.len();
            match next() % 5 {
                0 => m[pos] ^= 1 << (next() % 8),
                1 => m[pos] = next() as u8,
                2 => m.truncate(pos.max(1)),
                3 => m.insert(pos, next() as u8),
                // Header-aimed: limb counts, indices, level, repr tags live early.
                _ => {
                    let p = 40 + (next() as usize) % 40;
                    if p < m.len() {
                        m[p] = next() as u8;
                    }
                }
            }
        }
        let m = if next() % 4 == 0 { m } else { reseal(m) };
        // Must return, never panic.
        accepted += ciphertext_from_bytes(&m, &ctx).is_ok() as u64;
        accepted += public_key_from_bytes(&m, &ctx).is_ok() as u64;
        accepted += switching_key_from_bytes(&m, &ctx).is_ok() as u64;
        accepted += secret_key_from_bytes(&m, &ctx).is_ok() as u64;
        runs += 1;
    }
    eprintln!("fuzzed {runs} mutants for {secs} s; {accepted} parsed as valid objects");
    assert!(runs > 0);
}
