"""Degradations of docs/methods.md §3: rules checked on hand-made cases and as properties."""
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.building.degradation import (
    CannotDegrade,
    degrade_adequacy,
    degrade_fluency,
    deletion_length,
    shuffle_for_spam,
    tokenize,
)

words = st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=6), min_size=1, max_size=40)


@pytest.mark.parametrize("n,k", [(2, 1), (3, 1), (4, 2), (5, 2), (6, 3), (8, 3), (9, 4), (15, 4), (16, 5), (20, 5),
                                 (21, 5), (25, 5), (26, 6), (40, 8), (41, 9)])
def test_deletion_length_follows_the_table(n, k):
    assert deletion_length(n) == k


def test_one_word_cannot_be_degraded():
    with pytest.raises(CannotDegrade):
        degrade_adequacy("word", random.Random(1))
    with pytest.raises(CannotDegrade):
        deletion_length(1)


@settings(max_examples=200, deadline=None)
@given(words.filter(lambda w: len(w) >= 2), st.integers(0, 2**32))
def test_adequacy_deletes_one_run_of_k_words(tokens, seed):
    text = " ".join(tokens)
    degraded = degrade_adequacy(text, random.Random(seed)).split(" ")
    k = deletion_length(len(tokens))
    assert len(degraded) == len(tokens) - k
    # the result is the original with one contiguous run removed
    assert any(tokens[:s] + tokens[s + k:] == degraded for s in range(len(tokens) - k + 1))


@settings(max_examples=200, deadline=None)
@given(words.filter(lambda w: len(w) >= 4), st.integers(0, 2**32))
def test_fluency_inserts_two_copies_never_adjacent_nor_at_the_ends(tokens, seed):
    tokens = [f"{t}{i}" for i, t in enumerate(tokens)]  # distinct words, so copies can be told apart
    out = degrade_fluency(" ".join(tokens), random.Random(seed)).split(" ")
    assert len(out) == len(tokens) + 2
    counts = Counter(out)
    copied = [w for w, c in counts.items() if c == 2]
    assert len(copied) == 2 and all(c <= 2 for c in counts.values())
    for word in copied:
        first, second = [i for i, w in enumerate(out) if w == word]
        assert second - first > 1, "a copy sits next to its original"
    assert out[0] == tokens[0] and out[-1] == tokens[-1], "a copy took the first or last position"
    # removing the copies gives back the original order
    seen = set()
    restored = []
    for w in out:
        if w in copied and w in seen:
            continue
        seen.add(w)
        restored.append(w)
    assert restored == tokens or sorted(restored) == sorted(tokens)


def test_fluency_hand_case_three_words():
    # "a b c": the only slot for a copy of "a" is before "c" (slots 0 and 3 are the ends, 1 touches "a").
    out = degrade_fluency("a b c", random.Random(3), words=1).split()
    assert len(out) == 4 and out[0] == "a" and out[-1] == "c"


def test_too_short_for_fluency():
    with pytest.raises(CannotDegrade):
        degrade_fluency("two words", random.Random(0))


def test_text_without_spaces_falls_back_to_characters():
    tokens, joiner = tokenize("今日は良い天気です")
    assert joiner == "" and tokens == list("今日は良い天気です")
    degraded = degrade_adequacy("今日は良い天気です", random.Random(5))
    assert len(degraded) == 9 - deletion_length(9) and " " not in degraded


def test_degradations_are_reproducible_from_the_seed():
    text = "the quick brown fox jumps over the lazy dog again and again"
    assert degrade_fluency(text, random.Random(42)) == degrade_fluency(text, random.Random(42))
    assert degrade_adequacy(text, random.Random(42)) == degrade_adequacy(text, random.Random(42))
    outputs = {degrade_adequacy(text, random.Random(s)) for s in range(20)}
    assert len(outputs) > 1


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=10, max_size=60, unique=True), st.integers(0, 2**32))
def test_spam_shuffle_keeps_the_first_and_last_tenth(numbers, seed):
    tokens = [f"w{n}" for n in numbers]
    out = shuffle_for_spam(" ".join(tokens), random.Random(seed)).split()
    keep = int(len(tokens) * 0.1)
    assert sorted(out) == sorted(tokens) and out != tokens
    assert out[:keep] == tokens[:keep] and out[len(out) - keep:] == tokens[len(tokens) - keep:]
