"""``python -m tessera`` from the installed package (issue 26 item 1): ``sweep`` on the
package (in-process or Ray), every other command through the CLI binary shipped in the wheel;
progress only on a terminal."""

import json
import subprocess
import sys

import pytest

from tessera.__main__ import find_binary


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


@pytest.mark.skipif(find_binary() is None, reason="no tessera binary in this install (scripts/build-wheel.sh ships one)")
def test_other_commands_run_the_cli_binary():
    r = run("simulate", "--arch", "ark", "--workload", "hmult", "--params", "test-small", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[-1])["time_s"] > 0
    bad = run("simulate", "--arch", "nope")
    assert bad.returncode == 2 and "arch" in bad.stderr
