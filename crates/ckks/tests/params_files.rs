//! The built-in parameter sets are files (configs/params/*.toml) read by the loader of
//! `tessera_ckks::params_file`. These tests hold the presets as they were written in Rust
//! before they became files (session 28), and check that every file gives exactly the same
//! literal, primes and bootstrapping circuit; then the file form's round trip, the security
//! modes and the loader's errors (field, allowed range, file and line).

use tessera_ckks::bootstrap::BootstrapParameters;
use tessera_ckks::params::{
    preset_literal, preset_names, KeySwitching, Parameters, ParametersLiteral, Rescaling,
    SecretDistribution,
};
use tessera_ckks::params_file::{resolve, resolve_bootstrap, ParamsFile, SecurityMode};
use tessera_ckks::{CkksError, Result};

/// A dense-ternary, sigma = 3.2, single-prime-rescaling literal to fill in.
fn base(name: &str, log_n: u32, source: &'static str) -> ParametersLiteral {
    ParametersLiteral {
        name: name.to_string(),
        log_n,
        log_q: Vec::new(),
        log_p: Vec::new(),
        dnum: 1,
        key_switching: KeySwitching::Hybrid,
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
fn legacy_literal(name: &str) -> Option<ParametersLiteral> {
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
        // Added as a file (session 51, issue 22): ark's chain with seven 50-bit special
        // primes, so every limb but q_0 runs AVX2's FMA kernels; log2(PQ) ~ 1560.
        "ark-p50" => ParametersLiteral {
            log_q: [vec![60], rep(50, 23)].concat(),
            log_p: rep(50, 7),
            dnum: 4,
            log_default_scale: 50,
            ..base("ark-p50", 16, "ark.md Table III (N, L, dnum); seven 50-bit special primes for AVX2's FMA kernels (ours)")
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
        // Added as a file (session 31, issue 22 item 3): ark-boot's levels as pairs of
        // primes below 2^30 for 32-bit words: a 29 + 30-bit base, 11 levels of two 25-bit
        // primes (Delta = 2^50), 12 levels of a 29- and a 30-bit prime, 12 30-bit special
        // primes, dnum = 4.
        "w32-boot" => ParametersLiteral {
            log_q: [vec![29, 30], rep(25, 22), [29, 30].repeat(12)].concat(),
            log_p: rep(30, 12),
            dnum: 4,
            log_default_scale: 50,
            rescaling: Rescaling::DoublePrime,
            ..base("w32-boot", 16, "ark-boot's levels (ark.md Table III: N, L_boot = 15, dnum = 4) as pairs of primes below 2^30 (ours)")
        },
        // Added as a file (session 32, issue 25 item 5): boosted key switching at N = 2^16
        // with ark's prime sizes, L = 16 (the most 128-bit security allows when P >= Q);
        // the special primes are sized by `boosted_special_bits` (six of 58 bits, nine of 57).
        "boosted" => ParametersLiteral {
            log_q: [vec![60], rep(50, 16)].concat(),
            log_p: [rep(58, 6), rep(57, 9)].concat(),
            dnum: 1,
            key_switching: KeySwitching::Boosted,
            log_default_scale: 50,
            ..base("boosted", 16, "boosted key switching (GHS 2012 / CraterLake ISCA 2022) at N = 2^16 with ark's prime sizes; L = 16 is the most that fits 128-bit security; sizes ours")
        },
        // Boosted at reed-dnum3's 54-bit primes: L = 15, P of fifteen 51-bit and two 50-bit
        // primes (session 32).
        "reed-boosted" => ParametersLiteral {
            log_q: rep(54, 16),
            log_p: [rep(51, 15), rep(50, 2)].concat(),
            dnum: 1,
            key_switching: KeySwitching::Boosted,
            log_default_scale: 54,
            ..base("reed-boosted", 16, "boosted key switching at reed-dnum3's 54-bit primes (reed.md 6.3: w = 54); L = 15 is the most that fits 128-bit security; sizes ours")
        },
        _ => return None,
    })
}

/// A bootstrapping parameter set: the CKKS preset it runs on and its circuit.
/// `ark` runs on `ark-boot` (ark.md section III-B: three CoeffToSlot and three
/// SlotToCoeff levels, the remaining nine of L_boot = 15 for EvalMod), `lattigo` on
/// `lattigo-boot` (4 + 9 + 3), `h3` on `h3-boot` (3 + 9 + 3, one level more than h3.md Fig. 9's 14), `reed` on
/// `reed-boot` (3 + 9 + 3, reed.md Table 3), `cifher` on `cifher-boot` (3 + 9 + 3 levels
/// of two primes each, with minimum key-switching), and `test-boot` and `test-boot-double`
/// on themselves (2 + 9 + 2, for CI).
fn legacy_bootstrap(name: &str) -> Result<(&'static str, BootstrapParameters)> {
    let base = BootstrapParameters {
        cts_levels: 3,
        stc_levels: 3,
        k_bound: 12.0,
        cheb_degree: 31,
        double_angle: 3,
        encapsulation: Some(32),
        of_limb: false,
        min_ks: false,
        hoisting: true,
        double_hoisting: false,
        meta_log_scale: None,
        slots: None,
    };
    Ok(match name {
        "ark" | "ark-boot" => ("ark-boot", base),
        "lattigo" | "lattigo-boot" => (
            "lattigo-boot",
            BootstrapParameters {
                cts_levels: 4,
                ..base.clone()
            },
        ),
        // h3.md Fig. 9 has 14 bootstrapping levels and 16 effective ones; ours takes 15
        // (3 CoeffToSlot + 9 EvalMod + 3 SlotToCoeff) and leaves 15: the 8-level EvalMod
        // variants we measured (degree 31 with two double-angle steps) lose all precision
        // at K = 12.
        "h3" | "h3-boot" => ("h3-boot", base),
        // reed.md Table 3: "1 -> 30 -> 15", 15 bootstrapping levels (3 + 9 + 3).
        "reed" | "reed-boot" => ("reed-boot", base),
        // reed.md 6.3 / Table 4: L_boot = 17 (4 + 9 + 4) at dnum = 3.
        "reed-dnum3" | "reed-dnum3-boot" => (
            "reed-dnum3-boot",
            BootstrapParameters {
                cts_levels: 4,
                stc_levels: 4,
                ..base.clone()
            },
        ),
        // cifher.md V-B: minimum key-switching yes, on-the-fly limb extension no (its
        // NTTs cost more die-to-die traffic than the plaintext loads they save);
        // sparse-secret encapsulation ([12]) is part of its bootstrapping.
        "cifher" | "cifher-boot" => (
            "cifher-boot",
            BootstrapParameters {
                min_ks: true,
                ..base.clone()
            },
        ),
        // ark-boot's circuit with minimum key-switching (docs/benchmarks.md, "32-bit words").
        "w32-boot" => (
            "w32-boot",
            BootstrapParameters {
                min_ks: true,
                ..base.clone()
            },
        ),
        "test-boot" | "test-boot-double" => (
            if name == "test-boot" {
                "test-boot"
            } else {
                "test-boot-double"
            },
            BootstrapParameters {
                cts_levels: 2,
                stc_levels: 2,
                encapsulation: None,
                ..base.clone()
            },
        ),
        _ => {
            return Err(CkksError::UnknownPreset(
                name.to_string(),
                "ark, lattigo, h3, reed, reed-dnum3, cifher, test-boot, test-boot-double".into(),
            ))
        }
    })
}

/// Every preset file gives exactly the literal, the primes and the bootstrapping circuit the
/// Rust table gave.
#[test]
fn every_preset_file_is_the_preset_it_replaced() {
    assert_eq!(preset_names().len(), 21);
    for name in preset_names() {
        let want = legacy_literal(name).unwrap_or_else(|| panic!("{name} has no reference"));
        let got = preset_literal(name).unwrap_or_else(|| panic!("{name} does not load"));
        assert_eq!(got, want, "{name}");
        // Prime generation is deterministic: compare the primes only where it is quick.
        if want.log_n <= 12 {
            let a = Parameters::preset(name).unwrap();
            let b = Parameters::new(want.clone()).unwrap();
            assert_eq!(
                (a.q(), a.p(), a.p_extra()),
                (b.q(), b.p(), b.p_extra()),
                "{name}"
            );
            assert_eq!(a.security(), b.security(), "{name}");
        }
    }
    for name in [
        "ark",
        "ark-boot",
        "lattigo",
        "h3",
        "reed",
        "reed-dnum3",
        "cifher",
        "cifher-boot",
        "w32-boot",
        "test-boot",
        "test-boot-double",
        "test-small",
        "nope",
    ] {
        let want = legacy_bootstrap(name);
        let got = BootstrapParameters::preset(name);
        match (want, got) {
            (Ok(w), Ok(g)) => assert_eq!(w, g, "{name}"),
            // A preset without a circuit is named as such; an unknown name as unknown.
            (Err(_), Err(e)) => assert!(
                if name == "nope" {
                    matches!(e, CkksError::UnknownPreset(..))
                } else {
                    matches!(e, CkksError::NoBootstrapCircuit(..))
                        && e.to_string().contains("has no bootstrapping circuit")
                        && e.to_string().contains("ark, lattigo")
                },
                "{name}: {e}"
            ),
            (w, g) => panic!("{name}: {w:?} vs {g:?}"),
        }
    }
}

/// The names bootstrapping accepts, and the presets that stand in for narrower words.
#[test]
fn bootstrap_names_and_word_widths() {
    assert_eq!(
        tessera_ckks::params_file::bootstrap_preset_names(),
        [
            "test-boot",
            "test-boot-double",
            "ark",
            "lattigo",
            "h3",
            "reed",
            "reed-dnum3",
            "cifher",
            "w32-boot"
        ]
    );
    let words = |name: &str| {
        let f = ParamsFile::load(name).unwrap();
        let p = f.parameters().unwrap();
        (p.max_prime_bits(), f.required_word_bits(&p))
    };
    assert_eq!(words("h3-boot"), (50, 36));
    assert_eq!(words("cifher-boot"), (33, 32));
    // Every prime of w32-boot fits a 32-bit word's 30-bit residues (the pairing keeps each
    // partner at its size here).
    assert_eq!(words("w32-boot"), (30, 30));
    assert_eq!(words("test-small"), (46, 46));
}

/// The N = 2^16 presets' primes, once (prime generation at N = 2^16 takes a moment).
#[test]
fn large_preset_files_generate_the_same_primes() {
    for name in ["ark-boot", "cifher-boot", "h3", "ark-p50"] {
        let a = Parameters::preset(name).unwrap();
        let b = Parameters::new(legacy_literal(name).unwrap()).unwrap();
        assert_eq!(
            (a.q(), a.p(), a.p_extra()),
            (b.q(), b.p(), b.p_extra()),
            "{name}"
        );
    }
}

/// show -> file -> load == preset, for every preset, and the text is stable.
#[test]
fn written_presets_read_back_to_the_same_set() {
    for name in preset_names() {
        let file = ParamsFile::load(name).unwrap();
        let text = file.to_toml();
        let again = ParamsFile::parse(&text, "written.toml").unwrap();
        assert_eq!(again, file, "{name}");
        assert_eq!(again.to_toml(), text, "{name}");
    }
    // Through a file on disk and the resolution function.
    let dir = std::env::temp_dir().join(format!("tessera-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("boot.toml");
    std::fs::write(&path, ParamsFile::load("test-boot").unwrap().to_toml()).unwrap();
    let (p, bp) = resolve_bootstrap(path.to_str().unwrap()).unwrap();
    let (q, bq) = resolve_bootstrap("test-boot").unwrap();
    assert_eq!((p.q(), p.p()), (q.q(), q.p()));
    assert_eq!(bp, bq);
    assert_eq!(resolve(path.to_str().unwrap()).unwrap().q(), q.q());
    // A set without [bootstrap] is refused for bootstrapping, naming the file.
    let plain = dir.join("plain.toml");
    std::fs::write(&plain, ParamsFile::load("test-small").unwrap().to_toml()).unwrap();
    let e = resolve_bootstrap(plain.to_str().unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("plain.toml") && e.contains("[bootstrap]"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn test_small_text() -> String {
    ParamsFile::load("test-small").unwrap().to_toml()
}

/// `security = "model-only"` builds a set the 128-bit check refuses, with any name, and
/// labels it insecure.
#[test]
fn model_only_sets_are_built_and_labelled_insecure() {
    let text = test_small_text()
        .replace("name = \"test-small\"", "name = \"my-design\"")
        .replace("security = \"test\"", "security = \"model-only\"");
    let f = ParamsFile::parse(&text, "my.toml").unwrap();
    assert_eq!(f.security, SecurityMode::ModelOnly);
    let p = f.parameters().unwrap();
    assert!(!p.security().secure_128 && p.security().model_only);
    assert!(p.security().summary.contains("NOT SECURE (model-only"));
    // Without the opt-out the same set is refused.
    let checked = text.replace("security = \"model-only\"", "security = \"128-bit\"");
    let e = ParamsFile::parse(&checked, "my.toml")
        .unwrap()
        .parameters()
        .unwrap_err();
    assert!(matches!(e, CkksError::Insecure { .. }), "{e}");
    // A secure set opted out is still never reported secure.
    let ark = ParamsFile::load("test-medium").unwrap().to_toml();
    let ark = ark.replace("security = \"test\"", "security = \"model-only\"");
    let p = ParamsFile::parse(&ark, "m.toml")
        .unwrap()
        .parameters()
        .unwrap();
    assert!(!p.security().secure_128);
    // "test" needs a test-* name.
    let e = ParamsFile::parse(
        &test_small_text().replace("name = \"test-small\"", "name = \"prod\""),
        "x.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("security") && e.contains("x.toml, line 4"),
        "{e}"
    );
}

fn parse_err(text: &str) -> String {
    ParamsFile::parse(text, "bad.toml").unwrap_err().to_string()
}

/// Every bad field is an error naming the file, the line, the field and its allowed range.
#[test]
fn bad_fields_name_the_file_line_field_and_range() {
    let base = test_small_text();
    let line_of = |key: &str| {
        base.lines()
            .position(|l| l.starts_with(&format!("{key} =")))
            .unwrap()
            + 1
    };
    let cases: Vec<(&str, String, &str)> = vec![
        ("log_n", "log_n = 9".into(), "10 to 17"),
        ("log_n", "log_n = \"16\"".into(), "10 to 17"),
        ("dnum", "dnum = 0".into(), "1 to 4"),
        ("dnum", "dnum = 5".into(), "1 to 4"),
        ("log_scale", "log_scale = 80".into(), "1 to 45"),
        ("sigma", "sigma = nan".into(), "finite"),
        ("sigma", "sigma = -1.0".into(), "finite"),
        ("dynamic_special", "dynamic_special = 65".into(), "0 to 64"),
        ("rescaling", "rescaling = \"triple\"".into(), "\"double\""),
        ("secret", "secret = \"gaussian\"".into(), "\"sparse\""),
        (
            "chain",
            "chain = [{ bits = 70 }]".into(),
            "chain[0].bits = 70 is invalid: allowed an integer from 17 to 61",
        ),
        (
            "chain",
            "chain = [{ bits = 40, count = 100000 }]".into(),
            "1 to 1024",
        ),
        ("chain", "chain = []".into(), "non-empty"),
        (
            "special",
            "special = [{ bits = 40, size = 2 }]".into(),
            "special[0].size",
        ),
    ];
    for (key, line, needle) in cases {
        let text = base
            .lines()
            .map(|l| {
                if l.starts_with(&format!("{key} =")) {
                    line.clone()
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let e = parse_err(&text);
        assert!(
            e.contains(needle) && e.contains(&format!("bad.toml, line {}", line_of(key))),
            "{key}: '{needle}' and line {} in: {e}",
            line_of(key)
        );
    }
    // Unknown and missing fields, sparse secrets without a weight, bad bootstrap values.
    let e = parse_err(&format!("{base}colour = \"red\"\n"));
    assert!(e.contains("colour") && e.contains("one of name"), "{e}");
    let e = parse_err(&base.replace("dnum = 4\n", ""));
    assert!(e.contains("dnum = (missing)"), "{e}");
    let e = parse_err(&base.replace("secret = \"ternary\"", "secret = \"sparse\""));
    assert!(
        e.contains("hamming_weight") && e.contains("1 to 1024"),
        "{e}"
    );
    let boot = ParamsFile::load("test-boot").unwrap().to_toml();
    let e = parse_err(&boot.replace("cts_levels = 2", "cts_levels = 12"));
    assert!(
        e.contains("bootstrap.cts_levels = 12") && e.contains("1 to 9"),
        "{e}"
    );
    let e = parse_err(&format!("{boot}slots = 24\n"));
    assert!(
        e.contains("bootstrap.slots") && e.contains("power of two"),
        "{e}"
    );
    let e = parse_err(&boot.replace("k_bound = 12.0", "k_bound = inf"));
    assert!(e.contains("bootstrap.k_bound"), "{e}");
    // Not TOML at all: the parser's line.
    let e = parse_err("name = \"x\"\nlog_n = = 3\n");
    assert!(e.contains("bad.toml, line 2"), "{e}");
    // Unknown names and missing files.
    let e = resolve("no-such-set").unwrap_err().to_string();
    assert!(e.contains("no-such-set") && e.contains("ark"), "{e}");
}

/// A file that parses but whose chain fails [`Parameters::new`]'s checks is refused there.
#[test]
fn chain_rules_apply_to_files() -> Result<()> {
    let text = test_small_text().replace("special = [{ bits = 46 }]", "special = [{ bits = 20 }]");
    let e = ParamsFile::parse(&text, "x.toml")?
        .parameters()
        .unwrap_err();
    assert!(e.to_string().contains("log_p"), "{e}");
    let lit = ParamsFile::parse(&test_small_text(), "x.toml")?.literal;
    assert_eq!(lit.rescaling, Rescaling::SinglePrime);
    assert_eq!(lit.secret, SecretDistribution::Ternary);
    let _: ParametersLiteral = lit;
    Ok(())
}
