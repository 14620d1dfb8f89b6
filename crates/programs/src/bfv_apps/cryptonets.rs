//! `cryptonets`: CryptoNets MNIST inference in BFV (Gilad-Bachrach et al., ICML'16; cofhee.md
//! Table X). One ciphertext per pixel, images across the slots; the network is the one LoLa
//! keeps from CryptoNets (workloads.md 4.1, weights `lola-mnist-weights.npz`): conv 5x5
//! stride 2 with 5 maps, square, dense 845 -> 100, square, dense 100 -> 10.
//!
//! Quantisation (ours): pixels `round(8 p / 256)`, weights of every layer `round(16 w)`, each
//! bias at its layer's scale (`8 * 16` for the convolution, `(8 * 16)^2 * 16` for dense 1,
//! `((8 * 16)^2 * 16)^2 * 16` for dense 2). Outputs reach about 2^49, beyond one plaintext
//! modulus that two squares leave room for, so the network runs under two 30-bit plaintext
//! moduli and the decrypted slots are recombined by CRT, as CryptoNets did.
//!
//! Each weight multiplies a ciphertext as a constant plaintext (the same in every slot): a
//! constant multiply, `ct_scalar_mul`. Zero weights and the padding row and column are skipped.

use super::{exact_checks, plaintext_moduli, run_crt, Arith, Clear};
use crate::error::{ProgramError, Result};
use crate::lola::model::{argmax, images, Model, CLASSES, HIDDEN, MAPS, OFFSETS, PIXELS, SIDE};
use crate::report::{Check, RunReport};
use std::path::PathBuf;
use tessera_bfv::{BfvParams, OpMix};

/// Parameter sets: n = 2^13 with two 109-bit towers (218 bits, 128-bit secure) and two 30-bit
/// plaintext moduli.
pub const PARAMETER_SETS: &[&str] = &["cryptonets-n13"];
/// Pixel scale.
pub const SX: f64 = 8.0;
/// Weight scale of every layer.
pub const SW: f64 = 16.0;
/// Convolution outputs.
pub const CONV_OUTPUTS: usize = MAPS * PIXELS;

/// CoFHEE Table X's CryptoNets op mix (cofhee.md V-C): 457,550 ct + ct, 449,000 ct x pt (here
/// constant multiplies, CryptoNets' weights), 10,200 ct x ct each with a relinearisation.
pub const TABLE_X: OpMix = OpMix {
    ct_add: 457_550,
    pt_add: 0,
    ct_pt_mul: 0,
    ct_scalar_mul: 449_000,
    ct_ct_mul: 10_200,
    relin: 10_200,
};

/// What to run.
#[derive(Clone, Debug)]
pub struct CryptonetsConfig {
    /// Parameter set ([`PARAMETER_SETS`]).
    pub params: String,
    /// Images (slots used), 1 to n.
    pub images: usize,
    /// Convolution outputs computed (845 for the whole network; fewer for a reduced test
    /// network whose dense layer reads only those).
    pub conv_outputs: usize,
    /// Hidden units computed (100 for the whole network).
    pub hidden: usize,
    /// Data directory.
    pub data_dir: Option<PathBuf>,
}

impl CryptonetsConfig {
    /// The whole network on `images` images.
    pub fn new(images: usize) -> Self {
        Self {
            params: PARAMETER_SETS[0].into(),
            images,
            conv_outputs: CONV_OUTPUTS,
            hidden: HIDDEN,
            data_dir: None,
        }
    }
}

/// The parameter sets of `name`, one per plaintext modulus.
pub fn parameters(name: &str) -> Result<Vec<BfvParams>> {
    match name {
        "cryptonets-n13" => plaintext_moduli(8192, 30, 2)?
            .into_iter()
            .map(|t| {
                let mut p = BfvParams::new(8192, 2, t)?;
                p.name = format!("{name} (t = {t})");
                Ok(p)
            })
            .collect(),
        _ => Err(ProgramError::Invalid {
            name: "params",
            value: name.into(),
            allowed: PARAMETER_SETS.join(", "),
        }),
    }
}

