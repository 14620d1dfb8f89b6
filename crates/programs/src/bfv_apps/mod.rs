//! CoFHEE's BFV applications (cofhee.md V-C, Table X; workloads.md 7): [`cryptonets`] and
//! [`lr_inference`], each written once over [`Arith`] and run twice: on exact integers (the
//! plaintext replica, [`Clear`]) and on BFV ciphertexts ([`Encrypted`], `tessera-bfv`). BFV
//! computes mod `t` exactly, so the check is equality: the encrypted outputs, decrypted under
//! several plaintext moduli and recombined by CRT (CryptoNets' own technique for a plaintext
//! space wider than one `t`), must equal the replica's integers in every slot.
//!
//! Both programs batch one input per slot (one ciphertext per pixel or feature, SIMD across
//! samples), the layout CryptoNets uses.

pub mod cryptonets;
pub mod lr_inference;

use crate::counter::OpCounts;
use crate::error::{ProgramError, Result};
use crate::report::{Check, Phases, RunReport};
use std::collections::BTreeMap;
use tessera_bfv::{
    BatchEncoder, Bfv, BfvParams, Ciphertext, Decryptor, Encryptor, KeyGenerator, OpMix, RelinKey,
};

/// `tessera run cryptonets | lr-inference`: `size` is the number of images or test rows
/// (default 8 and 57); iterations do not apply.
pub fn run(
    program: &str,
    o: &crate::registry::RunOptions,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<crate::report::RunReport> {
    if o.iterations.is_some() {
        return Err(ProgramError::Invalid {
            name: "iterations",
            value: format!("{:?}", o.iterations),
            allowed: format!("none for {program} (its size is the number of samples)"),
        });
    }
    let params = o
        .params
        .clone()
        .unwrap_or_else(|| crate::registry::default_params(program).into());
    if program == "cryptonets" {
        let mut c = cryptonets::CryptonetsConfig::new(o.size.unwrap_or(8));
        c.params = params;
        c.data_dir = o.data_dir.clone();
        cryptonets::run_cpu(&c, progress)
    } else {
        lr_inference::run_cpu(
            &lr_inference::LrConfig {
                params,
                rows: o.size.unwrap_or(57),
                data_dir: o.data_dir.clone(),
            },
            progress,
        )
    }
}

/// The arithmetic the applications are written over: slot-wise integer operations.
pub trait Arith {
    /// A value: one integer per slot.
    type V: Clone;
    /// `a + b`.
    fn add(&mut self, a: &Self::V, b: &Self::V) -> Result<Self::V>;
    /// `k a` for an integer constant (a ct x pt product with a constant plaintext).
    fn scale(&mut self, a: &Self::V, k: i64) -> Result<Self::V>;
    /// `a + k` for an integer constant.
    fn add_const(&mut self, a: &Self::V, k: i128) -> Result<Self::V>;
    /// `a * b` (a ct x ct product with relinearisation).
    fn mul(&mut self, a: &Self::V, b: &Self::V) -> Result<Self::V>;
}

/// Exact integers per slot: the replica. Overflow of `i128` is an error, not a wrap.
pub struct Clear;

fn overflow() -> ProgramError {
    ProgramError::Unsupported(
        "the replica's integers overflow i128 (quantisation scales too large)".into(),
    )
}

impl Arith for Clear {
    type V = Vec<i128>;
    fn add(&mut self, a: &Self::V, b: &Self::V) -> Result<Self::V> {
        a.iter()
            .zip(b)
            .map(|(x, y)| x.checked_add(*y).ok_or_else(overflow))
            .collect()
    }
    fn scale(&mut self, a: &Self::V, k: i64) -> Result<Self::V> {
        a.iter()
            .map(|x| x.checked_mul(k as i128).ok_or_else(overflow))
            .collect()
    }
    fn add_const(&mut self, a: &Self::V, k: i128) -> Result<Self::V> {
        a.iter()
            .map(|x| x.checked_add(k).ok_or_else(overflow))
            .collect()
    }
    fn mul(&mut self, a: &Self::V, b: &Self::V) -> Result<Self::V> {
        a.iter()
            .zip(b)
            .map(|(x, y)| x.checked_mul(*y).ok_or_else(overflow))
            .collect()
    }
}

/// BFV ciphertexts under one plaintext modulus.
pub struct Encrypted<'a> {
    /// The context.
    pub bfv: &'a Bfv,
    /// The relinearisation key.
    pub rk: &'a RelinKey,
    /// The encoder (constants).
    pub enc: &'a BatchEncoder,
}

fn centred(k: i128, t: u64) -> i64 {
    let t = t as i128;
    let r = k.rem_euclid(t);
    (if r > t / 2 { r - t } else { r }) as i64
}

