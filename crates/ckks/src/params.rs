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
    Sparse { hamming_weight: usize },
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
    pub secure_128: bool,
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
        let secure_128 = dense && bound.is_some_and(|b| log_qp <= b as f64);
        let is_test = lit.name.starts_with("test-") && lit.allow_insecure;
        if !secure_128 && !is_test {
            let bound_text = match (bound, dense) {
                (_, false) => "none for sparse secrets".to_string(),
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
        if !secure_128 {
            warn_insecure_once(&lit.name);
        }
        // Hybrid key switching adds noise ~ sqrt(N) sigma Q_j / P for each digit Q_j, so P
        // must not fall short of the widest digit (half of it costs a bit, which the 54-bit
        // K = 1 sets of reed.md pay; more is refused). Lower levels use prefixes of these
        // digits, so the top level has the widest.
        let log2 = |xs: &[u64]| -> f64 { xs.iter().map(|&x| (x as f64).log2()).sum() };
        let log_p_bits = log2(&p);
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
        let summary = if secure_128 {
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
                summary,
            },
        })
    }

    /// A built-in preset by name (see [`preset_names`]).
    pub fn preset(name: &str) -> Result<Self> {
        let lit = preset_literal(name)
            .ok_or_else(|| CkksError::UnknownPreset(name.to_string(), preset_names().join(", ")))?;
        Self::new(lit)
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
    /// dynamic decomposition), with NTT plans.
    pub fn ring(&self) -> Result<Arc<RingContext>> {
        let all: Vec<u64> = self
            .q
            .iter()
            .chain(&self.p)
            .chain(&self.p_extra)
            .copied()
            .collect();
        Ok(RingContext::new(self.n(), &all)?)
    }
}

/// Whether the insecure-set warning was printed in this process.
static INSECURE_WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Prints, the first time a process builds a set that is not 128-bit secure, one warning to
/// stderr (never stdout, so `--json` output stays clean); returns whether this call printed it.
/// Test harnesses capture it.
pub fn warn_insecure_once(name: &str) -> bool {
    use std::sync::atomic::Ordering;
    if INSECURE_WARNED.swap(true, Ordering::SeqCst) {
        return false;
    }
    eprintln!("{}", insecure_warning(name));
    true
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

/// Names of the built-in presets.
pub fn preset_names() -> Vec<&'static str> {
    vec![
        "ark",
        "reed",
        "reed-dnum3",
        "cifher",
        "h3",
        "lattigo",
        "test-small",
        "test-medium",
        "test-double",
        "test-boot",
        "test-boot-double",
        "ark-boot",
        "lattigo-boot",
        "h3-boot",
        "reed-boot",
        "reed-dnum3-boot",
        "cifher-boot",
    ]
}

/// A dense-ternary, sigma = 3.2, single-prime-rescaling literal to fill in.
fn base(name: &str, log_n: u32, source: &'static str) -> ParametersLiteral {
    ParametersLiteral {
        name: name.to_string(),
        log_n,
        log_q: Vec::new(),
        log_p: Vec::new(),
        dnum: 1,
        log_default_scale: 1,
        secret: SecretDistribution::Ternary,
        sigma: 3.2,
        rescaling: Rescaling::SinglePrime,
        dynamic_special: 0,
        source,
        allow_insecure: name.starts_with("test-"),
    }
}

fn rep(bits: u32, count: usize) -> Vec<u32> {
    vec![bits; count]
}

