// Host shim: lets the host C++ compiler build the CUDA kernel sources for the emulator (tests
// without a GPU). A launch is a sequential loop over every (block, thread) index: kernels
// whose threads are independent run as they are; block kernels (shared memory and barriers)
// use modarith.cuh's BLOCK_* macros, which on the host run the whole block on thread 0.
// Not part of what NVRTC compiles.
#include <math.h>
#include <string.h>
#define __global__
#define __launch_bounds__(...)
#define __device__ static
#define __forceinline__ inline
struct emu_dim3 { unsigned int x, y, z; };
extern "C" {
// Per host thread, so that launches from several threads (tests run in parallel) do not
// share indices.
extern thread_local emu_dim3 blockIdx, threadIdx, blockDim, gridDim;
}
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline unsigned __umulhi(unsigned a, unsigned b) {
    return (unsigned)(((unsigned long long)a * b) >> 32);
}
// Built with -ffp-contract=off, so these are single IEEE round-to-nearest operations.
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __ull2double_rn(unsigned long long x) { return (double)x; }
static inline unsigned long long __double2ull_rd(double x) {
    return (unsigned long long)floor(x);
}
static inline double __longlong_as_double(long long x) {
    double d;
    memcpy(&d, &x, sizeof d);
    return d;
}
