// Modular arithmetic on the polynomials' words (64-bit words for moduli q < 2^62, the math
// crate's range; 32-bit words for q < 2^30), shared by every kernel. Each function returns the canonical residue in [0, q), so results equal the
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

// The polynomials' word: u64, or u32 for rings whose primes are all below 2^30 (the kernels'
// `_w32` variants). The functions below take either; a call mixing the two does not compile.
typedef unsigned int u32;

// The high half of a word-sized product: one instruction for 32-bit words, several for
// 64-bit ones (why 32-bit words pay on a GPU).
__device__ __forceinline__ u64 mulhi(u64 a, u64 b) { return __umul64hi(a, b); }
__device__ __forceinline__ u32 mulhi(u32 a, u32 b) { return __umulhi(a, b); }

template <typename W>
__device__ __forceinline__ W add_mod(W a, W b, W q) {
    W s = a + b;
    return s >= q ? s - q : s;
}

template <typename W>
__device__ __forceinline__ W sub_mod(W a, W b, W q) {
    return a >= b ? a - b : a + q - b;
}

template <typename W>
__device__ __forceinline__ W neg_mod(W a, W q) {
    return a == 0 ? 0 : q - a;
}

// Shoup product x * w mod q with ws = floor(w * 2^B / q) for B-bit words, w < q; any x. Needs
// 2q below 2^B (q < 2^62 for 64-bit words, q < 2^30 for 32-bit ones).
template <typename W>
__device__ __forceinline__ W mul_shoup(W x, W w, W ws, W q) {
    W qt = mulhi(x, ws);
    W r = x * w - qt * q;
    return r >= q ? r - q : r;
}

// Shoup product without its last correction: x * w mod q in [0, 2q), any x (Harvey's lazy
// butterflies keep NTT values in [0, 4q), below 2^B for the primes above).
template <typename W>
__device__ __forceinline__ W mul_shoup_lazy(W x, W w, W ws, W q) {
    return x * w - mulhi(x, ws) * q;
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

// The same product for 32-bit words (a, b < q < 2^30) with the same constants: the product
// is below 2^60 and x1 * mu below 2^62, so one 64-bit product gives the quotient estimate, low
// by at most 2.
__device__ __forceinline__ u32 mul_mod(u32 a, u32 b, u32 q, u64 mu, u64 k) {
    const u64 p = (u64)a * b;
    const u64 qt = ((p >> (k - 1)) * mu) >> (k + 1);
    u64 r = p - qt * q;
    if (r >= q) r -= q;
    if (r >= q) r -= q;
    return (u32)r;
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
