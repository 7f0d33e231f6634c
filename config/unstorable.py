"""Text no database stores: a NUL character (PostgreSQL refuses it in text) or a lone UTF-16 surrogate (not
encodable as UTF-8). One regular-expression search, shared by the request middleware (config/middleware.py) and
every import and answer check (annotation/building/campaign_files.py); a Python loop over the characters cost the
annotator's path ~5 µs a request."""
import re

UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable(text: str) -> bool:
    """Whether `text` holds a NUL character or a lone UTF-16 surrogate."""
    return UNSTORABLE.search(text) is not None
