"""A progress bar on standard error, shown only on a terminal (quiet in pipes, CI and
``--json`` mode), so long sweeps and programs say how far they are."""

from __future__ import annotations

import sys
import time
from typing import Optional


class Progress:
    """Counts finished steps of ``total`` and redraws one line on a TTY.

    ``enabled=None`` shows the bar only when standard error is a terminal.
    """

    def __init__(self, total: int, label: str, enabled: Optional[bool] = None) -> None:
        self.total = max(int(total), 0)
        self.label = label
        self.done = 0
        self.failed = 0
        self.enabled = sys.stderr.isatty() if enabled is None else bool(enabled)
        self._start = time.perf_counter()

    def step(self, ok: bool = True, note: str = "") -> None:
        """One more step finished (``ok=False``: it failed)."""
        self.done += 1
        self.failed += 0 if ok else 1
        if self.enabled:
            width = 30
            filled = int(width * self.done / self.total) if self.total else width
            bar = "#" * filled + "-" * (width - filled)
            fail = f", {self.failed} failed" if self.failed else ""
            elapsed = time.perf_counter() - self._start
            sys.stderr.write(
                f"\r{self.label} [{bar}] {self.done}/{self.total}{fail} {elapsed:.1f} s {note[:30]:<30}"
            )
            sys.stderr.flush()

    def close(self) -> None:
        """Ends the line."""
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()
