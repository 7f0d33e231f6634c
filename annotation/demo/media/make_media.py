"""Write the media demo's files (annotation/demo/media/): two small PNG images drawn pixel by pixel (zlib), a
three-second WAV melody (the `wave` module) and, when ffmpeg is installed, a four-second WebM test pattern. Nothing
is downloaded. Run `python annotation/demo/media/make_media.py` to write them again; the outputs are committed, so
`make run` needs neither this script nor ffmpeg."""
import math
import shutil
import struct
import subprocess
import wave
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent


def png(width: int, height: int, pixel) -> bytes:
    """A truecolour PNG whose pixel (x, y) is `pixel(x, y)`, an (r, g, b) triple."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def harbour(x: int, y: int) -> tuple[int, int, int]:
    """A harbour at dusk: sky, a sun, water with stripes, a pier and a boat."""
    if (x - 170) ** 2 + (y - 55) ** 2 < 18 ** 2:
        return (250, 200, 80)
    if y < 95:
        t = y / 95
        return (int(90 + 120 * t), int(120 + 60 * t), int(200 - 40 * t))
    if 30 <= x <= 110 and 88 <= y <= 100:
        return (120, 80, 50)  # the pier
    if 140 <= x <= 200 and 98 <= y <= 110 and y - 98 >= abs(x - 170) - 22:
        return (200, 40, 40)  # the boat's hull
    stripe = (y + int(4 * math.sin(x / 9))) % 12 < 2
    return (60, 110, 170) if stripe else (30, 80, 140)


def market_sign(x: int, y: int) -> tuple[int, int, int]:
    """A red-rimmed triangular warning sign on white ("closed in the evening")."""
    cx, top, bottom = 80, 14, 136
    half = (y - top) * 0.62
    inside = top <= y <= bottom and abs(x - cx) <= half
    inner = top + 22 <= y <= bottom - 12 and abs(x - cx) <= half - 20
    if inner and 60 <= y <= 106 and abs(x - cx) <= 5:
        return (20, 20, 20)  # the exclamation mark's bar
    if inner and 114 <= y <= 124 and abs(x - cx) <= 5:
        return (20, 20, 20)  # its dot
    if inner:
        return (255, 255, 255)
    if inside:
        return (200, 20, 30)
    return (245, 245, 240)


def melody(path: Path, seconds: float = 3.0, rate: int = 8000) -> None:
    """Eight-bit mono at 8 kHz: a short rising tune of six notes."""
    notes = [262, 294, 330, 349, 392, 440]
    frames = bytearray()
    per_note = int(rate * seconds / len(notes))
    for note in notes:
        for k in range(per_note):
            fade = min(1.0, k / 200, (per_note - k) / 200)
            frames.append(int(128 + 90 * fade * math.sin(2 * math.pi * note * k / rate)))
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(rate)
        out.writeframes(bytes(frames))


def video(path: Path) -> bool:
    """Four seconds of ffmpeg's test pattern with a running counter, VP9 in WebM, 240x136 at 10 frames a second."""
    if not shutil.which("ffmpeg"):
        return False
    subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i",
                    "testsrc=duration=4:size=240x136:rate=10", "-c:v", "libvpx-vp9", "-b:v", "40k", "-crf", "45",
                    "-pix_fmt", "yuv420p", "-an", str(path)], check=True)
    return True


if __name__ == "__main__":
    (HERE / "harbour.png").write_bytes(png(240, 160, harbour))
    (HERE / "market-sign.png").write_bytes(png(160, 150, market_sign))
    melody(HERE / "harbour-bell.wav")
    if not video(HERE / "harbour-walk.webm"):
        print("ffmpeg is not installed: harbour-walk.webm was left as it was")
    for name in sorted(p.name for p in HERE.iterdir() if p.suffix != ".py"):
        print(f"{name}: {(HERE / name).stat().st_size} bytes")
