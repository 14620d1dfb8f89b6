"""The papers' applications as functions: ``tessera.programs.run("helr", size=..., params=...)``
computes a program encrypted on the CPU, decrypts it, checks it against its plaintext replica
and returns a :class:`ProgramResult` (the same run as ``tessera run``; docs/programs.md)."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional

from . import _native
from ._progress import Progress

__all__ = ["Check", "ProgramResult", "names", "run"]


def names() -> List[str]:
    """The programs :func:`run` knows (``helr``, ``lola``, ``logreg``)."""
    return list(_native._program_names())


class Check:
    """One check of a program against its replica: ``name``, ``value``, ``bound`` (text such
    as ``"<= 0.001"``, None for information) and ``passed``."""

    def __init__(self, d: Dict[str, Any]) -> None:
        self.name: str = d["name"]
        self.value: float = d["value"]
        self.bound: Optional[str] = d.get("bound")
        self.passed: bool = d["pass"]

    def __repr__(self) -> str:
        b = f" {self.bound}" if self.bound else ""
        return f"Check({self.name} = {self.value:.6g}{b}: {'pass' if self.passed else 'FAIL'})"


class ProgramResult:
    """What :func:`run` returns: ``program``, ``params``, ``size``, ``iterations``,
    ``checks`` (:class:`Check` list) and ``passed``, ``timings`` (seconds by phase:
    ``keygen_s``, ``encrypt_s``, ``compute_s``, ``decrypt_s``), ``op_counts`` (HE operations
    by class), ``boots`` (bootstrappings), ``levels_per_boot`` and ``notes``."""

    def __init__(self, d: Dict[str, Any]) -> None:
        self._data = d
        self.program: str = d["program"]
        self.params: str = d["params"]
        self.size: int = d["size"]
        self.iterations: int = d["iterations"]
        self.checks = [Check(c) for c in d["checks"]]
        self.passed: bool = d["passed"]
        self.timings: Dict[str, float] = dict(d["phases"])
        self.op_counts: Dict[str, int] = dict(d["counts"])
        self.boots: int = d["boots"]
        self.levels_per_boot: int = d["levels_per_boot"]
        self.notes: List[str] = list(d.get("notes", []))

    def check(self, name: str) -> Check:
        """The check called ``name``."""
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"no check '{name}' (checks: {[c.name for c in self.checks]})")

    def to_dict(self) -> Dict[str, Any]:
        """Every field, as ``tessera run --json`` prints them."""
        return json.loads(json.dumps(self._data))

    def __repr__(self) -> str:
        return (
            f"ProgramResult({self.program} at {self.params}, size {self.size}: "
            f"{'PASS' if self.passed else 'FAIL'}, compute {self.timings.get('compute_s', 0):.2f} s)"
        )


def run(
    program: str,
    size: Optional[int] = None,
    params: Optional[str] = None,
    iterations: Optional[int] = None,
    data: Optional[str] = None,
    progress: Optional[bool] = None,
    first: Optional[int] = None,
    min_ks: bool = False,
    of_limb: bool = False,
    double_hoisting: bool = False,
    streamed_keyswitch: bool = False,
) -> ProgramResult:
    """Runs ``program`` (``helr``, ``lola``, ``logreg``) encrypted on the CPU and checks it.

    ``size``: HELR/logreg mini-batch or LoLa images; ``params``: the parameter set (HELR:
    ``ark`` by default, ``test-program`` for a quick insecure check); ``iterations``: NAG
    iterations; ``data``: the data directory (default ``$TESSERA_DATA`` or ``../shared/data``).
    A progress bar shows on a terminal (``progress`` forces it on or off). ``first``
    (resnet20 only): the index of the first image, to split a long run into parts.
    ``min_ks`` / ``of_limb``: ARK's multi-hop rotations and OF-Limb plaintexts added to the
    program's bootstrapping circuit (``of_limb`` also stores resnet20's weight plaintexts as
    their ``q_0`` limb), as ``tessera run --min-ks --of-limb``; refused by a program that does
    not bootstrap. ``double_hoisting``: the bootstrapping DFTs keep their baby and giant steps
    over ``Q P`` with one ModDown per part per matrix (``tessera run --hoisting double``).
    ``streamed_keyswitch``: every key switch one digit at a time (reed.md Algorithm 3), the
    same values as the default order (``tessera run --streamed-keyswitch``).

    >>> r = run("helr", size=16, params="test-program", iterations=2)
    >>> r.passed, r.check("max |w - w_replica|").passed
    (True, True)
    """
    bar: Optional[Progress] = None

    def tick(phase: str, done: int, total: int) -> None:
        nonlocal bar
        if bar is None or bar.total != total:
            if bar is not None:
                bar.close()
            bar = Progress(total, f"{program} {phase}", progress)
        while bar.done < done:
            bar.step(True, phase)

    try:
        out = _native._run_program_json(
            program,
            params,
            size,
            iterations,
            os.fspath(data) if data else None,
            tick,
            first,
            min_ks,
            of_limb,
            double_hoisting,
            streamed_keyswitch,
        )
    finally:
        if bar is not None:
            bar.close()
    return ProgramResult(json.loads(out))
