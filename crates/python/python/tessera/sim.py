"""The accelerator simulator from Python, as objects: machines, reports, reproduction rows,
design sweeps (in this process or on a Ray cluster) and their plots.

A workload is recorded once into a :class:`Trace` and simulated on every machine asked for;
the Rust layer returns its serde JSON, which this module turns into :class:`Report` objects
(a user never parses JSON)."""

from __future__ import annotations

import itertools
import json
import math
import os
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Union

from . import _native
from ._native import TesseraError, Trace
from ._progress import Progress

__all__ = [
    "Machine",
    "Report",
    "Row",
    "Sweep",
    "SweepError",
    "Trace",
    "machines",
    "record",
    "reproduce",
    "simulate",
    "sweep",
]


def _flatten(d: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        elif not isinstance(v, list):
            out[key] = v
    return out


class _Section:
    """Read-only attribute access to one section of a machine description."""

    def __init__(self, data: Dict[str, Any], path: str) -> None:
        self._data = data
        self._path = path

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._data:
            raise AttributeError(f"{self._path} has no key '{name}' (keys: {sorted(self._data)})")
        v = self._data[name]
        return _Section(v, f"{self._path}.{name}") if isinstance(v, dict) else v

    def __dir__(self) -> List[str]:
        return sorted(self._data)

    def __repr__(self) -> str:
        return f"<{self._path}: {self._data}>"


class Machine:
    """An accelerator description: a built-in (``"ark"``, ``"reed"``, ``"cifher-16"``, ...)
    or a TOML file, with ``KEY=VALUE`` overrides applied in order and validated exactly as
    ``tessera simulate --arch A --set KEY=VALUE`` validates them (a bad value raises
    :class:`TesseraError` naming the key and its allowed range).

    >>> m = Machine("ark").with_(chip__clusters=8)
    >>> m.chip.clusters, m["chip.clusters"], m.sets
    (8, 8, ['chip.clusters=8'])
    """

    def __init__(self, arch: str = "ark", sets: Sequence[str] = ()) -> None:
        self.arch = os.fspath(arch)
        self.sets = list(sets)
        info = json.loads(_native._machine_json(self.arch, self.sets))
        self.name: str = info["name"]
        self.model: str = info["model"]
        self._description: Dict[str, Any] = info["description"]

    @classmethod
    def load(cls, arch: Union[str, "os.PathLike[str]"]) -> "Machine":
        """A built-in machine by name or a TOML machine description file."""
        return cls(os.fspath(arch))

    def with_(self, **settings: Any) -> "Machine":
        """A copy with settings changed: ``chip__clusters=8`` sets ``chip.clusters``
        (double underscores stand for dots); validated at once."""
        extra = [f"{k.replace('__', '.')}={_setting(v)}" for k, v in settings.items()]
        return Machine(self.arch, self.sets + extra)

    def with_settings(self, settings: Dict[str, Any]) -> "Machine":
        """:meth:`with_` with dotted keys: ``{"chip.clusters": 8}``."""
        return Machine(self.arch, self.sets + [f"{k}={_setting(v)}" for k, v in settings.items()])

    def to_dict(self) -> Dict[str, Any]:
        """The full description (nested dicts), as the simulator read it."""
        return json.loads(json.dumps(self._description))

    def __getitem__(self, dotted: str) -> Any:
        v: Any = self._description
        for part in dotted.split("."):
            if not isinstance(v, dict) or part not in v:
                raise KeyError(f"'{dotted}' is not a key of machine '{self.name}'")
            v = v[part]
        return v

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        d = self.__dict__.get("_description", {})
        if name not in d:
            raise AttributeError(f"machine '{self.__dict__.get('name')}' has no section '{name}'")
        v = d[name]
        return _Section(v, name) if isinstance(v, dict) else v

    def simulate(self, workload: str = "hmult", params: str = "ark", **options: Any) -> "Report":
        """:func:`simulate` on this machine."""
        return simulate(arch=self, workload=workload, params=params, **options)

    def __reduce__(self):
        return (Machine, (self.arch, self.sets))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Machine) and (self.arch, self.sets) == (other.arch, other.sets)

    def __hash__(self) -> int:
        return hash((self.arch, tuple(self.sets)))

    def __repr__(self) -> str:
        s = f", sets={self.sets}" if self.sets else ""
        return f"Machine('{self.arch}'{s})"


