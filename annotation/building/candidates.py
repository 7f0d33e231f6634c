"""Screens that show several candidates under opaque keys (ranking, constituent acceptance, contrastive ESA): the
keys, and the check that an answer answers each key shown and nothing else; shared here so that no protocol
imports another's."""
from __future__ import annotations

import secrets

from annotation.protocols.base import JudgmentError

KEY_BYTES = 4


def new_key(taken: set[str]) -> str:
    """A short opaque key, unique among `taken`, that says nothing about what it stands for."""
    while True:
        key = secrets.token_hex(KEY_BYTES)
        if key not in taken:
            taken.add(key)
            return key


def answers_every_key(item, given: dict, what: str) -> list[str]:
    """The item's candidate keys, after checking that `given` answers each of them and nothing else."""
    keys = [c["key"] for c in item.payload["candidates"]]
    missing = [k for k in keys if k not in given]
    if missing:
        raise JudgmentError(f"every candidate needs {what}; missing: {', '.join(missing)}")
    extra = [k for k in given if k not in keys]
    if extra:
        raise JudgmentError(f"unknown candidate key {extra[0][:20]!r}")
    return keys
