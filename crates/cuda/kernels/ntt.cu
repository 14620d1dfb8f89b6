// Negacyclic NTT in at most two passes over memory, each pass a tile of up to 2^11 words in
// shared memory (with the twiddles its stages use) going through rounds of up to three
// radix-2 stages, each thread holding up to 8 words in registers, with a barrier per round.
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
// `word` is the polynomials' word: u64, or u32 in the `_w32` kernels (primes below 2^30, so
// the lazy forward's [0, 4q) fits 32 bits); the twiddle tables are in words of the same size.
// `tw` and `tws` hold N twiddles (and Shoup quotients for the word size) per ring modulus; `limb_mod` maps the
// polynomial's limbs to ring moduli; `sc`, `scs` are N^-1 and its Shoup quotient per ring
// modulus, applied when `scale` is 1.

#define NTT_TILE_MAX 2048

// The least number of tile blocks (of 256 threads) an SM should hold at once: NVCC limits the
// registers a thread uses to fit them (1: no limit). A tuning knob, set at run time with
// TESSERA_CUDA_NVRTC_OPTIONS="-DNTT_MIN_BLOCKS=3" (docs/gpu.md).
#ifndef NTT_MIN_BLOCKS
#define NTT_MIN_BLOCKS 1
#endif

// Harvey's lazy butterflies (1, the default): between stages and passes the forward keeps its
// values in [0, 4q) and the inverse in [0, 2q) (below 2^64: q < 2^62), with one conditional
// subtraction per butterfly instead of three; the last pass reduces to [0, q), so the output
// is the canonical one either way. 0: every butterfly reduces fully (a tuning knob,
// TESSERA_CUDA_NVRTC_OPTIONS="-DNTT_LAZY=0").
#ifndef NTT_LAZY
#define NTT_LAZY 1
#endif

// One round of a pass: the R consecutive stages kk0 .. kk0+R-1 (R <= 3), which mix the mid
// bits [lo_b, lo_b + R), lo_b = S - kk0 - R. A unit is the 2^R words of the tile that differ
// only in those bits; each thread takes a unit into registers, applies the round's
// butterflies (forward: stages in increasing order; inverse: decreasing) and writes it back.
// The twiddle of stage kk, butterfly block i of the tile, is at tws_s[(1 << kk) - 1 + i].
template <int R, bool FORWARD>
__device__ __forceinline__ void ntt_round(word* tile, const word* w_s, const word* ws_s,
                                          unsigned S, unsigned C, unsigned kk0, unsigned size,
                                          word q) {
    const int E = 1 << R;
    const unsigned lo_b = S - kk0 - R;
    const unsigned cmask = (1u << C) - 1;
    BLOCK_LOOP(u, size >> R) {
        const unsigned rr = u >> C;
        const unsigned base_mid = ((rr >> lo_b) << (lo_b + R)) | (rr & ((1u << lo_b) - 1));
        const unsigned col = u & cmask;
        word v[E];
        UNROLL
        for (int c = 0; c < E; c++) v[c] = tile[((base_mid | ((unsigned)c << lo_b)) << C) | col];
        UNROLL
        for (int jj = 0; jj < R; jj++) {
            const int j = FORWARD ? jj : R - 1 - jj;
            const unsigned kk = kk0 + j;
            const int h = E >> (j + 1);
            const unsigned hb = S - 1 - kk;  // the mid bit stage kk mixes
            UNROLL
            for (int c = 0; c < E; c++) {
                if (c & h) continue;
                const unsigned mid = base_mid | ((unsigned)c << lo_b);
                const unsigned ti = (1u << kk) - 1 + (mid >> (hb + 1));
                const word x0 = v[c];
                if (NTT_LAZY && FORWARD) {
                    // x0, v[c + h] in [0, 4q): outputs in [0, 4q).
                    const word two_q = q << 1;
                    const word a = x0 >= two_q ? x0 - two_q : x0;
                    const word t = mul_shoup_lazy(v[c + h], w_s[ti], ws_s[ti], q);
                    v[c] = a + t;
                    v[c + h] = a - t + two_q;
                } else if (NTT_LAZY) {
                    // x0, v[c + h] in [0, 2q): outputs in [0, 2q).
                    const word two_q = q << 1;
                    const word t = v[c + h];
                    const word s = x0 + t;
                    v[c] = s >= two_q ? s - two_q : s;
                    v[c + h] = mul_shoup_lazy(x0 - t + two_q, w_s[ti], ws_s[ti], q);
                } else if (FORWARD) {
                    const word t = mul_shoup(v[c + h], w_s[ti], ws_s[ti], q);
                    v[c] = add_mod(x0, t, q);
                    v[c + h] = sub_mod(x0, t, q);
                } else {
                    const word t = v[c + h];
                    v[c] = add_mod(x0, t, q);
                    v[c + h] = mul_shoup(sub_mod(x0, t, q), w_s[ti], ws_s[ti], q);
                }
            }
        }
        UNROLL
        for (int c = 0; c < E; c++) tile[((base_mid | ((unsigned)c << lo_b)) << C) | col] = v[c];
    }
}

