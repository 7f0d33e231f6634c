"""The annotator benchmark's pure helpers (benchmarks/annotate_*.py): the crowd run's client addresses, the
worker's database URL options, and the CPU-per-judgment figure every mode prints."""
import sys
from pathlib import Path

import environ
import pytest

sys.path.append(str(Path(__file__).resolve().parent.parent / "benchmarks"))  # the scripts import each other by name

from annotate_beside import with_options  # noqa: E402
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
