"""``pip install`` of the package into a fresh virtual environment gives the whole command
line, with no ``tessera`` binary anywhere (issue 26 item 1): ``python -m tessera`` runs the
CLI compiled into the extension. ``scripts/test.sh`` passes the wheel it built (the one every
other test runs against) as ``$TESSERA_WHEEL``."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import venv

import pytest

WHEEL = os.environ.get("TESSERA_WHEEL")
DATA = os.environ.get(
    "TESSERA_DATA", str(pathlib.Path(__file__).resolve().parents[3].parent / "shared" / "data")
)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    if not WHEEL:
        pytest.skip("no $TESSERA_WHEEL (scripts/test.sh sets it to the wheel it built)")
    root = tmp_path_factory.mktemp("fresh-venv")
    venv.create(root, with_pip=True)
    py = str(root / "bin" / "python")
    r = subprocess.run(
        [py, "-m", "pip", "install", "--quiet", WHEEL], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr
    return py


def cli(py, *args, cwd=None):
    # A PATH with the venv's bin only: no tessera binary can be found, and none is needed.
    env = {k: v for k, v in os.environ.items() if k not in ("TESSERA_BIN", "PYTHONPATH")}
    env["PATH"] = str(pathlib.Path(py).parent) + os.pathsep + "/usr/bin:/bin"
    env["TESSERA_DATA"] = DATA
    return subprocess.run(
        [py, "-m", "tessera", *args], capture_output=True, text=True, timeout=600, env=env, cwd=cwd
    )


def test_the_wheel_ships_no_binary(fresh):
    r = subprocess.run(
        [fresh, "-c", "import tessera, os; print(os.path.dirname(tessera.__file__))"],
        capture_output=True, text=True,
    )
    pkg = pathlib.Path(r.stdout.strip())
    assert (pkg / "__main__.py").exists() and not (pkg / "bin").exists()
    assert shutil.which("tessera", path=str(pathlib.Path(fresh).parent) + ":/usr/bin:/bin") is None


def test_run_helr_from_a_fresh_install(fresh, tmp_path):
    r = cli(fresh, "run", "helr", "--params", "test-program", "--size", "16", "--iterations", "1",
            "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["schema"] == "tessera.run/1" and out["passed"] is True


def test_exit_codes_and_help(fresh, tmp_path):
    bad = cli(fresh, "simulate", "--arch", "nope", cwd=tmp_path)
    assert bad.returncode == 2 and "arch" in bad.stderr
    usage = cli(fresh, "simulate", "--no-such-flag", cwd=tmp_path)
    assert usage.returncode == 2 and "--no-such-flag" in usage.stderr
    help_ = cli(fresh, "--help", cwd=tmp_path)
    assert help_.returncode == 0 and "simulate" in help_.stdout
    ok = cli(fresh, "simulate", "--arch", "ark", "--workload", "hmult", "--params", "test-small",
             "--json", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout.splitlines()[-1])["schema"] == "tessera.simulate/1"
