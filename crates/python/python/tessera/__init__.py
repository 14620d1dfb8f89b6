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

Bootstrapping runs on the parameter sets that have a circuit (``ark-boot``, ``lattigo-boot``,
``h3-boot``, ``reed-boot``, ``cifher-boot``; ``test-boot`` for quick trials)::

    ctx = tessera.Context("test-boot")      # N = 2^10, insecure; "ark-boot" for real use
    ctx.keygen(bootstrapping=True, bootstrap_slots=8)
    a = tessera.encrypt(ctx, np.linspace(-1, 1, 8), level=0)
    b = a.bootstrap()                       # b.level == 4: levels to spare again
    assert np.allclose(tessera.decrypt_real(ctx, b), np.linspace(-1, 1, 8), atol=1e-4)

Ciphertexts, plaintexts, keys, contexts, traces and simulator reports pickle; keys also
save to files (``ctx.save_keys(path)``, ``ctx.load_keys(path)``). The circuits
(``Polynomial``, ``LinearTransform`` and ``matrix @ ct``, ``Sign``), the programs
(``tessera.programs.run``) and the simulator (``simulate``, ``Machine``, ``sweep``,
``reproduce``) are in this package too; docs/python.md is the tutorial.

Every error raised by the Rust layers is a ``tessera.TesseraError`` (a ``ValueError``).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import programs
from ._native import (
    Ciphertext,
    Context,
    LinearTransform,
    Plaintext,
    Polynomial,
    Sign,
    TesseraError,
    presets,
)
from .sim import (
    Machine,
    Report,
    Row,
    Sweep,
    SweepError,
    Trace,
    machines,
    record,
    reproduce,
    simulate,
    sweep,
)

__all__ = [
    "Context",
    "Ciphertext",
    "Plaintext",
    "Polynomial",
    "LinearTransform",
    "Sign",
    "TesseraError",
    "presets",
    "encrypt",
    "encode",
    "decrypt",
    "decrypt_real",
    "simulate",
    "record",
    "reproduce",
    "sweep",
    "machines",
    "Machine",
    "Report",
    "Row",
    "Sweep",
    "SweepError",
    "Trace",
    "programs",
    "KeySet",
]


class KeySet:
    """A context's key set as a value: picklable, and bytes via :meth:`to_bytes` /
    :meth:`from_bytes` (format v3 objects in a ``TSKB`` container). ``KeySet.of(ctx,
    secret=False)`` leaves the secret key out, for a party that only evaluates.

    >>> ctx = Context("test-small"); ctx.keygen(seed=bytes(32))
    >>> other = Context("test-small"); KeySet.of(ctx).load_into(other)
    >>> other.key_set == ctx.key_set
    True
    """

    def __init__(self, params: str, data: bytes) -> None:
        self.params = params
        self.data = bytes(data)

    @classmethod
    def of(cls, ctx: Context, secret: bool = True) -> "KeySet":
        """The keys of ``ctx`` (with the secret key unless ``secret=False``)."""
        return cls(ctx.params, ctx.keys_to_bytes(secret))

    def load_into(self, ctx: Context) -> None:
        """Makes these the keys of ``ctx`` (a context of the same parameters)."""
        ctx.keys_from_bytes(self.data)

    def to_bytes(self) -> bytes:
        """The key set's bytes (what ``Context.save_keys`` writes)."""
        return self.data

    @classmethod
    def from_bytes(cls, params: str, data: bytes) -> "KeySet":
        """A key set from :meth:`to_bytes` for the parameter set named ``params``."""
        return cls(params, data)

    def __repr__(self) -> str:
        return f"KeySet('{self.params}', {len(self.data)} bytes)"


def _values(ctx: Context, values: np.ndarray) -> list:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise TesseraError(f"values must be a 1-D array, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.number):
        raise TesseraError(f"values must be numbers, got dtype {arr.dtype}")
    if arr.size > ctx.max_slots:
        raise TesseraError(
            f"values has {arr.size} entries, more than the {ctx.max_slots} slots of "
            f"'{ctx.params}' (N/2): at most {ctx.max_slots} fit in one ciphertext"
        )
    return arr.astype(np.complex128).tolist()


def encrypt(
    ctx: Context, values: np.ndarray, level: Optional[int] = None, scale: Optional[float] = None
) -> Ciphertext:
    """Encrypts a 1-D array of real or complex numbers (at most ``ctx.max_slots`` of them)
    into the smallest power-of-two number of slots that holds them."""
    return ctx.encrypt(_values(ctx, values), level, scale)


def encode(
    ctx: Context, values: np.ndarray, level: Optional[int] = None, scale: Optional[float] = None
) -> Plaintext:
    """Encodes a 1-D array of real or complex numbers into a :class:`Plaintext` (for
    ``ct * pt`` and ``ct + pt``)."""
    return ctx.encode(_values(ctx, values), level, scale)


def decrypt(ctx: Context, ct: Ciphertext) -> np.ndarray:
    """Decrypts to a complex array with one entry per slot."""
    return np.asarray(ctx.decrypt(ct), dtype=np.complex128)


def decrypt_real(ctx: Context, ct: Ciphertext) -> np.ndarray:
    """Decrypts and keeps the real parts."""
    return decrypt(ctx, ct).real
