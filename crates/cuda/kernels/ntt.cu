// Negacyclic NTT in at most two passes over memory, each pass a tile of up to 2^11 words in
// shared memory going through several radix-2 stages between barriers.
//
// The butterflies, their operands and their twiddles are exactly those of the radix-2
// algorithm (the math crate's), so the output equals the CPU's bit for bit whatever the
// tiling. Forward: Cooley-Tukey, w[m + i] = psi^brev(m + i) (the math crate's table layout),
// output in bit-reversed order: slot k holds the evaluation at psi^(2 brev(k) + 1), the CPU's
// order. Inverse: Gentleman-Sande with psi^-brev, then a multiply by N^-1, fused into the
// store of the inverse's last pass.
//
// Stage s has m = 2^s blocks of butterflies at distance t = N / 2m: it pairs indices that
// differ in bit log N - 1 - s. A pass runs `stages` = S consecutive stages s0 .. s0+S-1, which
// touch only the S index bits [low, low + S), low = log N - s0 - S. Write an index as
// (hi, mid, lo) with mid those S bits: a tile is one hi, 2^C consecutive lo values (the
// columns, C <= low) and all 2^S mid values, 2^(S+C) words, so the pass's butterflies stay
// inside tiles. Tiles per limb: 2^(log N - S - C); one block per (limb, tile). With N = 2^16
// the host plans S = 5, C = 6 (rows of 64 consecutive words) then S = 11, C = 0 (2^11
// consecutive words): every global access is coalesced.
//
// `tw` and `tws` hold N twiddles (and Shoup quotients) per ring modulus; `limb_mod` maps the
// polynomial's limbs to ring moduli; `sc`, `scs` are N^-1 and its Shoup quotient per ring
// modulus, applied when `scale` is 1.

#define NTT_TILE_MAX 2048

template <bool FORWARD>
__device__ __forceinline__ void ntt_tile(u64* a, const u64* tw, const u64* tws,
                                         const u64* limb_mod, const u64* mods, const u64* sc,
                                         const u64* scs, u64 log_n, u64 s0, u64 stages,
                                         u64 log_cols, u64 scale) {
    BLOCK_ENTRY;
    BLOCK_SHARED u64 tile[NTT_TILE_MAX];
    const unsigned S = (unsigned)stages, C = (unsigned)log_cols;
    const unsigned low = (unsigned)(log_n - s0) - S;
    const unsigned tile_bits = (unsigned)log_n - S - C;  // log2(tiles per limb)
    const unsigned l = blockIdx.x >> tile_bits;
    const unsigned tau = blockIdx.x & ((1u << tile_bits) - 1);
    const unsigned lo_tiles = low - C;  // lo bits above the columns: part of the tile id
    const u64 hi = tau >> lo_tiles;
    const u64 gbase = (hi << (low + S)) + ((u64)(tau & ((1u << lo_tiles) - 1)) << C);
    const unsigned cmask = (1u << C) - 1;
    const unsigned size = 1u << (S + C);
    const u64 mi = limb_mod[l];
    const u64 q = mods[mi * MOD_STRIDE];
    u64* x = a + ((u64)l << log_n);
    const u64* w = tw + (mi << log_n);
    const u64* ws = tws + (mi << log_n);
    BLOCK_LOOP(e, size) { tile[e] = x[gbase + ((u64)(e >> C) << low) + (e & cmask)]; }
    BLOCK_BARRIER();
    for (unsigned k = 0; k < S; k++) {
        // Forward runs the pass's stages in increasing order, inverse in decreasing.
        const unsigned kk = FORWARD ? k : S - 1 - k;
        const unsigned hb = S - 1 - kk;  // log2 of the butterfly distance in mid
        const u64 m = 1ull << (s0 + kk);
        BLOCK_LOOP(b, size >> 1) {
            const unsigned r = b >> C;
            const unsigned mid = ((r >> hb) << (hb + 1)) + (r & ((1u << hb) - 1));
            const unsigned i0 = (mid << C) + (b & cmask);
            const unsigned i1 = i0 + (1u << (hb + C));
            const u64 idx = m + (hi << kk) + (r >> hb);
            const u64 u = tile[i0];
            if (FORWARD) {
                const u64 t = mul_shoup(tile[i1], w[idx], ws[idx], q);
                tile[i0] = add_mod(u, t, q);
                tile[i1] = sub_mod(u, t, q);
            } else {
                const u64 t = tile[i1];
                tile[i0] = add_mod(u, t, q);
                tile[i1] = mul_shoup(sub_mod(u, t, q), w[idx], ws[idx], q);
            }
        }
        BLOCK_BARRIER();
    }
    if (scale) {
        const u64 c = sc[mi], cs = scs[mi];
        BLOCK_LOOP(e, size) {
            x[gbase + ((u64)(e >> C) << low) + (e & cmask)] = mul_shoup(tile[e], c, cs, q);
        }
    } else {
        BLOCK_LOOP(e, size) { x[gbase + ((u64)(e >> C) << low) + (e & cmask)] = tile[e]; }
    }
}

// One pass of the forward transform: one block per (limb, tile), NTT_BLOCK threads.
extern "C" __global__ void ntt_tile_fwd(u64* a, const u64* tw, const u64* tws,
                                        const u64* limb_mod, const u64* mods, const u64* sc,
                                        const u64* scs, u64 log_n, u64 s0, u64 stages,
                                        u64 log_cols, u64 scale) {
    ntt_tile<true>(a, tw, tws, limb_mod, mods, sc, scs, log_n, s0, stages, log_cols, scale);
}

// One pass of the inverse transform (the last one run, s0 = 0, with scale = 1).
extern "C" __global__ void ntt_tile_inv(u64* a, const u64* tw, const u64* tws,
                                        const u64* limb_mod, const u64* mods, const u64* sc,
                                        const u64* scs, u64 log_n, u64 s0, u64 stages,
                                        u64 log_cols, u64 scale) {
    ntt_tile<false>(a, tw, tws, limb_mod, mods, sc, scs, log_n, s0, stages, log_cols, scale);
}
