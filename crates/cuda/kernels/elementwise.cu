// Element-wise kernels over limb-major polynomials: thread i handles word i of `total`
// = limbs * N words; its limb is i >> log_n and `limb_mod[limb]` is that limb's ring modulus
// index into `mods` (MOD_STRIDE words per modulus). `word` is the polynomials' word (u64, or
// u32 in the kernels named `K(..)` = `.._w32`); tables of constants stay 64-bit.

extern "C" __global__ void K(ew_add)(word* out, const word* a, const word* b, const u64* limb_mod,
                                  const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    const word q = (word)mods[limb_mod[i >> log_n] * MOD_STRIDE];
    out[i] = add_mod(a[i], b[i], q);
}

extern "C" __global__ void K(ew_sub)(word* out, const word* a, const word* b, const u64* limb_mod,
                                  const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    const word q = (word)mods[limb_mod[i >> log_n] * MOD_STRIDE];
    out[i] = sub_mod(a[i], b[i], q);
}

extern "C" __global__ void K(ew_neg)(word* out, const word* a, const u64* limb_mod, const u64* mods,
                                  u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    const word q = (word)mods[limb_mod[i >> log_n] * MOD_STRIDE];
    out[i] = neg_mod(a[i], q);
}

extern "C" __global__ void K(ew_mul)(word* out, const word* a, const word* b, const u64* limb_mod,
                                  const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    const u64* m = mods + limb_mod[i >> log_n] * MOD_STRIDE;
    out[i] = mul_mod(a[i], b[i], (word)m[0], m[1], m[2]);
}

// acc += a * b, in place (fused: one pass reads acc, a, b and writes acc).
extern "C" __global__ void K(ew_mul_acc)(word* acc, const word* a, const word* b, const u64* limb_mod,
                                      const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    const u64* m = mods + limb_mod[i >> log_n] * MOD_STRIDE;
    const word q = (word)m[0];
    acc[i] = add_mod(acc[i], mul_mod(a[i], b[i], q, m[1], m[2]), q);
}

// out = [out +] sum_t a_t * b_t over `terms` (1..8) operand pairs passed as arguments (no
// operand table to upload, so no host-device copy per call); `acc` = 1 adds to out (a longer
// dot product runs as several launches of eight).
extern "C" __global__ void K(ew_dot8)(word* out, const word* a0, const word* a1, const word* a2, const word* a3, const word* a4, const word* a5, const word* a6, const word* a7,
                                   const word* b0, const word* b1, const word* b2, const word* b3, const word* b4, const word* b5, const word* b6, const word* b7, u64 terms, u64 acc,
                                   const u64* limb_mod, const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    const u64* m = mods + limb_mod[i >> log_n] * MOD_STRIDE;
    const word* as[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    const word* bs[8] = {b0, b1, b2, b3, b4, b5, b6, b7};
    const word q = (word)m[0];
    const u64 mu = m[1], k = m[2];
    word s = acc ? out[i] : 0;
    // Unrolled with constant indices so the operand tables stay in registers (a loop indexing
    // them at run time puts them in local memory, a load per operand).
    UNROLL
    for (int t = 0; t < 8; t++) {
        if ((u64)t < terms) s = add_mod(s, mul_mod(as[t][i], bs[t][i], q, mu, k), q);
    }
    out[i] = s;
}

// out = a * c[limb] with the Shoup quotient cs[limb] (c already reduced below q; cs for this
// word size: floor(c * 2^64 / q), or floor(c * 2^32 / q) for 32-bit words).
extern "C" __global__ void K(ew_mul_const)(word* out, const word* a, const u64* c, const u64* cs,
                                        const u64* limb_mod, const u64* mods, u64 log_n,
                                        u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 l = i >> log_n;
    const word q = (word)mods[limb_mod[l] * MOD_STRIDE];
    out[i] = mul_shoup(a[i], (word)c[l], (word)cs[l], q);
}

// out = a + c[limb] (c already reduced below q).
extern "C" __global__ void K(ew_add_const)(word* out, const word* a, const u64* c, const u64* limb_mod,
                                        const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 l = i >> log_n;
    const word q = (word)mods[limb_mod[l] * MOD_STRIDE];
    out[i] = add_mod(a[i], (word)c[l], q);
}

// The one-limb extension: out limb l = [centered(x)]_(q_l), with x a residue modulo `src`
// read as the representative in (-src/2, src/2].
extern "C" __global__ void K(ew_lift_centered)(word* out, const word* x, u64 src, const u64* limb_mod,
                                            const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    const u64 q = mods[limb_mod[i >> log_n] * MOD_STRIDE];
    const u64 v = x[i & ((1ull << log_n) - 1)];
    if (v > src / 2) {
        // v - src < 0: reduce src - v (below src < 2^62) and negate.
        const u64 r = (src - v) % q;
        out[i] = (word)(r == 0 ? 0 : q - r);
    } else {
        out[i] = (word)(v % q);
    }
}

// out = (a - b) * c[limb] (ModDown's and rescaling's last step) in one pass: the difference
// stays in a register instead of a polynomial written and read back.
extern "C" __global__ void K(ew_sub_mul_const)(word* out, const word* a, const word* b, const u64* c,
                                            const u64* cs, const u64* limb_mod, const u64* mods,
                                            u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 l = i >> log_n;
    const word q = (word)mods[limb_mod[l] * MOD_STRIDE];
    out[i] = mul_shoup(sub_mod(a[i], b[i], q), (word)c[l], (word)cs[l], q);
}

// Key switching's inner products with one key's two halves, in one pass over the extended
// digits: out0 = [out0 +] sum_t u_t * b_t and out1 = [out1 +] sum_t u_t * a_t over `terms`
// (1..4) digits (`acc` = 1 adds to the outputs; more digits run as further launches). Each
// digit's word is read once for both sums, where two dot products read it twice.
extern "C" __global__ void K(ew_dot_pair4)(word* out0, word* out1, const word* u0, const word* u1, const word* u2, const word* u3,
                                        const word* b0, const word* b1, const word* b2, const word* b3,
                                        const word* a0, const word* a1, const word* a2, const word* a3, u64 terms, u64 acc,
                                        const u64* limb_mod, const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    const u64* m = mods + limb_mod[i >> log_n] * MOD_STRIDE;
    const word* us[4] = {u0, u1, u2, u3};
    const word* bs[4] = {b0, b1, b2, b3};
    const word* as[4] = {a0, a1, a2, a3};
    const word q = (word)m[0];
    const u64 mu = m[1], k = m[2];
    word s0 = acc ? out0[i] : 0, s1 = acc ? out1[i] : 0;
    // Unrolled with constant indices so the operand tables stay in registers.
    UNROLL
    for (int t = 0; t < 4; t++) {
        if ((u64)t < terms) {
            const word u = us[t][i];
            s0 = add_mod(s0, mul_mod(u, bs[t][i], q, mu, k), q);
            s1 = add_mod(s1, mul_mod(u, as[t][i], q, mu, k), q);
        }
    }
    out0[i] = s0;
    out1[i] = s1;
}
