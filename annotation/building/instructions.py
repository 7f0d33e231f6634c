"""Instructions (docs/api.md §2, §5): the text the systems were given for an item, shown to judges beside the source,
and the instruction judgment ("Did the translation follow the instructions? yes / partly / no", with an optional
note) that the campaign option `instruction_judgment` asks alongside any protocol's own answer.

A neutral block owned by no protocol: the import checks a line's `instructions` here, the judging service splits the
judgment off the body and checks it here, and each protocol says which translations an item shows through its
declared role `Protocol.instruction_targets` (one for most screens; one per candidate key on screens of several).
"""
from __future__ import annotations

from typing import Any

from annotation.protocols.base import JudgmentError

#: Longest instructions of a line or document, in characters.
MAX_INSTRUCTIONS = 10_000
#: Longest note a judge may add to an instruction judgment.
MAX_NOTE = 1_000
#: The answers, best first; the statistics score them yes=2, partly=1, no=0 (docs/methods.md).
ANSWERS = ("yes", "partly", "no")
#: The body's field of the instruction judgment.
FIELD = "instruction"
#: The key of the one translation of a screen that shows one.
SINGLE = ""

def check_line(record: dict, problems: list[str]) -> None:
    """A campaign line's optional `instructions` and `document_instructions`: at most MAX_INSTRUCTIONS characters
    (the caller checks that they are strings a database stores)."""
    for key in ("instructions", "document_instructions"):
        value = record.get(key)
        if isinstance(value, str) and len(value) > MAX_INSTRUCTIONS:
            problems.append(f"'{key}' must be at most {MAX_INSTRUCTIONS} characters, not {len(value)}")


def segment_text(record: dict, document_text: str) -> str:
    """What a segment stores: its line's own instructions, else its document's."""
    return (record.get("instructions") or "").strip() or document_text


def enabled(options: dict | None) -> bool:
    return bool((options or {}).get("instruction_judgment"))


def split(body: Any, options: dict | None) -> tuple[Any, Any]:
    """(the protocol's own answer, the instruction judgment as sent): with the option on, the judgment is taken out
    of the body before the protocol reads it (which refuses fields it does not know); with it off, the body stays
    whole, so an `instruction` field is refused as unexpected."""
    if not enabled(options) or not isinstance(body, dict):
        return body, None
    rest = dict(body)
    return rest, rest.pop(FIELD, None)


def _one(value: Any, where: str) -> dict:
    if not isinstance(value, dict) or "answer" not in value or set(value) - {"answer", "note"}:
        raise JudgmentError(f"{where} must be {{\"answer\": \"yes\"|\"partly\"|\"no\", \"note\"?}}")
    answer, note = value["answer"], value.get("note", "")
    if not isinstance(answer, str) or answer not in ANSWERS:
        raise JudgmentError(f"{where}: 'answer' must be \"yes\", \"partly\" or \"no\"")
    if not isinstance(note, str):
        raise JudgmentError(f"{where}: 'note' must be a string")
    if len(note) > MAX_NOTE:
        raise JudgmentError(f"{where}: 'note' must be at most {MAX_NOTE} characters, not {len(note)}")
    return {"answer": answer, "note": " ".join(note.split())}


def parse(raw: Any) -> dict:
    """The judgment as stored, {key: {"answer", "note"}}, from what the body sent: {"answer", "note"?} for a screen
    of one translation, {"<key>": {"answer", "note"?}, ...} for one of several. Raises JudgmentError (400)."""
    if raw is None:
        raise JudgmentError(f"'{FIELD}' is missing: say whether the translation followed the instructions "
                            "(yes, partly or no)")
    if isinstance(raw, dict) and "answer" in raw:
        return {SINGLE: _one(raw, f"'{FIELD}'")}
    if not isinstance(raw, dict) or not raw:
        raise JudgmentError(f"'{FIELD}' must be {{\"answer\", \"note\"?}}, or one such object per candidate key")
    return {str(key): _one(value, f"'{FIELD}' of {str(key)[:20]!r}") for key, value in raw.items()}


def check_keys(judged: dict, targets: list[tuple[str, str]]) -> None:
    """Each translation the item shows (`targets`, from the protocol's role) is judged, and nothing else."""
    keys = [key for key, _ in targets]
    missing = [key for key in keys if key not in judged]
    if missing:
        raise JudgmentError(f"'{FIELD}' must judge every translation shown" if missing != [SINGLE]
                            else f"'{FIELD}' must be {{\"answer\", \"note\"?}} on this screen")
    extra = [key for key in judged if key not in keys]
    if extra:
        raise JudgmentError(f"'{FIELD}' names {extra[0][:20]!r}, which is not a translation shown")


def screen_fields(segment, targets: list[tuple[str, str]], options: dict | None) -> dict:
    """What the screen shows beyond the protocol's payload: the item's `instructions` (when it has any) and, with
    the option on, the translations to judge against them (`instruction_targets`: [{"key", "label"}])."""
    shown: dict = {}
    text = getattr(segment, "instructions", "") if segment is not None else ""
    if text:
        shown["instructions"] = text
    if enabled(options) and targets:
        shown["instruction_targets"] = [{"key": key, "label": label} for key, label in targets]
    return shown


def candidate_targets(payload: dict) -> list[tuple[str, str]]:
    """The targets of a screen that shows several candidates under opaque keys, in the order shown."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return [(c["key"], f"Translation {letters[n] if n < len(letters) else n + 1}")
            for n, c in enumerate(payload.get("candidates") or ())]


def candidate_systems(payload: dict) -> dict[str, str | None]:
    """Per candidate key, the system judged (None for a control copy: a gold or degraded candidate)."""
    return {c["key"]: (c.get("name") or None) if c.get("kind") == "system" else None
            for c in payload.get("candidates") or ()}
