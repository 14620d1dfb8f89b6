/* Register-resident throughput of the 60-bit forward NTT butterfly on AVX-512F, in the forms
 * the kernel could take, and of the same operation mix with no dependencies between the
 * operations: is the AVX-512F butterfly bound by its operation count, by the pipes the
 * operations share, or by its dependency chains?
 *
 * Each butterfly line runs twelve independent butterfly chains (x, y) -> (x + t, x - t + 4q),
 * t the approximate 64-bit Shoup product of `crates/math/src/ntt/x86.rs` (three 32 x 32
 * multiplies for the quotient, two 64-bit low multiplies), and prints cycles per vector
 * butterfly. "keep" is the wide regime's keep stage (14 vector operations); "reduce" first
 * reduces x modulo 8q (16 operations with `vpminuq`), here also by a mask compare, by
 * `vpmovq2m` and by an arithmetic shift. "y_hi by shuffle" forces `vpshufd` where the
 * compiler would shift. The mix lines run the keep butterfly's operations (five multiplies,
 * three shifts, six additions) as fourteen independent register chains. The clock is taken
 * from a chain of dependent scalar adds. Build and run (needs AVX-512F/DQ; gcc or clang):
 *   gcc -O2 -march=native scripts/microbench/butterflies.c -o /tmp/bf && /tmp/bf
 * docs/benchmarks.md (session 45) reads the Zen 4 output. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define N 4000000L
#define C 12
static double ghz;
typedef __m512i V;
/* The approximate Shoup product y * w mod q in [0, 4q): quotient from three 32 x 32 products. */
static inline V shoup(V y, V w, V ws, V wsh, V q, int shuffle){
  V ysh = shuffle ? _mm512_shuffle_epi32(y, 0xb1) : _mm512_srli_epi64(y, 32);
  if (shuffle) __asm__("" : "+v"(ysh)); /* keep the shuffle a shuffle */
  V lh = _mm512_mul_epu32(y, wsh), hl = _mm512_mul_epu32(ysh, ws), hh = _mm512_mul_epu32(ysh, wsh);
  V qh = _mm512_add_epi64(hh, _mm512_add_epi64(_mm512_srli_epi64(lh, 32), _mm512_srli_epi64(hl, 32)));
  return _mm512_sub_epi64(_mm512_mullo_epi64(y, w), _mm512_mullo_epi64(qh, q));
}
/* Twelve chains of BODY, which reads X and Y and defines NX and NY. */
#define RUN(name, BODY) { V x[C], y[C]; \
  for (int c = 0; c < C; c++) { x[c] = _mm512_set1_epi64(1 + c); y[c] = _mm512_set1_epi64(qv - 1 - c); } \
  double t0 = now(); \
  for (long i = 0; i < N; i++) { \
    for (int c = 0; c < C; c++) { V X = x[c], Y = y[c]; BODY; x[c] = NY; y[c] = NX; } \
    __asm__ volatile("" :: "v"(x[0]), "v"(x[5]), "v"(y[11])); } \
  double dt = now() - t0; uint64_t o[8]; V s = x[0]; \
  for (int c = 1; c < C; c++) s = _mm512_add_epi64(s, _mm512_add_epi64(x[c], y[c])); \
  _mm512_storeu_si512(o, s); \
  printf("%-40s %.2f cycles per butterfly (check %02x)\n", name, dt * ghz * 1e9 / (N * (double)C), (unsigned)(o[0] & 0xff)); }
#define CT(X, t) V NX = _mm512_add_epi64(X, t); V NY = _mm512_add_epi64(_mm512_sub_epi64(X, t), q4)
/* Independent chains: m* multiply, s* shift, d* add; each depends only on its own last value. */
#define M(v) v = _mm512_mul_epu32(v, b)
#define L(v) v = _mm512_mullo_epi64(v, b)
#define S(v) v = _mm512_srli_epi64(v, 1)
#define A(v) v = _mm512_add_epi64(v, b)
#define PIN(v) __asm__ volatile("" : "+v"(v))
#define MIX(name, BODY) { V m0=b,m1=b,m2=b,m3=b,m4=b,s0=b,s1=b,s2=b,d0=b,d1=b,d2=b,d3=b,d4=b,d5=b; double t0 = now(); \
  for (long i = 0; i < 5 * N; i++) { BODY; PIN(m0);PIN(m1);PIN(m2);PIN(m3);PIN(m4);PIN(s0);PIN(s1);PIN(s2);PIN(d0);PIN(d1);PIN(d2);PIN(d3);PIN(d4);PIN(d5); } \
  printf("%-40s %.2f cycles per iteration\n", name, (now() - t0) * ghz * 1e9 / (5 * N)); }
