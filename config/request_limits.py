"""Refuse a request body above its size limit before anything parses it (docs/api.md §1, "Request sizes").

Runs first among the middleware: a body whose Content-Length is above the limit for its path is answered 413 (JSON
under /api/, a short page elsewhere) before CSRF checks, form parsing or a view read a byte of it. The limit is
REQUEST_MAX_BYTES, and IMPORT_REQUEST_MAX_BYTES on the endpoints that take campaign and judgment files. A
Content-Length that is not a number gets 400. A chunked body (no Content-Length) is read up to the limit and one
byte more: above the limit it is refused the same way; within it, it is handed on as if its length had been sent.

The refused body is read and thrown away (up to DRAIN_MAX_BYTES, in small pieces, never parsed or kept): a server
that closes a connection with unread data on it makes the kernel reset it, and the client, still sending, would
see "connection reset" instead of the answer. Beyond DRAIN_MAX_BYTES the answer is sent and the connection closed.
"""
import io
import json

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream
from django.http import HttpResponse
from django.urls import Resolver404, resolve

#: The URL names of the views that take campaign and judgment files (API and admin).
IMPORT_VIEWS = frozenset({"campaign-list", "campaign-import-judgments", "annotation_campaign_import"})
CHUNK = 64 * 1024
DRAIN_MAX_BYTES = 128 * 1024 * 1024


def limit_for(path: str) -> int:
    try:
        name = resolve(path).url_name
    except Resolver404:
        name = None
    return settings.IMPORT_REQUEST_MAX_BYTES if name in IMPORT_VIEWS else settings.REQUEST_MAX_BYTES


def _answer(request, status: int, detail: str) -> HttpResponse:
    if request.path.startswith("/api/"):
        response = HttpResponse(json.dumps({"detail": detail}), status=status, content_type="application/json")
    else:
        page = f"<!doctype html><title>Request refused</title><h1>Request refused</h1><p>{detail}</p>"
        response = HttpResponse(page, status=status, content_type="text/html; charset=utf-8")
    return response  # (no "Connection: close": WSGI leaves hop-by-hop headers to the server)


def _drain(stream, most: int) -> None:
    """Read and drop at most `most` bytes of the body."""
    while most > 0:
        piece = stream.read(min(CHUNK, most))
        if not piece:
            return
        most -= len(piece)


def _too_large(request, limit: int) -> HttpResponse:
    return _answer(request, 413, f"The request body is larger than {limit} bytes, the limit for this address.")


class LimitRequestBody:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        declared = request.META.get("CONTENT_LENGTH") or ""
        if declared.strip():
            try:
                length = int(declared)
            except ValueError:
                length = -1
            if length < 0:
                return _answer(request, 400, "Content-Length must be a non-negative whole number of bytes.")
            if length > settings.REQUEST_MAX_BYTES:
                limit = limit_for(request.path_info)
                if length > limit:
                    _drain(request, min(length, DRAIN_MAX_BYTES))
                    return _too_large(request, limit)
        elif "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            limit = limit_for(request.path_info)
            stream = request.META["wsgi.input"]
            body = io.BytesIO()
            _copy(stream, body, limit + 1)
            if body.tell() > limit:
                _drain(stream, DRAIN_MAX_BYTES)
                return _too_large(request, limit)
            size = body.tell()
            body.seek(0)
            request.META["CONTENT_LENGTH"] = str(size)
            request._stream = LimitedStream(body, size)  # what WSGIRequest reads the body from
        return self.get_response(request)


def _copy(stream, into, most: int) -> None:
    while most > 0:
        piece = stream.read(min(CHUNK, most))
        if not piece:
            return
        into.write(piece)
        most -= len(piece)
