"""The media-split result part (docs/methods.md#instruction-following): for a campaign with media, whatever its
protocol, each system's translations grouped by what their item showed (an image, a video, an audio clip, none; and
with any media or without), with the mean 0–100 score the judges gave them and, where the campaign asks the
instruction judgment, the share of "yes": so a researcher sees whether a system does worse where the image matters.

A translation's score is the judgment's `score` (one translation a screen) or its candidate's entry in `scores`
(contrastive ESA); protocols without a 0–100 score per translation (pairwise, ranking) give none (null). Systems
come from the protocol's role `instruction_systems`; quality-control copies are left out.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from django.db import transaction

from annotation.building.media_records import has_media
from annotation.models import Campaign, Judgment

from ...models import ResultTable
from ...services.latex import booktabs
from ...services.results_read import freshness, stored_table
from ...services.storing import jsonable
from ...stats.media_split import group_means
from ..base import Table

TABLE = "media_split"
GROUPS = ("image", "video", "audio", "none", "with media", "without media")
COLUMNS = ("system", "media", "n", "mean_score", "score_low", "score_high", "judged_instructions", "yes_share")


def _groups(segment_media, document_media) -> list[str]:
    kinds = {e.get("kind") for e in [*(segment_media or []), *((document_media or {}).get("document") or [])]}
    found = [kind for kind in GROUPS[:3] if kind in kinds]
    return [*found, "with media"] if found else ["none", "without media"]


def media_rows(campaign: Campaign) -> list[dict]:
    """The table's rows: per system and media group with at least one translation judged."""
    protocol, options = campaign.protocol_spec, campaign.options or {}
    judgments = (Judgment.objects.filter(campaign=campaign, item__item_type="system").order_by("pk").values_list(
        "score", "scores", "instruction", "item__payload", "item__output__system__name", "item__segment__media",
        "item__segment__document__media").iterator(chunk_size=2000))
    names: dict[str, int] = {}
    cell, value, said_yes, said = [], [], [], []
    for score, scores, instruction, payload, output_system, segment_media, document_media in judgments:
        groups = _groups(segment_media, document_media)
        for key, system in protocol.instruction_systems(payload or {}, output_system, options).items():
            if system is None:
                continue
            given = score if key == "" else (scores or {}).get(key)
            answer = ((instruction or {}).get(key) or {}).get("answer")
            s = names.setdefault(system, len(names))
            for group in groups:
                cell.append(s * len(GROUPS) + GROUPS.index(group))
                value.append(np.nan if given is None else float(given))
                said.append(answer is not None)
                said_yes.append(answer == "yes")
    if not cell:
        return []
    n_cells = len(names) * len(GROUPS)
    cells = np.asarray(cell, dtype=np.int64)
    means = group_means(cells, np.asarray(value), n_cells)
    seen = np.bincount(cells, minlength=n_cells)
    judged = np.bincount(cells, weights=np.asarray(said, dtype=np.float64), minlength=n_cells)
    yes = np.bincount(cells, weights=np.asarray(said_yes, dtype=np.float64), minlength=n_cells)

    def finite(x):
        return None if not np.isfinite(x) else float(x)

    rows = []
    for system in sorted(names):
        for g, group in enumerate(GROUPS):
            c = names[system] * len(GROUPS) + g
            if seen[c]:
                rows.append({"system": system, "media": group, "n": int(seen[c]), "mean_score": finite(means.mean[c]),
                             "score_low": finite(means.low[c]), "score_high": finite(means.high[c]),
                             "judged_instructions": int(judged[c]),
                             "yes_share": float(yes[c] / judged[c]) if judged[c] else None})
    return rows


class MediaSplit:
    """The part: applies to campaigns with media."""

    name = "media-split"
    label = "Scores by media"
    template = "evaluation/parts/media_split.html"

    @staticmethod
    def applies(campaign: Campaign) -> bool:
        return has_media(campaign)

    def compute(self, campaign: Campaign) -> None:
        rows = media_rows(campaign)
        with transaction.atomic():
            ResultTable.objects.filter(campaign=campaign, name=TABLE).delete()
            ResultTable.objects.create(campaign=campaign, name=TABLE, columns=list(COLUMNS), rows=jsonable(rows))

    def answer(self, campaign: Campaign, params: Mapping[str, str]) -> dict:
        """The body of `GET /api/campaigns/<slug>/media-split/`."""
        return {**freshness(campaign).as_api(), "results": stored_table(campaign, TABLE)[1]}

    def tables(self) -> list[Table]:
        return [Table(TABLE, _read, _latex)]

    def page_context(self, campaign: Campaign) -> dict:
        return {"rows": stored_table(campaign, TABLE)[1]}


def _read(campaign, params):
    columns, rows = stored_table(campaign, TABLE)
    return columns or list(COLUMNS), rows


def _number(digits: int):
    return lambda v: "--" if v is None else f"{v:.{digits}f}"


def _latex(campaign, params) -> str:
    return booktabs([("System", "system", "l"), ("Media", "media", "l"), ("n", "n", "r"),
                     ("Mean score", "mean_score", "r"), ("95% low", "score_low", "r"), ("95% high", "score_high", "r"),
                     ("Yes share", "yes_share", "r")], stored_table(campaign, TABLE)[1],
                    {"mean_score": _number(1), "score_low": _number(1), "score_high": _number(1),
                     "yes_share": _number(3)}, group="system", caption="Scores by the media the items showed")


MEDIA_SPLIT = MediaSplit()
