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
