//! Key-switching decompositions: which chain limbs form each digit and which special primes
//! absorb them.
//!
//! A [`KeySwitchPlan`] is what a switching key is made for. The *fixed* plan is the usual
//! hybrid key switching of the parameter set (its `dnum` balanced digits over the whole chain
//! and its `K` special primes); one key serves every level, the digits above a level simply
//! drop out. The *dynamic* plan is h3.md section 3.1 ("Dynamic Key-Switch Adaptation"): for
//! each level `l` it tries every digit size `alpha`, takes the fewest special primes whose
//! product covers the largest digit, keeps the candidates whose `log2(Q_l P_l)` stays within
//! the set's key-modulus budget ([`Parameters::key_modulus_budget_bits`]), and picks the one
//! with the lowest cost. At lower levels the shorter chain frees modulus budget, so a key can
//! use more special primes (from the set's `dynamic_special` pool) and fewer, larger digits:
//! fewer NTTs after ModUp and a smaller key. The price is one key per level.
//!
//! ## Cost model
//! The cost of a plan is counted in modular multiplications per coefficient, from the closed
//! forms of [`crate::costs`] (which the trace tests check): each NTT or INTT of one limb costs
//! `log2(N) / 2` (its butterflies), each BConv multiply-accumulate and each element-wise
//! product costs 1. This is h3.md Eq. 1 (coefficient-wise multiplications) plus Eq. 2 (NTTs)
//! weighted by their butterflies, with the definitional differences listed in
//! [`crate::costs`]. Ties go to the plan with the smaller key.

use crate::error::{CkksError, Result};
use crate::params::Parameters;
use std::ops::Range;

/// One key-switching decomposition.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KeySwitchPlan {
    /// The highest level the plan (and a key made for it) supports.
    pub level: usize,
    /// Contiguous chain-limb ranges covering `0..=level`.
    pub digits: Vec<Range<usize>>,
    /// Ring indices of the special primes.
    pub special: Vec<usize>,
}

impl KeySwitchPlan {
    /// The parameter set's own hybrid key switching: `dnum` balanced digits over the whole
    /// chain, the `K` special primes; valid at every level.
    pub fn fixed(params: &Parameters) -> Self {
        let first = params.q().len();
        Self {
            level: params.max_level(),
            digits: params.digits(),
            special: (first..first + params.p().len()).collect(),
        }
    }

    /// The plan of a key used only at the base level (ModRaise's modulus: `q_0`, or `q_0 q_1`
    /// with double-prime rescaling): one digit over the base limbs and the fewest special
    /// primes whose product covers it (to within the one bit [`KeySwitchPlan::validate`]
    /// allows). The dense-to-sparse key of sparse-secret encapsulation
    /// is made for it, as Lattigo makes it over `q_0` and its first special prime: its samples
    /// are RLWE under the sparse secret, which is secure only at such a small modulus
    /// (docs/security.md).
    pub fn base(params: &Parameters) -> Self {
        let level = params.base_level();
        let ring = ring_bits(params);
        let first = params.q().len();
        let digit: f64 = ring[..=level].iter().sum();
        let mut acc = 0.0;
        let k = params
            .p()
            .iter()
            .position(|&p| {
                acc += (p as f64).log2();
                acc + 1.0 >= digit
            })
            .map_or(params.p().len(), |i| i + 1);
        Self {
            level,
            digits: std::iter::once(0..level + 1).collect(),
            special: (first..first + k).collect(),
        }
    }

    /// The cheapest plan for level `level` under the cost model (h3.md section 3.1). Falls
    /// back to the fixed plan if no candidate fits the budget (it always fits at the top).
    pub fn dynamic(params: &Parameters, level: usize) -> Result<Self> {
        Ok(Self::candidates(params, level)?
            .into_iter()
            .min_by(|a, b| {
                a.1.total_cmp(&b.1)
                    .then(a.0.key_words(params).cmp(&b.0.key_words(params)))
            })
            .map(|(p, _)| p)
            .unwrap_or_else(|| Self::fixed(params)))
    }