def _setting(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


class Report:
    """One simulation's results. Attributes: ``time_s``, ``energy_j``, ``area_mm2``,
    ``utilization`` (busy fraction by unit class), ``traffic_by_kind`` (off-chip bytes by
    data kind), ``time_by_op`` (seconds by HE operation), ``settings`` (the sweep point's
    settings, empty outside sweeps), and every other field of ``tessera simulate --json``
    (``cycles``, ``avg_power_w``, ``noc_bytes``, ``tasks_per_minute``, ``energy_scope``, ...).
    Pickles; :meth:`to_dict`, :meth:`to_pandas`, :meth:`plot_timeline`.
    """

    def __init__(self, data: Dict[str, Any], settings: Optional[Dict[str, Any]] = None) -> None:
        self._data = dict(data)
        self.settings: Dict[str, Any] = dict(settings or {})

    @property
    def time_s(self) -> float:
        """Simulated time in seconds."""
        return self._data["time_s"]

    @property
    def energy_j(self) -> Optional[float]:
        """Energy in joules (what it covers: ``energy_scope``)."""
        return self._data.get("energy_j")

    @property
    def area_mm2(self) -> Optional[float]:
        """Chip area in mm^2."""
        return self._data.get("area_mm2")

    @property
    def utilization(self) -> Dict[str, float]:
        """Busy fraction of each unit class over the run."""
        return dict(self._data.get("utilization", {}))

    @property
    def traffic_by_kind(self) -> Dict[str, float]:
        """Off-chip bytes by kind (ciphertext, key, plaintext, ...)."""
        return dict(self._data.get("offchip_by_kind_bytes", {}))

    @property
    def time_by_op(self) -> Dict[str, float]:
        """Seconds by HE operation (the per-operation breakdown)."""
        return dict(self._data.get("time_by_op_s", {}))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        data = self.__dict__.get("_data", {})
        if name in data:
            return data[name]
        raise AttributeError(f"a Report has no field '{name}' (fields: {sorted(data)})")

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def keys(self) -> List[str]:
        """The report's field names."""
        return list(self._data)

    def to_dict(self) -> Dict[str, Any]:
        """Every field (a deep copy), with ``settings`` when set."""
        d = json.loads(json.dumps(self._data))
        if self.settings:
            d["settings"] = dict(self.settings)
        return d

    def to_pandas(self):
        """A one-row ``pandas.DataFrame``: the settings, then every scalar field (nested
        ones flattened as ``utilization.ntt``)."""
        import pandas as pd

        row = dict(self.settings)
        row.update(_flatten({k: v for k, v in self._data.items() if k != "utilization_series"}))
        return pd.DataFrame([row])

    def plot_timeline(self, ax=None, path: Optional[str] = None):
        """Utilization of each unit class over time (the figure ``tessera simulate --plot``
        draws); needs ``simulate(..., timeline=True)``. Returns the matplotlib axes; writes
        ``path`` (PNG, SVG, ...) when given."""
        series = self._data.get("utilization_series")
        if not series:
            raise TesseraError(
                "this report has no timeline: simulate(..., timeline=True) records one "
                "(latency mode on vector machines)"
            )
        import matplotlib

        if ax is None:
            matplotlib.use("Agg") if path else None
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(8, 4))
        t = self.time_s
        for name, ys in series.items():
            n = len(ys)
            xs = [(i + 0.5) * t / n * 1e6 for i in range(n)]
            ax.plot(xs, ys, label=name)
        ax.set_xlabel("time (us)")
        ax.set_ylabel("utilization")
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{self._data.get('workload', '')} on {self._data.get('arch', '')}")
        ax.legend(loc="upper right", fontsize="small")
        if path:
            ax.figure.savefig(path)
        return ax

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Report) and (self._data, self.settings) == (
            other._data,
            other.settings,
        )

    def __repr__(self) -> str:
        s = f", settings={self.settings}" if self.settings else ""
        return (
            f"Report(arch='{self._data.get('arch')}', workload='{self._data.get('workload')}', "
            f"time_s={self.time_s:.4g}{s})"
        )


