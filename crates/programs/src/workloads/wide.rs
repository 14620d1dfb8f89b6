//! CoFHEE's 128-bit workloads (cofhee.md VI): NTT, iNTT, PolyMul and the BFV ciphertext
//! tensor product of Algorithm 3 / Eq. 4, computed for real with the math crate's 128-bit
//! arithmetic (`tessera_math::wide`), recording the Table I commands they issue. The
//! single-PE model that runs them lives in the simulator (`tessera_sim::cofhee`); the
//! recording lives here so the simulator depends on the trace format only.

use crate::error::{ProgramError, Result};
use tessera_backend::trace::{Instr, Op};
use tessera_math::wide::{generate_wide_ntt_primes, WideNtt};

/// A 128-bit workload: its recorded stream and the values it computed.
#[derive(Clone, Debug)]
pub struct WideWorkload {
    pub label: String,
    pub instrs: Vec<Instr>,
    /// Per tower: the outputs (for checking against a reference).
    pub outputs: Vec<Vec<Vec<u128>>>,
    /// Per tower: the inputs.
    pub inputs: Vec<Vec<Vec<u128>>>,
    pub moduli: Vec<u128>,
    pub n: usize,
}

struct Rec {
    instrs: Vec<Instr>,
    next: u64,
    n: usize,
}

impl Rec {
    fn push(&mut self, op: Op, dst: u64, srcs: &[u64], tower: usize) {
        let seq = self.instrs.len() as u64;
        self.instrs.push(Instr::on_tower(
            seq,
            self.n,
            op,
            dst,
            srcs,
            tower,
            tessera_backend::Kind::Ciphertext,
        ));
    }
    fn fresh(&mut self) -> u64 {
        self.next += 1;
        self.next
    }
    fn marker(&mut self, name: Option<&str>) {
        let seq = self.instrs.len() as u64;
        self.instrs.push(Instr::marker(seq, self.n, name));
    }
}

/// The 128-bit workloads.
pub const WIDE_WORKLOADS: &[&str] = &["ntt", "intt", "polymul", "ctmult"];

/// Parameters of the 128-bit workloads: `cofhee-n12` (n = 2^12, one 109-bit tower) and
/// `cofhee-n13` (n = 2^13, two towers), cofhee.md VI-B; `test-cofhee` (n = 2^6) for tests.
pub fn wide_params(name: &str) -> Result<(usize, usize)> {
    match name {
        "cofhee-n12" | "cofhee" => Ok((4096, 1)),
        "cofhee-n13" => Ok((8192, 2)),
        "test-cofhee" => Ok((64, 1)),
        _ => Err(ProgramError::Invalid {
            name: "params",
            value: name.into(),
            allowed: "cofhee-n12, cofhee-n13 or test-cofhee (128-bit-word workloads)".into(),
        }),
    }
}

