"""Database constraints for what must never happen."""
import pytest
from django.db import IntegrityError, transaction

from annotation.models import Annotator, Assignment, HitItem, Judgment

pytestmark = pytest.mark.django_db


@pytest.fixture
def assignment(campaign):
    return Assignment.objects.create(campaign=campaign, hit=campaign.hits.first(),
                                     annotator=Annotator.objects.create(external_id="w1"))


def judgment(assignment, position=0, **fields):
    return Judgment(campaign=assignment.campaign, assignment=assignment, annotator=assignment.annotator,
                    item=HitItem.objects.get(hit=assignment.hit, position=position), **fields)


def test_one_judgment_per_assignment_and_item(assignment):
    judgment(assignment, score=10).save()
    with pytest.raises(IntegrityError), transaction.atomic():
        judgment(assignment, score=20).save()
    assert Judgment.objects.count() == 1


def test_one_assignment_per_worker_and_hit(assignment):
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(campaign=assignment.campaign, hit=assignment.hit, annotator=assignment.annotator)


@pytest.mark.parametrize("score", [-0.01, 100.5, 1e9])
def test_scores_outside_0_100_are_refused_by_the_database(assignment, score):
    with pytest.raises(IntegrityError), transaction.atomic():
        judgment(assignment, score=score).save()


def test_an_annotator_needs_an_identity(db):
    with pytest.raises(IntegrityError), transaction.atomic():
        Annotator.objects.create()


def test_hit_tokens_are_long_and_distinct(campaign):
    hit = campaign.hits.first()
    tokens = {Assignment.objects.create(campaign=campaign, hit=hit, annotator=Annotator.objects.create(
        external_id=f"w{i}")).token for i in range(2)}
    assert len(tokens) == 2 and all(len(t) >= 40 for t in tokens)
