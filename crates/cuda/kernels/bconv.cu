// Fast base conversion (the math crate's BaseConverter::convert, both modes):
//   y_i = [x_i * qhat_i^-1]_(q_i)                               (bconv_scale)
//   out_j = [sum_i y_i * [qhat_i]_(p_j)]_(p_j)                   (bconv_mac)
//   exact mode: out_j -= [v * Q]_(p_j), v = min(floor(sum_i y_i * (1/q_i) + 1/2), l_in)
// The exact count uses the same IEEE products and sums in the same order as the CPU, with
// explicit round-to-nearest operations so no multiply-add is contracted.

// `word` is the polynomials' word (u64, or u32 in the `_w32` kernels); the tables stay 64-bit,
// with Shoup quotients for the word size (floor(c * 2^64 / q), or floor(c * 2^32 / q)).
//
// Threads: l_in * N. `inv`, `invs`: qhat_i^-1 and its Shoup quotient per input limb.
extern "C" __global__ void K(bconv_scale)(word* y, const word* x, const u64* inv, const u64* invs,
                                       const u64* limb_mod, const u64* mods, u64 log_n,
                                       u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 l = i >> log_n;
    y[i] = mul_shoup(x[i], (word)inv[l], (word)invs[l], (word)mods[limb_mod[l] * MOD_STRIDE]);
}

// Threads: ceil(l_out / BCONV_J) * N; `total` = l_out * N. A thread computes BCONV_J output
// limbs of one coefficient, so each input word is read once per BCONV_J outputs (and the
// exact mode's count once) instead of once per output. `qhat`: l_out rows of l_in entries
// [qhat_i]_(p_j), `qhats` their Shoup quotients (y_i is a residue of q_i, not of p_j: the
// Shoup product takes any 64-bit word); `qinv`: 1/q_i as IEEE double bits; `vq`: l_out rows
// of l_in + 1 entries [v * Q]_(p_j); `out_mod`: ring moduli of the output limbs.
// A tuning knob: TESSERA_CUDA_NVRTC_OPTIONS="-DBCONV_J=2" (the launch reads the same option).
#ifndef BCONV_J
#define BCONV_J 4
#endif
#if BCONV_J < 1 || BCONV_J > 8
#error "BCONV_J must be between 1 and 8"
#endif
extern "C" __global__ void K(bconv_mac)(word* out, const word* y, u64 l_in, const u64* qhat,
                                     const u64* qhats, const u64* qinv, const u64* vq, u64 exact,
                                     const u64* out_mod, const u64* mods, u64 log_n, u64 total) {
    const u64 g = tid();
    const u64 n = 1ull << log_n;
    const u64 l_out = total >> log_n;
    const u64 j0 = (g >> log_n) * BCONV_J;
    if (j0 >= l_out) return;
    const u64 k = g & (n - 1);
    const u64 m = l_out - j0 < BCONV_J ? l_out - j0 : BCONV_J;
    word p[BCONV_J], s[BCONV_J];
    UNROLL
    for (int jj = 0; jj < BCONV_J; jj++) {
        p[jj] = jj < m ? (word)mods[out_mod[j0 + jj] * MOD_STRIDE] : 1;
        s[jj] = 0;
    }
    for (u64 i = 0; i < l_in; i++) {
        const word yi = y[(i << log_n) + k];
        UNROLL
        for (int jj = 0; jj < BCONV_J; jj++) {
            if (jj < m) {
                const u64 c = (j0 + jj) * l_in + i;
                s[jj] = add_mod(s[jj], mul_shoup(yi, (word)qhat[c], (word)qhats[c], p[jj]), p[jj]);
            }
        }
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
        UNROLL
        for (int jj = 0; jj < BCONV_J; jj++) {
            if (jj < m) s[jj] = sub_mod(s[jj], (word)vq[(j0 + jj) * (l_in + 1) + v], p[jj]);
        }
    }
    UNROLL
    for (int jj = 0; jj < BCONV_J; jj++) {
        if (jj < m) out[((j0 + jj) << log_n) + k] = s[jj];
    }
}
