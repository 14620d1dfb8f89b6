/* Throughput of single 512-bit integer operations and of pairs of them on this core: which
 * operations share execution pipes. Each line runs twelve independent chains of the expression
 * (register-resident, no memory) and prints cycles per expression, with the clock taken from a
 * chain of dependent scalar adds (one per cycle). Two operations that share no pipe run a pair
 * in the time of the slower one; two that share a pipe pair take the sum. (Pairs of the same
 * operation that the compiler folds into one, min after min and add after add, are left out.)
 * Build and run (needs AVX-512F/DQ and IFMA; gcc or clang):
 *   gcc -O2 -march=native scripts/microbench/pipes.c -o /tmp/pipes && /tmp/pipes
 * docs/benchmarks.md (session 44) reads the Zen 4 output. */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define N 20000000L
static double ghz;
#define DECL __m512i a0=_mm512_set1_epi64(3),a1=_mm512_set1_epi64(5),a2=_mm512_set1_epi64(7),a3=_mm512_set1_epi64(9),a4=_mm512_set1_epi64(11),a5=_mm512_set1_epi64(13),a6=_mm512_set1_epi64(15),a7=_mm512_set1_epi64(17),a8=a0,a9=a1,a10=a2,a11=a3; __m512i b=_mm512_set1_epi64(12345);
#define BENCH(name, OP) { DECL double t0=now(); for(long i=0;i<N;i++){ \
 {__m512i a=a0; a0=OP;} {__m512i a=a1; a1=OP;} {__m512i a=a2; a2=OP;} {__m512i a=a3; a3=OP;} {__m512i a=a4; a4=OP;} {__m512i a=a5; a5=OP;} {__m512i a=a6; a6=OP;} {__m512i a=a7; a7=OP;} {__m512i a=a8; a8=OP;} {__m512i a=a9; a9=OP;} {__m512i a=a10; a10=OP;} {__m512i a=a11; a11=OP;}\
 __asm__ volatile("":"+v"(a0),"+v"(a1),"+v"(a2),"+v"(a3),"+v"(a4),"+v"(a5),"+v"(a6),"+v"(a7),"+v"(a8),"+v"(a9),"+v"(a10),"+v"(a11)); } \
 double dt=now()-t0; printf("%-22s %.2f\n", name, dt*ghz*1e9/(N*12.0)); }
#define DECL256 __m256i a0=_mm256_set1_epi64x(3),a1=_mm256_set1_epi64x(5),a2=_mm256_set1_epi64x(7),a3=_mm256_set1_epi64x(9),a4=_mm256_set1_epi64x(11),a5=_mm256_set1_epi64x(13),a6=_mm256_set1_epi64x(15),a7=_mm256_set1_epi64x(17),a8=a0,a9=a1,a10=a2,a11=a3; __m256i b=_mm256_set1_epi64x(12345);
#define BENCH256(name, OP) { DECL256 double t0=now(); for(long i=0;i<N;i++){ \
 {__m256i a=a0; a0=OP;} {__m256i a=a1; a1=OP;} {__m256i a=a2; a2=OP;} {__m256i a=a3; a3=OP;} {__m256i a=a4; a4=OP;} {__m256i a=a5; a5=OP;} {__m256i a=a6; a6=OP;} {__m256i a=a7; a7=OP;} {__m256i a=a8; a8=OP;} {__m256i a=a9; a9=OP;} {__m256i a=a10; a10=OP;} {__m256i a=a11; a11=OP;}\
 __asm__ volatile("":"+v"(a0),"+v"(a1),"+v"(a2),"+v"(a3),"+v"(a4),"+v"(a5),"+v"(a6),"+v"(a7),"+v"(a8),"+v"(a9),"+v"(a10),"+v"(a11)); } \
 double dt=now()-t0; printf("%-22s %.2f\n", name, dt*ghz*1e9/(N*12.0)); }
