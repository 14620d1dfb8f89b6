//! Op mixes and their recorded command streams for the CoFHEE model.
//!
//! An application's cost on CoFHEE is its op mix (cofhee.md V-C counts ct+ct additions, ct x pt
//! multiplications, ct x ct multiplications and relinearisations) times the commands of each
//! op. [`record_blocks`] runs every op class of a mix once on real ciphertexts, checks that the
//! result decrypts to the same computation in the clear, and returns its command block with the
//! count it stands for; [`record`] expands the blocks into one stream. The commands of an op do
//! not depend on the data, so repeating a block is exactly the stream of repeating the op.

use crate::context::{Bfv, Ciphertext};
use crate::crypt::{Decryptor, Encryptor};
use crate::encoder::BatchEncoder;
use crate::error::{invalid, BfvError, Result};
use crate::keys::KeyGenerator;
use crate::params::BfvParams;
use tessera_backend::trace::Instr;
use tessera_math::sampling::Seed;

/// Counts of homomorphic operations by class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpMix {
    /// Ciphertext additions and subtractions (ct + ct).
    pub ct_add: u64,
    /// Plaintext additions (ct + pt).
    pub pt_add: u64,
    /// Multiplications by an arbitrary plaintext (NTT domain).
    pub ct_pt_mul: u64,
    /// Multiplications by a constant (the same value in every slot: one CMODMUL per tower).
    pub ct_scalar_mul: u64,
    /// Ciphertext tensor products (ct x ct).
    pub ct_ct_mul: u64,
    /// Relinearisations.
    pub relin: u64,
}

