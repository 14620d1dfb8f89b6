//! The GPU executor: the CUDA driver and NVRTC opened at run time through cudarc's dynamic
//! loading, so nothing links against CUDA and a machine without it gets typed errors.
//!
//! cudarc panics when a library or a symbol it needs cannot be loaded; [`open`] checks that
//! both libraries are present first (`is_culib_present`) and runs every remaining first call
//! under `std::panic::catch_unwind`, turning such a panic (e.g. a driver too old to export a
//! symbol) into [`CudaError::Driver`].

use crate::error::{CudaError, Result};
use crate::exec::Executor;
use crate::kernels::{self, KernelSig};
use cudarc::driver::{result, CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use std::collections::HashMap;
use std::sync::Arc;

/// One GPU with the kernels compiled for it.
pub(crate) struct CudaExec {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    functions: HashMap<&'static str, CudaFunction>,
    name: String,
    capacity: u64,
    /// Stream-ordered allocation (`cuMemAllocAsync` from the device's default pool, whose
    /// release threshold is raised so freed memory stays in the pool): allocating and freeing
    /// then never synchronise the device, as `cuMemAlloc`/`cuMemFree` do. False on a device
    /// without memory pools, which keeps the synchronous calls.
    pooled: bool,
    /// `BCONV_J` of the compiled kernels (see [`kernels::bconv_outputs_per_thread`]).
    bconv_j: usize,
}

/// Whether device `dev` supports stream-ordered allocation; if so, raises its default pool's
/// release threshold to the maximum so memory freed back to the pool is kept for reuse
/// instead of being returned to the driver at every synchronisation.
fn enable_pool(dev: cudarc::driver::sys::CUdevice) -> bool {
    use cudarc::driver::sys;
    let supported = unsafe {
        result::device::get_attribute(
            dev,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
        )
    };
    if !matches!(supported, Ok(1)) {
        return false;
    }
    let mut pool = std::mem::MaybeUninit::uninit();
    unsafe {
        if sys::cuDeviceGetDefaultMemPool(pool.as_mut_ptr(), dev) != sys::CUresult::CUDA_SUCCESS {
            return false;
        }
        let mut threshold = u64::MAX;
        sys::cuMemPoolSetAttribute(
            pool.assume_init(),
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        ) == sys::CUresult::CUDA_SUCCESS
    }
}

fn driver_err(during: &str) -> impl Fn(cudarc::driver::DriverError) -> CudaError + '_ {
    move |e| CudaError::Driver {
        during: during.to_string(),
        reason: format!("{e:?}"),
    }
}

/// Runs `f`, turning a panic inside cudarc into a typed error.
fn guarded<T>(during: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let reason = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic without a message".into());
        Err(CudaError::Driver {
            during: during.to_string(),
            reason,
        })
    })
}

/// Whether libcuda can be loaded here (no panic, no side effect beyond loading it).
pub(crate) fn driver_present() -> bool {
    std::panic::catch_unwind(|| unsafe { cudarc::driver::sys::is_culib_present() }).unwrap_or(false)
}

/// Whether libnvrtc can be loaded here.
pub(crate) fn nvrtc_present() -> bool {
    std::panic::catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() }).unwrap_or(false)
}

/// Extra NVRTC options, separated by white space: tuning knobs of the kernel sources
/// (`-DNTT_MIN_BLOCKS=3`) or of the compiler (`--maxrregcount=64`), so a GPU machine
/// without a Rust toolchain can try them on the same binary. `--fmad=false` is always passed
/// first: an option that turns contraction back on changes BConv's exact mode, which the
/// GPU tests would report.
pub const NVRTC_OPTIONS_ENV: &str = "TESSERA_CUDA_NVRTC_OPTIONS";

