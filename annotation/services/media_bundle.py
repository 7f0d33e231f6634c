"""A campaign bundle (docs/api.md §2.1): a `.zip` holding one campaign file (`.jsonl`) and its media files.

Every check runs before anything is stored, and each refusal names the file: a malformed zip, too many entries,
a path that is absolute, goes up (`..`) or is a symbolic link, a file or a bundle above its size cap, an entry
compressed more than MEDIA_MAX_COMPRESSION_RATIO to one (a zip bomb). Sizes are counted on the bytes actually
unpacked, not only on the sizes the zip declares, so a forged header does not get past the caps."""
from __future__ import annotations

import hashlib
import stat
import tempfile
import zipfile
from dataclasses import dataclass

from django.conf import settings

from ..building.campaign_files import CampaignFileError
from ..building.media_refs import SNIFF_BYTES, bundle_path_problem, normalised

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
CHUNK = 1 << 16


class BundleError(CampaignFileError):
    """The bundle is refused (line 0: the file as a whole, named in the reason)."""

    def __init__(self, reason: str):
        super().__init__([(0, f"bundle: {reason}")])


def looks_like_zip(source) -> bool:
    """Whether a path or binary file starts as a zip does (the file is left where it was)."""
    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        try:
            with open(source, "rb") as handle:
                return handle.read(4) in ZIP_MAGIC
        except (OSError, TypeError, ValueError):
            return False
    if hasattr(source, "read") and hasattr(source, "seek"):
        try:
            where = source.tell()
            head = source.read(4)
            source.seek(where)
        except (OSError, ValueError):
            return False
        return isinstance(head, bytes) and head in ZIP_MAGIC
    return False


@dataclass
class MemberFile:
    """A media file of the bundle, checked: its type from its first bytes, its size and hash as unpacked."""

    path: str
    head: bytes
    size: int
    sha256: str


class Bundle:
    """An opened, checked bundle: `campaign_file` (a temporary binary file holding the JSONL) and the media
    files by their path relative to the JSONL's folder (`member`, `open`)."""

    def __init__(self, source):
        self.file_cap = settings.MEDIA_MAX_FILE_BYTES
        self.bundle_cap = settings.MEDIA_MAX_BUNDLE_BYTES
        try:
            if hasattr(source, "seek"):
                source.seek(0)
            self.zip = zipfile.ZipFile(source)
            infos = self.zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
            raise BundleError(f"the upload is not a readable zip file ({exc})") from None
        if len(infos) > settings.MEDIA_MAX_BUNDLE_ENTRIES:
            raise BundleError(f"the zip holds {len(infos)} entries; at most {settings.MEDIA_MAX_BUNDLE_ENTRIES}")
        self.unpacked = 0
        self.infos: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            self._check_entry(info)
        jsonl = [name for name in self.infos if name.lower().endswith(".jsonl")]
        if len(jsonl) != 1:
            raise BundleError(f"the zip must hold exactly one campaign file (.jsonl); it holds {len(jsonl)}"
                              + (f": {', '.join(sorted(jsonl)[:5])}" if jsonl else ""))
        self.jsonl_name = jsonl[0]
        self.folder = self.jsonl_name.rpartition("/")[0]
        self.campaign_file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self._copy(self.jsonl_name, self.campaign_file)
        self.campaign_file.seek(0)
        self._checked: dict[str, MemberFile] = {}

    def _check_entry(self, info: zipfile.ZipInfo) -> None:
        name = info.filename
        why = bundle_path_problem(name.rstrip("/") or name)
        if why is not None:
            raise BundleError(f"{name[:200]!r} {why}")
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise BundleError(f"{name!r} is a symbolic link")
        if info.is_dir():
            return
        campaign_file = name.lower().endswith(".jsonl")  # capped by the bundle's size only
        if info.file_size > self.file_cap and not campaign_file:
            raise BundleError(f"{name!r} is {info.file_size} bytes unpacked; at most {self.file_cap} a file "
                              "(MEDIA_MAX_FILE_BYTES)")
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > CHUNK and ratio > settings.MEDIA_MAX_COMPRESSION_RATIO and not campaign_file:
            raise BundleError(f"{name!r} unpacks {ratio:.0f} times its packed size; at most "
                              f"{settings.MEDIA_MAX_COMPRESSION_RATIO} (MEDIA_MAX_COMPRESSION_RATIO: a zip bomb?)")
        self.unpacked += info.file_size
        if self.unpacked > self.bundle_cap:
            raise BundleError(f"the files unpack to more than {self.bundle_cap} bytes (MEDIA_MAX_BUNDLE_BYTES), "
                              f"passed at {name!r}")
        self.infos[normalised(name)] = info

    def _chunks(self, name: str):
        """The bytes of entry `name` as unpacked, refused as soon as they pass the caps or the size its header
        declared (zipfile itself stops at the declared size and then finds the CRC wrong: refused too)."""
        info = self.infos[name]
        cap = self.bundle_cap if name == getattr(self, "jsonl_name", None) else self.file_cap
        limit = min(cap, max(info.file_size, 0))
        seen = 0
        try:
            with self.zip.open(info) as member:
                while piece := member.read(CHUNK):
                    seen += len(piece)
                    if seen > limit:
                        raise BundleError(f"{name!r} unpacks to more bytes than its header declares or the cap "
                                          "allows (a zip bomb?)")
                    yield piece
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
            raise BundleError(f"{name!r} cannot be unpacked ({exc})") from None

    def _copy(self, name: str, target) -> None:
        for piece in self._chunks(name):
            target.write(piece)

    def path_of(self, src: str) -> str:
        return normalised(f"{self.folder}/{src}" if self.folder else src)

    def member(self, src: str) -> MemberFile | None:
        """The checked media file `src` names (relative to the JSONL's folder); None if the bundle has none."""
        path = self.path_of(src)
        if path in self._checked:
            return self._checked[path]
        if path not in self.infos or path == self.jsonl_name:
            return None
        digest, head, size = hashlib.sha256(), b"", 0
        for piece in self._chunks(path):
            if len(head) < SNIFF_BYTES:
                head += piece[:SNIFF_BYTES - len(head)]
            digest.update(piece)
            size += len(piece)
        found = self._checked[path] = MemberFile(path, head, size, digest.hexdigest())
        return found

    def write_to(self, src: str, target) -> None:
        self._copy(self.path_of(src), target)

    def close(self) -> None:
        self.campaign_file.close()
        self.zip.close()
