//! Which SIMD kernel the library may use: the fastest the CPU supports, or a lower one chosen
//! with the `TESSERA_SIMD` environment variable (`scalar`, `avx2`, `avx512`, `avx512-ifma`).
//!
//! Why an override: the AVX2 paths must be measurable and testable on AVX-512 hosts (and the
//! scalar path anywhere), and a user can rule out a kernel they distrust. The variable is read
//! once per process; every dispatch site (NTT kernel choice, element-wise products and sums,
//! BConv, the XOF's rejection sampling) takes its kernel from [`limit`] or [`active`], so one
//! setting governs them all. The value is a ceiling: a primary uses the fastest kernel at or
//! below it that handles its modulus. The IFMA kernel runs 52-bit words for NTT primes below
//! 2^50 and 64-bit words with IFMA's Shoup quotients above (the NTT and BConv rows) where
//! those measured faster than AVX-512F's at start ([`word64_products`]); the other
//! 64-bit-word primaries fall back to its AVX-512F/DQ sibling ([`word64`]).
//!
//! An unknown value, or a kernel this CPU lacks, is refused with [`MathError`]: [`limit`]
//! returns it, and so does every fallible entry point that plans work ([`crate::NttPlan::new`],
//! hence every ring, and [`crate::BaseConverter::new`]).
//!
//! ```
//! use tessera_math::{simd, Kernel};
//!
//! // Parsing is separate from the environment, so it can be tried here.
//! assert_eq!(simd::parse("scalar").unwrap(), Kernel::Scalar);
//! assert!(simd::parse("sse9").is_err());
//! // The kernel in force is never above what the CPU supports.
//! let k = simd::limit().unwrap_or(Kernel::Scalar);
//! assert!(k.cpu_supports());
//! ```

use crate::error::{MathError, Result};
use crate::ntt::Kernel;
use std::sync::OnceLock;

/// The environment variable read by [`limit`].
pub const ENV: &str = "TESSERA_SIMD";

/// The fastest kernel this CPU supports.
pub fn cpu_best() -> Kernel {
    Kernel::ALL
        .into_iter()
        .rev()
        .find(|k| k.cpu_supports())
        .unwrap_or(Kernel::Scalar)
}

/// The kernel named `value` (one of [`Kernel::name`]), if this CPU supports it.
pub fn parse(value: &str) -> Result<Kernel> {
    let names = || {
        Kernel::ALL
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let kernel = Kernel::ALL
        .into_iter()
        .find(|k| k.name() == value.trim())
        .ok_or_else(|| MathError::OutOfRange {
            name: ENV,
            value: format!("{value:?}"),
            allowed: format!("one of {}", names()),
        })?;
    if !kernel.cpu_supports() {
        let here: Vec<&str> = Kernel::ALL
            .iter()
            .filter(|k| k.cpu_supports())
            .map(|k| k.name())
            .collect();
        return Err(MathError::Unsupported(format!(
            "{ENV}={}: this CPU lacks the instructions of kernel {} (it supports {})",
            kernel.name(),
            kernel.name(),
            here.join(", ")
        )));
    }
    Ok(kernel)
}

/// Where the kernel in force came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `TESSERA_SIMD` is unset or empty: the fastest kernel of the CPU.
    Cpu,
    /// Chosen with `TESSERA_SIMD`.
    Override,
}

fn from_env() -> Result<(Kernel, Source)> {
    match std::env::var(ENV) {
        Ok(v) if !v.trim().is_empty() => parse(&v).map(|k| (k, Source::Override)),
        Ok(_) | Err(std::env::VarError::NotPresent) => Ok((cpu_best(), Source::Cpu)),
        Err(std::env::VarError::NotUnicode(v)) => Err(MathError::OutOfRange {
            name: ENV,
            value: format!("{v:?}"),
            allowed: "a kernel name in ASCII".into(),
        }),
    }
}

