"""The post edit protocol package: `PROTOCOLS` (its strategy objects, named in settings.MTEVAL_PROTOCOLS),
its HIT planner and formats, and what other parts legitimately read of it.
`screen_rows` is read by the post-edit result family (evaluation/families/post_edit/storage.py)."""
from .strategy import PROTOCOLS, screen_rows

__all__ = ["PROTOCOLS", "screen_rows"]
