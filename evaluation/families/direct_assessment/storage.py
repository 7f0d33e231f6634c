"""Load a DA campaign's judgments into arrays (one query), analyse, and store the results (one transaction)."""
from __future__ import annotations

import io
import time

import numpy as np
from django.db import connection
from django.db.models import BigIntegerField, Case, FloatField, IntegerField, Max, Value, When
from django.db.models.functions import Cast, Coalesce

from annotation.models import Annotator, Campaign, Judgment, System

from ...models import CampaignResults, SignificanceResult, SystemResult, WorkerResult
from ...presets import conventions_of
from ...services.binary_copy import copy_arrays
from ...services.storing import finite as _number
from ...services.storing import jsonable, replace_results
from .analysis import ITEM_CODES, DAAnalysis, DAJudgments, PooledReliability, analyse, pooled_reliability
from .presets import FAMILY
from .serializers import SystemResultSerializer

_COLUMNS = 9
_INT_COLUMNS = 7  # id, annotator, assignment, item type, system, segment, output; then score, seconds


def _judgment_table_query(campaign: Campaign, annotator_id: int | None = None):
    """One row per scored judgment (of one worker with `annotator_id`), every column NOT NULL and 8 bytes wide
    (-1 / NaN for missing)."""
    item_code = Case(*[When(item__item_type=name, then=Value(code)) for name, code in ITEM_CODES.items()],
                     default=Value(-1), output_field=IntegerField())
    big = BigIntegerField()
    judgments = Judgment.objects.filter(campaign=campaign, score__isnull=False)
    if annotator_id is not None:
        judgments = judgments.filter(annotator_id=annotator_id)
    return (
        judgments
        .annotate(
            item_code=Cast(item_code, big),
            system=Coalesce(Cast("item__output__system_id", big), Value(-1), output_field=big),
            segment=Coalesce(Cast("item__segment_id", big), Value(-1), output_field=big),
            output=Coalesce(Cast("item__output_id", big), Value(-1), output_field=big),
            secs=Coalesce("seconds", Value(float("nan")), output_field=FloatField()),
        )
        .order_by()
        .values_list(Cast("id", big), Cast("annotator_id", big), Cast("assignment_id", big), "item_code", "system",
                     "segment", "output", "score", "secs")
    )


def _fetch_postgres(sql: str, params) -> np.ndarray:
    """Rows as an (n, 9) float64 array via binary COPY (evaluation/services/binary_copy.py): no Python objects."""
    columns = [(f"v{i}", "int8" if i < _INT_COLUMNS else "float8") for i in range(_COLUMNS)]
    arrays = copy_arrays(sql, list(params), columns, jit=True)
    table = np.empty((arrays["v0"].size, _COLUMNS))
    for i in range(_COLUMNS):
        table[:, i] = arrays[f"v{i}"]
    return table


def _fetch_generic(sql: str, params) -> np.ndarray:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return np.array(rows, dtype=np.float64).reshape(-1, _COLUMNS) if rows else np.empty((0, _COLUMNS))


def load_judgments(campaign: Campaign, annotator_id: int | None = None) -> DAJudgments:
    """Every scored judgment of the campaign (of one worker, with `annotator_id`: the live gate) as arrays, with
    a single query (no model objects).

    On PostgreSQL the query's result is streamed with binary COPY and parsed by numpy in one go
    (a million rows in about a second); elsewhere it is fetched as rows.
    """
    sql, params = _judgment_table_query(campaign, annotator_id).query.sql_with_params()
    fetch = _fetch_postgres if connection.vendor == "postgresql" else _fetch_generic
    table = fetch(sql, params)
    systems = dict(System.objects.filter(campaign=campaign).values_list("id", "name"))
    system_ids = np.array(sorted(systems), dtype=np.int64)
    ints = table[:, :_INT_COLUMNS].astype(np.int64)
    system_code = np.full(ints.shape[0], -1, dtype=np.int64)
    known = ints[:, 4] >= 0
    system_code[known] = np.searchsorted(system_ids, ints[known, 4])
    return DAJudgments(
        judgment_id=ints[:, 0], annotator_id=ints[:, 1], assignment=ints[:, 2], item_type=ints[:, 3],
        system=system_code, segment=ints[:, 5], output=ints[:, 6], score=table[:, 7], seconds=table[:, 8],
        system_names=[systems[int(i)] for i in system_ids], unit=_units(campaign, ints[:, 0]),
    )


