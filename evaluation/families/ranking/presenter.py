"""The ranking section of the results page and its tables: systems per score with rank ranges and clusters,
the head-to-head win rates, gold accuracy against time per worker, agreement, Schulze-combined scores and
Spearman's rho against the researcher's reference ranking."""
from __future__ import annotations

from collections.abc import Mapping

from ... import charts
from ...presenters.formatting import fixed, percent
from ...services.latex import systems_booktabs as booktabs_systems
from ...services.results_read import stored_rows, stored_table
from ..base import BadQuery
from .analysis import DEFAULT_SCORE, SCORE_NAMES

SCORE_LABELS = {
    "expected_wins": "Expected wins (|S| − 1 opponents; WMT13, TrueSkill repository's infer_EW)",
    "expected_wins_compared": "Expected wins (opponents compared; WMT10–12 scripts)",
    "geq_others": "≥ others (Callison-Burch 2009; WMT08–10)",
    "gt_others": "> others (Paul & Sumita 2011; WMT11–12)",
    "trueskill": "TrueSkill μ (Sakaguchi et al. 2014; WMT14–16)",
}


def score_param(params: Mapping[str, str]) -> str:
    name = params.get("score") or DEFAULT_SCORE
    if name not in SCORE_NAMES:
        raise BadQuery(f"score must be one of {', '.join(SCORE_NAMES)}")
    return name


#: The headers of the ranking's stored tables, for their downloads when a pilot has no rows yet (storage.py).
SYSTEMS_COLUMNS = ("system", "score", "score_name", "n", "rank", "rank_range", "cluster", "low", "high", "wins",
                   "ties", "losses")
HEAD_TO_HEAD_COLUMNS = ("system", "opponent", "win_rate", "wins", "losses", "ties")
GOLD_COLUMNS = ("worker", "gold", "gold_correct", "gold_accuracy", "trusted", "status", "counted",
                "agreement_with_others", "mean_seconds", "rankings")
AGREEMENT_COLUMNS = ("pairing", "kind", "comparisons", "agreements", "p_agree", "p_tie", "p_expected_uniform",
                     "kappa_uniform", "p_expected_ties", "kappa_ties")
COMBINED_COLUMNS = ("system", "combination", "n")
SPEARMAN_COLUMNS = ("score_name", "rho", "p_value", "n")


def systems_table(campaign, params: Mapping[str, str]):
    name = score_param(params)
    columns, rows = stored_table(campaign, "systems", name)
    return columns or list(SYSTEMS_COLUMNS), rows


def systems_latex(campaign, params: Mapping[str, str]) -> str:
    """One score's ranking (`score=`, default expected wins) as a booktabs table, clusters split by rules."""
    name = score_param(params)
    return booktabs_systems(stored_rows(campaign, "systems", name), name.replace("_", " ").capitalize(),
                            f"{campaign.name}: {SCORE_LABELS[name]}", digits=3)


def _chart_rows(rows: list[dict]) -> list[dict]:
    return [{"label": r["system"], "cluster": r.get("cluster"), "is_reference": r["system"] == "_ref",
             "score": (r["score"], r.get("low"), r.get("high"))} for r in rows]


def page_context(campaign, header, workers: list[dict], request) -> dict:
    summary = header.summary if header else {}
    chosen = request.GET.get("score") if request is not None else None
    chosen = chosen if chosen in SCORE_NAMES else summary.get("default_score", DEFAULT_SCORE)
    scores = []
    for name in SCORE_NAMES:
        rows = stored_rows(campaign, "systems", name)
        scores.append({"name": name, "label": SCORE_LABELS[name], "rows": rows, "chosen": name == chosen,
                       "chart": charts.ranking_chart(_chart_rows(rows), title=SCORE_LABELS[name],
                                                     panels=(("score", name.replace("_", " ")),), width=560)})
    order = [r["system"] for r in stored_rows(campaign, "systems", chosen)]
    position = {name: i for i, name in enumerate(order)}
    n = len(order)
    rates = [[None] * n for _ in range(n)]
    counts = [[(0, 0, 0)] * n for _ in range(n)]
    for row in stored_rows(campaign, "head_to_head"):
        i, j = position.get(row["system"]), position.get(row["opponent"])
        if i is not None and j is not None:
            rates[i][j] = row["win_rate"]
            counts[i][j] = (row["wins"], row["losses"], row["ties"])
    gold = stored_rows(campaign, "gold")
    # The chart's groups are the stored status the worker table shows, so the two agree on every worker.
    points = [{"x": g["mean_seconds"], "y": g["gold_accuracy"], "label": f"{g['worker']}: {g.get('status')}",
               "group": g.get("status")} for g in gold]
    combined = stored_rows(campaign, "combined")
    return {
        "summary": summary, "scores": scores, "chosen_score": chosen,
        "heatmap": charts.win_rate_heatmap(order, rates, counts, title="Head-to-head win rate"),
        "gold": [{**g, "accuracy_text": percent(g["gold_accuracy"]),
                  "agreement_text": percent(g["agreement_with_others"]), "seconds_text": fixed(g["mean_seconds"], 1)}
                 for g in gold],
        "gold_scatter": charts.scatter_chart(points, title="Gold accuracy against seconds per screen",
                                             x_label="mean seconds per screen", y_label="gold accuracy",
                                             y_range=(0.0, 1.0), threshold=summary.get("min_gold_accuracy"),
                                             threshold_label=gold_threshold_label(summary),
                                             groups=charts.GOLD_STATUS_GROUPS, good_side="above"),
        "has_gold": bool(summary.get("gold_screens")),
        "agreement": [{**a, **{k: fixed(a[k]) for k in ("p_agree", "p_tie", "p_expected_ties", "kappa_uniform",
                                                          "kappa_ties")}} for a in stored_rows(campaign, "agreement")],
        "combined": combined,
        "spearman": [{**r, "rho_text": fixed(r["rho"]), "p_text": charts.format_p(r["p_value"])}
                     for r in stored_rows(campaign, "spearman")],
        "reference_ranking": (campaign.options or {}).get("reference_ranking"),
        "spearman_chart": spearman_chart(campaign, chosen),
    }


def gold_threshold_label(summary: Mapping) -> str:
    """The gold chart's threshold line: the same rule the worker table's status follows (METHODS §8)."""
    accuracy = summary.get("min_gold_accuracy")
    if accuracy is None:
        return ""
    return f"trusted at or above {round(accuracy * 100):g} % with ≥ {summary.get('min_gold', 4)} gold screens"


def spearman_chart(campaign, score_name: str):
    """The chosen score of each system against its value in the reference ranking (one mark per system)."""
    options = campaign.options or {}
    reference = options.get("reference_ranking")
    if not reference:
        return ""
    kind = "rank (1 = best)" if options.get("reference_kind") == "rank" else "score"
    points = [{"x": reference[r["system"]], "y": r["score"], "label": r["system"], "group": "reliable"}
              for r in stored_rows(campaign, "systems", score_name) if r["system"] in reference]
    return charts.scatter_chart(points, title=f"{score_name} against the reference ranking",
                                x_label=f"reference {kind}", y_label=score_name, width=560, height=340)
