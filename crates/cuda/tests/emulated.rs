//! The CUDA kernels compiled for the host (`Device::emulated`) against the CPU, bit for bit:
//! the kernels' arithmetic and index maps and the device layer's launch sequences, without a
//! GPU. Skips with a printed reason only when there is no host C++ compiler: kernels the
//! compiler rejects fail the tests.

mod common;

use std::sync::Arc;
use tessera_cuda::Device;

fn device() -> Option<Arc<Device>> {
    if let Err(e) = tessera_cuda::host_compiler_available() {
        println!("skipped: {e}");
        return None;
    }
    Some(Device::emulated().unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn emulated_kernels_equal_cpu() {
    let Some(dev) = device() else { return };
    // log N = 5 and 6 run the two- and three-stage NTT groups, 1, 4, 7 and 10 the one-, three-
    // and four-stage ones (kernels/ntt.cu); 16, the bootstrapping degree, passes of 5 and 11
    // stages.
    for log_n in [1, 4, 5, 6, 7, 10, 11, 12, 13, 16] {
        common::check_ring(&dev, &common::ring(1 << log_n));
    }
}

/// The `_w32` kernels (primes below 2^30, 32-bit words on the device) against the CPU, and
/// the same rings in 64-bit words.
#[test]
fn emulated_32_bit_kernels_equal_cpu() {
    let Some(dev) = device() else { return };
    // 2^16 (the bootstrapping degree: passes of 5 and 11 stages) too.
    for log_n in [1, 4, 5, 6, 7, 10, 11, 12, 13, 16] {
        common::check_ring(&dev, &common::ring32(1 << log_n));
    }
}

#[test]
fn emulated_errors_are_typed() {
    let Some(dev) = device() else { return };
    common::check_errors(&dev);
}

#[test]
fn emulated_memory_accounting() {
    let Some(dev) = device() else { return };
    common::check_memory(&dev);
}
