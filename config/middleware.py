"""Two middlewares: RejectUnstorableText, and AnnotatorFastPath for the annotator API (below).

Refuse requests whose path, query string or form fields hold text no database can store.

A NUL byte (PostgreSQL refuses it in text) or a lone UTF-16 surrogate (not encodable as UTF-8)
would otherwise reach a query and end as a 500; here they end as a 400 that names the field.
JSON bodies are checked by the views that parse them.
"""
import json

from django.core.handlers.exception import convert_exception_to_response
from django.http import HttpResponse
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.urls import Resolver404, resolve

from .unstorable import unstorable as _bad


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


PREFIX = "/api/hit/"
VIEW_NAME = "hit-api"
RESOLVED_KEPT = 10_000


def _call_view(request):
    """What Django's handler does once middleware is done, for a view with no view middleware to run."""
    match = request.resolver_match
    response = match.func(request, *match.args, **match.kwargs)
    if not response.streaming and not response.has_header("Content-Length"):
        response.headers["Content-Length"] = str(len(response.content))  # as CommonMiddleware does
    return response


class AnnotatorFastPath:
    """A short middleware path for the annotator API, `/api/hit/<token>/` (docs/api.md, "Annotators").

    Every judgment is one request there, and the full stack cost about a third of a judgment's server CPU
    (benchmarks/README.md, "Where a judgment's CPU goes"). That view needs none of the rest: no session, user or
    messages (the token in the URL is the only credential; no cookie is read or set), no CSRF check (csrf_exempt:
    no cookie to protect), no static files, no Content-Security-Policy (JSON, never rendered as a page).

    Placed after LimitRequestBody and SecurityMiddleware (size limits and security headers stay), it hands a
    request whose path resolves to that view to RejectUnstorableText, XFrameOptionsMiddleware and the view;
    anything else goes down the full stack unchanged, including a path under the prefix that does not resolve
    (CommonMiddleware's slash redirect, 404). Exceptions become responses as in Django's handler."""

    def __init__(self, get_response):
        self.get_response = get_response
        self._resolved: dict = {}
        view = convert_exception_to_response(_call_view)
        self.short = convert_exception_to_response(
            RejectUnstorableText(convert_exception_to_response(XFrameOptionsMiddleware(view))))

    def __call__(self, request):
        if request.path_info.startswith(PREFIX):
            match = self._resolve(request.path_info)
            if match is not None:
                request.resolver_match = match
                return self.short(request)
        return self.get_response(request)

    def _resolve(self, path: str):
        """The view's match for `path`, None for any other view. Each HIT's path is asked for once per item,
        so the last RESOLVED_KEPT are remembered (URL patterns do not change while a process runs)."""
        match = self._resolved.get(path)
        if match is None:
            try:
                match = resolve(path)
            except Resolver404:
                return None
            if match.url_name != VIEW_NAME:
                return None
            if len(self._resolved) >= RESOLVED_KEPT:
                self._resolved.clear()
            self._resolved[path] = match
        return match
