"""A media bundle for `annotate.py --media N` (docs/api.md §2.1): the generated campaign file and N small PNG
images (2x2 pixels, one colour each, written with zlib) in a zip, imported like any campaign file."""
from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path


def png(k: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rgb = bytes(((k * 37) % 256, (k * 91) % 256, (k * 53) % 256))
    rows = b"".join(b"\x00" + rgb * 2 for _ in range(2))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def write_bundle(jsonl: Path, target: Path, images: int) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.write(jsonl, "campaign.jsonl")
        for k in range(images):
            bundle.writestr(f"media/img-{k}.png", png(k))
    return target
