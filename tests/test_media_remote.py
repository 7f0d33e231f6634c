"""Remote media (docs/api.md §2.1): without `fetch_remote_media` an http(s) src refuses the file naming its line;
with it each URL is fetched once at import, within MEDIA_MAX_FILE_BYTES and MEDIA_FETCH_TIMEOUT (for the whole
download: a responder trickling bytes is cut off), checked by content, and stored. Against a local HTTP server
started here: a good image, a slow responder, an oversized body (declared and undeclared), a wrong type, a 404.
Only public addresses are fetched: the local server is reached only where MEDIA_FETCH_ALLOWED_NETWORKS lists it,
and a redirect to another local address is refused."""
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.files.storage import storages

from annotation.building.campaign_files import CampaignFileError
from annotation.media_models import MediaItem
from annotation.models import Campaign
from annotation.services.campaign_import import import_campaign
from annotation.services.media_fetch import FetchError, _check_peer, fetch

from .media_files import media_lines, png

pytestmark = pytest.mark.django_db


class Handler(BaseHTTPRequestHandler):
    hits: dict[str, int] = {}
    second_port = 0

    def log_message(self, *args):
        pass

    def do_GET(self):
        Handler.hits[self.path] = Handler.hits.get(self.path, 0) + 1
        if self.path.startswith("/redirect/"):  # to the same path on the second local address
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.2:{Handler.second_port}/{self.path.split('/', 2)[2]}")
            self.end_headers()
            return
        if self.path == "/missing.png":
            self.send_error(404)
            return
        body = {"/sign.png": png(), "/page.png": b"<!doctype html><p>not an image",
                "/big.png": png() + b"\x00" * 5000}.get(self.path, png())
        self.send_response(200)
        if self.path != "/chunked-big.png":
            self.send_header("Content-Length", str(len(body) if self.path != "/slow.png" else 1000))
        self.end_headers()
        if self.path == "/slow.png":  # a byte every 50 ms: each read is quick, the whole is too slow
            try:
                for _ in range(100):
                    self.wfile.write(b"\x89")
                    self.wfile.flush()
                    time.sleep(0.05)
            except (BrokenPipeError, ConnectionResetError):  # the importer gave up at its deadline, as it should
                pass
            return
        if self.path == "/chunked-big.png":  # no Content-Length: the bytes themselves are counted
            body = png() + b"\x00" * 5000
        self.wfile.write(body)


def _serve(host: str):
    httpd = ThreadingHTTPServer((host, 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


@pytest.fixture(scope="module")
def server():
    first, second = _serve("127.0.0.1"), _serve("127.0.0.2")
    Handler.second_port = second.server_address[1]
    yield f"http://127.0.0.1:{first.server_address[1]}"
    for httpd in (first, second):
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(autouse=True)
def limits(settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "media": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path / "media")}}}
    settings.MEDIA_MAX_FILE_BYTES = 2000
    settings.MEDIA_FETCH_TIMEOUT = 0.8
    settings.MEDIA_FETCH_ALLOWED_NETWORKS = ["127.0.0.1/32"]


def _import(url: str, **options):
    lines = media_lines(media=[{"kind": "image", "src": url, "alt": "remote"}])
    return import_campaign([line.encode() for line in lines], name="Remote", protocol="adequacy", hit_size=20,
                           options=options).campaign


def test_a_remote_src_is_refused_without_the_option_naming_the_line(server):
    with pytest.raises(CampaignFileError, match=r"line 1: 'media'\[0\]: 'src' .* is a remote URL; the campaign must "
                                                "set fetch_remote_media"):
        _import(f"{server}/sign.png")
    assert not Campaign.objects.exists() and Handler.hits.get("/sign.png") is None


def test_with_the_option_a_remote_file_is_fetched_once_and_stored(server):
    campaign = _import(f"{server}/sign.png", fetch_remote_media=True)
    medium = MediaItem.objects.get(campaign=campaign)
    assert (medium.src, medium.content_type, medium.size) == (f"{server}/sign.png", "image/png", len(png()))
    with storages["media"].open(medium.name) as stored:
        assert stored.read() == png()
    assert Handler.hits["/sign.png"] == 1
    assert json.dumps(campaign.options) == json.dumps({"fetch_remote_media": True})


