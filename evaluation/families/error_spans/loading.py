"""Loading an error-span campaign's judgments as arrays.

One row per *observation*: a judgment of one candidate (ESA and MQM judge one candidate per item;
contrastive ESA one per candidate key of its screen, the key's system and score read from the item's
payload and the judgment's `scores`). Spans are expanded in the database; per observation only its
spans' severity, category and side come back (as codes), from which numpy counts them by severity,
weighs them (MQM) and breaks them down by category. On PostgreSQL, with one candidate per judgment,
the rows come back as arrays through binary COPY (evaluation/services/binary_copy.py); elsewhere as
tuples. Span offsets are read only for items that several judges rated (agreement, §11).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import connection, transaction

from annotation.models import Assignment, Document, HitItem, Judgment, Segment, SystemOutput

from ...services.binary_copy import copy_arrays
from ...stats.error_spans import MqmWeights

KINDS = ("system", "bad", "tutorial")
_KIND_OF_ITEM = {"system": 0, "bad_ref": 1, "tutorial": 2}


def _tables() -> dict[str, str]:
    q = connection.ops.quote_name
    return {"judgment": q(Judgment._meta.db_table), "item": q(HitItem._meta.db_table),
            "output": q(SystemOutput._meta.db_table), "segment": q(Segment._meta.db_table),
            "document": q(Document._meta.db_table), "assignment": q(Assignment._meta.db_table)}


def _postgres() -> bool:
    return connection.vendor == "postgresql"


# Observations: judgment, candidate key, annotator, assignment completed?, kind, segment, system id or index,
# document, score, hit, position, partner position, the perturbed candidate's original key, seconds (and, one
# candidate per judgment, the item's wave: an integer in the payload, else 1).
_SINGLE = """
SELECT j.id, '', j.annotator_id, a.status = 'completed', i.item_type, i.segment_id, o.system_id, s.document_id,
       j.score, i.hit_id, i.position, i.partner_position, NULL, j.seconds, {wave}
FROM {judgment} j
JOIN {item} i ON i.id = j.item_id
JOIN {output} o ON o.id = i.output_id
JOIN {segment} s ON s.id = i.segment_id
JOIN {assignment} a ON a.id = j.assignment_id
WHERE j.campaign_id = %s AND j.id <= %s
ORDER BY j.id
"""
_WAVE_PG = ("CASE WHEN jsonb_typeof(i.payload -> 'wave') = 'number' THEN floor((i.payload ->> 'wave')::float8)::int8 "
            "ELSE 1 END")
_WAVE_SQLITE = "COALESCE(CAST(json_extract(i.payload, '$.wave') AS INTEGER), 1)"
_CONTRASTIVE_PG = """
SELECT j.id, c.value ->> 'key', j.annotator_id, a.status = 'completed',
       CASE WHEN c.value ->> 'kind' = 'bad' THEN 'bad_ref' ELSE i.item_type END, i.segment_id,
       (c.value ->> 'system')::int, s.document_id, (j.scores ->> (c.value ->> 'key'))::float, i.hit_id, i.position,
       NULL, c.value ->> 'of', j.seconds
FROM {judgment} j
JOIN {item} i ON i.id = j.item_id
JOIN {segment} s ON s.id = i.segment_id
JOIN {assignment} a ON a.id = j.assignment_id
CROSS JOIN LATERAL jsonb_array_elements(i.payload -> 'candidates') WITH ORDINALITY AS c(value, n)
WHERE j.campaign_id = %s AND j.id <= %s AND j.scores IS NOT NULL
ORDER BY j.id, c.n
"""
_CONTRASTIVE_SQLITE = """
SELECT j.id, json_extract(c.value, '$.key'), j.annotator_id, a.status = 'completed',
       CASE WHEN json_extract(c.value, '$.kind') = 'bad' THEN 'bad_ref' ELSE i.item_type END, i.segment_id,
       json_extract(c.value, '$.system'), s.document_id,
       json_extract(j.scores, '$."' || json_extract(c.value, '$.key') || '"'), i.hit_id, i.position, NULL,
       json_extract(c.value, '$.of'), j.seconds
