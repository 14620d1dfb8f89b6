"""The programs as functions (issue 20 item 5, issue 26 item 2): run encrypted, checked
against the plaintext replica, with timings and op counts; and the same program simulated."""

import os
import pathlib

import pytest

import tessera

# The data directory: $TESSERA_DATA, else the shared one next to the repository.
DATA = os.environ.get("TESSERA_DATA") or str(pathlib.Path(__file__).resolve().parents[4] / "shared" / "data")


def test_helr_runs_and_checks_itself():
    r = tessera.programs.run("helr", size=16, params="test-program", iterations=2, data=DATA)
    assert r.passed and r.program == "helr" and r.params == "test-program"
    w = r.check("max |w - w_replica|")
    assert w.passed and w.value < 1e-3
    assert r.timings["compute_s"] > 0 and set(r.timings) >= {"keygen_s", "encrypt_s", "decrypt_s"}
    assert r.op_counts["HMult"] > 0 and r.op_counts["HRot"] > 0
    assert r.to_dict()["program"] == "helr"
    # The same program, recorded on the trace backend and simulated on ARK.
    rep = tessera.simulate("ark", "helr", "test-program", size=16)
    assert rep.time_s > 0 and "helr" in rep.workload


def test_streamed_key_switching_computes_the_same_program():
    # One digit at a time (reed.md Algorithm 3) against all digits first: the same weights.
    runs = [
        tessera.programs.run(
            "helr", size=16, params="test-program", iterations=2, data=DATA, streamed_keyswitch=s
        )
        for s in (False, True)
    ]
    w = [r.check("max |w - w_replica|").value for r in runs]
    assert runs[1].passed and w[0] == w[1]
    assert any("streamed key switching" in n for n in runs[1].notes)
    # Recorded that way, the same window keeps less on chip.
    b, s = (
        tessera.simulate("ark", "helr", "test-program", size=16, streamed_keyswitch=k)
        for k in (False, True)
    )
    assert s["peak_onchip_bytes"] < b["peak_onchip_bytes"]


def test_program_errors_are_exceptions():
    with pytest.raises(tessera.TesseraError, match="program"):
        tessera.programs.run("nope")
    with pytest.raises(tessera.TesseraError, match="iterations"):
        tessera.programs.run("lola", iterations=3, data=DATA)
    with pytest.raises(tessera.TesseraError, match="first"):
        tessera.programs.run("helr", first=2, data=DATA)


def test_resnet_runs_from_a_chosen_image():
    r = tessera.programs.run("resnet20", size=1, params="test-program", data=DATA, first=931)
    assert r.passed and r.size == 1
    assert "from index 931" in r.to_dict()["notes"][0]
    with pytest.raises(tessera.TesseraError, match="0 to 931"):
        tessera.programs.run("resnet20", size=1, params="test-program", data=DATA, first=932)
    names = tessera.programs.names()
    assert {"helr", "lola", "logreg", "linreg", "sort", "cryptonets", "lr-inference"} <= set(names)
    assert len(names) == len(set(names))


def test_resnet_with_of_limb_encodes_its_plaintexts_once():
    r = tessera.programs.run("resnet20", size=2, params="test-program", data=DATA, of_limb=True)
    assert r.passed
    assert r.check("plaintexts from the memo").value >= r.check("plaintexts encoded").value > 0
    assert any("OF-Limb" in n for n in r.to_dict()["notes"])
    with pytest.raises(tessera.TesseraError, match="no bootstrapping circuit"):
        tessera.programs.run("lola", size=1, data=DATA, of_limb=True)