impl Arith for Encrypted<'_> {
    type V = Ciphertext;
    fn add(&mut self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        Ok(self.bfv.add(a, b)?)
    }
    fn scale(&mut self, a: &Ciphertext, k: i64) -> Result<Ciphertext> {
        Ok(self.bfv.mul_scalar(a, k)?)
    }
    fn add_const(&mut self, a: &Ciphertext, k: i128) -> Result<Ciphertext> {
        let pt = self.enc.encode_constant(centred(k, self.bfv.params().t))?;
        Ok(self.bfv.add_plain(a, &pt)?)
    }
    fn mul(&mut self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        Ok(self.bfv.mul_relin(a, b, self.rk)?)
    }
}

/// Plaintext moduli for the CRT: `count` primes of `bits` bits, `= 1 mod 2n` (batching).
pub fn plaintext_moduli(n: usize, bits: u32, count: usize) -> Result<Vec<u64>> {
    Ok(tessera_math::primes::generate_ntt_primes(
        bits,
        n,
        count,
        &[],
    )?)
}

/// An application's computation on ciphertexts: the inputs (`None` where never read) to the
/// outputs.
pub type EncryptedNetwork<'f> =
    dyn Fn(&mut Encrypted, &[Option<Ciphertext>]) -> Result<Vec<Ciphertext>> + Sync + 'f;

/// What an encrypted run under all plaintext moduli produced.
pub struct CrtRun {
    /// Outputs recombined by CRT, centred: `[output][slot]`.
    pub outputs: Vec<Vec<i128>>,
    /// The smallest noise budget of any output (bits).
    pub min_budget: f64,
    /// Operations, summed over the plaintext moduli (the same for each).
    pub mix: OpMix,
    /// Seconds: keygen, encrypt, compute, decrypt.
    pub times: [f64; 4],
}

impl CrtRun {
    /// The run report of a BFV program: `size` slots under `moduli` plaintext moduli (an
    /// iteration per modulus), its checks and notes; BFV programs never bootstrap.
    pub fn report(
        &self,
        program: &str,
        params: &str,
        size: usize,
        moduli: usize,
        checks: Vec<Check>,
        notes: Vec<String>,
    ) -> RunReport {
        RunReport {
            program: program.into(),
            params: params.into(),
            size,
            iterations: moduli,
            checks,
            phases: Phases::from(self.times),
            counts: counts(&self.mix),
            boots: 0,
            levels_per_boot: 0,
            keys_on_demand: false,
            notes,
        }
    }
}

/// The run under one plaintext modulus.
struct ModulusRun {
    residues: Vec<Vec<u64>>,
    min_budget: f64,
    mix: OpMix,
    times: [f64; 4],
}

/// One plaintext modulus: keys and encryption randomness from the operating system, `f` on
/// the encrypted inputs, the decrypted slots; with the smallest noise budget, the op mix and
/// the seconds of keygen, encrypt, compute, decrypt.
fn one_modulus(
    p: &BfvParams,
    inputs: &[Option<Vec<i128>>],
    slots: usize,
    f: &EncryptedNetwork,
) -> Result<ModulusRun> {
    let mut times = [0.0; 4];
    let mut clock = crate::report::Stopwatch::start();
    let bfv = Bfv::new(p)?;
    let kg = KeyGenerator::from_os(&bfv)?;
    let sk = kg.secret_key()?;
    let pk = kg.public_key(&sk)?;
    let rk = kg.relin_key(&sk)?;
    let enc = BatchEncoder::new(&bfv)?;
    times[0] = clock.lap();
    let mut encryptor = Encryptor::from_os(&bfv, &pk)?;
    let cts = inputs
        .iter()
        .map(|x| {
            x.as_ref()
                .map(|v| {
                    let s: Vec<i64> = v.iter().map(|&k| centred(k, p.t)).collect();
                    Ok(encryptor.encrypt(&enc.encode_signed(&s)?)?)
                })
                .transpose()
        })
        .collect::<Result<Vec<_>>>()?;
    times[1] = clock.lap();
    let mut a = Encrypted {
        bfv: &bfv,
        rk: &rk,
        enc: &enc,
    };
    let outs = f(&mut a, &cts)?;
    times[2] = clock.lap();
    let dec = Decryptor::new(&bfv, &sk);
    let mut res = Vec::new();
    let mut min_budget = f64::INFINITY;
    for o in &outs {
        min_budget = min_budget.min(dec.noise_budget(o)?);
        let mut v = enc.decode(&dec.decrypt(o)?);
        v.truncate(slots);
        res.push(v);
    }
    times[3] = clock.lap();
    Ok(ModulusRun {
        residues: res,
        min_budget,
        mix: bfv.counts(),
        times,
    })
}