impl OpMix {
    /// The classes in a fixed order, with their names.
    pub fn classes(&self) -> [(&'static str, u64); 6] {
        [
            ("ct_add", self.ct_add),
            ("pt_add", self.pt_add),
            ("ct_pt_mul", self.ct_pt_mul),
            ("ct_scalar_mul", self.ct_scalar_mul),
            ("ct_ct_mul", self.ct_ct_mul),
            ("relin", self.relin),
        ]
    }

    /// `self - earlier`, class by class.
    pub fn since(&self, e: &OpMix) -> OpMix {
        OpMix {
            ct_add: self.ct_add - e.ct_add,
            pt_add: self.pt_add - e.pt_add,
            ct_pt_mul: self.ct_pt_mul - e.ct_pt_mul,
            ct_scalar_mul: self.ct_scalar_mul - e.ct_scalar_mul,
            ct_ct_mul: self.ct_ct_mul - e.ct_ct_mul,
            relin: self.relin - e.relin,
        }
    }

    /// `self + other`, class by class.
    pub fn plus(&self, o: &OpMix) -> OpMix {
        OpMix {
            ct_add: self.ct_add + o.ct_add,
            pt_add: self.pt_add + o.pt_add,
            ct_pt_mul: self.ct_pt_mul + o.ct_pt_mul,
            ct_scalar_mul: self.ct_scalar_mul + o.ct_scalar_mul,
            ct_ct_mul: self.ct_ct_mul + o.ct_ct_mul,
            relin: self.relin + o.relin,
        }
    }

    /// Total operations.
    pub fn total(&self) -> u64 {
        self.classes().iter().map(|(_, c)| c).sum()
    }
}

/// The commands of one op of a class, and how many times the mix runs it.
#[derive(Clone, Debug)]
pub struct OpBlock {
    /// The class ([`OpMix::classes`] name).
    pub class: &'static str,
    /// How many ops of this class the mix holds.
    pub count: u64,
    /// The commands of one op.
    pub instrs: Vec<Instr>,
}

/// Largest stream [`record`] expands (instructions); larger mixes use [`record_blocks`].
pub const MAX_RECORD_INSTRS: u64 = 2_000_000;

/// Runs each class of `mix` with a non-zero count once on real ciphertexts at `params` (fixed
/// seeds), checks every result against the clear slot-wise computation, and returns one command
/// block per class.
pub fn record_blocks(params: &BfvParams, mix: &OpMix) -> Result<Vec<OpBlock>> {
    let bfv = Bfv::new(params)?;
    let kg = KeyGenerator::new(&bfv, Seed([7; 32]));
    let sk = kg.secret_key()?;
    let pk = kg.public_key(&sk)?;
    let rk = kg.relin_key(&sk)?;
    let enc = BatchEncoder::new(&bfv)?;
    let mut encryptor = Encryptor::new(&bfv, &pk, Seed([8; 32]));
    let dec = Decryptor::new(&bfv, &sk);
    let t = params.t;
    let x: Vec<u64> = (0..params.n as u64).map(|i| (i * 7919 + 3) % t).collect();
    let y: Vec<u64> = (0..params.n as u64)
        .map(|i| (i * 104_729 + 11) % t)
        .collect();
    let (ca, cb) = (
        encryptor.encrypt(&enc.encode(&x)?)?,
        encryptor.encrypt(&enc.encode(&y)?)?,
    );
    let py = enc.encode(&y)?;
    let k: u64 = 12345 % t;
    let mut blocks = Vec::new();
    let check = |ct: &Ciphertext, want: Vec<u64>, what: &str| -> Result<()> {
        if enc.decode(&dec.decrypt(ct)?) != want {
            return Err(BfvError::Check(format!(
                "{what} at {} does not decrypt to the clear result",
                params.name
            )));
        }
        Ok(())
    };
    let zip = |f: &dyn Fn(u128, u128) -> u128| -> Vec<u64> {
        x.iter()
            .zip(&y)
            .map(|(&a, &b)| (f(a as u128, b as u128) % t as u128) as u64)
            .collect()
    };
    let ct3 = bfv.mul(&ca, &cb)?;
    for (class, count) in mix.classes() {
        if count == 0 {
            continue;
        }
        bfv.start_recording();
        let (out, want) = match class {
            "ct_add" => (bfv.add(&ca, &cb)?, zip(&|a, b| a + b)),
            "pt_add" => (bfv.add_plain(&ca, &py)?, zip(&|a, b| a + b)),
            "ct_pt_mul" => (bfv.mul_plain(&ca, &py)?, zip(&|a, b| a * b)),
            "ct_scalar_mul" => (bfv.mul_scalar(&ca, k as i64)?, zip(&|a, _| a * k as u128)),
            "ct_ct_mul" => (bfv.mul(&ca, &cb)?, zip(&|a, b| a * b)),
            _ => (bfv.relinearize(&ct3, &rk)?, zip(&|a, b| a * b)),
        };
        let instrs = bfv.take_recording();
        check(&out, want, class)?;
        blocks.push(OpBlock {
            class,
            count,
            instrs,
        });
    }
    Ok(blocks)
}

/// The whole stream of `mix` at `params`: every block of [`record_blocks`] repeated `count`
/// times, renumbered. An error naming `op_mix` if it would exceed [`MAX_RECORD_INSTRS`].
///
/// ```
/// use tessera_bfv::{record, BfvParams, OpMix};
/// let p = BfvParams::preset("test-bfv").unwrap();
/// let mix = OpMix { ct_ct_mul: 2, relin: 2, ..Default::default() };
/// let s = record(&p, &mix).unwrap();
/// let ntts = s.iter().filter(|i| i.op == tessera_backend::trace::Op::Ntt).count();
/// // Algorithm 3's 4 NTTs per basis prime (1 tower + 1 auxiliary prime), 4 digit NTTs per relin.
/// assert_eq!(ntts, 2 * (4 * 2) + 2 * 4);
/// ```
pub fn record(params: &BfvParams, mix: &OpMix) -> Result<Vec<Instr>> {
    let blocks = record_blocks(params, mix)?;
    let total: u64 = blocks
        .iter()
        .map(|b| b.count.saturating_mul(b.instrs.len() as u64))
        .fold(0u64, u64::saturating_add);
    if total > MAX_RECORD_INSTRS {
        return Err(invalid(
            "op_mix",
            format!("{mix:?} ({total} instructions)"),
            format!(
                "at most {MAX_RECORD_INSTRS} instructions in one stream; use record_blocks and scale each block by its count"
            ),
        ));
    }
    let mut out = Vec::with_capacity(total as usize);
    for b in &blocks {
        for _ in 0..b.count {
            for i in &b.instrs {
                let mut i = i.clone();
                i.seq = out.len() as u64;
                out.push(i);
            }
        }
    }
    Ok(out)
}
