"""Django's own 400 (a body with more fields than DATA_UPLOAD_MAX_NUMBER_FIELDS, a malformed multipart body) and
404 (a URL that matches no route): under /api/ the API's JSON `{"detail": ...}`, as the schema documents them,
elsewhere Django's pages. With DEBUG on, Django shows its technical pages instead, whatever the path."""
from django.http import JsonResponse
from django.views import defaults


def bad_request(request, exception):
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Bad request: the body could not be read."}, status=400)
    return defaults.bad_request(request, exception)


def not_found(request, exception):
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)
