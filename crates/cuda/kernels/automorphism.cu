// X -> X^g. Evaluation form: a gather by the math crate's permutation (out[k] = in[perm[k]]).
// Coefficient form: coefficient i moves to i*g mod 2N, negated when that is >= N (X^N = -1).

extern "C" __global__ void K(auto_eval)(word* out, const word* in, const u64* perm, u64 log_n,
                                     u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 n = 1ull << log_n;
    u64 base = i & ~(n - 1);
    out[i] = in[base + perm[i & (n - 1)]];
}

extern "C" __global__ void K(auto_coeff)(word* out, const word* in, u64 g, const u64* limb_mod,
                                      const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 n = 1ull << log_n;
    u64 base = i & ~(n - 1);
    u64 k = i & (n - 1);
    u64 j = (k * g) & (2 * n - 1);
    const word q = (word)mods[limb_mod[i >> log_n] * MOD_STRIDE];
    if (j < n) {
        out[base + j] = in[i];
    } else {
        out[base + j - n] = neg_mod(in[i], q);
    }
}