/// The integer network.
#[derive(Clone, Debug)]
pub struct Quantised {
    conv: Vec<Vec<i64>>,
    conv_bias: Vec<i128>,
    fc1: Vec<Vec<i64>>,
    fc1_bias: Vec<i128>,
    fc2: Vec<Vec<i64>>,
    fc2_bias: Vec<i128>,
}

impl Quantised {
    /// The quantisation of the module note.
    pub fn new(m: &Model) -> Self {
        let q = |v: &[f64]| {
            v.iter()
                .map(|w| (w * SW).round() as i64)
                .collect::<Vec<_>>()
        };
        let s1 = SX * SW;
        let s2 = s1 * s1 * SW;
        let s3 = s2 * s2 * SW;
        let b = |v: &[f64], s: f64| v.iter().map(|x| (x * s).round() as i128).collect();
        Self {
            conv: m.conv.iter().map(|r| q(r)).collect(),
            conv_bias: b(&m.conv_bias, s1),
            fc1: m.fc1.iter().map(|r| q(r)).collect(),
            fc1_bias: b(&m.fc1_bias, s2),
            fc2: m.fc2.iter().map(|r| q(r)).collect(),
            fc2_bias: b(&m.fc2_bias, s3),
        }
    }
}

/// The pixel (row-major index in the 28 x 28 image) that kernel offset `k` of convolution
/// output position `p` reads, or `None` in the padding.
fn pixel(p: usize, k: usize) -> Option<usize> {
    let (r, c) = (2 * (p / SIDE) + k / 5, 2 * (p % SIDE) + k % 5);
    (r < 28 && c < 28).then_some(r * 28 + c)
}

/// `sum_i w_i x_i + bias` over the non-zero weights.
fn dot<A: Arith>(a: &mut A, terms: &[(i64, &A::V)], bias: i128) -> Result<A::V> {
    let mut acc: Option<A::V> = None;
    for (w, x) in terms.iter().filter(|(w, _)| *w != 0) {
        let t = a.scale(x, *w)?;
        acc = Some(match acc {
            None => t,
            Some(s) => a.add(&s, &t)?,
        });
    }
    let acc = match acc {
        Some(v) => v,
        None => a.scale(
            terms
                .first()
                .map(|t| t.1)
                .ok_or_else(|| ProgramError::Unsupported("a dot product of no terms".into()))?,
            0,
        )?,
    };
    a.add_const(&acc, bias)
}

/// The network over any [`Arith`]: `pixels[i]` holds pixel `i` of every image (`None` for
/// pixels the computed outputs never read); returns the 10 class scores.
pub fn network<A: Arith>(
    a: &mut A,
    q: &Quantised,
    pixels: &[Option<A::V>],
    conv_outputs: usize,
    hidden: usize,
) -> Result<Vec<A::V>> {
    let missing = || ProgramError::Unsupported("a pixel the network reads was not given".into());
    let mut h = Vec::with_capacity(conv_outputs);
    for o in 0..conv_outputs {
        let (m, p) = (o / PIXELS, o % PIXELS);
        let mut terms = Vec::new();
        for k in 0..OFFSETS {
            if let Some(i) = pixel(p, k) {
                terms.push((q.conv[m][k], pixels[i].as_ref().ok_or_else(missing)?));
            }
        }
        let v = dot(a, &terms, q.conv_bias[m])?;
        h.push(a.mul(&v, &v)?);
    }
    let mut y = Vec::with_capacity(hidden);
    for o in 0..hidden {
        let terms: Vec<(i64, &A::V)> = h
            .iter()
            .enumerate()
            .map(|(i, x)| (q.fc1[o][i], x))
            .collect();
        let v = dot(a, &terms, q.fc1_bias[o])?;
        y.push(a.mul(&v, &v)?);
    }
    (0..CLASSES)
        .map(|c| {
            let terms: Vec<(i64, &A::V)> = y
                .iter()
                .enumerate()
                .map(|(o, x)| (q.fc2[c][o], x))
                .collect();
            dot(a, &terms, q.fc2_bias[c])
        })
        .collect()
}

