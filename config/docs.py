"""The project's own documents (docs/*.md) served as pages, so that the results pages can link their methods.

Numbered headings ("## 4. Worker reliability") get the anchor `s4` (and "### 4.2 …" `s4-2`) besides the
documents' own named anchors; links between the documents (`api.md#…`) point at their pages here. `/docs/` is
their index, with the sample campaign file of every protocol (annotation/demo/, `load_demo --demo NAME`).
"""
import re
from functools import lru_cache
from pathlib import Path

import markdown
from django.conf import settings
from django.http import FileResponse, Http404
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.utils.text import slugify

from annotation.management.commands.load_demo import sample_file, sample_names
from annotation.protocols import get_protocol

DOCS = {"methods": "Methods", "api": "Interfaces", "architecture": "Architecture"}
#: What each document holds, for the index.
ABOUT = {
    "methods": "every method the platform implements: what it computes, its conventions, the code and the paper",
    "api": "the external interfaces: set-up, campaign files and options, commands, the REST API, downloads and the "
           "annotators' endpoints",
    "architecture": "how the code is laid out and why",
}
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s")
_LIST_AFTER_TEXT = re.compile(r"(?m)^((?![ \t]*(?:[-*+]|\d+\.)[ \t])[^\s|#>][^\n]*)\n([ \t]*(?:[-*+]|\d+\.)[ \t])")
_LINK = re.compile(r'href="(?:docs/)?(methods|api|architecture)\.md(#[\w-]*)?"')


def anchor(title: str, separator: str = "-") -> str:
    numbered = _NUMBERED.match(title)
    if numbered:
        return "s" + numbered.group(1).replace(".", "-")
    return slugify(title) or "section"


@lru_cache(maxsize=len(DOCS))
def _html(name: str, modified: float) -> str:
    text = (Path(settings.BASE_DIR) / "docs" / f"{name}.md").read_text(encoding="utf-8")
    text = _LIST_AFTER_TEXT.sub(r"\1\n\n\2", text)  # GitHub starts a list there; python-markdown needs a blank line
    html = markdown.markdown(text, extensions=["tables", "fenced_code", "toc"],
                             extension_configs={"toc": {"slugify": anchor}})
    return _LINK.sub(lambda m: f'href="/docs/{m.group(1)}/{m.group(2) or ""}"', html)


def document(request, name: str):
    if name not in DOCS:
        raise Http404("No such document.")
    path = Path(settings.BASE_DIR) / "docs" / f"{name}.md"
    if not path.exists():
        raise Http404("This document is missing from the installation.")
    # The project's own text, not user input: rendered as written.
    body = mark_safe(_html(name, path.stat().st_mtime))  # noqa: S308
    return render(request, "docs.html", {"title": DOCS[name], "body": body})


def index(request):
    """The documents present in this installation, and the sample campaign file of every protocol."""
    root = Path(settings.BASE_DIR) / "docs"
    documents = [{"name": name, "title": title, "about": ABOUT[name]} for name, title in DOCS.items()
                 if (root / f"{name}.md").exists()]
    samples = [{"name": name, "label": get_protocol(name).label} for name in sample_names()
               if sample_file(name).exists()]
    return render(request, "docs_index.html", {"title": "Documentation", "documents": documents, "samples": samples})


def sample(request, name: str):
    """A protocol's sample campaign file (annotation/demo/<name>.jsonl), as a download."""
    if name not in sample_names() or not sample_file(name).exists():
        raise Http404("No sample campaign of that name.")
    return FileResponse(sample_file(name).open("rb"), as_attachment=True, filename=f"{name}.jsonl",
                        content_type="application/jsonl; charset=utf-8")
