"""Request bodies above their size limit (issue 22, defects 11d and 11e; config/request_limits.py): refused with
413 before anything parses them (a large anonymous form is not parsed before the CSRF check), with the import
endpoints allowed their larger limit, and answered without resetting the connection, through Django's test client,
pytest-django's live server and gunicorn, with a real HTTP client."""
import io
import json
import socket
import time
import uuid

import pytest
import requests

from annotation.models import Campaign, ImportJob, Judgment
from config.request_limits import limit_for

from .conftest import campaign_lines, start
from .test_server_settings import GUNICORN, Server, database_url, free_port, project_env

pytestmark = pytest.mark.django_db
MB = 1024 * 1024


def too_large(response, limit: int) -> None:
    assert response.status_code == 413, response.content[:300]
    assert f"larger than {limit} bytes" in response.content.decode()


def test_an_annotator_post_above_the_limit_is_refused_and_stores_nothing(campaign, client, settings):
    token = start(client, campaign, "w-1")
    item = client.get(f"/api/hit/{token}/").json()["item"]["id"]
    body = json.dumps({"item": item, "score": 50, "pad": "x" * (settings.REQUEST_MAX_BYTES + 1)})
    response = client.post(f"/api/hit/{token}/", body, content_type="application/json")
    too_large(response, settings.REQUEST_MAX_BYTES)
    assert response["Content-Type"] == "application/json" and "detail" in response.json()
    assert not Judgment.objects.exists()


def test_a_large_anonymous_form_is_refused_before_parsing_and_the_csrf_check(client, settings):
    body = "username=" + "a" * (45 * MB)
    began = time.monotonic()
    response = client.post("/accounts/login/", body, content_type="application/x-www-form-urlencoded")
    took = time.monotonic() - began
    too_large(response, settings.REQUEST_MAX_BYTES)  # not 403: the form was neither parsed nor CSRF-checked
    assert response["Content-Type"].startswith("text/html")
    assert took < 2.0, took  # parsing it took 3 s and more


def test_a_content_length_that_is_not_a_number_is_refused(client):
    response = client.post("/api/hit/abc/", b"{}", content_type="application/json", CONTENT_LENGTH="12x")
    assert response.status_code == 400 and "Content-Length" in response.json()["detail"]


@pytest.fixture
def upload_dir(settings, tmp_path):
    settings.IMPORT_UPLOAD_DIR = str(tmp_path / "imports")


def campaign_file(megabytes: float) -> io.BytesIO:
    one = len(campaign_lines(1, length=60)[0]) + 1
    lines = campaign_lines(int(megabytes * MB / one) + 1, docs=50, length=60)
    handle = io.BytesIO(("\n".join(lines) + "\n").encode())
    handle.name = "campaign.jsonl"
    return handle


def test_imports_take_files_above_the_general_limit(api, settings, upload_dir):
    upload = campaign_file(settings.REQUEST_MAX_BYTES / MB + 0.5)
    response = api.post("/api/campaigns/", {"file": upload, "name": "Big", "protocol": "adequacy"}, format="multipart")
    assert response.status_code == 202, response.content  # a background import, not a 413


def test_imports_above_their_own_limit_are_refused(api, settings, upload_dir):
    settings.IMPORT_REQUEST_MAX_BYTES = 3 * MB
    for url in ("/api/campaigns/", "/api/campaigns/import-judgments/"):
        response = api.post(url, {"file": campaign_file(3.2), "name": "Big", "protocol": "adequacy",
                                  "format": "wmt-da"}, format="multipart")
        too_large(response, settings.IMPORT_REQUEST_MAX_BYTES)
    assert not Campaign.objects.exists() and not ImportJob.objects.exists()


# --- a real HTTP client against real servers -------------------------------------------------------------

def raw_post(port: int, path: str, body_size: int, chunked: bool = False) -> tuple[bytes, float]:
    """Send the whole body as a client that writes before it reads would, then read the answer; a reset
    connection raises ConnectionResetError here."""
    began = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        framing = b"Transfer-Encoding: chunked\r\n" if chunked else f"Content-Length: {body_size}\r\n".encode()
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n".encode()
                     + framing + b"Connection: close\r\n\r\n")
        piece = b"x" * MB
        for start in range(0, body_size, MB):
            part = piece[:min(MB, body_size - start)]
            sock.sendall(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
        if chunked:
            sock.sendall(b"0\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer, time.monotonic() - began


def check_server(port: int, chunked_bodies: bool) -> None:
    """`chunked_bodies`: whether the server decodes them (gunicorn; Django's development server reads none)."""
    url = f"http://127.0.0.1:{port}"
    answer = requests.post(f"{url}/api/hit/abc/", data=b"x" * (60 * MB), headers={"Content-Type": "application/json"},
                           timeout=60)
    assert answer.status_code == 413 and "larger than" in answer.json()["detail"]
    answer = requests.post(f"{url}/accounts/login/", data=b"username=" + b"a" * (45 * MB),
                           headers={"Content-Type": "application/x-www-form-urlencoded"}, timeout=60)
    assert answer.status_code == 413 and answer.headers["Content-Type"].startswith("text/html")
    for chunked in (False, True) if chunked_bodies else (False,):
        raw, took = raw_post(port, "/api/hit/abc/", 60 * MB, chunked=chunked)
        assert raw.startswith(b"HTTP/1.1 413"), raw[:200]
        assert b"larger than" in raw and took < 30, took
    if not chunked_bodies:
        return
    # A chunked body within the limit reaches the view as the same body with its length would.
    body = b'{"item": 1, "score": 50}'
    sent = [requests.post(f"{url}/api/hit/no-such-token/", data=data, timeout=30,
                          headers={"Content-Type": "application/json"}) for data in (body, iter([body]))]
    assert sent[0].status_code == sent[1].status_code != 413 and sent[0].content == sent[1].content


@pytest.mark.django_db(transaction=True)
def test_refused_bodies_are_answered_without_a_reset_by_the_live_server(live_server):
    check_server(int(live_server.url.rsplit(":", 1)[1]), chunked_bodies=False)


@pytest.mark.django_db(transaction=True)
def test_refused_bodies_are_answered_without_a_reset_by_gunicorn():
    port = free_port()
    env = project_env(DEBUG="1", DATABASE_URL=database_url(f"limits-{uuid.uuid4().hex[:8]}"), CELERY_BROKER_URL="")
    server = Server([GUNICORN, "config.wsgi", "-b", f"127.0.0.1:{port}", "-w", "1", "--no-control-socket"], env, port)
    try:
        server.wait_ready()
        check_server(port, chunked_bodies=True)
    finally:
        server.stop()


@pytest.mark.parametrize("path, name", [("/api/campaigns/", "IMPORT_REQUEST_MAX_BYTES"),
                                        ("/api/campaigns/import-judgments/", "IMPORT_REQUEST_MAX_BYTES"),
                                        ("/admin/annotation/campaign/import/", "IMPORT_REQUEST_MAX_BYTES"),
                                        ("/api/campaigns/some-campaign/compute/", "REQUEST_MAX_BYTES"),
                                        ("/api/hit/some-token/", "REQUEST_MAX_BYTES"),
                                        ("/no/such/page/", "REQUEST_MAX_BYTES")])
def test_each_address_has_its_limit(path, name, settings):
    assert limit_for(path) == getattr(settings, name)
