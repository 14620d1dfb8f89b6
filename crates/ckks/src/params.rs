//! CKKS parameters: ring degree, the modulus chain `Q = q_0 ... q_L`, the special modulus
//! `P = p_0 ... p_(K-1)` for hybrid key switching, the number of key-switching digits `dnum`
//! (any value from 1 to L+1: the L+1 chain limbs are split into `dnum` contiguous digits whose
//! sizes differ by at most one; `alpha` is the largest), the default scale, the secret distribution
//! and the error width, with validation and a 128-bit security check.
//!
//! ## Security
//! `log2(PQ)` must not exceed the largest modulus the Homomorphic Encryption Standard allows for
//! N at 128-bit classical security with a uniform ternary secret and error sigma = 3.2
//! (Albrecht et al., "Homomorphic Encryption Security Standard", HomomorphicEncryption.org,
//! Nov. 2018, Table 1, ternary rows: N = 2^10..2^15 -> 27, 54, 109, 218, 438, 881 bits). The
//! standard stops at N = 2^15; for N = 2^16 we use 1772 bits, the extension of the same table
//! that OpenFHE ships (`stdlatticeparms.cpp`, `HEStd_ternary`, `HEStd_128_classic`). No bound is
//! claimed for N = 2^17 or for sparse (fixed Hamming weight) secrets, whose security the table
//! does not cover: such sets are refused unless they are named `test-*` *and* ask for it
//! ([`ParametersLiteral::allow_insecure`], set by the `test-*` presets), and a `test-*` set
//! always reports itself as not secure. The first insecure set a process builds prints one
//! warning to stderr ([`warn_insecure_once`]). docs/security.md lists every preset's bound.

use crate::error::{CkksError, Result};
use std::sync::Arc;
use tessera_math::primes::{generate_ntt_primes, nearest_ntt_prime};
use tessera_math::RingContext;

/// Secret-key distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretDistribution {
    /// Uniform on {-1, 0, 1}.
    Ternary,
    /// Exactly `h` non-zero coefficients in {-1, 1}.
    Sparse {
        /// `h`, the number of non-zero coefficients.
        hamming_weight: usize,
    },
}

/// How a level is dropped after a multiplication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rescaling {
    /// Divide by one prime `q_l ~ Delta` (the usual CKKS rescale).
    SinglePrime,
    /// Divide by the product of two primes `q_l q_(l-1) ~ Delta` (CiFHER's double-prime
    /// rescaling with 32-bit words; cifher.md section III-C).
    DoublePrime,
}

impl Rescaling {
    /// Chain primes one rescale removes.
    pub fn primes(self) -> usize {
        match self {
            Rescaling::SinglePrime => 1,
            Rescaling::DoublePrime => 2,
        }
    }
}

/// Which key-switching algorithm a set's switching keys are made for.
///
/// Both are the same computation (ModUp of each digit to `PQ`, inner product with the key,
/// ModDown by `P`); they differ in what the set promises about its digits and `P`, and so
/// in how they are validated, named and reported. There is no second code path: a boosted
/// set is a hybrid set with `dnum = 1` whose `P` is at least `Q`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeySwitching {
    /// Hybrid key switching (Han and Ki, CT-RSA 2020; ark.md ref. [34]): the chain is split
    /// into `dnum` digits and `P` must cover the widest digit (to within one bit).
    #[default]
    Hybrid,
    /// Boosted key switching (the modulus-raising key switch of Gentry, Halevi and Smart,
    /// CRYPTO 2012, which CraterLake, ISCA 2022, accelerates as "boosted keyswitching"):
    /// no digit decomposition. The whole of `x` is raised from `Q` to `PQ` with `P >= Q`,
    /// multiplied by one key over `PQ` and divided by `P`. Hybrid with `dnum = 1` is the
    /// same algorithm (ark.md: "alpha = (L+1)/dnum" special limbs, so `L+1` at `dnum = 1`);
    /// `Boosted` additionally requires `P >= Q`, so the product term of the switching noise,
    /// `c e / P`, stays of the order of `sqrt(N) sigma` (hundreds of units at N = 2^12, far
    /// below any scale; measured against hybrid in docs/parameters.md). The key lives at
    /// `PQ ~ Q^2`, so at a given N the 128-bit bound leaves about half the chain hybrid gets
    /// (docs/parameters.md, "Boosted key switching").
    Boosted,
}

impl KeySwitching {
    /// The name a parameter file writes (`key_switching = "..."`).
    pub fn as_str(self) -> &'static str {
        match self {
            KeySwitching::Hybrid => "hybrid",
            KeySwitching::Boosted => "boosted",
        }
    }
}

