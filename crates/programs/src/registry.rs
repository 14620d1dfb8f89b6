//! The programs by name: one entry point to run each on the CPU and one to record it, so the
//! CLI, Python and the simulator name programs the same way.

use crate::error::{ProgramError, Result};
use crate::report::{Recorded, RunReport};
use crate::{bfv_apps, dnn, helr, inference, linreg, logreg, lola, resnet, sort};
use std::path::PathBuf;

/// The programs `tessera run` and `tessera simulate --workload` know.
pub const PROGRAMS: &[&str] = &[
    "helr",
    "lola",
    "logreg",
    "linreg",
    "sort",
    "linreg-inference",
    "logreg-inference",
    "cryptonets",
    "lr-inference",
    "dnn-train",
    "dnn-inference",
    "resnet20",
];

/// The programs of [`PROGRAMS`] written in BFV (CoFHEE's applications, docs/bfv.md): they
/// run on `tessera_bfv`, not on the CKKS evaluator, so CKKS circuit options do not apply.
pub const BFV_PROGRAMS: &[&str] = &["cryptonets", "lr-inference"];

/// What to run, for any program; `None` takes the program's default.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Parameter set ([`crate::setup::PARAMETER_SETS`]).
    pub params: Option<String>,
    /// Program size (HELR: the mini-batch).
    pub size: Option<usize>,
    /// Iterations (HELR: NAG iterations).
    pub iterations: Option<usize>,
    /// Data directory.
    pub data_dir: Option<PathBuf>,
    /// Index of the first input (resnet20: the first image of `cifar10-test-head.npz` to
    /// classify, default 0), so a long run can be split into independent parts; refused by
    /// the other programs.
    pub first: Option<usize>,
}

/// The default parameter set of `program`: `ark` for HELR, `lola-n14` for LoLa.
pub fn default_params(program: &str) -> &'static str {
    match program {
        "lola" => "lola-n14",
        "cryptonets" => "cryptonets-n13",
        "lr-inference" => "lr-n13",
        "dnn-train" | "dnn-inference" => "reed",
        _ => "ark",
    }
}

/// Refuses `first` for a program that does not take it (only resnet20 does).
fn no_first(program: &str, o: &RunOptions) -> Result<()> {
    match (program, o.first) {
        ("resnet20", _) | (_, None) => Ok(()),
        (_, Some(f)) => Err(ProgramError::Invalid {
            name: "first",
            value: f.to_string(),
            allowed: format!(
                "none for {program} (only resnet20 takes the index of its first image)"
            ),
        }),
    }
}

fn unknown(name: &str) -> ProgramError {
    ProgramError::Invalid {
        name: "program",
        value: name.to_string(),
        allowed: PROGRAMS.join(", "),
    }
}

fn helr_config(o: &RunOptions) -> helr::HelrConfig {
    let mut c = helr::HelrConfig::new(
        o.params.as_deref().unwrap_or(default_params("helr")),
        o.size.unwrap_or(256),
    );
    if let Some(i) = o.iterations {
        c.iterations = i;
    }
    c.data_dir = o.data_dir.clone();
    c
}

/// logreg: mini-batch 512 (the 90 % training split), 8 iterations, at `ark` by default; its
/// data come from the repository's `data/` unless `--data` is given.
fn logreg_config(o: &RunOptions) -> helr::HelrConfig {
    let mut c = helr::HelrConfig::new(
        o.params.as_deref().unwrap_or(default_params("logreg")),
        o.size.unwrap_or(512),
    );
    c.iterations = o.iterations.unwrap_or(8);
    c.data_dir = o.data_dir.clone();
    c
}

/// linreg: mini-batch 512 (its 398 training rows), 16 iterations, at `ark` by default; its
/// data come from the repository's `data/` unless `--data` is given.
fn linreg_config(o: &RunOptions) -> helr::HelrConfig {
    let mut c = helr::HelrConfig::new(
        o.params.as_deref().unwrap_or(default_params("linreg")),
        o.size.unwrap_or(512),
    );
    c.iterations = o.iterations.unwrap_or(16);
    c.data_dir = o.data_dir.clone();
    c
}

/// LoLa: 8 images (one ciphertext) by default.
fn lola_config(o: &RunOptions) -> Result<lola::LolaConfig> {
    if o.iterations.is_some() {
        return Err(ProgramError::Invalid {
            name: "iterations",
            value: format!("{:?}", o.iterations),
            allowed: "none for lola (its size is the number of images)".into(),
        });
    }
    Ok(lola::LolaConfig {
        params: o
            .params
            .clone()
            .unwrap_or_else(|| default_params("lola").into()),
        images: o.size.unwrap_or(8),
        data_dir: o.data_dir.clone(),
    })
}

