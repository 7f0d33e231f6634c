"""The starter kit's sample campaigns (annotation/demo/<protocol>.jsonl): one per importable protocol, each
loaded by `load_demo --demo NAME` and serving a HIT to a crowd worker."""
import importlib.util
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.management.commands.load_demo import DEMO_DIR, sample_file, sample_names
from annotation.models import Campaign
from annotation.protocols import all_protocols

from .conftest import start

pytestmark = pytest.mark.django_db
NAMES = sample_names()


def _generator():
    spec = importlib.util.spec_from_file_location("make_samples", DEMO_DIR / "make_samples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_importable_protocol_has_a_small_sample_file_made_by_the_generator():
    assert len(NAMES) == 15 and set(NAMES) == {p.name for p in all_protocols() if not p.stage_only}
    generator = _generator()
    assert set(generator.PROTOCOLS) == set(NAMES)
    for name in NAMES:
        text = sample_file(name).read_text(encoding="utf-8")
        rows = [json.loads(line) for line in text.splitlines()]
        assert text == "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in generator.lines(name))
        assert 10 <= len(rows) <= 30
        assert 2 <= len(rows[0]["systems"]) <= 4
        assert all(row["domain"] and row["gold"] for row in rows)
        if name in ("ranking-constituent", "constituent-acceptance"):
            assert all(set(row["constituent"]["systems"]) == set(row["systems"]) for row in rows)


@pytest.mark.parametrize("name", NAMES)
def test_load_demo_loads_each_sample_and_a_crowd_worker_gets_a_hit(name):
    out = io.StringIO()
    call_command("load_demo", "--demo", name, stdout=out)
    campaign = Campaign.objects.get(name=f"Demo: {name}")
    assert campaign.protocol == name and campaign.accepts_annotators
    assert f"/c/{campaign.slug}/start/?worker_id=demo-worker-1" in out.getvalue()
    client = Client()
    token = start(client, campaign, "demo-worker-1")
    state = client.get(f"/api/hit/{token}/").json()
    assert state["done"] is False and state["item"]["id"]
    call_command("load_demo", "--protocol", name, stdout=io.StringIO())  # again: nothing new
    assert Campaign.objects.filter(name=f"Demo: {name}").count() == 1


@pytest.mark.parametrize("name", NAMES)
def test_each_sample_imports_with_its_protocol_and_the_default_options(name):
    """As /docs/ says: `import_campaign FILE --protocol NAME` (pairwise: with its two systems)."""
    extra = ["--systems", "online-A,neural-B"] if name.startswith("pairwise-") else []
    out = io.StringIO()
    call_command("import_campaign", str(sample_file(name)), "--name", f"Sample {name}", "--protocol", name, *extra,
                 stdout=out)
    result = json.loads(out.getvalue().splitlines()[-1])
    assert result["hits"] >= 1 and Campaign.objects.get(slug=result["campaign"]).protocol == name


def test_an_unknown_sample_is_refused_with_the_names():
    with pytest.raises(CommandError, match="no sample campaign 'nope'; one of: fluency"):
        call_command("load_demo", "--demo", "nope", stdout=io.StringIO())
    assert not Campaign.objects.exists()