FROM {judgment} j
JOIN {item} i ON i.id = j.item_id
JOIN {segment} s ON s.id = i.segment_id
JOIN {assignment} a ON a.id = j.assignment_id, json_each(i.payload, '$.candidates') AS c
WHERE j.campaign_id = %s AND j.id <= %s AND j.scores IS NOT NULL
ORDER BY j.id, c.key
"""
# Spans as rows (judgment, candidate key, severity, category, side, start, end, system id, segment).
_SPANS_PG = """
SELECT j.id AS judgment, COALESCE(x.value ->> 'candidate', '') AS candidate, x.value ->> 'severity' AS severity,
       COALESCE(x.value ->> 'category', '') AS category, COALESCE(x.value ->> 'side', 'target') = 'source' AS
       source_side, (x.value ->> 'start')::int AS start_at, (x.value ->> 'end')::int AS end_at
FROM {judgment} j CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(j.spans) = 'array' THEN j.spans
                                                          ELSE '[]'::jsonb END) AS x(value)
WHERE j.campaign_id = %s AND j.id <= %s {extra}
"""
_SPANS_SQLITE = """
SELECT j.id AS judgment, COALESCE(json_extract(x.value, '$.candidate'), '') AS candidate,
       json_extract(x.value, '$.severity') AS severity, COALESCE(json_extract(x.value, '$.category'), '') AS category,
       COALESCE(json_extract(x.value, '$.side'), 'target') = 'source' AS source_side,
       json_extract(x.value, '$.start') AS start_at, json_extract(x.value, '$.end') AS end_at
FROM {judgment} j, json_each(CASE WHEN json_type(j.spans) = 'array' THEN j.spans ELSE '[]' END) AS x
WHERE j.campaign_id = %s AND j.id <= %s {extra}
"""


@dataclass
class Observations:
    """One row per judged candidate, in judgment order. `system` is the campaign's system index (systems by
    pk), `kind` an index of KINDS, `document` a document pk, `completed` whether the judge finished the HIT,
    `partner` the row of the other member of a perturbation pair (-1 if none), `score` the 0–100 score (NaN
    when the judgment has none, as imported MQM), `penalty` the MQM penalty (sum of error weights), and
    `n_minor`, `n_major`, `n_critical`, `n_spans` span counts, and `wave` the annotation wave (WMT25 pairs
    systems on (item, wave) slots)."""

    judgment: np.ndarray
    key: list
    annotator: np.ndarray
    completed: np.ndarray
    kind: np.ndarray
    segment: np.ndarray
    system: np.ndarray
    document: np.ndarray
    score: np.ndarray
    seconds: np.ndarray
    partner: np.ndarray
    penalty: np.ndarray
    n_minor: np.ndarray
    n_major: np.ndarray
    n_critical: np.ndarray
    n_spans: np.ndarray
    #: The annotation wave of each row (an imported esa-jsonl `wave`, kept in the item's payload; 1 by default).
    wave: np.ndarray | None = None

    def __post_init__(self):
        if self.wave is None:
            self.wave = np.ones(self.judgment.size, dtype=np.int64)

    @property
    def size(self) -> int:
        return int(self.judgment.size)


def _fetch(sql: str, params: list) -> list[tuple]:
    with transaction.atomic(), connection.cursor() as cursor:
        if _postgres():
            # PostgreSQL's JIT compiles these one-off queries for 0.1-1 s and gains nothing (benchmarks/README.md);
            # LOCAL: for this transaction only, not for whatever else the connection runs later
            cursor.execute("SET LOCAL jit = off")
        cursor.execute(sql.format(**_tables(), extra=""), params)
        return cursor.fetchall()


def load_observations(campaign, last_id: int, system_pks: list[int], contrastive: bool) -> Observations:
    """Every judged candidate of the campaign up to judgment `last_id`, without span counts (`span_counts` and
    `add_counts` fill them). On PostgreSQL, one candidate per judgment, the rows come back as arrays (binary
    COPY); otherwise (SQLite, contrastive screens) as tuples. Both give the same arrays (tested)."""
    if _postgres() and not contrastive:
        return _observations_copied(campaign, last_id, system_pks)
    return _observation_rows(campaign, last_id, system_pks, contrastive)


_COPIED = """
SELECT j.id::int8, j.annotator_id::int8, COALESCE(a.status = 'completed', false),
       (CASE i.item_type WHEN 'bad_ref' THEN 1 WHEN 'tutorial' THEN 2 ELSE 0 END)::int8, i.segment_id::int8,
       o.system_id::int8, s.document_id::int8, COALESCE(j.score, 'NaN')::float8, i.hit_id::int8, i.position::int8,
       COALESCE(i.partner_position, -1)::int8, COALESCE(j.seconds, 'NaN')::float8, {wave}