fn check(cfg: &CryptonetsConfig, n: usize) -> Result<()> {
    let bad = |name: &'static str, value: usize, allowed: String| {
        Err(ProgramError::Invalid {
            name,
            value: value.to_string(),
            allowed,
        })
    };
    if cfg.images == 0 || cfg.images > n {
        return bad("images", cfg.images, format!("1 to {n} (one per slot)"));
    }
    if cfg.conv_outputs == 0 || cfg.conv_outputs > CONV_OUTPUTS {
        return bad(
            "conv_outputs",
            cfg.conv_outputs,
            format!("1 to {CONV_OUTPUTS}"),
        );
    }
    if cfg.hidden == 0 || cfg.hidden > HIDDEN {
        return bad("hidden", cfg.hidden, format!("1 to {HIDDEN}"));
    }
    Ok(())
}

/// Classifies `cfg.images` images encrypted and checks the decrypted scores against the
/// integer replica slot for slot.
pub fn run_cpu(
    cfg: &CryptonetsConfig,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<RunReport> {
    let params = parameters(&cfg.params)?;
    check(cfg, params[0].n)?;
    let dir = crate::data::data_dir(cfg.data_dir.as_deref());
    let model = Model::load(&dir)?;
    let (imgs, labels) = images(&dir, cfg.images)?;
    let q = Quantised::new(&model);
    let mut read = vec![false; 784];
    for o in 0..cfg.conv_outputs {
        for k in 0..OFFSETS {
            if let Some(i) = pixel(o % PIXELS, k) {
                read[i] = true;
            }
        }
    }
    let inputs: Vec<Option<Vec<i128>>> = (0..784)
        .map(|i| {
            read[i].then(|| {
                imgs.iter()
                    .map(|img| (img[i] * SX / 256.0).round() as i128)
                    .collect()
            })
        })
        .collect();
    let replica = network(&mut Clear, &q, &inputs, cfg.conv_outputs, cfg.hidden)?;
    let run = run_crt(
        &params,
        &inputs,
        cfg.images,
        &|a, x| network(a, &q, x, cfg.conv_outputs, cfg.hidden),
        progress,
    )?;
    let mut checks = exact_checks(&run, &replica, &params);
    let whole = cfg.conv_outputs == CONV_OUTPUTS && cfg.hidden == HIDDEN;
    if whole {
        let (mut agree, mut correct) = (0usize, 0usize);
        for (s, img) in imgs.iter().enumerate() {
            let scores: Vec<f64> = run.outputs.iter().map(|o| o[s] as f64).collect();
            agree += usize::from(argmax(&scores) == argmax(&model.forward(img)));
            correct += usize::from(argmax(&scores) == labels[s] as usize);
        }
        let k = imgs.len() as f64;
        checks.push(Check::info(
            "top-1 agreement with the float network",
            agree as f64 / k,
        ));
        checks.push(Check::info("accuracy on the labels", correct as f64 / k));
    }
    let notes = vec![
        format!(
            "BFV n = 2^13, two 109-bit towers ({}); {} image(s) of mnist-10k.npz, one per slot; {} convolution output(s), {} hidden unit(s){}",
            params[0].security().label(),
            cfg.images,
            cfg.conv_outputs,
            cfg.hidden,
            if whole { "" } else { " (a reduced network: the check is the replica of this network)" }
        ),
        format!(
            "counts are totals over the {} plaintext moduli (t = {}; an iteration is one modulus: the network runs once under each, and the slots are recombined by CRT)",
            params.len(),
            params.iter().map(|p| p.t.to_string()).collect::<Vec<_>>().join(", ")
        ),
        format!(
            "CoFHEE Table X op mix (simulated, not computed): {} ct+ct, {} ct x pt, {} ct x ct + relin",
            TABLE_X.ct_add, TABLE_X.ct_scalar_mul, TABLE_X.ct_ct_mul
        ),
    ];
    Ok(run.report(
        "cryptonets",
        &cfg.params,
        cfg.images,
        params.len(),
        checks,
        notes,
    ))
}