fn cached() -> &'static Result<(Kernel, Source)> {
    static SETTING: OnceLock<Result<(Kernel, Source)>> = OnceLock::new();
    SETTING.get_or_init(from_env)
}

/// The highest kernel any primary may use in this process: `TESSERA_SIMD` when set (read on
/// the first call), else [`cpu_best`]. An invalid setting is an error.
pub fn limit() -> Result<Kernel> {
    cached().clone().map(|(k, _)| k)
}

/// Whether [`limit`] comes from `TESSERA_SIMD` or from the CPU (or the error of an invalid
/// setting).
pub fn source() -> Result<Source> {
    cached().clone().map(|(_, s)| s)
}

/// [`limit`] for the dispatch sites that cannot fail: with an invalid `TESSERA_SIMD` they run
/// the scalar kernel (correct everywhere); the fallible entry points have reported the error by
/// then, since no ring or converter can be built with it.
pub fn active() -> Kernel {
    limit().unwrap_or(Kernel::Scalar)
}

/// Whether the AVX2 kernels may compute products of residues below 2^50 in double precision on
/// the FMA units (the NTT's Shoup product, the element-wise products and dot products): the
/// CPU has AVX2 and FMA, and `TESSERA_AVX2_FMA` is not `0` (set it to measure the integer AVX2
/// products on the same host). Read once. Either way the results are the same bits.
pub fn avx2_fma() -> bool {
    static FMA: OnceLock<bool> = OnceLock::new();
    *FMA.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            std::env::var("TESSERA_AVX2_FMA").map_or(true, |v| v != "0")
                && std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    })
}

/// How much faster IFMA's Shoup quotient (`ntt::x86::shoup64_ifma`: two fused 52-bit high
/// products and three 64-bit low products) runs the NTT butterfly of a 60-bit prime than
/// AVX-512F's (three 32-bit products and two 64-bit low products, plus shifts and additions)
/// on this CPU: the ratio of their register-resident butterfly rates, measured once per
/// process (about 2 ms, the better of three alternated runs each), or `None` without IFMA.
///
/// Why measured: the balance depends on the core. On Zen 4 every 512-bit multiply issues once
/// per cycle and the IFMA form saves four other operations (1.20-1.27x measured); where a
/// 64-bit low product costs several multiplies (Intel cores split `vpmullq` into three
/// micro-operations) the IFMA form's extra `vpmullq` may cost more than it saves.
/// [`word64_products`] uses the IFMA form only where it measured faster; both give the same
/// bits.
pub fn ifma_quotient_speedup() -> Option<f64> {
    static SPEEDUP: OnceLock<Option<f64>> = OnceLock::new();
    *SPEEDUP.get_or_init(|| {
        if !Kernel::Avx512Ifma.cpu_supports() {
            return None;
        }
        // The largest 60-bit NTT prime for N = 2^16 (any modulus of that size would do).
        const Q60: u64 = 1_152_921_504_606_584_833;
        let mut best = [0f64; 2];
        for _ in 0..3 {
            for (i, k) in [Kernel::Avx512Ifma, Kernel::Avx512].into_iter().enumerate() {
                let rate = crate::ntt::bound::butterfly_rate_with(k, Q60, 1, 20_000).ok()?;
                best[i] = best[i].max(rate);
            }
        }
        Some(best[0] / best[1])
    })
}

/// The kernel of the 64-bit-word Shoup products (NTT butterflies, BConv rows) that `kernel`
/// allows: IFMA's quotient where [`ifma_quotient_speedup`] measured it faster, else the
/// AVX-512F/DQ form; every other kernel is itself.
pub fn word64_products(kernel: Kernel) -> Kernel {
    match kernel {
        Kernel::Avx512Ifma if ifma_quotient_speedup().is_none_or(|s| s <= 1.0) => Kernel::Avx512,
        k => k,
    }
}

