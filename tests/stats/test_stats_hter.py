"""HTER (docs/methods.md §9) against sacrebleu's TER itself and a hand-computed choice of edits."""
import numpy as np
import pytest
from sacrebleu.metrics import TER

from evaluation.stats import hter

MT = ["the cat sat on mat", "a dog barked loud at night", "he go to school"]
REFERENCES = ["the cat sat on the mat", "a dog barked loudly in the night", "he goes to school"]


def test_ter_counts_are_sacrebleus_sentence_and_corpus_ter():
    edits, lengths = hter.ter_counts(MT, REFERENCES)
    ter = TER()
    for i, (mt, ref) in enumerate(zip(MT, REFERENCES, strict=True)):
        score = ter.sentence_score(mt, [ref])
        assert (edits[i], lengths[i]) == (score.num_edits, score.ref_length)
        assert 100 * edits[i] / lengths[i] == pytest.approx(score.score)
    corpus = ter.corpus_score(MT, [REFERENCES])
    assert hter.corpus_hter(np.zeros(3, np.int64), edits, lengths, 1)[0] == pytest.approx(corpus.score)
    # two systems: each its own corpus score
    by_system = hter.corpus_hter(np.array([0, 1, 1]), edits, lengths, 2)
    assert by_system[1] == pytest.approx(ter.corpus_score(MT[1:], [REFERENCES[1:]]).score)


def test_the_closest_passing_edit_is_chosen_by_hand():
    """One output, 'he go to school', three edits: 'he goes to school' (1 edit / 4 words, rejected), 'he goes to the
    school' (2 / 5, passed), 'he has gone to school' (2 / 5 too? — it needs a substitution and an insertion:
    2 / 5, passed, later row). The rejected edit would be closest; of the two passing ones the first (ties: first
    row) is chosen, so HTER = 100 × 2 / 5 = 40. Without any passing edit: TER against the reference."""
    mt = "he go to school"
    edits_text = ["he goes to school", "he goes to the school", "he has gone to school"]
    edits, lengths = hter.ter_counts([mt] * 3, edits_text)
    assert list(edits) == [1, 2, 2] and list(lengths) == [4, 5, 5]
    ref_edits, ref_lengths = hter.ter_counts([mt], ["he is going to school"])
    chosen = hter.choose_closest([0, 0, 0], edits, lengths, [False, True, True], ref_edits, ref_lengths)
    assert chosen.edit_row[0] == 1
    assert hter.corpus_hter([0], chosen.edits, chosen.lengths, 1)[0] == pytest.approx(40.0)
    none = hter.choose_closest([0, 0, 0], edits, lengths, [False, False, False], ref_edits, ref_lengths)
    assert none.edit_row[0] == -1
    assert hter.corpus_hter([0], none.edits, none.lengths, 1)[0] == pytest.approx(
        TER().sentence_score(mt, ["he is going to school"]).score)


def test_the_editors_curve_falls_as_editors_are_added():
    mt = ["the house is big", "she like apples", "we was there yesterday"]
    refs = ["the home is very large", "she likes eating apples", "we had been there the day before"]
    ref_edits, ref_lengths = hter.ter_counts(mt, refs)
    # three editors per output: one near-copy of the MT (closest), two further away; all pass
    edit_texts = [mt[0], "the house is large", refs[0], "she likes apples", mt[1] + " a lot", refs[1],
                  "we were there yesterday", "we were there", refs[2]]
    outputs = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    edits, lengths = hter.ter_counts([mt[o] for o in outputs], edit_texts)
    curve = hter.editors_curve(outputs, edits, lengths, np.ones(9, bool), ref_edits, ref_lengths,
                               np.zeros(3, np.int64), 1, 3, repeats=40, seed=1)[:, 0]
    assert curve[0] == pytest.approx(hter.corpus_hter(np.zeros(3, np.int64), ref_edits, ref_lengths, 1)[0])
    assert all(curve[k + 1] <= curve[k] + 1e-9 for k in range(3)) and curve[3] < curve[0]
    chosen = hter.choose_closest(outputs, edits, lengths, np.ones(9, bool), ref_edits, ref_lengths)
    assert curve[3] == pytest.approx(hter.corpus_hter(np.zeros(3, np.int64), chosen.edits, chosen.lengths, 1)[0])
