# Tessera forward NTT, AVX-512 IFMA quotient for 60-bit primes (wide stage, 8 butterflies per iteration)
# Extracted from tessera_math::ntt::x86::forward_ifma64 (perf annotate of the hottest innermost loop, branches removed),
# session 48, commit fa5c193 kernels. Run by scripts/mca-ntt.sh.
vmovdqu64 (%r12,%rbp,8),%zmm6
vmovdqu64 (%rbx,%rbp,8),%zmm7
vpsrlq $0x34,%zmm7,%zmm8
vpmullq %zmm4,%zmm8,%zmm9
vpmadd52huq %zmm4,%zmm7,%zmm9
vpmadd52huq %zmm5,%zmm8,%zmm9
vpmullq %zmm3,%zmm7,%zmm7
vpmullq %zmm0,%zmm9,%zmm8
vpsubq %zmm8,%zmm7,%zmm7
vpaddq %zmm6,%zmm7,%zmm8
vpaddq %zmm1,%zmm6,%zmm6
vpsubq %zmm7,%zmm6,%zmm6
vmovdqu64 %zmm8,(%r12,%rbp,8)
vmovdqu64 %zmm6,(%rbx,%rbp,8)
add    $0x8,%rbp
cmp    %r14,%rbp