int main(void){
  long x=1; double t0=now();
  for(long i=0;i<N*4;i++){ __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0":"+r"(x)); }
  double dt=now()-t0; ghz=4.0*N*4/dt/1e9; printf("clock %.2f GHz; cycles per expression:\n", ghz);
  BENCH("mul_epu32", _mm512_mul_epu32(a,b));
  BENCH("mullo_epi64", _mm512_mullo_epi64(a,b));
  BENCH("madd52hi", _mm512_madd52hi_epu64(a,b,b));
  BENCH("min_epu64", _mm512_min_epu64(a,b));
  BENCH("add_epi64", _mm512_add_epi64(a,b));
  BENCH("srli_epi64", _mm512_srli_epi64(a,32));
  BENCH("shuffle_epi32", _mm512_shuffle_epi32(a,0xb1));
  BENCH("unpacklo_epi64", _mm512_unpacklo_epi64(a,b));
  BENCH("permutex2var_epi64", _mm512_permutex2var_epi64(a,b,b));
  BENCH("shuffle_i64x2", _mm512_shuffle_i64x2(a,b,0x44));
  BENCH("mul_epu32 + mul", _mm512_mul_epu32(_mm512_mul_epu32(a,b),b));
  BENCH("mul_epu32 + min", _mm512_min_epu64(_mm512_mul_epu32(a,b),b));
  BENCH("mul_epu32 + srl", _mm512_srli_epi64(_mm512_mul_epu32(a,b),1));
  BENCH("mul_epu32 + add", _mm512_add_epi64(_mm512_mul_epu32(a,b),b));
  BENCH("mullo_epi64 + mul", _mm512_mul_epu32(_mm512_mullo_epi64(a,b),b));
  BENCH("mullo_epi64 + min", _mm512_min_epu64(_mm512_mullo_epi64(a,b),b));
  BENCH("mullo_epi64 + srl", _mm512_srli_epi64(_mm512_mullo_epi64(a,b),1));
  BENCH("mullo_epi64 + add", _mm512_add_epi64(_mm512_mullo_epi64(a,b),b));
  BENCH("madd52hi + mul", _mm512_mul_epu32(_mm512_madd52hi_epu64(a,b,b),b));
  BENCH("madd52hi + min", _mm512_min_epu64(_mm512_madd52hi_epu64(a,b,b),b));
  BENCH("madd52hi + srl", _mm512_srli_epi64(_mm512_madd52hi_epu64(a,b,b),1));
  BENCH("madd52hi + add", _mm512_add_epi64(_mm512_madd52hi_epu64(a,b,b),b));
  BENCH("min_epu64 + mul", _mm512_mul_epu32(_mm512_min_epu64(a,b),b));
  BENCH("min_epu64 + srl", _mm512_srli_epi64(_mm512_min_epu64(a,b),1));
  BENCH("min_epu64 + add", _mm512_add_epi64(_mm512_min_epu64(a,b),b));
  BENCH("add_epi64 + mul", _mm512_mul_epu32(_mm512_add_epi64(a,b),b));
  BENCH("add_epi64 + min", _mm512_min_epu64(_mm512_add_epi64(a,b),b));
  BENCH("add_epi64 + srl", _mm512_srli_epi64(_mm512_add_epi64(a,b),1));
  BENCH("srli_epi64 + mul", _mm512_mul_epu32(_mm512_srli_epi64(a,32),b));
  BENCH("srli_epi64 + min", _mm512_min_epu64(_mm512_srli_epi64(a,32),b));
  BENCH("srli_epi64 + srl", _mm512_srli_epi64(_mm512_srli_epi64(a,32),1));
  BENCH("srli_epi64 + add", _mm512_add_epi64(_mm512_srli_epi64(a,32),b));
  BENCH("shuffle_epi32 + mul", _mm512_mul_epu32(_mm512_shuffle_epi32(a,0xb1),b));
  BENCH("shuffle_epi32 + min", _mm512_min_epu64(_mm512_shuffle_epi32(a,0xb1),b));
  BENCH("shuffle_epi32 + srl", _mm512_srli_epi64(_mm512_shuffle_epi32(a,0xb1),1));
  BENCH("shuffle_epi32 + add", _mm512_add_epi64(_mm512_shuffle_epi32(a,0xb1),b));
  BENCH("unpacklo_epi64 + mul", _mm512_mul_epu32(_mm512_unpacklo_epi64(a,b),b));
  BENCH("unpacklo_epi64 + min", _mm512_min_epu64(_mm512_unpacklo_epi64(a,b),b));
  BENCH("unpacklo_epi64 + srl", _mm512_srli_epi64(_mm512_unpacklo_epi64(a,b),1));
  BENCH("unpacklo_epi64 + add", _mm512_add_epi64(_mm512_unpacklo_epi64(a,b),b));
  BENCH("permutex2var_epi64 + mul", _mm512_mul_epu32(_mm512_permutex2var_epi64(a,b,b),b));
  BENCH("permutex2var_epi64 + min", _mm512_min_epu64(_mm512_permutex2var_epi64(a,b,b),b));
  BENCH("permutex2var_epi64 + srl", _mm512_srli_epi64(_mm512_permutex2var_epi64(a,b,b),1));
  BENCH("permutex2var_epi64 + add", _mm512_add_epi64(_mm512_permutex2var_epi64(a,b,b),b));
  BENCH("shuffle_i64x2 + mul", _mm512_mul_epu32(_mm512_shuffle_i64x2(a,b,0x44),b));
  BENCH("shuffle_i64x2 + min", _mm512_min_epu64(_mm512_shuffle_i64x2(a,b,0x44),b));
  BENCH("shuffle_i64x2 + srl", _mm512_srli_epi64(_mm512_shuffle_i64x2(a,b,0x44),1));
  BENCH("shuffle_i64x2 + add", _mm512_add_epi64(_mm512_shuffle_i64x2(a,b,0x44),b));
  printf("256-bit (AVX2) operations:\n");
  BENCH256("ymm mul_epu32", _mm256_mul_epu32(a,b));
  BENCH256("ymm mullo_epi32", _mm256_mullo_epi32(a,b));
  BENCH256("ymm add_epi64", _mm256_add_epi64(a,b));
  BENCH256("ymm srli_epi64", _mm256_srli_epi64(a,32));
  BENCH256("ymm blendv_pd", _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(a),_mm256_castsi256_pd(b),_mm256_castsi256_pd(a))));
  BENCH256("ymm cmpgt_epi64", _mm256_cmpgt_epi64(a,b));
  BENCH256("ymm fmadd_pd", _mm256_castpd_si256(_mm256_fmadd_pd(_mm256_castsi256_pd(a),_mm256_castsi256_pd(b),_mm256_castsi256_pd(b))));
  BENCH256("ymm mullo_epi32 + mul", _mm256_mul_epu32(_mm256_mullo_epi32(a,b),b));
  BENCH256("ymm add_epi64 + mul", _mm256_mul_epu32(_mm256_add_epi64(a,b),b));
  BENCH256("ymm srli_epi64 + mul", _mm256_mul_epu32(_mm256_srli_epi64(a,32),b));
  BENCH256("ymm blendv_pd + mul", _mm256_mul_epu32(_mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(a),_mm256_castsi256_pd(b),_mm256_castsi256_pd(a))),b));
  BENCH256("ymm cmpgt_epi64 + mul", _mm256_mul_epu32(_mm256_cmpgt_epi64(a,b),b));
  BENCH256("ymm fmadd_pd + mul", _mm256_mul_epu32(_mm256_castpd_si256(_mm256_fmadd_pd(_mm256_castsi256_pd(a),_mm256_castsi256_pd(b),_mm256_castsi256_pd(b))),b));
  return 0;
}