template <bool FORWARD>
__device__ __forceinline__ void ntt_tile(word* a, const word* tw, const word* tws,
                                         const u64* limb_mod, const u64* mods, const u64* sc,
                                         const u64* scs, u64 log_n, u64 s0, u64 stages,
                                         u64 log_cols, u64 scale) {
    BLOCK_ENTRY;
    // The tile, and the 2^S - 1 twiddles (and Shoup quotients) its S stages use: 48 KB.
    BLOCK_SHARED word tile[NTT_TILE_MAX];
    BLOCK_SHARED word w_s[NTT_TILE_MAX];
    BLOCK_SHARED word ws_s[NTT_TILE_MAX];
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
    const word q = (word)mods[mi * MOD_STRIDE];
    word* x = a + ((u64)l << log_n);
    const word* w = tw + (mi << log_n);
    const word* ws = tws + (mi << log_n);
    // Each thread issues all its global loads (8 words of the tile, then 8 twiddle pairs)
    // before it stores any of them into shared memory: one memory latency per batch instead
    // of one per loop iteration (a loop's loads wait for its stores). For consecutive
    // threads and a fixed j the addresses are consecutive (coalesced).
    const unsigned part = (size + 7) >> 3;
    BLOCK_LOOP(e0, part) {
        word r[8];
        UNROLL
        for (int j = 0; j < 8; j++) {
            const unsigned e = e0 + j * part;
            if (e < size) r[j] = x[gbase + ((u64)(e >> C) << low) + (e & cmask)];
        }
        UNROLL
        for (int j = 0; j < 8; j++) {
            const unsigned e = e0 + j * part;
            if (e < size) tile[e] = r[j];
        }
    }
    // The twiddles, flattened: slot t - 1 (t in [1, 2^S)) holds stage kk = log2(t)'s twiddle
    // of butterfly block hi * 2^kk + (t - 2^kk); each stage's twiddles are consecutive.
    const unsigned tw_count = (1u << S) - 1;
    const unsigned tw_part = ((1u << S) + 7) >> 3;
    BLOCK_LOOP(t0, tw_part) {
        word wa[8], wb[8];
        UNROLL
        for (int j = 0; j < 8; j++) {
            const unsigned t = t0 + j * tw_part + 1;
            const unsigned kk = 31 - __clz((int)t);
            const u64 g = (1ull << (s0 + kk)) + (hi << kk) + (t - (1u << kk));
            if (t <= tw_count) {
                wa[j] = w[g];
                wb[j] = ws[g];
            }
        }
        UNROLL
        for (int j = 0; j < 8; j++) {
            const unsigned t = t0 + j * tw_part + 1;
            if (t <= tw_count) {
                w_s[t - 1] = wa[j];
                ws_s[t - 1] = wb[j];
            }
        }
    }
    BLOCK_BARRIER();
    // Rounds of three stages (the last one or two fewer); the inverse runs them backwards.
    const unsigned rounds = (S + 2) / 3;
    for (unsigned ri = 0; ri < rounds; ri++) {
        const unsigned r = FORWARD ? ri : rounds - 1 - ri;
        const unsigned kk0 = 3 * r;
        const unsigned R = S - kk0 < 3 ? S - kk0 : 3;
        if (R == 3) ntt_round<3, FORWARD>(tile, w_s, ws_s, S, C, kk0, size, q);
        else if (R == 2) ntt_round<2, FORWARD>(tile, w_s, ws_s, S, C, kk0, size, q);
        else ntt_round<1, FORWARD>(tile, w_s, ws_s, S, C, kk0, size, q);
        BLOCK_BARRIER();
    }
    if (scale) {
        // The inverse's last pass: mul_shoup takes the lazy [0, 2q) and returns [0, q).
        const word c = (word)sc[mi], cs = (word)scs[mi];
        BLOCK_LOOP(e, size) {
            x[gbase + ((u64)(e >> C) << low) + (e & cmask)] = mul_shoup(tile[e], c, cs, q);
        }
    } else if (NTT_LAZY && FORWARD && s0 + stages == log_n) {
        // The forward's last pass: [0, 4q) to [0, q).
        const word two_q = q << 1;
        BLOCK_LOOP(e, size) {
            word r = tile[e];
            r = r >= two_q ? r - two_q : r;
            x[gbase + ((u64)(e >> C) << low) + (e & cmask)] = r >= q ? r - q : r;
        }
    } else {
        BLOCK_LOOP(e, size) { x[gbase + ((u64)(e >> C) << low) + (e & cmask)] = tile[e]; }
    }
}

// One pass of the forward transform: one block per (limb, tile), NTT_BLOCK threads.
extern "C" __global__ void __launch_bounds__(256, NTT_MIN_BLOCKS) K(ntt_tile_fwd)(word* a, const word* tw, const word* tws,
                                        const u64* limb_mod, const u64* mods, const u64* sc,
                                        const u64* scs, u64 log_n, u64 s0, u64 stages,
                                        u64 log_cols, u64 scale) {
    ntt_tile<true>(a, tw, tws, limb_mod, mods, sc, scs, log_n, s0, stages, log_cols, scale);
}

// One pass of the inverse transform (the last one run, s0 = 0, with scale = 1).
extern "C" __global__ void __launch_bounds__(256, NTT_MIN_BLOCKS) K(ntt_tile_inv)(word* a, const word* tw, const word* tws,
                                        const u64* limb_mod, const u64* mods, const u64* sc,
                                        const u64* scs, u64 log_n, u64 s0, u64 stages,
                                        u64 log_cols, u64 scale) {
    ntt_tile<false>(a, tw, tws, limb_mod, mods, sc, scs, log_n, s0, stages, log_cols, scale);
}