/// The literal of a built-in preset.
pub fn preset_literal(name: &str) -> Option<ParametersLiteral> {
    Some(match name {
        // ark.md Table III: N = 2^16, L = 23, dnum = 4, alpha = 6 (so K = 6), 64-bit words.
        // Prime sizes are ours: a 60-bit q_0, 50-bit levels (Delta = 2^50), 61-bit special
        // primes; log2(PQ) ~ 1576.
        "ark" => ParametersLiteral {
            log_q: [vec![60], rep(50, 23)].concat(),
            log_p: rep(61, 6),
            dnum: 4,
            log_default_scale: 50,
            ..base("ark", 16, "ark.md Table III (N, L, dnum, alpha); prime sizes ours")
        },
        // reed.md section 6: N = 2^16, L = 30, K = 1, w = 54; KeySwitch with dnum = L+1.
        "reed" => ParametersLiteral {
            log_q: rep(54, 31),
            log_p: rep(54, 1),
            dnum: 31,
            log_default_scale: 54,
            ..base("reed", 16, "reed.md section 6 (N = 2^16, L = 30, K = 1, w = 54, dnum = L+1)")
        },
        // reed.md section 6.3 / Table 4: dnum = 3, L = 23, K = 8, w = 54.
        "reed-dnum3" => ParametersLiteral {
            log_q: rep(54, 24),
            log_p: rep(54, 8),
            dnum: 3,
            log_default_scale: 54,
            ..base("reed-dnum3", 16, "reed.md section 6.3 (dnum = 3, L = 23, K = 8, w = 54)")
        },
        // cifher.md Table I: N = 2^16, up to 48 q_i with Q <= 2^1218, K = 12 with P = 2^336,
        // 32-bit words, double-prime rescaling with Delta in 2^47..2^55. Ours: 42 chain primes
        // (two 30-bit base primes, forty 28-bit), twelve 28-bit special primes, Delta = 2^56
        // (pairs of 28-bit primes), dnum = 4 digits of 10-11 limbs (K = 12 covers the largest).
        "cifher" => ParametersLiteral {
            log_q: [vec![30, 30], rep(28, 40)].concat(),
            log_p: rep(28, 12),
            dnum: 4,
            log_default_scale: 56,
            rescaling: Rescaling::DoublePrime,
            ..base(
                "cifher",
                16,
                "cifher.md Table I (N, L <= 48, K = 12, Q <= 2^1218, P = 2^336, 32-bit words); sizes ours",
            )
        },
        // h3.md: N = 2^16, primes under 36 bits, multiplication levels 1..30 (Fig. 9),
        // dynamic alpha (section 3.1); fixed default: dnum = 3 (digits of 10-11 limbs, K = 12).
        "h3" => ParametersLiteral {
            log_q: rep(36, 31),
            log_p: rep(36, 12),
            dnum: 3,
            log_default_scale: 36,
            // Room for the larger digits of per-level dynamic decomposition (h3.md 3.1).
            dynamic_special: 12,
            ..base("h3", 16, "h3.md sections 3.1 and 4 (N = 2^16, primes < 2^36, levels 1..30); sizes ours")
        },
        // A Lattigo-like default: 55-bit q_0, 45-bit levels, 55-bit special primes,
        // log2(PQ) ~ 1760 (the shape of Lattigo's logN = 16 sets); our prime choice.
        "lattigo" => ParametersLiteral {
            log_q: [vec![55], rep(45, 33)].concat(),
            log_p: rep(55, 4),
            dnum: 9,
            log_default_scale: 45,
            ..base("lattigo", 16, "Lattigo-like N = 2^16 default (shape of Lattigo's logN = 16 sets); sizes ours")
        },
        // Small insecure sets for fast tests.
        "test-small" => ParametersLiteral {
            log_q: vec![45, 36, 36, 36],
            log_p: vec![46],
            dnum: 4,
            log_default_scale: 36,
            ..base("test-small", 10, "test only: N = 2^10, far above the 27-bit bound (INSECURE)")
        },
        "test-medium" => ParametersLiteral {
            log_q: [vec![55], rep(45, 8)].concat(),
            log_p: rep(56, 3),
            dnum: 3,
            log_default_scale: 45,
            dynamic_special: 4,
            ..base("test-medium", 12, "test only: N = 2^12 (INSECURE)")
        },
        // ark.md Table III for bootstrapping (N = 2^16, L = 23, L_boot = 15, dnum = 4,
        // alpha = 6), with Lattigo-style prime sizes (ARK's set is "a slightly modified
        // version of Lattigo's"): a 60-bit q_0, 8 user levels of 50 bits (Delta = 2^50), then
        // the 15 bootstrapping levels: 3 of 50 bits for SlotToCoeff, 9 of 60 bits for EvalMod
        // (it runs at the scale of its primes), 3 of 60 bits for CoeffToSlot. Sizes ours;
        // log2(PQ) ~ 1696.
        "ark-boot" => ParametersLiteral {
            log_q: [vec![60], rep(50, 8), rep(50, 3), rep(60, 9), rep(60, 3)].concat(),
            log_p: rep(61, 6),
            dnum: 4,
            log_default_scale: 50,
            ..base("ark-boot", 16, "ark.md Table III (N, L, L_boot, dnum, alpha) with Lattigo-style bootstrapping prime sizes (ours)")
        },
        // REED's bootstrapping "1 -> 30 -> 15" (reed.md Table 3): N = 2^16, L = 30, KeySwitch
        // with dnum = L + 1 and K = 1 (reed.md 2: "for simplicity ... utilized throughout").
        // REED's words are 54 bits; our circuit needs q_0 / Delta ~ 2^10, so q_0 and the 12
        // CoeffToSlot and EvalMod levels are 54-bit primes and the 15 user and 3 SlotToCoeff
        // levels 44-bit ones (Delta = 2^44); the special prime is 54 bits. Sizes ours;
        // log2(PQ) ~ 1548.
        "reed-boot" => ParametersLiteral {
            log_q: [vec![54], rep(44, 15), rep(44, 3), rep(54, 9), rep(54, 3)].concat(),
            log_p: rep(54, 1),
            dnum: 31,
            log_default_scale: 44,
            ..base("reed-boot", 16, "reed.md Table 3 bootstrapping (N = 2^16, L = 30, L_boot = 15, dnum = L + 1, K = 1); prime sizes ours (44- and 54-bit where REED's words are 54)")
        },
        // REED's bootstrapping for Table 4 (reed.md 6.3: "dnum = 3 ... L = 23, K = 8, and
        // L_boot = 17", chosen to compare with SHARP at w = 54): N = 2^16, 24 chain limbs in
        // three digits of 8, eight special primes, 17 bootstrapping levels (4 CoeffToSlot, 9
        // EvalMod, 4 SlotToCoeff) and L_eff = 6. As in `reed-boot`, q_0 and the CoeffToSlot and
        // EvalMod levels are 54-bit primes, the user and SlotToCoeff levels 44-bit (Delta =
        // 2^44), the special primes 54-bit; the widest digit (eight 54-bit primes) stays under
        // P. Sizes ours; log2(PQ) ~ 1628.
        "reed-dnum3-boot" => ParametersLiteral {
            log_q: [vec![54], rep(44, 6), rep(44, 4), rep(54, 9), rep(54, 4)].concat(),
            log_p: rep(54, 8),
            dnum: 3,
            log_default_scale: 44,
            ..base("reed-dnum3-boot", 16, "reed.md 6.3 / Table 4 bootstrapping (N = 2^16, L = 23, K = 8, dnum = 3, L_boot = 17); prime sizes ours (44- and 54-bit where REED's words are 54)")
        },
        // CiFHER's bootstrapping (cifher.md VI-B: L = 48, nine rescalings between
        // bootstrappings; Table I: 32-bit words, double-prime rescaling, K = 12, P = 2^336).
        // Every level is a pair of primes under 2^32: the base modulus q_0 q_1 (two 32-bit
        // primes), 9 user levels and 3 SlotToCoeff levels of two 27-bit primes
        // (Delta = 2^54, in Table I's 2^47..2^55; q_0 q_1 / Delta = 2^10), then 9 EvalMod and
        // 3 CoeffToSlot levels of two 28-bit primes; twelve 28-bit special primes and dnum = 5
        // (digits of 10 limbs). 50 chain primes where CiFHER has 48: our circuit takes 15
        // levels where the paper's takes 14. Sizes ours; log2(PQ) ~ 1720.
        "cifher-boot" => ParametersLiteral {
            log_q: [vec![32, 32], rep(27, 18), rep(27, 6), rep(28, 18), rep(28, 6)].concat(),
            log_p: rep(28, 12),
            dnum: 5,
            log_default_scale: 54,
            rescaling: Rescaling::DoublePrime,
            ..base("cifher-boot", 16, "cifher.md VI-B bootstrapping (N = 2^16, 9 usable levels) and Table I (32-bit words, double-prime rescaling, K = 12); prime sizes ours, 50 chain primes where CiFHER has 48")
        },
        // H3's bootstrapping shape (h3.md Fig. 9: N = 2^16, 30 levels of which 14 bootstrapping
        // and 16 effective): q_0, 15 user levels and 3 SlotToCoeff levels of 35 bits
        // (Delta = 2^35, q_0 / Delta = 2^10), then 9 EvalMod and 3 CoeffToSlot levels of 50
        // bits (our circuit takes 15 levels, one more than H3's), K = 11 special primes of 45
        // bits; log2(PQ) ~ 1770.
        // NOT H3's prime sizes: H3's Barrett units take primes under 2^36 (4.3), and with
        // single 36-bit primes in EvalMod our bootstrapping keeps only 1 to 4 bits (measured at
        // N = 2^14 and 2^16; h3.md does not say how it keeps precision). The limb structure,
        // which is what the simulator charges (at the H3 machine's 36-bit words), is H3's.
        // dnum = 4 (digits of 8 limbs), not the `h3` preset's 3: with dnum = 3 the widest
        // digit (ten 50-bit primes, 500 bits) exceeds P (495 bits), which validation refuses.
        "h3-boot" => ParametersLiteral {
            log_q: [vec![45], rep(35, 15), rep(35, 3), rep(50, 9), rep(50, 3)].concat(),
            log_p: rep(45, 11),
            dnum: 4,
            log_default_scale: 35,
            ..base("h3-boot", 16, "h3.md Fig. 9 level structure (N = 2^16, 30 levels; 15 + 15 where H3 has 14 + 16); dnum = 4; prime sizes ours, wider than H3's 36-bit words")
        },
        // Lattigo's N = 2^16 bootstrapping shape: 9 user levels of 40 bits (Delta = 2^40), 3
        // SlotToCoeff levels of 40 bits, 9 EvalMod levels of 60 bits, 4 CoeffToSlot levels of
        // 56 bits; dnum = 5. q_0 = 50 bits keeps q_0 / Delta = 2^10: EvalMod's error is
        // multiplied by that ratio, and its sine approximation error grows as the ratio falls
        // (measured at N = 2^10: 2^20 gives 19.5 bits, 2^8 22.3, 2^10 26.3). Sizes ours;
        // log2(PQ) ~ 1660.
        "lattigo-boot" => ParametersLiteral {
            log_q: [vec![50], rep(40, 9), rep(40, 3), rep(60, 9), rep(56, 4)].concat(),
            log_p: rep(61, 6),
            dnum: 5,
            log_default_scale: 40,
            ..base("lattigo-boot", 16, "Lattigo-like N = 2^16 bootstrapping default (shape of Lattigo's N16 sets); sizes ours")
        },
        // Bootstrapping in CI: N = 2^10; a 60-bit q_0 and three 45-bit user levels
        // (q_0 / Delta = 2^15), then 14 60-bit levels the bootstrapping circuit consumes (its
        // EvalMod runs at scale ~2^60); a sparse secret (h = 32) keeps the ModRaise overflow small.
        "test-boot" => ParametersLiteral {
            log_q: [vec![60], rep(45, 3), rep(60, 14)].concat(),
            log_p: rep(61, 4),
            dnum: 6,
            log_default_scale: 45,
            secret: SecretDistribution::Sparse { hamming_weight: 32 },
            ..base("test-boot", 10, "test only: N = 2^10, sparse secret h = 32 (INSECURE)")
        },
        // test-boot with double-prime rescaling (CiFHER-style bootstrapping in CI): a base
        // modulus of two 30-bit primes, three user levels of a 23- and a 22-bit prime
        // (Delta = 2^45, q_0 q_1 / Delta = 2^15), then 14 levels of two 30-bit primes.
        "test-boot-double" => ParametersLiteral {
            log_q: [vec![30, 30], [23, 22].repeat(3), rep(30, 28)].concat(),
            log_p: rep(61, 4),
            dnum: 6,
            log_default_scale: 45,
            rescaling: Rescaling::DoublePrime,
            secret: SecretDistribution::Sparse { hamming_weight: 32 },
            ..base("test-boot-double", 10, "test only: N = 2^10, double-prime rescaling, sparse secret h = 32 (INSECURE)")
        },
        // Double-prime rescaling on 28-bit primes, CiFHER-style (Delta = 2^56).
        "test-double" => ParametersLiteral {
            log_q: [vec![40], rep(28, 6)].concat(),
            log_p: rep(50, 2),
            dnum: 4,
            log_default_scale: 56,
            rescaling: Rescaling::DoublePrime,
            ..base("test-double", 12, "test only: N = 2^12, double-prime rescaling (INSECURE)")
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secure_presets_pass_the_check() {
        for name in [
            "ark",
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
                let lq = &p.literal().log_q;
                for l in (p.base_level() + 2..=p.max_level()).rev().step_by(2) {
                    let want = (lq[l] + lq[l - 1]) as f64;
                    let got = p.rescale_divisor(l).log2();
                    assert!((got - want).abs() < 1.0 / 64.0, "{name} level {l}: {got}");
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
