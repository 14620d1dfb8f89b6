//! Fuzz target: see `fuzz/src/entry.rs` (`params`) and docs/fuzzing.md.
#![no_main]

#[allow(dead_code)]
#[path = "../src/entry.rs"]
mod entry;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    entry::params(data);
});