def machines() -> List[str]:
    """The built-in machine names."""
    return list(_native.machines())


def record(
    workload: str = "hmult",
    params: str = "ark",
    level: Optional[int] = None,
    of_limb: bool = False,
    min_ks: bool = False,
    streamed_keyswitch: bool = False,
    hoisting: bool = True,
    size: Optional[int] = None,
    double_hoisting: bool = False,
) -> Trace:
    """Records ``workload`` at ``params`` once: a built-in workload (``bootstrap``, ``hmult``,
    ``hrot``, ``keyswitch``, ``keyswitch-ext``, ``hadd``, ``pmult``, ``tensor``, ``ntt``), a
    program (``helr``, ``lola``, ``logreg``; ``size`` as in ``tessera run``, one steady-state
    window) or a tessera-trace file. ``double_hoisting=True`` records bootstrapping's DFTs
    with double hoisting (``--double-hoisting``). The :class:`Trace` simulates on any machine
    and pickles."""
    return _native.record(
        workload, params, level, of_limb, min_ks, streamed_keyswitch, hoisting, size,
        double_hoisting,
    )


def _arch_and_sets(arch: Union[str, Machine], sets: Optional[Sequence[str]]) -> tuple:
    if isinstance(arch, Machine):
        return arch.arch, arch.sets + list(sets or [])
    return os.fspath(arch), list(sets or [])


def simulate(
    arch: Union[str, Machine] = "ark",
    workload: Union[str, Trace] = "hmult",
    params: str = "ark",
    level: Optional[int] = None,
    of_limb: bool = False,
    min_ks: bool = False,
    sets: Optional[Sequence[str]] = None,
    mode: str = "latency",
    warm: bool = False,
    streamed_keyswitch: bool = False,
    additive: bool = False,
    hoisting: bool = True,
    size: Optional[int] = None,
    timeline: Union[bool, int] = False,
    window: Optional[int] = None,
    issue_window: Optional[int] = None,
    double_hoisting: bool = False,
) -> Report:
    """Runs a workload on an accelerator model, like ``tessera simulate``; returns a
    :class:`Report`.

    ``arch`` is a built-in machine name, a TOML file or a :class:`Machine`; ``workload`` a
    workload name, a program, a trace file or a recorded :class:`Trace` (see :func:`record`);
    ``sets`` overrides machine values, e.g. ``["chip.clusters=8"]``; ``mode`` is ``latency``
    (one task over the machine) or ``throughput`` (one task per cluster); ``warm=True`` times
    the workload with its inputs already on chip (``--warm``); ``streamed_keyswitch=True``
    switches keys one digit at a time (reed.md Algorithm 3); ``additive=True`` adds
    ``additive_s`` and ``additive_by_op``, the HE operations' warm times summed (``--additive``);
    ``hoisting=False`` records bootstrapping without hoisted baby steps (``--no-hoisting``),
    ``double_hoisting=True`` with double hoisting (``--double-hoisting``);
    ``timeline=True`` (or a bin count, default 200) keeps the utilization over time for
    :meth:`Report.plot_timeline`. ``window`` is the engine's lookahead window in
    instructions (``--window``; default 65,536, 1 to 2**26; the figures equal the whole-stream
    schedule's when every buffer's live range is shorter). ``issue_window`` is the engine's
    issue window in placed instructions (``--issue-window``; default 65,536, 1 to 2**26): it
    bounds the reservation table's memory, and the report's ``window_holds`` counts the
    instructions it held back (0: the schedule is the unbounded one). Bad values raise
    :class:`TesseraError` naming the parameter.

    >>> r = simulate("ark", "hmult", "test-small")
    >>> r.time_s > 0 and r.area_mm2 > 0
    True
    """
    name, all_sets = _arch_and_sets(arch, sets)
    if isinstance(workload, Trace):
        trace = workload
    else:
        # The machine is checked first, so a bad arch is reported before recording.
        _native._machine_json(name, all_sets)
        trace = record(
            workload, params, level, of_limb, min_ks, streamed_keyswitch, hoisting, size,
            double_hoisting,
        )
    bins = None
    if timeline:
        bins = 200 if timeline is True else int(timeline)
    data = json.loads(
        _native._simulate_trace_json(
            name, all_sets, trace, mode, warm, additive, bins, window, issue_window
        )
    )
    return Report(data)