/// Runs `f` encrypted under each parameter set of `params` (differing only in `t`) on
/// `inputs` (`None`: an input the computation never reads), one thread per plaintext modulus
/// (the runs are independent), and recombines the decrypted slots by CRT. Phase times are the
/// slowest thread's.
pub fn run_crt(
    params: &[BfvParams],
    inputs: &[Option<Vec<i128>>],
    slots: usize,
    f: &EncryptedNetwork,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<CrtRun> {
    progress("compute", 0, params.len());
    let results: Vec<Result<_>> = std::thread::scope(|scope| {
        let handles: Vec<_> = params
            .iter()
            .map(|p| scope.spawn(move || one_modulus(p, inputs, slots, f)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(ProgramError::Unsupported(
                        "a plaintext-modulus thread panicked".into(),
                    ))
                })
            })
            .collect()
    });
    let mut residues: Vec<Vec<Vec<u64>>> = Vec::new(); // [modulus][output][slot]
    let mut min_budget = f64::INFINITY;
    let mut mix = OpMix::default();
    let mut times = [0.0f64; 4];
    for (i, r) in results.into_iter().enumerate() {
        let r = r?;
        residues.push(r.residues);
        min_budget = min_budget.min(r.min_budget);
        mix = mix.plus(&r.mix);
        for (a, x) in times.iter_mut().zip(r.times) {
            *a = a.max(x);
        }
        progress("compute", i + 1, params.len());
    }
    // CRT over the plaintext moduli (products below 2^126 here: checked by the callers' range
    // check, which bounds the replica by half the product).
    let ts: Vec<u128> = params.iter().map(|p| p.t as u128).collect();
    let big_t: u128 = ts.iter().product();
    // (T / t_i)^-1 mod t_i.
    let invs = ts
        .iter()
        .map(|&t| Ok(tessera_math::wide::Modulus128::new(t)?.inv(big_t / t % t)))
        .collect::<Result<Vec<u128>>>()?;
    let outputs = (0..residues[0].len())
        .map(|o| {
            (0..slots)
                .map(|s| {
                    let mut x: u128 = 0;
                    for (i, &t) in ts.iter().enumerate() {
                        let hat = big_t / t;
                        let term =
                            mulmod(mulmod(residues[i][o][s] as u128, invs[i], t), hat, big_t);
                        x = (x + term) % big_t;
                    }
                    if x > big_t / 2 {
                        x as i128 - big_t as i128
                    } else {
                        x as i128
                    }
                })
                .collect()
        })
        .collect();
    Ok(CrtRun {
        outputs,
        min_budget,
        mix,
        times,
    })
}

/// `a b mod m` for `m < 2^126` without overflow (double and add).
fn mulmod(a: u128, mut b: u128, m: u128) -> u128 {
    let mut a = a % m;
    let mut r = 0u128;
    while b > 0 {
        if b & 1 == 1 {
            r = (r + a) % m;
        }
        a = (a << 1) % m;
        b >>= 1;
    }
    r
}

/// The checks every BFV application reports: exact equality with the replica, the replica
/// within the CRT plaintext space, a positive noise budget.
pub fn exact_checks(run: &CrtRun, replica: &[Vec<i128>], params: &[BfvParams]) -> Vec<Check> {
    let mismatches = run
        .outputs
        .iter()
        .zip(replica)
        .map(|(a, b)| a.iter().zip(b).filter(|(x, y)| x != y).count())
        .sum::<usize>();
    let max_abs = replica
        .iter()
        .flatten()
        .map(|v| v.unsigned_abs())
        .max()
        .unwrap_or(0);
    let log_t: f64 = params.iter().map(|p| (p.t as f64).log2()).sum();
    vec![
        Check::at_most(
            "encrypted outputs differing from the integer replica (slots)",
            mismatches as f64,
            0.0,
        ),
        Check::at_most(
            "log2 max |replica value| (must stay below log2(prod t / 2))",
            (max_abs.max(1) as f64).log2(),
            log_t - 1.0,
        ),
        Check::at_least(
            "smallest noise budget of an output (bits)",
            run.min_budget,
            0.0,
        ),
    ]
}

/// An op mix as the report's operation counts (BFV class names).
pub fn counts(mix: &OpMix) -> OpCounts {
    let names = [
        ("ct_add", "HAdd"),
        ("pt_add", "PAdd"),
        ("ct_pt_mul", "PMult"),
        ("ct_scalar_mul", "CMult"),
        ("ct_ct_mul", "HMult"),
        ("relin", "Relin"),
    ];
    let mut m = BTreeMap::new();
    for ((class, c), (_, name)) in mix.classes().into_iter().zip(names) {
        debug_assert_eq!(class, names.iter().find(|(k, _)| *k == class).unwrap().0);
        if c > 0 {
            m.insert(name.to_string(), c);
        }
    }
    OpCounts(m)
}
