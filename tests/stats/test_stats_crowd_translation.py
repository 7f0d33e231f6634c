"""evaluation/stats/crowd_translation.py against sacrebleu called directly on hand-made cases: corpus BLEU with a
varying number of references per sentence, leave one out over a pool of translators, BLEU against the professional
reference, the majority rule for flagged translations and the exclusion threshold."""
import math

import numpy as np
import pytest
from sacrebleu.metrics import BLEU

from evaluation.stats import crowd_translation as ct

HYPS = ["the cat sat on the mat today", "a dog barked at the postman in the morning", "it rained all night long"]
REFS = [["the cat sat on a mat today", "today the cat was sitting on the mat"],
        ["a dog barked at the postman this morning"],
        ["it rained the whole night", "rain fell all night long", "it was raining all night"]]


def test_corpus_bleu_with_varying_references_equals_sacrebleu_padded_with_none():
    streams = [[r[k] if k < len(r) else None for r in REFS] for k in range(3)]
    assert ct.corpus_bleu(HYPS, REFS) == pytest.approx(BLEU().corpus_score(HYPS, streams).score, abs=1e-12)
    assert ct.corpus_bleu(HYPS[1:2], REFS[1:2]) == pytest.approx(
        BLEU().corpus_score(HYPS[1:2], [REFS[1]]).score, abs=1e-12)
    assert math.isnan(ct.corpus_bleu([], []))
    with pytest.raises(ValueError):
        ct.corpus_bleu(["x"], [[]])


def test_leave_one_out_uses_the_other_translators_in_the_pool():
    translations = {
        "a": {1: "the cat sat on the mat", 2: "the dog barked loudly at night"},
        "b": {1: "the cat sat on a mat", 2: "a dog barked loudly in the night"},
        "c": {1: "a cat was sitting on the mat", 3: "only c translated this"},
        "p": {1: "THE CAT SAT ON MAT", 2: "THE DOG BARK LOUD NIGHT"},
    }
    everyone = ct.leave_one_out_bleu(translations)
    expected_a = BLEU().corpus_score([translations["a"][1], translations["a"][2]],
                                     [[translations["b"][1], translations["b"][2]],
                                      [translations["c"][1], None],
                                      [translations["p"][1], translations["p"][2]]]).score
    assert everyone["a"].bleu == pytest.approx(expected_a, abs=1e-12) and everyone["a"].sentences == 2
    # c's sentence 3 has no other translation: left out
    assert everyone["c"].sentences == 1
    assert everyone["c"].bleu == pytest.approx(BLEU().corpus_score(
        [translations["c"][1]], [[translations["a"][1]], [translations["b"][1]], [translations["p"][1]]]).score)
    pooled = ct.leave_one_out_bleu(translations, reference_pool={"a", "b", "c"})
    expected_p = BLEU().corpus_score([translations["p"][1], translations["p"][2]],
                                     [[translations["a"][1], translations["a"][2]],
                                      [translations["b"][1], translations["b"][2]],
                                      [translations["c"][1], None]]).score
    assert pooled["p"].bleu == pytest.approx(expected_p, abs=1e-12)
    assert pooled["a"].bleu == pytest.approx(BLEU().corpus_score(
        [translations["a"][1], translations["a"][2]],
        [[translations["b"][1], translations["b"][2]], [translations["c"][1], None]]).score, abs=1e-12)
    alone = ct.leave_one_out_bleu({"x": {1: "text"}})
    assert math.isnan(alone["x"].bleu) and alone["x"].sentences == 0


def test_reference_bleu_skips_sentences_without_a_reference():
    own = {1: HYPS[0], 2: HYPS[1], 3: HYPS[2]}
    refs = {1: REFS[0][0], 2: "", 3: REFS[2][0]}
    result = ct.reference_bleu(own, refs)
    assert result.sentences == 2
    assert result.bleu == pytest.approx(BLEU().corpus_score([HYPS[0], HYPS[2]], [[REFS[0][0], REFS[2][0]]]).score)


def test_flagging_is_a_strict_majority_and_exclusion_a_share_threshold():
    marked = np.array([2, 1, 0, 2, 1, 3])
    votes = np.array([3, 2, 0, 4, 1, 3])
    assert ct.majority_flagged(marked, votes).tolist() == [True, False, False, False, True, True]
    translator = np.array([0, 0, 1, 1, 1, 2])
    flagged = ct.majority_flagged(marked, votes)
    shares = ct.flagged_shares(translator, flagged, votes > 0, 4)
    assert shares[0] == 0.5 and shares[1] == 0.5 and shares[2] == 1.0 and math.isnan(shares[3])
    assert ct.excluded(np.array([0.3, 0.29, np.nan, 1.0]), 0.3).tolist() == [True, False, False, True]