/// Special-prime sizes for boosted key switching over a chain of `log_q` bit sizes: the
/// fewest primes, none wider than the widest chain prime (so a machine whose word holds the
/// chain holds them), whose sizes sum to at least one bit more than the chain's, spread
/// evenly, and none narrower than 17 bits (the narrowest prime a file may ask for) unless the
/// chain's widest is. Generated primes lie just under `2^bits` (the largest NTT-friendly
/// ones, within far less than a bit of it at any N here), and each chain prime is under its
/// own `2^bits`, so `P >= Q` follows; [`Parameters::new`] checks it on the primes generated.
pub fn boosted_special_bits(log_q: &[u32]) -> Vec<u32> {
    let widest = log_q.iter().copied().max().unwrap_or(0).max(1);
    let total: u32 = log_q.iter().sum::<u32>() + 1;
    let k = total.div_ceil(widest);
    let (base, extra) = (total / k, total % k);
    (0..k)
        .map(|i| (base + u32::from(i < extra)).max(widest.min(17)))
        .collect()
}

/// A parameter set described by prime sizes; [`Parameters::new`] generates the primes.
#[derive(Clone, Debug, PartialEq)]
pub struct ParametersLiteral {
    /// Name; insecure sets must start with `test-`.
    pub name: String,
    /// log2 of the ring degree.
    pub log_n: u32,
    /// Bit sizes of the chain primes `q_0, ..., q_L`.
    pub log_q: Vec<u32>,
    /// Bit sizes of the special primes `p_0, ..., p_(K-1)`.
    pub log_p: Vec<u32>,
    /// Number of key-switching digits, 1 to L+1.
    pub dnum: usize,
    /// The key-switching algorithm (`Boosted` needs `dnum = 1` and `P >= Q`).
    pub key_switching: KeySwitching,
    /// log2 of the default scale Delta.
    pub log_default_scale: u32,
    /// Secret distribution.
    pub secret: SecretDistribution,
    /// Standard deviation of the error distribution.
    pub sigma: f64,
    /// Rescaling mode.
    pub rescaling: Rescaling,
    /// Extra special primes (of the largest `log_p` size) kept in the ring for per-level
    /// dynamic decomposition (h3.md section 3.1): at lower levels the modulus budget freed by
    /// the shorter chain lets a key use more special primes and so larger digits. 0 still
    /// allows dynamic plans, within the `log_p` primes.
    pub dynamic_special: usize,
    /// Where the numbers come from.
    pub source: &'static str,
    /// The caller asks for a set that may fail the 128-bit check (for tests only; it must also
    /// be named `test-*`). `false` refuses an insecure set whatever its name.
    pub allow_insecure: bool,
}

/// Largest `log2(PQ)` for 128-bit classical security with a ternary secret (see the module
/// documentation for the sources), or `None` where no cited table covers `n`.
pub fn max_log_qp_128(n: usize) -> Option<u32> {
    match n {
        1024 => Some(27),
        2048 => Some(54),
        4096 => Some(109),
        8192 => Some(218),
        16384 => Some(438),
        32768 => Some(881),
        65536 => Some(1772),
        _ => None,
    }
}

/// The outcome of the security check.
#[derive(Clone, Debug, PartialEq)]
pub struct SecurityReport {
    /// `log2(P * Q)` of the generated primes.
    pub log_qp: f64,
    /// The bound for N, if a cited table covers it.
    pub bound: Option<u32>,
    /// Whether the set meets 128-bit security by that bound (dense ternary secrets only).
    /// Always `false` for a model-only set.
    pub secure_128: bool,
    /// The set opted out of the check as a simulator-only set (`security = "model-only"`
    /// in its file, [`Parameters::new_model_only`]).
    pub model_only: bool,
    /// One line for people.
    pub summary: String,
}

/// Validated parameters with their primes.
#[derive(Clone, Debug)]
pub struct Parameters {
    literal: ParametersLiteral,
    q: Vec<u64>,
    p: Vec<u64>,
    p_extra: Vec<u64>,
    security: SecurityReport,
}

const SECURITY_SOURCE: &str =
    "HE Standard 2018 Table 1, ternary, 128-bit classical; N = 2^16 from OpenFHE's extension";

impl Parameters {
    /// Validates a literal, generates its primes (deterministically: the largest NTT-friendly
    /// primes of each size, distinct across the whole set) and checks security.
    pub fn new(lit: ParametersLiteral) -> Result<Self> {
        Self::build(lit, false)
    }

    /// [`Parameters::new`] for a set that only drives the simulator (`security =
    /// "model-only"` in a parameter file): every other check applies, but the 128-bit
    /// bound and the `test-*` naming rule do not. The set is never reported secure
    /// (`security().secure_128` is false, the summary says "NOT SECURE (model-only)"), and
    /// building one prints the insecure-set warning.
    pub fn new_model_only(lit: ParametersLiteral) -> Result<Self> {
        Self::build(lit, true)
    }

