"""Issue 23 item 3 from Python: Context(backend=...) chooses the compute backend; an unknown
name lists the allowed values; "cuda" without CUDA support is a TesseraError, not a crash."""

import numpy as np
import pytest

import tessera


def test_cpu_backend_computes_and_is_reported():
    ctx = tessera.Context("test-small", backend="cpu")
    assert ctx.backend == "cpu"
    ctx.keygen()
    x = np.array([0.5, -0.25, 1.0])
    y = tessera.decrypt_real(ctx, tessera.encrypt(ctx, x) * tessera.encrypt(ctx, x))
    assert np.allclose(y[:3], x * x, atol=1e-3)
    # The default is the process's choice (the CPU unless TESSERA_BACKEND says otherwise).
    assert tessera.Context("test-small").backend in ("cpu", "cuda")


def test_unknown_backend_lists_the_allowed_values():
    with pytest.raises(tessera.TesseraError, match="cpu, cuda"):
        tessera.Context("test-small", backend="gpu")


def test_cuda_without_support_is_a_clear_error():
    try:
        ctx = tessera.Context("test-small", backend="cuda")
    except tessera.TesseraError as e:
        assert "not supported" in str(e)
        return
    # Only a build with CUDA on a machine with a GPU gets here.
    assert ctx.backend == "cuda"


def test_word_size_follows_the_primes(monkeypatch):
    # test-small has primes above 2^30: 64-bit words.
    assert tessera.Context("test-small", backend="cpu").word_bits == 64
    # w32-boot's primes are all below 2^30: 32-bit words where the CPU's kernel runs them
    # faster (AVX2, AVX-512), 64 on the scalar kernel; TESSERA_WORD overrides either way.
    assert tessera.Context("w32-boot", backend="cpu").word_bits in (32, 64)
    monkeypatch.setenv("TESSERA_WORD", "64")
    assert tessera.Context("w32-boot", backend="cpu").word_bits == 64
    monkeypatch.setenv("TESSERA_WORD", "32")
    assert tessera.Context("w32-boot", backend="cpu").word_bits == 32
    with pytest.raises(tessera.TesseraError, match="not below 2\\^30"):
        tessera.Context("test-small", backend="cpu")
