"""Researchers' results pages (issue 5, items 2 and 4), rendered on the server.

Every figure and table comes from the stored result tables (`CampaignResults`, `WorkerResult`,
`SystemResult`, `SignificanceResult`, `PairwiseResult`): the page request never runs the statistics
and never scans judgments, apart from one count of the judgments newer than the results. The
number of queries is fixed per protocol family, whatever the campaign's size. Only the comparison
page computes (the calibration's rank-sum tests, from the stored per-translation arrays).
"""
from __future__ import annotations

import csv
import logging
import math
from functools import wraps

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Campaign, Judgment
from annotation.protocols import UnknownProtocol

from .. import charts
from ..models import CampaignResults, PairwiseResult, SignificanceResult, SystemResult, WorkerResult
from ..permissions import is_researcher
from ..services.crowd import approval_suggestions, cost_report
from ..services.results_read import CalibrationError, calibration
from ..tasks import compute_campaign_results

log = logging.getLogger(__name__)

DA, PAIRWISE = "direct-assessment", "pairwise"
WORKER_FILTERS = ("all", "reliable", "unreliable")
FILTER_TITLES = {"reliable": "Quality-controlled: reliable workers only", "all": "Unfiltered: all workers"}
CONDITION_ORDER = [("adequacy", "sentence"), ("adequacy", "document"), ("fluency", "sentence"),
                   ("fluency", "document")]


def researcher_required(view):
    """Staff or the researchers group; anonymous users go to the admin login, others get 403."""
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), reverse("admin:login"))
        if not is_researcher(request.user):
            raise PermissionDenied("The results pages are for researchers.")
        return view(request, *args, **kwargs)
    return wrapped


def _campaign(slug: str, *defer: str) -> Campaign:
    queryset = Campaign.objects.select_related("results").defer("results__translations", *defer)
    return get_object_or_404(queryset, slug=slug)


def _header(campaign: Campaign) -> CampaignResults | None:
    try:
        return campaign.results
    except CampaignResults.DoesNotExist:
        return None


def _family(campaign: Campaign) -> str:
    spec = _spec(campaign)
    return spec.family if spec else ""


def _finite(value) -> float | None:
    return value if isinstance(value, (int, float)) and math.isfinite(value) else None


def _fixed(value, decimals: int = 3) -> str:
    value = _finite(value)
    return "–" if value is None else f"{value:.{decimals}f}".replace("-", "−")


def _freshness(campaign: Campaign, header: CampaignResults | None) -> dict:
    """When the results were computed and how many judgments arrived since: one count query."""
    last = header.last_judgment_id if header else 0
    new = Judgment.objects.filter(campaign=campaign, id__gt=last).count()
    if header is None:
        return {"computed": False, "new": new, "new_text": f"{new:,}"}
    return {"computed": True, "computed_at": header.computed_at, "judgments": header.judgments,
            "judgments_text": f"{header.judgments:,}", "seconds": header.seconds, "runs": header.runs, "new": new,
            "new_text": f"{new:,}"}


# Rows shared by the page and the CSV downloads ------------------------------------------------

def _worker_rows(campaign: Campaign, pairwise_rows: list[PairwiseResult] | None = None) -> list[dict]:
    rows = []
    misses: dict[int, list[int]] = {}
    for r in pairwise_rows or ():
        if r.rater:
            seen_missed = misses.setdefault(r.annotator_id, [0, 0])
            seen_missed[0] += r.spam_seen
            seen_missed[1] += r.spam_missed
    for w in WorkerResult.objects.filter(campaign=campaign).order_by("worker", "annotator_id"):
        seen, missed = misses.get(w.annotator_id, (0, 0))
        rows.append({
            "worker": w.worker, "hits": w.hits, "judgments": w.judgments, "pairs": w.pairs, "test": w.test,
            "p_value": w.p_value, "reliable": w.reliable, "mean_seconds": w.mean_seconds, "mean_raw": w.mean_raw,
            "sd_raw": w.sd_raw, "constant": w.constant, "repeat_pairs": w.repeat_pairs,
            "assumption_a_p": w.assumption_a_p, "assumption_a_holds": w.assumption_a_holds,
            "spam_seen": seen, "spam_missed": missed, "spam_miss_rate": missed / seen if seen else None,
        })
    return rows