/// sort: 2^14 values at `ark` by default.
fn sort_config(o: &RunOptions) -> Result<sort::SortConfig> {
    if o.iterations.is_some() || o.data_dir.is_some() {
        return Err(ProgramError::Invalid {
            name: "iterations / data",
            value: format!("{:?} / {:?}", o.iterations, o.data_dir),
            allowed: "none for sort (its size is the number of values; its input is generated)"
                .into(),
        });
    }
    Ok(sort::SortConfig {
        params: o
            .params
            .clone()
            .unwrap_or_else(|| default_params("sort").into()),
        size: o.size.unwrap_or(sort::DEFAULT_SIZE),
    })
}

/// dnn-train: the full network (14 x 14 inputs) at `reed`, 2 iterations by default;
/// dnn-inference: the same network, one test batch by default (`iterations`: batches).
fn dnn_config(program: &str, o: &RunOptions) -> dnn::DnnConfig {
    let iterations = match program {
        "dnn-inference" => 1,
        _ => dnn::DEFAULT_ITERATIONS,
    };
    dnn::DnnConfig {
        params: o
            .params
            .clone()
            .unwrap_or_else(|| default_params(program).into()),
        side: o.size.unwrap_or(dnn::DEFAULT_SIDE),
        iterations: o.iterations.unwrap_or(iterations),
        data_dir: o.data_dir.clone(),
    }
}

/// linreg-inference / logreg-inference: the training program's weights (its default
/// iterations, `--iterations` to change them) applied to `--size` test rows (default all).
fn inference_config(program: &str, o: &RunOptions) -> Result<(inference::Which, helr::HelrConfig)> {
    let (which, train) = match program {
        "linreg-inference" => (inference::Which::Linear, linreg_config(o)),
        _ => (inference::Which::Logistic, logreg_config(o)),
    };
    let mut c = helr::HelrConfig::new(&train.params, inference::TRAIN_BATCH);
    c.iterations = train.iterations;
    c.data_dir = train.data_dir;
    Ok((which, c))
}

/// resnet20: one image at `ark` by default (`size`: the images).
fn resnet_config(o: &RunOptions) -> Result<resnet::program::ResnetConfig> {
    if o.iterations.is_some() {
        return Err(ProgramError::Invalid {
            name: "iterations",
            value: format!("{:?}", o.iterations),
            allowed: "none for resnet20 (its size is the number of images)".into(),
        });
    }
    Ok(resnet::program::ResnetConfig {
        params: o
            .params
            .clone()
            .unwrap_or_else(|| default_params("resnet20").into()),
        images: o.size.unwrap_or(1),
        first: o.first.unwrap_or(0),
        data_dir: o.data_dir.clone(),
    })
}

