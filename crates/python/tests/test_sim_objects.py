"""The simulator from Python as objects (issue 26 items 2-3): machines edited and validated
like files, reports with attributes that pickle and convert, reproduction rows, sweeps
(in-process, resumable, failed points kept apart) and their plots."""

import pickle

import numpy as np
import pytest

import tessera


def test_machine_objects_are_validated_like_files(tmp_path):
    m = tessera.Machine("ark")
    assert m.name == "ark" and m.model == "vector"
    m8 = m.with_(chip__clusters=8)
    assert m8.chip.clusters == 8 and m8["chip.clusters"] == 8 and m.chip.clusters != 8
    with pytest.raises(tessera.TesseraError, match="chip.clusters"):
        m.with_(chip__clusters=0)
    with pytest.raises(tessera.TesseraError, match="arch"):
        tessera.Machine("no-such-machine")
    assert pickle.loads(pickle.dumps(m8)) == m8
    # A machine from a file that extends a built-in one.
    f = tmp_path / "mine.toml"
    f.write_text('extends = "ark"\nname = "mine"\n[chip]\nclusters = 2\n')
    mine = tessera.Machine.load(f)
    assert mine.name == "mine" and mine.chip.clusters == 2
    assert "ark" in tessera.machines()


def test_report_attributes_dict_pandas_and_pickle():
    r = tessera.simulate(arch=tessera.Machine("ark"), workload="hmult", params="test-small")
    assert r.time_s > 0 and r.energy_j > 0 and abs(r.area_mm2 - 418.3) / 418.3 < 0.01
    assert set(r.utilization) >= {"ntt", "bconv", "offchip"}
    assert r.traffic_by_kind["ciphertext"] > 0
    assert "HMultRescale" in r.time_by_op
    assert r.cycles > 0 and r["time_s"] == r.time_s
    d = r.to_dict()
    assert d["time_s"] == r.time_s and isinstance(d["utilization"], dict)
    df = r.to_pandas()
    assert df.shape[0] == 1 and df["time_s"][0] == r.time_s and "utilization.ntt" in df
    assert pickle.loads(pickle.dumps(r)) == r
    with pytest.raises(AttributeError, match="no field"):
        r.no_such_field


def test_trace_recorded_once_simulates_anywhere():
    t = tessera.record("hmult", "test-small")
    assert t.instructions > 0 and "hmult" in t.label
    t2 = pickle.loads(pickle.dumps(t))
    a = tessera.simulate("ark", t)
    b = tessera.simulate("ark", t2)
    assert a == b
    assert a == tessera.simulate("ark", "hmult", "test-small")
    with pytest.raises(tessera.TesseraError, match="size"):
        tessera.record("hmult", "test-small", size=4)


def test_issue_window_is_an_option_checked_and_reported():
    t = tessera.record("hmult", "test-small")
    default = tessera.simulate("ark", t)
    assert default.issue_window == 65536 and default.window_holds == 0
    assert default.peak_intervals > 0
    long = tessera.simulate("ark", t, issue_window=1 << 20)
    assert long.time_s == default.time_s and long.window_holds == 0
    tiny = tessera.simulate("ark", t, issue_window=1)
    assert tiny.issue_window == 1 and tiny.window_holds > 0
    assert tiny.peak_intervals < default.peak_intervals
    assert tiny.offchip_bytes == default.offchip_bytes
    for bad in (0, 2**26 + 1):
        with pytest.raises(tessera.TesseraError, match="issue_window"):
            tessera.simulate("ark", t, issue_window=bad)
    with pytest.raises(tessera.TesseraError, match="single-PE"):
        tessera.simulate("cofhee", "ntt", "cofhee-n12", issue_window=16)
    # The JSON-returning entry point takes it too.
    import json

    v = json.loads(tessera._native.simulate_json("ark", "hmult", "test-small", issue_window=1))
    assert v["issue_window"] == 1 and v["window_holds"] > 0


def test_timeline_plot(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    r = tessera.simulate("ark", "hmult", "test-small", timeline=50)
    ax = r.plot_timeline(path=str(tmp_path / "t.png"))
    assert (tmp_path / "t.png").stat().st_size > 1000
    assert len(ax.get_lines()) >= 5
    for line in ax.get_lines():
        assert np.all(np.asarray(line.get_ydata()) <= 1.0)
    with pytest.raises(tessera.TesseraError, match="timeline=True"):
        tessera.simulate("ark", "hmult", "test-small").plot_timeline()


def test_reproduce_rows():
    rows = tessera.reproduce("cofhee")
    banded = [r for r in rows if r.tolerance]
    # A row is a hit exactly when it has a ratio and the ratio lies in its band; the primitive cycle counts hit
    # (the Table X application rows are misses, and say so).
    assert banded and all(
        r.hit == (r.ratio is not None and r.tolerance[0] <= r.ratio <= r.tolerance[1])
        for r in banded
    )
    assert all(r.hit for r in banded if r.unit == "cycles")
    assert all(isinstance(r.item, str) and r.paper == "cofhee" for r in rows)
    with pytest.raises(tessera.TesseraError, match="paper"):
        tessera.reproduce("nope")


GRID = {"chip.clusters": [1, 2, 4], "arch": ["ark", "reed"]}


def test_sweep_in_process_matches_single_simulations():
    s = tessera.sweep(arch="ark", workload="hadd", params="test-small", grid=GRID)
    assert len(s) == 6 and not s.errors
    for r in s:
        want = tessera.simulate(
            r.settings["arch"], "hadd", "test-small",
            sets=[f"chip.clusters={r.settings['chip.clusters']}"],
        )
        assert r.time_s == want.time_s
    # One worker gives the same table.
    one = tessera.sweep(arch="ark", workload="hadd", params="test-small", grid=GRID, workers=1)
    assert one.table() == s.table()
    df = s.to_pandas()
    assert list(df.columns[:2]) == ["chip.clusters", "arch"] and len(df) == 6


def test_sweep_keeps_failed_points_and_resumes(tmp_path):
    out = tmp_path / "s.jsonl"
    grid = {"chip.clusters": [1, 0, 2]}  # 0 clusters is out of range
    s = tessera.sweep("ark", "hadd", "test-small", grid=grid, out=str(out))
    assert [r.settings["chip.clusters"] for r in s] == [1, 2]
    assert len(s.errors) == 1 and "chip.clusters" in s.errors[0].error
    again = tessera.sweep("ark", "hadd", "test-small", grid=grid, out=str(out))
    assert again.skipped == 2 and again.table() == s.table() and len(again.errors) == 1
    assert len(out.read_text().splitlines()) == 2


def test_sweep_plot_and_errors(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    s = tessera.sweep("ark", "hadd", "test-small", grid=GRID)
    ax = s.plot("area_mm2", path=str(tmp_path / "p.png"))
    assert len(ax.get_lines()) == 2 and (tmp_path / "p.png").exists()
    with pytest.raises(tessera.TesseraError, match="metric"):
        s.plot("nope")
    with pytest.raises(tessera.TesseraError, match="executor"):
        tessera.sweep("ark", "hadd", "test-small", grid=GRID, executor="mpi")
    with pytest.raises(tessera.TesseraError, match="grid"):
        tessera.sweep("ark", "hadd", "test-small", grid={})