def _filter_workers(rows: list[dict], which: str) -> list[dict]:
    if which == "reliable":
        return [r for r in rows if r["reliable"]]
    if which == "unreliable":
        return [r for r in rows if not r["reliable"]]
    return rows


def _system_rows(campaign: Campaign) -> dict[str, list[dict]]:
    tables: dict[str, list[dict]] = {"reliable": [], "all": []}
    for s in SystemResult.objects.filter(campaign=campaign).order_by("workers", "rank", "system"):
        tables.setdefault(s.workers, []).append({
            "workers": s.workers, "rank": s.rank, "cluster": s.cluster, "system": s.system,
            "is_reference": s.is_reference, "translations": s.translations, "judgments": s.judgments,
            "mean_raw": s.mean_raw, "raw_low": s.raw_low, "raw_high": s.raw_high,
            "mean_z": s.mean_z, "z_low": s.z_low, "z_high": s.z_high,
        })
    return tables


def _matrices(campaign: Campaign) -> dict[str, SignificanceResult]:
    return {m.workers: m for m in SignificanceResult.objects.filter(campaign=campaign)}


def _pairwise_rows(campaign: Campaign) -> list[PairwiseResult]:
    return list(PairwiseResult.objects.filter(campaign=campaign).order_by("criterion", "unit", "rater"))


def _conditions(rows: list[PairwiseResult], agreement: dict) -> list[dict]:
    """Per condition the totals, the sign tests, agreement and the raters, in 003's order."""
    found: dict[tuple[str, str], dict] = {}
    for r in rows:
        key = (r.criterion, r.unit)
        if not r.rater:
            found[key] = {"criterion": r.criterion, "unit": r.unit, "label": f"{r.criterion} · {r.unit}",
                          "a": r.a, "t": r.t, "b": r.b, "x": r.x, "n": r.n, "p": r.p_value,
                          "p_es": r.p_value_emerson_simon, "spam_seen": r.spam_seen, "spam_missed": r.spam_missed,
                          "spam_missed_ties": r.spam_missed_ties,
                          "agreement": agreement.get(f"{r.criterion}/{r.unit}", {}), "raters": []}
    for r in rows:
        if r.rater and (r.criterion, r.unit) in found:
            found[(r.criterion, r.unit)]["raters"].append(r)
    order = {key: i for i, key in enumerate(CONDITION_ORDER)}
    return [found[k] for k in sorted(found, key=lambda k: order.get(k, len(order)))]


# Display helpers ------------------------------------------------------------------------------

def _worker_display(row: dict, family: str) -> dict:
    return {**row, "p_text": charts.format_p(row["p_value"]), "seconds_text": _fixed(row["mean_seconds"], 1),
            "mean_raw_text": _fixed(row["mean_raw"], 1), "sd_raw_text": _fixed(row["sd_raw"], 1),
            "a_p_text": charts.format_p(row["assumption_a_p"]),
            "miss_text": "–" if row["spam_miss_rate"] is None else f"{row['spam_miss_rate']:.0%}"}


