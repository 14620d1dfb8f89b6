// Modular arithmetic on 32-bit words, for the rings whose primes are all below 2^30 (the
// math crate's 32-bit word range): the overloads of modarith.cuh's functions that the kernels'
// 32-bit variants call (their operands are `word` = unsigned int there, so each call resolves
// to exactly one overload; a call mixing word sizes does not compile). Each returns the
// canonical residue in [0, q), so results equal the 64-bit kernels' bit for bit.
//
// Why 32-bit words on a GPU: a 32 x 32-bit product is one instruction (IMAD, or __umulhi for
// the high half), a 64-bit one several, and every pass moves half the bytes.

typedef unsigned int u32;

__device__ __forceinline__ u32 add_mod(u32 a, u32 b, u32 q) {
    u32 s = a + b;
    return s >= q ? s - q : s;
}

__device__ __forceinline__ u32 sub_mod(u32 a, u32 b, u32 q) {
    return a >= b ? a - b : a + q - b;
}

__device__ __forceinline__ u32 neg_mod(u32 a, u32 q) {
    return a == 0 ? 0 : q - a;
}

// Shoup product x * w mod q with ws = floor(w * 2^32 / q), w < q < 2^31; any x < 2^32.
__device__ __forceinline__ u32 mul_shoup(u32 x, u32 w, u32 ws, u32 q) {
    u32 qt = __umulhi(x, ws);
    u32 r = x * w - qt * q;
    return r >= q ? r - q : r;
}

// Shoup product without its last correction: x * w mod q in [0, 2q), any x < 2^32 (the lazy
// NTT keeps its values in [0, 4q), below 2^32 for q < 2^30).
__device__ __forceinline__ u32 mul_shoup_lazy(u32 x, u32 w, u32 ws, u32 q) {
    return x * w - __umulhi(x, ws) * q;
}

// Barrett product a * b mod q for a, b < q < 2^30, with modarith.cuh's constants k = bits(q)
// and mu = floor(2^(2k) / q) < 2^(k+1): the product is below 2^60 and x1 * mu below 2^62, so
// one 64-bit product gives the quotient estimate, low by at most 2.
__device__ __forceinline__ u32 mul_mod(u32 a, u32 b, u32 q, u64 mu, u64 k) {
    const u64 p = (u64)a * b;
    const u64 qt = ((p >> (k - 1)) * mu) >> (k + 1);
    u64 r = p - qt * q;
    if (r >= q) r -= q;
    if (r >= q) r -= q;
    return (u32)r;
}
