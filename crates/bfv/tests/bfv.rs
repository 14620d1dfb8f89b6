//! BFV against slow references (schoolbook negacyclic products over big integers) and
//! homomorphic results against the clear.

use num_bigint::BigInt;
use proptest::prelude::*;
use tessera_bfv::reference;
use tessera_bfv::*;
use tessera_math::sampling::Seed;
use tessera_math::wide::negacyclic_schoolbook;

struct Setup {
    bfv: Bfv,
    sk: SecretKey,
    pk: PublicKey,
    rk: RelinKey,
    enc: BatchEncoder,
}

fn setup(p: &BfvParams) -> Setup {
    let bfv = Bfv::new(p).unwrap();
    let kg = KeyGenerator::new(&bfv, Seed([42; 32]));
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    let rk = kg.relin_key(&sk).unwrap();
    let enc = BatchEncoder::new(&bfv).unwrap();
    Setup {
        bfv,
        sk,
        pk,
        rk,
        enc,
    }
}

fn values(n: usize, t: u64, seed: u64) -> Vec<u64> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s % t
        })
        .collect()
}

fn two_tower_small() -> BfvParams {
    // Insecure (n = 64): the two-tower code path at a size the schoolbook reference affords.
    BfvParams::new(64, 2, 65537).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Slot-wise products are negacyclic products mod t (the schoolbook reference).
    #[test]
    fn batching_is_a_ring_isomorphism(seed in any::<u64>()) {
        let s = setup(&BfvParams::preset("test-bfv").unwrap());
        let t = s.bfv.params().t;
        let (x, y) = (values(64, t, seed), values(64, t, seed ^ 0xabc));
        let (px, py) = (s.enc.encode(&x).unwrap(), s.enc.encode(&y).unwrap());
        prop_assert_eq!(s.enc.decode(&px), x.clone());
        let a: Vec<u128> = px.coeffs().iter().map(|&c| c as u128).collect();
        let b: Vec<u128> = py.coeffs().iter().map(|&c| c as u128).collect();
        let prod: Vec<u64> = negacyclic_schoolbook(&a, &b, t as u128).into_iter().map(|c| c as u64).collect();
        let want: Vec<u64> = x.iter().zip(&y).map(|(a, b)| a * b % t).collect();
        let pw = s.enc.encode(&want).unwrap();
        prop_assert_eq!(pw.coeffs(), &prod[..]);
    }

    /// The exact tensor product equals the big-integer reference bit for bit, and relinearising
    /// it changes nothing that decrypts; one and two towers.
    #[test]
    fn mul_matches_the_schoolbook_reference(seed in any::<u64>(), two in any::<bool>()) {
        let p = if two { two_tower_small() } else { BfvParams::preset("test-bfv").unwrap() };
        let s = setup(&p);
        let t = p.t;
        let mut e = Encryptor::new(&s.bfv, &s.pk, Seed([seed as u8; 32]));
        let (x, y) = (values(64, t, seed), values(64, t, seed ^ 0x5555));
        let a = e.encrypt(&s.enc.encode(&x).unwrap()).unwrap();
        let b = e.encrypt(&s.enc.encode(&y).unwrap()).unwrap();
        let c = s.bfv.mul(&a, &b).unwrap();
        prop_assert_eq!(&c, &reference::mul(&s.bfv, &a, &b).unwrap());
        let want: Vec<u64> = x.iter().zip(&y).map(|(a, b)| a * b % t).collect();
        let dec = Decryptor::new(&s.bfv, &s.sk);
        prop_assert_eq!(reference::decrypt(&s.bfv, &c, s.sk.coeffs()), dec.decrypt(&c).unwrap().coeffs().to_vec());
        prop_assert_eq!(s.enc.decode(&dec.decrypt(&c).unwrap()), want.clone());
        let r = s.bfv.relinearize(&c, &s.rk).unwrap();
        prop_assert_eq!(r.size(), 2);
        prop_assert_eq!(s.enc.decode(&dec.decrypt(&r).unwrap()), want);
    }

    /// Plaintext and constant products against the schoolbook reference and the clear.
    #[test]
    fn plain_products_match_the_reference(seed in any::<u64>(), k in -40000i64..40000) {
        let s = setup(&BfvParams::preset("test-bfv").unwrap());
        let t = s.bfv.params().t;
        let mut e = Encryptor::new(&s.bfv, &s.pk, Seed([seed as u8 ^ 1; 32]));
        let (x, y) = (values(64, t, seed), values(64, t, !seed));
        let a = e.encrypt(&s.enc.encode(&x).unwrap()).unwrap();
        let py = s.enc.encode(&y).unwrap();
        let c = s.bfv.mul_plain(&a, &py).unwrap();
        prop_assert_eq!(&c, &reference::mul_plain(&s.bfv, &a, &py).unwrap());
        let dec = Decryptor::new(&s.bfv, &s.sk);
        let want: Vec<u64> = x.iter().zip(&y).map(|(a, b)| a * b % t).collect();
        prop_assert_eq!(s.enc.decode(&dec.decrypt(&c).unwrap()), want);
        let c = s.bfv.mul_scalar(&a, k).unwrap();
        let kk = k.rem_euclid(t as i64) as u64;
        let want: Vec<u64> = x.iter().map(|a| a * kk % t).collect();
        prop_assert_eq!(s.enc.decode(&dec.decrypt(&c).unwrap()), want);
        let c = s.bfv.add_plain(&s.bfv.sub(&a, &a).unwrap(), &py).unwrap();
        prop_assert_eq!(s.enc.decode(&dec.decrypt(&c).unwrap()), y);
    }
}

