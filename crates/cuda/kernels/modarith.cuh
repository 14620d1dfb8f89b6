// Modular arithmetic on 64-bit words for moduli q < 2^62 (the math crate's range), shared by
// every kernel. Each function returns the canonical residue in [0, q), so results equal the
// CPU backend's bit for bit whatever reduction strategy either side uses.
//
// Compiled by NVRTC on a GPU and, for the host emulator's tests, by the host C++ compiler
// through host_shim.h (which supplies __umul64hi, __dmul_rn, __dadd_rn, the thread indices).

typedef unsigned long long u64;

// Fully unrolls the loop that follows (constant trip counts: register arrays indexed by the
// loop variable stay in registers); the host compiler ignores it.
#ifdef __CUDACC_RTC__
#define UNROLL _Pragma("unroll")
#else
#define UNROLL
#endif

// Global thread index of a one-dimensional launch.
__device__ __forceinline__ u64 tid() {
    return (u64)blockIdx.x * (u64)blockDim.x + (u64)threadIdx.x;
}

__device__ __forceinline__ u64 add_mod(u64 a, u64 b, u64 q) {
    u64 s = a + b;
    return s >= q ? s - q : s;
}

__device__ __forceinline__ u64 sub_mod(u64 a, u64 b, u64 q) {
    return a >= b ? a - b : a + q - b;
}

__device__ __forceinline__ u64 neg_mod(u64 a, u64 q) {
    return a == 0 ? 0 : q - a;
}

// Shoup product x * w mod q with ws = floor(w * 2^64 / q), w < q; any x < 2^64.
__device__ __forceinline__ u64 mul_shoup(u64 x, u64 w, u64 ws, u64 q) {
    u64 qt = __umul64hi(x, ws);
    u64 r = x * w - qt * q;
    return r >= q ? r - q : r;
}

// Shoup product without its last correction: x * w mod q in [0, 2q), any x < 2^64 (Harvey's
// lazy butterflies keep NTT values in [0, 4q), below 2^64 for q < 2^62).
__device__ __forceinline__ u64 mul_shoup_lazy(u64 x, u64 w, u64 ws, u64 q) {
    return x * w - __umul64hi(x, ws) * q;
}

// Barrett product a * b mod q for a, b < q, with k = bits(q) (2..62) and
// mu = floor(2^(2k) / q) < 2^(k+1): the quotient estimate is low by at most 2.
__device__ __forceinline__ u64 mul_mod(u64 a, u64 b, u64 q, u64 mu, u64 k) {
    u64 lo = a * b;
    u64 hi = __umul64hi(a, b);
    u64 x1 = (hi << (64 - (k - 1))) | (lo >> (k - 1));
    u64 plo = x1 * mu;
    u64 phi = __umul64hi(x1, mu);
    u64 qt = (phi << (64 - (k + 1))) | (plo >> (k + 1));
    u64 r = lo - qt * q;
    if (r >= q) r -= q;
    if (r >= q) r -= q;
    return r;
}

// Per-modulus constants, MOD_STRIDE words per ring modulus: q, mu, k (see mul_mod).
#define MOD_STRIDE 3

// Block-cooperative kernels (threads of a block sharing a tile in shared memory). On the GPU,
// BLOCK_LOOP is a block-stride loop and BLOCK_BARRIER is __syncthreads(). The host emulator
// runs a launch one thread after another, so there a block kernel runs whole on its thread 0
// (BLOCK_ENTRY returns on the others), each BLOCK_LOOP covering every index in turn: the same
// writes in an order the barriers make irrelevant. Tiles are per-thread static storage on the
// host (tests may emulate from several threads at once).
#ifdef __CUDACC_RTC__
#define BLOCK_ENTRY
#define BLOCK_LOOP(v, count) for (unsigned v = threadIdx.x; v < (count); v += blockDim.x)
#define BLOCK_BARRIER() __syncthreads()
#define BLOCK_SHARED __shared__
#else
#define BLOCK_ENTRY if (threadIdx.x != 0) return
#define BLOCK_LOOP(v, count) for (unsigned v = 0; v < (count); v++)
#define BLOCK_BARRIER()
#define BLOCK_SHARED static thread_local
#endif
