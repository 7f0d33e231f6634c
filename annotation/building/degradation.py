"""Degraded copies of translations for quality control (docs/methods.md §3).

Every function takes a `random.Random` so that a campaign's seed reproduces its items.
Text is split into words on white space; text in a script written without spaces between
words (Chinese, Japanese, Thai, Lao, Khmer, Myanmar) is split into characters instead, and
the result is joined back without spaces. `tokenize` says which unit it used.
"""
import math
import random
import re

_SPACE = re.compile(r"\s+")
_NO_SPACE_SCRIPTS = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
)


class CannotDegrade(ValueError):
    """The text is too short for this degradation; the caller picks another item."""


def tokenize(text: str) -> tuple[list[str], str]:
    """Split `text` into words, or into characters when it has no spaces; returns (tokens, joiner)."""
    words = _SPACE.split(text.strip())
    words = [w for w in words if w]
    if len(words) <= 2 and _NO_SPACE_SCRIPTS.search(text):
        return [c for c in text if not c.isspace()], ""
    return words, " "


def deletion_length(n: int) -> int:
    """How many consecutive words an adequacy bad reference loses, by sentence length (Graham et al. 2014 §3)."""
    if n < 2:
        raise CannotDegrade("a one-word text cannot lose words")
    if n <= 3:
        return 1
    if n <= 5:
        return 2
    if n <= 8:
        return 3
    if n <= 15:
        return 4
    if n <= 20:
        return 5
    return math.ceil(n / 5)


def degrade_adequacy(text: str, rng: random.Random) -> str:
    """Delete one run of k consecutive words, k from `deletion_length` (Graham et al. 2014 §3)."""
    tokens, joiner = tokenize(text)
    k = deletion_length(len(tokens))
    start = rng.randrange(len(tokens) - k + 1)
    return joiner.join(tokens[:start] + tokens[start + k:])


def _duplicate_one(tokens: list[str], rng: random.Random, taken: set[int]) -> bool:
    """Insert a copy of one random word at a slot not next to it and not at either end."""
    candidates = [i for i in range(len(tokens)) if i not in taken]
    rng.shuffle(candidates)
    for i in candidates:
        # Slot s puts the copy before tokens[s]; slots i and i+1 touch the original,
        # slot 0 and slot len(tokens) are the first and last positions.
        slots = [s for s in range(1, len(tokens)) if s not in (i, i + 1)]
        if slots:
            slot = rng.choice(slots)
            tokens.insert(slot, tokens[i])
            shifted = {t + 1 if t >= slot else t for t in taken}
            taken.clear()
            taken.update(shifted)
            taken.add(i + 1 if i >= slot else i)
            taken.add(slot)
            return True
    return False


def degrade_fluency(text: str, rng: random.Random, words: int = 2) -> str:
    """Pick `words` words and insert a copy of each elsewhere in the sentence (docs/methods.md §3).

    A copy never lands next to its original, nor first or last. Words already copied, and
    the copies, are not picked again.
    """
    tokens, joiner = tokenize(text)
    if len(tokens) < 3:
        raise CannotDegrade("a text of fewer than three words has no slot for a copy")
    taken: set[int] = set()
    for _ in range(words):
        if not _duplicate_one(tokens, rng, taken):
            raise CannotDegrade("no slot left for another copy")
    return joiner.join(tokens)


def shuffle_for_spam(text: str, rng: random.Random) -> str:
    """Shuffle the words of `text`, keeping the first and last 10 % in place (Läubli et al. 2018 §2.2)."""
    tokens, joiner = tokenize(text)
    keep = int(len(tokens) * 0.1)
    middle = tokens[keep:len(tokens) - keep]
    if len(set(middle)) < 2:
        raise CannotDegrade("too few distinct words in the middle to shuffle")
    original = list(middle)
    while middle == original:
        rng.shuffle(middle)
    return joiner.join(tokens[:keep] + middle + tokens[len(tokens) - keep:])
