"""Tiny media files made here (a PNG written with zlib, a WAV with the `wave` module, the first bytes of MP4 and
WebM files: enough for the check by content), campaign files that use them, and zip bundles of both."""
import io
import json
import struct
import wave
import zipfile
import zlib

from .conftest import campaign_lines


def png(width: int = 2, height: int = 2, rgb=(200, 30, 30)) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def wav(frames: int = 800) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(8000)
        w.writeframes(bytes((128 + (k % 16) * 4) % 256 for k in range(frames)))
    return out.getvalue()


def mp4() -> bytes:
    return struct.pack(">I", 24) + b"ftypisom" + b"\x00\x00\x02\x00isomiso2" + struct.pack(">I", 8) + b"free"


def webm() -> bytes:
    return b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\x82\x84webm" + b"\x00" * 16


def media_lines(n_segments: int = 10, docs: int = 2, media=None, doc_media=None) -> list[str]:
    """A campaign file whose first segment carries `media` (an image by default) and whose first document carries
    `doc_media` (none by default)."""
    lines = [json.loads(line) for line in campaign_lines(n_segments, docs=docs)]
    lines[0]["media"] = media if media is not None else [
        {"kind": "image", "src": "media/sign.png", "alt": "A sign", "caption": "Figure 1"}]
    if doc_media is not None:
        lines[0]["doc_media"] = doc_media
    return [json.dumps(line) for line in lines]


def bundle(lines: list[str], files: dict[str, bytes], jsonl: str = "campaign.jsonl", compression=zipfile.ZIP_STORED,
           symlinks: tuple[str, ...] = ()) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as z:
        z.writestr(jsonl, "\n".join(lines) + "\n")
        for name, data in files.items():
            z.writestr(name, data)
        for name in symlinks:
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16)
            z.writestr(info, "/etc/passwd")
    return out.getvalue()


def good_bundle() -> bytes:
    return bundle(media_lines(doc_media=[{"kind": "audio", "src": "media/voice.wav"}]),
                  {"media/sign.png": png(), "media/voice.wav": wav()})