def _units(campaign: Campaign, judgment_ids: np.ndarray) -> np.ndarray | None:
    """Document-level DA: 1 where the judgment rates a whole document, else 0 (one more query, only for
    campaigns imported with `document_mode`); None for every other campaign."""
    if not (campaign.options or {}).get("document_mode"):
        return None
    documents = np.array(sorted(Judgment.objects.filter(campaign=campaign, score__isnull=False,
                                                        item__payload__unit="document")
                                .values_list("id", flat=True)), dtype=np.int64)
    return np.isin(judgment_ids, documents).astype(np.int64)


def _translations_blob(analysis: DAAnalysis) -> bytes:
    buffer = io.BytesIO()
    arrays = {}
    for workers, table in analysis.systems.items():
        arrays[f"{workers}_names"] = np.array(table.names)
        arrays[f"{workers}_system"] = table.scores.translation_system
        arrays[f"{workers}_raw"] = table.scores.translation_raw
        arrays[f"{workers}_z"] = table.scores.translation_z
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def store(campaign: Campaign, analysis: DAAnalysis, n_judgments: int, last_judgment_id: int, seconds: float):
    """Replace the campaign's results in one transaction: readers see the old or the new, never a mix."""
    labels = {a.pk: a.label for a in Annotator.objects.filter(pk__in=analysis.annotator_ids.tolist())
              .select_related("user")}
    assumption = analysis.assumption_a
    workers = [
        WorkerResult(
            campaign=campaign, annotator_id=int(aid), worker=labels.get(int(aid), str(aid)),
            hits=int(analysis.hits[w]), judgments=int(analysis.judgments[w]), pairs=int(analysis.pairs[w]),
            test=analysis.test, p_value=_number(analysis.p_value[w]), reliable=bool(analysis.reliable[w]),
            mean_seconds=_number(analysis.mean_seconds[w]), mean_raw=_number(analysis.z.mean[w]),
            sd_raw=_number(analysis.z.sd[w]), constant=bool(analysis.z.constant[w]),
            repeat_pairs=int(analysis.repeat_pairs[w]), assumption_a_p=_number(assumption.p[w]),
            assumption_a_holds=bool(assumption.holds[w]) if assumption.determined[w] else None,
        )
        for w, aid in enumerate(analysis.annotator_ids)
    ]
    systems, matrices = [], []
    for filter_name, table in analysis.systems.items():
        systems += _system_results(campaign, filter_name, table)
        matrices.append(_matrix(campaign, filter_name, table))
    summary = jsonable(analysis.summary)
    if analysis.document_systems:
        summary[DOCUMENT_KEY] = _document_tables(campaign, analysis)
    replace_results(campaign, {WorkerResult: workers, SystemResult: systems, SignificanceResult: matrices}, {
        "seconds": seconds, "judgments": n_judgments, "last_judgment_id": last_judgment_id,
        "summary": summary, "agreement": jsonable(analysis.agreement),
        "translations": _translations_blob(analysis),
    })


#: Where the summary keeps the document-level tables (document-level DA, docs/methods.md §1.1).
DOCUMENT_KEY = "document_systems"


