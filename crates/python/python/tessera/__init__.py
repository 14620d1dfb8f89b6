"""Tessera: RNS-CKKS homomorphic encryption.

Example::

    import numpy as np
    import tessera

    ctx = tessera.Context("test-medium")   # insecure test set; use "ark", "lattigo", ...
    ctx.keygen(rotations=[1], conjugation=True)
    x = np.array([0.5, -0.25, 1.0, 2.0])
    a = tessera.encrypt(ctx, x)
    sq = a * a                             # relinearised and rescaled: one level lower
    y = tessera.decrypt_real(ctx, sq.rotate(1))
    assert np.allclose(y, np.roll(x * x, -1), atol=1e-3)

Operands of ``+`` and ``-`` must be at the same level and scale (``drop_levels`` lowers one).

Every error raised by the Rust layers is a ``tessera.TesseraError`` (a ``ValueError``).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ._native import Ciphertext, Context, TesseraError, presets

__all__ = ["Context", "Ciphertext", "TesseraError", "presets", "encrypt", "decrypt", "decrypt_real"]


def encrypt(
    ctx: Context, values: np.ndarray, level: Optional[int] = None, scale: Optional[float] = None
) -> Ciphertext:
    """Encrypts a 1-D array of real or complex numbers (at most ``ctx.max_slots`` of them)."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise TesseraError(f"values must be a 1-D array, got shape {arr.shape}")
    if not (np.issubdtype(arr.dtype, np.number)):
        raise TesseraError(f"values must be numbers, got dtype {arr.dtype}")
    return ctx.encrypt([complex(v) for v in arr.astype(np.complex128)], level, scale)


def decrypt(ctx: Context, ct: Ciphertext) -> np.ndarray:
    """Decrypts to a complex array with one entry per slot."""
    return np.asarray(ctx.decrypt(ct), dtype=np.complex128)


def decrypt_real(ctx: Context, ct: Ciphertext) -> np.ndarray:
    """Decrypts and keeps the real parts."""
    return decrypt(ctx, ct).real
