//! `tessera bench ...`: kernel measurements with medians over repeated runs.

use crate::output::{emit, json_line, table};
use crate::schema::Schema;
use clap::{Subcommand, ValueEnum};
use serde_json::{json, Value};
use std::time::Instant;
use tessera_backend::{BackendChoice, Compute};
use tessera_math::ntt::bound::{butterfly_rate, clock_hz};
use tessera_math::primes::generate_ntt_primes;
use tessera_math::{parallel, simd, AlignedVec, Kernel, MathError, NttPlan};

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Forward negacyclic NTT of one limb (radix-2, lazy reduction, best SIMD kernel).
    ///
    /// With --threads T the pool transforms --limbs independent limbs at once (default T) and
    /// median_s is the wall time of that batch divided by the number of limbs: the amortised
    /// time of one limb's NTT at that thread count.
    Ntt {
        /// log2 of the ring degree N (1 to 17); without it, a table over 10..=16.
        #[arg(long)]
        logn: Option<u32>,
        /// Prime size in bits (the largest NTT-friendly prime of that size is used).
        #[arg(long, default_value_t = 60)]
        bits: u32,
        /// Worker threads.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Limbs transformed per measurement (default: one per thread).
        #[arg(long)]
        limbs: Option<usize>,
        /// Kernel to use (default: the fastest this CPU supports for the prime).
        #[arg(long, value_enum)]
        kernel: Option<KernelArg>,
        /// Timed repetitions (median reported).
        #[arg(long, default_value_t = 101)]
        reps: usize,
        /// One JSON object per result line.
        #[arg(long)]
        json: bool,
    },
    /// CKKS HMult: multiply, relinearise and rescale at the top level.
    Hmult(CkksBenchArgs),
    /// CKKS HRot: one rotation at the top level.
    Hrot(CkksBenchArgs),
    /// Sixteen hoisted rotations of one ciphertext at the top level.
    Hoisted16(CkksBenchArgs),
    /// Full-slot bootstrapping (ModRaise, CoeffToSlot, EvalMod, SlotToCoeff).
    Bootstrap {
        /// Parameter preset with a bootstrapping circuit: ark, lattigo, h3, reed, reed-dnum3, cifher, test-boot or test-boot-double.
        #[arg(long, default_value = "ark")]
        params: String,
        /// Worker threads.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Timed runs (median reported).
        #[arg(long, default_value_t = 3)]
        reps: usize,
        /// Store the DFT plaintexts as ARK's OF-Limb (one limb each, extended on use).
        #[arg(long)]
        of_limb: bool,
        /// ARK's minimum key-switching in the DFTs (two rotation keys per matrix).
        #[arg(long)]
        min_ks: bool,
        /// Hoisting of the DFTs' baby steps: `single` (one ModUp shared, a ModDown per
        /// rotation) or `double` (baby and giant steps kept over Q P, one ModDown per part
        /// per matrix). Default: the parameter set's `double_hoisting`.
        #[arg(long, value_parser = ["single", "double"])]
        hoisting: Option<String>,
        /// META-BTS: a second bootstrapping of the first one's error scaled by 2^K (K from
        /// 1 to 40, a little below the one-bootstrapping worst-slot precision; one more
        /// level).
        #[arg(long, value_name = "K")]
        meta_bts: Option<u32>,
        /// One JSON object instead of a table.
        #[arg(long)]
        json: bool,
        /// Also report the time spent in each primary function (NTT, BConv, ...) per run.
        #[arg(long)]
        profile: bool,
        /// Limb word size of the backend, CPU or CUDA (32 or 64; see `bench hmult --help`).
        #[arg(long, value_parser = ["32", "64"])]
        word: Option<String>,
    },
}

