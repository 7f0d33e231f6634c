"""Results that reproduce WMT's conventions exactly: order independence, the same figures on SQLite and
PostgreSQL, studies that pool a worker's pairs, the threshold rule and the presets (docs/methods.md §4-§5)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from scipy import stats as sps

from annotation.services.judgment_import import import_judgments
from evaluation import reliability_tests
from evaluation.analyses import compute_results
from evaluation.families.direct_assessment.analysis import DAJudgments, analyse
from evaluation.families.direct_assessment.storage import load_judgments

from .test_results_pages import WMT_HEADER, da_lines

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[1]


def _shuffled(data: DAJudgments, seed: int) -> DAJudgments:
    order = np.random.default_rng(seed).permutation(len(data))
    return DAJudgments(**{k: getattr(data, k)[order] for k in ("judgment_id", "annotator_id", "assignment",
                                                                "item_type", "system", "segment", "output", "score",
                                                                "seconds")}, system_names=data.system_names)


def _figures(analysis):
    out = {"p": analysis.p_value.tolist(), "reliable": analysis.reliable.tolist()}
    for workers, table in analysis.systems.items():
        out[workers] = {"mean_z": table.scores.mean_z.tolist(), "mean_raw": table.scores.mean_raw.tolist(),
                        "p": table.significance.p.tolist(), "rank": table.clusters.rank.tolist(),
                        "cluster": table.clusters.cluster.tolist(), "rank_low": table.clusters.rank_low.tolist(),
                        "rank_high": table.clusters.rank_high.tolist()}
    return json.dumps(out)  # NaN-safe, bit-exact comparison of every float's repr


def test_results_do_not_depend_on_the_order_rows_arrive_in():
    campaign = import_judgments(da_lines(careful=5, clickers=2, segments=24, systems=("A", "B", "C", "D")),
                                fmt="wmt-da", name="Order").campaign
    data = load_judgments(campaign)
    expected = _figures(analyse(data))
    for seed in range(3):
        assert _figures(analyse(_shuffled(data, seed))) == expected


WORKER_ROWS = {
    # (campaign, worker): (system, sid, original score, bad-reference score) per pair.
    "one": [(0, 1, 70, 60), (1, 2, 65, 35), (0, 3, 80, 78)],
    "two": [(1, 4, 72, 60), (0, 5, 61, 33), (1, 6, 75, 71)],
}


def _study_file(part: str, careful: int = 3) -> list[bytes]:
    """A wmt-da file: careful workers with plenty of clear pairs, and worker "pooled" with three modest ones."""
    lines, n = [WMT_HEADER], 0

    def add(worker, system, sid, kind, score):
        nonlocal n
        n += 1
        lines.append("\t".join(map(str, [f"H-{worker}-{part}", worker, "de", "en", n, 1, f"sys-{system}", n, kind,
                                          sid, score, 10])))

    for w in range(careful):
        for sid in range(1, 13):
            for system in range(3):
                score = 80 - 15 * system + (sid * 7 + w * 3) % 11
                add(f"careful-{w}", system, sid, "SYSTEM", score)
                if sid % 3 == 0:
                    add(f"careful-{w}", system, sid, "BAD_REF", score - 30 - (sid % 5))
    for system, sid, original, bad in WORKER_ROWS[part]:
        add("pooled", system, sid, "SYSTEM", original)
        add("pooled", system, sid, "BAD_REF", bad)
    return [(line + "\n").encode() for line in lines]


def test_a_worker_passes_only_when_pooled_over_the_study(api, researcher):
    diffs = {part: [bad - orig for _, _, orig, bad in rows] for part, rows in WORKER_ROWS.items()}
    alone = {part: sps.ttest_1samp(d, 0, alternative="less").pvalue for part, d in diffs.items()}
    pooled_p = sps.ttest_1samp(diffs["one"] + diffs["two"], 0, alternative="less").pvalue
    assert min(alone.values()) >= 0.05 > pooled_p  # the data make the point
    campaigns = [import_judgments(_study_file(part), fmt="wmt-da", name=f"Study {part}", study="WMT test",
                                  owner=researcher).campaign for part in ("one", "two")]
    alone_campaign = import_judgments(_study_file("one"), fmt="wmt-da", name="Alone", owner=researcher).campaign
    compute_results(campaigns[0])  # computes the whole study
    compute_results(alone_campaign)
    for campaign in campaigns:
        body = api.get(f"/api/campaigns/{campaign.slug}/workers/").json()["results"]
        pooled = next(w for w in body if w["worker"] == "pooled")
        assert pooled["reliable"] is True and pooled["pairs"] == 6
        assert pooled["p_value"] == pytest.approx(pooled_p, rel=1e-12)
        assert api.get(f"/api/campaigns/{campaign.slug}/").json()["study"] == "wmt-test"
    alone_body = api.get(f"/api/campaigns/{alone_campaign.slug}/workers/").json()["results"]
    alone_row = next(w for w in alone_body if w["worker"] == "pooled")
    assert alone_row["reliable"] is False and alone_row["pairs"] == 3
    assert alone_row["p_value"] == pytest.approx(alone["one"], rel=1e-12)
    study = api.get("/api/studies/wmt-test/").json()
    assert [c["slug"] for c in study["campaigns"]] == sorted(c.slug for c in campaigns)
    verdicts = next(w for w in study["workers"] if w["worker"] == "pooled")["campaigns"]
    assert {v["reliable"] for v in verdicts.values()} == {True} and len(verdicts) == 2


def test_the_study_page_lists_campaigns_and_workers(client, researcher):
    for part in ("one", "two"):
        compute_results(import_judgments(_study_file(part), fmt="wmt-da", name=f"Page {part}",
                                         study="Page study", owner=researcher).campaign)
    client.force_login(researcher)
    html = client.get("/results/study/page-study/").content.decode()
    assert "Page one" in html and "Page two" in html and html.count("✓ reliable") >= 8


def _fixed_p(value):
    def run(pairs, threshold):
        p = np.full(pairs.n_workers, value)
        return p, np.bincount(pairs.worker[pairs.bad], minlength=pairs.n_workers), p < threshold
    return run


@pytest.mark.parametrize("rule, reliable", [("lt", False), ("le", True)])
def test_the_threshold_rule_decides_a_p_value_equal_to_the_threshold(rule, reliable, api, researcher):
    reliability_tests.register(reliability_tests.ReliabilityTest("fixed-0.05", "p = 0.05 for everyone", 0.05,
                                                                 "test", _fixed_p(0.05)))
    try:
        campaign = import_judgments(_study_file("one"), fmt="wmt-da", name=f"Rule {rule}", owner=researcher).campaign
        campaign.qc_test = "fixed-0.05"
        campaign.options = {**campaign.options, "threshold_rule": rule}
        campaign.save()
        compute_results(campaign)
    finally:
        reliability_tests.unregister("fixed-0.05")
    workers = api.get(f"/api/campaigns/{campaign.slug}/workers/").json()["results"]
    assert {w["reliable"] for w in workers} == {reliable}


def test_each_campaign_says_which_preset_it_used(api, researcher):
    campaign = import_judgments(_study_file("two"), fmt="wmt-da", name="Presets", owner=researcher).campaign
    compute_results(campaign)
    conventions = api.get(f"/api/campaigns/{campaign.slug}/systems/").json()["conventions"]
    assert conventions["preset"] == "wmt21-da" and conventions["differs_from_preset"] == []
    assert (conventions["test"], conventions["threshold"], conventions["threshold_rule"],
            conventions["cluster_rule"], conventions["scope"]) == ("paired-t", 0.05, "lt", "wmt", "study")
    campaign.options = {**campaign.options, "statistics_preset": "appraise"}
    campaign.qc_test, campaign.qc_threshold = "appraise", 0.01
    campaign.save()
    compute_results(campaign)
    conventions = api.get(f"/api/campaigns/{campaign.slug}/systems/").json()["conventions"]
    assert (conventions["preset"], conventions["test"], conventions["threshold_rule"]) == ("appraise", "appraise",
                                                                                            "le")


def _dump_elsewhere(database_url: str, path: Path, tmp_path: Path) -> dict:
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "1"}
    env.pop("CELERY_BROKER_URL", None)
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput"], env=env, check=True, capture_output=True, timeout=300)
    imported = subprocess.run([*manage, "import_judgments", str(path), "--format", "wmt-da", "--name", "Both"],
                              env=env, check=True, capture_output=True, text=True, timeout=300)
    slug = json.loads(imported.stdout)["campaign"]
    out = subprocess.run([*manage, "compute_results", slug, "--json"], env=env, check=True, capture_output=True,
                         text=True, timeout=300)
    return json.loads(out.stdout)


def _comparable(body: dict) -> dict:
    """The figures, without what differs by run (times, slugs)."""
    return {"systems": body["systems"], "workers": body["workers"],
            "significance": {k: body["significance"][k] for k in ("systems", "p_values", "stars", "workers")}}


def test_the_same_judgments_give_identical_results_on_sqlite_and_postgresql(tmp_path, capsys):
    if connection.vendor != "postgresql":
        pytest.skip("runs where the test database is PostgreSQL (CI), comparing it with a SQLite subprocess")
    path = tmp_path / "da.tsv"
    path.write_bytes(b"".join(da_lines(careful=5, clickers=2, segments=30, systems=("A", "B", "C", "D", "E"))))
    campaign = import_judgments(path.read_bytes().splitlines(keepends=True), fmt="wmt-da", name="Both").campaign
    call_command("compute_results", campaign.slug, "--json")
    here = json.loads(capsys.readouterr().out)
    there = _dump_elsewhere(f"sqlite:///{tmp_path / 'other.sqlite3'}", path, tmp_path)
    assert _comparable(here) == _comparable(there)
    assert len(here["systems"]["reliable"]) == 5 and here["significance"]["p_values"]
