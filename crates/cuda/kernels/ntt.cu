// Negacyclic radix-2 NTT, one launch per stage over every limb (thread = one butterfly).
// Forward: Cooley-Tukey, w[m + i] = psi^brev(m + i) (the math crate's table layout), output in
// bit-reversed order: slot k holds the evaluation at psi^(2 brev(k) + 1), the CPU's order.
// Inverse: Gentleman-Sande with psi^-brev, then a multiply by N^-1 (ntt_scale).
// `tw` and `tws` hold N twiddles (and Shoup quotients) per ring modulus; `limb_mod` maps the
// polynomial's limbs to ring moduli. Threads: limbs * N / 2.

extern "C" __global__ void ntt_fwd_stage(u64* a, const u64* tw, const u64* tws,
                                         const u64* limb_mod, const u64* mods, u64 log_n,
                                         u64 m, u64 log_t, u64 total) {
    u64 g = tid();
    if (g >= total) return;
    u64 half = (1ull << log_n) >> 1;
    u64 l = g / half;
    u64 b = g - l * half;
    u64 i = b >> log_t;
    u64 t = 1ull << log_t;
    u64 j = (i << (log_t + 1)) + (b & (t - 1));
    u64 mi = limb_mod[l];
    u64 q = mods[mi * MOD_STRIDE];
    u64 w = tw[(mi << log_n) + m + i];
    u64 ws = tws[(mi << log_n) + m + i];
    u64* x = a + (l << log_n);
    u64 u = x[j];
    u64 v = mul_shoup(x[j + t], w, ws, q);
    x[j] = add_mod(u, v, q);
    x[j + t] = sub_mod(u, v, q);
}

extern "C" __global__ void ntt_inv_stage(u64* a, const u64* tw, const u64* tws,
                                         const u64* limb_mod, const u64* mods, u64 log_n,
                                         u64 m, u64 log_t, u64 total) {
    u64 g = tid();
    if (g >= total) return;
    u64 half = (1ull << log_n) >> 1;
    u64 l = g / half;
    u64 b = g - l * half;
    u64 i = b >> log_t;
    u64 t = 1ull << log_t;
    u64 j = (i << (log_t + 1)) + (b & (t - 1));
    u64 mi = limb_mod[l];
    u64 q = mods[mi * MOD_STRIDE];
    u64 w = tw[(mi << log_n) + m + i];
    u64 ws = tws[(mi << log_n) + m + i];
    u64* x = a + (l << log_n);
    u64 u = x[j];
    u64 v = x[j + t];
    x[j] = add_mod(u, v, q);
    x[j + t] = mul_shoup(sub_mod(u, v, q), w, ws, q);
}

// a *= c[mod] (Shoup) where c, cs are indexed by ring modulus: the inverse's N^-1.
extern "C" __global__ void ntt_scale(u64* a, const u64* c, const u64* cs, const u64* limb_mod,
                                     const u64* mods, u64 log_n, u64 total) {
    u64 i = tid();
    if (i >= total) return;
    u64 mi = limb_mod[i >> log_n];
    a[i] = mul_shoup(a[i], c[mi], cs[mi], mods[mi * MOD_STRIDE]);
}
