// Fast base conversion (the math crate's BaseConverter::convert, both modes):
//   y_i = [x_i * qhat_i^-1]_(q_i)                               (bconv_scale)
//   out_j = [sum_i y_i * [qhat_i]_(p_j)]_(p_j)                   (bconv_mac)
//   exact mode: out_j -= [v * Q]_(p_j), v = min(floor(sum_i y_i * (1/q_i) + 1/2), l_in)
// The exact count uses the same IEEE products and sums in the same order as the CPU, with
// explicit round-to-nearest operations so no multiply-add is contracted.

// Threads: l_in * N. `inv`, `invs`: qhat_i^-1 and its Shoup quotient per input limb.
extern "C" __global__ void bconv_scale(u64* y, const u64* x, const u64* inv, const u64* invs,
                                       const u64* limb_mod, const u64* mods, u64 log_n,
                                       u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 l = i >> log_n;
    y[i] = mul_shoup(x[i], inv[l], invs[l], mods[limb_mod[l] * MOD_STRIDE]);
}

// Threads: l_out * N. `qhat`: l_out rows of l_in entries [qhat_i]_(p_j), `qhats` their Shoup
// quotients (y_i is a residue of q_i, not of p_j: the Shoup product takes any 64-bit word); `qinv`: 1/q_i as IEEE
// double bits; `vq`: l_out rows of l_in + 1 entries [v * Q]_(p_j); `out_mod`: ring moduli of the
// output limbs.
extern "C" __global__ void bconv_mac(u64* out, const u64* y, u64 l_in, const u64* qhat,
                                     const u64* qhats, const u64* qinv, const u64* vq, u64 exact,
                                     const u64* out_mod, const u64* mods, u64 log_n, u64 total) {
    u64 g = tid();
    if (g >= total) return;
    u64 n = 1ull << log_n;
    u64 j = g >> log_n;
    u64 k = g & (n - 1);
    u64 p = mods[out_mod[j] * MOD_STRIDE];
    u64 s = 0;
    for (u64 i = 0; i < l_in; i++) {
        u64 c = j * l_in + i;
        s = add_mod(s, mul_shoup(y[(i << log_n) + k], qhat[c], qhats[c], p), p);
    }
    if (exact) {
        double a = 0.0;
        for (u64 i = 0; i < l_in; i++) {
            double yi = __ull2double_rn(y[(i << log_n) + k]);
            a = __dadd_rn(a, __dmul_rn(yi, __longlong_as_double((long long)qinv[i])));
        }
        // a + 1/2 >= 0, so rounding the conversion down is floor (no math library needed).
        u64 v = __double2ull_rd(__dadd_rn(a, 0.5));
        if (v > l_in) v = l_in;
        s = sub_mod(s, vq[j * (l_in + 1) + v], p);
    }
    out[g] = s;
}
