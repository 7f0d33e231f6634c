"""What the toy protocol's tests share: the settings that register the toy protocol and family, and a campaign file
(tests/toy/test_toy_protocol.py, tests/browser/test_toy_screen.py)."""
import json

from django.conf import settings

STATEMENT = "Is this a good translation?"  # the protocol's default statement
TOY_SETTINGS = {"MTEVAL_PROTOCOLS": [*settings.MTEVAL_PROTOCOLS, "tests.toy.protocol.PROTOCOLS"],
                "MTEVAL_RESULT_FAMILIES": [*settings.MTEVAL_RESULT_FAMILIES, "tests.toy.family.FAMILY"]}


def thumbs_lines(n_segments: int = 6, question: object = "Would you publish this?") -> list[bytes]:
    """A campaign file of `n_segments` segments and two systems; the first segment asks its own question."""
    lines = []
    for i in range(n_segments):
        record = {"doc_id": f"d{i // 3}", "seg_id": i + 1, "source": f"Quelle Nummer {i}.",
                  "systems": {"sys-good": f"Source number {i}.", "sys-poor": f"Number source {i} the."}}
        if i == 0 and question is not None:
            record["thumbs_question"] = question
        lines.append(json.dumps(record).encode() + b"\n")
    return lines