    fn build(lit: ParametersLiteral, model_only: bool) -> Result<Self> {
        let invalid =
            |name: &'static str, value: String, allowed: &str| CkksError::InvalidParameter {
                name,
                value,
                allowed: allowed.to_string(),
            };
        if !(10..=17).contains(&lit.log_n) {
            return Err(invalid("log_n", lit.log_n.to_string(), "10 to 17"));
        }
        let n = 1usize << lit.log_n;
        if lit.log_q.is_empty() {
            return Err(invalid("log_q", "[]".into(), "at least one chain prime"));
        }
        if lit.log_p.is_empty() {
            return Err(invalid(
                "log_p",
                "[]".into(),
                "at least one special prime (hybrid key switching)",
            ));
        }
        if lit.dnum == 0 || lit.dnum > lit.log_q.len() {
            return Err(invalid(
                "dnum",
                lit.dnum.to_string(),
                &format!("1 to L+1 = {} digits", lit.log_q.len()),
            ));
        }
        if lit.dynamic_special > 64 {
            return Err(invalid(
                "dynamic_special",
                lit.dynamic_special.to_string(),
                "0 to 64 extra special primes",
            ));
        }
        if lit.key_switching == KeySwitching::Boosted {
            if lit.dnum != 1 {
                return Err(invalid(
                    "dnum",
                    lit.dnum.to_string(),
                    "1 with key_switching = \"boosted\" (boosted key switching has no digit decomposition; use \"hybrid\" for dnum > 1)",
                ));
            }
            if lit.dynamic_special != 0 {
                return Err(invalid(
                    "dynamic_special",
                    lit.dynamic_special.to_string(),
                    "0 with key_switching = \"boosted\" (its one key already covers Q; per-level plans are hybrid)",
                ));
            }
        }
        if !(lit.sigma > 0.0 && lit.sigma <= 100.0) {
            return Err(invalid("sigma", lit.sigma.to_string(), "(0, 100]"));
        }
        if let SecretDistribution::Sparse { hamming_weight } = lit.secret {
            if hamming_weight == 0 || hamming_weight > n {
                return Err(invalid(
                    "hamming_weight",
                    hamming_weight.to_string(),
                    &format!("1 to N = {n}"),
                ));
            }
        }
        if lit.rescaling == Rescaling::DoublePrime && lit.log_q.len() < 3 {
            return Err(invalid(
                "log_q",
                format!("{} primes", lit.log_q.len()),
                "at least 3 primes for double-prime rescaling",
            ));
        }
        let max_scale = lit.log_q.iter().copied().max().unwrap_or(0)
            * if lit.rescaling == Rescaling::DoublePrime {
                2
            } else {
                1
            };
        if lit.log_default_scale == 0 || lit.log_default_scale > max_scale {
            return Err(invalid(
                "log_default_scale",
                lit.log_default_scale.to_string(),
                &format!("1 to {max_scale} (the size of what one rescale divides by)"),
            ));
        }
        // Primes: group equal sizes so each size is generated once, distinct across the set.
        let mut used: Vec<u64> = Vec::new();
        let take = |used: &mut Vec<u64>, bits: u32| -> Result<u64> {
            let p = generate_ntt_primes(bits, n, 1, used)?[0];
            used.push(p);
            Ok(p)
        };
        let q = if lit.rescaling == Rescaling::DoublePrime {
            // Rescaling divides by q_l q_(l-1): each such pair, from the top, is a prime just
            // under 2^b_l and the partner whose product is closest to 2^(b_l + b_(l-1)). Primes
            // taken one size at a time drift down as the sizes run out (at N = 2^16 the 24th
            // 27-bit prime is 2^26.7), and bootstrapping's EvalMod doubles any gap between
            // its scale and the divisor at every level.
            let mut q = vec![0u64; lit.log_q.len()];
            let mut l = q.len();
            while l >= 2 {
                let (hi, lo) = (lit.log_q[l - 1], lit.log_q[l - 2]);
                // The best of the few largest free primes under 2^hi, each with its nearest
                // partner: products within 0.01 bit of 2^(hi + lo) instead of 0.04 (cifher presets).
                let want = (hi + lo) as f64;
                let mut best: Option<(u64, u64, f64)> = None;
                let free = generate_ntt_primes(hi, n, PAIR_CANDIDATES, &used)
                    .or_else(|_| generate_ntt_primes(hi, n, 1, &used))?;
                for a in free {
                    let target = ((1u128 << (hi + lo)) / a as u128).min(u64::MAX as u128) as u64;
                    let mut taken = used.clone();
                    taken.push(a);
                    if let Some(b) = nearest_ntt_prime(target, n, &taken) {
                        let dev = ((a as f64).log2() + (b as f64).log2() - want).abs();
                        if best.is_none_or(|(_, _, d)| dev < d) {
                            best = Some((a, b, dev));
                        }
                    }
                }
                let (a, b, _) = best.ok_or_else(|| {
                    invalid(
                        "log_q",
                        format!("{hi} + {lo} bits at position {}", l - 1),
                        "pairs whose product has an NTT-friendly partner prime near 2^(sum)",
                    )
                })?;
                used.extend([a, b]);
                q[l - 1] = a;
                q[l - 2] = b;
                l -= 2;
            }
            if l == 1 {
                q[0] = take(&mut used, lit.log_q[0])?;
            }
            q
        } else {
            lit.log_q
                .iter()
                .map(|&b| take(&mut used, b))
                .collect::<Result<Vec<_>>>()?
        };
        let p = lit
            .log_p
            .iter()
            .map(|&b| take(&mut used, b))
            .collect::<Result<Vec<_>>>()?;
        let extra_bits = lit.log_p.iter().copied().max().unwrap_or(0);
        let p_extra = (0..lit.dynamic_special)
            .map(|_| take(&mut used, extra_bits))
            .collect::<Result<Vec<_>>>()?;
        let log_qp: f64 = q.iter().chain(&p).map(|&x| (x as f64).log2()).sum();
        let bound = max_log_qp_128(n);
        let dense = lit.secret == SecretDistribution::Ternary;
        let passes = dense && bound.is_some_and(|b| log_qp <= b as f64);
        let secure_128 = passes && !model_only;
        let is_test = lit.name.starts_with("test-") && lit.allow_insecure;
        if !passes && !is_test && !model_only {
            let bound_text = match (bound, dense) {
                (_, false) => "none for sparse secrets".to_string(),
                (Some(b), true) if lit.key_switching == KeySwitching::Boosted => format!(
                    "{b} (boosted key switching keeps P >= Q, so log2 Q may be at most about {}: fewer levels, or N = 2^{} as a model-only set)",
                    b / 2,
                    lit.log_n + 1
                ),
                (Some(b), true) => b.to_string(),
                (None, true) => format!("none known for N = {n}"),
            };
            return Err(CkksError::Insecure {
                name: lit.name.clone(),
                n,
                log_qp,
                bound: bound_text,
                source_table: SECURITY_SOURCE,
            });
        }
        if model_only {
            warn_once(&model_only_warning(&lit.name));
        } else if !secure_128 {
            warn_insecure_once(&lit.name);
        }
        // Hybrid key switching adds noise ~ sqrt(N) sigma Q_j / P for each digit Q_j, so P
        // must not fall short of the widest digit (half of it costs a bit, which the 54-bit
        // K = 1 sets of reed.md pay; more is refused). Lower levels use prefixes of these
        // digits, so the top level has the widest.
        let log2 = |xs: &[u64]| -> f64 { xs.iter().map(|&x| (x as f64).log2()).sum() };
        let log_p_bits = log2(&p);
        let log_q_bits = log2(&q);
        if lit.key_switching == KeySwitching::Boosted && log_p_bits < log_q_bits {
            return Err(invalid(
                "log_p",
                format!("{:?} (log2 P = {log_p_bits:.1})", lit.log_p),
                &format!(
                    "special primes whose product P is at least Q (log2 Q = {log_q_bits:.1}) for boosted key switching: add or widen special primes, or leave `special` out of the file to size them automatically ({:?})",
                    boosted_special_bits(&lit.log_q)
                ),
            ));
        }
        for d in crate::decomposition::balanced_digits(q.len(), lit.dnum) {
            let log_d = log2(&q[d.clone()]);
            if log_d > log_p_bits + 1.0 {
                return Err(invalid(
                    "log_p",
                    format!("{:?} (log2 P = {log_p_bits:.1})", lit.log_p),
                    &format!(
                        "special primes whose product P is at least half the widest key-switching digit, q_{}..q_{} (log2 = {log_d:.1}): add or widen special primes, or raise dnum",
                        d.start,
                        d.end - 1
                    ),
                ));
            }
        }
        let summary = if model_only {
            format!(
                "NOT SECURE (model-only set: for the simulator, never for real data): log2(PQ) = {log_qp:.1}, 128-bit bound {} for N = 2^{}{}",
                bound
                    .map(|b| b.to_string())
                    .unwrap_or_else(|| "unknown".into()),
                lit.log_n,
                match (passes, dense, bound) {
                    (true, _, _) => " (within it)",
                    (false, false, _) => ", sparse secret (not covered by the table)",
                    (false, true, None) => " (no cited table covers this N)",
                    (false, true, Some(_)) => " (exceeded)",
                }
            )
        } else if secure_128 {
            format!(
                "128-bit secure: log2(PQ) = {log_qp:.1} <= {} for N = 2^{} ({SECURITY_SOURCE})",
                bound.unwrap_or(0),
                lit.log_n
            )
        } else {
            format!(
                "NOT SECURE (test set): log2(PQ) = {log_qp:.1}, bound {} for N = 2^{}{}",
                bound
                    .map(|b| b.to_string())
                    .unwrap_or_else(|| "unknown".into()),
                lit.log_n,
                if dense { "" } else { ", sparse secret" }
            )
        };
        Ok(Self {
            literal: lit,
            q,
            p,
            p_extra,
            security: SecurityReport {
                log_qp,
                bound,
                secure_128,
                model_only,
                summary,
            },
        })
    }

    /// A built-in preset by name (see [`preset_names`]): its file in `configs/params/`,
    /// through the same loader as any parameter file ([`crate::params_file`]).
    ///
    /// ```
    /// use tessera_ckks::Parameters;
    /// let p = Parameters::preset("ark")?;
    /// assert_eq!(p.n(), 1 << 16);
    /// assert!(p.security().secure_128);
    /// // Unknown names list the presets.
    /// assert!(Parameters::preset("nope").unwrap_err().to_string().contains("test-small"));
    /// # Ok::<(), tessera_ckks::CkksError>(())
    /// ```
    pub fn preset(name: &str) -> Result<Self> {
        crate::params_file::preset_text(name)
            .ok_or_else(|| CkksError::UnknownPreset(name.to_string(), preset_names().join(", ")))?;
        crate::params_file::resolve(name)
    }

    /// A preset name or a path to a parameter file ([`crate::params_file::resolve`]).
    pub fn resolve(name_or_path: &str) -> Result<Self> {
        crate::params_file::resolve(name_or_path)
    }

    /// The literal these parameters were built from.
    pub fn literal(&self) -> &ParametersLiteral {
        &self.literal
    }

    /// Name.
    pub fn name(&self) -> &str {
        &self.literal.name
    }

    /// Ring degree N.
    pub fn n(&self) -> usize {
        1 << self.literal.log_n
    }

    /// Maximum number of complex slots, N/2.
    pub fn max_slots(&self) -> usize {
        self.n() / 2
    }

    /// Maximum level L (the chain has L+1 primes).
    pub fn max_level(&self) -> usize {
        self.q.len() - 1
    }

    /// Chain primes one rescale removes (1, or 2 with double-prime rescaling).
    pub fn primes_per_rescale(&self) -> usize {
        self.literal.rescaling.primes()
    }

    /// What a rescale at chain level `level` divides by: `q_level`, or with double-prime
    /// rescaling `q_level q_(level-1)`.
    pub fn rescale_divisor(&self, level: usize) -> f64 {
        let r = self.primes_per_rescale();
        self.q[level + 1 - r.min(level + 1)..=level]
            .iter()
            .map(|&q| q as f64)
            .product()
    }

    /// The lowest level a rescale can reach: the base modulus is `q_0 .. q_(r-1)` for `r`
    /// primes per rescale (ModRaise starts there).
    pub fn base_level(&self) -> usize {
        self.primes_per_rescale() - 1
    }

    /// Bits of the widest prime of the ring (chain, special and extra special primes): the
    /// narrowest machine word that holds every residue.
    pub fn max_prime_bits(&self) -> u32 {
        self.q
            .iter()
            .chain(&self.p)
            .chain(&self.p_extra)
            .map(|&x| 64 - x.leading_zeros())
            .max()
            .unwrap_or(0)
    }

    /// Chain primes `q_0 .. q_L`.
    pub fn q(&self) -> &[u64] {
        &self.q
    }

    /// Special primes `p_0 .. p_(K-1)`.
    pub fn p(&self) -> &[u64] {
        &self.p
    }

    /// The extra special primes for dynamic decomposition (after `p` in the ring).
    pub fn p_extra(&self) -> &[u64] {
        &self.p_extra
    }

    /// Largest `log2(Q_l * P_l)` any key-switching key may have: the 128-bit bound for N
    /// when the set is secure, else (test sets) the set's own fixed `log2(QP)`, so dynamic
    /// plans never move a set into a larger-modulus regime than it was checked at.
    pub fn key_modulus_budget_bits(&self) -> f64 {
        match (self.security.secure_128, self.security.bound) {
            (true, Some(b)) => b as f64,
            _ => self.security.log_qp,
        }
    }

    /// The chain limbs of each key-switching digit: `dnum` contiguous ranges covering
    /// `0..=L`, the first `(L+1) mod dnum` of them one limb longer.
    pub fn digits(&self) -> Vec<std::ops::Range<usize>> {
        crate::decomposition::balanced_digits(self.q.len(), self.literal.dnum)
    }

    /// Limbs in the largest digit (alpha in the papers).
    pub fn alpha(&self) -> usize {
        self.q.len().div_ceil(self.literal.dnum)
    }

    /// Number of digits at the top level.
    pub fn dnum(&self) -> usize {
        self.literal.dnum
    }

    /// The key-switching algorithm the set names (validated: `Boosted` has `dnum = 1` and
    /// `P >= Q`).
    pub fn key_switching(&self) -> KeySwitching {
        self.literal.key_switching
    }

    /// Digits used at level `l` (beta in the papers): those that start at or below `l`.
    pub fn beta(&self, level: usize) -> usize {
        self.digits().iter().filter(|d| d.start <= level).count()
    }

    /// The default scale Delta.
    pub fn default_scale(&self) -> f64 {
        2f64.powi(self.literal.log_default_scale as i32)
    }

    /// The security check's outcome.
    pub fn security(&self) -> &SecurityReport {
        &self.security
    }

    /// Builds the ring over every prime (chain, special, then the extra special primes of
    /// dynamic decomposition), with NTT plans. Each call builds a ring of its own: objects
    /// made under two contexts are then told apart by their ring, and mixing them is a typed
    /// error (`RingMismatch`).
    pub fn ring(&self) -> Result<Arc<RingContext>> {
        Ok(RingContext::new(self.n(), &self.all_primes())?)
    }

    /// [`Self::ring`], but shared with any live ring of the same degree and primes
    /// ([`RingContext::shared`]): for shape-only (recording) contexts, which hold no data to
    /// mix up and which `tessera reproduce` builds dozens of times.
    pub fn shared_ring(&self) -> Result<Arc<RingContext>> {
        Ok(RingContext::shared(self.n(), &self.all_primes())?)
    }

    /// Every prime of the ring, in ring order.
    fn all_primes(&self) -> Vec<u64> {
        self.q
            .iter()
            .chain(&self.p)
            .chain(&self.p_extra)
            .copied()
            .collect()
    }
}