/// The kernel of the 64-bit-word element-wise primaries under `kernel`: IFMA's primaries run
/// the AVX-512F/DQ code. (Its Shoup quotient, `ntt::x86::shoup64_ifma`, saves four operations
/// per product, but a constant product is bound by the multiply pipes, which also run the
/// unsigned minimum of its reductions: five multiplies and two minima either way on Zen 4.)
pub fn word64(kernel: Kernel) -> Kernel {
    match kernel {
        Kernel::Avx512Ifma => Kernel::Avx512,
        k => k,
    }
}

/// The kernels the tests compare with the scalar one: those this CPU supports. Each skipped
/// kernel is reported once per `what` on standard error, written directly so that the test
/// harness's capture does not hide it: a host without AVX-512 shows its AVX-512 cases as
/// skipped rather than passed.
#[doc(hidden)]
pub fn kernels_for_tests(what: &str) -> Vec<Kernel> {
    use std::collections::HashSet;
    use std::io::Write;
    use std::sync::Mutex;
    static REPORTED: Mutex<Option<HashSet<(String, Kernel)>>> = Mutex::new(None);
    Kernel::ALL
        .into_iter()
        .filter(|&k| {
            let here = k.cpu_supports();
            if !here {
                let mut seen = REPORTED.lock().unwrap_or_else(|e| e.into_inner());
                if seen
                    .get_or_insert_with(HashSet::new)
                    .insert((what.into(), k))
                {
                    let _ = writeln!(
                        std::io::stderr(),
                        "{what}: kernel {} skipped (this CPU lacks it)",
                        k.name()
                    );
                }
            }
            here
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_values_are_errors() {
        for k in Kernel::ALL {
            match parse(k.name()) {
                Ok(p) => assert_eq!(p, k),
                Err(e) => {
                    assert!(!k.cpu_supports());
                    assert!(e.to_string().contains("lacks"), "{e}");
                }
            }
        }
        let e = parse("avx3").unwrap_err().to_string();
        assert!(
            e.contains("TESSERA_SIMD") && e.contains("avx512-ifma"),
            "{e}"
        );
        assert!(parse("").is_err());
    }

    #[test]
    fn the_limit_is_supported_here() {
        // Under any valid TESSERA_SIMD the kernel in force runs on this CPU.
        if let Ok(k) = limit() {
            assert!(k.cpu_supports());
            assert!(k <= cpu_best());
        }
        assert_eq!(word64(Kernel::Avx512Ifma), Kernel::Avx512);
        assert_eq!(word64(Kernel::Avx2), Kernel::Avx2);
    }

    #[test]
    fn ifma_quotients_are_chosen_where_they_measured_faster() {
        for k in [Kernel::Scalar, Kernel::Avx2, Kernel::Avx512] {
            assert_eq!(word64_products(k), k);
        }
        let speedup = ifma_quotient_speedup();
        assert_eq!(speedup.is_some(), Kernel::Avx512Ifma.cpu_supports());
        let pays = speedup.is_some_and(|s| s > 1.0);
        assert!(
            speedup.is_none_or(|s| s.is_finite() && s > 0.0),
            "{speedup:?}"
        );
        let want = if pays {
            Kernel::Avx512Ifma
        } else {
            Kernel::Avx512
        };
        assert_eq!(word64_products(Kernel::Avx512Ifma), want);
        if Kernel::Avx512Ifma.cpu_supports() {
            // Below 2^50 the 52-bit kernel runs regardless; above, the measured choice.
            let (q49, q60) = (562_949_953_216_513, 1_152_921_504_606_584_833);
            let n = 1 << 10;
            assert_eq!(
                Kernel::best_up_to(Kernel::Avx512Ifma, q49, n),
                Kernel::Avx512Ifma
            );
            assert_eq!(Kernel::best_up_to(Kernel::Avx512Ifma, q60, n), want);
            assert_eq!(Kernel::best_up_to(Kernel::Avx512, q60, n), Kernel::Avx512);
        }
    }
}
