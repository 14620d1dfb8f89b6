//! The parameter set behind a simulation, and what it asks of the machine: the set a
//! workload's `--params` names (a preset or a file, [`tessera_ckks::params_file`]), its
//! security label for reports (a model-only set is labelled insecure in every output), the
//! ring a saved trace is written over, and the word-width check: a machine whose word is
//! narrower than the set's primes cannot hold a residue in one word, and is refused instead
//! of simulated at a word size the set does not fit.

use serde::Serialize;
use tessera_ckks::params_file::{load_bootstrap, ParamsFile};
use tessera_ckks::Parameters;
use tessera_programs::workloads::{wide, WORKLOADS};
use tessera_sim::arch::Arch;
use tessera_sim::SimError;

/// A resolved CKKS parameter set.
#[derive(Clone, Debug)]
pub struct ParameterSet {
    /// As read from its file.
    pub file: ParamsFile,
    /// Checked, with its primes.
    pub params: Parameters,
}

/// What reports say about the set.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ParamsLabel {
    /// The set's name.
    pub name: String,
    /// Whether it meets 128-bit security (never for model-only and test sets).
    pub secure_128: bool,
    /// Whether its file opted out of the check (`security = "model-only"`).
    pub model_only: bool,
    /// One line: the security check's outcome.
    pub security: String,
    /// Bits of its widest prime.
    pub max_prime_bits: u32,
    /// The narrowest machine word it may be simulated at.
    pub required_word_bits: u32,
}

impl ParameterSet {
    /// The CKKS set behind workload `workload` at `params`: the bootstrapping set for
    /// `bootstrap` and for programs, the plain set for HE operations. `None` where the
    /// workload has no CKKS set (trace files, CoFHEE's 128-bit workloads) or a program's own
    /// set that is not a preset or file (`test-program`, `lola-n14`).
    pub fn of_workload(workload: &str, params: &str, program: bool) -> crate::Result<Option<Self>> {
        let wide = wide::wide_params(params).is_ok() && wide::WIDE_WORKLOADS.contains(&workload);
        if wide || (!program && !WORKLOADS.contains(&workload)) {
            return Ok(None);
        }
        let file = if program || workload == "bootstrap" {
            match load_bootstrap(params) {
                Ok((_, f)) => f,
                Err(_) if program => return Ok(None),
                Err(e) => return Err(SimError::Unsupported(e.to_string()).into()),
            }
        } else {
            ParamsFile::load(params).map_err(|e| SimError::Unsupported(e.to_string()))?
        };
        let params = file
            .parameters()
            .map_err(|e| SimError::Unsupported(e.to_string()))?;
        Ok(Some(Self { file, params }))
    }

    /// The report label.
    pub fn label(&self) -> ParamsLabel {
        let s = self.params.security();
        ParamsLabel {
            name: self.params.name().to_string(),
            secure_128: s.secure_128,
            model_only: s.model_only,
            security: s.summary.clone(),
            max_prime_bits: self.params.max_prime_bits(),
            required_word_bits: self.file.required_word_bits(&self.params),
        }
    }

    /// Refuses a machine whose word is narrower than the set's primes (or than the
    /// `model_word_bits` its file allows).
    pub fn check_word(&self, arch: &Arch) -> Result<(), SimError> {
        let word = match arch {
            Arch::Vector(m) => m.clock.word_bits,
            Arch::Pe(m) => m.clock.word_bits,
        };
        let need = self.file.required_word_bits(&self.params);
        if word >= need {
            return Ok(());
        }
        Err(SimError::Invalid {
            name: "clock.word_bits",
            value: format!("{word} (machine '{}')", arch.name()),
            allowed: format!(
                "at least {need} bits for parameter set '{}', whose widest prime has {} bits: \
                 pick a set of narrower primes (tessera params list), or write one \
                 (tessera params show, docs/parameters.md); a set that stands in for narrower \
                 primes says so with model_word_bits",
                self.params.name(),
                self.params.max_prime_bits()
            ),
        })
    }

    /// The header of a trace recorded over this set's ring.
    pub fn trace_header(&self) -> tessera_backend::trace::TraceHeader {
        let p = &self.params;
        let moduli = p.q().iter().chain(p.p()).chain(p.p_extra()).copied();
        tessera_backend::trace::TraceHeader::new(p.n(), moduli.collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_words_are_refused_and_model_word_bits_allows_a_stand_in() {
        let ark = Arch::load("ark").unwrap();
        let reed = Arch::load("reed").unwrap();
        let h3 = Arch::load("h3").unwrap();
        let small = ParameterSet::of_workload("hmult", "test-small", false)
            .unwrap()
            .unwrap();
        assert_eq!(small.label().max_prime_bits, 46);
        assert!(small.check_word(&ark).is_ok() && small.check_word(&reed).is_ok());
        let e = small.check_word(&h3).unwrap_err().to_string();
        assert!(
            e.contains("clock.word_bits") && e.contains("36") && e.contains("46 bits"),
            "{e}"
        );
        // h3-boot's 50-bit primes stand in for H3's 36-bit ones (its file says so).
        let boot = ParameterSet::of_workload("bootstrap", "test-boot", false)
            .unwrap()
            .unwrap();
        assert!(boot.check_word(&h3).is_err());
        let text =
            boot.file
                .to_toml()
                .replacen("sigma = 3.2\n", "sigma = 3.2\nmodel_word_bits = 36\n", 1);
        let file = ParamsFile::parse(&text, "x.toml").unwrap();
        let stand_in = ParameterSet {
            params: file.parameters().unwrap(),
            file,
        };
        assert!(stand_in.check_word(&h3).is_ok());
        // Trace files and CoFHEE's sets have no CKKS set to check.
        assert!(ParameterSet::of_workload("ntt", "cofhee-n12", false)
            .unwrap()
            .is_none());
        assert!(ParameterSet::of_workload("x.trace", "ark", false)
            .unwrap()
            .is_none());
    }
}
