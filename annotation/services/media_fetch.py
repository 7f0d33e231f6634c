"""Remote media (docs/api.md §2.1): an http(s) `src` of a campaign that sets `fetch_remote_media` is fetched once,
at import, into a temporary file, within a size cap (MEDIA_MAX_FILE_BYTES) and a time cap (MEDIA_FETCH_TIMEOUT
seconds for the whole download, not per read), and then stored like a bundle's file: the judges' browsers never
load a third party.

Only public hosts are fetched: each address the host name resolves to is checked before it is connected to (no
packet reaches a private, loopback, link-local or cloud metadata address, and a redirect's host is checked alike),
and the address a connection actually reaches is checked again after connecting, unless it lies in
MEDIA_FETCH_ALLOWED_NETWORKS. Proxies from the environment are not used, and
only http(s) is spoken, redirects included."""
from __future__ import annotations

import hashlib
import http.client
import ipaddress
import socket
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from django.conf import settings

from ..building.media_refs import SNIFF_BYTES

CHUNK = 1 << 16
#: The well-known NAT64 prefix (RFC 6052): its last 32 bits are an IPv4 address.
NAT64 = ipaddress.ip_network("64:ff9b::/96")


class FetchError(ValueError):
    """The URL could not be fetched within the caps; the message says why."""


@dataclass
class Fetched:
    file: object  # a temporary binary file, at its start
    head: bytes
    size: int
    sha256: str


def _refusal(host: str) -> str | None:
    """Why an address may not be fetched (not public, nor in MEDIA_FETCH_ALLOWED_NETWORKS), or None."""
    address = ipaddress.ip_address(host.split("%", 1)[0])
    if address.version == 6:  # an IPv4 address carried inside IPv6 (mapped, 6to4, Teredo, NAT64) is judged as IPv4
        carried = address.ipv4_mapped or address.sixtofour or (address.teredo or (None, None))[1]
        if carried is None and address in NAT64:
            carried = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        address = carried or address
    allowed = [ipaddress.ip_network(net, strict=False) for net in settings.MEDIA_FETCH_ALLOWED_NETWORKS]
    if not address.is_global and not any(address in net for net in allowed):
        return (f"leads to {address}, a private or local address; only public hosts are fetched "
                "(MEDIA_FETCH_ALLOWED_NETWORKS lists exceptions)")
    return None


def _check_peer(sock) -> None:
    """Refuse a connection whose peer is not a public address (nor in MEDIA_FETCH_ALLOWED_NETWORKS)."""
    refusal = _refusal(sock.getpeername()[0])
    if refusal is not None:
        sock.close()
        raise FetchError(refusal)


def _create_connection(address, timeout=socket._GLOBAL_DEFAULT_TIMEOUT, source_address=None):
    """socket.create_connection to the first of the host's addresses that may be fetched: a refused address is
    never connected to, so no packet (nor a TLS handshake) reaches it and an open port is told from a closed one
    by nothing."""
    host, port = address
    refusal, error = None, None
    for family, kind, proto, _, peer in socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM):
        problem = _refusal(peer[0])
        if problem is not None:
            refusal = refusal or problem
            continue
        sock = socket.socket(family, kind, proto)
        try:
            if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(peer)
            return sock
        except OSError as exc:
            sock.close()
            error = exc
    if error is not None:
        raise error
    raise FetchError(refusal or f"{host} has no address")


class _GuardedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._create_connection = _create_connection  # addresses checked before connecting

    def connect(self):
        super().connect()
        _check_peer(self.sock)


class _GuardedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._create_connection = _create_connection  # addresses checked before connecting (and the handshake)

    def connect(self):
        super().connect()
        _check_peer(self.sock)


class _GuardedHTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req):
        return self.do_open(_GuardedHTTPConnection, req)


class _GuardedHTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req):
        return self.do_open(_GuardedHTTPSConnection, req, context=self._context)


def _opener() -> urllib.request.OpenerDirector:
    """http(s) only (no file:, ftp: or data:, also after a redirect), no proxies, every connection checked."""
    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.ProxyHandler({}), urllib.request.UnknownHandler(), _GuardedHTTPHandler(),
                    _GuardedHTTPSHandler(), urllib.request.HTTPDefaultErrorHandler(),
                    urllib.request.HTTPRedirectHandler(), urllib.request.HTTPErrorProcessor()):
        opener.add_handler(handler)
    return opener


def _limit_wait(response, seconds: float) -> None:
    """Let the next read of the response's socket wait at most `seconds` (a slow responder trickling bytes is cut
    off at the deadline, not at the timeout of each read)."""
    sock = getattr(getattr(response.fp, "raw", None), "_sock", None)
    if sock is not None:
        sock.settimeout(max(seconds, 0.01))


def fetch(url: str) -> Fetched:
    cap, timeout = settings.MEDIA_MAX_FILE_BYTES, settings.MEDIA_FETCH_TIMEOUT
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(url, headers={"User-Agent": "mteval-media-import"})
    target = tempfile.TemporaryFile()  # noqa: SIM115 (the caller closes it)
    try:
        with _opener().open(request, timeout=timeout) as response:
            if response.status != 200:
                raise FetchError(f"answered HTTP {response.status}")
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > cap:
                raise FetchError(f"is {declared} bytes; at most {cap} (MEDIA_MAX_FILE_BYTES)")
            digest, head, size = hashlib.sha256(), b"", 0
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise FetchError(f"took longer than {timeout} s (MEDIA_FETCH_TIMEOUT)")
                _limit_wait(response, left)
                piece = response.read1(CHUNK)  # one read of the socket at most: the deadline is checked between
                if not piece:
                    break
                size += len(piece)
                if size > cap:
                    raise FetchError(f"is larger than {cap} bytes (MEDIA_MAX_FILE_BYTES)")
                if len(head) < SNIFF_BYTES:
                    head += piece[:SNIFF_BYTES - len(head)]
                digest.update(piece)
                target.write(piece)
    except FetchError:
        target.close()
        raise
    except urllib.error.HTTPError as exc:
        target.close()
        raise FetchError(f"answered HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
        target.close()
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            raise FetchError(f"took longer than {timeout} s (MEDIA_FETCH_TIMEOUT)") from None
        raise FetchError(f"could not be fetched ({reason})") from None
    target.seek(0)
    return Fetched(target, head, size, digest.hexdigest())
