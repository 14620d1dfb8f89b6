//! `tessera`: the command-line front end. Holds no logic of its own beyond argument handling
//! and presentation; measurements come from the library crates.

mod bench;
mod output;

use clap::{Parser, Subcommand};

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
        Command::Info { json } => bench::info(json),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}
