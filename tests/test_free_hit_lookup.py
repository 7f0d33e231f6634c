"""The free-HIT lookup of a hand-out (issue 22; annotation/services/assignment.py `_free_hits`): `Hit.held` (active
or completed assignments) is kept by database triggers through every write, the lookup gives the same order as
counting live assignments (fewest first, then by number; idle places free), and it reads a bounded number of rows
whatever the campaign's size, where it used to read every live assignment of the campaign. The measurement on
10,000 and 100,000 HITs is benchmarks/free_hit_lookup.py."""
import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Annotator, Assignment, Campaign, Hit
from annotation.services.assignment import _free_hits, idle_cutoff

pytestmark = pytest.mark.django_db


def campaign_of(hits: int, redundancy: int) -> Campaign:
    campaign = Campaign.objects.create(name=f"Lookup {hits}", slug=f"lookup-{hits}", protocol="adequacy",
                                       redundancy=redundancy, status="active")
    Hit.objects.bulk_create([Hit(campaign=campaign, number=n, size=1) for n in range(1, hits + 1)])
    return campaign


def place(campaign, number: int, worker: str, status: str, idle: bool = False) -> Assignment:
    annotator, _ = Annotator.objects.get_or_create(external_id=worker)
    assignment = Assignment.objects.create(campaign=campaign, hit=campaign.hits.get(number=number),
                                           annotator=annotator, status=status)
    if idle:
        Assignment.objects.filter(pk=assignment.pk).update(last_activity_at=timezone.now() - timedelta(days=1))
    return assignment


def held(campaign) -> dict[int, int]:
    return dict(campaign.hits.values_list("number", "held"))


def test_held_places_follow_every_write_of_an_assignment():
    campaign = campaign_of(3, redundancy=3)
    a = place(campaign, 1, "w1", "active")
    place(campaign, 1, "w2", "completed")
    place(campaign, 2, "w3", "abandoned")
    assert held(campaign) == {1: 2, 2: 0, 3: 0}
    Assignment.objects.filter(pk=a.pk).update(status="completed")  # finished: still held
    assert held(campaign)[1] == 2
    Assignment.objects.filter(pk=a.pk).update(status="abandoned")  # released
    assert held(campaign)[1] == 1
    Assignment.objects.filter(pk=a.pk).update(status="active")  # resumed
    assert held(campaign)[1] == 2
    Assignment.objects.filter(pk=a.pk).update(hit=campaign.hits.get(number=3))  # moved
    assert held(campaign) == {1: 1, 2: 0, 3: 1}
    Assignment.objects.filter(campaign=campaign).delete()
    assert held(campaign) == {1: 0, 2: 0, 3: 0}


def expected_order(campaign, taken: list[int]) -> list[int]:
    """The definition: live = completed + active not idle; fewest live first, then by number."""
    cutoff = idle_cutoff(campaign)
    live = {pk: 0 for pk in campaign.hits.values_list("pk", flat=True)}
    for hit, status, last in Assignment.objects.filter(campaign=campaign).values_list("hit_id", "status",
                                                                                     "last_activity_at"):
        live[hit] += status == "completed" or (status == "active" and last >= cutoff)
    number = dict(campaign.hits.values_list("pk", "number"))
    free = [pk for pk, n in live.items() if n < campaign.redundancy and pk not in taken]
    return sorted(free, key=lambda pk: (live[pk], number[pk]))


def test_the_lookup_orders_as_counting_live_assignments_with_idle_places_free():
    campaign = campaign_of(8, redundancy=2)
    place(campaign, 1, "a", "completed")
    place(campaign, 1, "b", "completed")  # full
    place(campaign, 2, "a2", "completed")
    place(campaign, 2, "c", "active", idle=True)  # held 2, live 1
    place(campaign, 3, "d", "active", idle=True)  # held 1, live 0
    place(campaign, 4, "e", "active")
    place(campaign, 5, "f", "completed")
    place(campaign, 6, "g", "abandoned")
    place(campaign, 7, "h", "active", idle=True)
    place(campaign, 7, "i", "active", idle=True)  # held 2, live 0
    taken = [campaign.hits.get(number=6).pk]
    for limit in (1, 2, 3, 50):
        found = [pk for pk, _ in _free_hits(campaign, taken, idle_cutoff(campaign), limit=limit)]
        assert found == expected_order(campaign, taken)[:limit], limit
    number = dict(campaign.hits.values_list("pk", "number"))
    assert [number[pk] for pk, _ in _free_hits(campaign, taken, idle_cutoff(campaign))] == [3, 7, 8, 2, 4, 5]


