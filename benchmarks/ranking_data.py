"""The relative rankings benchmarks/ranking.py generates (numpy, vectorised; its docstring says how), written as a
WMT10-16 `wmt-rank` file or inserted directly as the import would store them."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

#: Outputs ranked on one screen, and rankings of one segment.
PER_SCREEN = 5
RANKINGS_PER_SEGMENT = 10
WMT10_HEADER = ("srclang,trglang,srcIndex,documentId,segmentId,judgeId,"
                + ",".join(f"system{k}Number,system{k}Id" for k in range(1, PER_SCREEN + 1)) + ","
                + ",".join(f"system{k}rank" for k in range(1, PER_SCREEN + 1)))


# ---------------------------------------------------------------------------------------------
# The generated rankings
# ---------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Generated:
    quality: np.ndarray  # (n_systems,) system k's quality, decreasing with k
    system: np.ndarray  # (n_rankings, 5) system codes in screen order
    rank: np.ndarray  # (n_rankings, 5) 1 = best, ties share the better rank
    judge: np.ndarray  # (n_rankings,)
    segment: np.ndarray  # (n_rankings,)

    @property
    def n_rankings(self) -> int:
        return int(self.judge.size)

    def slots(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One row per ranked slot, as stats.ranking.expand takes them: (ranking, system, rank)."""
        return np.repeat(np.arange(self.n_rankings), PER_SCREEN), self.system.ravel(), self.rank.ravel()


def system_names(n_systems: int) -> list[str]:
    return [f"system-{k:02d}" for k in range(n_systems)]  # name order = code order = quality order


def generate(n_rankings: int, n_systems: int, n_judges: int, seed: int) -> Generated:
    if n_systems < PER_SCREEN:
        raise SystemExit(f"--systems must be at least {PER_SCREEN}")
    rng = np.random.default_rng(seed)
    quality = np.linspace(3.0, 0.0, n_systems)
    system = np.argsort(rng.random((n_rankings, n_systems)), axis=1)[:, :PER_SCREEN]  # 5 distinct, random order
    judge = rng.integers(0, n_judges, n_rankings)
    noise = rng.uniform(0.6, 1.4, n_judges)
    perceived = np.rint(quality[system] + rng.normal(0.0, 1.0, (n_rankings, PER_SCREEN)) * noise[judge][:, None])
    rank = 1 + (perceived[:, None, :] > perceived[:, :, None]).sum(axis=2)  # 1 + outputs seen as better
    segment = rng.integers(0, max(1, n_rankings // RANKINGS_PER_SEGMENT), n_rankings)
    return Generated(quality, system, rank, judge, segment)


def write_wmt_rank(path: Path, g: Generated) -> None:
    """A WMT10-16 ranking file: header, then one ranking a line (srcIndex = segment + 1)."""
    names = system_names(g.quality.size)
    with path.open("w", encoding="utf-8") as handle:
        handle.write(WMT10_HEADER + "\n")
        for seg, judge, systems, ranks in zip(g.segment.tolist(), g.judge.tolist(), g.system.tolist(),
                                              g.rank.tolist(), strict=True):
            slots = ",".join(f"{s},{names[s]}" for s in systems)
            handle.write(f"en,de,{seg + 1},doc{seg // 10},{seg + 1},judge{judge:04d},{slots},"
                         f"{','.join(map(str, ranks))}\n")


def insert_directly(g: Generated, name: str):
    """The rows the wmt-rank import would store (annotation/building/judgment_files.py `_store`): one HIT and
    assignment per judge, one HitItem (payload candidates) and Judgment (ranks by candidate key) per ranking.
    Used only when the wmt-rank format is not registered."""
    from django.db import transaction
    from django.utils import timezone

    from annotation.building.bulk import insert
    from annotation.building.campaign_files import unique_slug
    from annotation.models import (
        Annotator,
        Assignment,
        Campaign,
        Document,
        Hit,
        HitItem,
        Judgment,
        Segment,
        System,
        new_token,
    )

    names = system_names(g.quality.size)
    now = timezone.now()
    with transaction.atomic():
        campaign = Campaign.objects.create(name=name, slug=unique_slug(name), protocol="ranking", analysis_only=True,
                                           status=Campaign.Status.CLOSED, source_language="en",
                                           target_language="de", options={"layout": "wmt10-16", "rows": "RANK"})
        document = Document.objects.create(campaign=campaign, doc_id="imported", position=0)
        segments = np.unique(g.segment).tolist()
        segment_ids = dict(zip(segments, insert(Segment, ["campaign_id", "document_id", "seg_id", "source",
                                                          "reference"],
                                                [(campaign.pk, document.pk, s + 1, "", "") for s in segments]),
                               strict=True))
        System.objects.bulk_create([System(campaign=campaign, name=n) for n in names])
        judges = np.unique(g.judge).tolist()
        labels = [f"judge{j:04d}" for j in judges]
        known = dict(Annotator.objects.filter(external_id__in=labels).values_list("external_id", "pk"))
        Annotator.objects.bulk_create([Annotator(external_id=x, source="imported") for x in labels if x not in known])
        known.update(Annotator.objects.filter(external_id__in=labels).values_list("external_id", "pk"))
        by_judge = np.argsort(g.judge, kind="stable")
        counts = np.bincount(g.judge)
        hit_ids = insert(Hit, ["campaign_id", "number", "size", "external_id"],
                         [(campaign.pk, n + 1, int(counts[j]), "en-de") for n, j in enumerate(judges)])
        assignment_ids = insert(Assignment, ["campaign_id", "hit_id", "annotator_id", "token", "status", "position",
                                             "started_at", "last_activity_at", "completed_at", "completion_code"],
                                [(campaign.pk, h, known[x], new_token(), Assignment.Status.COMPLETED,
                                  int(counts[j]), now, now, now, "")
                                 for h, j, x in zip(hit_ids, judges, labels, strict=True)])
        hit_of = dict(zip(judges, zip(hit_ids, assignment_ids, labels, strict=True), strict=True))
        order = by_judge.tolist()
        judge_of, seg_of = g.judge.tolist(), g.segment.tolist()
        systems, ranks = g.system.tolist(), g.rank.tolist()
        position = np.arange(g.n_rankings) - np.repeat(np.cumsum(counts) - counts, counts)
        item_ids = insert(HitItem, ["hit_id", "position", "set_index", "item_type", "segment_id", "output_id", "text",
                                    "payload"],
                          [(hit_of[judge_of[r]][0], int(p), int(p) // 10, "system", segment_ids[seg_of[r]], None, "",
                            {"candidates": [{"key": str(k + 1), "kind": "system", "system": s, "name": names[s]}
                                            for k, s in enumerate(systems[r])]})
                           for r, p in zip(order, position.tolist(), strict=True)])
        insert(Judgment, ["campaign_id", "assignment_id", "annotator_id", "item_id", "score", "choice", "ranks",
                          "seconds", "created_at"],
               [(campaign.pk, hit_of[judge_of[r]][1], known[hit_of[judge_of[r]][2]], item_id, None, "",
                 {str(k + 1): rk for k, rk in enumerate(ranks[r])}, None, now)
                for r, item_id in zip(order, item_ids, strict=True)])
    return campaign


def order_error(score: np.ndarray, quality: np.ndarray) -> int:
    """Pairs of systems the score orders against their true quality."""
    s, q = score[:, None] - score[None, :], quality[:, None] - quality[None, :]
    return int(((s * q) < 0).sum() // 2)