/// The options of [`NVRTC_OPTIONS_ENV`]'s value `env`.
///
/// ```
/// use tessera_cuda::nvrtc_options;
/// assert_eq!(nvrtc_options(Some(" -DNTT_MIN_BLOCKS=3  --maxrregcount=64 ")),
///            vec!["-DNTT_MIN_BLOCKS=3".to_string(), "--maxrregcount=64".to_string()]);
/// assert!(nvrtc_options(None).is_empty());
/// ```
pub fn nvrtc_options(env: Option<&str>) -> Vec<String> {
    env.map(|v| v.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

/// Opens device `ordinal` and compiles every kernel for it with NVRTC.
pub(crate) fn open(ordinal: usize) -> Result<CudaExec> {
    if !driver_present() {
        return Err(CudaError::DriverMissing(
            "libcuda.so could not be loaded (no NVIDIA driver installed, or it is not on the \
             loader path)"
                .into(),
        ));
    }
    if !nvrtc_present() {
        return Err(CudaError::NvrtcMissing(
            "libnvrtc.so could not be loaded (install the CUDA toolkit's NVRTC, or add its \
             lib64 directory to LD_LIBRARY_PATH)"
                .into(),
        ));
    }
    guarded("opening the device", || {
        result::init().map_err(driver_err("cuInit"))?;
        let found = result::device::get_count().map_err(driver_err("cuDeviceGetCount"))? as usize;
        if ordinal >= found {
            return Err(CudaError::NoDevice { ordinal, found });
        }
        let ctx = CudaContext::new(ordinal).map_err(driver_err("creating the context"))?;
        let dev = result::device::get(ordinal as i32).map_err(driver_err("cuDeviceGet"))?;
        let name = result::device::get_name(dev).map_err(driver_err("cuDeviceGetName"))?;
        let capacity = unsafe { result::device::total_mem(dev) }
            .map_err(driver_err("cuDeviceTotalMem"))? as u64;
        let options = nvrtc_options(std::env::var(NVRTC_OPTIONS_ENV).ok().as_deref());
        let bconv_j = kernels::bconv_outputs_per_thread(&options)
            .map_err(|e| CudaError::Compile(format!("{NVRTC_OPTIONS_ENV}: {e}")))?;
        let opts = cudarc::nvrtc::CompileOptions {
            // Exact IEEE products and sums in BConv's exact mode (no contraction to FMA).
            fmad: Some(false),
            options,
            ..Default::default()
        };
        let ptx = cudarc::nvrtc::compile_ptx_with_opts(kernels::translation_unit(), opts)
            .map_err(|e| CudaError::Compile(format!("{e}")))?;
        let module = ctx
            .load_module(ptx)
            .map_err(driver_err("loading the kernel module"))?;
        let pooled = enable_pool(dev);
        let mut functions = HashMap::new();
        for k in kernels::ALL {
            let f = module
                .load_function(k.name)
                .map_err(driver_err("loading a kernel"))?;
            functions.insert(k.name, f);
        }
        Ok(CudaExec {
            stream: ctx.default_stream(),
            ctx,
            functions,
            name: format!("{name} (CUDA device {ordinal})"),
            capacity,
            pooled,
            bconv_j,
        })
    })
}

impl CudaExec {
    fn bind(&self) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(driver_err("binding the context"))
    }
}

impl Executor for CudaExec {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn bconv_outputs_per_thread(&self) -> usize {
        self.bconv_j
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn alloc(&self, words: usize) -> Result<u64> {
        self.bind()?;
        let bytes = words.max(1) * 8;
        let got = if self.pooled {
            unsafe { result::malloc_async(self.stream.cu_stream(), bytes) }
        } else {
            unsafe { result::malloc_sync(bytes) }
        };
        got.map_err(|e| {
            if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                CudaError::OutOfMemory {
                    requested: words as u64 * 8,
                    in_use: 0,
                    limit: self.capacity,
                }
            } else {
                driver_err("cuMemAlloc")(e)
            }
        })
    }
    fn free(&self, addr: u64) {
        // A failed free (a context already torn down at exit) leaks nothing we can recover.
        if self.bind().is_ok() {
            let _ = if self.pooled {
                // Ordered after every launch already on the stream that reads `addr`.
                unsafe { result::free_async(addr, self.stream.cu_stream()) }
            } else {
                unsafe { result::free_sync(addr) }
            };
        }
    }
    fn upload(&self, addr: u64, data: &[u64]) -> Result<()> {
        self.bind()?;
        unsafe { result::memcpy_htod_sync(addr, data) }.map_err(driver_err("cuMemcpyHtoD"))
    }
    fn download(&self, addr: u64, out: &mut [u64]) -> Result<()> {
        self.bind()?;
        unsafe { result::memcpy_dtoh_sync(out, addr) }.map_err(driver_err("cuMemcpyDtoH"))
    }
    fn copy(&self, dst: u64, src: u64, words: usize) -> Result<()> {
        self.bind()?;
        // On the stream: ordered after earlier launches, before later ones, no host wait.
        unsafe { result::memcpy_dtod_async(dst, src, words * 8, self.stream.cu_stream()) }
            .map_err(driver_err("cuMemcpyDtoDAsync"))
    }
    fn launch(&self, kernel: &KernelSig, threads: u64, args: &[u64]) -> Result<()> {
        let f = &self.functions[kernel.name];
        let blocks = threads.div_ceil(kernels::BLOCK as u64);
        let grid = u32::try_from(blocks).map_err(|_| CudaError::Driver {
            during: format!("launching {}", kernel.name),
            reason: format!("{threads} threads exceed the one-dimensional grid"),
        })?;
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (kernels::BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = self.stream.launch_builder(f);
        for a in args {
            b.arg(a);
        }
        unsafe { b.launch(cfg) }
            .map(|_| ())
            .map_err(driver_err(kernel.name))
    }
    fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(driver_err("synchronizing"))
    }
}