def _scatter(rows: list[dict], family: str, campaign: Campaign, summary: dict):
    """The workers' figure and how many workers it leaves out: DA, p-value against mean seconds per
    judgment (001 Fig. 4); pairwise, each rater's spam-item miss rate against the exclusion threshold."""
    if family == PAIRWISE:
        limit = float(summary.get("max_spam_miss_rate", 0.2))
        bars = [{"label": r["worker"], "rate": r["spam_miss_rate"], "seen": r["spam_seen"],
                 "missed": r["spam_missed"], "excluded": not r["reliable"]} for r in rows]
        svg = charts.rate_bars(bars, title="Share of spam items missed per rater", threshold=limit)
        return svg, sum(1 for b in bars if b["rate"] is None)
    points = []
    for r in rows:
        status = "reliable" if r["reliable"] else "not reliable"
        tip = (f"{r['worker']}: {_fixed(r['mean_seconds'], 1)} s per judgment, p = "
               f"{charts.format_p(r['p_value'])} over {r['pairs']} pairs, {status}")
        points.append({"x": r["mean_seconds"], "y": r["p_value"], "label": tip,
                       "group": "reliable" if r["reliable"] else "unreliable"})
    threshold = float(summary.get("threshold", campaign.qc_threshold))
    svg = charts.scatter_chart(
        points, title="Reliability p-value against mean seconds per judgment, one mark per worker (001 Fig. 4)",
        x_label="mean seconds per judgment", y_label="p-value (log scale)", log_y=True, threshold=threshold,
        threshold_label=f"p = {threshold:g}", zone_label=f"reliable (p < {threshold:g})")
    plotted = sum(1 for p in points if _finite(p["x"]) is not None and _finite(p["y"]) is not None)
    return svg, len(points) - plotted


def _ranking_display(rows: list[dict], other: list[dict]) -> list[dict]:
    other_rank = {r["system"]: r["rank"] for r in other}
    out = []
    for r in rows:
        moved = None
        if r["rank"] is not None and other_rank.get(r["system"]) is not None:
            moved = other_rank[r["system"]] - r["rank"]
        out.append({**r, "z_text": _fixed(r["mean_z"]), "z_ci": _interval(r["z_low"], r["z_high"], 3),
                    "raw_text": _fixed(r["mean_raw"], 1), "raw_ci": _interval(r["raw_low"], r["raw_high"], 1),
                    "other_rank": other_rank.get(r["system"]), "moved": moved,
                    "new_cluster": bool(out) and out[-1]["cluster"] != r["cluster"]})
    return out


def _condition_display(c: dict) -> dict:
    total = c["a"] + c["t"] + c["b"]
    agreement = c["agreement"]
    majority = agreement.get("majority", {})
    return {
        "total": total, "stars": charts.stars(c["p"]), "p_text": charts.format_p(c["p"]),
        "p_es_text": charts.format_p(c["p_es"]),
        "shares": [f"{100 * v / total:.1f}" if total else "–" for v in (c["a"], c["t"], c["b"])],
        "kappa_text": _fixed(agreement.get("kappa")), "fleiss_text": _fixed(agreement.get("fleiss_kappa")),
        "p_agree_text": _fixed(agreement.get("p_agree")), "p_expected_text": _fixed(agreement.get("p_expected")),
        "landis_koch": agreement.get("landis_koch") or "–", "pairs": agreement.get("pairs"), "majority": majority,
        "raters_display": [{"rater": r.rater, "a": r.a, "t": r.t, "b": r.b, "x": r.x, "n": r.n,
                            "p": charts.format_p(r.p_value), "stars": charts.stars(r.p_value),
                            "spam_seen": r.spam_seen, "spam_missed": r.spam_missed, "excluded": r.excluded}
                           for r in c["raters"]],
    }


def _interval(low, high, decimals: int) -> str:
    if _finite(low) is None or _finite(high) is None:
        return "–"
    return f"[{_fixed(low, decimals)}, {_fixed(high, decimals)}]"


