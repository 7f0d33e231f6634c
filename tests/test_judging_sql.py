"""The precompiled SQL of the annotator's hot path (annotation/services/judging_sql.py): it must load
exactly what the ORM would, and store a judgment only if the assignment is still where it was read."""
import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, HitItem, Judgment
from annotation.services import judging_sql

from .conftest import post_answer, start


def _field_values(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def _answer(client, token, count):
    state = client.get(f"/api/hit/{token}/").json()
    for _ in range(count):
        state = post_answer(client, token, {"item": state["item"]["id"], "score": 40}).json()
    return state


def _worker_at(make_campaign, worker: str, answered: int):
    """A new campaign, and `worker`'s client and HIT token after answering `answered` items."""
    client = Client()
    token = start(client, make_campaign(), worker)
    _answer(client, token, answered)
    return client, token


def _read_values(instance) -> dict:
    """The fields the read loaded (those not read stay deferred, loaded by Django if asked for)."""
    return {f.attname: instance.__dict__[f.attname] for f in instance._meta.concrete_fields
            if f.attname not in instance.get_deferred_fields()}


def test_read_loads_what_the_orm_loads(make_campaign):
    client, token = _worker_at(make_campaign, "reader", 3)
    snapshot = judging_sql.read(token)
    assignment = Assignment.objects.select_related("hit", "campaign").get(token=token)
    for loaded, wanted in ((snapshot.assignment, assignment), (snapshot.assignment.hit, assignment.hit),
                           (snapshot.assignment.campaign, assignment.campaign)):
        assert loaded.get_deferred_fields() == set(judging_sql._NOT_READ[type(loaded)])
        read = _read_values(loaded)
        assert read == {name: value for name, value in _field_values(wanted).items() if name in read}
        assert _field_values(loaded) == _field_values(wanted)  # a column not read is still there when asked for
    assert sorted(snapshot.items) == [3, 4]
    for position, item in snapshot.items.items():
        expected = HitItem.objects.select_related("segment", "output").get(hit=assignment.hit, position=position)
        assert _field_values(item) == _field_values(expected)
        for relation in ("segment", "output"):
            loaded, wanted = getattr(item, relation), getattr(expected, relation)
            assert (loaded is None) == (wanted is None)
            if wanted is not None:
                assert _field_values(loaded) == _field_values(wanted)
    assert judging_sql.read("no-such-token") is None


def test_read_at_the_last_item_and_when_done(make_campaign):
    client, token = _worker_at(make_campaign, "finisher", 99)
    assert sorted(judging_sql.read(token).items) == [99]
    _answer(client, token, 1)
    done = judging_sql.read(token)
    assert done.items == {} and done.assignment.status == Assignment.Status.COMPLETED


def _advance_from_position_1(snapshot):
    """The assignment of `snapshot` (read at position 1) moved on to 2, and its judgment of item 1, unsaved."""
    assignment, item = snapshot.assignment, snapshot.items[1]
    now = timezone.now()
    judgment = Judgment(campaign_id=assignment.campaign_id, assignment_id=assignment.pk,
                        annotator_id=assignment.annotator_id, item_id=item.id, score=10, served_at=now, seconds=1.0)
    assignment.position, assignment.last_item_id = 2, item.id
    assignment.item_served_at = assignment.last_activity_at = now
    return assignment, judgment


def test_record_stores_nothing_when_the_assignment_moved_on(make_campaign):
    client, token = _worker_at(make_campaign, "racer", 1)
    stale = judging_sql.read(token)
    _answer(client, token, 1)  # a parallel request moves the assignment on after `stale` was read
    assignment, judgment = _advance_from_position_1(stale)
    before = Judgment.objects.count()
    assert judging_sql.record(assignment, [judgment], expected_position=1) is False
    assert Judgment.objects.count() == before
    assert Assignment.objects.get(pk=assignment.pk).position == 2


def test_record_refuses_an_assignment_that_is_no_longer_active(make_campaign):
    client, token = _worker_at(make_campaign, "idler", 1)
    snapshot = judging_sql.read(token)
    Assignment.objects.filter(token=token).update(status=Assignment.Status.ABANDONED)
    assignment, judgment = _advance_from_position_1(snapshot)
    assert judging_sql.record(assignment, [judgment], expected_position=1) is False
    assert not Judgment.objects.filter(item_id=judgment.item_id).exists()


@pytest.mark.django_db(transaction=True)  # outside a transaction, as a request runs
def test_statements_survive_a_new_connection_and_a_server_that_forgot_them(make_campaign):
    client, token = _worker_at(make_campaign, "reconnecting", 2)
    assert judging_sql.read(token).assignment.position == 2
    connection.close()  # Django opens a new connection for the next query: nothing is prepared on it
    assert judging_sql.read(token).assignment.position == 2
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # what a pooler's reset (DISCARD ALL) does behind Django's back
            cursor.execute("DEALLOCATE ALL")
    assert judging_sql.read(token).assignment.position == 2
    assert _answer(client, token, 1)["position"] == 4


def test_read_builds_instances_as_from_db_would(make_campaign):
    """read() sets a row's attributes directly (no Model.__init__) only while nothing hooks into building a model;
    its instances are saved state like the ORM's, and a post_init receiver still sees every one built."""
    from django.db.models.signals import post_init

    from annotation.models import Campaign

    client, token = _worker_at(make_campaign, "builder", 1)
    snapshot = judging_sql.read(token)
    campaign = snapshot.assignment.campaign
    assert (campaign._state.adding, campaign._state.db) == (False, "default")
    campaign.refresh_from_db()
    assert campaign.pk == snapshot.assignment.campaign_id and snapshot.assignment.hit.campaign is campaign
    built = []

    def seen(sender, instance, **kwargs):
        built.append(instance)

    post_init.connect(seen, sender=Campaign)
    judging_sql._CAMPAIGN._is_plain = None  # asked again, as a process that connects it at start-up would
    try:
        assert judging_sql.read(token).assignment.campaign in built
    finally:
        post_init.disconnect(seen, sender=Campaign)
        judging_sql._CAMPAIGN._is_plain = None


def test_parameters_passed_as_they_are_equal_what_djangos_prep_gives(make_campaign, monkeypatch):
    """judging_sql.AS_THEY_ARE: on PostgreSQL the write passes those fields' values to the cursor without Django's
    get_db_prep_save; for the values a HIT's answers really set (advancing, and completing), that prep gives the
    same value back."""
    written = []
    record = judging_sql.record

    def spy(assignment, judgments, expected_position):
        written.append((assignment, list(judgments)))
        return record(assignment, judgments, expected_position)

    monkeypatch.setattr(judging_sql, "record", spy)
    client, token = _worker_at(make_campaign, "preparer", 99)
    _answer(client, token, 1)
    assert written[-1][0].status == Assignment.Status.COMPLETED
    checked = set()
    for assignment, judgments in written[-2:]:  # an advance, and the completion
        names = judging_sql._COMPLETE if assignment is written[-1][0] else judging_sql._ADVANCE
        pairs = [(Assignment, names, assignment)] + [(Judgment, judging_sql._JUDGMENT_NAMES, j) for j in judgments]
        for model, fields, instance in pairs:
            for name, as_is in zip(fields, judging_sql._param_fields(connection, model, fields), strict=True):
                if as_is is not None:
                    continue
                field = model._meta.get_field(name)
                value = getattr(instance, field.attname)
                prepared = field.get_db_prep_save(value, connection)
                assert prepared == value and (type(prepared) is type(value) or isinstance(value, (int, float))), \
                    (model.__name__, name, value, prepared)
                checked.add((model.__name__, name))
    if connection.vendor == "postgresql":
        assert {"position", "item_served_at", "status", "completion_code"} <= {
            name for model, name in checked if model == "Assignment"}
        assert {"campaign", "item", "score", "seconds", "served_at", "created_at"} <= {
            name for model, name in checked if model == "Judgment"}


def test_a_get_reads_the_current_item_alone(make_campaign):
    """judging.load (a GET) asks for span 0: the next item's row, which only a POST's answer shows, is not read."""
    from annotation.services import judging

    client, token = _worker_at(make_campaign, "getter", 3)
    assert sorted(judging.load(token).items) == [3]
    assert sorted(judging_sql.read(token).items) == [3, 4]