/// Fresh encryptions decrypt (reference and fast path agree) with noise under the worst-case
/// bound, at the secure n = 2^12 set.
#[test]
fn encryption_at_n12_and_fresh_noise_bound() {
    let p = BfvParams::preset("bfv-n12").unwrap();
    let s = setup(&p);
    let mut e = Encryptor::new(&s.bfv, &s.pk, Seed([3; 32]));
    let x = values(p.n, p.t, 99);
    let ct = e.encrypt(&s.enc.encode(&x).unwrap()).unwrap();
    let dec = Decryptor::new(&s.bfv, &s.sk);
    assert_eq!(s.enc.decode(&dec.decrypt(&ct).unwrap()), x);
    let noise = dec.noise(&ct).unwrap();
    let bound = fresh_noise_bound(&s.bfv);
    assert!(noise <= bound, "{noise} > {bound}");
    let budget = dec.noise_budget(&ct).unwrap();
    eprintln!(
        "bfv-n12 fresh: noise 2^{:.1} (bound 2^{:.1}), budget {budget:.1} bits",
        tessera_bfv::crypt::log2(&noise),
        tessera_bfv::crypt::log2(&bound)
    );
    assert!(budget > 60.0);
}

/// CryptoNets' depth in the clear and encrypted at n = 2^12: a weighted sum of 25 inputs,
/// a square, a weighted sum, a square, a weighted sum (two ct x ct levels), slot values kept
/// below t/2 so the integer result is exact. The noise budget stays positive throughout.
#[test]
fn cryptonets_depth_at_n12() {
    let p = BfvParams::preset("bfv-n12").unwrap();
    let s = setup(&p);
    let (b, dec) = (&s.bfv, Decryptor::new(&s.bfv, &s.sk));
    let mut e = Encryptor::new(b, &s.pk, Seed([4; 32]));
    let n = 64; // slots used (images); the rest are zero
    let xs: Vec<Vec<i64>> = (0..25)
        .map(|j| {
            values(n, 3, j as u64 + 1)
                .into_iter()
                .map(|v| v as i64)
                .collect()
        })
        .collect();
    let cts: Vec<Ciphertext> = xs
        .iter()
        .map(|x| e.encrypt(&s.enc.encode_signed(x).unwrap()).unwrap())
        .collect();
    let w: Vec<i64> = (0..25).map(|j| (j % 5) as i64 - 2).collect();
    let mut acc = b.mul_scalar(&cts[0], w[0]).unwrap();
    for j in 1..25 {
        acc = b.add(&acc, &b.mul_scalar(&cts[j], w[j]).unwrap()).unwrap();
    }
    let sq = b.mul_relin(&acc, &acc, &s.rk).unwrap();
    let budget1 = dec.noise_budget(&sq).unwrap();
    let lin = b
        .add(
            &b.mul_scalar(&sq, 3).unwrap(),
            &b.mul_scalar(&sq, -1).unwrap(),
        )
        .unwrap();
    let sq2 = b.mul_relin(&lin, &lin, &s.rk).unwrap();
    let out = b.mul_scalar(&sq2, 2).unwrap();
    let budget2 = dec.noise_budget(&out).unwrap();
    // The clear computation over the integers, then centred mod t (the values exceed t/2:
    // BFV computes mod t exactly).
    let t = p.t as i128;
    let clear: Vec<i64> = (0..n)
        .map(|i| {
            let a: i128 = (0..25).map(|j| (w[j] * xs[j][i]) as i128).sum();
            let l = 2 * a * a;
            let v = (2 * l * l).rem_euclid(t);
            (if v > t / 2 { v - t } else { v }) as i64
        })
        .collect();
    let got = s.enc.decode_signed(&dec.decrypt(&out).unwrap());
    assert_eq!(&got[..n], &clear[..]);
    assert!(got[n..].iter().all(|&v| v == 0));
    eprintln!("bfv-n12 depth 2: budget {budget1:.1} bits after one square, {budget2:.1} after two");
    assert!(budget2 > 0.0);
}

