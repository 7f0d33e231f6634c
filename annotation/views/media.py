"""`GET /api/hit/<token>/media/<id>/`: a campaign medium, served to the HIT whose token this is (docs/api.md §8.5).

The token is the only key: an unknown or forged token, a HIT that went to someone else, or a medium whose document
no item of this HIT shows, all get the same 404. How the bytes go out is `MEDIA_SERVE`: `django` sends them from
here with single-range support (206) for seeking in video and audio (development); `x-accel-redirect` (nginx) and
`x-sendfile` (Apache, lighttpd) answer with the header only, the web server sending the file; `signed-url`
redirects to the storage's short-lived signed URL (S3). Either way `Cache-Control: private`."""
from __future__ import annotations

import re

from csp.decorators import csp_exempt
from django.conf import settings
from django.db.models import Exists, OuterRef
from django.http import FileResponse, Http404, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.views.decorators.http import require_http_methods

from ..models import Assignment, HitItem, MediaItem
from ..services.media_import import media_storage

CACHE = "private, max-age=3600"
CHUNK = 1 << 16
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def _medium(token: str, key: str) -> MediaItem:
    assignment = (Assignment.objects.filter(token=token).exclude(status=Assignment.Status.ABANDONED)
                  .values("hit_id").first())
    if assignment is None:
        raise Http404
    shown = HitItem.objects.filter(hit_id=assignment["hit_id"], segment__document_id=OuterRef("document_id"))
    medium = MediaItem.objects.filter(key=key).exclude(name="").filter(Exists(shown)).first()
    if medium is None:
        raise Http404
    return medium


def _byte_range(header: str, size: int) -> tuple[int, int] | None | bool:
    """(first, last) of a single `Range: bytes=…`; None without one (or one this view does not read, such as
    several ranges: the whole file is sent); False when it cannot be satisfied (416)."""
    match = _RANGE.match(header.strip()) if header else None
    if match is None:
        return None
    first, last = match.groups()
    if not first and not last:
        return None
    if not first:  # the last N bytes
        length = int(last)
        if length == 0:
            return False
        return max(size - length, 0), size - 1
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size or end < start:
        return False
    return start, end


def _part(handle, start: int, length: int):
    handle.seek(start)
    try:
        while length > 0:
            piece = handle.read(min(CHUNK, length))
            if not piece:
                return
            length -= len(piece)
            yield piece
    finally:
        handle.close()


def _send(request, medium: MediaItem) -> HttpResponse:
    storage = media_storage()
    size = medium.size
    wanted = _byte_range(request.headers.get("Range", ""), size)
    if wanted is False:
        response = HttpResponse(status=416)
        response.headers["Content-Range"] = f"bytes */{size}"
        return response
    handle = storage.open(medium.name, "rb")
    if wanted is None:
        response = FileResponse(handle, content_type=medium.content_type)
        response.headers["Content-Length"] = str(size)
    else:
        start, end = wanted
        response = StreamingHttpResponse(_part(handle, start, end - start + 1), status=206,
                                         content_type=medium.content_type)
        response.headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        response.headers["Content-Length"] = str(end - start + 1)
    response.headers["Accept-Ranges"] = "bytes"
    return response


@csp_exempt()
@require_http_methods(["GET", "HEAD"])
def medium(request, token: str, key: str):
    found = _medium(token, key)
    mode = settings.MEDIA_SERVE
    if mode == "x-accel-redirect":
        response = HttpResponse(content_type=found.content_type)
        response.headers["X-Accel-Redirect"] = settings.MEDIA_ACCEL_PREFIX.rstrip("/") + "/" + found.name
    elif mode == "x-sendfile":
        response = HttpResponse(content_type=found.content_type)
        response.headers["X-Sendfile"] = media_storage().path(found.name)
    elif mode == "signed-url":
        response = HttpResponseRedirect(media_storage().url(found.name))
    else:
        response = _send(request, found)
    response.headers["Cache-Control"] = CACHE
    response.headers["Content-Disposition"] = "inline"
    return response
