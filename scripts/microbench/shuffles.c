/* Throughput of single AVX-512 operations on 512-bit registers: the shuffles the NTT's narrow
 * pass could use (two-source permute, 128-bit lane shuffle, 256-bit insert, in-lane unpack,
 * immediate and variable qword permutes, align), and a shift, an addition and a 32 x 32
 * multiply for scale. Eight independent chains per operation, so latency is hidden and the
 * figure is cycles per operation at the measured clock. Build and run (needs AVX-512F):
 *   gcc -O2 -march=native scripts/microbench/shuffles.c -o /tmp/sh && /tmp/sh
 * docs/benchmarks.md (session 46) reads the Zen 4 output. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define N 20000000L
#define PIN(v) __asm__ volatile("" : "+v"(v))
#define T(name, OP) { V a0=b,a1=b,a2=b,a3=b,a4=b,a5=b,a6=b,a7=b; double t0=now(); \
  for (long i=0;i<N;i++){ OP(a0);OP(a1);OP(a2);OP(a3);OP(a4);OP(a5);OP(a6);OP(a7); PIN(a0);PIN(a1);PIN(a2);PIN(a3);PIN(a4);PIN(a5);PIN(a6);PIN(a7);} \
  printf("%-28s %.2f cycles per op\n", name, (now()-t0)*ghz*1e9/(8.0*N)); }
typedef __m512i V;
int main(){
  long xx=1; double t0=now();
  for (long i=0;i<N*4;i++){ __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0":"+r"(xx)); }
  double ghz=4.0*N*4/(now()-t0)/1e9; printf("clock %.2f GHz\n", ghz);
  V b=_mm512_set_epi64(7,6,5,4,3,2,1,0), c=_mm512_set_epi64(15,14,13,12,11,10,9,8), idx=_mm512_set_epi64(14,6,12,4,10,2,8,0);
  PIN(c); PIN(idx);
#define P2(v) v=_mm512_permutex2var_epi64(v, idx, c)
#define SH(v) v=_mm512_shuffle_i64x2(v, c, 0x44)
#define INS(v) v=_mm512_inserti64x4(v, _mm512_castsi512_si256(c), 1)
#define UNP(v) v=_mm512_unpacklo_epi64(v, c)
#define PQ(v) v=_mm512_permutex_epi64(v, 0x4e)
#define AL(v) v=_mm512_alignr_epi64(v, c, 2)
#define SD(v) v=_mm512_shuffle_epi32(v, 0xb1)
#define SR(v) v=_mm512_srli_epi64(v, 32)
#define ADD(v) v=_mm512_add_epi64(v, c)
#define MUL(v) v=_mm512_mul_epu32(v, c)
#define P1(v) v=_mm512_permutexvar_epi64(idx, v)
  T("vpermt2q", P2); T("vshufi64x2", SH); T("vinserti64x4", INS); T("vpunpcklqdq", UNP);
  T("vpermq imm", PQ); T("vpermq var", P1); T("valignq", AL); T("vpshufd", SD); T("vpsrlq", SR); T("vpaddq", ADD); T("vpmuludq", MUL);
  return (int)xx;
}
