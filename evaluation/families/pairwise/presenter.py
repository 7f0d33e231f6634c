"""The pairwise section of the results page: preferences per condition, raters and their spam items, agreement."""
from __future__ import annotations

from collections.abc import Mapping

from annotation.protocols.pairwise import DEFAULT_MAX_SPAM_MISS_RATE

from ... import charts
from ...models import CampaignResults, PairwiseResult, WorkerResult
from ...presenters.formatting import fixed, percent
from ...services.latex import booktabs
from .serializers import PairwiseResultSerializer, RaterSerializer

CONDITION_ORDER = [("adequacy", "sentence"), ("adequacy", "document"), ("fluency", "sentence"),
                   ("fluency", "document")]
PLACEHOLDERS = ["first system", "second system"]


def pairwise_rows(campaign) -> list[PairwiseResult]:
    return list(PairwiseResult.objects.filter(campaign=campaign).order_by("criterion", "unit", "rater"))


def spam_record(rows: list[PairwiseResult]) -> dict[int, tuple[int, int]]:
    """Per annotator id, spam items (seen, missed) over every condition."""
    record: dict[int, tuple[int, int]] = {}
    for r in rows:
        if r.rater:
            seen, missed = record.get(r.annotator_id, (0, 0))
            record[r.annotator_id] = (seen + r.spam_seen, missed + r.spam_missed)
    return record


def rater_rows(campaign, rows: list[PairwiseResult] | None = None) -> list[dict]:
    workers = WorkerResult.objects.filter(campaign=campaign).order_by("worker", "annotator_id")
    spam = spam_record(pairwise_rows(campaign) if rows is None else rows)
    return list(RaterSerializer(workers, many=True, context={"spam": spam}).data)


def compared_systems(campaign, summary: dict) -> tuple[str, str]:
    systems = campaign.options.get("systems") or summary.get("systems") or PLACEHOLDERS
    first, second = (list(systems) + PLACEHOLDERS)[:2]
    return first, second


def conditions(rows: list[PairwiseResult], agreement: dict) -> list[dict]:
    """Per condition the totals, the sign tests, agreement and the raters, in the paper's order."""
    found: dict[tuple[str, str], dict] = {}
    for r in rows:
        if not r.rater:
            found[(r.criterion, r.unit)] = {
                "criterion": r.criterion, "unit": r.unit, "label": f"{r.criterion} · {r.unit}", "a": r.a, "t": r.t,
                "b": r.b, "x": r.x, "n": r.n, "p": r.p_value, "p_es": r.p_value_emerson_simon,
                "spam_seen": r.spam_seen, "spam_missed": r.spam_missed, "spam_missed_ties": r.spam_missed_ties,
                "agreement": agreement.get(f"{r.criterion}/{r.unit}", {}), "raters": []}
    for r in rows:
        if r.rater and (r.criterion, r.unit) in found:
            found[(r.criterion, r.unit)]["raters"].append(r)
    order = {key: i for i, key in enumerate(CONDITION_ORDER)}
    return [found[k] for k in sorted(found, key=lambda k: order.get(k, len(order)))]


def _condition_display(c: dict) -> dict:
    total = c["a"] + c["t"] + c["b"]
    agreement = c["agreement"]
    return {
        "total": total, "stars": charts.stars(c["p"]), "p_text": charts.format_p(c["p"]),
        "p_es_text": charts.format_p(c["p_es"]),
        "shares": [f"{100 * v / total:.1f}" if total else "–" for v in (c["a"], c["t"], c["b"])],
        "kappa_text": fixed(agreement.get("kappa")), "fleiss_text": fixed(agreement.get("fleiss_kappa")),
        "p_agree_text": fixed(agreement.get("p_agree")), "p_expected_text": fixed(agreement.get("p_expected")),
        "landis_koch": agreement.get("landis_koch") or "–", "pairs": agreement.get("pairs"),
        "majority": agreement.get("majority", {}),
        "raters_display": [{"rater": r.rater, "a": r.a, "t": r.t, "b": r.b, "x": r.x, "n": r.n,
                            "p": charts.format_p(r.p_value), "stars": charts.stars(r.p_value),
                            "spam_seen": r.spam_seen, "spam_missed": r.spam_missed, "excluded": r.excluded}
                           for r in c["raters"]],
    }


