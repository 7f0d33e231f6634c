"""Refuse requests whose path, query string or form fields hold text no database can store.

A NUL byte (PostgreSQL refuses it in text) or a lone UTF-16 surrogate (not encodable as UTF-8)
would otherwise reach a query and end as a 500; here they end as a 400 that names the field.
JSON bodies are checked by the views that parse them.
"""
import json

from django.http import HttpResponse


def _bad(text: str) -> bool:
    return "\x00" in text or any("\ud800" <= ch <= "\udfff" for ch in text)


def _refuse(where: str) -> HttpResponse:
    body = json.dumps({"detail": f"{where}: must not contain NUL characters or lone surrogates"})
    return HttpResponse(body, status=400, content_type="application/json")


class RejectUnstorableText:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if _bad(request.path):
            return _refuse("path")
        for key, values in request.GET.lists():
            if _bad(key) or any(_bad(v) for v in values):
                return _refuse(key if not _bad(key) else "query")
        if request.method == "POST" and request.content_type in ("application/x-www-form-urlencoded",
                                                                 "multipart/form-data"):
            for key, values in request.POST.lists():
                if _bad(key) or any(_bad(v) for v in values):
                    return _refuse(key if not _bad(key) else "form")
        return self.get_response(request)
