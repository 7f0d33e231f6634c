"""The annotator benchmark's pure helpers (benchmarks/annotate_*.py): the crowd run's client addresses, the
worker's database URL options, its CPU cgroup, and the CPU-per-judgment figure every mode prints."""
import sys
from pathlib import Path

import environ
import pytest

sys.path.append(str(Path(__file__).resolve().parent.parent / "benchmarks"))  # the scripts import each other by name

from annotate_beside import with_options  # noqa: E402
from annotate_cgroup import CgroupUnavailable, WorkerCgroup  # noqa: E402
from annotate_crowd import source_address  # noqa: E402
from annotate_report import cpu_per_judgment  # noqa: E402


def test_crowd_addresses_are_distinct_loopback_addresses_other_than_127_0_0_1():
    addresses = [source_address(k) for k in range(300)]
    assert len(set(addresses)) == 300
    assert "127.0.0.1" not in addresses
    assert addresses[:2] == ["127.0.0.2", "127.0.0.3"] and addresses[254] == "127.0.1.0"


def test_worker_url_options_reach_the_driver_as_django_environ_parses_them():
    url = with_options("postgres://u:p@127.0.0.1:5432/bench", application_name="annotate-bench-worker",
                       options="-c work_mem=64MB")
    config = environ.Env.db_url_config(url)
    assert config["NAME"] == "bench"
    assert config["OPTIONS"] == {"application_name": "annotate-bench-worker", "options": "-c work_mem=64MB"}


def test_an_empty_option_is_left_out():
    assert with_options("postgres://u:p@h/db", options="") == "postgres://u:p@h/db"


def test_cpu_per_judgment_is_core_seconds_over_judgments_with_the_server_sum():
    cores = {"gunicorn": 1.5, "postgres": 0.5, "client": 0.25}
    ms = cpu_per_judgment(cores, seconds=20.0, judgments=10_000)
    assert ms["gunicorn"] == pytest.approx(3.0) and ms["postgres"] == pytest.approx(1.0)
    assert ms["server"] == pytest.approx(4.0) and ms["total"] == pytest.approx(4.5)
    assert cpu_per_judgment(cores, seconds=20.0, judgments=0) == {}


def _hierarchy(root: Path, version: int) -> Path:
    """A stand-in for /sys/fs/cgroup: v2 with the cpu controller, or v1's cpu hierarchy."""
    if version == 2:
        (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
        (root / "cgroup.subtree_control").write_text("")
        return root
    (root / "cpu").mkdir()
    (root / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    return root / "cpu"


@pytest.mark.parametrize("version, written", [
    (2, {"cpu.max": "50000 100000", "cpu.weight": "20"}),
    (1, {"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "50000", "cpu.shares": "205"}),  # 20 * 1024 / 100
])
def test_the_worker_cgroup_writes_the_quota_and_weight_of_its_kernel_interface(tmp_path, version, written):
    parent = _hierarchy(tmp_path, version)
    group = WorkerCgroup("bench-worker", cores=0.5, weight=20, root=tmp_path)
    group.create()
    assert group.path == parent / "bench-worker" and group.version == version
    assert {name: (group.path / name).read_text() for name in written} == written
    if version == 2:
        assert (tmp_path / "cgroup.subtree_control").read_text() == "+cpu"  # handed down to the children
    argv = group.wrap(["celery", "-A", "config", "worker"])
    assert argv[:2] == ["sh", "-c"] and str(group.path / "cgroup.procs") in argv[2] and argv[-4:] == [
        "celery", "-A", "config", "worker"]


def test_a_weight_alone_leaves_the_quota_unlimited_and_no_hierarchy_is_a_clear_error(tmp_path):
    _hierarchy(tmp_path, 2)
    assert WorkerCgroup("w", weight=50, root=tmp_path).settings() == {"cpu.max": "max 100000", "cpu.weight": "50"}
    with pytest.raises(CgroupUnavailable, match="no cgroup v2 cpu controller"):
        WorkerCgroup("w", cores=0.5, root=tmp_path / "nothing-here")
    with pytest.raises(ValueError):
        WorkerCgroup("w", weight=20_000, root=tmp_path)
