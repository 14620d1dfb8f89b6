"""Issue 24 item 7 from Python: a cluster count past the simulator's bound is a clear
exception, not an interpreter killed for memory."""

import pytest

import tessera


def test_huge_cluster_count_is_a_clear_error():
    with pytest.raises(tessera.TesseraError, match="chip.clusters"):
        tessera.simulate(arch="ark", workload="hadd", params="test-small",
                         sets=["chip.clusters=1000000000000"])
