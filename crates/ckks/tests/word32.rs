//! End to end on 32-bit words: HMult, HRot and a whole bootstrapping on `Cpu32Backend` give
//! exactly the ciphertext the 64-bit `CpuBackend` gives (every primary is exact modular
//! arithmetic with canonical results, so the two backends must agree word for word), at a
//! small test set whose primes are all below 2^30; and the decryption is checked against the
//! clear values so that "equal" cannot mean "equally wrong".

mod common;
use common::values;

use std::sync::Arc;
use tessera_backend::{Backend, Cpu32Backend, CpuBackend};
use tessera_ckks::bootstrap::{BootstrapKeys, Bootstrapper};
use tessera_ckks::params_file::ParamsFile;
use tessera_ckks::*;
use tessera_math::sampling::Seed;
use tessera_math::RnsPoly;

/// `test-boot-double` with 29- and 30-bit pairs (as `w32-boot`: the pairing keeps each partner
/// at its size) and 30-bit special primes: every prime below 2^30 (INSECURE, N = 2^10).
const SET: &str = r#"
name = "test-boot-w32"
source = "test only: test-boot-double with 30-bit special primes, every prime below 2^30 (INSECURE)"
security = "test"
log_n = 10
chain = [{ bits = 29 }, { bits = 30 }, { bits = 23 }, { bits = 22 }, { bits = 23 }, { bits = 22 }, { bits = 23 }, { bits = 22 }, { bits = 29 }, { bits = 30 }, { bits = 29 }, { bits = 30 }, { bits = 29 }, { bits = 30 }, { bits = 29 }, { bits = 30 }, { bits = 29 }, { bits = 30 }, { bits = 29 }, { bits = 30 }, { bits = 29 }, { bits = 30 }, { bits = 29 }, { bits = 30 }, { bits = 29 }, { bits = 30 }, { bits = 29 }, { bits = 30 }, { bits = 29 }, { bits = 30 }, { bits = 29 }, { bits = 30 }, { bits = 29 }, { bits = 30 }, { bits = 29 }, { bits = 30 }]
special = [{ bits = 30, count = 7 }]
dnum = 6
dynamic_special = 0
log_scale = 45
rescaling = "double"
secret = "sparse"
hamming_weight = 32
sigma = 3.2

[bootstrap]
cts_levels = 2
stc_levels = 2
k_bound = 12.0
cheb_degree = 31
double_angle = 3
of_limb = false
min_ks = false
hoisting = true
"#;

struct Setup {
    ctx: Arc<CkksContext>,
    kg: KeyGenerator,
    sk: SecretKey,
    keys: EvaluationKeys,
    bkeys: BootstrapKeys,
    boot: Bootstrapper,
}

fn setup() -> Setup {
    let file = ParamsFile::parse(SET, "test-boot-w32").unwrap();
    let ctx = CkksContext::new(file.parameters().unwrap()).unwrap();
    assert!(
        Cpu32Backend::supports(ctx.ring()),
        "every prime below 2^30: {:?}",
        ctx.ring()
    );
    let boot = Bootstrapper::new(&ctx, file.bootstrap.clone().unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([3; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let bkeys = boot.keygen(&mut kg, &sk).unwrap();
    // Relinearisation and the rotation by one slot.
    let keys = kg.evaluation_keys(&sk, &[1], false).unwrap();
    Setup {
        ctx,
        kg,
        sk,
        keys,
        bkeys,
        boot,
    }
}

/// Runs `f` on an evaluator over `backend` and stores its result.
fn on<B: Backend>(
    ctx: &Arc<CkksContext>,
    backend: B,
    ct: &Ciphertext<RnsPoly>,
    f: impl Fn(&mut Evaluator<B>, &Ciphertext<B::Poly>) -> Result<Ciphertext<B::Poly>>,
) -> Ciphertext<RnsPoly> {
    let mut ev = Evaluator::new(ctx, backend).unwrap();
    let x = ev.load(ct).unwrap();
    let y = f(&mut ev, &x).unwrap();
    ev.store(&y).unwrap()
}

fn same(what: &str, a: &Ciphertext<RnsPoly>, b: &Ciphertext<RnsPoly>) {
    assert_eq!(a.level, b.level, "{what}: level");
    assert_eq!(a.scale, b.scale, "{what}: scale");
    assert!(
        a.c0 == b.c0 && a.c1 == b.c1,
        "{what}: the 32-bit ciphertext differs"
    );
}

fn precision(
    ctx: &CkksContext,
    sk: &SecretKey,
    ct: &Ciphertext<RnsPoly>,
    want: &[num_complex::Complex64],
) -> f64 {
    let got = ctx.decode(&decrypt(ct, sk).unwrap()).unwrap();
    PrecisionStats::new(want, &got).mean_precision_bits()
}

#[test]
fn hmult_hrot_and_bootstrapping_equal_the_64_bit_backend() {
    let mut st = setup();
    let ctx = st.ctx.clone();
    let slots = ctx.params().max_slots();
    let scale = ctx.params().default_scale();
    let c64 = || CpuBackend::new(ctx.ring().clone());
    let c32 = || Cpu32Backend::new(ctx.ring().clone()).unwrap();

    // HMult and HRot at the top level.
    let z = values(11, slots);
    let top = ctx.params().max_level();
    let ct = st
        .kg
        .encrypt_sk(&ctx.encode(&z, slots, top, scale).unwrap(), &st.sk)
        .unwrap();
    let keys = &st.keys;
    let a = on(&ctx, c64(), &ct, |ev, x| ev.mul_relin_rescale(x, x, keys));
    let b = on(&ctx, c32(), &ct, |ev, x| ev.mul_relin_rescale(x, x, keys));
    same("HMult", &a, &b);
    let sq: Vec<_> = z.iter().map(|v| v * v).collect();
    assert!(precision(&ctx, &st.sk, &b, &sq) > 15.0);
    let a = on(&ctx, c64(), &ct, |ev, x| ev.rotate(x, 1, keys));
    let b = on(&ctx, c32(), &ct, |ev, x| ev.rotate(x, 1, keys));
    same("HRot", &a, &b);
    let rot: Vec<_> = (0..slots).map(|j| z[(j + 1) % slots]).collect();
    assert!(precision(&ctx, &st.sk, &b, &rot) > 15.0);

    // A whole bootstrapping from the base level.
    let z = values(12, slots);
    let base = ctx.params().base_level();
    let ct = st
        .kg
        .encrypt_sk(&ctx.encode(&z, slots, base, scale).unwrap(), &st.sk)
        .unwrap();
    let (boot, bkeys) = (&st.boot, &st.bkeys);
    let a = on(&ctx, c64(), &ct, |ev, x| boot.bootstrap(ev, x, bkeys));
    let b = on(&ctx, c32(), &ct, |ev, x| boot.bootstrap(ev, x, bkeys));
    same("bootstrapping", &a, &b);
    assert!(b.level > base, "levels left after bootstrapping");
    assert!(precision(&ctx, &st.sk, &b, &z) > 8.0);
}