/// Two towers at the secure n = 2^13: a product with relinearisation against the clear.
#[test]
fn two_towers_at_n13() {
    let p = BfvParams::preset("bfv-n13").unwrap();
    let s = setup(&p);
    let mut e = Encryptor::new(&s.bfv, &s.pk, Seed([5; 32]));
    let (x, y) = (values(p.n, p.t, 7), values(p.n, p.t, 8));
    let a = e.encrypt(&s.enc.encode(&x).unwrap()).unwrap();
    let b = e.encrypt(&s.enc.encode(&y).unwrap()).unwrap();
    let c = s.bfv.mul_relin(&a, &b, &s.rk).unwrap();
    let dec = Decryptor::new(&s.bfv, &s.sk);
    let want: Vec<u64> = x.iter().zip(&y).map(|(a, b)| a * b % p.t).collect();
    assert_eq!(s.enc.decode(&dec.decrypt(&c).unwrap()), want);
    let budget = dec.noise_budget(&c).unwrap();
    eprintln!("bfv-n13 one product: budget {budget:.1} bits");
    assert!(budget > 100.0);
}

/// The recorded stream of one multiplication is Algorithm 3 on every basis prime, and
/// counts follow the op mix.
#[test]
fn recorded_streams_follow_algorithm_3() {
    use tessera_backend::trace::Op;
    let p = BfvParams::preset("bfv-n12").unwrap();
    let mix = OpMix {
        ct_ct_mul: 1,
        ..Default::default()
    };
    let blocks = record_blocks(&p, &mix).unwrap();
    assert_eq!(blocks.len(), 1);
    let count = |op: Op| blocks[0].instrs.iter().filter(|i| i.op == op).count();
    let k = 2; // one tower and one auxiliary prime
    assert_eq!(count(Op::Ntt), 4 * k);
    assert_eq!(count(Op::Mul), 4 * k);
    assert_eq!(count(Op::Add), k);
    assert_eq!(count(Op::Intt), 3 * k);
    let mix = OpMix {
        ct_add: 3,
        ct_scalar_mul: 2,
        relin: 1,
        ..Default::default()
    };
    let s = record(&BfvParams::preset("test-bfv").unwrap(), &mix).unwrap();
    let begins = |name: &str| s.iter().filter(|i| i.name.as_deref() == Some(name)).count();
    assert_eq!(
        (begins("HAdd"), begins("CMult"), begins("Relin")),
        (3, 2, 1)
    );
    assert!(s.iter().enumerate().all(|(j, i)| i.seq == j as u64));
    let huge = OpMix {
        ct_add: 1 << 40,
        ..Default::default()
    };
    assert!(record(&BfvParams::preset("test-bfv").unwrap(), &huge).is_err());
}

#[test]
fn bad_input_is_an_error() {
    let s = setup(&BfvParams::preset("test-bfv").unwrap());
    let t = s.bfv.params().t;
    assert!(s.enc.encode(&[t]).is_err());
    assert!(s.enc.encode(&vec![0; 65]).is_err());
    assert!(s.enc.encode_signed(&[t as i64]).is_err());
    let mut e = Encryptor::new(&s.bfv, &s.pk, Seed([6; 32]));
    let a = e.encrypt(&s.enc.encode(&[1]).unwrap()).unwrap();
    let c3 = s.bfv.mul(&a, &a).unwrap();
    assert!(s.bfv.add(&a, &c3).is_err());
    assert!(s.bfv.mul(&c3, &c3).is_err());
    assert!(s.bfv.relinearize(&a, &s.rk).is_err());
    assert!(s.bfv.poly_from_signed(&[1, 2]).is_err());
    let other = setup(&two_tower_small());
    assert!(other.bfv.add(&a, &a).is_err());
    let _ = BigInt::from(0);
}