def _ranking_charts(tables: dict[str, list[dict]]) -> dict[str, object]:
    """The two rankings' charts on shared axes, so their positions can be compared across."""
    domains = {}
    for key, low, high in (("z", "z_low", "z_high"), ("raw", "raw_low", "raw_high")):
        values = [v for rows in tables.values() for r in rows
                  for v in (r[low], r[high], r[f"mean_{key}"]) if _finite(v) is not None]
        domains[key] = (min(values), max(values)) if values else (0.0, 1.0)
    out = {}
    for workers, rows in tables.items():
        chart_rows = [{"label": f"{r['rank'] or '–'}. {r['system']}", "cluster": r["cluster"],
                       "is_reference": r["is_reference"], "z": (r["mean_z"], r["z_low"], r["z_high"]),
                       "raw": (r["mean_raw"], r["raw_low"], r["raw_high"])} for r in rows]
        out[workers] = charts.ranking_chart(chart_rows, title=f"System ranking, {FILTER_TITLES.get(workers, workers)}",
                                            domains=domains)
    return out


def _significance_display(matrix: SignificanceResult) -> dict:
    systems = matrix.systems
    rows = []
    for i, name in enumerate(systems):
        cells = []
        for j in range(len(systems)):
            p = matrix.p_values[i][j] if i != j else None
            fill, ink, _ = charts.p_bin(p) if i != j else ("#FFFFFF", charts.MUTED, "")
            cells.append({"p": charts.format_p(p) if i != j else "", "stars": charts.stars(p), "fill": fill,
                          "ink": ink, "diagonal": i == j})
        rows.append({"rank": i + 1, "system": name, "cells": cells})
    return {"systems": systems, "rows": rows,
            "svg": charts.heatmap(systems, matrix.p_values,
                                  title=f"Significance matrix, {FILTER_TITLES.get(matrix.workers, matrix.workers)}")}


def _da_agreement(agreement: dict) -> list[dict]:
    out = []
    for key, label in (("intra", "same judge (ask again)"), ("inter", "distinct judges")):
        block = agreement.get(key)
        if not block:
            continue
        kappa = block.get("kappa", {})
        out.append({"key": key, "label": label, "pairs": block.get("pairs"),
                    "mean": _fixed(block.get("mean_abs_diff"), 2), "sd": _fixed(block.get("sd_abs_diff"), 2),
                    "raw": [_fixed(kappa.get("raw", {}).get(k)) for k in ("5", "4", "2")],
                    "z": [_fixed(kappa.get("z", {}).get(k)) for k in ("5", "4", "2")]})
    return out


COST_LABELS = [
    ("currency_per_hit", "Payment per HIT"), ("hits_paid", "HITs paid (completed assignments)"),
    ("total", "Total paid"), ("systems", "Systems evaluated"), ("per_system", "Cost per system"),
    ("hits_by_unreliable_workers", "HITs done by unreliable workers"),
    ("spent_on_unreliable", "Spent on unreliable workers"), ("share_on_unreliable", "Share spent on unreliable"),
]


def _cost_rows(cost: dict) -> list[tuple[str, str, object]]:
    rows = []
    for key, label in COST_LABELS:
        value = cost.get(key)
        if key == "share_on_unreliable" and value is not None:
            text = f"{value:.1%}"
        else:
            text = "–" if value is None else str(value)
        rows.append((key, label, text))
    return rows


# Pages ----------------------------------------------------------------------------------------

@require_GET
@researcher_required
def results_index(request):
    campaigns = list(Campaign.objects.select_related("results")
                     .defer("results__translations", "results__agreement", "results__summary", "results__progress")
                     .order_by("-created_at"))
    rows = []
    for campaign in campaigns:
        header = _header(campaign)
        rows.append({"campaign": campaign, "header": header, "family": _family(campaign),
                     "label": getattr(_spec(campaign), "label", campaign.protocol)})
    return render(request, "evaluation/results_index.html", {"rows": rows})


def _spec(campaign):
    """The campaign's protocol, or None for a protocol no longer registered (the stored results still show)."""
    try:
        return campaign.protocol_spec
    except UnknownProtocol:
        return None


