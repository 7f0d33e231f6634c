"""Loading a ranked-screen campaign's judgments (ranking, constituent acceptance) as one row per ranked slot,
expanded in the database.

A ranking judgment stores its ranks by opaque candidate key, and its item's payload says which system
(or control) stands behind each key (annotation/protocols/ranking/). The join of the two is done
in SQL (PostgreSQL's `jsonb_array_elements`, SQLite's `json_each`), so Python only turns columns
into arrays.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import connection

from annotation.models import HitItem, Judgment

#: Candidate kinds, as codes: a system output, the human reference imported as a pseudo-system, the gold
#: (known-good) translation and the degraded (known-bad) output of gold units.
KINDS = ("system", "reference", "gold", "bad")

_POSTGRES = """
SELECT j.id, j.annotator_id, j.item_id, i.segment_id, j.seconds, (c.value ->> 'system')::int, c.value ->> 'kind',
       (j.ranks ->> (c.value ->> 'key'))::int
FROM {judgment} j
JOIN {item} i ON i.id = j.item_id
CROSS JOIN LATERAL jsonb_array_elements(i.payload -> 'candidates') WITH ORDINALITY AS c(value, n)
WHERE j.campaign_id = %s AND j.id <= %s AND j.ranks IS NOT NULL
ORDER BY j.id, c.n
"""
_SQLITE = """
SELECT j.id, j.annotator_id, j.item_id, i.segment_id, j.seconds, json_extract(c.value, '$.system'),
       json_extract(c.value, '$.kind'), json_extract(j.ranks, '$."' || json_extract(c.value, '$.key') || '"')
FROM {judgment} j
JOIN {item} i ON i.id = j.item_id, json_each(i.payload, '$.candidates') AS c
WHERE j.campaign_id = %s AND j.id <= %s AND j.ranks IS NOT NULL
ORDER BY j.id, c.key
"""


@dataclass
class Slots:
    """One row per ranked candidate, in screen order within each judgment. Codes: `ranking` 0..n_rankings-1 per
    judgment (in id order), `system` the campaign's system index (-1 for a gold text), `kind` an index of KINDS;
    `rank` is None-free (unranked slots are left out). Per ranking: its judgment id, worker (annotator id),
    item (HitItem id), segment id and seconds."""

    ranking: np.ndarray
    system: np.ndarray
    kind: np.ndarray
    rank: np.ndarray
    judgment_id: np.ndarray
    annotator: np.ndarray
    item: np.ndarray
    segment: np.ndarray
    seconds: np.ndarray

    @property
    def n_rankings(self) -> int:
        return int(self.judgment_id.size)


def load_slots(campaign, last_judgment_id: int) -> Slots:
    """Every ranked slot of the campaign's judgments up to `last_judgment_id`."""
    template = _POSTGRES if connection.vendor == "postgresql" else _SQLITE
    sql = template.format(judgment=connection.ops.quote_name(Judgment._meta.db_table),
                          item=connection.ops.quote_name(HitItem._meta.db_table))
    with connection.cursor() as cursor:
        cursor.execute(sql, [campaign.pk, last_judgment_id])
        rows = cursor.fetchall()
    rows = [r for r in rows if r[7] is not None]
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return Slots(empty, empty, empty, empty, empty, empty, empty, empty, np.zeros(0))
    judgment, annotator, item, segment, seconds, system, kind, rank = zip(*rows, strict=True)
    judgment = np.array(judgment, dtype=np.int64)
    starts = np.r_[True, judgment[1:] != judgment[:-1]]
    ranking = np.cumsum(starts) - 1
    kind_code = {name: code for code, name in enumerate(KINDS)}
    return Slots(
        ranking=ranking.astype(np.int64),
        system=np.array([-1 if s is None else s for s in system], dtype=np.int64),
        kind=np.array([kind_code.get(k, 0) for k in kind], dtype=np.int64),
        rank=np.array(rank, dtype=np.int64),
        judgment_id=judgment[starts],
        annotator=np.array(annotator, dtype=np.int64)[starts],
        item=np.array(item, dtype=np.int64)[starts],
        segment=np.array([-1 if s is None else s for s in segment], dtype=np.int64)[starts],
        seconds=np.array([np.nan if s is None else s for s in seconds], dtype=np.float64)[starts],
    )
