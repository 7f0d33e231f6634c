"""How much of the video and audio each judge played (docs/api.md, "Media actions"), for the workers table: its
page, `workers/` and workers.csv gain the columns below in a campaign whose items show video or audio.

- `media_judgments`: the worker's judgments of items with video or audio;
- `media_played`: the mean, over those judgments, of the least share (%) of any of the item's clips played;
- `media_short`: those judgments where some clip was played less than the campaign's `require_media_played`;
- `media_flagged`: true when there is any.
The server refuses an answer that reports less than the requirement, so a flag marks answers stored before the
requirement was raised (the campaign's options) or sent without the screen; with no requirement nothing is
flagged, and the shares still show who watched."""
from __future__ import annotations

from annotation.building.media_actions import share_played, short_clips
from annotation.models import Judgment

COLUMNS = ("media_judgments", "media_played", "media_short", "media_flagged")


def required_share(campaign) -> float:
    return float((campaign.options or {}).get("require_media_played") or 0)


def per_worker(campaign) -> dict[str, dict]:
    """The columns per worker name (the external id, or the user name), for workers with media judgments."""
    required = required_share(campaign)
    found: dict[str, dict] = {}
    rows = (Judgment.objects.filter(campaign=campaign, media__isnull=False)
            .values_list("annotator__external_id", "annotator__user__username", "media"))
    for external_id, username, media in rows.iterator(chunk_size=5000):
        clips = media.get("clips") or []
        if not clips:
            continue
        by_index = {entry["media"]: entry for entry in media.get("seconds", [])}
        least = min(share_played(by_index.get(k)) for k in clips)
        worker = found.setdefault(external_id or username, {"media_judgments": 0, "shares": 0.0, "media_short": 0})
        worker["media_judgments"] += 1
        worker["shares"] += least
        worker["media_short"] += bool(short_clips(media, required))
    return {name: {"media_judgments": w["media_judgments"],
                   "media_played": round(100 * w["shares"] / w["media_judgments"], 1),
                   "media_short": w["media_short"], "media_flagged": w["media_short"] > 0}
            for name, w in found.items()}


def page_rows(campaign) -> list[dict]:
    """The page's media table: one row per worker with media judgments (computed results or not), by name."""
    return [{"worker": name, **columns} for name, columns in sorted(per_worker(campaign).items())]


def with_media_columns(campaign, rows: list[dict]) -> tuple[list[dict], bool]:
    """`rows` (worker rows with a `worker` name) with the media columns added, and whether the campaign has any
    media judgments (False: the rows come back as they were)."""
    found = per_worker(campaign)
    if not found:
        return rows, False
    empty = {"media_judgments": 0, "media_played": None, "media_short": 0, "media_flagged": False}
    return [{**row, **found.get(row.get("worker"), empty)} for row in rows], True