@require_GET
@researcher_required
def campaign_results(request, slug: str):
    campaign = _campaign(slug)
    header = _header(campaign)
    family = _family(campaign)
    which = request.GET.get("workers", "all")
    which = which if which in WORKER_FILTERS else "all"
    summary = header.summary if header else {}
    agreement = header.agreement if header else {}
    progress = header.progress if header else {}
    context = {"campaign": campaign, "family": family, "header": header, "summary": summary,
               "fresh": _freshness(campaign, header), "protocol_label": getattr(_spec(campaign), "label", ""),
               "is_pairwise": family == PAIRWISE, "workers_filter": which}

    pairwise_rows = _pairwise_rows(campaign) if family == PAIRWISE else []
    all_workers = _worker_rows(campaign, pairwise_rows)
    shown = _filter_workers(all_workers, which)
    scatter, not_plotted = _scatter(shown, family, campaign, summary)
    reliable = sum(1 for r in all_workers if r["reliable"])
    context.update(
        workers=[_worker_display(r, family) for r in shown], scatter=scatter, not_plotted=not_plotted,
        worker_counts={"all": len(all_workers), "reliable": reliable, "unreliable": len(all_workers) - reliable},
    )
    times = progress.get("times", [])
    context["progress"] = {
        "bucket": progress.get("bucket", "hour"),
        "judgments_svg": charts.line_chart(times, progress.get("judgments", []), title="Judgments over time",
                                           y_label="Judgments (cumulative)", bucket=progress.get("bucket", "hour")),
        "hits_svg": charts.line_chart(times, progress.get("hits_done", []), title="Completed HITs over time",
                                      y_label="Completed HITs (cumulative)", colour=charts.GREEN,
                                      bucket=progress.get("bucket", "hour")),
        "rows": list(zip(times, progress.get("judgments", []), progress.get("hits_done", []), strict=False)),
    }
    if family == PAIRWISE:
        systems = campaign.options.get("systems") or summary.get("systems") or ["first system", "second system"]
        first, second = (list(systems) + ["first system", "second system"])[:2]
        conditions = _conditions(pairwise_rows, agreement)
        for c in conditions:
            c.update(_condition_display(c))
        context.update(first=first, second=second, conditions=conditions,
                       preference_svg=charts.preference_bars(
                           conditions, first=first, second=second,
                           title=f"Preference per condition: {first} / tie / {second} (003 Fig. 1)"))
    else:
        tables = _system_rows(campaign)
        rank_charts = _ranking_charts(tables)
        matrices = _matrices(campaign)
        context.update(
            rankings=[{"workers": w, "title": FILTER_TITLES[w], "svg": rank_charts.get(w),
                       "rows": _ranking_display(tables.get(w, []), tables.get("all" if w == "reliable" else "reliable",
                                                                               []))}
                      for w in ("reliable", "all")],
            significance=[{"workers": w, "title": FILTER_TITLES[w], **_significance_display(matrices[w])}
                          for w in ("reliable", "all") if w in matrices],
            agreement_rows=_da_agreement(agreement),
            assumption_a=summary.get("assumption_a") or {},
        )
    context["cost"] = _cost_rows(cost_report(campaign))
    context["tables"] = [t for t in CSV_TABLES if t in _tables_for(family)]
    return render(request, "evaluation/results.html", context)


@require_POST
@researcher_required
def recompute(request, slug: str):
    """Queue the campaign's statistics on the Celery workers and return to its page."""
    campaign = get_object_or_404(Campaign, slug=slug)
    try:
        compute_campaign_results.apply_async((campaign.pk,))
    except Exception as exc:  # no broker, or (tasks in-process) the computation itself failed
        log.exception("queueing the results of %s failed", campaign.slug)
        messages.error(request, f"Could not recompute: {exc}")
    else:
        messages.success(request, "Recomputation queued; reload in a moment to see the new results.")
    return redirect("results:campaign", slug=campaign.slug)


# CSV downloads --------------------------------------------------------------------------------

def _csv_value(value):
    """Numbers as they are; text that a spreadsheet would run as a formula gets a leading quote."""
    if value is None:
        return ""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _csv_response(filename: str, columns: list[str], rows) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    writer = csv.writer(response)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_value(row.get(c)) for c in columns])
    return response


