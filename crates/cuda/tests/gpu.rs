//! The same checks as `emulated.rs` on a real GPU (device 0, or `TESSERA_CUDA_DEVICE`): they
//! print "skipped: <reason>" and return where no driver, NVRTC or device is present.

mod common;

use std::sync::Arc;
use tessera_cuda::{CudaError, Device};

fn ordinal() -> usize {
    std::env::var("TESSERA_CUDA_DEVICE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The tests share device 0 and one sets its memory limit: they run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn device() -> Option<Arc<Device>> {
    match Device::open(ordinal()) {
        Ok(d) => {
            println!("device: {}", d.name());
            Some(d)
        }
        Err(e) => {
            println!("skipped: {e}");
            None
        }
    }
}

/// Without a GPU, opening a device is a typed error naming what is missing (never a panic);
/// with one, it opens and compiles the kernels.
#[test]
fn open_is_typed() {
    match Device::open(ordinal()) {
        Ok(d) => assert!(d.capacity() > 0),
        Err(e @ (CudaError::DriverMissing(_) | CudaError::NvrtcMissing(_))) => {
            assert!(e.to_string().contains("not available"), "{e}");
        }
        Err(e @ CudaError::NoDevice { .. }) => assert!(e.to_string().contains("no CUDA device")),
        Err(other) => panic!("unexpected error opening the device: {other}"),
    }
    // A second open shares the first (or fails the same way).
    assert_eq!(
        Device::open(ordinal())
            .map(|d| d.name())
            .map_err(|e| e.to_string()),
        Device::open(ordinal())
            .map(|d| d.name())
            .map_err(|e| e.to_string())
    );
}

#[test]
fn gpu_kernels_equal_cpu() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(dev) = device() else { return };
    // Up to the bootstrapping degree 2^16.
    for log_n in [1, 4, 5, 10, 13, 16] {
        common::check_ring(&dev, &common::ring(1 << log_n));
    }
}

#[test]
fn gpu_32_bit_kernels_equal_cpu() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(dev) = device() else { return };
    for log_n in [1, 4, 5, 10, 13, 16] {
        common::check_ring(&dev, &common::ring32(1 << log_n));
    }
}

#[test]
fn gpu_errors_are_typed() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(dev) = device() else { return };
    common::check_errors(&dev);
}

#[test]
fn gpu_memory_accounting() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(dev) = device() else { return };
    common::check_memory(&dev);
}
