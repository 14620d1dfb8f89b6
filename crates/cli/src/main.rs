//! The `tessera` binary: the command line of [`tessera_cli`], with the process-wide allocator
//! that only a binary may choose.

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

fn main() {
    std::process::exit(tessera_cli::main_with(
        std::env::args_os(),
        &keep_freed_memory,
    ));
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
