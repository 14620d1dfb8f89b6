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
/* Twelve independent chains of vector type T (splat: T's broadcast of a 64-bit integer). */
#define BENCH_T(T, splat, name, OP) { T a0=splat(3),a1=splat(5),a2=splat(7),a3=splat(9),a4=splat(11),a5=splat(13),a6=splat(15),a7=splat(17),a8=a0,a9=a1,a10=a2,a11=a3; T b=splat(12345); \
 double t0=now(); for(long i=0;i<N;i++){ \
 {T a=a0; a0=OP;} {T a=a1; a1=OP;} {T a=a2; a2=OP;} {T a=a3; a3=OP;} {T a=a4; a4=OP;} {T a=a5; a5=OP;} {T a=a6; a6=OP;} {T a=a7; a7=OP;} {T a=a8; a8=OP;} {T a=a9; a9=OP;} {T a=a10; a10=OP;} {T a=a11; a11=OP;}\
 __asm__ volatile("":"+v"(a0),"+v"(a1),"+v"(a2),"+v"(a3),"+v"(a4),"+v"(a5),"+v"(a6),"+v"(a7),"+v"(a8),"+v"(a9),"+v"(a10),"+v"(a11)); } \
 double dt=now()-t0; printf("%-22s %.2f\n", name, dt*ghz*1e9/(N*12.0)); }
#define BENCH(name, OP) BENCH_T(__m512i, _mm512_set1_epi64, name, OP)
/* OP alone followed by each partner: a multiply, an unsigned minimum, a shift, an addition. */
#define PAIRS(name, OP) BENCH(name " + mul", _mm512_mul_epu32(OP,b)); BENCH(name " + min", _mm512_min_epu64(OP,b)); \
 BENCH(name " + srl", _mm512_srli_epi64(OP,1)); BENCH(name " + add", _mm512_add_epi64(OP,b))
#define BENCH256(name, OP) BENCH_T(__m256i, _mm256_set1_epi64x, name, OP)
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
  PAIRS("mul_epu32", _mm512_mul_epu32(a,b));
  PAIRS("mullo_epi64", _mm512_mullo_epi64(a,b));
  PAIRS("madd52hi", _mm512_madd52hi_epu64(a,b,b));
  BENCH("min_epu64 + mul", _mm512_mul_epu32(_mm512_min_epu64(a,b),b));
  BENCH("min_epu64 + srl", _mm512_srli_epi64(_mm512_min_epu64(a,b),1));
  BENCH("min_epu64 + add", _mm512_add_epi64(_mm512_min_epu64(a,b),b));
  BENCH("add_epi64 + mul", _mm512_mul_epu32(_mm512_add_epi64(a,b),b));
  BENCH("add_epi64 + min", _mm512_min_epu64(_mm512_add_epi64(a,b),b));
  BENCH("add_epi64 + srl", _mm512_srli_epi64(_mm512_add_epi64(a,b),1));
  PAIRS("srli_epi64", _mm512_srli_epi64(a,32));
  PAIRS("shuffle_epi32", _mm512_shuffle_epi32(a,0xb1));
  PAIRS("unpacklo_epi64", _mm512_unpacklo_epi64(a,b));
  PAIRS("permutex2var_epi64", _mm512_permutex2var_epi64(a,b,b));
  PAIRS("shuffle_i64x2", _mm512_shuffle_i64x2(a,b,0x44));
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
