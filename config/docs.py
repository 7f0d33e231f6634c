"""The project's own documents (docs/*.md) served as pages, so that the results pages can link their methods.

Numbered headings ("## 4. Worker reliability") get the anchor `s4` (and "### 4.2 …" `s4-2`) besides the
documents' own named anchors; links between the documents (`api.md#…`) point at their pages here.
"""
import re
from functools import lru_cache
from pathlib import Path

import markdown
from django.conf import settings
from django.http import Http404
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.utils.text import slugify

DOCS = {"methods": "Methods", "api": "Interfaces"}
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s")
_LIST_AFTER_TEXT = re.compile(r"(?m)^((?![ \t]*(?:[-*+]|\d+\.)[ \t])[^\s|#>][^\n]*)\n([ \t]*(?:[-*+]|\d+\.)[ \t])")
_LINK = re.compile(r'href="(?:docs/)?(methods|api)\.md(#[\w-]*)?"')


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
