"""What every protocol provides (see the registry in `__init__`)."""
from __future__ import annotations

import math
import random
from typing import Any


class UnknownProtocol(ValueError):
    pass


class JudgmentError(ValueError):
    """A submitted answer is malformed or out of range; the message is shown to the client."""


LANGUAGE_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
    "nl": "Dutch", "cs": "Czech", "pl": "Polish", "ru": "Russian", "uk": "Ukrainian", "zh": "Chinese",
    "ja": "Japanese", "ko": "Korean", "ar": "Arabic", "he": "Hebrew", "fa": "Persian", "tr": "Turkish",
    "fi": "Finnish", "et": "Estonian", "lv": "Latvian", "lt": "Lithuanian", "ro": "Romanian", "hi": "Hindi",
    "ta": "Tamil", "gu": "Gujarati", "kk": "Kazakh", "is": "Icelandic", "ha": "Hausa", "hr": "Croatian",
}
RTL_LANGUAGES = {"ar", "he", "fa", "ur", "ps", "yi", "dv", "ug", "ckb", "sd", "iw"}


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code.split("-")[0].lower(), code)


def is_rtl(code: str) -> bool:
    return code.split("-")[0].lower() in RTL_LANGUAGES


def require_item_id(body: Any) -> int:
    if not isinstance(body, dict):
        raise JudgmentError("the body must be a JSON object")
    item = body.get("item")
    if isinstance(item, bool) or not isinstance(item, int):
        raise JudgmentError("'item' must be the integer id of the item shown")
    return item


def require_number(body: dict, key: str, low: float, high: float) -> float:
    value = body.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise JudgmentError(f"'{key}' must be a number")
    if not low <= value <= high:
        raise JudgmentError(f"'{key}' must lie between {low:g} and {high:g}, not {value:g}")
    return float(value)


class Protocol:
    """Base class. Subclasses set the attributes and implement the methods below."""

    name: str = ""
    label: str = ""
    #: Which statistics apply: the evaluation app maps a family to its analyses.
    family: str = ""
    #: The rating screen's template and script.
    template: str = ""
    script: str = ""
    #: Campaign-file fields a segment must carry (beyond source and systems).
    requires_reference: bool = False

    def default_statement(self, language: str) -> str:
        raise NotImplementedError

    def check_options(self, options: dict, system_names: set[str], hit_size: int) -> list[str]:
        """Problems with the protocol's options for this campaign; empty when fine. May fill in defaults."""
        return []

    def hit_exposure(self, items) -> dict:
        """What a worker doing this HIT has seen, for protocols that keep workers apart (see `conflicts`)."""
        return {}

    def conflicts(self, exposure: dict, seen: list[dict]) -> bool:
        """Whether a HIT with `exposure` must not go to a worker whose earlier HITs exposed `seen`."""
        return False

    def plan_hits(self, content, hit_size: int, options: dict, rng: random.Random):
        """The campaign's HITs as lists of `ItemPlan`s, from a `hit_builder.CampaignContent`."""
        raise NotImplementedError

    def item_payload(self, item) -> dict:
        """What the screen shows for `item`, and nothing else (never its type or system)."""
        raise NotImplementedError

    def parse_judgment(self, body: Any) -> dict:
        """Validate a submitted answer; returns the `Judgment` fields it sets. Raises JudgmentError."""
        raise NotImplementedError

    #: Extra columns of the judgment export, and the item payload keys they are computed from.
    export_columns: tuple[str, ...] = ()
    export_payload_keys: tuple[str, ...] = ()

    def export_values(self, payload: dict, options: dict, row: dict) -> dict:
        """The extra export columns of one judgment, from its item's payload keys and the campaign options."""
        return {}
