//! CKKS bootstrapping: ModRaise, CoeffToSlot, EvalMod, SlotToCoeff (ark.md sections II-D to
//! III; Cheon et al. 2018, Chen-Chillotti-Song 2019, Han-Ki 2020 for the sine evaluation).
//!
//! For a ciphertext of `s = N/2` slots at level 0 with scale `Delta`:
//! 1. **ModRaise** reads its parts modulo `q_0` as centered integers and extends them to every
//!    chain prime. It now decrypts to `t = m + q_0 I` with a small integer polynomial `I`
//!    (`|I| <= K`; sparse secrets keep `K` small).
//! 2. **CoeffToSlot** evaluates `c B'`, where `B'` is the inverse special FFT without its bit
//!    reversal (`encoder::special_fft_stages`), split into `cts_levels` matrices of merged
//!    radix-2 stages. Each matrix is a BSGS linear transform with hoisted baby steps. The
//!    constant `c = Delta / (2 q_0 K)` is carried by the ciphertext's scale. Conjugation then
//!    separates the real and imaginary parts, `u = (t_k / q_0) / K` in bit-reversed order. The
//!    CoeffToSlot levels also bring that large bookkeeping scale down to EvalMod's.
//! 3. **EvalMod** ([`evalmod`]) turns `u` into `sin(2 pi t_k / q_0) ~ 2 pi m_k / q_0`.
//! 4. **SlotToCoeff** recombines the two halves (times `i`, an exact product by `X^(N/2)`) and
//!    evaluates `c' B`, with `c' = q_0 / (2 pi Delta)` carried by the scale and the way back
//!    to `Delta` shared among its levels. The bit reversals cancel, and the slots hold the
//!    message again, `stc_levels` levels lower.
//!
//! Levels consumed: `cts_levels + chebyshev_depth(d) + r + stc_levels`.

pub mod evalmod;
pub mod linear;
pub mod real;

use crate::encoder::{special_fft_stages, DiagonalMatrix};
use crate::error::{CkksError, Result};
use crate::evaluator::Evaluator;
use crate::keys::{Ciphertext, EvaluationKeys, KeyGenerator, SecretKey, SwitchingKey};
use crate::{CkksContext, KeySwitchPlan, Plaintext};
use num_complex::Complex64;
use std::f64::consts::PI;
use std::sync::Arc;
use tessera_backend::Backend;
use tessera_math::{ConversionMode, RnsPoly};

/// The real and imaginary halves CoeffToSlot produces.
pub type Halves<P> = (Ciphertext<P>, Ciphertext<P>);

/// The knobs of a bootstrapping circuit.
#[derive(Clone, Debug, PartialEq)]
pub struct BootstrapParameters {
    /// Levels (merged radix groups) of CoeffToSlot.
    pub cts_levels: usize,
    /// Levels of SlotToCoeff.
    pub stc_levels: usize,
    /// Bound `K` on the integer overflow `|I|` after ModRaise.
    pub k_bound: f64,
    /// Degree of the Chebyshev interpolant of the cosine.
    pub cheb_degree: usize,
    /// Double-angle steps `r`.
    pub double_angle: usize,
    /// Sparse-secret encapsulation: ModRaise under an ephemeral secret of this Hamming weight
    /// (switched to before ModRaise, and back right after), so `|I|` stays within `K` even
    /// when the user's secret is dense. `None` when the set's own secret is already sparse.
    pub encapsulation: Option<usize>,
    /// ARK's OF-Limb plaintexts for the DFT diagonals (one limb stored, extended on use).
    pub of_limb: bool,
    /// ARK's minimum key-switching in the DFTs (two rotation keys per matrix; the baby steps
    /// lose their hoisting).
    pub min_ks: bool,
    /// Hoisted baby steps: one ModUp of the DFT input shared by its baby-step rotations
    /// (`rotate_hoisted`). `false` rotates each baby step on its own, as a machine does whose
    /// rotation macro-instruction recomputes ModUp (REED: its NTTs run beside the MAS units
    /// that bound a dnum = L + 1 rotation, reed.md Fig. 7), so the extended digits need not be
    /// kept. Minimum key-switching has no hoisting either way.
    pub hoisting: bool,
    /// Double hoisting in the DFTs (with `hoisting`, without `min_ks`): baby steps, diagonal
    /// products and giant-step rotations stay over `Q_l P`, and one ModDown per part ends
    /// each matrix ([`crate::ExtCiphertext`]; Bossuat et al., Eurocrypt 2021). The diagonals
    /// are then encoded over the special limbs too.
    pub double_hoisting: bool,
    /// META-BTS (Bae, Cheon, Kim, Stehle, CCS 2022): a second bootstrapping of the first
    /// one's error, scaled up by `2^k` with this `k`, then scaled back down and subtracted.
    /// Costs a second bootstrapping and one more level; pick `k` a little below the first
    /// bootstrapping's worst-slot precision (`None`: one bootstrapping).
    pub meta_log_scale: Option<u32>,
    /// Slots of the ciphertexts bootstrapped (a power of two up to N/2; `None`: N/2). Sparse
    /// packing first sums the `N / (2 s)` conjugates that fix the subring `Z[X^(N/(2s))]`
    /// (SubSum), which clears the coefficients ModRaise put between the message's.
    pub slots: Option<usize>,
}

