//! `tessera`: the command-line front end. Holds no logic of its own beyond argument handling
//! and presentation; measurements come from the library crates.

mod area;
mod bench;
mod bench_boot;
mod bench_ckks;
mod output;
mod params;
mod plan;
mod reproduce;
mod run;
mod simulate;
mod sweep;

use clap::{Parser, Subcommand};

/// HE operations allocate and free multi-megabyte limb buffers at a high rate; glibc returns
/// such blocks to the kernel on free, so every operation paid for page faults and kernel page
/// zeroing (27% of HMult's time at the `ark` preset, measured with `perf record`). mimalloc
/// keeps freed memory for reuse.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_e` (c_src/mimalloc/v3/include/
/// mimalloc.h of libmimalloc-sys 0.1.49, the version Cargo.lock pins; the crate exports no
/// constant for it; src/options.c lists the defaults in the same order). Its default, 1000 ms, is
/// the only one of 1000 among the options; the test `purge_delay_option_index` checks it.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keeps freed memory mapped instead of returning it to the kernel after a second: limb buffers
/// come and go at several GB/s, and each return made the next allocation fault in and zero
/// fresh pages (`perf`: 41 % of a bootstrapping's samples before the limb pool's best fit,
/// 3,203 instead of 75,124 page faults after it). The process's footprint then stays at its
/// peak. Only `bench` sets it: `reproduce` records traces of several parameter sets one after
/// another, and there it raised the peak from 12.1 to 15.1 GB and the time from 42 to 59 s.
/// A `MIMALLOC_PURGE_DELAY` set by the user wins.
fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets a global allocator option; mimalloc allows this at any time.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    }
}

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

fn main() {
    let cli = Cli::parse();
    if matches!(cli.command, Command::Bench { .. }) {
        keep_freed_memory();
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
        } => {
            let format = if json {
                reproduce::Format::Json
            } else if markdown {
                reproduce::Format::Markdown
            } else {
                reproduce::Format::Table
            };
            reproduce::run(paper.as_deref(), format).map_err(Into::into)
        }
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

#[cfg(test)]
mod tests {
    /// The option index names `purge_delay`: its default, 1000 ms, unless the
    /// environment overrides it.
    #[test]
    fn purge_delay_option_index() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            // SAFETY: reads a global allocator option.
            let v = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
            assert_eq!(v, 1000);
        }
    }
}