def _system_results(campaign: Campaign, filter_name: str, table) -> list[SystemResult]:
    s, c = table.scores, table.clusters
    rows = []
    for code, name in enumerate(table.names):
        if s.n_judgments[code] == 0:
            continue
        rows.append(SystemResult(
            campaign=campaign, workers=filter_name, system=name, is_reference=bool(table.is_reference[code]),
            translations=int(s.n_segments[code]), judgments=int(s.n_judgments[code]),
            mean_raw=_number(s.mean_raw[code]), mean_z=_number(s.mean_z[code]),
            raw_low=_number(s.raw_ci_low[code]), raw_high=_number(s.raw_ci_high[code]),
            z_low=_number(s.z_ci_low[code]), z_high=_number(s.z_ci_high[code]),
            rank=int(c.rank[code]) if c.rank[code] > 0 else None,
            cluster=int(c.cluster[code]) if c.cluster[code] > 0 else None,
            rank_low=int(c.rank_low[code]) if c.rank_low[code] > 0 else None,
            rank_high=int(c.rank_high[code]) if c.rank_high[code] > 0 else None,
        ))
    return rows


def _matrix(campaign: Campaign, filter_name: str, table) -> SignificanceResult:
    order = [int(i) for i in table.clusters.order]
    return SignificanceResult(
        campaign=campaign, workers=filter_name, systems=[table.names[i] for i in order],
        p_values=jsonable(table.significance.p[np.ix_(order, order)]),
        stars=table.significance.stars[np.ix_(order, order)].tolist(),
        wins=table.wins[np.ix_(order, order)].tolist(),
    )


def _document_tables(campaign: Campaign, analysis: DAAnalysis) -> dict:
    """Per worker filter, the document-level ranking as the `systems/` rows (rank order; unranked last) and its
    significance matrix, as JSON."""
    out = {}
    for filter_name, table in analysis.document_systems.items():
        rows = sorted(_system_results(campaign, filter_name, table),
                      key=lambda r: (r.rank is None, r.rank or 0, r.system))
        matrix = _matrix(campaign, filter_name, table)
        out[filter_name] = {"results": jsonable([dict(SystemResultSerializer(r).data) for r in rows]),
                            "significance": {"systems": matrix.systems, "p_values": matrix.p_values,
                                             "stars": matrix.stars, "wins": matrix.wins}}
    return out


def compute_da(campaign: Campaign, data: DAJudgments | None = None,
               pooled: PooledReliability | None = None) -> CampaignResults | None:
    """Load (unless `data` is given), analyse and store; the stored header, or None when there is nothing.

    `pooled` holds the study-wide reliability verdicts; it is used when the campaign's conventions test
    workers over the whole study."""
    started = time.perf_counter()
    last_id = Judgment.objects.filter(campaign=campaign).aggregate(m=Max("id"))["m"] or 0
    data = load_judgments(campaign) if data is None else data
    if len(data) == 0:
        return None
    conventions = conventions_of(campaign, FAMILY)
    analysis = analyse(data, test=conventions.test, threshold=conventions.threshold,
                       reference_as_system=bool(campaign.options.get("reference_as_system", False)),
                       threshold_rule=conventions.threshold_rule, cluster_rule=conventions.cluster_rule,
                       pooled=pooled if conventions.scope == "study" else None, digits=conventions.digits)
    analysis.summary["conventions"] = conventions.as_dict()
    store(campaign, analysis, len(data), last_id, time.perf_counter() - started)
    return CampaignResults.objects.get(campaign=campaign)


def compute_study(campaigns: list[Campaign]) -> dict[int, CampaignResults | None]:
    """Every campaign of a study: each worker's test runs once over their pairs in all of them (per test the
    campaigns use), and each campaign is then analysed and stored with those verdicts (docs/methods.md §4)."""
    data = {c.pk: load_judgments(c) for c in campaigns}
    tests = {conventions_of(c, FAMILY).test for c in campaigns}
    pooled = {test: pooled_reliability([d for d in data.values() if len(d)], test, 0.05) for test in tests}
    return {c.pk: compute_da(c, data[c.pk], pooled[conventions_of(c, FAMILY).test]) for c in campaigns}
