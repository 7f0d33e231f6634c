"""The ESA^AI simulation (benchmarks/esa_ai.py) at a tiny size: one command prints the table for every rate, with
the budget saved growing as the rate falls, no bias at full judging, and a usage error for a rate out of range."""
import pytest

from benchmarks import esa_ai


def test_the_simulation_runs_and_prints_its_table(capsys):
    assert esa_ai.main(["--repetitions", "3", "--segments", "200", "--out", ""]) == 0
    out = capsys.readouterr().out
    assert "false sep." in out and "recommended rate" in out
    rows = [line.split() for line in out.splitlines() if line.strip()[:3] in ("1.0", "0.5", "0.3", "0.2", "0.1")]
    assert [r[0] for r in rows] == ["1.0", "0.5", "0.3", "0.2", "0.1"]
    saved = [float(r[1].rstrip("%")) for r in rows]
    assert saved[0] == 0 and saved == sorted(saved) and saved[-1] > 20
    assert float(rows[0][2]) == 0  # full judging against itself


def test_a_rate_out_of_range_is_a_usage_error():
    with pytest.raises(SystemExit):
        esa_ai.main(["--rates", "1,0", "--out", ""])
    with pytest.raises(SystemExit):  # recall 0.9 with precision 0.5 needs more errors than the systems make
        esa_ai.main(["--recall", "0.9", "--precision", "0.5", "--out", ""])
