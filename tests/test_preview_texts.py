"""The HIT preview before Publish shows every text the annotator's screen shows, as the screen shows it (issue 23):
the MQM-SxS preview showed the source alone, none of its side-by-side candidates; ranking, contrastive ESA and
constituent acceptance lost theirs the same way, post-editing its MT outputs and reading comprehension its article.
Then: the constituent protocols' highlighted phrases shown plain, reference translation's translate screens typed
"System output", and the later stages' questions and answers (reading comprehension) not shown at all."""
import pytest
from django.utils.html import escape

from annotation.management.commands.load_demo import load_sample, sample_names
from annotation.models import ItemType

from .conftest import start
from .pilot import pilot

pytestmark = pytest.mark.django_db


def marked(text: str, span=None) -> str:
    """A text as the preview writes it: escaped, its highlighted phrase ([start, end) in code points) in a <mark>,
    as hit.js's fillText marks it on the screen."""
    if not span:
        return escape(text)
    start, end = span
    return f'{escape(text[:start])}<mark class="hl">{escape(text[start:end])}</mark>{escape(text[end:])}'


def question(value) -> list[str]:
    return [value["question"], *([value["answer"]] if value.get("answer") else [])] if isinstance(value, dict) \
        else [value]


def shown_texts(payload: dict) -> list[str]:
    """The texts a screen's payload shows, as the preview's HTML should hold them: translations (with their
    highlighted phrase), sources, references, an article, questions and answers."""
    texts = [marked(payload["candidate"])] if payload.get("candidate") else []
    texts += [marked(c["text"], c.get("span")) for c in payload.get("candidates") or ()]
    for key in ("source", "reference", "outputs", "article", "A", "B", "sample_answer", "answer"):
        value = payload.get(key)
        texts += [marked(t, payload.get("source_span") if key == "source" else None)
                  for t in (value if isinstance(value, list) else [value]) if t]
    for key in ("question", "questions", "others"):
        value = payload.get(key)
        texts += [escape(t) for v in (value if isinstance(value, list) else [value]) if v for t in question(v)]
    return texts


def preview_of(admin_client, campaign) -> tuple[str, list[str]]:
    """The preview page, and what it should show of its first HIT."""
    hit = campaign.hits.order_by("number").first()
    html = admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/preview/").content.decode()
    spec = campaign.protocol_spec
    return html, [t for item in hit.items.order_by("position") for t in shown_texts(spec.item_payload(item))]


@pytest.mark.parametrize("protocol", sample_names())
def test_the_preview_shows_what_the_screen_shows(protocol, admin_client):
    html, texts = preview_of(admin_client, load_sample(protocol))
    assert texts, protocol
    missing = [t for t in texts if t not in html]
    assert missing == [], f"{protocol}: {missing[:3]}"


@pytest.mark.parametrize("protocol", ["ranking-constituent", "constituent-acceptance"])
def test_the_constituent_previews_highlight_the_phrase_as_the_screen_does(protocol, admin_client):
    campaign = load_sample(protocol)
    html, _ = preview_of(admin_client, campaign)
    item = campaign.hits.order_by("number").first().items.order_by("position").first()
    payload = campaign.protocol_spec.item_payload(item)
    start, end = payload["source_span"]
    assert f'<mark class="hl">{escape(payload["source"][start:end])}</mark>' in html
    assert all(marked(c["text"], c["span"]) in html for c in payload["candidates"])
    assert html.count('<mark class="hl">') >= 1 + len(payload["candidates"])


@pytest.mark.parametrize("protocol", ["post-edit", "reading-comprehension", "reference-translation"])
def test_every_stage_preview_shows_its_screens_texts_and_names_them_as_the_screen(protocol, admin_client):
    """The later stages (built by a pilot of three workers) show their questions, answers and candidates; no
    screen without a system output is typed "System output"."""
    types = {}
    for campaign in pilot(protocol):
        html, texts = preview_of(admin_client, campaign)
        assert texts, campaign.protocol
        missing = [t for t in texts if t not in html]
        assert missing == [], f"{campaign.protocol}: {missing[:3]}"
        cells = html.split('<td class="type-')[1:]
        types[campaign.protocol] = {cell.split(">", 1)[1].split("<", 1)[0] for cell in cells}
    if protocol == "reference-translation":
        assert types == {"reference-translation": {"Sentences to translate"},
                         "reference-translation-detect": {"Translations (people or machine?)"}}
        assert "translator pilot-" in html  # the detect screen's System column: who wrote each candidate


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


def summary_of(html: str) -> list[str]:
    line = html.split('class="preview-summary"')[1].split("</p>")[0]
    return [span.split(">", 1)[1].split("</span>")[0] for span in line.split("<span ")[1:]]


@pytest.mark.parametrize(("protocol", "words"), [
    ("adequacy", {"translations to judge", "bad-reference checks", "repeat checks", "human references (control)"}),
    ("pairwise-fluency", {"comparisons to judge", "spam check"}),
    ("reference-translation", {"screens of sentences to translate"}),
])
def test_the_preview_summary_says_what_each_item_is_for(protocol, words, admin_client, client):
    """The summary line counts items in a researcher's words ("70 translations to judge, 10 bad-reference checks"),
    not the raw item types ("70 system"), and those words never reach an annotator's page or the HIT's API."""
    campaign = load_sample(protocol)
    html, _ = preview_of(admin_client, campaign)
    summary = summary_of(html)
    hit = campaign.hits.order_by("number").first()
    assert sum(int(part.split()[0]) for part in summary) == hit.items.count()
    assert {part.split(" ", 1)[1] for part in summary} >= words, summary
    assert not any(part.split(" ", 1)[1] in ItemType.values for part in summary)  # not "14 system", "2 repeat"
    campaign.status = "active"
    campaign.save(update_fields=["status"])
    token = start(client, campaign, "summary-reader")
    annotator_sees = client.get(f"/hit/{token}/").content.decode() + client.get(f"/api/hit/{token}/").content.decode()
    assert not any(word in annotator_sees for word in ("bad-reference", "repeat check", "(control)", "spam check",
                                                      "to judge"))