/// Arguments shared by the CKKS operation benchmarks.
#[derive(clap::Args)]
pub struct CkksBenchArgs {
    /// Parameter preset (ark, reed, reed-dnum3, cifher, h3, lattigo, test-*).
    #[arg(long, default_value = "ark")]
    pub(crate) params: String,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    pub(crate) threads: usize,
    /// Timed repetitions (median reported).
    #[arg(long, default_value_t = 5)]
    pub(crate) reps: usize,
    /// One JSON object per result line.
    #[arg(long)]
    pub(crate) json: bool,
    /// Also report the time spent in each primary function (NTT, BConv, ...) per run.
    #[arg(long)]
    pub(crate) profile: bool,
    /// Level of the input ciphertext (default: the top level L).
    #[arg(long)]
    pub(crate) level: Option<usize>,
    /// Use per-level dynamic decomposition keys (h3.md 3.1) instead of the fixed dnum.
    #[arg(long)]
    pub(crate) dynamic: bool,
    /// Limb word size of the backend: 32 (every prime below 2^30) or 64. Default:
    /// TESSERA_WORD, else 32 where the set allows it and, on the CPU, it is the faster on
    /// this kernel (on the CUDA backend 32 wherever the set allows it).
    #[arg(long, value_parser = ["32", "64"])]
    pub(crate) word: Option<String>,
}

pub(crate) use tessera_backend::Word;

/// The word size of a bench run at `ring`: [`Word::choose`] on the CPU, [`Word::choose_gpu`]
/// on the CUDA backend.
pub(crate) fn word_choice(
    arg: Option<&str>,
    ring: &tessera_math::RingContext,
) -> Result<Word, MathError> {
    use tessera_backend::BackendChoice;
    let requested = arg.map(|a| Word::parse(a, "--word")).transpose()?;
    match BackendChoice::process_default()? {
        BackendChoice::Cpu => Word::choose(requested, ring),
        BackendChoice::Cuda => Word::choose_gpu(requested, ring),
    }
}

/// The backend a CKKS benchmark measures: the process's backend choice (`--backend`) with the
/// word size `word` ([`word_choice`]: `--word` or the backend's default).
pub(crate) fn compute_for(
    word: Word,
    ring: std::sync::Arc<tessera_math::RingContext>,
) -> Result<tessera_backend::Compute, MathError> {
    use tessera_backend::{BackendChoice, Compute, Cpu32Backend, CpuBackend};
    Ok(match BackendChoice::process_default()? {
        BackendChoice::Cpu => match word {
            Word::W64 => Compute::Cpu(CpuBackend::new(ring)),
            Word::W32 => Compute::Cpu32(Cpu32Backend::new(ring)?),
        },
        BackendChoice::Cuda => Compute::cuda_with_word(ring, word)?,
    })
}

#[derive(Clone, Copy, ValueEnum)]
pub enum KernelArg {
    Scalar,
    Avx2,
    Avx512,
    Avx512Ifma,
}

impl From<KernelArg> for Kernel {
    fn from(k: KernelArg) -> Kernel {
        match k {
            KernelArg::Scalar => Kernel::Scalar,
            KernelArg::Avx2 => Kernel::Avx2,
            KernelArg::Avx512 => Kernel::Avx512,
            KernelArg::Avx512Ifma => Kernel::Avx512Ifma,
        }
    }
}

/// The CPU's model name with its family and model numbers (`/proc/cpuinfo` on Linux; virtual
/// machines often show only a brand, e.g. "AMD EPYC", and the numbers tell the generation), or
/// "unknown": benchmark figures mean little without it.
pub(crate) fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().map(str::trim) == Some(name))
            .and_then(|l| l.split(':').nth(1))
            .map(|v| v.trim().to_string())
    };
    match (field("model name"), field("cpu family"), field("model")) {
        (Some(name), Some(family), Some(model)) => {
            format!("{name} (family {family}, model {model})")
        }
        (Some(name), _, _) => name,
        _ => "unknown".into(),
    }
}

/// The SIMD kernel in force and where it came from, e.g. "avx2 (TESSERA_SIMD)".
pub(crate) fn kernel_label() -> Result<String, MathError> {
    let source = match simd::source()? {
        simd::Source::Override => "TESSERA_SIMD",
        simd::Source::Cpu => "fastest on this CPU",
    };
    Ok(format!("{} ({source})", simd::limit()?.name()))
}