class Row:
    """One calibration target of :func:`reproduce`: ``paper``, ``item``, ``unit``,
    ``paper_value``, ``model_value``, ``ratio``, ``tolerance`` (a ``(low, high)`` ratio band
    or None for a reported-only row), ``hit``, ``source`` and the other fields of
    ``tessera reproduce --json``."""

    def __init__(self, data: Dict[str, Any]) -> None:
        self._data = dict(data)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        data = self.__dict__.get("_data", {})
        if name in data:
            return data[name]
        raise AttributeError(f"a Row has no field '{name}' (fields: {sorted(data)})")

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def to_dict(self) -> Dict[str, Any]:
        """Every field."""
        return dict(self._data)

    def __repr__(self) -> str:
        return (
            f"Row({self._data.get('paper')}: {self._data.get('item')!r}, "
            f"paper={self._data.get('paper_value')}, model={self._data.get('model_value')})"
        )


def reproduce(paper: Optional[str] = None) -> List[Row]:
    """The papers' figures next to the model's, like ``tessera reproduce``: one :class:`Row`
    per target. ``paper`` is one of ``ark``, ``cofhee``, ``reed``, ``cifher``, ``h3`` (None:
    all; ``ark`` records N = 2^16 bootstrapping traces and takes about half a minute).

    The misses are printed, not hidden: CoFHEE's Table X application rows miss, its
    primitive cycle counts hit.

    >>> rows = reproduce("cofhee")
    >>> all(r.hit for r in rows if r.tolerance and r.unit == "cycles")
    True
    >>> sorted({r.hit for r in rows if r.tolerance})
    [False, True]
    """
    return [Row(r) for r in json.loads(_native.reproduce_json(paper))]


class SweepError:
    """A sweep point that failed: its ``settings`` and the ``error`` message."""

    def __init__(self, settings: Dict[str, Any], error: str) -> None:
        self.settings = dict(settings)
        self.error = error

    def __repr__(self) -> str:
        return f"SweepError({self.settings}, {self.error!r})"


