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

// out = sum_t a_t * b_t over `terms` operands whose device addresses are listed in `as` and
// `bs` (one fused pass: each coefficient's products are summed in registers).
extern "C" __global__ void ew_dot(u64* out, const u64* as, const u64* bs, u64 terms,
                                  const u64* limb_mod, const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    const u64* m = mods + limb_mod[i >> log_n] * MOD_STRIDE;
    u64 s = 0;
    for (u64 t = 0; t < terms; t++) {
        const u64* a = (const u64*)as[t];
        const u64* b = (const u64*)bs[t];
        s = add_mod(s, mul_mod(a[i], b[i], m[0], m[1], m[2]), m[0]);
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