impl BootstrapParameters {
    /// A built-in bootstrapping parameter set: the CKKS preset it runs on and its circuit,
    /// both from that preset's file in `configs/params/` (its `[bootstrap]` table). `NAME`
    /// means the `NAME-boot` file where there is one: `ark` runs on `ark-boot` (ark.md
    /// section III-B), `lattigo` on `lattigo-boot`, `h3` on `h3-boot`, `reed` on
    /// `reed-boot` (reed.md Table 3), `reed-dnum3` on `reed-dnum3-boot`, `cifher` on
    /// `cifher-boot` (with minimum key-switching), and `test-boot` and `test-boot-double` on
    /// themselves (for CI). Files on disk: [`crate::params_file::resolve_bootstrap`].
    pub fn preset(name: &str) -> Result<(&'static str, Self)> {
        match crate::params_file::preset_text(&format!("{name}-boot"))
            .or(crate::params_file::preset_text(name))
        {
            Some(_) => {
                let (builtin, file) = crate::params_file::load_bootstrap(name)?;
                let bp = file.bootstrap.expect("load_bootstrap checks it");
                Ok((builtin.expect("a built-in name"), bp))
            }
            None => Err(CkksError::UnknownPreset(
                name.to_string(),
                crate::params_file::bootstrap_preset_names().join(", "),
            )),
        }
    }

    /// Estimated log2 of the probability that one bootstrapping of a degree-`n` ciphertext
    /// fails because some `|I_k| > K`, for a ModRaise secret of Hamming weight `h`:
    /// `I_k` is the rounding of a sum of `h + 1` independent uniforms on `[-1/2, 1/2)`
    /// (`c_0` and the `h` terms of `c_1 s`), taken as Gaussian with variance `(h + 1) / 12`
    /// (central limit; the true tails are lighter), over `n` coefficients.
    pub fn failure_log2(&self, n: usize, h: usize) -> f64 {
        let sigma = ((h as f64 + 1.0) / 12.0).sqrt();
        let z = (self.k_bound + 0.5) / (sigma * std::f64::consts::SQRT_2);
        (n as f64).log2() + erfc(z).log2()
    }

    /// Levels the circuit consumes (META-BTS: one more, for scaling the correction down).
    pub fn depth(&self) -> usize {
        self.cts_levels
            + evalmod::chebyshev_depth(self.cheb_degree)
            + self.double_angle
            + self.stc_levels
            + usize::from(self.meta_log_scale.is_some())
    }
}