WORKER_COLUMNS = ["worker", "hits", "judgments", "pairs", "test", "p_value", "reliable", "mean_seconds", "mean_raw",
                  "sd_raw", "constant", "repeat_pairs", "assumption_a_p", "assumption_a_holds"]
PAIRWISE_WORKER_COLUMNS = ["worker", "hits", "judgments", "spam_seen", "spam_missed", "spam_miss_rate", "reliable",
                           "mean_seconds"]
SYSTEM_COLUMNS = ["workers", "rank", "cluster", "system", "is_reference", "translations", "judgments", "mean_z",
                  "z_low", "z_high", "mean_raw", "raw_low", "raw_high"]
PAIRWISE_COLUMNS = ["criterion", "unit", "rater", "a", "t", "b", "x", "n", "p_value", "p_value_emerson_simon",
                    "spam_seen", "spam_missed", "spam_missed_ties", "excluded"]
APPROVAL_COLUMNS = ["worker", "hits", "judgments", "pairs", "p_value", "reliable", "suggestion", "reason"]


def _csv_workers(request, campaign, family):
    which = request.GET.get("workers", "all")
    rows = _worker_rows(campaign, _pairwise_rows(campaign) if family == PAIRWISE else None)
    columns = PAIRWISE_WORKER_COLUMNS if family == PAIRWISE else WORKER_COLUMNS
    return columns, _filter_workers(rows, which if which in WORKER_FILTERS else "all")


def _csv_systems(request, campaign, family):
    tables = _system_rows(campaign)
    return SYSTEM_COLUMNS, [r for w in ("reliable", "all") for r in tables.get(w, [])]


def _csv_significance(request, campaign, family):
    rows = []
    matrices = _matrices(campaign)
    for workers in ("reliable", "all"):
        matrix = matrices.get(workers)
        if matrix is None:
            continue
        for i, name in enumerate(matrix.systems):
            for j, other in enumerate(matrix.systems):
                if i != j:
                    p = matrix.p_values[i][j]
                    rows.append({"workers": workers, "system": name, "better_than": other, "p_value": p,
                                 "stars": charts.stars(p)})
    return ["workers", "system", "better_than", "p_value", "stars"], rows


def _csv_agreement(request, campaign, family):
    header = CampaignResults.objects.filter(campaign=campaign).only("agreement").first()
    agreement = header.agreement if header else {}
    if family == PAIRWISE:
        rows = []
        for condition, a in agreement.items():
            majority = a.get("majority", {})
            rows.append({"condition": condition, "pairs": a.get("pairs"), "p_agree": a.get("p_agree"),
                         "p_expected": a.get("p_expected"), "kappa": a.get("kappa"),
                         "fleiss_kappa": a.get("fleiss_kappa"), "landis_koch": a.get("landis_koch"),
                         "majority_a": majority.get("a"), "majority_t": majority.get("t"),
                         "majority_b": majority.get("b"), "majority_items": majority.get("items")})
        return ["condition", "pairs", "p_agree", "p_expected", "kappa", "fleiss_kappa", "landis_koch", "majority_a",
                "majority_t", "majority_b", "majority_items"], rows
    columns = ["judges", "pairs", "mean_abs_diff", "sd_abs_diff"] + [
        f"kappa_{scale}_{k}" for scale in ("raw", "z") for k in ("5", "4", "2")]
    rows = []
    for key in ("intra", "inter"):
        block = agreement.get(key)
        if block:
            row = {"judges": "same" if key == "intra" else "distinct", "pairs": block.get("pairs"),
                   "mean_abs_diff": block.get("mean_abs_diff"), "sd_abs_diff": block.get("sd_abs_diff")}
            for scale in ("raw", "z"):
                for k in ("5", "4", "2"):
                    row[f"kappa_{scale}_{k}"] = block.get("kappa", {}).get(scale, {}).get(k)
            rows.append(row)
    return columns, rows


