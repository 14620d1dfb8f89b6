"""``python -m tessera`` from the installed package (issue 26 item 1): ``sweep`` on the
package (in-process or Ray), every other command through the CLI compiled into the extension
(``tessera._native.cli_main``); progress only on a terminal."""

import json
import subprocess
import sys

import pytest

import tessera


def run(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "tessera", *args], capture_output=True, text=True, cwd=cwd, timeout=600
    )


def test_sweep_command_writes_table_csv_and_plot(tmp_path):
    r = run("sweep", "--arch", "ark", "--set", "chip.clusters=1,2", "--workload", "hadd",
            "--params", "test-small", "--out", str(tmp_path / "s"), "--json")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(l) for l in r.stdout.splitlines()]
    assert [l["settings"]["chip.clusters"] for l in lines] == ["1", "2"]
    assert (tmp_path / "s.csv").exists() and (tmp_path / "s.png").exists()
    # Not a terminal: no progress bar on stderr.
    assert "[#" not in r.stderr
    # A rerun reads the finished points back.
    again = run("sweep", "--arch", "ark", "--set", "chip.clusters=1,2", "--workload", "hadd",
                "--params", "test-small", "--out", str(tmp_path / "s"))
    assert again.returncode == 0 and "2 from" in again.stderr


def test_bad_sweep_point_fails_the_command(tmp_path):
    r = run("sweep", "--arch", "ark", "--set", "chip.clusters=1,0", "--workload", "hadd",
            "--params", "test-small", "--out", str(tmp_path / "b"), "--json")
    assert r.returncode == 1 and "chip.clusters" in r.stderr


def test_other_commands_run_the_cli_in_the_extension():
    r = run("simulate", "--arch", "ark", "--workload", "hmult", "--params", "test-small", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["time_s"] > 0 and out["schema"] == "tessera.simulate/1"
    bad = run("simulate", "--arch", "nope")
    assert bad.returncode == 2 and "arch" in bad.stderr


def test_cli_main_in_process(capfd):
    # The same entry point, called directly: exit status, no exception, output on fd 1.
    assert tessera._native.cli_main(["params", "list", "--json"]) == 0
    lines = [json.loads(l) for l in capfd.readouterr().out.splitlines()]
    assert lines and all(l["schema"] == "tessera.params.list/1" for l in lines)
    assert tessera._native.cli_main(["plan", "--params", "nope"]) == 2
    assert "preset" in capfd.readouterr().err


def test_multi_workload_sweep_command(tmp_path):
    r = run("sweep", "--arch", "ark", "--set", "chip.clusters=1,2", "--workload", "hadd,hmult",
            "--params", "test-small", "--out", str(tmp_path / "m"), "--json")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(l) for l in r.stdout.splitlines()]
    assert [(l["workload"], l["settings"]["chip.clusters"]) for l in lines] == [
        ("hadd", "1"), ("hadd", "2"), ("hmult", "1"), ("hmult", "2")]
    assert all(l["schema"] == "tessera.sweep/1" and l["params"] == "test-small" for l in lines)