    /// Every admissible plan at `level` with its cost, by increasing digit size.
    pub fn candidates(params: &Parameters, level: usize) -> Result<Vec<(Self, f64)>> {
        if level > params.max_level() {
            return Err(CkksError::InvalidParameter {
                name: "level",
                value: level.to_string(),
                allowed: format!("0 to {}", params.max_level()),
            });
        }
        let first = params.q().len();
        let pool: Vec<f64> = params
            .p()
            .iter()
            .chain(params.p_extra())
            .map(|&p| (p as f64).log2())
            .collect();
        let bits = |r: &Range<usize>| -> f64 {
            params.q()[r.clone()]
                .iter()
                .map(|&q| (q as f64).log2())
                .sum()
        };
        let log_q = bits(&(0..level + 1));
        let budget = params.key_modulus_budget_bits();
        let mut out = Vec::new();
        for alpha in 1..=level + 1 {
            let digits = balanced_digits(level + 1, (level + 1).div_ceil(alpha));
            if digits.iter().map(|d| d.len()).max() != Some(alpha) {
                continue; // the same partition as a smaller alpha
            }
            let widest = digits.iter().map(bits).fold(0.0, f64::max);
            // Fewest special primes whose product is at least the widest digit.
            let mut acc = 0.0;
            let Some(k) = pool.iter().position(|&b| {
                acc += b;
                acc >= widest
            }) else {
                continue;
            };
            let k = k + 1;
            if log_q + pool[..k].iter().sum::<f64>() > budget + 1e-9 {
                continue;
            }
            let plan = Self {
                level,
                digits,
                special: (first..first + k).collect(),
            };
            let cost = plan.cost(params, level);
            out.push((plan, cost));
        }
        Ok(out)
    }

    /// The digits that reach `level`, clipped to it.
    pub fn digits_at(&self, level: usize) -> Vec<Range<usize>> {
        self.digits
            .iter()
            .filter(|d| d.start <= level)
            .map(|d| d.start..d.end.min(level + 1))
            .collect()
    }

    /// Number of digits at `level` (beta).
    pub fn beta(&self, level: usize) -> usize {
        self.digits_at(level).len()
    }

    /// Limbs of the widest digit (alpha).
    pub fn alpha(&self) -> usize {
        self.digits.iter().map(|d| d.len()).max().unwrap_or(0)
    }

    /// Chain limbs `0..=level` followed by the special limbs: the limb set of a key switch
    /// at `level` (and, at `self.level`, of the key).
    pub fn qp_limbs(&self, level: usize) -> Vec<usize> {
        (0..=level).chain(self.special.iter().copied()).collect()
    }

    /// `log2(Q_level * P)` of this plan.
    pub fn log_qp_bits(&self, params: &Parameters, level: usize) -> f64 {
        let ring = ring_bits(params);
        self.qp_limbs(level).iter().map(|&i| ring[i]).sum()
    }

    /// Words of a key for this plan (the `b` halves: `dnum (level + 1 + K) N`).
    pub fn key_words(&self, params: &Parameters) -> usize {
        self.digits.len() * (self.level + 1 + self.special.len()) * params.n()
    }

    /// The cost model of the module documentation for a key switch at `level`.
    pub fn cost(&self, params: &Parameters, level: usize) -> f64 {
        let c = crate::costs::key_switch_cost_plan(params, self, level);
        let n = params.n() as f64;
        let butterflies = (params.n() as f64).log2() / 2.0;
        (c.ntt_limbs + c.intt_limbs) as f64 * butterflies
            + (c.bconv_macs + c.elementwise_mults) as f64 / n
    }

