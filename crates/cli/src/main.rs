//! `tessera`: the command-line front end. Holds no logic of its own beyond argument handling
//! and presentation; measurements come from the library crates.

mod bench;
mod bench_boot;
mod bench_ckks;
mod output;
mod plan;
mod reproduce;
mod simulate;
mod sweep;

use clap::{Parser, Subcommand};

/// HE operations allocate and free multi-megabyte limb buffers at a high rate; glibc returns
/// such blocks to the kernel on free, so every operation paid for page faults and kernel page
/// zeroing (27% of HMult's time at the `ark` preset, measured with `perf record`). mimalloc
/// keeps freed memory for reuse.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Tessera: an open FHE accelerator stack (RNS-CKKS library, instruction traces, simulator).
#[derive(Parser)]
#[command(name = "tessera", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
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
        /// Parameter preset.
        #[arg(long, default_value = "h3")]
        params: String,
        /// One JSON object per level instead of a table.
        #[arg(long)]
        json: bool,
    },
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
        #[arg(long)]
        json: bool,
    },
    /// Show the CPU features and the NTT kernels this machine can run.
    Info {
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
    },
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench { what } => bench::run(what),
        Command::Info { json } => bench::info(json).map_err(Into::into),
        Command::Plan { params, json } => plan::run(&params, json).map_err(Into::into),
        Command::Simulate(a) => simulate::run(&a).map_err(Into::into),
        Command::Sweep(a) => sweep::run(&a).map_err(Into::into),
        Command::Reproduce { paper, json } => {
            reproduce::run(paper.as_deref(), json).map_err(Into::into)
        }
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}
