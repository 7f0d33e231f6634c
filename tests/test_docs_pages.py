"""The project documents itself: docs/*.md served as pages, and every method link of a page lands on an anchor."""
import re
from pathlib import Path

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"""\{% url 'docs' '(\w+)' %\}#([\w-]+)""")


@pytest.mark.django_db
def test_every_method_link_of_the_templates_has_its_anchor():
    client = Client()
    pages = {name: client.get(f"/docs/{name}/") for name in ("methods", "api")}
    assert all(r.status_code == 200 for r in pages.values())
    links = {m for path in (ROOT / "templates").rglob("*.html") for m in LINK.findall(path.read_text())}
    assert len(links) >= 6
    missing = [f"{doc}#{anchor}" for doc, anchor in links if f'id="{anchor}"' not in pages[doc].content.decode()]
    assert missing == []
    assert 'href="/docs/api/' in pages["methods"].content.decode()  # links between the documents follow


@pytest.mark.django_db
def test_unknown_documents_are_404():
    assert Client().get("/docs/secrets/").status_code == 404


def test_no_code_or_page_cites_documents_outside_the_repository():
    cited = re.compile(r"METHODS\.md|CONTRACT\.md|\.\./shared|\b00[0-4] (?:§|Table|Fig\.)")
    offenders = [str(path.relative_to(ROOT)) for folder in ("annotation", "evaluation", "config", "templates", "static")
                 for path in (ROOT / folder).rglob("*") if path.suffix in (".py", ".html", ".js")
                 and "/migrations/" not in str(path) and cited.search(path.read_text(encoding="utf-8"))]
    assert offenders == []


@pytest.mark.django_db
def test_the_docs_index_lists_the_documents_and_every_sample_campaign():
    from annotation.management.commands.load_demo import sample_file, sample_names

    client = Client()
    page = client.get("/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'href="/docs/methods/"' in html and 'href="/docs/api/"' in html
    assert ('href="/docs/architecture/"' in html) == (ROOT / "docs" / "architecture.md").exists()
    assert len(sample_names()) == 15
    for name in sample_names():
        assert f'href="/docs/samples/{name}.jsonl"' in html
    download = client.get("/docs/samples/ranking.jsonl")
    assert download.status_code == 200 and 'filename="ranking.jsonl"' in download["Content-Disposition"]
    assert b"".join(download.streaming_content) == sample_file("ranking").read_bytes()
    assert client.get("/docs/samples/post-edit-verify.jsonl").status_code == 404  # a later stage has no file
    assert client.get("/docs/samples/demo-de-en.jsonl").status_code == 404
    assert 'href="/docs/"' in client.get("/docs/api/").content.decode()