def _csv_pairwise(request, campaign, family):
    rows = [{c: getattr(r, c) for c in PAIRWISE_COLUMNS} for r in _pairwise_rows(campaign)]
    return PAIRWISE_COLUMNS, rows


def _csv_progress(request, campaign, family):
    header = CampaignResults.objects.filter(campaign=campaign).only("progress").first()
    progress = header.progress if header else {}
    rows = [{"time": t, "judgments": j, "hits_done": d} for t, j, d in
            zip(progress.get("times", []), progress.get("judgments", []), progress.get("hits_done", []), strict=False)]
    return ["time", "judgments", "hits_done"], rows


def _csv_cost(request, campaign, family):
    cost = cost_report(campaign)
    return ["item", "value"], [{"item": key, "value": cost.get(key)} for key, _ in COST_LABELS]


def _csv_approvals(request, campaign, family):
    return APPROVAL_COLUMNS, approval_suggestions(campaign)


CSV_TABLES = {
    "workers": _csv_workers, "systems": _csv_systems, "significance": _csv_significance,
    "agreement": _csv_agreement, "pairwise": _csv_pairwise, "progress": _csv_progress, "cost": _csv_cost,
    "approvals": _csv_approvals,
}


def _tables_for(family: str) -> set[str]:
    if family == PAIRWISE:
        return {"workers", "agreement", "pairwise", "progress", "cost", "approvals"}
    return {"workers", "systems", "significance", "agreement", "progress", "cost", "approvals"}


@require_GET
@researcher_required
def table_csv(request, slug: str, table: str):
    campaign = get_object_or_404(Campaign, slug=slug)
    family = _family(campaign)
    if table not in CSV_TABLES or table not in _tables_for(family):
        raise Http404("No such table for this campaign.")
    columns, rows = CSV_TABLES[table](request, campaign, family)
    return _csv_response(f"{campaign.slug}-{table}.csv", columns, rows)


# Longitudinal comparison (000 Table 3) ---------------------------------------------------------

def _top_system(rows: list[tuple[str, int | None, bool]], benchmark: str) -> str:
    ranked = sorted((rank or 10**9, name) for name, rank, is_reference in rows
                    if not is_reference and name != benchmark)
    return ranked[0][1] if ranked else ""


def _compare_context(request) -> dict:
    params = request.GET
    workers = params.get("workers", "reliable")
    workers = workers if workers in ("reliable", "all") else "reliable"
    candidates = [c for c in Campaign.objects.filter(results__isnull=False).only(
        "name", "slug", "protocol", "created_at").order_by("-created_at") if _family(c) == DA]
    by_slug = {c.slug: c for c in candidates}
    old, new = by_slug.get(params.get("old", "")), by_slug.get(params.get("new", ""))
    context = {"candidates": candidates, "old": old, "new": new, "workers": workers, "error": None,
               "result": None, "shared": [], "old_systems": [], "new_systems": []}
    if params.get("old") and old is None or params.get("new") and new is None:
        context["error"] = "Pick two Direct Assessment campaigns with computed results."
    if old is None or new is None:
        return context
    systems: dict[int, list[tuple[str, int | None, bool]]] = {old.pk: [], new.pk: []}
    for campaign_id, name, rank, is_reference in SystemResult.objects.filter(
            campaign__in=[old, new], workers=workers).order_by("rank", "system").values_list(
            "campaign_id", "system", "rank", "is_reference"):
        systems[campaign_id].append((name, rank, is_reference))
    old_names = [s[0] for s in systems[old.pk] if not s[2]]
    new_names = [s[0] for s in systems[new.pk] if not s[2]]
    shared = sorted(set(old_names) & set(new_names))
    context.update(shared=shared, old_systems=old_names, new_systems=new_names)
    benchmark = params.get("benchmark") or (shared[0] if len(shared) == 1 else "")
    context["benchmark"] = benchmark
    if not shared:
        context["error"] = "The two campaigns share no system, so there is no benchmark to calibrate with."
        return context
    if not benchmark:
        return context
    if benchmark not in shared:
        context["error"] = f"“{benchmark}” was not evaluated in both campaigns."
        return context
    old_system = params.get("old_system") or _top_system(systems[old.pk], benchmark)
    new_system = params.get("new_system") or _top_system(systems[new.pk], benchmark)
    context.update(old_system=old_system, new_system=new_system)
    try:
        result = calibration(new, old, benchmark, new_system, old_system, workers)
    except CalibrationError as exc:
        context["error"] = str(exc)
        return context
    context["result"] = result
    context["table"] = _calibration_table(result)
    context["chart"] = charts.change_chart(
        [{"label": f"benchmark: {benchmark}", "old": result["raw"]["curr_old"], "new": result["raw"]["curr_new"],
          "old_label": old.name, "new_label": new.name},
         {"label": f"compared: {old_system} → {new_system}", "old": result["raw"]["best_old"],
          "new": result["raw"]["best_new"], "old_label": old.name, "new_label": new.name}],
        title="Mean raw score on the old and the new test set", x_label="mean raw score (0–100)")
    return context


