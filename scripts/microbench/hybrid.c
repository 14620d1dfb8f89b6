/* Does a scalar butterfly stream overlap the AVX-512F one on the same core? Eight register-
 * resident vector butterfly chains (the reduce-stage form: 60-bit Shoup product from 32 x 32
 * multiplies, x + t, x - t + 4q, min-reduction), alone, then with 4, 8 and 16 scalar
 * butterfly chains (64 x 64 -> 128-bit multiply for the quotient) interleaved in the same
 * loop, and the scalar chains alone: cycles per loop iteration. If the scalar work hid behind
 * the vector work, a transform could hand a share of its butterflies to the scalar units.
 * Build and run (needs AVX-512F/DQ):
 *   gcc -O2 -march=native scripts/microbench/hybrid.c -o /tmp/hy && /tmp/hy
 * docs/benchmarks.md (session 46) reads the Zen 4 output. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define N 4000000L
typedef __m512i V;
static inline V shoup(V y, V w, V ws, V wsh, V q){
  V ysh = _mm512_srli_epi64(y, 32);
  V lh = _mm512_mul_epu32(y, wsh), hl = _mm512_mul_epu32(ysh, ws), hh = _mm512_mul_epu32(ysh, wsh);
  V qh = _mm512_add_epi64(hh, _mm512_add_epi64(_mm512_srli_epi64(lh, 32), _mm512_srli_epi64(hl, 32)));
  return _mm512_sub_epi64(_mm512_mullo_epi64(y, w), _mm512_mullo_epi64(qh, q));
}
static inline uint64_t sshoup(uint64_t y, uint64_t w, uint64_t ws, uint64_t q){
  uint64_t qh = (uint64_t)(((unsigned __int128)y * ws) >> 64);
  return y * w - qh * q;
}
int main(int argc, char** argv){
  int VC = 12, SC = 0;
  long xx = 1; double t0 = now();
  for (long i = 0; i < N * 40; i++) { __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(xx)); }
  double ghz = 4.0 * N * 40 / (now() - t0) / 1e9; printf("clock %.2f GHz\n", ghz);
  uint64_t qv = (1ULL << 59) + 0x2468bULL;
  uint64_t wv = qv / 3, wsv = (uint64_t)(((unsigned __int128)wv << 64) / qv);
  V q = _mm512_set1_epi64(qv), q4 = _mm512_set1_epi64(4*qv), w = _mm512_set1_epi64(wv), ws = _mm512_set1_epi64(wsv), wsh = _mm512_srli_epi64(ws, 32);
  for (int mode = 0; mode < 5; mode++) {
    int nv = (mode == 1) ? 0 : 8, ns = (mode == 0) ? 0 : (mode == 1 ? 16 : (mode == 2 ? 4 : (mode == 3 ? 8 : 16)));
    V x[8], y[8]; uint64_t sx[16], sy[16];
    for (int c = 0; c < 8; c++) { x[c] = _mm512_set1_epi64(1 + c); y[c] = _mm512_set1_epi64(qv - 1 - c); }
    for (int c = 0; c < 16; c++) { sx[c] = 1 + c; sy[c] = qv - 1 - c; }
    t0 = now();
    for (long i = 0; i < N; i++) {
      for (int c = 0; c < nv; c++) { V t = shoup(y[c], w, ws, wsh, q); V nx = _mm512_add_epi64(x[c], t); V ny = _mm512_add_epi64(_mm512_sub_epi64(x[c], t), q4); x[c] = _mm512_min_epu64(ny, _mm512_sub_epi64(ny, q4)); y[c] = nx; }
      for (int c = 0; c < ns; c++) { uint64_t t = sshoup(sy[c], wv, wsv, qv); uint64_t nx = sx[c] + t; uint64_t ny = sx[c] - t + 4*qv; uint64_t r = ny - 4*qv; sx[c] = r < ny ? r : ny; sy[c] = nx; }
      __asm__ volatile("" :: "v"(x[0]), "v"(x[5]), "v"(y[7]), "r"(sx[0]), "r"(sx[1]), "r"(sx[2]), "r"(sx[3]));
    }
    double dt = now() - t0;
    printf("vector chains %d scalar chains %d: %.2f cycles per iteration\n", nv, ns, dt * ghz * 1e9 / N);
  }
}
