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

Every error raised by the Rust layers is a ``tessera.TesseraError`` (a ``ValueError``).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

import json

from ._native import Ciphertext, Context, TesseraError, presets, reproduce_json, simulate_json

__all__ = [
    "Context",
    "Ciphertext",
    "TesseraError",
    "presets",
    "encrypt",
    "decrypt",
    "decrypt_real",
    "simulate",
    "reproduce",
]


def simulate(
    arch: str = "ark",
    workload: str = "hmult",
    params: str = "ark",
    level: Optional[int] = None,
    of_limb: bool = False,
    min_ks: bool = False,
    sets: Optional[list] = None,
    mode: str = "latency",
    warm: bool = False,
    streamed_keyswitch: bool = False,
    additive: bool = False,
    hoisting: bool = True,
) -> dict:
    """Runs a workload on an accelerator model, like ``tessera simulate --json``.

    ``arch`` is a built-in machine (``"ark"``) or a TOML file; ``workload`` one of
    ``bootstrap``, ``hmult``, ``hrot``, ``keyswitch``, ``keyswitch-ext`` (no ModDown),
    ``hadd``, ``pmult``, ``tensor``, ``ntt`` or a tessera-trace file; ``sets`` overrides
    machine values, e.g. ``["chip.clusters=8"]``; ``mode`` is ``latency`` (one task over the machine) or
    ``throughput`` (one task per cluster); ``warm=True`` times the workload with its input
    ciphertexts already on chip and its results left there, as micro-benchmarks time an
    operation (``tessera simulate --warm``); ``streamed_keyswitch=True`` switches keys one
    digit at a time (reed.md Algorithm 3, ``--streamed-keyswitch``); ``additive=True`` adds
    ``additive_s``, the sum of the HE operations' warm times, and ``additive_by_op``, their
    count and seconds by operation (``--additive``; latency mode on vector machines); ``hoisting=False`` records bootstrapping with each baby-step rotation
    doing its own ModUp (``--no-hoisting``). Returns the report
    (``time_s``, ``energy_j``, ``energy_scope``, ``area_mm2``, ``noc_bytes``,
    ``io_noc_bytes``, ``utilization``, ``tasks_per_minute``, ...) as a dict;
    ``energy_scope`` says what the energy covers (``full``, ``data_movement`` or ``none``).

    >>> r = simulate("ark", "hmult", "test-small")
    >>> r["time_s"] > 0
    True
    """
    return json.loads(
        simulate_json(
            arch,
            workload,
            params,
            level,
            of_limb,
            min_ks,
            list(sets or []),
            mode,
            warm,
            streamed_keyswitch,
            additive,
            hoisting,
        )
    )


def reproduce(paper: Optional[str] = None) -> list:
    """The papers' figures next to the model's, like ``tessera reproduce --json``.

    ``paper`` is one of ``ark``, ``cofhee``, ``reed``, ``cifher``, ``h3`` (None: all; ``ark``
    records three N = 2^16 bootstrapping traces and takes about half a minute). Each row has
    ``paper``, ``item``, ``unit``, ``paper_value``, ``model_value``, ``ratio``, ``hit``.

    >>> rows = reproduce("cofhee")
    >>> all(r["hit"] for r in rows if r["tolerance"])
    True
    """
    return json.loads(reproduce_json(paper))


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