FROM {judgment} j
JOIN {item} i ON i.id = j.item_id
JOIN {output} o ON o.id = i.output_id
JOIN {segment} s ON s.id = i.segment_id
JOIN {assignment} a ON a.id = j.assignment_id
WHERE j.campaign_id = %s AND j.id <= %s
ORDER BY j.id
"""
_COPIED_COLUMNS = [("judgment", "int8"), ("annotator", "int8"), ("completed", "bool"), ("kind", "int8"),
                   ("segment", "int8"), ("system", "int8"), ("document", "int8"), ("score", "float8"),
                   ("hit", "int8"), ("position", "int8"), ("partner", "int8"), ("seconds", "float8"),
                   ("wave", "int8")]


def _observations_copied(campaign, last_id: int, system_pks: list[int]) -> Observations:
    a = copy_arrays(_COPIED.format(**_tables(), wave=_WAVE_PG), [campaign.pk, last_id], _COPIED_COLUMNS)
    n = a["judgment"].size
    return Observations(
        judgment=a["judgment"], key=[""] * n, annotator=a["annotator"], completed=a["completed"], kind=a["kind"],
        segment=a["segment"], system=np.searchsorted(np.asarray(system_pks, dtype=np.int64), a["system"]),
        document=a["document"], score=a["score"], seconds=a["seconds"],
        partner=_partner_rows(a["annotator"], a["hit"], a["position"], a["partner"]), penalty=np.zeros(n),
        n_minor=np.zeros(n, np.int64), n_major=np.zeros(n, np.int64), n_critical=np.zeros(n, np.int64),
        n_spans=np.zeros(n, np.int64), wave=a["wave"])


def _partner_rows(annotator, hit, position, partner) -> np.ndarray:
    """The row of each perturbation pair's other member: same judge, same HIT, the partner position (-1: none)."""
    n = annotator.size
    rows = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return rows
    slot = (annotator * (hit.max() + 1) + hit) * (max(position.max(), partner.max()) + 1)
    here, there = slot + position, slot + np.where(partner >= 0, partner, 0)
    order = np.argsort(here, kind="stable")
    found = np.minimum(np.searchsorted(here[order], there), n - 1)
    match = (partner >= 0) & (here[order][found] == there)
    rows[match] = order[found[match]]
    return rows


def _observation_rows(campaign, last_id: int, system_pks: list[int], contrastive: bool) -> Observations:
    """The observations as rows, without span counts."""
    sql = (_CONTRASTIVE_PG if _postgres() else _CONTRASTIVE_SQLITE) if contrastive else _SINGLE.replace(
        "{wave}", _WAVE_PG if _postgres() else _WAVE_SQLITE)
    rows = _fetch(sql, [campaign.pk, last_id])
    n = len(rows)
    if n == 0:
        empty_i, empty_f = np.zeros(0, dtype=np.int64), np.zeros(0)
        return Observations(empty_i, [], empty_i, np.zeros(0, bool), empty_i, empty_i, empty_i, empty_i, empty_f,
                            empty_f, empty_i, empty_f, empty_i, empty_i, empty_i, empty_i)
    (judgment, key, annotator, completed, item_type, segment, system, document, score, hit, position, partner,
     original, seconds, *wave) = zip(*rows, strict=True)
    judgment = np.array(judgment, dtype=np.int64)
    system = np.array(system, dtype=np.int64)
    annotator = np.array(annotator, dtype=np.int64)
    if contrastive:
        # a bad column pairs with the column it degrades, in the same judgment
        partner_row = np.full(n, -1, dtype=np.int64)
        index = {(int(j), k): r for r, (j, k) in enumerate(zip(judgment, key, strict=True))}
        for r, of in enumerate(original):
            if of is not None and (int(judgment[r]), of) in index:
                partner_row[r] = index[(int(judgment[r]), of)]
    else:
        system = np.searchsorted(np.asarray(system_pks, dtype=np.int64), system)
        partner_row = _partner_rows(annotator, np.array(hit, dtype=np.int64), np.array(position, dtype=np.int64),
                                    np.array([-1 if p is None else p for p in partner], dtype=np.int64))
    return Observations(
        judgment=judgment, key=list(key), annotator=annotator, completed=np.array(completed, dtype=bool),
        kind=np.array([_KIND_OF_ITEM.get(t, 0) for t in item_type], dtype=np.int64),
        segment=np.array(segment, dtype=np.int64), system=system, document=np.array(document, dtype=np.int64),
        score=np.array(score, dtype=np.float64), seconds=np.array(seconds, dtype=np.float64), partner=partner_row,
        penalty=np.zeros(n), n_minor=np.zeros(n, np.int64), n_major=np.zeros(n, np.int64),
        n_critical=np.zeros(n, np.int64), n_spans=np.zeros(n, np.int64),
        wave=np.array(wave[0], dtype=np.int64) if wave else None)


