"""The annotator API's short middleware path (config/middleware.py, AnnotatorFastPath): it skips the session,
auth, messages, CSRF, static-file and CSP middleware, and keeps the size limits, security headers and the refusal
of unstorable text."""
import pytest

from .conftest import post_answer, start

pytestmark = pytest.mark.django_db


def test_the_annotator_api_skips_what_it_does_not_use(client, campaign):
    token = start(client, campaign, "w1")
    response = client.get(f"/api/hit/{token}/")
    assert response.status_code == 200 and response.json()["position"] == 1
    request = response.wsgi_request
    assert not hasattr(request, "session") and not hasattr(request, "user")  # no session or auth middleware
    assert not hasattr(request, "_messages") and not hasattr(request, "csp_nonce")  # no messages, no CSP
    assert "Content-Security-Policy" not in response.headers  # JSON is never rendered as a page
    assert response.cookies == {}
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"  # SecurityMiddleware still runs
    assert int(response.headers["Content-Length"]) == len(response.content)
    # never_cache's headers, as Django's decorator writes them
    assert response.headers["Cache-Control"] == "max-age=0, no-cache, no-store, must-revalidate, private"
    assert response.headers["Expires"].endswith(" GMT")
    answer = post_answer(client, token, {"item": response.json()["item"]["id"], "score": 50})
    assert answer.status_code == 201 and not hasattr(answer.wsgi_request, "session")


def test_other_pages_keep_the_full_stack(client, campaign):
    response = client.get("/docs/")
    assert response.status_code == 200
    assert hasattr(response.wsgi_request, "session") and hasattr(response.wsgi_request, "user")
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]


def test_the_short_path_still_refuses_unstorable_text_and_large_bodies(client, campaign, settings):
    token = start(client, campaign, "w1")
    refused = client.get(f"/api/hit/{token}/", {"x": "a\x00b"})
    assert refused.status_code == 400 and "NUL" in refused.json()["detail"]
    settings.REQUEST_MAX_BYTES = 100
    too_large = client.post(f"/api/hit/{token}/", data=b"{" + b" " * 200 + b"}", content_type="application/json")
    assert too_large.status_code == 413
    assert client.get(f"/api/hit/{token}/").json()["position"] == 1  # nothing stored


def test_a_path_under_the_prefix_that_is_not_the_view_behaves_as_before(client, campaign):
    token = start(client, campaign, "w1")
    assert client.get(f"/api/hit/{token}").status_code == 301  # CommonMiddleware's slash redirect
    assert client.get("/api/hit/").status_code == 404
    assert client.get("/api/hit/nope/").status_code == 404  # the view's own 404, as JSON
    assert client.get("/api/hit/nope/").json() == {"error": "unknown HIT"}



def test_without_the_short_path_the_api_still_sends_no_csp(campaign, settings):
    """The view is csp_exempt too: a deployment whose MIDDLEWARE lacks the short path sends no CSP on JSON."""
    from django.test import Client

    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if not m.endswith("AnnotatorFastPath")]
    client = Client()
    token = start(client, campaign, "w2")
    response = client.get(f"/api/hit/{token}/")
    assert response.status_code == 200 and hasattr(response.wsgi_request, "session")  # the full stack ran
    assert "Content-Security-Policy" not in response.headers