def _signed(value, decimals: int) -> str:
    value = _finite(value)
    return "–" if value is None else f"{value:+.{decimals}f}".replace("-", "−")


def _calibration_table(result: dict) -> list[dict]:
    """000 Table 3: rows score, z, n; columns CURR_old, CURR_new, Δ, BEST_old, BEST_new (difference), gain."""
    rows = []
    for scale, label, decimals in (("raw", "score", 1), ("z", "z", 2)):
        r = result[scale]
        curr_stars = charts.stars(min(_finite(r["p_curr_old_better"]) or 1, _finite(r["p_curr_new_better"]) or 1))
        best_stars = charts.stars(min(_finite(r["p_best_new_better"]) or 1, _finite(r["p_best_old_better"]) or 1))
        rows.append({"label": label, "curr_old": _fixed(r["curr_old"], decimals),
                     "curr_new": _fixed(r["curr_new"], decimals), "delta": _fixed(r["delta"], decimals),
                     "delta_stars": curr_stars, "best_old": _fixed(r["best_old"], decimals),
                     "best_new": _fixed(r["best_new"], decimals), "difference": _signed(r["difference"], decimals),
                     "difference_stars": best_stars, "gain": _fixed(r["gain"], decimals),
                     "p_curr": charts.format_p(min(_finite(r["p_curr_old_better"]) or 1,
                                                   _finite(r["p_curr_new_better"]) or 1)),
                     "p_best": charts.format_p(min(_finite(r["p_best_new_better"]) or 1,
                                                   _finite(r["p_best_old_better"]) or 1))})
    raw = result["raw"]
    rows.append({"label": "n", "curr_old": f"{raw['n_curr_old']:,}", "curr_new": f"{raw['n_curr_new']:,}", "delta": "",
                 "best_old": f"{raw['n_best_old']:,}", "best_new": f"{raw['n_best_new']:,}", "difference": "",
                 "gain": "", "is_n": True})
    return rows


@require_GET
@researcher_required
def compare(request):
    return render(request, "evaluation/compare.html", _compare_context(request))


@require_GET
@researcher_required
def compare_csv(request):
    context = _compare_context(request)
    result = context.get("result")
    if result is None:
        raise Http404(context.get("error") or "Pick the campaigns and the benchmark system.")
    columns = ["scale", "curr_old", "curr_new", "delta", "best_old", "best_new", "difference", "gain", "n_curr_old",
               "n_curr_new", "n_best_old", "n_best_new", "p_curr_old_better", "p_curr_new_better",
               "p_best_new_better", "p_best_old_better"]
    rows = [{"scale": scale, **result[scale]} for scale in ("raw", "z")]
    name = f"calibration-{context['old'].slug}-{context['new'].slug}.csv"
    return _csv_response(name, columns, rows)
