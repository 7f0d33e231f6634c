"""The HIT preview before Publish shows every translation the annotator's screen shows (issue 23): the MQM-SxS
preview showed the source alone, none of its side-by-side candidates; ranking, contrastive ESA and constituent
acceptance lost theirs the same way, post-editing its MT outputs and reading comprehension its article."""
import pytest
from django.utils.html import escape

from annotation.management.commands.load_demo import load_sample, sample_names

pytestmark = pytest.mark.django_db


def shown_texts(payload: dict) -> list[str]:
    """The texts a screen's payload shows: translations, sources, references, an article."""
    texts = [payload.get("candidate"), *(c["text"] for c in payload.get("candidates") or ())]
    for key in ("source", "reference", "outputs", "article", "A", "B"):
        value = payload.get(key)
        texts += value if isinstance(value, list) else [value]
    return [t for t in texts if t]


@pytest.mark.parametrize("protocol", sample_names())
def test_the_preview_shows_what_the_screen_shows(protocol, admin_client):
    campaign = load_sample(protocol)
    hit = campaign.hits.order_by("number").first()
    html = admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/preview/").content.decode()
    spec = campaign.protocol_spec
    texts = [t for item in hit.items.order_by("position") for t in shown_texts(spec.item_payload(item))]
    assert texts, protocol
    missing = [t for t in texts if escape(t) not in html]
    assert missing == [], f"{protocol}: {missing[:3]}"


def test_the_side_by_side_preview_shows_each_candidate_under_its_key(admin_client):
    campaign = load_sample("mqm-sxs")
    item = campaign.hits.order_by("number").first().items.order_by("position").first()
    candidates = campaign.protocol_spec.item_payload(item)["candidates"]
    html = admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/preview/").content.decode()
    assert len(candidates) >= 2
    for c in candidates:
        block = (f'<span class="label">{escape(c["key"])}:</span><div class="lines">'
                 f'<div class="line">{escape(c["text"])}')
        assert block in html
    stored = {c["key"]: c["name"] for c in item.payload["candidates"]}
    assert all(f"{key}: {name}" in html for key, name in stored.items())  # the System column, for the researcher