int main(void){
  long xx = 1; double t0 = now();
  for (long i = 0; i < N * 40; i++) { __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(xx)); }
  ghz = 4.0 * N * 40 / (now() - t0) / 1e9; printf("clock %.2f GHz\n", ghz);
  uint64_t qv = (1ULL << 59) + 0x2468bULL; /* a 60-bit odd modulus: the timing does not need a prime */
  uint64_t wv = qv / 3, wsv = (uint64_t)(((unsigned __int128)wv << 64) / qv);
  V q = _mm512_set1_epi64(qv), w = _mm512_set1_epi64(wv), ws = _mm512_set1_epi64(wsv);
  V wsh = _mm512_set1_epi64(wsv >> 32), q4 = _mm512_set1_epi64(4 * qv), q8 = _mm512_set1_epi64(8 * qv);
  for (int round = 0; round < 2; round++) {
    RUN("keep (14 operations)", V t = shoup(Y, w, ws, wsh, q, 0); CT(X, t));
    RUN("keep, y_hi by shuffle", V t = shoup(Y, w, ws, wsh, q, 1); CT(X, t));
    RUN("reduce by vpminuq (16 operations)", X = _mm512_min_epu64(X, _mm512_sub_epi64(X, q8)); V t = shoup(Y, w, ws, wsh, q, 0); CT(X, t));
    RUN("reduce by vpminuq, y_hi by shuffle", X = _mm512_min_epu64(X, _mm512_sub_epi64(X, q8)); V t = shoup(Y, w, ws, wsh, q, 1); CT(X, t));
    RUN("reduce by vpcmpuq + masked vpsubq", __mmask8 k = _mm512_cmpge_epu64_mask(X, q8); X = _mm512_mask_sub_epi64(X, k, X, q8); V t = shoup(Y, w, ws, wsh, q, 0); CT(X, t));
    RUN("reduce by vpmovq2m + masked vpaddq", V d = _mm512_sub_epi64(X, q8); __mmask8 k = _mm512_movepi64_mask(d); X = _mm512_mask_add_epi64(d, k, d, q8); V t = shoup(Y, w, ws, wsh, q, 0); CT(X, t));
    RUN("reduce by vpsraq + vpandq + vpaddq", V d = _mm512_sub_epi64(X, q8); X = _mm512_add_epi64(d, _mm512_and_si512(_mm512_srai_epi64(d, 63), q8)); V t = shoup(Y, w, ws, wsh, q, 0); CT(X, t));
  }
  V b = _mm512_set1_epi64(12345);
  MIX("mix: 5 multiplies", M(m0);M(m1);M(m2);M(m3);M(m4));
  MIX("mix: 6 additions", A(d0);A(d1);A(d2);A(d3);A(d4);A(d5));
  MIX("mix: 5 multiplies, 3 shifts", M(m0);M(m1);M(m2);M(m3);M(m4);S(s0);S(s1);S(s2));
  MIX("mix: 5 multiplies, 6 additions", M(m0);M(m1);M(m2);M(m3);M(m4);A(d0);A(d1);A(d2);A(d3);A(d4);A(d5));
  MIX("mix: 3 shifts, 6 additions", S(s0);S(s1);S(s2);A(d0);A(d1);A(d2);A(d3);A(d4);A(d5));
  MIX("mix: keep's 14 (3+2 mul, 3 shift, 6 add)", M(m0);M(m1);M(m2);L(m3);L(m4);S(s0);S(s1);S(s2);A(d0);A(d1);A(d2);A(d3);A(d4);A(d5));
  return 0;
}