/// Prints one benchmark result line, adding the host facts every such line carries: `kernel`
/// (the `TESSERA_SIMD` kernel in force, unless the line names the kernel it measured, as the
/// NTT's does), `simd` (the kernel in force) and `cpu` (the CPU model). Its schema follows from
/// what it measured: a `primary` function's share, the NTT, bootstrapping, or one operation.
pub(crate) fn bench_json(mut v: Value) {
    let schema = if v.get("primary").is_some() {
        Schema::BenchProfile
    } else {
        match v.get("op").and_then(Value::as_str) {
            Some("ntt") => Schema::BenchNtt,
            Some("bootstrap") => Schema::BenchBootstrap,
            _ => Schema::BenchOp,
        }
    };
    if let Value::Object(map) = &mut v {
        let limit = simd::active().name();
        map.entry("kernel").or_insert_with(|| limit.into());
        map.insert("simd".into(), limit.into());
        map.insert("cpu".into(), cpu_model().into());
        if let Ok(b) = BackendChoice::process_default() {
            map.insert("backend".into(), b.name().into());
        }
    }
    json_line(schema, &v);
}

pub fn run(cmd: BenchCommand) -> Result<(), Box<dyn std::error::Error>> {
    use crate::bench_ckks::{run as ckks, CkksOp};
    // An unknown TESSERA_SIMD, or one this CPU lacks, stops here with the reason; so does an
    // unknown TESSERA_BACKEND.
    simd::limit()?;
    BackendChoice::process_default()?;
    let ckks_run = |op, a: CkksBenchArgs| ckks(op, &a);
    match cmd {
        BenchCommand::Hmult(a) => Ok(ckks_run(CkksOp::HMult, a)?),
        BenchCommand::Hrot(a) => Ok(ckks_run(CkksOp::HRot, a)?),
        BenchCommand::Hoisted16(a) => Ok(ckks_run(CkksOp::Hoisted16, a)?),
        BenchCommand::Bootstrap {
            params,
            threads,
            reps,
            of_limb,
            min_ks,
            hoisting,
            meta_bts,
            json,
            profile,
            word,
        } => Ok(crate::bench_boot::run(
            &params,
            threads,
            reps,
            crate::bench_boot::Options {
                of_limb,
                min_ks,
                double_hoisting: hoisting.map(|h| h == "double"),
                meta_bts,
                json,
                profile,
                word,
            },
        )?),
        BenchCommand::Ntt {
            logn,
            bits,
            threads,
            limbs,
            kernel,
            reps,
            json,
        } => Ok(bench_ntt(
            logn,
            bits,
            threads,
            limbs,
            kernel.map(Kernel::from),
            reps,
            json,
        )?),
    }
}

/// Most timed repetitions a bench accepts (a million NTTs at N = 2^17 is about a minute).
const MAX_REPS: usize = 1_000_000;

/// `--reps` must be 1 to [`MAX_REPS`]: 0 used to run once silently, which reports a median of
/// something the user did not ask for.
pub(crate) fn check_reps(reps: usize) -> Result<(), MathError> {
    if !(1..=MAX_REPS).contains(&reps) {
        return Err(MathError::OutOfRange {
            name: "reps",
            value: reps.to_string(),
            allowed: format!("1 to {MAX_REPS}"),
        });
    }
    Ok(())
}

/// The median and the minimum of `times` (seconds, any order, at least one): for an even
/// count the median is the mean of the two middle values, as Python's `statistics.median`
/// (the peer scripts) takes it. The upper middle value alone would report the slower of two
/// runs as their median.
pub(crate) fn median_min(times: &[f64]) -> (f64, f64) {
    assert!(!times.is_empty(), "a median needs at least one timing");
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    let m = t.len() / 2;
    let median = if t.len().is_multiple_of(2) {
        (t[m - 1] + t[m]) / 2.0
    } else {
        t[m]
    };
    (median, t[0])
}

/// Median of `reps` timings of `f` after a short warm-up.
fn median_time(reps: usize, mut f: impl FnMut()) -> (f64, f64) {
    for _ in 0..(reps / 10).max(3) {
        f();
    }
    let t: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    median_min(&t)
}

struct NttResult {
    logn: u32,
    q: u64,
    kernel: Kernel,
    median_s: f64,
    min_s: f64,
    bound_s: f64,
}