class Sweep:
    """The result of :func:`sweep`: one :class:`Report` per finished point, in grid order
    (iterate, index, ``len``), plus ``errors`` (:class:`SweepError` per failed point),
    ``skipped`` (points read back from the output file instead of rerun) and ``wall_s``."""

    def __init__(
        self,
        keys: List[str],
        reports: List[Report],
        errors: List[SweepError],
        skipped: int = 0,
        wall_s: float = 0.0,
    ) -> None:
        self.keys = keys
        self.reports = reports
        self.errors = errors
        self.skipped = skipped
        self.wall_s = wall_s

    def __iter__(self) -> Iterator[Report]:
        return iter(self.reports)

    def __len__(self) -> int:
        return len(self.reports)

    def __getitem__(self, i: int) -> Report:
        return self.reports[i]

    def table(self, metrics: Sequence[str] = ("time_s", "energy_j", "area_mm2")) -> List[tuple]:
        """One tuple per point: the settings in key order, then ``metrics``."""
        return [
            tuple(r.settings[k] for k in self.keys) + tuple(r._data.get(m) for m in metrics)
            for r in self.reports
        ]

    def to_csv(self, path: str) -> None:
        """Writes one row per point (settings, then every scalar report field) without
        needing pandas."""
        import csv

        rows = []
        for r in self.reports:
            row = dict(r.settings)
            row.update(
                _flatten({k: v for k, v in r._data.items() if k != "utilization_series"})
            )
            rows.append(row)
        columns: List[str] = []
        for row in rows:
            columns += [c for c in row if c not in columns]
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=columns)
            w.writeheader()
            w.writerows(rows)

    def to_pandas(self):
        """One row per point (settings, then every scalar report field)."""
        import pandas as pd

        return pd.concat([r.to_pandas() for r in self.reports], ignore_index=True)

    def plot(self, metric: str = "time_s", ax=None, path: Optional[str] = None):
        """``metric`` (a report field: ``time_s``, ``energy_j``, ``area_mm2``, ``edap``, ...)
        against the first swept key, one line per combination of the others (the figure
        ``tessera sweep`` writes). Returns the matplotlib axes; writes ``path`` when given."""
        if not self.reports:
            raise TesseraError("the sweep has no finished points to plot")
        if metric not in self.reports[0]._data:
            raise TesseraError(
                f"metric = {metric} is invalid; allowed: {sorted(k for k, v in self.reports[0]._data.items() if isinstance(v, (int, float)))}"
            )
        if ax is None:
            import matplotlib

            if path:
                matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(7, 4))
        x_key, others = self.keys[0], self.keys[1:]
        lines: Dict[tuple, List[tuple]] = {}
        for r in self.reports:
            lines.setdefault(tuple(r.settings[k] for k in others), []).append(
                (r.settings[x_key], r._data[metric])
            )
        for label, pts in lines.items():
            xs, ys = zip(*_sorted_points(pts))
            name = ", ".join(f"{k}={v}" for k, v in zip(others, label)) or metric
            ax.plot([str(x) for x in xs], ys, marker="o", label=name)
        ax.set_xlabel(x_key)
        ax.set_ylabel(metric)
        if len(lines) > 1:
            ax.legend(fontsize="small")
        if path:
            ax.figure.savefig(path)
        return ax

    def __repr__(self) -> str:
        return f"Sweep({len(self.reports)} points, {len(self.errors)} failed, keys={self.keys})"


def _sorted_points(pts: List[tuple]) -> List[tuple]:
    try:
        return sorted(pts, key=lambda p: float(p[0]))
    except (TypeError, ValueError):
        return pts


def _points(grid: Dict[str, Iterable[Any]]) -> List[Dict[str, Any]]:
    if not isinstance(grid, dict) or not grid:
        raise TesseraError("grid must be a non-empty dict of key -> list of values")
    keys = list(grid)
    values = []
    for k in keys:
        v = list(grid[k]) if not isinstance(grid[k], (str, bytes)) else [grid[k]]
        if not v:
            raise TesseraError(f"grid['{k}'] has no values")
        values.append(v)
    return [dict(zip(keys, combo)) for combo in itertools.product(*values)]


def _point_key(settings: Dict[str, Any]) -> str:
    return json.dumps({k: str(v) for k, v in settings.items()}, sort_keys=True)


def _run_point(
    arch: str, sets: List[str], trace: Trace, settings: Dict[str, Any], options: Dict[str, Any]
) -> Dict[str, Any]:
    """Simulates one grid point; returns the report's fields (raises on a bad point). The
    keys ``arch`` (the machine), ``workload`` and ``params`` (the recording) are not machine
    settings."""
    name = str(settings.get("arch", arch))
    extra = [
        f"{k}={_setting(v)}"
        for k, v in settings.items()
        if k not in ("arch", "workload", "params")
    ]
    return json.loads(
        _native._simulate_trace_json(
            name,
            list(sets) + extra,
            trace,
            options.get("mode", "latency"),
            options.get("warm", False),
            False,
            None,
        )
    )


