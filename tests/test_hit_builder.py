"""The 100-item HIT structure of docs/methods.md §2, checked on every HIT of a realistic campaign."""
import random
from collections import Counter

import pytest

from annotation.building.degradation import degrade_adequacy, degrade_fluency
from annotation.building.hit_layout import HitPlanError, OutputRef
from annotation.building.qc_hits import deal_outputs, plan_da_hits

from .conftest import sentence


def outputs(n_segments: int, n_systems: int, length: int = 10) -> list[OutputRef]:
    return [OutputRef(id=seg * n_systems + sys, segment_id=seg, system_id=sys, text=sentence(seg * 31 + sys, length))
            for seg in range(n_segments) for sys in range(n_systems)]


@pytest.fixture(scope="module")
def realistic():
    """1,000 segments × 7 systems = 7,000 outputs = 100 HITs."""
    pool = outputs(1000, 7)
    return pool, plan_da_hits(pool, degrade_adequacy, 100, random.Random(11))


def test_every_hit_has_the_published_structure(realistic):
    pool, hits = realistic
    by_id = {o.id: o for o in pool}
    assert len(hits) == 100
    for items in hits:
        assert [i.position for i in items] == list(range(100))
        assert Counter(i.item_type for i in items) == {"system": 70, "bad_ref": 10, "repeat": 10, "reference": 10}
        assert [i.set_index for i in items] == [p // 10 for p in range(100)]
        for item in items:
            if item.item_type == "system" and item.partner_position is None:
                continue
            partner = items[item.partner_position]
            assert partner.partner_position == item.position
            low, high = sorted((item.set_index, partner.set_index))
            assert high == low + 5, "pairs join Si with Si+5"
            assert abs(item.position - partner.position) > 40
            if item.item_type == "bad_ref":
                assert partner.item_type == "system" and partner.output_id == item.output_id
                assert item.text and item.text != by_id[item.output_id].text
            if item.item_type == "repeat":
                assert partner.item_type == "system" and partner.output_id == item.output_id
            if item.item_type == "reference":
                assert partner.item_type == "system" and partner.segment_id == item.segment_id
                assert item.output_id is None
        # each direction occurs once per set pair: Si holds 1 bad ref, 1 original of a bad ref in Si+5, etc.
        for s in range(10):
            kinds = Counter(i.item_type for i in items if i.set_index == s)
            assert kinds == {"system": 7, "bad_ref": 1, "repeat": 1, "reference": 1}
        assert len({i.output_id for i in items if i.item_type == "system"}) == 70


def test_systems_are_balanced_and_each_output_is_in_one_hit(realistic):
    pool, hits = realistic
    seen = Counter()
    for items in hits:
        distinct = {i.output_id for i in items if i.item_type == "system"}
        per_system = Counter(oid % 7 for oid in distinct)  # ids are segment * 7 + system
        assert max(per_system.values()) - min(per_system.values()) <= 1
        seen.update(distinct)
    assert set(seen) == {o.id for o in pool}
    assert set(seen.values()) == {1}, "7,000 outputs fill 100 HITs exactly: no output in two HITs"


def test_last_hit_is_topped_up_from_other_hits():
    pool = outputs(50, 3)  # 150 outputs: 2 full HITs and 10 left over
    groups = deal_outputs(pool, 70, random.Random(1))
    assert [len(g) for g in groups] == [70, 70, 70]
    assert all(len({o.id for o in g}) == 70 for g in groups)
    assert len(set().union(*({o.id for o in g} for g in groups))) == 150


def test_fluency_hits_degrade_by_duplicating_words():
    pool = outputs(70, 1)
    (items,) = plan_da_hits(pool, degrade_fluency, 100, random.Random(2))
    by_id = {o.id: o for o in pool}
    for item in items:
        if item.item_type == "bad_ref":
            assert len(item.text.split()) == len(by_id[item.output_id].text.split()) + 2


def test_same_seed_same_hits_other_seed_other_hits():
    pool = outputs(140, 2)
    first = plan_da_hits(pool, degrade_adequacy, 100, random.Random(5))
    again = plan_da_hits(pool, degrade_adequacy, 100, random.Random(5))
    other = plan_da_hits(pool, degrade_adequacy, 100, random.Random(6))
    assert first == again
    assert first != other


def test_smaller_hits_keep_the_proportions():
    pool = outputs(14, 1)
    (items,) = plan_da_hits(pool, degrade_adequacy, 20, random.Random(3))
    assert Counter(i.item_type for i in items) == {"system": 14, "bad_ref": 2, "repeat": 2, "reference": 2}


def test_refuses_too_few_outputs_and_bad_sizes():
    with pytest.raises(HitPlanError, match="at least 70"):
        plan_da_hits(outputs(10, 2), degrade_adequacy, 100, random.Random(0))
    with pytest.raises(HitPlanError, match="multiple of 20"):
        plan_da_hits(outputs(100, 2), degrade_adequacy, 90, random.Random(0))


def test_refuses_hits_without_enough_degradable_outputs():
    pool = [OutputRef(id=i, segment_id=i, system_id=0, text="word") for i in range(70)]
    with pytest.raises(HitPlanError, match="long enough to degrade"):
        plan_da_hits(pool, degrade_adequacy, 100, random.Random(0))
