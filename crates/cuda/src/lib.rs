//! # tessera-cuda
//!
//! The device side of Tessera's CUDA backend (issue 23): polynomials resident in GPU memory
//! ([`DevicePoly`]) and the kernels of the primary functions, independent of the `Backend`
//! trait (which `tessera-backend`'s `cuda` feature implements on top of this crate).
//!
//! * Loading: the CUDA driver and NVRTC are opened at run time (cudarc's dynamic loading), so
//!   this crate builds, links and passes its tests on a machine without CUDA;
//!   [`Device::open`] returns a typed [`CudaError`] naming what is missing.
//! * Kernels: CUDA C sources in `kernels/*.cu`, compiled by NVRTC when a device is opened
//!   (once per device and process). Every result is the canonical residue, so it equals the
//!   CPU backend's bit for bit.
//! * [`Device::emulated`]: the same kernel sources compiled by the host C++ compiler and run
//!   thread by thread on the CPU, so the kernels' arithmetic and index maps are tested here
//!   against the CPU backend without a GPU (see `docs/gpu.md` for what that does and does not
//!   verify).
//! * Memory: every allocation is counted ([`Device::bytes_in_use`], [`Device::peak_bytes`]) and
//!   one that does not fit is [`CudaError::OutOfMemory`]; keys and plaintexts are uploaded once
//!   ([`DeviceRing::upload_cached`]).

mod device;
mod driver;
mod emulator;
mod error;
mod exec;
mod kernels;
mod ops;
mod poly;
mod ring;

pub use device::{Buffer, Device};
pub use driver::{nvrtc_options, NVRTC_OPTIONS_ENV};
pub use emulator::host_compiler_available;
pub use error::{CudaError, Result};
pub use poly::DevicePoly;
pub use ring::{fits_32_bit_words, DeviceRing};

/// The CUDA C translation unit that NVRTC compiles when a device opens (the kernels once per
/// word size), and the names of the kernels it must define: for tools that check the sources
/// without a GPU (`scripts/nvrtc-check.py`, through the `kernel_source` example).
///
/// ```
/// let (source, names) = tessera_cuda::kernel_source();
/// assert!(names.contains(&"ntt_tile_fwd") && names.contains(&"ntt_tile_fwd_w32"));
/// assert!(source.contains("K(ntt_tile_fwd)"));
/// ```
pub fn kernel_source() -> (String, Vec<&'static str>) {
    (
        kernels::translation_unit(),
        kernels::ALL.iter().map(|k| k.name).collect(),
    )
}

/// Why no GPU can be used here, or `None` when device `ordinal` opens: what a GPU test prints
/// before it skips.
pub fn unavailable_reason(ordinal: usize) -> Option<String> {
    Device::open(ordinal).err().map(|e| e.to_string())
}