/// Whether the insecure-set warning was printed in this process.
static INSECURE_WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Prints, the first time a process builds a set that is not 128-bit secure, one warning to
/// stderr (never stdout, so `--json` output stays clean); returns whether this call printed it.
/// Test harnesses capture it.
pub fn warn_insecure_once(name: &str) -> bool {
    warn_once(&insecure_warning(name))
}

/// Prints `text` to stderr if no insecure-set warning was printed yet in this process.
fn warn_once(text: &str) -> bool {
    use std::sync::atomic::Ordering;
    if INSECURE_WARNED.swap(true, Ordering::SeqCst) {
        return false;
    }
    eprintln!("{text}");
    true
}

/// The warning a model-only set prints.
pub fn model_only_warning(name: &str) -> String {
    format!(
        "warning: parameter set '{name}' is model-only (security = \"model-only\"): NOT checked for 128-bit security; for the simulator only, never for real data"
    )
}

/// The text of that warning.
pub fn insecure_warning(name: &str) -> String {
    format!(
        "warning: parameter set '{name}' is NOT 128-bit secure (a test set): use it for tests only, never for real data"
    )
}

/// Free primes tried as the larger of a double-prime pair (the one whose partner brings the
/// product closest to the level's scale wins).
const PAIR_CANDIDATES: usize = 8;