fn measure_ntt(
    logn: u32,
    bits: u32,
    limbs: usize,
    kernel: Option<Kernel>,
    reps: usize,
) -> Result<NttResult, MathError> {
    if !(1..=17).contains(&logn) {
        return Err(MathError::OutOfRange {
            name: "logn",
            value: logn.to_string(),
            allowed: "1 to 17".into(),
        });
    }
    let n = 1usize << logn;
    let q = generate_ntt_primes(bits, n, 1, &[])?[0];
    let plan = NttPlan::new(n, q)?;
    let kernel = kernel.unwrap_or(plan.kernel());
    // Cache-line-aligned limbs, as `RnsPoly` stores them.
    let mut data: Vec<AlignedVec> = (0..limbs)
        .map(|l| {
            let words: Vec<u64> = (0..n as u64)
                .map(|i| (i * 0x9E37_79B9 + l as u64) % q)
                .collect();
            AlignedVec::from(words)
        })
        .collect();
    // Fail early with the typed error if the kernel cannot run here.
    plan.forward_with(kernel, &mut data[0])?;
    let (median, min) = if limbs == 1 {
        // One limb runs on the calling thread: a pool hand-off costs microseconds by itself.
        let a = &mut data[0];
        median_time(reps, || {
            plan.forward_with(kernel, a).expect("checked above")
        })
    } else {
        median_time(reps, || {
            use rayon::prelude::*;
            parallel::install(|| {
                data.par_iter_mut()
                    .for_each(|a| plan.forward_with(kernel, a).expect("checked above"))
            })
        })
    };
    let butterflies = (n / 2) as f64 * logn as f64;
    Ok(NttResult {
        logn,
        q,
        kernel,
        median_s: median / limbs as f64,
        min_s: min / limbs as f64,
        bound_s: butterflies / butterfly_rate(kernel, q, 3)?,
    })
}

#[allow(clippy::too_many_arguments)]
fn bench_ntt(
    logn: Option<u32>,
    bits: u32,
    threads: usize,
    limbs: Option<usize>,
    kernel: Option<Kernel>,
    reps: usize,
    json: bool,
) -> Result<(), MathError> {
    check_reps(reps)?;
    parallel::set_num_threads(threads)?;
    let limbs = limbs.unwrap_or(threads);
    if limbs == 0 {
        return Err(MathError::OutOfRange {
            name: "limbs",
            value: "0".into(),
            allowed: "at least 1".into(),
        });
    }
    let sizes: Vec<u32> = match logn {
        Some(l) => vec![l],
        None => (10..=16).collect(),
    };
    let mut rows = Vec::new();
    for l in sizes {
        let r = measure_ntt(l, bits, limbs, kernel, reps)?;
        if json {
            bench_json(json!({
                "op": "ntt", "logn": r.logn, "bits": bits, "threads": threads,
                "median_s": r.median_s, "min_s": r.min_s, "limbs": limbs,
                "kernel": r.kernel.name(), "q": r.q,
                "butterfly_bound_s": r.bound_s,
            }));
        } else {
            let per_bfly = r.median_s / ((1u64 << (r.logn - 1)) as f64 * r.logn as f64) * 1e9;
            rows.push(vec![
                format!("2^{}", r.logn),
                bits.to_string(),
                r.kernel.name().to_string(),
                threads.to_string(),
                format!("{:.2}", r.median_s * 1e6),
                format!("{:.3}", per_bfly),
                format!("{:.2}", r.bound_s * 1e6),
                format!("{:.2}", r.median_s / r.bound_s),
            ]);
        }
    }
    if !json {
        emit(&format!("Forward negacyclic NTT, one limb (median of {reps} runs; bound = butterflies / in-register butterfly rate)"));
        table(
            &[
                "N",
                "bits",
                "kernel",
                "threads",
                "median_us",
                "ns/butterfly",
                "bound_us",
                "x bound",
            ],
            &rows,
        );
    }
    Ok(())
}