    /// Checks that the plan is well formed for `params` (digits contiguous from 0 to `level`,
    /// special indices distinct and within the special-prime pool), that `P` covers every
    /// digit (the same rule [`Parameters::new`] applies to the set's own digits: `log2 P` at
    /// least the digit's bits less one, else key-switching noise swamps the message), and that
    /// the key's modulus `Q_level P` stays within the set's key-modulus budget
    /// ([`Parameters::key_modulus_budget_bits`]: the 128-bit bound for a secure set), so no
    /// key is made, or accepted from bytes, at a modulus larger than the one the set's
    /// security was checked at.
    pub fn validate(&self, params: &Parameters) -> Result<()> {
        let bad = |what: String, allowed: &str| CkksError::InvalidParameter {
            name: "key-switching plan",
            value: what,
            allowed: allowed.into(),
        };
        let shape = "contiguous digits covering 0..=level <= L, distinct special primes";
        if self.level > params.max_level() || self.digits.is_empty() {
            return Err(bad(format!("level {}", self.level), shape));
        }
        let mut next = 0;
        for d in &self.digits {
            if d.start != next || d.end <= d.start {
                return Err(bad(format!("digit {d:?}"), shape));
            }
            next = d.end;
        }
        if next != self.level + 1 {
            return Err(bad(format!("digits end at {next}"), shape));
        }
        let first = params.q().len();
        let last = first + params.p().len() + params.p_extra().len();
        let mut seen = std::collections::HashSet::new();
        if self.special.is_empty()
            || self
                .special
                .iter()
                .any(|&i| i < first || i >= last || !seen.insert(i))
        {
            return Err(bad(format!("special limbs {:?}", self.special), shape));
        }
        let ring = ring_bits(params);
        let log_p: f64 = self.special.iter().map(|&i| ring[i]).sum();
        for d in &self.digits {
            let log_d: f64 = ring[d.clone()].iter().sum();
            if log_d > log_p + 1.0 {
                return Err(bad(
                    format!("digit {d:?} of {log_d:.1} bits with log2 P = {log_p:.1}"),
                    "special primes whose product P is at least half of every digit",
                ));
            }
        }
        let log_qp = self.log_qp_bits(params, self.level);
        let budget = params.key_modulus_budget_bits();
        if log_qp > budget + 1e-9 {
            return Err(bad(
                format!("log2(Q_{} P) = {log_qp:.1}", self.level),
                &format!(
                    "at most the key-modulus budget {budget:.1} bits of parameter set '{}' (its 128-bit bound, or its own log2(PQ) for an insecure test set)",
                    params.name()
                ),
            ));
        }
        Ok(())
    }
}

/// `log2` of every ring prime (chain, special, extra special), by ring index.
fn ring_bits(params: &Parameters) -> Vec<f64> {
    params
        .q()
        .iter()
        .chain(params.p())
        .chain(params.p_extra())
        .map(|&x| (x as f64).log2())
        .collect()
}

