"""Tests of the peer-summary parsing and issue 22's verdicts (scripts/peers.py), on the raw
outputs committed under docs/cpu-runs and on synthetic summaries that miss each target."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
ROOT = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)

import peers  # noqa: E402

RUNS = os.path.join(ROOT, "docs", "cpu-runs")


def run_file(name):
    return os.path.join(RUNS, name)


def write(tmp_path, name, rows):
    p = tmp_path / name
    p.write_text("progress line that is not JSON\n" + "\n".join(json.dumps(r) for r in rows) + "\n")
    return str(p)


def boot(share, bits=20.9, levels=8, mem=11.0, peer_mem=19.0, peer_bits=20.3, peer_levels=8):
    return {"op": "bootstrap", "tessera_median_s": 4.0 * share, "openfhe_median_s": 4.0,
            "tessera_share_of_openfhe": share, "tessera_precision_bits": bits,
            "openfhe_precision_bits": peer_bits, "tessera_levels_left": levels,
            "openfhe_levels_left": peer_levels, "tessera_peak_rss_gb": mem, "openfhe_peak_rss_gb": peer_mem,
            "kernel": "avx2", "cpu": "Test CPU"}


def test_session_46_outputs_give_their_documented_ratios():
    rows = peers.rows([run_file("s46-ntt-peers-avx512-near.txt"),
                       run_file("s46-ckks-peers-avx2-final.txt"),
                       run_file("s46-boot-peers-avx2-final.txt"),
                       run_file("s46-ntt-median-avx2.txt")])
    lines, misses = peers.table(rows)
    text = "\n".join(lines)
    assert misses == 0
    # docs/benchmarks.md, "Where it stands (session 46)".
    assert "| NTT 60-bit vs Lattigo | avx512 | 167.4 us | Lattigo 844.8 us | 5.05x | 5x | met (+0.9 %) |" in text
    assert "| HMult vs OpenFHE | avx2 | 54.6 ms | OpenFHE 209.1 ms | 3.83x | 3x |" in text
    assert "| HRot vs OpenFHE | avx2 | 49.2 ms |" in text
    assert "bootstrapping vs OpenFHE | avx2 | 4.46 s, 20.95 bits" in text
    assert "| NTT 60-bit forward vs tfhe-ntt (avx2 plan) | avx2 | 277.1 us | tfhe-ntt 395.1 us | 1.43x | 1x |" in text
    assert peers.cpus(rows) == ["AMD EPYC (family 25, model 17)"]


def test_each_target_can_be_missed(tmp_path):
    f = write(tmp_path, "miss.txt", [
        {"op": "ntt_peer_summary", "tessera_median_s": 2e-4, "lattigo_median_s": 9e-4,
         "speedup_vs_lattigo": 4.5, "kernel": "avx512", "cpu": "Test CPU"},
        {"op": "hmult", "tessera_median_s": 0.1, "openfhe_median_s": 0.29, "speedup": 2.9,
         "kernel": "avx2", "cpu": "Test CPU"},
        boot(0.45),
    ])
    lines, misses = peers.table(peers.rows([f]))
    text = "\n".join(lines)
    assert misses == 3
    assert "| 4.50x | 5x | MISSED (-10.0 %) |" in text
    assert "| 2.90x | 3x | MISSED (-3.3 %) |" in text
    assert "MISSED" in [l for l in lines if "bootstrapping vs" in l][0]


def test_bootstrapping_needs_precision_levels_and_memory(tmp_path):
    for bad in (boot(0.2, bits=19.5, peer_bits=19.0), boot(0.2, levels=7, peer_levels=6),
                boot(0.2, levels=7), boot(0.2, bits=20.1, peer_bits=20.3)):
        lines, misses = peers.table(peers.rows([write(tmp_path, "b.txt", [bad])]))
        assert misses == 1, lines
    lines, misses = peers.table(peers.rows([write(tmp_path, "m.txt", [boot(0.2, mem=20.0)])]))
    assert misses == 1
    assert "MISSED" in [l for l in lines if "peak memory" in l][0]
    lines, misses = peers.table(peers.rows([write(tmp_path, "ok.txt", [boot(0.2)])]))
    assert misses == 0


def test_the_avx2_ntt_has_no_lattigo_target_and_a_later_summary_wins(tmp_path):
    row = {"op": "ntt_peer_summary", "tessera_median_s": 3e-4, "lattigo_median_s": 9e-4,
           "speedup_vs_lattigo": 3.0, "kernel": "avx2", "cpu": "Test CPU"}
    later = dict(row, speedup_vs_lattigo=3.5, tessera_median_s=9e-4 / 3.5)
    lines, misses = peers.table(peers.rows([write(tmp_path, "a.txt", [row, later])]))
    assert misses == 0
    assert "| 3.50x | - | reported (no target) |" in "\n".join(lines)


def test_a_file_without_json_is_an_error(tmp_path):
    p = tmp_path / "empty.txt"
    p.write_text("no summary here\n")
    with pytest.raises(ValueError, match="no JSON line"):
        peers.rows([str(p)])


def test_host_verdict_reads_a_directory(tmp_path):
    write(tmp_path, "ckks-peers-avx2.txt", [
        {"op": "hrot", "tessera_median_s": 0.05, "openfhe_median_s": 0.17, "speedup": 3.4,
         "kernel": "avx2", "cpu": "Test CPU"}])
    (tmp_path / "info.log").write_text("not read\n")
    out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "host-verdict.py"), str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert "CPU: Test CPU" in out and "| HRot vs OpenFHE | avx2 |" in out and "1 rows, 0 missed" in out


def test_host_verdict_names_an_empty_directory(tmp_path):
    (tmp_path / "info.log").write_text("not read\n")
    r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "host-verdict.py"), str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "no raw outputs (*.txt) in" in r.stderr


def ckks(params, speedup, bits=36.4, op="hrot"):
    return {"op": op, "params": params, "tessera_median_s": 0.1 / speedup, "openfhe_median_s": 0.1,
            "speedup": speedup, "tessera_precision_bits": bits, "kernel": "avx2", "cpu": "Test CPU"}


def test_the_faster_preset_is_chosen_per_kernel_and_only_it_counts(tmp_path):
    f = write(tmp_path, "two.txt", [ckks("ark", 2.9), ckks("ark-p50", 3.3)])
    lines, misses = peers.table(peers.rows([f]))
    text = "\n".join(lines)
    assert misses == 0
    assert "| HRot vs OpenFHE (ark-p50) | avx2 | 30.3 ms, 36.4 bits | OpenFHE 100.0 ms | 3.30x | 3x | met (+10.0 %) |" in text
    assert "| HRot vs OpenFHE (ark) | avx2 | 34.5 ms, 36.4 bits | OpenFHE 100.0 ms | 2.90x | 3x | not counted (ark-p50 chosen on this kernel): MISSED (-3.3 %) |" in text
    # Both below the target: the chosen one's miss counts, once.
    lines, misses = peers.table(peers.rows([write(tmp_path, "low.txt", [ckks("ark", 2.7), ckks("ark-p50", 2.9)])]))
    assert misses == 1
    assert peers.summaries(peers.rows([f]))[("hrot", "avx2")]["params"] == "ark-p50"


def test_precision_within_the_run_to_run_spread_counts_as_equal(tmp_path):
    f = write(tmp_path, "spread.txt", [ckks("ark", 3.1, bits=36.433), ckks("ark-p50", 3.4, bits=36.427)])
    assert peers.summaries(peers.rows([f]))[("hrot", "avx2")]["params"] == "ark-p50"


def test_a_less_precise_preset_is_not_chosen(tmp_path):
    f = write(tmp_path, "imprecise.txt", [ckks("ark", 2.9), ckks("ark-p50", 3.3, bits=30.0)])
    lines, misses = peers.table(peers.rows([f]))
    assert misses == 1
    assert "not counted (ark chosen on this kernel): met" in "\n".join(lines)
