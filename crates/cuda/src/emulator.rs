//! The host emulator: the kernel sources of `kernels/` compiled by the host C++ compiler with a
//! shim header (`kernels/host_shim.h`) and run one thread after another. It exists so that the
//! kernels' arithmetic and the device layer's launch sequences are tested bit for bit against
//! the CPU on machines without a GPU. It verifies the arithmetic and index maps only: most
//! kernels have independent threads, so a launch run sequentially computes what the GPU
//! computes; the block kernels (the NTT's tiles, written with `BLOCK_LOOP` and
//! `BLOCK_BARRIER`, `kernels/modarith.cuh`) run whole on each block's thread 0, every loop
//! covering all its indices between barriers. The emulator says nothing about timing,
//! occupancy, races between a block's threads or the GPU's memory model.
//!
//! The compiler is `$CXX` or `c++`; the library is built once (named by a hash of its
//! source) in `tessera-cuda-emu/` under the system's temporary directory. The `-D` options of
//! `TESSERA_CUDA_NVRTC_OPTIONS` apply here too, so every kernel variant a tuning knob selects
//! on a GPU is checked bit for bit on the CPU first.

use crate::error::{CudaError, Result};
use crate::exec::Executor;
use crate::kernels::{self, KernelSig, Param};
use std::collections::HashMap;
use std::sync::Mutex;

type Wrapper = unsafe extern "C" fn(*const u64);
type RunFn = unsafe extern "C" fn(Wrapper, *const u64, u32, u32);

/// The kernels compiled for the host, and the emulated device memory.
pub(crate) struct HostExec {
    _lib: libloading::Library,
    run: RunFn,
    wrappers: HashMap<&'static str, Wrapper>,
    memory: Mutex<HashMap<u64, Box<[u64]>>>,
    /// `BCONV_J` of the compiled kernels.
    bconv_j: usize,
}

/// Emulated capacity: large enough for the tests, small enough to exercise the accounting.
const CAPACITY: u64 = 8 << 30;

/// The C++ glue: thread-index globals, one wrapper per kernel that unpacks the 64-bit words,
/// and the launch loop.
fn glue() -> String {
    let mut s = String::from(
        "extern \"C\" { thread_local emu_dim3 blockIdx, threadIdx, blockDim, gridDim; }\n\
         extern \"C\" void emu_run(void (*f)(const u64*), const u64* a, unsigned grid, \
         unsigned block) {\n  gridDim.x = grid; blockDim.x = block; gridDim.y = gridDim.z = \
         blockDim.y = blockDim.z = 1;\n  for (unsigned b = 0; b < grid; b++) {\n    \
         blockIdx.x = b;\n    for (unsigned t = 0; t < block; t++) { threadIdx.x = t; f(a); }\n  \
         }\n}\n",
    );
    for k in kernels::ALL {
        let args: Vec<String> = k
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| match p {
                Param::Data if k.w32 => format!("(u32*)a[{i}]"),
                Param::Data | Param::Ptr => format!("(u64*)a[{i}]"),
                Param::U64 => format!("a[{i}]"),
            })
            .collect();
        s.push_str(&format!(
            "extern \"C\" void emu_{0}(const u64* a) {{ {0}({1}); }}\n",
            k.name,
            args.join(", ")
        ));
    }
    s
}

fn err(what: &str, e: &dyn std::fmt::Display) -> CudaError {
    CudaError::Emulator(format!("{what}: {e}"))
}

/// The `-D` options among `options` (those of `TESSERA_CUDA_NVRTC_OPTIONS`) as `#define`
/// lines, so the emulator compiles the kernel variant a GPU would; the other options are
/// NVRTC's own and do not apply to the host compiler.
fn defines(options: &[String]) -> String {
    options
        .iter()
        .filter_map(|o| o.strip_prefix("-D"))
        .map(|d| match d.split_once('=') {
            Some((name, value)) => format!("#define {name} {value}\n"),
            None => format!("#define {d} 1\n"),
        })
        .collect()
}