/// `erfc(x)` for `x >= 0` (Numerical Recipes' Chebyshev fit, relative error below 1.2e-7):
/// enough for a failure-probability estimate.
fn erfc(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    t * (-x * x - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
        .exp()
}

/// The keys a bootstrapping circuit uses.
#[derive(Clone, Debug)]
pub struct BootstrapKeys {
    /// Relinearisation, the CoeffToSlot / SlotToCoeff rotations and conjugation.
    pub eval: EvaluationKeys,
    /// Sparse-secret encapsulation: user secret to the ephemeral sparse one, and back.
    pub encapsulation: Option<(SwitchingKey, SwitchingKey)>,
}

/// A bootstrapping circuit prepared for one parameter set and slot count.
pub struct Bootstrapper {
    ctx: Arc<CkksContext>,
    bp: BootstrapParameters,
    cts: Vec<DiagonalMatrix>,
    stc: Vec<DiagonalMatrix>,
    cheb: Vec<f64>,
    cache: linear::DiagonalCache,
    /// Whether encoded diagonals are kept for later bootstrappings (see
    /// [`Bootstrapper::keep_plaintexts`]).
    keep_plaintexts: bool,
}

/// Merges consecutive stages into `groups` matrices (earlier groups take the extra stages).
fn merge_stages(stages: &[DiagonalMatrix], groups: usize) -> Vec<DiagonalMatrix> {
    let n = stages.len();
    let (base, extra) = (n / groups, n % groups);
    let mut out = Vec::with_capacity(groups);
    let mut it = stages.iter();
    for g in 0..groups {
        let take = base + usize::from(g < extra);
        let mut m: Option<DiagonalMatrix> = None;
        for st in it.by_ref().take(take) {
            m = Some(match m {
                None => st.clone(),
                Some(acc) => st.mul(&acc),
            });
        }
        if let Some(m) = m {
            out.push(m);
        }
    }
    out
}

impl Bootstrapper {
    /// Prepares the circuit; checks that the chain is deep enough.
    pub fn new(ctx: &Arc<CkksContext>, bp: BootstrapParameters) -> Result<Self> {
        let params = ctx.params();
        let bad = |name: &'static str, v: usize, allowed: String| CkksError::InvalidParameter {
            name,
            value: v.to_string(),
            allowed,
        };
        let s = bp.slots.unwrap_or(params.max_slots());
        if !s.is_power_of_two() || s < 2 || s > params.max_slots() {
            return Err(bad(
                "slots",
                s,
                format!("a power of two from 2 to N/2 = {}", params.max_slots()),
            ));
        }
        let log_s = s.trailing_zeros() as usize;
        for (name, v) in [("cts_levels", bp.cts_levels), ("stc_levels", bp.stc_levels)] {
            if v == 0 || v > log_s {
                return Err(bad(name, v, format!("1 to log2(slots) = {log_s}")));
            }
        }
        if bp.cheb_degree < 2 || bp.cheb_degree > 255 {
            return Err(bad("cheb_degree", bp.cheb_degree, "2 to 255".into()));
        }
        if let Some(k) = bp.meta_log_scale {
            if !(1..=40).contains(&k) {
                return Err(bad("meta_log_scale", k as usize, "1 to 40".into()));
            }
        }
        if !(bp.k_bound >= 1.0 && bp.k_bound <= 1e6) {
            return Err(CkksError::InvalidParameter {
                name: "k_bound",
                value: bp.k_bound.to_string(),
                allowed: "1 to 1e6".into(),
            });
        }
        // With double-prime rescaling every level is two primes, and the base modulus that
        // ModRaise starts from is the product of the bottom two.
        let r = params.primes_per_rescale();
        let usable = (params.max_level() - params.base_level()) / r;
        if bp.depth() >= usable {
            return Err(bad(
                "bootstrapping depth",
                bp.depth(),
                format!(
                    "below the {usable} levels of the chain (L = {}, {r} prime(s) per level; at least one must remain)",
                    params.max_level()
                ),
            ));
        }
        let cts = merge_stages(&special_fft_stages(s, true), bp.cts_levels);
        let stc = merge_stages(&special_fft_stages(s, false), bp.stc_levels);
        let cheb = evalmod::chebyshev_coefficients(
            evalmod::eval_mod_function(bp.k_bound, bp.double_angle),
            bp.cheb_degree,
        );
        Ok(Self {
            ctx: ctx.clone(),
            bp,
            cts,
            stc,
            cheb,
            cache: Default::default(),
            keep_plaintexts: true,
        })
    }

    /// The circuit's parameters.
    pub fn parameters(&self) -> &BootstrapParameters {
        &self.bp
    }

    /// The encoded DFT diagonals kept so far: (count, bytes).
    pub fn plaintext_store(&self) -> (usize, usize) {
        (self.cache.len(), self.cache.bytes())
    }

    /// Whether to keep the encoded DFT diagonals between bootstrappings (the default): a
    /// circuit that bootstraps once (the simulator's bootstrapping workload) encodes each
    /// diagonal once either way, and at `ark` the kept diagonals are gigabytes. Encoding is
    /// deterministic, so a diagonal encoded again is the same plaintext.
    pub fn keep_plaintexts(mut self, keep: bool) -> Self {
        self.keep_plaintexts = keep;
        self
    }

    fn encoding(&self, matrix_id: usize) -> linear::Encoding<'_> {
        linear::Encoding {
            cache: self.keep_plaintexts.then_some(&self.cache),
            matrix_id,
            of_limb: self.bp.of_limb,
            min_ks: self.bp.min_ks,
            hoisting: self.bp.hoisting,
            double_hoisting: self.bp.double_hoisting,
        }
    }

    /// Generates every key the circuit needs for the user secret `sk`.
    pub fn keygen(&self, kg: &mut KeyGenerator, sk: &SecretKey) -> Result<BootstrapKeys> {
        self.keygen_with(kg, sk, &[])
    }

    /// [`Bootstrapper::keygen`] plus rotation keys for the application's own `rotations`
    /// (one set of evaluation keys serves both).
    pub fn keygen_with(
        &self,
        kg: &mut KeyGenerator,
        sk: &SecretKey,
        rotations: &[i64],
    ) -> Result<BootstrapKeys> {
        let mut all = self.rotations();
        all.extend_from_slice(rotations);
        all.sort_unstable();
        all.dedup();
        let eval = kg.evaluation_keys(sk, &all, true)?;
        self.with_encapsulation(kg, sk, eval)
    }

    /// [`Bootstrapper::keygen`] with the rotation and conjugation keys made on first use
    /// ([`KeyGenerator::evaluation_keys_on_demand`]): the host holds one rotation key at a
    /// time. For the key owner's own runs (traces, benchmarks) where `dnum = L + 1` keys do
    /// not all fit in memory; the results are those of [`Bootstrapper::keygen`].
    pub fn keygen_on_demand(&self, kg: &mut KeyGenerator, sk: &SecretKey) -> Result<BootstrapKeys> {
        let eval = kg.evaluation_keys_on_demand(sk, &self.rotations(), true)?;
        self.with_encapsulation(kg, sk, eval)
    }

    /// The bootstrapping keys: `eval` plus the sparse-secret encapsulation keys if the
    /// circuit uses them. The dense-to-sparse key is RLWE under the sparse secret, so it is
    /// made only over the moduli it is used at, the base level and the special primes that
    /// cover it ([`KeySwitchPlan::base`], as Lattigo does): at the full modulus (about 1,700
    /// bits at `ark-boot`) an h = 32 secret is far from secure, and recovering it would reveal
    /// the dense secret. The sparse-to-dense key is RLWE under the user's dense secret and is
    /// used right after ModRaise, at the top level, so it keeps the set's full decomposition.
    fn with_encapsulation(
        &self,
        kg: &mut KeyGenerator,
        sk: &SecretKey,
        eval: EvaluationKeys,
    ) -> Result<BootstrapKeys> {
        let encapsulation = match self.bp.encapsulation {
            None => None,
            Some(h) => {
                let mut sparse = kg.sparse_secret_key(h)?;
                // The ephemeral secret belongs to the user's key set.
                sparse.id = sk.key_set();
                let base = KeySwitchPlan::base(self.ctx.params());
                let to_sparse = kg.switching_key_for(&sparse, sk.poly(), &base)?;
                let to_dense = kg.switching_key(sk, sparse.poly())?;
                Some((to_sparse, to_dense))
            }
        };
        Ok(BootstrapKeys {
            eval,
            encapsulation,
        })
    }

    /// Hamming weight of the secret ModRaise runs under (the ephemeral one, or the set's).
    pub fn modraise_hamming_weight(&self) -> Option<usize> {
        self.bp
            .encapsulation
            .or(match self.ctx.params().literal().secret {
                crate::params::SecretDistribution::Sparse { hamming_weight } => {
                    Some(hamming_weight)
                }
                crate::params::SecretDistribution::Ternary => None,
            })
    }

    /// Estimated log2 failure probability per bootstrapping ([`BootstrapParameters::failure_log2`]);
    /// for a dense ternary ModRaise secret, `h` is taken as `2N/3`.
    pub fn failure_log2(&self) -> f64 {
        let n = self.ctx.params().n();
        let h = self.modraise_hamming_weight().unwrap_or(2 * n / 3);
        self.bp.failure_log2(n, h)
    }

    /// Level of the output (a chain index: `r` primes go per level).
    pub fn output_level(&self) -> usize {
        let params = self.ctx.params();
        params.max_level() - params.primes_per_rescale() * self.bp.depth()
    }

    /// Levels left for the user after bootstrapping (rescales before the base modulus).
    pub fn levels_left(&self) -> usize {
        let params = self.ctx.params();
        (self.output_level() - params.base_level()) / params.primes_per_rescale()
    }

    /// The base modulus ModRaise reads the ciphertext modulo: `q_0`, or `q_0 q_1` with
    /// double-prime rescaling.
    fn base_modulus(&self) -> f64 {
        let params = self.ctx.params();
        params.rescale_divisor(params.base_level())
    }

    /// Slots the circuit bootstraps.
    pub fn slots(&self) -> usize {
        self.bp.slots.unwrap_or(self.ctx.params().max_slots())
    }

    /// SubSum's rotations for sparse packing: `s * 2^i` for `2^i < N / (2 s)`.
    fn subsum_steps(&self) -> Vec<usize> {
        let (s, full) = (self.slots(), self.ctx.params().max_slots());
        std::iter::successors(Some(s), |&r| Some(2 * r))
            .take_while(|&r| r < full)
            .collect()
    }

    /// Rotation steps whose keys the circuit needs (conjugation is needed too).
    pub fn rotations(&self) -> Vec<i64> {
        let mut r: std::collections::BTreeSet<i64> =
            self.subsum_steps().into_iter().map(|x| x as i64).collect();
        for m in self.cts.iter().chain(&self.stc) {
            r.extend(linear::BsgsPlan::new_for(m, self.bp.min_ks).rotations_for(self.bp.min_ks));
        }
        r.into_iter().collect()
    }

    /// The CoeffToSlot and SlotToCoeff matrices in the order they apply (for tests and for
    /// counting rotations and plaintexts), with entries of size about 1: CoeffToSlot is
    /// `s B'` (the inverse transform without its `1/s`), SlotToCoeff is `B`. Their constants,
    /// `Delta / (2 q_0 K s)` and `q_0 / (2 pi Delta)`, are carried by the ciphertext's scale
    /// instead: a diagonal encoded at scale `q_l` keeps about `log2(q_l)` bits of its
    /// largest entry, which is too few for tiny entries and wasted on huge ones.
    pub fn matrices(&self) -> (Vec<DiagonalMatrix>, Vec<DiagonalMatrix>) {
        let cts = self
            .cts_first()
            .into_iter()
            .chain(self.cts.iter().skip(1).cloned());
        (cts.collect(), self.stc.clone())
    }

    /// The first CoeffToSlot matrix, scaled by the slot count (see [`Self::matrices`]): the
    /// one matrix a bootstrapping copies (the others are used as held; copying all of them
    /// per bootstrapping was most of the memory traffic of recording one, issue 25).
    fn cts_first(&self) -> Option<DiagonalMatrix> {
        let mut m = self.cts.first()?.clone();
        m.scale(Complex64::new(self.slots() as f64, 0.0));
        Some(m)
    }

    /// ModRaise: a ciphertext dropped to the base level, read modulo the base modulus (`q_0`,
    /// or `q_0 q_1` with double-prime rescaling) as centered integers and extended to the
    /// whole chain (one limb: a limb extension; two: the exact centered BConv).
    pub fn mod_raise<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        ct: &Ciphertext<B::Poly>,
    ) -> Result<Ciphertext<B::Poly>> {
        let base = self.ctx.params().base_level();
        if ct.level < base {
            return Err(CkksError::OutOfLevels {
                op: "ModRaise",
                needed: base,
                level: ct.level,
            });
        }
        let ct = if ct.level > base {
            ev.drop_levels(ct, ct.level - base)?
        } else {
            ct.clone()
        };
        let top = self.ctx.params().max_level();
        let chain = self.ctx.chain_limbs(top);
        let base_limbs = self.ctx.chain_limbs(base);
        let rest = &chain[base_limbs.len()..];
        let b = ev.backend_mut();
        let mut parts = Vec::with_capacity(2);
        for p in [&ct.c0, &ct.c1] {
            let mut c = p.clone();
            b.intt(&mut c)?;
            let mut up = if base == 0 {
                b.extend_limb(&c, &chain)?
            } else {
                let ext = b.bconv(&c, rest, ConversionMode::ExactCentered)?;
                b.concat(&[&c, &ext], &chain)?
            };
            b.ntt(&mut up)?;
            parts.push(up);
        }
        let c1 = parts.pop().expect("two parts");
        let c0 = parts.pop().expect("two parts");
        Ok(Ciphertext {
            c0,
            c1,
            level: top,
            scale: ct.scale,
            slots: ct.slots,
            key_set: ct.key_set,
        })
    }

    /// The monomial `sign * X^(N/2)` as a scale-1 plaintext at `level`: multiplies every slot
    /// by `sign * i` exactly.
    fn times_i(&self, level: usize, sign: i64) -> Result<Plaintext> {
        let n = self.ctx.params().n();
        let mut coeffs = vec![0i64; n];
        coeffs[n / 2] = sign;
        let mut poly =
            RnsPoly::from_signed(self.ctx.ring(), &self.ctx.chain_limbs(level), &coeffs)?;
        poly.ntt()?;
        Ok(Plaintext {
            poly,
            level,
            scale: 1.0,
            slots: self.slots(),
            shape: None,
        })
    }

    /// CoeffToSlot on a raised ciphertext: returns the real and imaginary halves `u` at the
    /// scale of the prime EvalMod starts with.
    pub fn coeff_to_slot<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        x: &Ciphertext<B::Poly>,
        keys: &EvaluationKeys,
    ) -> Result<Halves<B::Poly>> {
        let params = self.ctx.params();
        let q0 = self.base_modulus();
        let s = self.slots() as f64;
        let first = self.cts_first();
        let cts: Vec<&DiagonalMatrix> = first.iter().chain(self.cts.iter().skip(1)).collect();
        // Sparse packing: SubSum multiplies the message coefficients by N / (2 s) and clears
        // the others.
        let mut x = x.clone();
        for step in self.subsum_steps() {
            let r = ev.rotate(&x, step as i64, keys)?;
            ev.add_assign(&mut x, &r)?;
        }
        let gap = params.max_slots() as f64 / s;
        // Values times Delta / (2 q_0 K s gap): the same polynomial read at that larger scale.
        let mut y = Ciphertext {
            scale: 2.0 * q0 * self.bp.k_bound * s * gap,
            ..x.clone()
        };
        // EvalMod runs at the scale of the primes it rescales by (so its canonical scales
        // stay put): each CoeffToSlot level takes an equal share of the way from the large
        // bookkeeping scale down to that prime, its diagonals encoded at q_l times the share
        // (about 2^40 for ark; they need about 2^-34 relative precision).
        let target = params.rescale_divisor(x.level - params.primes_per_rescale() * cts.len());
        let share = (target / y.scale).powf(1.0 / cts.len() as f64);
        for (i, m) in cts.iter().enumerate() {
            let out = y.scale * share;
            y = linear::apply(ev, &self.ctx, m, &y, keys, Some(out), self.encoding(i))?;
        }
        let conj = ev.conjugate(&y, keys)?;
        let re = ev.add(&y, &conj)?;
        let diff = ev.sub(&y, &conj)?;
        let minus_i = self.times_i(diff.level, -1)?;
        let im = ev.mul_plain(&diff, &minus_i)?;
        Ok((re, im))
    }

    /// SlotToCoeff of the two EvalMod outputs; `delta` is the scale the input had.
    pub fn slot_to_coeff<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        re: &Ciphertext<B::Poly>,
        im: &Ciphertext<B::Poly>,
        delta: f64,
        keys: &EvaluationKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        let q0 = self.base_modulus();
        let stc = &self.stc;
        let plus_i = self.times_i(im.level, 1)?;
        let im_i = ev.mul_plain(im, &plus_i)?;
        let y = ev.add(re, &im_i)?;
        // Values times q_0 / (2 pi Delta): the same polynomial read at a smaller scale. Each
        // SlotToCoeff level then takes an equal share of the way to the input's Delta.
        let mut y = Ciphertext {
            scale: y.scale * 2.0 * PI * delta / q0,
            ..y
        };
        let share = (delta / y.scale).powf(1.0 / stc.len() as f64);
        for (i, m) in stc.iter().enumerate() {
            let out = y.scale * share;
            let enc = self.encoding(100 + i);
            y = linear::apply(ev, &self.ctx, m, &y, keys, Some(out), enc)?;
        }
        Ok(y)
    }

    /// Bootstraps a ciphertext of the circuit's slot count (any level; it is dropped to the
    /// base level first). With `meta_log_scale = Some(k)`, META-BTS: `y = BTS(x)`, then
    /// `x - y` at the base level holds the error `-e` exactly; `BTS(2^k (x - y))` brings it
    /// back with a fresh error `e'`, and `y + 2^-k BTS(...)` leaves `e' / 2^k`.
    ///
    /// ```
    /// use tessera_backend::CpuBackend;
    /// use tessera_ckks::bootstrap::{BootstrapParameters, Bootstrapper};
    /// use tessera_ckks::{decrypt, CkksContext, Evaluator, KeyGenerator, Parameters};
    /// use tessera_math::sampling::Seed;
    /// // test-boot: N = 2^10, insecure, for trials.
    /// let ctx = CkksContext::new(Parameters::preset("test-boot")?)?;
    /// let boot = Bootstrapper::new(&ctx, BootstrapParameters::preset("test-boot")?.1)?;
    /// let mut kg = KeyGenerator::from_seed(&ctx, &Seed([2; 32]))?;
    /// let sk = kg.secret_key()?;
    /// let keys = boot.keygen(&mut kg, &sk)?;
    /// let (slots, base) = (ctx.params().max_slots(), ctx.params().base_level());
    /// let x: Vec<f64> = (0..slots).map(|i| (i as f64 / slots as f64) - 0.5).collect();
    /// // At the base level: no levels left to compute with.
    /// let pt = ctx.encode_real(&x, slots, base, ctx.params().default_scale())?;
    /// let ct = kg.encrypt_sk(&pt, &sk)?;
    /// let mut ev = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone()))?;
    /// let low = ev.load(&ct)?;
    /// let fresh = boot.bootstrap(&mut ev, &low, &keys)?;
    /// assert_eq!(fresh.level, boot.output_level());
    /// let out = ctx.decode(&decrypt(&ev.store(&fresh)?, &sk)?)?;
    /// assert!(out.iter().zip(&x).all(|(o, v)| (o.re - v).abs() < 1e-3));
    /// # Ok::<(), tessera_ckks::CkksError>(())
    /// ```
    pub fn bootstrap<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        ct: &Ciphertext<B::Poly>,
        keys: &BootstrapKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        let Some(k) = self.bp.meta_log_scale else {
            return self.bootstrap_once(ev, ct, keys);
        };
        let params = self.ctx.params();
        let base = params.base_level();
        let x = if ct.level > base {
            ev.drop_levels(ct, ct.level.saturating_sub(base))?
        } else {
            ct.clone()
        };
        let y = self.bootstrap_once(ev, &x, keys)?;
        // The first result back at the base level, at exactly the input's scale (the
        // bootstrapping returns it up to floating-point rounding of its bookkeeping).
        let y_low = Ciphertext {
            scale: x.scale,
            ..ev.drop_levels(&y, y.level - base)?
        };
        let minus_e = ev.sub(&x, &y_low)?;
        let scaled = ev.mul_int(&minus_e, 1i64 << k)?;
        let z = self.bootstrap_once(ev, &scaled, keys)?;
        // 2^-k as a constant encoded at the divisor of the next rescale: the scale stays.
        let divisor = params.rescale_divisor(z.level);
        let corr = ev.mul_const(&z, 2f64.powi(-(k as i32)), divisor)?;
        let corr = ev.rescale(&corr)?;
        let y = ev.drop_levels(&y, y.level - corr.level)?;
        let corr = Ciphertext {
            scale: y.scale,
            ..corr
        };
        ev.add(&y, &corr)
    }

    /// One bootstrapping (the circuit without META-BTS).
    fn bootstrap_once<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        ct: &Ciphertext<B::Poly>,
        keys: &BootstrapKeys,
    ) -> Result<Ciphertext<B::Poly>> {
        self.bootstrap_once_times(ev, ct, keys, 1.0)
    }

    /// [`Bootstrapper::bootstrap_once`] returning `fraction` times the message (a relabelling
    /// of EvalMod's output scale: no operation, no level), at the input's scale.
    fn bootstrap_once_times<B: Backend>(
        &self,
        ev: &mut Evaluator<B>,
        ct: &Ciphertext<B::Poly>,
        keys: &BootstrapKeys,
        fraction: f64,
    ) -> Result<Ciphertext<B::Poly>> {
        let delta = ct.scale;
        if ct.slots != self.slots() {
            return Err(CkksError::InvalidParameter {
                name: "ciphertext slots",
                value: ct.slots.to_string(),
                allowed: format!(
                    "{} (this circuit's slot count; build a circuit for the other count with BootstrapParameters::slots, or keygen(bootstrap_slots=...) in Python)",
                    self.slots()
                ),
            });
        }
        if self.bp.encapsulation.is_some() != keys.encapsulation.is_some() {
            return Err(CkksError::MissingKey(
                "sparse-secret encapsulation keys do not match the circuit".into(),
            ));
        }
        let base = self.ctx.params().base_level();
        if ct.level < base {
            return Err(CkksError::OutOfLevels {
                op: "bootstrap",
                needed: base,
                level: ct.level,
            });
        }
        let low = if ct.level > base {
            ev.drop_levels(ct, ct.level - base)?
        } else {
            ct.clone()
        };
        let raised = match &keys.encapsulation {
            Some((to_sparse, to_dense)) => {
                let sparse = ev.switch_key(&low, to_sparse)?;
                let raised = self.mod_raise(ev, &sparse)?;
                ev.switch_key(&raised, to_dense)?
            }
            None => self.mod_raise(ev, &low)?,
        };
        let (re, im) = self.coeff_to_slot(ev, &raised, &keys.eval)?;
        let mut re = evalmod::eval_mod(ev, &re, &self.cheb, self.bp.double_angle, &keys.eval)?;
        let mut im = evalmod::eval_mod(ev, &im, &self.cheb, self.bp.double_angle, &keys.eval)?;
        re.scale /= fraction;
        im.scale /= fraction;
        self.slot_to_coeff(ev, &re, &im, delta, &keys.eval)
    }
}
