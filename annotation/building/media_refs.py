"""The `media` and `doc_media` of a campaign line (docs/api.md §2.1): their shape, and a file's type read from its
first bytes (never from its name). Pure: no database, no storage; the import (services/media_import.py) uses these
to refuse a line or a file before anything is stored."""
from __future__ import annotations

import posixpath
import re

KINDS = ("image", "video", "audio")
MAX_ENTRIES = 20
MAX_SRC = 2000
MAX_LABEL = 1000
#: Bytes of a file's start that `sniff` needs.
SNIFF_BYTES = 64
_DRIVE = re.compile(r"^[A-Za-z]:")


def is_remote(src: str) -> bool:
    return src.lower().startswith(("http://", "https://"))


def bundle_path_problem(path: str) -> str | None:
    """Why `path` (a `src`, or a name inside a zip) may not name a file of a bundle: absolute, a drive letter,
    `..`, a backslash; None when it is a plain relative path."""
    if not path or "\x00" in path:
        return "is empty or holds a NUL character"
    if "\\" in path:
        return "holds a backslash (paths use /)"
    if path.startswith("/") or _DRIVE.match(path):
        return "is absolute"
    if ".." in path.split("/"):
        return "goes up a folder (..)"
    return None


def normalised(path: str) -> str:
    return posixpath.normpath(path).lstrip("./") if path not in (".", "") else ""


def check_media(value, key: str, allow_remote: bool) -> list[str]:
    """The problems of a line's `media` or `doc_media` list (`key` names it in the messages)."""
    if value is None:
        return []
    if not isinstance(value, list):
        return [f"'{key}' must be a list of {{kind, src, alt?, caption?}}"]
    if len(value) > MAX_ENTRIES:
        return [f"'{key}' holds {len(value)} entries; at most {MAX_ENTRIES}"]
    problems = []
    for n, entry in enumerate(value):
        where = f"'{key}'[{n}]"
        if not isinstance(entry, dict):
            problems.append(f"{where} must be an object {{kind, src, alt?, caption?}}")
            continue
        if entry.get("kind") not in KINDS:
            problems.append(f"{where}: 'kind' must be one of {', '.join(KINDS)}")
        src = entry.get("src")
        if not isinstance(src, str) or not src.strip() or len(src) > MAX_SRC:
            problems.append(f"{where}: 'src' must be a non-empty string of at most {MAX_SRC} characters")
        elif is_remote(src):
            if not allow_remote:
                problems.append(f"{where}: 'src' {src[:80]!r} is a remote URL; the campaign must set "
                                "fetch_remote_media to fetch it at import")
        elif (why := bundle_path_problem(src)) is not None:
            problems.append(f"{where}: 'src' {src[:80]!r} {why}")
        for label in ("alt", "caption"):
            text = entry.get(label)
            if text is not None and (not isinstance(text, str) or len(text) > MAX_LABEL or "\x00" in text):
                problems.append(f"{where}: '{label}' must be a string of at most {MAX_LABEL} characters")
        unknown = set(entry) - {"kind", "src", "alt", "caption"}
        if unknown:
            problems.append(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    return problems


def sniff(head: bytes) -> tuple[str, str] | None:
    """(kind, content type) of a file by its first bytes; None for anything else. Images: PNG, JPEG, GIF, WebP;
    video: MP4 (ISO base media, `ftyp`), WebM (EBML with the webm doctype); audio: MP3 (ID3 or an MPEG frame sync),
    OGG, WAV (RIFF/WAVE)."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image", "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image", "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image", "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image", "image/webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "audio", "audio/wav"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand.startswith(b"M4A"):
            return "audio", "audio/mp4"
        return "video", "video/mp4"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return ("video", "video/webm") if b"webm" in head[:SNIFF_BYTES] else None
    if head.startswith(b"OggS"):
        return "audio", "audio/ogg"
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return "audio", "audio/mpeg"
    return None


EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
              "audio/wav": ".wav", "audio/mp4": ".m4a", "video/mp4": ".mp4", "video/webm": ".webm",
              "audio/ogg": ".ogg", "audio/mpeg": ".mp3"}