@dataclass
class SpanCounts:
    """Per (observation row, category, severity, side): how many spans, summed into the observations by
    `add_counts` (grouped per distinct key, or one row per span)."""

    row: np.ndarray
    category: np.ndarray
    severity: np.ndarray
    side: np.ndarray
    count: np.ndarray
    categories: list[str]
    severities: list[str]


# The spans of the judgments up to an id, one row each, as codes: severity and category by their place (1-based) in
# the given lists of names, 0 for a name not in them.
_SPAN_CODES = """
SELECT j.id::int8, COALESCE(array_position(%s::text[], x.severity), 0)::int8,
       COALESCE(array_position(%s::text[], COALESCE(x.category, '')), 0)::int8, COALESCE(x.side = 'source', false)
FROM {judgment} j CROSS JOIN LATERAL jsonb_to_recordset(CASE WHEN jsonb_typeof(j.spans) = 'array' THEN j.spans
                                                        ELSE '[]'::jsonb END) AS x(severity text, category text,
                                                                                   side text)
WHERE j.campaign_id = %s AND j.id <= %s AND x.severity IS NOT NULL
"""
_SPAN_CODE_COLUMNS = [("judgment", "int8"), ("severity", "int8"), ("category", "int8"), ("side", "bool")]
# Every severity and category among those spans, when the expected names did not cover them.
_SPAN_NAMES = """
SELECT DISTINCT x.severity, COALESCE(x.category, '')
FROM {judgment} j CROSS JOIN LATERAL jsonb_to_recordset(CASE WHEN jsonb_typeof(j.spans) = 'array' THEN j.spans
                                                        ELSE '[]'::jsonb END) AS x(severity text, category text)
WHERE j.campaign_id = %s AND j.id <= %s AND x.severity IS NOT NULL
"""
SEVERITIES = ("critical", "major", "minor")


def _span_codes(campaign, last_id: int, obs: Observations) -> SpanCounts:
    """One count per span (PostgreSQL, one candidate per judgment), numpy summing them: the spans are coded
    against the names the campaign expects (the severities, "" and the MQM taxonomy); only if some span has
    another name (an imported file's own categories) are the names listed first and the spans read again."""
    from annotation.building.spans import DEFAULT_MQM_TAXONOMY

    severities = sorted(SEVERITIES)
    categories = sorted({"", *((campaign.options or {}).get("taxonomy") or DEFAULT_MQM_TAXONOMY)})
    a = copy_arrays(_SPAN_CODES.format(**_tables()), [severities, categories, campaign.pk, last_id],
                    _SPAN_CODE_COLUMNS)
    if (a["severity"] == 0).any() or (a["category"] == 0).any():
        names = _fetch(_SPAN_NAMES.format(**_tables()), [campaign.pk, last_id])
        severities = sorted({severity for severity, _ in names})
        categories = sorted({category for _, category in names})
        a = copy_arrays(_SPAN_CODES.format(**_tables()), [severities, categories, campaign.pk, last_id],
                        _SPAN_CODE_COLUMNS)
    row = np.searchsorted(obs.judgment, a["judgment"])
    found = (row < obs.size) & (obs.judgment[np.minimum(row, max(obs.size - 1, 0))] == a["judgment"]) & \
        (a["severity"] > 0) & (a["category"] > 0)
    return SpanCounts(row[found], a["category"][found] - 1, a["severity"][found] - 1, a["side"][found],
                      np.ones(int(found.sum()), dtype=np.int64), categories, severities)


