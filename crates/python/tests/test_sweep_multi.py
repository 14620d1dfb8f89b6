"""Sweeps over several workloads and parameter sets (issue 26 item 3): the cross product with
the grid, each (workload, parameter set) recorded once, rows carrying both."""

import pytest

import tessera
import tessera.sim


def test_cross_product_records_each_pair_once(monkeypatch):
    calls = []
    real = tessera.sim.record

    def counting(workload, params, *a, **k):
        calls.append((workload, params))
        return real(workload, params, *a, **k)

    monkeypatch.setattr(tessera.sim, "record", counting)
    s = tessera.sweep(
        "ark", ["hadd", "hmult"], ["test-small", "test-medium"], grid={"chip.clusters": [1, 2, 4]}
    )
    assert sorted(calls) == sorted(
        [(w, p) for w in ("hadd", "hmult") for p in ("test-small", "test-medium")]
    )
    assert len(s) == 12 and not s.errors
    assert s.keys == ["chip.clusters", "workload", "params"]
    assert [(r.settings["workload"], r.settings["params"], r.settings["chip.clusters"]) for r in s] == [
        (w, p, c) for w in ("hadd", "hmult") for p in ("test-small", "test-medium") for c in (1, 2, 4)
    ]
    # Each row equals the single-workload sweep of its pair.
    for w in ("hadd", "hmult"):
        for p in ("test-small", "test-medium"):
            one = tessera.sweep("ark", w, p, grid={"chip.clusters": [1, 2, 4]})
            mine = [r for r in s if (r.settings["workload"], r.settings["params"]) == (w, p)]
            assert [r.time_s for r in mine] == [r.time_s for r in one]
    assert {r.workload.split("@")[0] for r in s} == {"hadd", "hmult"}
    assert len(s.table()[0]) == 3 + 3


def test_bad_multi_sweeps_are_refused():
    with pytest.raises(tessera.TesseraError, match="grid key 'workload'"):
        tessera.sweep("ark", ["hadd"], "test-small", grid={"workload": ["x"]})
    with pytest.raises(tessera.TesseraError, match="listed twice"):
        tessera.sweep("ark", ["hadd", "hadd"], "test-small", grid={"chip.clusters": [1]})
    with pytest.raises(tessera.TesseraError, match="at least one"):
        tessera.sweep("ark", [], "test-small", grid={"chip.clusters": [1]})
