"""WMT25's ESA conventions in the stored results (issue 25; docs/methods.md §11.4): the table rules
(`\\cmidrule` where every rank range above ends at or above the line and every range below starts below it) are
stored per system row as `table_rule`, drawn in the LaTeX table and on the results page; and one (item, system,
wave) slot rated twice keeps the later rating, as WMT25's export does, where other presets average."""
import json

import pytest
from django.test import Client

from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results
from evaluation.services.results_read import stored_rows

pytestmark = pytest.mark.django_db

#: Six items, one wave. A is far above everyone, C and B are level (differences −1/+1/0), D far below: every
#: one-sided Wilcoxon between the groups has its 6 differences positive (p = 1/64 < 0.05), C against B has not.
SCORES = {"A": [90, 91, 92, 93, 94, 95], "B": [60, 62, 60, 62, 61, 60], "C": [61] * 6, "D": [30, 31, 32, 33, 34, 35]}


def esa_lines(scores: dict[str, list[float]], rater: str = "r1") -> list[bytes]:
    return [(json.dumps({"system": system, "doc_id": "d1", "seg_id": seg, "rater": rater, "score": score,
                         "spans": [], "target": f"{system} {seg}."}) + "\n").encode()
            for system, values in scores.items() for seg, score in enumerate(values, start=1)]


def with_preset(campaign, preset: str):
    campaign.options = {**campaign.options, "statistics_preset": preset}
    campaign.save(update_fields=["options"])
    compute_results(campaign)
    return {r["system"]: r for r in stored_rows(campaign, "systems")}


def test_wmt25_table_rules_are_stored_drawn_in_latex_and_on_the_page(api, researcher):
    campaign = import_judgments(esa_lines(SCORES), fmt="esa-jsonl", name="WMT25 table", owner=researcher).campaign
    rows = with_preset(campaign, "wmt25-esa")
    # by hand: order A (92.5), C (61), B (60.83), D (32.5); A beats C and B, C and B beat D, C–B not significant.
    # Ranges (walk to the first significant neighbour): A 1–1, C 2–3, B 2–3, D 4–4. Rules: below position 1 (A's
    # range ends at 1, all below start at 2) and below position 3 (ranges above end at ≤ 3, D starts at 4).
    assert [(s, rows[s]["rank"], rows[s]["rank_range"]) for s in "ACBD"] == [
        ("A", 1, [1, 1]), ("C", 2, [2, 3]), ("B", 3, [2, 3]), ("D", 4, [4, 4])]
    assert [rows[s]["table_rule"] for s in "ACBD"] == [True, False, True, False]
    answer = api.get(f"/api/campaigns/{campaign.slug}/systems/").json()["results"]
    assert [(r["system"], r["table_rule"]) for r in answer] == [("A", True), ("C", False), ("B", True), ("D", False)]
    client = Client()
    client.force_login(researcher)
    latex = client.get(f"/results/{campaign.slug}/systems.tex").content.decode()
    body = [line for line in latex.splitlines() if " & " in line or "rule" in line]
    names = [line.split(" & ")[2] if " & " in line else line for line in body]
    assert names == [r"\toprule", "System", r"\midrule", "A", r"\cmidrule{1-5}", "C", "B", r"\cmidrule{1-5}", "D",
                     r"\bottomrule"]
    html = client.get(f"/results/{campaign.slug}/").content.decode()
    assert html.count('<tr class="table-rule"') == 2 and "one of WMT25's table rules" in html
    # the WMT24 preset has no table rules: the field is null, the LaTeX splits clusters with \midrule
    rows = with_preset(campaign, "wmt24-esa")
    assert {r["table_rule"] for r in rows.values()} == {None}
    assert r"\cmidrule" not in client.get(f"/results/{campaign.slug}/systems.tex").content.decode()


def test_wmt25_keeps_the_later_rating_of_a_slot_where_other_presets_average(researcher):
    """A's item 1 is rated 40 by r1 and then 80 by r2 in the same wave; item 2 is rated 60. WMT25 (later wins):
    A = (80 + 60) / 2 = 70 over 2 ratings. WMT24 (each judge's latest, judges averaged per item): (60 + 60) / 2 = 60.
    The same lines in the other order make WMT25 keep the 40: A = 50. A second wave of item 1 is its own slot."""
    first = esa_lines({"A": [40, 60], "B": [50, 50]}, rater="r1")
    later = esa_lines({"A": [80]}, rater="r2")
    campaign = import_judgments(first + later, fmt="esa-jsonl", name="Later wins", owner=researcher).campaign
    rows = with_preset(campaign, "wmt25-esa")
    assert (rows["A"]["score"], rows["A"]["observations"]) == (pytest.approx(70.0), 2)
    rows = with_preset(campaign, "wmt24-esa")
    assert rows["A"]["score"] == pytest.approx(60.0)
    rows = with_preset(campaign, "esa-stouffer")
    assert rows["A"]["score"] == pytest.approx(60.0)
    reversed_order = import_judgments(later + first, fmt="esa-jsonl", name="Earlier wins", owner=researcher).campaign
    assert with_preset(reversed_order, "wmt25-esa")["A"]["score"] == pytest.approx(50.0)
    wave2 = json.loads(later[0])
    waves = import_judgments(first + [(json.dumps({**wave2, "wave": 2}) + "\n").encode()], fmt="esa-jsonl",
                             name="Two waves", owner=researcher).campaign
    rows = with_preset(waves, "wmt25-esa")
    assert (rows["A"]["score"], rows["A"]["observations"]) == (pytest.approx(60.0), 3)
