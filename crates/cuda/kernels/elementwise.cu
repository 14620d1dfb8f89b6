// Element-wise kernels over limb-major polynomials: thread i handles word i of `total`
// = limbs * N words; its limb is i >> log_n and `limb_mod[limb]` is that limb's ring modulus
// index into `mods` (MOD_STRIDE words per modulus).

extern "C" __global__ void ew_add(u64* out, const u64* a, const u64* b, const u64* limb_mod,
                                  const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 q = mods[limb_mod[i >> log_n] * MOD_STRIDE];
    out[i] = add_mod(a[i], b[i], q);
}

extern "C" __global__ void ew_sub(u64* out, const u64* a, const u64* b, const u64* limb_mod,
                                  const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 q = mods[limb_mod[i >> log_n] * MOD_STRIDE];
    out[i] = sub_mod(a[i], b[i], q);
}

extern "C" __global__ void ew_neg(u64* out, const u64* a, const u64* limb_mod, const u64* mods,
                                  u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 q = mods[limb_mod[i >> log_n] * MOD_STRIDE];
    out[i] = neg_mod(a[i], q);
}

extern "C" __global__ void ew_mul(u64* out, const u64* a, const u64* b, const u64* limb_mod,
                                  const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    const u64* m = mods + limb_mod[i >> log_n] * MOD_STRIDE;
    out[i] = mul_mod(a[i], b[i], m[0], m[1], m[2]);
}

// acc += a * b, in place (fused: one pass reads acc, a, b and writes acc).
extern "C" __global__ void ew_mul_acc(u64* acc, const u64* a, const u64* b, const u64* limb_mod,
                                      const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    const u64* m = mods + limb_mod[i >> log_n] * MOD_STRIDE;
    acc[i] = add_mod(acc[i], mul_mod(a[i], b[i], m[0], m[1], m[2]), m[0]);
}

// out = [out +] sum_t a_t * b_t over `terms` (1..8) operand pairs passed as arguments (no
// operand table to upload, so no host-device copy per call); `acc` = 1 adds to out (a longer
// dot product runs as several launches of eight).
extern "C" __global__ void ew_dot8(u64* out, const u64* a0, const u64* a1, const u64* a2, const u64* a3, const u64* a4, const u64* a5, const u64* a6, const u64* a7,
                                   const u64* b0, const u64* b1, const u64* b2, const u64* b3, const u64* b4, const u64* b5, const u64* b6, const u64* b7, u64 terms, u64 acc,
                                   const u64* limb_mod, const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    const u64* m = mods + limb_mod[i >> log_n] * MOD_STRIDE;
    const u64* as[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    const u64* bs[8] = {b0, b1, b2, b3, b4, b5, b6, b7};
    const u64 q = m[0], mu = m[1], k = m[2];
    u64 s = acc ? out[i] : 0;
    // Unrolled with constant indices so the operand tables stay in registers (a loop indexing
    // them at run time puts them in local memory, a load per operand).
    UNROLL
    for (int t = 0; t < 8; t++) {
        if ((u64)t < terms) s = add_mod(s, mul_mod(as[t][i], bs[t][i], q, mu, k), q);
    }
    out[i] = s;
}

// out = a * c[limb] with the Shoup quotient cs[limb] (c already reduced below q).
extern "C" __global__ void ew_mul_const(u64* out, const u64* a, const u64* c, const u64* cs,
                                        const u64* limb_mod, const u64* mods, u64 log_n,
                                        u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 l = i >> log_n;
    u64 q = mods[limb_mod[l] * MOD_STRIDE];
    out[i] = mul_shoup(a[i], c[l], cs[l], q);
}

// out = a + c[limb] (c already reduced below q).
extern "C" __global__ void ew_add_const(u64* out, const u64* a, const u64* c, const u64* limb_mod,
                                        const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 l = i >> log_n;
    u64 q = mods[limb_mod[l] * MOD_STRIDE];
    out[i] = add_mod(a[i], c[l], q);
}

// The one-limb extension: out limb l = [centered(x)]_(q_l), with x a residue modulo `src`
// read as the representative in (-src/2, src/2].
extern "C" __global__ void ew_lift_centered(u64* out, const u64* x, u64 src, const u64* limb_mod,
                                            const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 q = mods[limb_mod[i >> log_n] * MOD_STRIDE];
    u64 v = x[i & ((1ull << log_n) - 1)];
    if (v > src / 2) {
        // v - src < 0: reduce src - v (below src < 2^62) and negate.
        out[i] = neg_mod((src - v) % q, q);
    } else {
        out[i] = v % q;
    }
}
