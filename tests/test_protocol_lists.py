"""README.md's and docs/api.md's protocol lists name every protocol an import can name, one line each, so that
a new protocol without its line fails here (the registry: annotation/protocols)."""
import re
from pathlib import Path

import pytest

from annotation.protocols import all_protocols

ROOT = Path(__file__).resolve().parents[1]
ITEM = re.compile(r"^- `([a-z][a-z-]*)`: \S")


def listed(text: str, marker: str) -> list[str]:
    """The protocols of the bullet list that follows `marker`: its consecutive `- \\`name\\`: …` lines."""
    assert marker in text, f"no {marker!r}"
    names, started = [], False
    for line in text.split(marker, 1)[1].splitlines():
        match = ITEM.match(line)
        if match:
            names.append(match.group(1))
            started = True
        elif started:
            break
    return names


@pytest.mark.parametrize("path, marker", [("README.md", "\n## Protocols\n"),
                                          ("docs/api.md", '<a id="protocols"></a>')])
def test_every_importable_protocol_has_one_line(path, marker):
    names = listed((ROOT / path).read_text(encoding="utf-8"), marker)
    importable = [p.name for p in all_protocols() if not p.stage_only]
    assert len(importable) == 15
    assert sorted(names) == sorted(importable), f"{path}: missing {set(importable) - set(names)}, " \
                                                f"unknown {set(names) - set(importable)}"


def test_the_list_reader_sees_a_missing_line():
    text = "## Protocols\nIntro.\n\n- `fluency`: slider.\n- `adequacy`: slider.\n\n- `esa`: elsewhere.\n"
    assert listed(text, "## Protocols") == ["fluency", "adequacy"]
