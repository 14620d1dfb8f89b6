"""A design sweep on a local Ray cluster equals the in-process one (issue 26 item 3)."""

import pytest

import tessera

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'ray>=2'); CI installs it")


def test_ray_sweep_equals_in_process(tmp_path):
    grid = {"chip.clusters": [1, 2, 4], "arch": ["ark", "reed"]}
    local = tessera.sweep("ark", "hmult", "test-small", grid=grid)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        out = tmp_path / "r.jsonl"
        dist = tessera.sweep("ark", "hmult", "test-small", grid=grid, executor="ray", out=str(out))
        assert dist.table() == local.table() and not dist.errors
        assert [r.to_dict() for r in dist] == [r.to_dict() for r in local]
        # A failed point is reported without losing the others; a rerun skips the done ones.
        bad = dict(grid, **{"chip.clusters": [1, 2, 4, 0]})
        more = tessera.sweep("ark", "hmult", "test-small", grid=bad, executor="ray", out=str(out))
        assert more.skipped == 6 and len(more) == 6 and len(more.errors) == 2
    finally:
        ray.shutdown()


def test_ray_multi_workload_sweep_equals_in_process(tmp_path):
    """Several workloads and parameter sets: each recording is put in the object store once
    and the distributed table equals the in-process one."""
    grid = {"chip.clusters": [1, 2]}
    args = dict(arch="ark", workload=["hadd", "hmult"], params=["test-small", "test-medium"], grid=grid)
    local = tessera.sweep(**args)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        dist = tessera.sweep(**args, executor="ray")
        assert len(dist) == 8 and not dist.errors
        assert dist.keys == ["chip.clusters", "workload", "params"]
        assert [r.to_dict() for r in dist] == [r.to_dict() for r in local]
    finally:
        ray.shutdown()
