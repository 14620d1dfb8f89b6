//! A device: an executor (GPU or host emulator) plus the accounting of its memory. Buffers are
//! RAII handles; every allocation is counted (bytes in use, peak) and checked against the
//! device's capacity or a limit set by the caller, so an operation that does not fit fails
//! with [`CudaError::OutOfMemory`] instead of crashing.

use crate::error::{CudaError, Result};
use crate::exec::Executor;
use crate::kernels::KernelSig;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// An opened device with its compiled kernels.
pub struct Device {
    exec: Box<dyn Executor>,
    in_use: AtomicU64,
    peak: AtomicU64,
    limit: AtomicU64,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("name", &self.exec.name())
            .field("in_use", &self.bytes_in_use())
            .finish()
    }
}

/// Devices opened in this process, by ordinal: opening one again shares it (and its kernels,
/// compiled once).
fn opened() -> &'static Mutex<HashMap<usize, Weak<Device>>> {
    static OPENED: OnceLock<Mutex<HashMap<usize, Weak<Device>>>> = OnceLock::new();
    OPENED.get_or_init(|| Mutex::new(HashMap::new()))
}

impl Device {
    fn with(exec: Box<dyn Executor>) -> Arc<Self> {
        let cap = exec.capacity();
        Arc::new(Self {
            exec,
            in_use: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            limit: AtomicU64::new(cap),
        })
    }

    /// Opens CUDA device `ordinal`: loads the driver and NVRTC at run time and compiles the
    /// kernels (once per device and process). Without a driver, NVRTC or the device, a typed
    /// error says which is missing.
    pub fn open(ordinal: usize) -> Result<Arc<Device>> {
        let mut map = opened().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = map.get(&ordinal).and_then(Weak::upgrade) {
            return Ok(d);
        }
        let d = Self::with(Box::new(crate::driver::open(ordinal)?));
        map.insert(ordinal, Arc::downgrade(&d));
        Ok(d)
    }

    /// A device whose kernels run on this CPU (the same sources compiled by the host C++
    /// compiler, threads run one after another): for testing the kernels' arithmetic and the
    /// launch sequences without a GPU. Not a GPU and never timed.
    pub fn emulated() -> Result<Arc<Device>> {
        Ok(Self::with(Box::new(crate::emulator::open()?)))
    }

    /// The device's name.
    pub fn name(&self) -> String {
        self.exec.name()
    }

    /// Bytes of device memory this process has allocated through the device and not freed.
    pub fn bytes_in_use(&self) -> u64 {
        self.in_use.load(Ordering::Relaxed)
    }

    /// The most bytes in use at any time since the device was opened (or the peak was reset).
    pub fn peak_bytes(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    /// Resets the peak to the bytes in use now.
    pub fn reset_peak(&self) {
        self.peak.store(self.bytes_in_use(), Ordering::Relaxed);
    }

    /// Device memory capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.exec.capacity()
    }

    /// Caps the bytes this device layer may allocate (at most the capacity): allocations past
    /// it fail with [`CudaError::OutOfMemory`].
    pub fn set_memory_limit(&self, bytes: u64) {
        self.limit
            .store(bytes.min(self.exec.capacity()), Ordering::Relaxed);
    }

    /// The current allocation limit in bytes.
    pub fn memory_limit(&self) -> u64 {
        self.limit.load(Ordering::Relaxed)
    }

    /// Allocates `words` 64-bit words (contents unspecified).
    pub fn alloc(self: &Arc<Self>, words: usize) -> Result<Buffer> {
        let bytes = words as u64 * 8;
        let limit = self.memory_limit();
        let before = self.in_use.fetch_add(bytes, Ordering::Relaxed);
        if before + bytes > limit {
            self.in_use.fetch_sub(bytes, Ordering::Relaxed);
            return Err(CudaError::OutOfMemory {
                requested: bytes,
                in_use: before,
                limit,
            });
        }
        match self.exec.alloc(words) {
            Ok(addr) => {
                self.peak.fetch_max(before + bytes, Ordering::Relaxed);
                Ok(Buffer {
                    dev: self.clone(),
                    addr,
                    words,
                })
            }
            Err(e) => {
                self.in_use.fetch_sub(bytes, Ordering::Relaxed);
                Err(match e {
                    CudaError::OutOfMemory { requested, .. } => CudaError::OutOfMemory {
                        requested,
                        in_use: before,
                        limit,
                    },
                    other => other,
                })
            }
        }
    }

    /// A buffer holding `data`.
    pub fn upload(self: &Arc<Self>, data: &[u64]) -> Result<Buffer> {
        let b = self.alloc(data.len())?;
        self.exec.upload(b.addr, data)?;
        Ok(b)
    }

    /// Output limbs per `bconv_mac` thread of the compiled kernels.
    pub(crate) fn bconv_outputs_per_thread(&self) -> usize {
        self.exec.bconv_outputs_per_thread()
    }

    /// Launches `kernel` over `threads` threads, after checking the argument count.
    pub(crate) fn launch(&self, kernel: &KernelSig, threads: u64, args: &[u64]) -> Result<()> {
        if args.len() != kernel.params.len() {
            return Err(CudaError::Driver {
                during: format!("launching {}", kernel.name),
                reason: format!(
                    "{} arguments for {} parameters",
                    args.len(),
                    kernel.params.len()
                ),
            });
        }
        if threads == 0 {
            return Ok(());
        }
        self.exec.launch(kernel, threads, args)
    }

    /// Copies `words` words from `src` (at word offset `src_off`) to `dst` (at `dst_off`).
    pub(crate) fn copy(
        &self,
        dst: &Buffer,
        dst_off: usize,
        src: &Buffer,
        src_off: usize,
        words: usize,
    ) -> Result<()> {
        debug_assert!(dst_off + words <= dst.words && src_off + words <= src.words);
        self.exec.copy(
            dst.addr + dst_off as u64 * 8,
            src.addr + src_off as u64 * 8,
            words,
        )
    }

    /// Waits for every launch.
    pub fn synchronize(&self) -> Result<()> {
        self.exec.synchronize()
    }
}

/// Device memory of `words` 64-bit words, freed on drop.
pub struct Buffer {
    dev: Arc<Device>,
    addr: u64,
    words: usize,
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer({} words)", self.words)
    }
}

impl Buffer {
    /// The device address (a kernel argument).
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// Length in words.
    pub fn words(&self) -> usize {
        self.words
    }

    /// The device this buffer lives on.
    pub fn device(&self) -> &Arc<Device> {
        &self.dev
    }

    /// Copies the buffer to the host.
    pub fn download(&self) -> Result<Vec<u64>> {
        let mut out = vec![0u64; self.words];
        self.dev.exec.download(self.addr, &mut out)?;
        Ok(out)
    }

    /// Overwrites the buffer with `data` (of its length).
    pub fn write(&self, data: &[u64]) -> Result<()> {
        debug_assert_eq!(data.len(), self.words);
        self.dev.exec.upload(self.addr, data)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        self.dev.exec.free(self.addr);
        self.dev
            .in_use
            .fetch_sub(self.words as u64 * 8, Ordering::Relaxed);
    }
}