/// Names of the built-in presets (the files in `configs/params/`).
pub fn preset_names() -> Vec<&'static str> {
    crate::params_file::preset_file_names()
}

#[cfg(test)]
fn rep(bits: u32, count: usize) -> Vec<u32> {
    vec![bits; count]
}

/// The literal of a built-in preset: its file in `configs/params/`, read by the loader of
/// [`crate::params_file`] (every shipped file parses; the tests load each one).
pub fn preset_literal(name: &str) -> Option<ParametersLiteral> {
    let text = crate::params_file::preset_text(name)?;
    crate::params_file::ParamsFile::parse(text, name)
        .ok()
        .map(|f| f.literal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secure_presets_pass_the_check() {
        for name in [
            "ark",
            "ark-p50",
            "reed",
            "reed-dnum3",
            "cifher",
            "h3",
            "lattigo",
            "ark-boot",
            "lattigo-boot",
            "h3-boot",
            "reed-boot",
            "reed-dnum3-boot",
            "cifher-boot",
            "w32-boot",
            "boosted",
            "reed-boosted",
        ] {
            let p = Parameters::preset(name).unwrap();
            let s = p.security();
            assert!(s.secure_128, "{name}: {}", s.summary);
            assert!(s.log_qp <= 1772.0);
            // Primes are distinct, NTT-friendly and of the requested sizes.
            let all: Vec<u64> = p.q().iter().chain(p.p()).copied().collect();
            let mut sorted = all.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), all.len(), "{name}");
            let double = p.primes_per_rescale() == 2;
            for (&x, &bits) in all
                .iter()
                .zip(p.literal().log_q.iter().chain(&p.literal().log_p))
            {
                // A double-prime partner may sit just over its size (see the pairing).
                let got = 64 - x.leading_zeros();
                assert!(got == bits || (double && got == bits + 1), "{name}");
                assert_eq!(x % (2 * p.n() as u64), 1, "{name}");
            }
            if double {
                // Every rescale divides by a product within 1/64 bit of 2^(b + b') (measured: 0.009).
                // w32-boot's pairs of 25-bit primes come from a scarce supply (about 38 NTT
                // primes below 2^26 at N = 2^16), so its bound is 1/16 bit (measured 0.024 at
                // level 5); the scale each ciphertext carries absorbs the difference.
                let bound = if name == "w32-boot" {
                    1.0 / 16.0
                } else {
                    1.0 / 64.0
                };
                let lq = &p.literal().log_q;
                for l in (p.base_level() + 2..=p.max_level()).rev().step_by(2) {
                    let want = (lq[l] + lq[l - 1]) as f64;
                    let got = p.rescale_divisor(l).log2();
                    assert!((got - want).abs() < bound, "{name} level {l}: {got}");
                }
            }
        }
    }

    #[test]
    fn preset_shapes_match_the_papers() {
        let ark = Parameters::preset("ark").unwrap();
        assert_eq!(
            (
                ark.n(),
                ark.max_level(),
                ark.dnum(),
                ark.alpha(),
                ark.p().len()
            ),
            (1 << 16, 23, 4, 6, 6)
        );
        let reed = Parameters::preset("reed").unwrap();
        assert_eq!((reed.max_level(), reed.p().len(), reed.dnum()), (30, 1, 31));
        assert!(reed.q().iter().all(|&q| q < 1 << 54));
        let reed3 = Parameters::preset("reed-dnum3").unwrap();
        assert_eq!(
            (reed3.max_level(), reed3.p().len(), reed3.dnum()),
            (23, 8, 3)
        );
        let cifher = Parameters::preset("cifher").unwrap();
        assert!(cifher.q().len() <= 48 && cifher.p().len() == 12);
        assert!(cifher.q().iter().chain(cifher.p()).all(|&q| q < 1 << 32));
        let log_q: f64 = cifher.q().iter().map(|&q| (q as f64).log2()).sum();
        assert!(log_q <= 1218.0, "cifher log Q = {log_q}");
        let log_p: f64 = cifher.p().iter().map(|&q| (q as f64).log2()).sum();
        assert!(log_p <= 336.0, "cifher log P = {log_p}");
        let h3 = Parameters::preset("h3").unwrap();
        assert!(h3.q().iter().chain(h3.p()).all(|&q| q < 1 << 36));
        assert_eq!(h3.max_level(), 30);
        assert_eq!(ark.beta(23), 4);
        assert_eq!(ark.beta(5), 1);
        assert_eq!(ark.beta(6), 2);
    }

    /// Boosted special primes: at least one bit more than the chain, none wider than its
    /// widest prime, none narrower than 17 bits, and the fewest such.
    #[test]
    fn boosted_special_primes_cover_the_chain() {
        for log_q in [
            [vec![60], rep(50, 16)].concat(),
            rep(54, 16),
            vec![20, 18],
            vec![17],
            [vec![55], rep(45, 8)].concat(),
            [vec![29, 30], rep(25, 22)].concat(),
        ] {
            let p = boosted_special_bits(&log_q);
            let (sq, sp): (u32, u32) = (log_q.iter().sum(), p.iter().sum());
            let widest = *log_q.iter().max().unwrap();
            assert!(sp > sq, "{log_q:?}: {p:?}");
            assert!(p.iter().all(|&b| (17..=widest).contains(&b)), "{p:?}");
            assert_eq!(p.len() as u32, (sq + 1).div_ceil(widest), "{log_q:?}");
        }
        assert_eq!(
            boosted_special_bits(&[vec![60], rep(50, 16)].concat()),
            [rep(58, 6), rep(57, 9)].concat()
        );
    }

    #[test]
    fn test_sets_say_they_are_insecure() {
        for name in ["test-small", "test-medium", "test-double"] {
            let p = Parameters::preset(name).unwrap();
            assert!(!p.security().secure_128);
            assert!(p.security().summary.contains("NOT SECURE"));
        }
    }

    #[test]
    fn insecure_sets_need_a_test_name() {
        let mut lit = preset_literal("test-small").unwrap();
        lit.name = "production".into();
        assert!(matches!(
            Parameters::new(lit),
            Err(CkksError::Insecure { .. })
        ));
        // Sparse secrets are not covered by the table.
        let mut lit = preset_literal("ark").unwrap();
        lit.secret = SecretDistribution::Sparse {
            hamming_weight: 192,
        };
        assert!(matches!(
            Parameters::new(lit.clone()),
            Err(CkksError::Insecure { .. })
        ));
        lit.name = "test-sparse-ark".into();
        lit.allow_insecure = true;
        assert!(!Parameters::new(lit).unwrap().security().secure_128);
        // A special modulus well short of the widest digit (h3-boot's shape with dnum = 3:
        // ten 50-bit primes in the top digit, eleven 45-bit special primes).
        let lit = ParametersLiteral {
            name: "test-short-p".into(),
            log_n: 12,
            log_q: [vec![45], rep(35, 18), rep(50, 12)].concat(),
            log_p: rep(45, 11),
            dnum: 3,
            ..preset_literal("test-medium").unwrap()
        };
        let err = Parameters::new(lit.clone()).unwrap_err().to_string();
        assert!(err.contains("log_p") && err.contains("q_21..q_30"), "{err}");
        assert!(Parameters::new(ParametersLiteral { dnum: 4, ..lit }).is_ok());
        // Too much modulus for N = 2^16.
        let mut lit = preset_literal("ark").unwrap();
        lit.log_q = rep(60, 30);
        let err = Parameters::new(lit).unwrap_err().to_string();
        assert!(err.contains("not 128-bit secure"), "{err}");
    }

    /// Issue 24 item 4: a custom set named `test-*` is checked like any other unless the
    /// caller asks for an insecure set.
    #[test]
    fn a_test_name_alone_does_not_bypass_the_check() {
        let lit = ParametersLiteral {
            name: "test-looks-harmless".into(),
            allow_insecure: false,
            ..preset_literal("test-small").unwrap()
        };
        let err = Parameters::new(lit.clone()).unwrap_err();
        assert!(matches!(err, CkksError::Insecure { .. }), "{err}");
        let mut ark = preset_literal("ark").unwrap();
        ark.name = "test-ark-sparse".into();
        ark.secret = SecretDistribution::Sparse { hamming_weight: 64 };
        assert!(matches!(
            Parameters::new(ark.clone()),
            Err(CkksError::Insecure { .. })
        ));
        // Asked for explicitly: accepted, and reported as not secure.
        let ok = Parameters::new(ParametersLiteral {
            allow_insecure: true,
            ..lit
        })
        .unwrap();
        assert!(!ok.security().secure_128);
        // The flag does not excuse a set without a test name.
        ark.name = "production".into();
        ark.allow_insecure = true;
        assert!(Parameters::new(ark).is_err());
        // Secure sets pass whatever the flag.
        assert!(Parameters::new(ParametersLiteral {
            allow_insecure: false,
            ..preset_literal("ark").unwrap()
        })
        .is_ok());
    }

    /// The warning is printed once per process and names the set.
    #[test]
    fn insecure_sets_warn_once_per_process() {
        Parameters::preset("test-small").unwrap();
        assert!(!warn_insecure_once("test-small"), "printed a second time");
        assert!(insecure_warning("test-small").contains("NOT 128-bit secure"));
    }

    #[test]
    fn bad_literals_are_clear_errors() {
        let base = preset_literal("test-small").unwrap();
        let cases: Vec<(ParametersLiteral, &str)> = vec![
            (
                ParametersLiteral {
                    log_n: 9,
                    ..base.clone()
                },
                "log_n",
            ),
            (
                ParametersLiteral {
                    log_q: vec![],
                    ..base.clone()
                },
                "log_q",
            ),
            (
                ParametersLiteral {
                    log_p: vec![],
                    ..base.clone()
                },
                "log_p",
            ),
            (
                ParametersLiteral {
                    dnum: 0,
                    ..base.clone()
                },
                "dnum",
            ),
            (
                ParametersLiteral {
                    dnum: 9,
                    ..base.clone()
                },
                "dnum",
            ),
            (
                ParametersLiteral {
                    sigma: -1.0,
                    ..base.clone()
                },
                "sigma",
            ),
            (
                ParametersLiteral {
                    log_default_scale: 80,
                    ..base.clone()
                },
                "log_default_scale",
            ),
            (
                ParametersLiteral {
                    secret: SecretDistribution::Sparse { hamming_weight: 0 },
                    ..base.clone()
                },
                "hamming_weight",
            ),
            (
                ParametersLiteral {
                    log_q: vec![70, 40],
                    dnum: 1,
                    ..base.clone()
                },
                "70 bits",
            ),
        ];
        for (lit, needle) in cases {
            let err = Parameters::new(lit).unwrap_err().to_string();
            assert!(err.contains(needle), "expected '{needle}' in: {err}");
        }
        let err = Parameters::preset("nope").unwrap_err().to_string();
        assert!(err.contains("ark") && err.contains("nope"), "{err}");
    }
}