def sweep(
    arch: Union[str, Machine] = "reed",
    workload: Union[str, Trace, Sequence[Union[str, Trace]]] = "hmult",
    params: Union[None, str, Sequence[str]] = None,
    grid: Optional[Dict[str, Iterable[Any]]] = None,
    executor: str = "process",
    workers: Optional[int] = None,
    out: Optional[str] = None,
    progress: Optional[bool] = None,
    ray_address: Optional[str] = None,
    mode: str = "latency",
    warm: bool = False,
    level: Optional[int] = None,
    size: Optional[int] = None,
    of_limb: bool = False,
    min_ks: bool = False,
    streamed_keyswitch: bool = False,
    hoisting: bool = True,
) -> Sweep:
    """Simulates ``workload`` on every point of ``grid`` (the cross product of its values,
    keys dotted machine settings such as ``"chip.clusters"``, or ``"arch"`` to sweep over
    machines) and returns a :class:`Sweep` with one :class:`Report` per point (each with
    ``time_s`` and its ``settings``).

    The workload is recorded once. ``executor="process"`` runs the points in this process on
    ``workers`` threads (default: every core; the simulator releases the GIL);
    ``executor="ray"`` makes each point a Ray task (``ray_address``: ``"auto"`` for a running
    cluster, an address, or None to start a local one), with the trace put once in Ray's
    object store. Results stream back as they finish, with a progress bar on a terminal
    (``progress``: force it on or off). A failed point lands in ``Sweep.errors`` and does not
    stop the others. ``level``, ``size``, ``of_limb``, ``min_ks``, ``streamed_keyswitch`` and
    ``hoisting`` are :func:`record`'s. With ``out`` (a JSON-lines file) each finished point is appended as it
    arrives and a rerun skips the points already there.

    ``workload`` and ``params`` may be lists: the sweep is then the cross product of the
    workloads, the parameter sets and the grid, each (workload, parameter set) is recorded
    once and shared by its points (on Ray: put once in the object store), and every report's
    ``settings`` (and :attr:`Sweep.keys`) carry ``workload`` and ``params`` after the grid's keys.

    >>> s = sweep("ark", "hadd", "test-small", grid={"chip.clusters": [1, 2]})
    >>> [r.settings["chip.clusters"] for r in s], s.errors
    ([1, 2], [])
    >>> m = sweep("ark", ["hadd", "hmult"], ["test-small"], grid={"chip.clusters": [1, 2]})
    >>> [(r.settings["workload"], r.settings["chip.clusters"]) for r in m]
    [('hadd', 1), ('hadd', 2), ('hmult', 1), ('hmult', 2)]
    """
    import time

    if grid is None:
        raise TesseraError("grid is required, e.g. {'chip.clusters': [2, 4, 8]}")
    if executor not in ("process", "ray"):
        raise TesseraError(f"executor = {executor} is invalid; allowed: process, ray")
    if workers is not None and workers < 1:
        raise TesseraError(f"workers = {workers} is invalid; allowed: 1 or more")
    start = time.perf_counter()
    grid_points = _points(grid)
    keys = list(grid)
    name, sets = _arch_and_sets(arch, None)
    many = isinstance(workload, (list, tuple)) or isinstance(params, (list, tuple))
    workloads = list(workload) if isinstance(workload, (list, tuple)) else [workload]
    params_list = list(params) if isinstance(params, (list, tuple)) else [params or "ark"]
    if not workloads or not params_list:
        raise TesseraError("workload and params need at least one value each")
    for k in ("workload", "params"):
        if many and k in keys:
            raise TesseraError(f"grid key '{k}' is taken by the sweep's {k} list")
    # One recording per (workload, parameter set), shared by every grid point.
    traces: Dict[tuple, Trace] = {}
    points: List[Dict[str, Any]] = []
    for w in workloads:
        for p in params_list:
            label = w.label if isinstance(w, Trace) else str(w)
            if isinstance(w, Trace) and len(params_list) > 1:
                raise TesseraError(f"a recorded Trace ('{label}') has one parameter set: pass one params")
            if (label, p) in traces:
                raise TesseraError(f"workload '{label}' at params '{p}' is listed twice")
            traces[(label, p)] = (
                w
                if isinstance(w, Trace)
                else record(w, p, level, of_limb, min_ks, streamed_keyswitch, hoisting, size)
            )
            extra = {"workload": label, "params": p} if many else {}
            points += [dict(g, **extra) for g in grid_points]
    if many:
        keys += ["workload", "params"]
    only = next(iter(traces))

    def trace_key(settings: Dict[str, Any]) -> tuple:
        return (settings["workload"], settings["params"]) if many else only

    options = {"mode": mode, "warm": warm}

    done: Dict[str, Report] = {}
    if out and os.path.exists(out):
        with open(out) as f:
            for line in f:
                line = line.strip()
                if line:
                    rec = json.loads(line)
                    if "report" in rec:
                        done[rec["key"]] = Report(rec["report"], rec["settings"])
    skipped = sum(1 for p in points if _point_key(p) in done)
    todo = [p for p in points if _point_key(p) not in done]
    errors: List[SweepError] = []
    bar = Progress(len(todo), f"sweep ({executor})", progress)
    sink = open(out, "a") if out else None

    def finish(settings: Dict[str, Any], data: Optional[Dict[str, Any]], error: Optional[str]):
        if error is not None:
            errors.append(SweepError(settings, error))
            bar.step(False)
            return
        done[_point_key(settings)] = Report(data, settings)
        if sink:
            sink.write(
                json.dumps({"key": _point_key(settings), "settings": settings, "report": data})
                + "\n"
            )
            sink.flush()
        bar.step(True)

    try:
        if executor == "process":
            with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
                futures = {
                    pool.submit(_run_point, name, sets, traces[trace_key(p)], p, options): p
                    for p in todo
                }
                for fut in as_completed(futures):
                    p = futures[fut]
                    try:
                        finish(p, fut.result(), None)
                    except Exception as e:  # a failed point is reported, not fatal
                        finish(p, None, str(e))
        else:
            _run_on_ray(name, sets, traces, trace_key, todo, options, ray_address, workers, finish)
    finally:
        bar.close()
        if sink:
            sink.close()
    reports = [done[_point_key(p)] for p in points if _point_key(p) in done]
    return Sweep(keys, reports, errors, skipped, time.perf_counter() - start)


def _ray_point(arch, sets, trace, settings, options):
    """A Ray task: one point, returning (settings, report fields or None, error or None)."""
    try:
        return settings, _run_point(arch, sets, trace, settings, options), None
    except Exception as e:
        return settings, None, str(e)


def _run_on_ray(name, sets, traces, trace_key, todo, options, address, workers, finish) -> None:
    try:
        import ray
    except ImportError as e:
        raise TesseraError(
            "executor='ray' needs Ray: pip install 'ray>=2' (or use executor='process')"
        ) from e
    if not ray.is_initialized():
        if address is None:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    remote = ray.remote(num_cpus=1)(_ray_point)
    # Each recording is put in the object store once and shared by its points' tasks.
    refs = {k: ray.put(t) for k, t in traces.items()}
    of = {remote.remote(name, sets, refs[trace_key(p)], p, options): p for p in todo}
    pending = list(of)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            try:
                settings, data, error = ray.get(ref)
            except Exception as e:  # the task itself died (worker lost, ...)
                settings, data, error = of[ref], None, str(e)
            finish(settings, data, error)
