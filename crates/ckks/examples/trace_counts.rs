//! Prints the work of saved traces (`tessera simulate ... --save-trace FILE`), counted by
//! `TraceCounts::from_instructions`: limb NTTs and INTTs, BConv multiply-accumulates,
//! element-wise multiplies and evaluation-key bytes. docs/simulator.md ("Boosted key
//! switching") compares hybrid and boosted key switching with it.
//!
//! ```sh
//! cargo run --release -p tessera-ckks --example trace_counts -- a.jsonl b.jsonl
//! ```

use tessera_backend::trace::{read_trace_file, TraceCounts};

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: trace_counts TRACE.jsonl ...");
        std::process::exit(2);
    }
    println!("trace,ntt_limbs,intt_limbs,bconv_macs,elementwise_mults,key_bytes_loaded,distinct_key_bytes");
    for f in files {
        match read_trace_file(std::path::Path::new(&f)) {
            Ok((_, instrs)) => {
                let c = TraceCounts::from_instructions(&instrs);
                println!(
                    "{f},{},{},{},{},{},{}",
                    c.ntt_limbs,
                    c.intt_limbs,
                    c.bconv_macs,
                    c.elementwise_mults,
                    c.key_bytes_loaded,
                    c.distinct_key_bytes
                );
            }
            Err(e) => {
                eprintln!("error: {f}: {e}");
                std::process::exit(1);
            }
        }
    }
}