/// `count` contiguous ranges covering `0..limbs` whose sizes differ by at most one (the
/// longer ones first).
pub fn balanced_digits(limbs: usize, count: usize) -> Vec<Range<usize>> {
    let (small, extra) = (limbs / count, limbs % count);
    let mut start = 0;
    (0..count)
        .map(|i| {
            let len = small + usize::from(i < extra);
            let r = start..start + len;
            start += len;
            r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_plan_is_the_parameter_sets() {
        let p = Parameters::preset("test-medium").unwrap();
        let f = KeySwitchPlan::fixed(&p);
        assert_eq!(f.digits, p.digits());
        assert_eq!(f.special, vec![9, 10, 11]);
        assert_eq!(f.beta(p.max_level()), p.dnum());
        f.validate(&p).unwrap();
    }

    #[test]
    fn dynamic_plans_fit_the_budget_and_never_cost_more_than_fixed() {
        for name in ["test-medium", "test-small", "h3"] {
            let p = Parameters::preset(name).unwrap();
            let fixed = KeySwitchPlan::fixed(&p);
            for level in 0..=p.max_level() {
                let d = KeySwitchPlan::dynamic(&p, level).unwrap();
                d.validate(&p).unwrap();
                assert_eq!(d.level, level);
                assert!(d.log_qp_bits(&p, level) <= p.key_modulus_budget_bits() + 1e-9);
                // P covers the widest digit.
                let ring = ring_bits(&p);
                let widest = d
                    .digits
                    .iter()
                    .map(|r| ring[r.clone()].iter().sum::<f64>())
                    .fold(0.0, f64::max);
                let pbits: f64 = d.special.iter().map(|&i| ring[i]).sum();
                assert!(pbits >= widest, "{name} level {level}");
                // Within the fixed plan's budget the fixed plan is a candidate-like point,
                // so the chosen plan is no more expensive.
                assert!(
                    d.cost(&p, level) <= fixed.cost(&p, level) + 1e-9,
                    "{name} level {level}: {} > {}",
                    d.cost(&p, level),
                    fixed.cost(&p, level)
                );
            }
        }
    }

    #[test]
    fn h3_uses_fewer_digits_at_low_levels() {
        let p = Parameters::preset("h3").unwrap();
        let top = KeySwitchPlan::dynamic(&p, p.max_level()).unwrap();
        let low = KeySwitchPlan::dynamic(&p, 10).unwrap();
        assert!(low.digits.len() < top.digits.len() || low.digits.len() == 1);
        assert!(low.cost(&p, 10) < KeySwitchPlan::fixed(&p).cost(&p, 10));
    }

    #[test]
    fn bad_plans_and_levels_are_errors() {
        let p = Parameters::preset("test-medium").unwrap();
        assert!(KeySwitchPlan::candidates(&p, 99).is_err());
        let mut f = KeySwitchPlan::fixed(&p);
        f.digits[1].start += 1;
        assert!(f.validate(&p).is_err());
        let mut f = KeySwitchPlan::fixed(&p);
        f.special = vec![0];
        assert!(f.validate(&p).is_err());
        let mut f = KeySwitchPlan::fixed(&p);
        f.special.push(f.special[0]);
        assert!(f.validate(&p).is_err());
    }

    /// The dense-to-sparse encapsulation key's plan at every bootstrapping preset: the base
    /// limbs and the special primes covering them, at most 148 bits (docs/security.md's table).
    #[test]
    fn base_plans_span_the_base_modulus_and_its_covering_special_primes() {
        for (name, base_limbs, k, bits) in [
            ("ark-boot", 1, 1, 121.0),
            ("lattigo-boot", 1, 1, 111.0),
            ("h3-boot", 1, 1, 90.0),
            ("reed-boot", 1, 1, 108.0),
            ("reed-dnum3-boot", 1, 1, 108.0),
            ("cifher-boot", 2, 3, 148.0),
        ] {
            let p = Parameters::preset(name).unwrap();
            let plan = KeySwitchPlan::base(&p);
            plan.validate(&p).unwrap();
            let first = p.q().len();
            assert_eq!(plan.digits.len(), 1, "{name}");
            assert_eq!(plan.digits[0], 0..base_limbs, "{name}");
            assert_eq!(
                plan.special,
                (first..first + k).collect::<Vec<_>>(),
                "{name}"
            );
            let got = plan.log_qp_bits(&p, plan.level);
            assert!((got - bits).abs() < 0.5, "{name}: {got}");
        }
    }

    /// Issue 24 item 2: at `h3` the fixed digits with every special prime of the pool make a
    /// 1,980-bit key, over the 1,772-bit bound for N = 2^16; one special prime does not cover
    /// a digit.
    #[test]
    fn plans_over_the_modulus_budget_or_short_of_p_are_refused() {
        let p = Parameters::preset("h3").unwrap();
        let mut over = KeySwitchPlan::fixed(&p);
        let first = p.q().len();
        over.special = (first..first + p.p().len() + p.p_extra().len()).collect();
        assert!(over.log_qp_bits(&p, over.level) > 1772.0);
        let e = over.validate(&p).unwrap_err().to_string();
        assert!(e.contains("budget") && e.contains("h3"), "{e}");
        let mut short = KeySwitchPlan::fixed(&p);
        short.special.truncate(1);
        let e = short.validate(&p).unwrap_err().to_string();
        assert!(e.contains("log2 P"), "{e}");
        // The fixed and dynamic plans pass.
        KeySwitchPlan::fixed(&p).validate(&p).unwrap();
    }
}
