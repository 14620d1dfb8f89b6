// Negacyclic NTT, R consecutive radix-2 stages per launch (R = 1..4): each thread holds
// E = 2^R elements in registers and applies the R stages' butterflies to them, so a
// transform makes ceil(log N / 4) passes over memory instead of log N. No shared memory and
// no barriers (every thread independent), so the host emulator runs these kernels too.
//
// The butterflies, their operands and their twiddles are exactly those of the radix-2
// algorithm (the math crate's), so the output equals the CPU's bit for bit whatever the
// grouping. Forward: Cooley-Tukey, w[m + i] = psi^brev(m + i) (the math crate's table
// layout), output in bit-reversed order: slot k holds the evaluation at psi^(2 brev(k) + 1),
// the CPU's order. Inverse: Gentleman-Sande with psi^-brev, then a multiply by N^-1
// (ntt_scale).
//
// Stage s has m = 2^s blocks of butterflies at distance t = N / 2m. A group of stages
// s0 .. s0+R-1 has its smallest distance t_min = N >> (s0 + R); the thread for block i0 (of
// stage s0) and offset o < t_min holds x[i0 * 2 t0 + o + c * t_min], c = 0 .. E-1, where
// t0 = t_min * 2^(R-1). At stage s0 + j its butterflies pair c with c + h, h = E >> (j + 1),
// in block i0 * 2^j + c / 2h.
// `tw` and `tws` hold N twiddles (and Shoup quotients) per ring modulus; `limb_mod` maps the
// polynomial's limbs to ring moduli. Threads: limbs * N / E.

#ifdef __CUDACC_RTC__
#define UNROLL _Pragma("unroll")
#else
#define UNROLL
#endif

template <int R, bool FORWARD>
__device__ __forceinline__ void ntt_group(u64* a, const u64* tw, const u64* tws,
                                          const u64* limb_mod, const u64* mods, u64 log_n,
                                          u64 s0, u64 total) {
    const int E = 1 << R;
    u64 g = tid();
    if (g >= total) return;
    u64 per_limb = (1ull << log_n) >> R;
    u64 l = g / per_limb;
    u64 b = g - l * per_limb;
    u64 log_tmin = log_n - s0 - R;
    u64 i0 = b >> log_tmin;
    u64 base = (i0 << (log_tmin + R)) + (b & ((1ull << log_tmin) - 1));
    u64 mi = limb_mod[l];
    u64 q = mods[mi * MOD_STRIDE];
    u64* x = a + (l << log_n);
    const u64* w = tw + (mi << log_n);
    const u64* ws = tws + (mi << log_n);
    u64 v[E];
    UNROLL
    for (int c = 0; c < E; c++) v[c] = x[base + ((u64)c << log_tmin)];
    UNROLL
    for (int jj = 0; jj < R; jj++) {
        // Forward runs the group's stages in increasing order, inverse in decreasing.
        const int j = FORWARD ? jj : R - 1 - jj;
        const int h = E >> (j + 1);
        u64 m = 1ull << (s0 + j);
        UNROLL
        for (int c = 0; c < E; c++) {
            if (c & h) continue;
            u64 idx = m + (i0 << j) + (u64)(c / (2 * h));
            u64 u = v[c];
            if (FORWARD) {
                u64 t = mul_shoup(v[c + h], w[idx], ws[idx], q);
                v[c] = add_mod(u, t, q);
                v[c + h] = sub_mod(u, t, q);
            } else {
                u64 t = v[c + h];
                v[c] = add_mod(u, t, q);
                v[c + h] = mul_shoup(sub_mod(u, t, q), w[idx], ws[idx], q);
            }
        }
    }
    UNROLL
    for (int c = 0; c < E; c++) x[base + ((u64)c << log_tmin)] = v[c];
}

// One kernel per (direction, R), spelt out so each signature is visible to kernels.rs's check.
extern "C" __global__ void ntt_fwd_r1(u64* a, const u64* tw, const u64* tws,
                                      const u64* limb_mod, const u64* mods, u64 log_n, u64 s0,
                                      u64 total) {
    ntt_group<1, true>(a, tw, tws, limb_mod, mods, log_n, s0, total);
}
extern "C" __global__ void ntt_fwd_r2(u64* a, const u64* tw, const u64* tws,
                                      const u64* limb_mod, const u64* mods, u64 log_n, u64 s0,
                                      u64 total) {
    ntt_group<2, true>(a, tw, tws, limb_mod, mods, log_n, s0, total);
}
extern "C" __global__ void ntt_fwd_r3(u64* a, const u64* tw, const u64* tws,
                                      const u64* limb_mod, const u64* mods, u64 log_n, u64 s0,
                                      u64 total) {
    ntt_group<3, true>(a, tw, tws, limb_mod, mods, log_n, s0, total);
}
extern "C" __global__ void ntt_fwd_r4(u64* a, const u64* tw, const u64* tws,
                                      const u64* limb_mod, const u64* mods, u64 log_n, u64 s0,
                                      u64 total) {
    ntt_group<4, true>(a, tw, tws, limb_mod, mods, log_n, s0, total);
}
extern "C" __global__ void ntt_inv_r1(u64* a, const u64* tw, const u64* tws,
                                      const u64* limb_mod, const u64* mods, u64 log_n, u64 s0,
                                      u64 total) {
    ntt_group<1, false>(a, tw, tws, limb_mod, mods, log_n, s0, total);
}
extern "C" __global__ void ntt_inv_r2(u64* a, const u64* tw, const u64* tws,
                                      const u64* limb_mod, const u64* mods, u64 log_n, u64 s0,
                                      u64 total) {
    ntt_group<2, false>(a, tw, tws, limb_mod, mods, log_n, s0, total);
}
extern "C" __global__ void ntt_inv_r3(u64* a, const u64* tw, const u64* tws,
                                      const u64* limb_mod, const u64* mods, u64 log_n, u64 s0,
                                      u64 total) {
    ntt_group<3, false>(a, tw, tws, limb_mod, mods, log_n, s0, total);
}
extern "C" __global__ void ntt_inv_r4(u64* a, const u64* tw, const u64* tws,
                                      const u64* limb_mod, const u64* mods, u64 log_n, u64 s0,
                                      u64 total) {
    ntt_group<4, false>(a, tw, tws, limb_mod, mods, log_n, s0, total);
}

// a *= c[mod] (Shoup) where c, cs are indexed by ring modulus: the inverse's N^-1.
extern "C" __global__ void ntt_scale(u64* a, const u64* c, const u64* cs, const u64* limb_mod,
                                     const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 mi = limb_mod[i >> log_n];
    a[i] = mul_shoup(a[i], c[mi], cs[mi], mods[mi * MOD_STRIDE]);
}
