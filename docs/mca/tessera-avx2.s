# Tessera forward NTT, AVX2 64-bit Shoup butterfly (wide stage, 4 lanes: 4 butterflies per iteration)
# Extracted from tessera_math::ntt::x86::forward_avx2 (ntt_median bench, 60-bit prime) (perf annotate of the hottest innermost loop, branches removed),
# session 48, commit fa5c193 kernels. Run by scripts/mca-ntt.sh.
vpshufd $0xb1,%ymm10,%ymm12
vpsubq %ymm2,%ymm11,%ymm13
vblendvpd %ymm13,%ymm11,%ymm13,%ymm11
vpmuludq %ymm8,%ymm10,%ymm13
vpmuludq %ymm7,%ymm12,%ymm14
vpmuludq %ymm8,%ymm12,%ymm12
vpsrlq $0x20,%ymm13,%ymm13
vpaddq %ymm13,%ymm12,%ymm12
vpsrlq $0x20,%ymm14,%ymm13
vpaddq %ymm13,%ymm12,%ymm12
vpmuludq %ymm6,%ymm10,%ymm13
vpmuludq %ymm0,%ymm12,%ymm14
vpsubq %ymm14,%ymm13,%ymm13
vpmulld %ymm9,%ymm10,%ymm10
vpmulld %ymm12,%ymm3,%ymm12
vpsubd %ymm12,%ymm10,%ymm10
vpsrlq $0x20,%ymm10,%ymm12
vpaddd %ymm12,%ymm10,%ymm10
vpsllq $0x20,%ymm10,%ymm10
vpaddq %ymm13,%ymm10,%ymm10
vpaddq %ymm11,%ymm10,%ymm12
vpaddq %ymm1,%ymm11,%ymm11
vpsubq %ymm10,%ymm11,%ymm10
vmovdqu %ymm12,(%r8,%r11,8)
vmovdqu %ymm10,(%r8,%r10,1)
add    $0x4,%r11
add    $0x20,%r10
cmp    %rbx,%r11
vmovdqu (%r8,%r11,8),%ymm11
vmovdqu (%r8,%r10,1),%ymm10
cmp    %r10,%r14