pub fn info(json: bool) -> Result<(), MathError> {
    // An invalid TESSERA_SIMD is reported, not papered over.
    let in_force = kernel_label()?;
    let q60 = generate_ntt_primes(60, 1 << 16, 1, &[])?[0];
    let q49 = generate_ntt_primes(49, 1 << 16, 1, &[])?[0];
    let clock = clock_hz();
    let kernels: Vec<(Kernel, bool, bool)> = Kernel::ALL
        .iter()
        .map(|&k| (k, k.supports(q60, 1 << 16), k.supports(q49, 1 << 16)))
        .collect();
    // What each TESSERA_SIMD setting runs each prime size's NTT with on this CPU.
    let runs = |k: Kernel, q: u64| {
        let r = Kernel::best_up_to(k, q, 1 << 16);
        format!("{} ({})", r.name(), r.arithmetic(q))
    };
    let ifma = simd::ifma_quotient_speedup();
    // Measured once per process where the AVX2 double-precision rows can run (0 elsewhere).
    let split = Some(tessera_math::rns::wide_split_ratio()).filter(|&r| r > 0.0);
    let cpu = cpu_model();
    let backend = BackendChoice::process_default()?;
    // Whether each backend can compute here: a description, or the reason it cannot.
    let backends: Vec<(BackendChoice, Result<String, String>)> = BackendChoice::ALL
        .iter()
        .map(|&b| (b, Compute::available(b).map_err(|e| e.to_string())))
        .collect();
    if json {
        json_line(
            Schema::Info,
            &json!({
                "cpu": cpu,
                "clock_hz": clock,
                "threads": parallel::num_threads(),
                "kernel": simd::limit()?.name(),
                "kernel_source": if simd::source()? == simd::Source::Override { "TESSERA_SIMD" } else { "cpu" },
                "kernels": kernels.iter().map(|(k, a, b)| json!({"kernel": k.name(), "primes_60_bit": a, "primes_49_bit": b,
                    "ntt_60_bit": runs(*k, q60), "ntt_49_bit": runs(*k, q49)})).collect::<Vec<_>>(),
                "ifma_quotient_speedup": ifma,
                "avx2_wide_split_ratio": split,
                "backend": backend.name(),
                "backends": backends.iter().map(|(b, r)| match r {
                    Ok(d) => json!({"backend": b.name(), "available": true, "detail": d}),
                    Err(why) => json!({"backend": b.name(), "available": false, "detail": why}),
                }).collect::<Vec<_>>(),
            }),
        );
    } else {
        emit(&format!(
            "CPU: {cpu}; estimated core clock: {:.2} GHz; threads available: {}",
            clock / 1e9,
            parallel::num_threads()
        ));
        emit(&format!(
            "kernel in force: {in_force} (set TESSERA_SIMD to one of {} to choose a lower one)",
            Kernel::ALL.map(|k| k.name()).join(", ")
        ));
        emit(&format!(
            "backend in force: {backend} (choose with --backend or TESSERA_BACKEND: {})",
            BackendChoice::allowed()
        ));
        for (b, r) in &backends {
            match r {
                Ok(d) => emit(&format!("  {b}: available ({d})")),
                Err(why) => emit(&format!("  {b}: not available: {why}")),
            }
        }
        if let Some(s) = ifma {
            emit(&format!(
                "IFMA's Shoup quotient for 64-bit words: {s:.2}x AVX-512F's butterfly rate here, so {}",
                if s > 1.0 {
                    "used above 2^50"
                } else {
                    "not used (AVX-512F runs primes above 2^50)"
                }
            ));
        }
        if let Some(r) = split {
            emit(&format!(
                "AVX2 BConv rows of inputs above 2^50 (ModDown at `ark`): as double-precision \
                 terms {r:.2}x the integer columns' rate here, so {}",
                if r > 1.0 {
                    "split into double terms"
                } else {
                    "summed in integer columns where more than a quarter of the inputs are wide"
                }
            ));
        }
        let cell = |ok: bool, k: Kernel, q: u64| if ok { runs(k, q) } else { "no".into() };
        table(
            &[
                "TESSERA_SIMD",
                "NTT of 60-bit primes",
                "NTT of 49-bit primes",
            ],
            &kernels
                .iter()
                .map(|&(k, a, b)| vec![k.name().to_string(), cell(a, k, q60), cell(b, k, q49)])
                .collect::<Vec<_>>(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::median_min;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median_min(&[3.0, 1.0, 2.0]), (2.0, 1.0));
        // Two runs: their mean, not the slower one.
        assert_eq!(median_min(&[6.0, 5.0]), (5.5, 5.0));
        assert_eq!(median_min(&[4.0, 1.0, 3.0, 2.0]), (2.5, 1.0));
        assert_eq!(median_min(&[7.0]), (7.0, 7.0));
    }
}