def fill(campaign, idle: int, idle_step: str) -> None:
    """By bulk SQL: a finished place on each of the campaign's 3,000 HITs, and on HITs 1 to `idle` an open place
    idle for a day less (k - 1) × `idle_step` on HIT k (HIT 1 idle the longest)."""
    total = 3000 + idle
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO annotation_annotator (external_id, source, native_language, country, "
                       "created_at) SELECT %s || n, 'crowd', '', '', now() FROM generate_series(1, %s) n",
                       [campaign.slug, total])
        cursor.execute(
            "INSERT INTO annotation_assignment (campaign_id, hit_id, annotator_id, token, status, position, "
            "started_at, last_activity_at, completion_code, browser_key, entry) SELECT %s, h.id, a.id, "
            "md5(a.external_id), CASE WHEN n <= 3000 THEN 'completed' ELSE 'active' END, 0, now(), "
            "CASE WHEN n <= 3000 THEN now() ELSE now() - interval '1 day' + (n - 3001) * %s::interval END, "
            "'', '', '{}'::jsonb FROM generate_series(1, %s) n JOIN annotation_annotator a "
            "ON a.external_id = %s || n JOIN annotation_hit h ON h.campaign_id = %s "
            "AND h.number = CASE WHEN n <= 3000 THEN n ELSE n - 3000 END",
            [campaign.pk, idle_step, total, campaign.slug, campaign.pk])
        cursor.execute("ANALYZE annotation_hit")
        cursor.execute("ANALYZE annotation_assignment")


def test_the_lookup_reads_a_bounded_number_of_rows_whatever_the_campaign_size():
    """3,000 HITs each holding a finished place and 5 with an idle one: EXPLAIN ANALYZE of the lookup's statements
    reads at most a few times `limit` rows in all, where counting live assignments read all 3,000."""
    campaign = campaign_of(3000, redundancy=3)
    fill(campaign, idle=5, idle_step="0")
    with CaptureQueriesContext(connection) as captured:
        found = _free_hits(campaign, [], idle_cutoff(campaign), limit=10)
    assert [n for n in Hit.objects.filter(pk__in=[pk for pk, _ in found]).order_by("number")
            .values_list("number", flat=True)] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]  # the idle ones first
    read = rows_read(captured)
    assert read <= 100, read


def rows_read(captured) -> int:
    """Rows the captured statements' scans of tables and indexes read (EXPLAIN ANALYZE: returned, and removed by a
    filter)."""
    read = 0
    for query in captured.captured_queries:
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + query["sql"])
            plan = cursor.fetchone()[0]
        plan = (plan if isinstance(plan, list) else json.loads(plan))[0]["Plan"]
        stack = [plan]
        while stack:
            node = stack.pop()
            if "Relation Name" in node:  # a scan of a table or an index
                read += node["Actual Rows"] * node.get("Actual Loops", 1) + node.get("Rows Removed by Filter", 0)
            stack += node.get("Plans", [])
    return read


def test_the_lookup_stays_bounded_when_many_places_are_idle():
    """3,000 HITs (redundancy 2), each with a finished place; HITs 1 to 400 also with a place idle for a day less
    a minute per HIT (HIT 1 the longest). With `idle_read` 20 the lookup reads a bounded number of rows,
    where it read all 400 idle places before, and ranks the oldest idle places' HITs by their live count."""
    campaign = campaign_of(3000, redundancy=2)
    fill(campaign, idle=400, idle_step="1 minute")
    with CaptureQueriesContext(connection) as captured:
        found = _free_hits(campaign, [], idle_cutoff(campaign), limit=10, idle_read=20)
    number = dict(campaign.hits.values_list("pk", "number"))
    assert [number[pk] for pk, _ in found] == list(range(1, 11))  # live 1 each, as HITs 401 on; by number
    read = rows_read(captured)
    assert read <= 100, read
