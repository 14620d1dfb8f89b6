//! What runs the kernels: the GPU through the CUDA driver ([`crate::driver`]) or, for tests on
//! a machine without one, the host emulator ([`crate::emulator`]) that runs the same kernel
//! sources compiled by the host C++ compiler. Device memory is addressed by 64-bit addresses
//! on both, and every launch passes its arguments as 64-bit words.

use crate::error::Result;
use crate::kernels::KernelSig;

/// The operations a device offers the device layer.
pub trait Executor: Send + Sync {
    /// A human-readable name of the device.
    fn name(&self) -> String;
    /// Device memory capacity in bytes.
    fn capacity(&self) -> u64;
    /// Allocates `words` 64-bit words; returns the device address.
    fn alloc(&self, words: usize) -> Result<u64>;
    /// Frees an allocation made by [`Executor::alloc`].
    fn free(&self, addr: u64);
    /// Copies host words to device memory at `addr`.
    fn upload(&self, addr: u64, data: &[u64]) -> Result<()>;
    /// Copies device words at `addr` into `out` (waits for earlier launches).
    fn download(&self, addr: u64, out: &mut [u64]) -> Result<()>;
    /// Copies `words` words between device addresses (ordered after earlier launches).
    fn copy(&self, dst: u64, src: u64, words: usize) -> Result<()>;
    /// Launches `kernel` over `threads` threads (one-dimensional, `kernels::BLOCK` per block).
    fn launch(&self, kernel: &KernelSig, threads: u64, args: &[u64]) -> Result<()>;
    /// Waits until every launch has finished.
    fn synchronize(&self) -> Result<()>;
    /// Output limbs one `bconv_mac` thread computes in the kernels this executor compiled
    /// (the `BCONV_J` knob); the launch size depends on it.
    fn bconv_outputs_per_thread(&self) -> usize {
        crate::kernels::BCONV_OUTPUTS_PER_THREAD
    }
}
