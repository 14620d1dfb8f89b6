"""The ``>>>`` examples in the package's docstrings run as written."""

import doctest
import os
import pathlib

import pytest

import tessera
import tessera.programs
import tessera.sim


@pytest.mark.parametrize("module", [tessera, tessera.sim, tessera.programs])
def test_docstring_examples(module, monkeypatch):
    # programs.run's example reads the shared data (as test_programs.py does).
    if not os.environ.get("TESSERA_DATA"):
        shared = pathlib.Path(__file__).resolve().parents[4] / "shared" / "data"
        monkeypatch.setenv("TESSERA_DATA", str(shared))
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