@pytest.mark.parametrize("path, reason", [
    ("/slow.png", "took longer than 0.8 s"),
    ("/big.png", f"is {len(png()) + 5000} bytes; at most 2000"),
    ("/chunked-big.png", "is larger than 2000 bytes"),
    ("/page.png", "is not an image"),
    ("/missing.png", "answered HTTP 404"),
])
def test_the_caps_refuse_a_remote_file_naming_it_and_nothing_is_stored(server, path, reason, tmp_path):
    started = time.monotonic()
    with pytest.raises(CampaignFileError) as refused:
        _import(f"{server}{path}", fetch_remote_media=True)
    assert f"{server}{path}" in str(refused.value) and reason in str(refused.value), str(refused.value)
    assert time.monotonic() - started < 3
    assert not Campaign.objects.exists() and not MediaItem.objects.exists()
    assert not (tmp_path / "media").exists() or not any(p.is_file() for p in (tmp_path / "media").rglob("*"))


def test_a_local_address_not_allowed_is_refused_before_any_request(server, settings):
    settings.MEDIA_FETCH_ALLOWED_NETWORKS = []
    with pytest.raises(CampaignFileError, match=r"leads to 127\.0\.0\.1, a private or local address"):
        _import(f"{server}/local.png", fetch_remote_media=True)
    assert Handler.hits.get("/local.png") is None
    assert not Campaign.objects.exists() and not MediaItem.objects.exists()


def test_a_redirect_to_a_local_address_is_refused(server):
    with pytest.raises(CampaignFileError, match=r"leads to 127\.0\.0\.2, a private or local address"):
        _import(f"{server}/redirect/inner.png", fetch_remote_media=True)
    assert Handler.hits["/redirect/inner.png"] == 1 and Handler.hits.get("/inner.png") is None
    assert not Campaign.objects.exists() and not MediaItem.objects.exists()


class _Peer:
    def __init__(self, address):
        self.address = address

    def getpeername(self):
        return (self.address, 80)

    def close(self):
        pass


@pytest.mark.parametrize("address", ["10.1.2.3", "169.254.169.254", "::1", "::ffff:192.168.0.1", "fe80::1%eth0",
                                     "64:ff9b::a9fe:a9fe", "2002:c0a8:0001::1", "2001:0:4136:e378:8000:63bf:f5ff:fffe"])
def test_private_link_local_and_mapped_addresses_are_not_public(address, settings):
    settings.MEDIA_FETCH_ALLOWED_NETWORKS = []
    with pytest.raises(FetchError, match="private or local"):
        _check_peer(_Peer(address))


@pytest.mark.parametrize("address", ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"])
def test_a_public_address_passes(address, settings):
    settings.MEDIA_FETCH_ALLOWED_NETWORKS = []
    assert _check_peer(_Peer(address)) is None


def test_a_local_address_is_refused_before_connecting_so_no_port_can_be_probed(settings):
    """The address is checked before the connection, not after it: a local port, open or closed, is never reached
    and both are refused alike (the message is no scanner of the inside network; HTTPS sends no handshake there)."""
    settings.MEDIA_FETCH_ALLOWED_NETWORKS = []
    listener, closed = socket.socket(), socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    closed.bind(("127.0.0.1", 0))  # bound, not listening: a connection to it would be refused
    try:
        messages = []
        for sock in (listener, closed):
            with pytest.raises(FetchError, match=r"leads to 127\.0\.0\.1, a private or local address") as refused:
                fetch(f"http://127.0.0.1:{sock.getsockname()[1]}/x.png")
            messages.append(str(refused.value))
        assert messages[0] == messages[1]
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):  # nothing ever connected
            listener.accept()
    finally:
        listener.close()
        closed.close()