/// Runs `workload` (ntt, intt, polymul, ctmult) at `params` with 109-bit towers, for real,
/// recording the commands it issues. Inputs are pseudo-random from a fixed seed.
pub fn record_wide(workload: &str, params: &str) -> Result<WideWorkload> {
    if !WIDE_WORKLOADS.contains(&workload) {
        return Err(ProgramError::Invalid {
            name: "workload",
            value: workload.into(),
            allowed: WIDE_WORKLOADS.join(", "),
        });
    }
    let (n, towers) = wide_params(params)?;
    let moduli = generate_wide_ntt_primes(109, n, towers)?;
    let mut rec = Rec {
        instrs: Vec::new(),
        next: 0,
        n,
    };
    let mut s = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834u128;
    let mut outputs = Vec::new();
    let mut inputs = Vec::new();
    for (tower, &q) in moduli.iter().enumerate() {
        let t = WideNtt::new(q, n)?;
        let m = *t.modulus();
        let mut rand_poly = || -> Vec<u128> {
            (0..n)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    s % q
                })
                .collect()
        };
        let count = match workload {
            "ntt" | "intt" => 1,
            "polymul" => 2,
            _ => 4,
        };
        let ins: Vec<Vec<u128>> = (0..count).map(|_| rand_poly()).collect();
        let mut ids = Vec::new();
        for _ in 0..count {
            let id = rec.fresh();
            rec.push(Op::Load, id, &[], tower);
            ids.push(id);
        }
        let mut vals = ins.clone();
        let name = match workload {
            "ntt" => "NTT",
            "intt" => "iNTT",
            "polymul" => "PolyMul",
            _ => "CtMult",
        };
        rec.marker(Some(name));
        let outs: Vec<(u64, Vec<u128>)> = match workload {
            "ntt" => {
                t.forward(&mut vals[0])?;
                rec.push(Op::Ntt, ids[0], &[ids[0]], tower);
                vec![(ids[0], vals[0].clone())]
            }
            "intt" => {
                t.inverse(&mut vals[0])?;
                rec.push(Op::Intt, ids[0], &[ids[0]], tower);
                vec![(ids[0], vals[0].clone())]
            }
            "polymul" => {
                for (v, &id) in vals.iter_mut().zip(&ids) {
                    t.forward(v)?;
                    rec.push(Op::Ntt, id, &[id], tower);
                }
                let mut c: Vec<u128> = vals[0]
                    .iter()
                    .zip(&vals[1])
                    .map(|(x, y)| m.mul(*x, *y))
                    .collect();
                let cid = rec.fresh();
                rec.push(Op::Mul, cid, &[ids[0], ids[1]], tower);
                t.inverse(&mut c)?;
                rec.push(Op::Intt, cid, &[cid], tower);
                vec![(cid, c)]
            }
            _ => {
                // Algorithm 3 / Eq. 4: (a0, a1) x (b0, b1) -> (a0 b0, a0 b1 + a1 b0, a1 b1):
                // 4 NTT, 4 Hadamard products, 1 addition, 3 iNTT.
                for (v, &id) in vals.iter_mut().zip(&ids) {
                    t.forward(v)?;
                    rec.push(Op::Ntt, id, &[id], tower);
                }
                let had = |x: &[u128], y: &[u128]| -> Vec<u128> {
                    x.iter().zip(y).map(|(a, b)| m.mul(*a, *b)).collect()
                };
                let mut c0 = had(&vals[0], &vals[2]);
                let id0 = rec.fresh();
                rec.push(Op::Mul, id0, &[ids[0], ids[2]], tower);
                let t1 = had(&vals[0], &vals[3]);
                let id1 = rec.fresh();
                rec.push(Op::Mul, id1, &[ids[0], ids[3]], tower);
                let t2 = had(&vals[1], &vals[2]);
                let id2 = rec.fresh();
                rec.push(Op::Mul, id2, &[ids[1], ids[2]], tower);
                let mut c1: Vec<u128> = t1.iter().zip(&t2).map(|(a, b)| m.add(*a, *b)).collect();
                let id3 = rec.fresh();
                rec.push(Op::Add, id3, &[id1, id2], tower);
                let mut c2 = had(&vals[1], &vals[3]);
                let id4 = rec.fresh();
                rec.push(Op::Mul, id4, &[ids[1], ids[3]], tower);
                for (v, id) in [(&mut c0, id0), (&mut c1, id3), (&mut c2, id4)] {
                    t.inverse(v)?;
                    rec.push(Op::Intt, id, &[id], tower);
                }
                vec![(id0, c0), (id3, c1), (id4, c2)]
            }
        };
        rec.marker(None);
        for (id, _) in &outs {
            rec.push(Op::Store, *id, &[*id], tower);
        }
        outputs.push(outs.into_iter().map(|(_, v)| v).collect());
        inputs.push(ins);
    }
    Ok(WideWorkload {
        label: format!("{workload}@{params}"),
        instrs: rec.instrs,
        outputs,
        inputs,
        moduli,
        n,
    })
}