/// Builds the host kernel library; returns its path. The library is named by a hash of its
/// source and shared by every process (built under a temporary name, then renamed, so a
/// concurrent process never loads a half-written file).
fn build(options: &[String]) -> Result<std::path::PathBuf> {
    use std::hash::{Hash, Hasher};
    let dir = std::env::temp_dir().join("tessera-cuda-emu");
    std::fs::create_dir_all(&dir).map_err(|e| err("creating its directory", &e))?;
    let text = format!(
        "{}{}\n{}\n{}",
        defines(options),
        kernels::HOST_SHIM,
        kernels::translation_unit(),
        glue()
    );
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    let lib = dir.join(format!("libkernels-{:016x}.so", h.finish()));
    if lib.exists() {
        return Ok(lib);
    }
    let pid = std::process::id();
    let src = dir.join(format!("kernels-{pid}.cpp"));
    let tmp = dir.join(format!("libkernels-{pid}.so.tmp"));
    std::fs::write(&src, text).map_err(|e| err("writing the sources", &e))?;
    let cxx = host_compiler();
    let out = std::process::Command::new(&cxx)
        .args(["-O2", "-ffp-contract=off", "-fPIC", "-shared", "-o"])
        .arg(&tmp)
        .arg(&src)
        .output()
        .map_err(|e| err(&format!("running the host compiler `{cxx}`"), &e))?;
    let _ = std::fs::remove_file(&src);
    if !out.status.success() {
        return Err(CudaError::Emulator(format!(
            "the host compiler rejected the kernels: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    std::fs::rename(&tmp, &lib).map_err(|e| err("installing the library", &e))?;
    Ok(lib)
}

/// The host C++ compiler the emulator uses: `$CXX`, else `c++`.
fn host_compiler() -> String {
    std::env::var("CXX").unwrap_or_else(|_| "c++".into())
}

/// Whether the host C++ compiler runs here (`$CXX --version`): the only reason the emulator
/// tests may skip. A compiler that runs but rejects the kernels is a failure, not a skip
/// (`Device::emulated` returns the compiler's message).
pub fn host_compiler_available() -> std::result::Result<(), String> {
    let cxx = host_compiler();
    match std::process::Command::new(&cxx).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "the host C++ compiler `{cxx}` failed: {}",
            o.status
        )),
        Err(e) => Err(format!("no host C++ compiler `{cxx}`: {e}")),
    }
}

/// Builds (once per process) and loads the host kernel library.
pub(crate) fn open() -> Result<HostExec> {
    static BUILT: std::sync::OnceLock<std::result::Result<std::path::PathBuf, String>> =
        std::sync::OnceLock::new();
    let options = crate::nvrtc_options(std::env::var(crate::NVRTC_OPTIONS_ENV).ok().as_deref());
    let bconv_j = kernels::bconv_outputs_per_thread(&options)
        .map_err(|e| CudaError::Emulator(format!("{}: {e}", crate::NVRTC_OPTIONS_ENV)))?;
    let lib = BUILT
        .get_or_init(|| build(&options).map_err(|e| e.to_string()))
        .clone()
        .map_err(CudaError::Emulator)?;
    // SAFETY: the library is the one just built from this crate's sources; its symbols have
    // the types declared here (the glue above defines them).
    unsafe {
        let l = libloading::Library::new(&lib).map_err(|e| err("loading the library", &e))?;
        let run = *l
            .get::<RunFn>(b"emu_run")
            .map_err(|e| err("finding emu_run", &e))?;
        let mut wrappers = HashMap::new();
        for k in kernels::ALL {
            let w = *l
                .get::<Wrapper>(format!("emu_{}", k.name).as_bytes())
                .map_err(|e| err("finding a kernel", &e))?;
            wrappers.insert(k.name, w);
        }
        Ok(HostExec {
            _lib: l,
            run,
            wrappers,
            memory: Mutex::new(HashMap::new()),
            bconv_j,
        })
    }
}

impl Executor for HostExec {
    fn name(&self) -> String {
        "host emulator (CUDA kernels compiled for the CPU)".into()
    }
    fn capacity(&self) -> u64 {
        CAPACITY
    }
    fn bconv_outputs_per_thread(&self) -> usize {
        self.bconv_j
    }
    fn alloc(&self, words: usize) -> Result<u64> {
        let b = vec![0u64; words.max(1)].into_boxed_slice();
        let addr = b.as_ptr() as u64;
        self.memory
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(addr, b);
        Ok(addr)
    }
    fn free(&self, addr: u64) {
        self.memory
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&addr);
    }
    fn upload(&self, addr: u64, data: &[u64]) -> Result<()> {
        // SAFETY: `addr` is an allocation of at least `data.len()` words (the device layer
        // sizes every copy by its buffers).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), addr as *mut u64, data.len()) };
        Ok(())
    }
    fn download(&self, addr: u64, out: &mut [u64]) -> Result<()> {
        // SAFETY: as in `upload`.
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u64, out.as_mut_ptr(), out.len()) };
        Ok(())
    }
    fn copy(&self, dst: u64, src: u64, words: usize) -> Result<()> {
        // SAFETY: as in `upload`; `std::ptr::copy` allows overlap.
        unsafe { std::ptr::copy(src as *const u64, dst as *mut u64, words) };
        Ok(())
    }
    fn launch(&self, kernel: &KernelSig, threads: u64, args: &[u64]) -> Result<()> {
        let grid = u32::try_from(threads.div_ceil(kernels::BLOCK as u64))
            .map_err(|_| CudaError::Emulator(format!("{threads} threads in one launch")))?;
        let _guard = self.memory.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: `args` has the kernel's parameter count (checked by the caller) and its
        // addresses are live allocations of this executor sized by the device layer.
        unsafe {
            (self.run)(
                self.wrappers[kernel.name],
                args.as_ptr(),
                grid,
                kernels::BLOCK,
            )
        };
        Ok(())
    }
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::defines;

    #[test]
    fn knob_options_become_defines() {
        let o: Vec<String> = ["-DBCONV_J=2", "--maxrregcount=64", "-DNTT_TW_GLOBAL"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(defines(&o), "#define BCONV_J 2\n#define NTT_TW_GLOBAL 1\n");
        assert_eq!(defines(&[]), "");
    }
}
