//! The device layer's typed errors: every failure to load, open, compile, allocate or launch
//! says what failed and why, so a machine without a GPU gets a readable reason, not a panic.

use tessera_math::MathError;

/// What went wrong on the device side.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// The CUDA driver library (libcuda) could not be loaded: no NVIDIA driver here.
    #[error("the CUDA driver library (libcuda) is not available on this machine: {0}")]
    DriverMissing(String),
    /// NVRTC (libnvrtc), which compiles the kernels at run time, could not be loaded.
    #[error("NVRTC (libnvrtc, the CUDA run-time compiler) is not available on this machine: {0}")]
    NvrtcMissing(String),
    /// The driver loaded but reports no device with this ordinal.
    #[error("no CUDA device with ordinal {ordinal}: {found} device(s) present")]
    NoDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the driver reports.
        found: usize,
    },
    /// A driver call failed (including a driver too old for a function this crate needs).
    #[error("CUDA driver call failed during {during}: {reason}")]
    Driver {
        /// What was being done.
        during: String,
        /// The driver's error, as it names it.
        reason: String,
    },
    /// NVRTC rejected the kernel sources.
    #[error("NVRTC could not compile the kernels: {0}")]
    Compile(String),
    /// The host emulator could not build or load its kernel library.
    #[error("the host kernel emulator is unavailable: {0}")]
    Emulator(String),
    /// An allocation did not fit the device memory (or the limit set on this device).
    #[error(
        "device out of memory: {requested} bytes requested with {in_use} bytes in use \
         (limit {limit} bytes)"
    )]
    OutOfMemory {
        /// Bytes of the failed allocation.
        requested: u64,
        /// Bytes allocated when it failed.
        in_use: u64,
        /// The device's capacity or the limit set with `Device::set_memory_limit`.
        limit: u64,
    },
    /// An operand does not fit the operation (limb sets, representation, ring).
    #[error(transparent)]
    Math(#[from] MathError),
}

impl From<CudaError> for MathError {
    /// A backend reports device failures as `MathError::Unsupported` with the reason (the
    /// operand errors it wrapped come back unchanged).
    fn from(e: CudaError) -> Self {
        match e {
            CudaError::Math(m) => m,
            other => MathError::Unsupported(format!("CUDA backend: {other}")),
        }
    }
}

/// A device-layer result.
pub type Result<T> = std::result::Result<T, CudaError>;
