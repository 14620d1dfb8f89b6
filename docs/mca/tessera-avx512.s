# Tessera forward NTT, AVX-512F 64-bit Shoup butterfly (wide stage, 8 lanes: 8 butterflies per iteration)
# Extracted from tessera_math::ntt::x86::forward_avx512 (ntt_kernels example, 60-bit prime) (perf annotate of the hottest innermost loop, branches removed),
# session 48, commit fa5c193 kernels. Run by scripts/mca-ntt.sh.
vmovdqu64 0x0(%r13,%r8,1),%zmm6
cmp    %r8,%r12
vmovdqu64 0x4(%r13,%r8,1),%zmm7
vmovdqu64 0x0(%r13,%r10,8),%zmm8
vpmuludq %zmm5,%zmm6,%zmm9
vpmuludq %zmm4,%zmm7,%zmm10
vpmuludq %zmm5,%zmm7,%zmm7
vpsrlq $0x20,%zmm9,%zmm9
vpaddq %zmm9,%zmm7,%zmm7
vpsrlq $0x20,%zmm10,%zmm9
vpaddq %zmm9,%zmm7,%zmm7
vpmullq %zmm3,%zmm6,%zmm6
vpmullq %zmm0,%zmm7,%zmm7
vpsubq %zmm7,%zmm6,%zmm6
vpaddq %zmm8,%zmm6,%zmm7
vpaddq %zmm1,%zmm8,%zmm8
vpsubq %zmm6,%zmm8,%zmm6
vmovdqu64 %zmm7,0x0(%r13,%r10,8)
vmovdqu64 %zmm6,0x0(%r13,%r8,1)
add    $0x8,%r10
add    $0x40,%r8
cmp    %r14,%r10
