"""The results page of a campaign whose results were never computed reads cleanly for every protocol: each family
section shows its empty state, and no sentence of a summary is printed with its numbers missing ("counted under ;",
"at %", "more than % of", "β = ("), as the page did before this was fixed for the sections whose note reads the
summary."""
import re

import pytest

from annotation.management.commands.load_demo import load_sample, sample_names

pytestmark = pytest.mark.django_db

#: What a sentence with its values missing leaves behind.
HOLES = re.compile(r"\s;|\(\s*\)|\bat %|[a-z]\s+%\s|=\s*\(|:\s*;|\bunder\s*;|\bof\s+judged")


@pytest.mark.parametrize("protocol", sample_names())
def test_a_never_computed_campaign_has_no_sentence_with_missing_numbers(protocol, admin_client):
    campaign = load_sample(protocol)
    response = admin_client.get(f"/results/{campaign.slug}/")
    assert response.status_code == 200
    text = re.sub(r"<script.*?</script>|<style.*?</style>", " ", response.content.decode(), flags=re.S)
    text = re.sub(r"<[^>]+>", "", text)
    assert "No results computed yet" in text
    holes = [text[max(0, m.start() - 60):m.end() + 20] for m in HOLES.finditer(text)]
    assert holes == [], holes


@pytest.mark.parametrize("protocol", sample_names())
def test_every_download_of_a_never_computed_campaign_has_its_header(protocol, admin_client):
    """Before any computation each CSV the page offers downloads its header line (a spreadsheet shows the columns),
    never an empty file or a bare line break."""
    campaign = load_sample(protocol)
    page = admin_client.get(f"/results/{campaign.slug}/").content.decode()
    links = sorted(set(re.findall(rf'href="(/results/{re.escape(campaign.slug)}/[a-z_]+\.csv)"', page)))
    assert links
    empty = []
    for link in links:
        response = admin_client.get(link)
        assert response.status_code == 200, link
        body = b"".join(response.streaming_content) if response.streaming else response.content
        if not body.decode("utf-8-sig").strip():
            empty.append(link)
    assert empty == []
