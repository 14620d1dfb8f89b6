//! Level management: the one rule every program uses to place its bootstrappings.
//!
//! **Rule.** A program is a sequence of stages, each declaring the levels (rescales) it
//! consumes. Before a stage that needs `d` levels, the state is bootstrapped if fewer than `d`
//! levels remain above the bootstrapping's input level (the base level). Nothing else places a
//! bootstrapping. With `L` levels left after a bootstrapping, a program whose stages each take
//! `d` levels therefore bootstraps once every `floor(L / d)` stages, which gives workloads.md
//! 8.2's counts: HELR's 5-level iterations bootstrap every iteration at `ark` (8 levels) and
//! `cifher` (9), and every third at `reed` and `h3` (15).

use crate::error::{ProgramError, Result};
use tessera_ckks::Parameters;

/// The levels a parameter set offers between bootstrappings, and the rule above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelBudget {
    /// The chain index bootstrapping reads its input at (`q_0`, or `q_0 q_1` with
    /// double-prime rescaling).
    pub base: usize,
    /// Chain primes one rescale drops (1, or 2 with double-prime rescaling).
    pub primes_per_level: usize,
    /// Levels (rescales) available right after a bootstrapping.
    pub after_boot: usize,
}

impl LevelBudget {
    /// The budget of `params` whose bootstrapping leaves its output at chain index `top`.
    pub fn new(params: &Parameters, top: usize) -> Self {
        let r = params.primes_per_rescale();
        Self {
            base: params.base_level(),
            primes_per_level: r,
            after_boot: (top - params.base_level()) / r,
        }
    }

    /// Levels left above the base for a ciphertext at chain index `level`.
    pub fn left(&self, level: usize) -> usize {
        level.saturating_sub(self.base) / self.primes_per_level
    }

    /// Whether a stage needing `need` levels must be preceded by a bootstrapping.
    pub fn must_boot(&self, level: usize, need: usize) -> bool {
        self.left(level) < need
    }

    /// The chain index after `levels` rescales from `level`.
    pub fn after(&self, level: usize, levels: usize) -> usize {
        level.saturating_sub(levels * self.primes_per_level)
    }

    /// Fails, naming the program and the set, if a stage of `need` levels cannot run even
    /// right after a bootstrapping.
    pub fn check_stage(&self, program: &str, params: &str, need: usize) -> Result<()> {
        if self.after_boot >= need {
            return Ok(());
        }
        Err(ProgramError::Invalid {
            name: "params",
            value: params.to_string(),
            allowed: format!(
                "a parameter set with at least {need} levels after bootstrapping ({program} needs {need} per stage; '{params}' leaves {})",
                self.after_boot
            ),
        })
    }

    /// How many stages of `need` levels run between two bootstrappings.
    pub fn stages_per_boot(&self, need: usize) -> usize {
        self.after_boot / need.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_gives_the_bootstrap_counts_of_workloads_8_2() {
        // Simulate the rule for 32 HELR iterations of 5 levels at 8, 9, 15 and 16 levels.
        for (after_boot, boots) in [(8, 31), (9, 31), (15, 10), (16, 10), (5, 31), (10, 15)] {
            let b = LevelBudget {
                base: 0,
                primes_per_level: 1,
                after_boot,
            };
            let mut level = after_boot;
            let mut n = 0;
            for _ in 0..32 {
                if b.must_boot(level, 5) {
                    level = after_boot;
                    n += 1;
                }
                level = b.after(level, 5);
            }
            assert_eq!(n, boots, "{after_boot} levels");
            assert_eq!(b.stages_per_boot(5), after_boot / 5);
        }
    }

    #[test]
    fn double_prime_levels_count_pairs() {
        let b = LevelBudget {
            base: 1,
            primes_per_level: 2,
            after_boot: 9,
        };
        assert_eq!(b.left(19), 9);
        assert_eq!(b.after(19, 5), 9);
        assert!(b.must_boot(9, 5));
        assert!(!b.must_boot(11, 5));
        let e = b.check_stage("helr", "x", 10).unwrap_err().to_string();
        assert!(e.contains("leaves 9"), "{e}");
    }
}
