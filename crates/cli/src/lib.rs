//! `tessera`: the command-line front end, as a library so that the same commands run from the
//! `tessera` binary and from Python (`python -m tessera`, through `tessera._native.cli_main`)
//! without shipping a second program. Holds no logic of its own beyond argument handling and
//! presentation; measurements come from the library crates.
//!
//! ```
//! // `tessera params list --json`: one JSON object per preset, exit status 0.
//! assert_eq!(tessera_cli::main_with_args(["tessera", "params", "list", "--json"]), 0);
//! // A bad argument is reported on stderr with exit status 2, never a panic.
//! assert_eq!(tessera_cli::main_with_args(["tessera", "simulate", "--arch", "nope"]), 2);
//! ```

mod area;
mod bench;
mod bench_boot;
mod bench_ckks;
pub mod output;
mod params;
mod plan;
mod reproduce;
mod run;
pub mod schema;
mod simulate;
mod sweep;

use clap::{Parser, Subcommand};
use std::ffi::OsString;
use tessera_backend::BackendChoice;

/// Tessera: an open FHE accelerator stack (RNS-CKKS library, instruction traces, simulator).
#[derive(Parser)]
#[command(name = "tessera", version, about, long_about = None)]
struct Cli {
    /// Compute backend of every command that computes (bench, run): cpu or cuda. The one
    /// place the backend is chosen for the whole process; overrides TESSERA_BACKEND.
    #[arg(long, global = true, value_name = "cpu|cuda", value_parser = parse_backend)]
    backend: Option<BackendChoice>,
    #[command(subcommand)]
    command: Command,
}

/// `--backend`'s parser: an unknown name is refused with the allowed values.
fn parse_backend(s: &str) -> Result<BackendChoice, String> {
    s.parse()
        .map_err(|e: tessera_math::MathError| e.to_string())
}

#[derive(Subcommand)]
enum Command {
    /// Measure kernels on this machine.
    Bench {
        #[command(subcommand)]
        what: bench::BenchCommand,
    },
    /// Key-switching decomposition per level: fixed dnum vs dynamic (h3.md 3.1), with costs.
    Plan {
        /// Parameter preset or parameter file (docs/parameters.md).
        #[arg(long, default_value = "h3")]
        params: String,
        /// One JSON object per level instead of a table.
        #[arg(long)]
        json: bool,
        /// Also write PREFIX-cost.svg and PREFIX-keys.svg: key-switch cost and key size per
        /// level, schoolbook (one limb per digit) vs fixed dnum vs dynamic (h3.md Fig. 9).
        #[arg(long)]
        plot: Option<String>,
    },
    /// Parameter sets as files: show a preset in the file form (edit it, pass it back with
    /// --params FILE), or list the presets.
    Params {
        #[command(subcommand)]
        what: params::ParamsCommand,
    },
    /// Run a program (helr) encrypted on the CPU and check it against its plaintext replica.
    Run(run::RunArgs),
    /// Run a workload on an accelerator model: time, energy, area, traffic, utilization.
    Simulate(simulate::SimulateArgs),
    /// Simulate one workload over a grid of machine settings (CSV and a plot).
    Sweep(sweep::SweepArgs),
    /// The papers' figures next to the model's (with the ratio), hits and misses alike.
    Reproduce {
        /// Only this paper's targets (ark, cofhee, reed, cifher, h3).
        #[arg(long)]
        paper: Option<String>,
        /// One JSON object per target instead of a table.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// A Markdown table (the one docs/simulator.md keeps) instead of the text table.
        #[arg(long)]
        markdown: bool,
        /// Also the extended group: rows whose recordings take more than a few seconds
        /// (ResNet-20 at ARK, CiFHER and H3).
        #[arg(long)]
        extended: bool,
    },
    /// A design's predicted area, peak power and cost, component by component.
    Area(area::AreaArgs),
    /// Show the CPU features and the NTT kernels this machine can run.
    Info {
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// Runs one `tessera` command line (`args[0]` is the program name) and returns its exit
/// status: 0 on success, 2 on an error (printed on stderr as `error: ...`), clap's status for
/// `--help`, `--version` (0) and bad arguments (2). Nothing here exits the process, except a
/// closed stdout pipe ([`output::emit`]).
pub fn main_with_args<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    main_with(args, &|| {})
}

/// [`main_with_args`], calling `before_bench` before a `bench` command runs: the binary uses it
/// to tune its global allocator (mimalloc's purge delay), which only the binary owns.
pub fn main_with<I, T>(args: I, before_bench: &dyn Fn()) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            // --help and --version print on stdout and succeed; usage errors go to stderr.
            let _ = e.print();
            return e.exit_code();
        }
    };
    if let Some(choice) = cli.backend {
        BackendChoice::set_process_default(choice);
    }
    if matches!(cli.command, Command::Bench { .. }) {
        before_bench();
    }
    let result = match cli.command {
        Command::Bench { what } => bench::run(what),
        Command::Info { json } => bench::info(json).map_err(Into::into),
        Command::Plan { params, json, plot } => plan::run(&params, json, plot.as_deref()),
        Command::Params { what } => params::run(&what),
        Command::Run(a) => run::run(&a),
        Command::Simulate(a) => simulate::run(&a).map_err(Into::into),
        Command::Sweep(a) => sweep::run(&a).map_err(Into::into),
        Command::Area(a) => area::run(&a).map_err(Into::into),
        Command::Reproduce {
            paper,
            json,
            markdown,
            extended,
        } => {
            let format = if json {
                reproduce::Format::Json
            } else if markdown {
                reproduce::Format::Markdown
            } else {
                reproduce::Format::Table
            };
            reproduce::run(paper.as_deref(), extended, format).map_err(Into::into)
        }
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}