def page_context(campaign, header, workers: list[dict]) -> dict:
    summary = header.summary if header else {}
    first, second = compared_systems(campaign, summary)
    shown = conditions(pairwise_rows(campaign), header.agreement if header else {})
    for c in shown:
        c.update(_condition_display(c))
    # The campaign's own limit until a computation stores it: the page states it before any result.
    limit = float(summary.get("max_spam_miss_rate",
                              campaign.options.get("max_spam_miss_rate", DEFAULT_MAX_SPAM_MISS_RATE)))
    bars = [{"label": r["worker"], "rate": r["spam_miss_rate"], "seen": r["spam_seen"], "missed": r["spam_missed"],
             "excluded": not r["reliable"]} for r in workers]
    return {
        "first": first, "second": second, "conditions": shown, "max_spam_miss_rate": limit,
        "preference_svg": charts.preference_bars(shown, first=first, second=second,
                                                 title=f"Preference per condition: {first} / tie / {second}"),
        "workers": [{**r, "seconds_text": fixed(r["mean_seconds"], 1), "miss_text": percent(r["spam_miss_rate"])}
                    for r in workers],
        "scatter": charts.rate_bars(bars, title="Share of spam items missed per rater", threshold=limit),
        "not_plotted": sum(1 for b in bars if b["rate"] is None),
    }


# Tables ----------------------------------------------------------------------------------------

def pairwise_table(campaign, params: Mapping[str, str]):
    rows = PairwiseResultSerializer(pairwise_rows(campaign), many=True).data
    return list(PairwiseResultSerializer.Meta.fields), rows


def pairwise_latex(campaign, params: Mapping[str, str]) -> str:
    """Per condition the preference counts and the two-sided sign test, as a booktabs table."""
    header = CampaignResults.objects.filter(campaign=campaign).only("summary").first()
    first, second = compared_systems(campaign, header.summary if header else {})
    rows = [{**c, "stars_p": f"{charts.format_p(c['p'])}{charts.stars(c['p'])}"}
            for c in conditions(pairwise_rows(campaign), {})]
    columns = [("Condition", "label", "l"), (first, "a", "r"), ("Tie", "t", "r"), (second, "b", "r"),
               ("n", "n", "r"), ("p (sign test)", "stars_p", "r")]
    return booktabs(columns, rows, caption=f"{campaign.name}: preferences per condition, spam items and excluded "
                                           "raters left out")


AGREEMENT_COLUMNS = ["condition", "pairs", "p_agree", "p_expected", "kappa", "fleiss_kappa", "landis_koch",
                     "majority_a", "majority_t", "majority_b", "majority_items"]


def agreement_table(campaign, params: Mapping[str, str]):
    header = CampaignResults.objects.filter(campaign=campaign).only("agreement").first()
    rows = []
    for condition, a in (header.agreement if header else {}).items():
        majority = a.get("majority", {})
        rows.append({"condition": condition, "pairs": a.get("pairs"), "p_agree": a.get("p_agree"),
                     "p_expected": a.get("p_expected"), "kappa": a.get("kappa"), "fleiss_kappa": a.get("fleiss_kappa"),
                     "landis_koch": a.get("landis_koch"), "majority_a": majority.get("a"),
                     "majority_t": majority.get("t"), "majority_b": majority.get("b"),
                     "majority_items": majority.get("items")})
    return AGREEMENT_COLUMNS, rows


def api_conditions(campaign) -> dict:
    """The body of `pairwise/`: per condition the totals with agreement, and the raters."""
    header = CampaignResults.objects.filter(campaign=campaign).only("agreement").first()
    agreement = header.agreement if header else {}
    found = {}
    for row in pairwise_rows(campaign):
        key = f"{row.criterion}/{row.unit}"
        counts = {"a": row.a, "b": row.b, "t": row.t}
        spam = {"spam_seen": row.spam_seen, "spam_missed": row.spam_missed, "spam_missed_ties": row.spam_missed_ties}
        if not row.rater:
            found[key] = {"criterion": row.criterion, "unit": row.unit, **counts, "x": row.x, "n": row.n,
                          "p_value": row.p_value, "p_value_emerson_simon": row.p_value_emerson_simon, **spam,
                          **agreement.get(key, {}), "raters": []}
        else:
            found[key]["raters"].append({"rater": row.rater, **counts, "x": row.x, "n": row.n,
                                         "p_value": row.p_value, **spam, "excluded": row.excluded})
    return {"systems": campaign.options.get("systems", []), "conditions": list(found.values())}