/// Runs `program` encrypted on the CPU and checks it against its replica.
pub fn run(
    program: &str,
    o: &RunOptions,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<RunReport> {
    no_first(program, o)?;
    match program {
        "helr" => helr::run_cpu(&helr_config(o), progress),
        "lola" => lola::run_cpu(&lola_config(o)?, progress),
        "logreg" => logreg::run_cpu(&logreg_config(o), progress),
        "linreg" => linreg::run_cpu(&linreg_config(o), progress),
        "sort" => sort::run_cpu(&sort_config(o)?, progress),
        "linreg-inference" | "logreg-inference" => {
            let (which, cfg) = inference_config(program, o)?;
            inference::run_cpu(which, &cfg, o.size, progress)
        }
        "resnet20" => resnet::program::run_cpu(&resnet_config(o)?, progress),
        "cryptonets" | "lr-inference" => bfv_apps::run(program, o, progress),
        "dnn-train" => dnn::run_cpu(&dnn_config(program, o), progress),
        "dnn-inference" => dnn::inference::run_cpu(&dnn_config(program, o), progress),
        _ => Err(unknown(program)),
    }
}

/// Records `program` on the trace backend (HELR with `steady`: one steady-state window, see
/// [`helr::record`]; LoLa: its images; sort: with `steady`, one steady-state period of its steps, [`sort::record`]).
/// Keys and plaintexts are shapes without data ([`crate::setup::recording_shapes`]); the
/// instructions are those of [`record_with_data`].
pub fn record(program: &str, o: &RunOptions, steady: bool) -> Result<Recorded> {
    crate::setup::recording_shapes(|| record_with_data(program, o, steady))
}

/// [`record`] with ARK's bootstrapping techniques `circuit` added to the program's circuit
/// ([`crate::setup::with_circuit`]); options given to a program that makes no bootstrapping
/// circuit are an error, not ignored.
pub fn record_with_circuit(
    program: &str,
    o: &RunOptions,
    steady: bool,
    circuit: crate::setup::CircuitOptions,
) -> Result<Recorded> {
    let rec = circuit_checked(program, circuit, || record(program, o, steady))?;
    if changes_nothing(program, circuit, rec.boots) {
        return Err(ProgramError::Unsupported(format!(
            "--min-ks / --of-limb / --hoisting double with the program '{program}': its \
             recording holds no bootstrapping, so they would change nothing"
        )));
    }
    Ok(rec)
}

/// Whether bootstrapping options were asked of a run or recording that made `boots` = 0
/// bootstrappings (a program, such as `linreg-inference`, that sets up a circuit it does not
/// use at this size): they changed nothing. resnet20's `of_limb` also stores its products'
/// plaintexts in OF-Limb form, which counts even without a bootstrapping.
fn changes_nothing(program: &str, circuit: crate::setup::CircuitOptions, boots: usize) -> bool {
    let own_plaintexts = program == "resnet20" && circuit.of_limb;
    boots == 0 && circuit.changes_bootstrapping() && !own_plaintexts
}

/// [`run`] with ARK's techniques `circuit` added to the program's circuit, as
/// [`record_with_circuit`] records it (resnet20 also encodes its products' plaintexts in
/// OF-Limb form with `of_limb`): what `tessera run --min-ks --of-limb` computes.
pub fn run_with_circuit(
    program: &str,
    o: &RunOptions,
    circuit: crate::setup::CircuitOptions,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<RunReport> {
    let mut report = circuit_checked(program, circuit, || run(program, o, progress))?;
    let unused = changes_nothing(program, circuit, report.boots);
    if unused {
        report.notes.push(
            "no bootstrapping ran, so --min-ks / --of-limb / --hoisting double changed nothing"
                .into(),
        );
    }
    for (on, what) in [
        (
            circuit.min_ks,
            "minimum key-switching (multi-hop rotations, --min-ks)",
        ),
        (circuit.of_limb, "OF-Limb plaintexts (--of-limb)"),
    ] {
        if on && !unused {
            report
                .notes
                .push(format!("ARK's {what} added to the circuit"));
        }
    }
    if circuit.dataflow == tessera_ckks::KeySwitchDataflow::Streamed {
        report.notes.push(
            "streamed key switching (--streamed-keyswitch): one extended digit at a time, the \
             same values as the batched order"
                .into(),
        );
    }
    if circuit.double_hoisting && !unused {
        report.notes.push(
            "double hoisting in the bootstrapping DFTs (--hoisting double): one ModDown per part \
             per matrix"
                .into(),
        );
    }
    Ok(report)
}

/// `f` under [`crate::setup::with_circuit`]; options given to a program that made no
/// bootstrapping circuit are an error, not ignored.
fn circuit_checked<T>(
    program: &str,
    circuit: crate::setup::CircuitOptions,
    f: impl FnOnce() -> Result<T>,
) -> Result<T> {
    if BFV_PROGRAMS.contains(&program) && circuit != crate::setup::CircuitOptions::default() {
        return Err(ProgramError::Unsupported(format!(
            "--min-ks / --of-limb / --hoisting double / --streamed-keyswitch with the program \
             '{program}': it is a BFV program (docs/bfv.md); these options apply to CKKS programs"
        )));
    }
    let (out, made) = crate::setup::with_circuit(circuit, f);
    if circuit.changes_bootstrapping() && !made {
        return Err(ProgramError::Unsupported(format!(
            "--min-ks / --of-limb / --hoisting double with the program '{program}': it makes no \
             bootstrapping circuit"
        )));
    }
    out
}

/// [`record`] with keys generated and plaintexts encoded for real (outside
/// [`crate::setup::recording_shapes`]): what recording did before issue 25, kept to check
/// that recording shapes changes no instruction.
pub fn record_with_data(program: &str, o: &RunOptions, steady: bool) -> Result<Recorded> {
    no_first(program, o)?;
    match program {
        "helr" => helr::record(&helr_config(o), steady),
        "lola" => lola::record(&lola_config(o)?),
        "logreg" => logreg::record(&logreg_config(o), steady),
        "linreg" => linreg::record(&linreg_config(o), steady),
        "sort" => sort::record(&sort_config(o)?, steady),
        "dnn-train" => dnn::record(&dnn_config(program, o), steady),
        "dnn-inference" => dnn::inference::record(&dnn_config(program, o), steady),
        "linreg-inference" | "logreg-inference" => {
            let (which, cfg) = inference_config(program, o)?;
            inference::record(which, &cfg, o.size)
        }
        "resnet20" => resnet::program::record(&resnet_config(o)?),
        "cryptonets" | "lr-inference" => Err(ProgramError::Unsupported(format!(
            "{program} is a BFV program: its CoFHEE command stream comes from tessera_bfv::record with the op mix tessera_programs::bfv_apps::{}::TABLE_X, not from the CKKS trace backend",
            program.replace('-', "_")
        ))),
        _ => Err(unknown(program)),
    }
}