_COUNTS = """
SELECT judgment, candidate, severity, category, source_side, COUNT(*) FROM ({spans}) AS t
GROUP BY judgment, candidate, severity, category, source_side
"""


def span_counts(campaign, last_id: int, obs: Observations) -> SpanCounts:
    """Spans counted per observation, category, severity and side: grouped in the database, or on PostgreSQL with one
    candidate per judgment one row per span as codes (`_span_codes`)."""
    if _postgres() and all(k == "" for k in obs.key):
        return _span_codes(campaign, last_id, obs)
    return _grouped_span_counts(campaign, last_id, obs)


def _grouped_span_counts(campaign, last_id: int, obs: Observations) -> SpanCounts:
    spans = (_SPANS_PG if _postgres() else _SPANS_SQLITE).format(**_tables(), extra="")
    rows = _fetch(_COUNTS.replace("{spans}", spans), [campaign.pk, last_id])
    rows = [r for r in rows if r[2] is not None]
    if not rows:
        z = np.zeros(0, dtype=np.int64)
        return SpanCounts(z, z, z, np.zeros(0, bool), z, [], [])
    judgment, key, severity, category, side, count = zip(*rows, strict=True)
    judgment = np.array(judgment, dtype=np.int64)
    if all(k == "" for k in obs.key):  # one candidate per judgment: its row is found by its judgment id
        row = np.searchsorted(obs.judgment, judgment)
        found = (row < obs.size) & (obs.judgment[np.minimum(row, max(obs.size - 1, 0))] == judgment)
    else:
        lookup = {(int(j), k): r for r, (j, k) in enumerate(zip(obs.judgment, obs.key, strict=True))}
        row = np.array([lookup.get((int(j), k), -1) for j, k in zip(judgment, key, strict=True)], dtype=np.int64)
        found = row >= 0
    categories, category_code = _codes(category)
    severities, severity_code = _codes(severity)
    return SpanCounts(row[found], category_code[found], severity_code[found], np.array(side, dtype=bool)[found],
                      np.array(count, dtype=np.int64)[found], categories, severities)


def _codes(names) -> tuple[list[str], np.ndarray]:
    """Distinct names in sorted order, and each name's code (a dict lookup per row: there are few names)."""
    distinct = sorted(set(names))
    code = {name: i for i, name in enumerate(distinct)}
    return [str(n) for n in distinct], np.fromiter((code[n] for n in names), dtype=np.int64, count=len(names))


def add_counts(obs: Observations, counts: SpanCounts, weights: MqmWeights) -> None:
    """Fill the observations' span counts and MQM penalties from the per-row counts."""
    from ...stats.error_spans import error_weights

    n = obs.size
    w = error_weights(counts.categories, counts.severities, counts.category, counts.severity, counts.side, weights)
    obs.penalty = np.bincount(counts.row, weights=w * counts.count, minlength=n)
    obs.n_spans = np.bincount(counts.row, weights=counts.count, minlength=n).astype(np.int64)
    for name in ("minor", "major", "critical"):
        if name in counts.severities:
            chosen = counts.severity == counts.severities.index(name)
            setattr(obs, f"n_{name}", np.bincount(counts.row[chosen], weights=counts.count[chosen],
                                                  minlength=n).astype(np.int64))


def spans_of(campaign, last_id: int, judgments: np.ndarray) -> list[tuple]:
    """The spans of the given judgments: (judgment, candidate key, severity, category, source side, start, end)."""
    if judgments.size == 0:
        return []
    ids = ",".join(str(int(j)) for j in np.unique(judgments))
    sql = (_SPANS_PG if _postgres() else _SPANS_SQLITE).format(**_tables(), extra=f"AND j.id IN ({ids})")
    with connection.cursor() as cursor:
        cursor.execute(sql, [campaign.pk, last_id])
        return cursor.fetchall()
