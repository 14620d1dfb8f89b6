//! `tessera run PROGRAM`: a program computed encrypted on the CPU, decrypted and checked
//! against its plaintext replica; prints the checks, the time per phase and the HE-operation
//! counts (docs/programs.md).

use crate::output::{emit, json_line, table};
use crate::schema::Schema;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::io::IsTerminal;
use tessera_backend::{BackendChoice, Compute};
use tessera_math::parallel;
use tessera_programs::{RunOptions, PROGRAMS};

/// Arguments of `tessera run`.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The program: helr (HELR logistic-regression training, workloads.md 2), lola
    /// (CryptoNets-LoLa MNIST inference, workloads.md 4), logreg (REED's logistic regression
    /// on a stand-in set, workloads.md 6.2), linreg (REED's linear regression, workloads.md
    /// 6.1), sort (bitonic sort of 2^14 encrypted values, workloads.md 5), or the BFV programs
    /// cryptonets and lr-inference (CoFHEE's applications, workloads.md 7, docs/bfv.md), or
    /// resnet20 (encrypted ResNet-20 on CIFAR-10, workloads.md 3), dnn-train (REED's DNN
    /// training, workloads.md 6.3) or dnn-inference (that network's forward pass on encrypted
    /// test batches of 4; --iterations: the batches, default 1).
    pub program: String,
    /// Parameter set. helr: ark (default; 8 levels between bootstrappings), cifher (9), reed
    /// (15), h3 (15), lattigo (9), reed-dnum3 (6), test-program (N = 2^10, insecure, for
    /// quick checks); logreg, linreg and sort: as helr; lola: lola-n14 (default); cryptonets:
    /// cryptonets-n13; lr-inference: lr-n13.
    #[arg(long)]
    pub params: Option<String>,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Program size (helr: the mini-batch, 256 or 1024 in the papers, default 256; logreg: the
    /// mini-batch, default 512; lola: the images, in ciphertexts of 8, default 8; sort: the
    /// values, a power of two, default 16384; cryptonets: the images, one per slot, default 8;
    /// lr-inference: the test rows, default 57; resnet20: the images, default 1, also spelt
    /// --images).
    #[arg(long, visible_alias = "images")]
    pub size: Option<usize>,
    /// Iterations (NAG iterations; helr default 32, logreg default 8).
    #[arg(long)]
    pub iterations: Option<usize>,
    /// resnet20: the index of the first image of cifar10-test-head.npz to classify (default
    /// 0), so a long run can be split into independent parts (scripts/resnet-images.sh).
    #[arg(long)]
    pub first: Option<usize>,
    /// Data directory (default: $TESSERA_DATA, else ../shared/data from the repository root).
    #[arg(long)]
    pub data: Option<std::path::PathBuf>,
    /// ARK's minimum key-switching (multi-hop rotations) in the bootstrapping DFTs (ark.md
    /// IV-A), added to the parameter set's circuit as `tessera simulate --min-ks` does.
    #[arg(long)]
    pub min_ks: bool,
    /// ARK's OF-Limb plaintexts (ark.md IV-B): the DFT diagonals and, in resnet20, every
    /// product's and sum's plaintext are stored as their q_0 limb and extended on use.
    #[arg(long)]
    pub of_limb: bool,
    /// Hoisting of the bootstrapping DFTs' baby steps: `double` keeps baby and giant steps
    /// over Q P with one ModDown per part per matrix (faster, more plaintext memory unless
    /// --of-limb); `single` (the default) shares only the ModUp.
    #[arg(long, value_parser = ["single", "double"])]
    pub hoisting: Option<String>,
    /// Every key switch one digit at a time (ModUp, then multiply-accumulate), the order of
    /// machines without room for all extended digits (reed.md Algorithm 3); the same values
    /// as the default batched order, so a run checks that `tessera simulate --workload
    /// PROGRAM --streamed-keyswitch` records a correct computation.
    #[arg(long)]
    pub streamed_keyswitch: bool,
    /// One JSON object instead of tables (no progress bar).
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: &RunArgs) -> Result<(), Box<dyn std::error::Error>> {
    if !PROGRAMS.contains(&a.program.as_str()) {
        return Err(format!(
            "program = {} is invalid; allowed: {}",
            a.program,
            PROGRAMS.join(", ")
        )
        .into());
    }
    parallel::set_num_threads(a.threads)?;
    // A backend that cannot run here (no CUDA in this build, no GPU) stops the run before
    // key generation, with the reason.
    Compute::available(BackendChoice::process_default()?)?;
    let opts = RunOptions {
        params: a.params.clone(),
        size: a.size,
        iterations: a.iterations,
        data_dir: a.data.clone(),
        first: a.first,
    };
    let bar = if a.json || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(1)
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .expect("valid template"),
    );
    let report = parallel::install(|| {
        let circuit = tessera_programs::setup::CircuitOptions {
            min_ks: a.min_ks,
            of_limb: a.of_limb,
            double_hoisting: a.hoisting.as_deref() == Some("double"),
            dataflow: tessera_ckks::KeySwitchDataflow::streamed_if(a.streamed_keyswitch),
        };
        tessera_programs::registry::run_with_circuit(
            &a.program,
            &opts,
            circuit,
            &mut |phase, done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
                bar.set_message(match phase {
                    "compute" => "computing (iterations)".to_string(),
                    p => p.to_string(),
                });
            },
        )
    })?;
    bar.finish_and_clear();
    if a.json {
        let mut v = serde_json::to_value(&report)?;
        v["threads"] = json!(a.threads);
        v["passed"] = json!(report.passed());
        json_line(Schema::Run, &v);
    } else {
        emit(&format!(
            "{} at {} (size {}, {} iterations, {} thread(s)): {}",
            report.program,
            report.params,
            report.size,
            report.iterations,
            a.threads,
            if report.passed() { "PASS" } else { "FAIL" }
        ));
        let checks: Vec<Vec<String>> = report
            .checks
            .iter()
            .map(|c| {
                vec![
                    c.name.clone(),
                    format!("{:.6e}", c.value),
                    c.bound.clone().unwrap_or_default(),
                    if c.pass { "ok" } else { "FAIL" }.into(),
                ]
            })
            .collect();
        table(&["check", "value", "bound", ""], &checks);
        emit("");
        let p = &report.phases;
        let per_it = p.compute_s / report.iterations.max(1) as f64;
        table(
            &["phase", "seconds"],
            &[
                vec!["keygen".into(), format!("{:.2}", p.keygen_s)],
                vec!["encrypt".into(), format!("{:.2}", p.encrypt_s)],
                vec!["compute".into(), format!("{:.2}", p.compute_s)],
                vec!["  per iteration".into(), format!("{per_it:.3}")],
                vec!["decrypt + check".into(), format!("{:.2}", p.decrypt_s)],
            ],
        );
        emit("");
        let mut rows: Vec<Vec<String>> = report
            .counts
            .0
            .iter()
            .map(|(k, v)| {
                vec![
                    k.clone(),
                    v.to_string(),
                    format!("{:.1}", *v as f64 / report.iterations.max(1) as f64),
                ]
            })
            .collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r[1].parse::<u64>().unwrap_or(0)));
        table(&["HE operation", "count", "per iteration"], &rows);
        if report.levels_per_boot > 0 {
            emit(&format!(
                "{} levels between bootstrappings; {} bootstrapping(s); rotation keys {}",
                report.levels_per_boot,
                report.boots,
                if report.keys_on_demand {
                    "made on first use (memory)"
                } else {
                    "generated up front"
                }
            ));
        }
        for n in &report.notes {
            emit(&format!("note: {n}"));
        }
    }
    if !report.passed() {
        return Err("the check against the plaintext replica failed".into());
    }
    Ok(())
}
