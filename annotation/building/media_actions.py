"""The judge's media actions sent with an answer (docs/api.md, "Media actions"): every protocol alike, so the
annotator path takes them off the body before the protocol reads its own answer (`split`), checks them against
the item's media and the campaign's `require_media_played` (`check`), and stores them in `Judgment.media`.

An answer to an item with video or audio may carry
- `media_actions`: at most MAX_ACTIONS `{"media": index, "event": "play"|"pause"|"seek"|"ended", "t": media
  seconds, "at": seconds since the item was shown}`;
- `media_seconds`: per video/audio at most one `{"media": index, "played": seconds, "duration": seconds|null}`,
  `played` the media time actually played (a seek skips nothing into it).
`index` counts in the item's `media` list (the document's own media, then its segment's). Stored as
`{"clips": [indices of its video/audio], "actions": [...], "seconds": [...]}` for every answer to an item with
video or audio (empty lists when nothing was reported), so the workers table can say who played how much."""
from __future__ import annotations

import math

from ..protocols.base import JudgmentError
from .media_payload import media_fields

KEYS = ("media_actions", "media_seconds")
EVENTS = ("play", "pause", "seek", "ended")
#: The most actions one answer may carry (the screen stops recording there).
MAX_ACTIONS = 500
#: The most media one item shows (a document's list and its segment's, 20 each; docs/api.md §2.1).
MAX_MEDIA = 40
#: The longest clip and the longest time on one item, in seconds.
MAX_SECONDS = 24 * 60 * 60
MAX_AT = 7 * 24 * 60 * 60
#: Slack between played and required seconds: the last frames of a clip need not count.
TOLERANCE_SECONDS = 0.5
PLAYED = ("video", "audio")


def _number(value, where: str, high: float, *, allow_none: bool = False) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or isinstance(value, float) and not math.isfinite(value) or not 0 <= value <= high:
        raise JudgmentError(f"'{where}' must be a number between 0 and {high:g}")
    return float(value)


def _index(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_MEDIA:
        raise JudgmentError(f"'{where}' must be the index of a medium of the item (0 to {MAX_MEDIA - 1})")
    return value


def _entries(value, key: str, cap: int) -> list:
    if not isinstance(value, list):
        raise JudgmentError(f"'{key}' must be a list")
    if len(value) > cap:
        raise JudgmentError(f"'{key}' may hold at most {cap} entries, not {len(value)}")
    return value


def _fields(entry, where: str, keys: tuple[str, ...]) -> dict:
    if not isinstance(entry, dict) or set(entry) != set(keys):
        raise JudgmentError(f"'{where}' must be an object with exactly {', '.join(keys)}")
    return entry


def parse(body: dict) -> dict | None:
    """The media report of an answer body, checked for shape (400 on anything else); None when it has none."""
    if not any(key in body for key in KEYS):
        return None
    actions = []
    for k, entry in enumerate(_entries(body.get("media_actions", []), "media_actions", MAX_ACTIONS)):
        where = f"media_actions/{k}"
        entry = _fields(entry, where, ("media", "event", "t", "at"))
        if entry["event"] not in EVENTS:
            raise JudgmentError(f"'{where}/event' must be one of {', '.join(EVENTS)}")
        actions.append({"media": _index(entry["media"], f"{where}/media"), "event": entry["event"],
                        "t": _number(entry["t"], f"{where}/t", MAX_SECONDS),
                        "at": _number(entry["at"], f"{where}/at", MAX_AT)})
    seconds, seen = [], set()
    for k, entry in enumerate(_entries(body.get("media_seconds", []), "media_seconds", MAX_MEDIA)):
        where = f"media_seconds/{k}"
        entry = _fields(entry, where, ("media", "played", "duration"))
        index = _index(entry["media"], f"{where}/media")
        if index in seen:
            raise JudgmentError(f"'{where}/media' reports medium {index} twice")
        seen.add(index)
        duration = _number(entry["duration"], f"{where}/duration", MAX_SECONDS, allow_none=True)
        played = _number(entry["played"], f"{where}/played", MAX_SECONDS)
        if duration is not None and played > duration + TOLERANCE_SECONDS:
            raise JudgmentError(f"'{where}/played' is longer than the medium's duration")
        seconds.append({"media": index, "played": played, "duration": duration})
    return {"actions": actions, "seconds": seconds}


def split(body) -> tuple[object, dict | None]:
    """The body without the media keys (what the protocol reads) and its parsed media report."""
    if not isinstance(body, dict) or not any(key in body for key in KEYS):
        return body, None
    report = parse(body)
    return {k: v for k, v in body.items() if k not in KEYS}, report


def clips_of(item) -> list[int]:
    """The indices of the video and audio among the media the item shows."""
    shown = media_fields("", item).get("media", [])
    return [k for k, entry in enumerate(shown) if entry["kind"] in PLAYED]


def share_played(entry: dict | None, slack: float = 0.0) -> float:
    """The share (0..1) of one clip played, from its `media_seconds` entry, `slack` seconds added (0 when
    unreported or of no length)."""
    if not entry or not entry.get("duration"):
        return 0.0
    return min(1.0, (entry["played"] + slack) / entry["duration"])


def short_clips(stored: dict, required: float) -> list[int]:
    """The clips of a stored report played less than `required` percent."""
    if required <= 0:
        return []
    by_index = {entry["media"]: entry for entry in stored.get("seconds", [])}
    return [k for k in stored.get("clips", []) if share_played(by_index.get(k), TOLERANCE_SECONDS) * 100 < required]


def check(item, report: dict | None, required: float) -> dict | None:
    """What `Judgment.media` stores for an answer to `item`: the report checked against the media the item shows
    (an index beyond them, or an action or seconds for an image, is a 400) and against `required` percent played
    of every video/audio (below it, a 400 naming the clip). None when the item shows no video or audio and the
    answer reports nothing."""
    clips = clips_of(item)
    if not clips:
        if report and (report["actions"] or report["seconds"]):
            raise JudgmentError("'media_actions' and 'media_seconds' are for an item with video or audio; this "
                                "one has none")
        return None
    stored = report or {"actions": [], "seconds": []}
    for key, entries in (("media_actions", stored["actions"]), ("media_seconds", stored["seconds"])):
        for k, entry in enumerate(entries):
            if entry["media"] not in clips:
                raise JudgmentError(f"'{key}/{k}/media' must be the index of a video or audio of the item "
                                    f"({', '.join(map(str, clips))}), not {entry['media']}")
    stored = {"clips": clips, **stored}
    short = short_clips(stored, required)
    if short:
        raise JudgmentError(f"this campaign asks that every video and audio be played to at least {required:g} % "
                            f"before the answer is sent; medium {short[0]} was not (media_seconds)")
    return stored
